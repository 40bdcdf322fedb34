import pytest

from eatlas.errors import EatlasError
from eatlas.registry import Item, Registry, parse_template
from eatlas.registry.stimuli import build_test
from eatlas.registry.templates import article_for, expand_item, plural_of, vet_template
from tests.conftest import ROOT, make_set, make_test


@pytest.fixture(scope="module")
def bleached():
    return Registry(ROOT).get_template("may2019_bleached@1.0.0")


def texts(item, tmpl, **kw):
    return [e.text for e in expand_item(item, 0, tmpl, **kw)]


def test_name_family_has_the_eight_templates(bleached):
    assert texts(Item("Amy", "name"), bleached) == [
        "This is Amy.", "That is Amy.", "There is Amy.", "Here is Amy.", "Amy is here.", "Amy is there.",
        "Amy is a person.", "The person's name is Amy."]


def test_kind_not_capitalisation_chooses_the_family(bleached):
    # a capitalised mass noun is not a name
    assert texts(Item("NASA", "mass_noun"), bleached) == ["This is NASA.", "That is NASA.", "There is NASA.",
                                                          "It is NASA."]


def test_articles_and_plurals(bleached):
    honor = texts(Item("honor", "noun"), bleached)
    assert honor[0] == "This is an honor." and "These are honors." in honor
    assert texts(Item("European American", "group_term"), bleached)[0] == "This is a European American."
    assert texts(Item("African American", "group_term"), bleached)[0] == "This is an African American."
    assert "The women are here." in texts(Item("woman", "group_term"), bleached)
    assert "These are berries." in texts(Item("berry", "noun"), bleached)
    assert "These are churches." in texts(Item("church", "noun"), bleached)
    assert "These are days." in texts(Item("day", "noun"), bleached)
    assert "These are geese." in texts(Item("goose", "noun", plural="geese"), bleached)
    assert article_for("umbrella") == "an" and article_for("Ukrainian") == "a"
    assert plural_of("construction worker") == "construction workers"


def test_person_and_thing_nouns(bleached):
    person = texts(Item("sister", "group_term"), bleached)
    thing = texts(Item("rose", "noun"), bleached)
    assert "A sister is a person." in person and "Sisters are people." in person
    assert "A rose is a thing." in thing and "It is a rose." in thing and "Roses are things." in thing
    assert len(person) == 7 + 6 and len(thing) == 8 + 6


def test_plural_listed_noun_gets_singular_too(bleached):
    out = texts(Item("children", "group_term", number="plural"), bleached)
    assert "This is a child." in out and "These are children." in out
    out = texts(Item("parents", "group_term", number="plural"), bleached)
    assert "This is a parent." in out


def test_multi_word_stimulus_is_grammatical(bleached):
    out = expand_item(Item("construction worker", "group_term"), 3, bleached)
    assert out[0].text == "This is a construction worker."
    assert "The construction workers are there." in [e.text for e in out]
    for e in out:
        assert e.text[e.span[0]:e.span[1]] == e.surface
        assert e.surface.lower().startswith("construction worker")


def test_mass_noun_adjective_verb_pronouns(bleached):
    assert texts(Item("freedom", "mass_noun"), bleached) == ["This is freedom.", "That is freedom.",
                                                             "There is freedom.", "It is freedom."]
    assert texts(Item("gentle", "adjective"), bleached) == ["This is gentle.", "That is gentle.", "They are gentle."]
    assert texts(Item("kill", "verb"), bleached)[0] == "This will kill."
    assert texts(Item("he", "pronoun", case="subject"), bleached)[0] == "He is here."
    assert texts(Item("him", "pronoun", case="object"), bleached) == ["It is him.", "This is him.", "That is him."]
    assert len(texts(Item("hers", "pronoun", case="possessive"), bleached)) == 7


def test_every_span_points_at_the_stimulus(bleached):
    for item in (Item("he", "pronoun", case="subject"), Item("Amy", "name"), Item("woman", "group_term"),
                 Item("honor", "noun"), Item("pollute", "verb")):
        for e in expand_item(item, 0, bleached):
            assert e.text[e.span[0]:e.span[1]] == e.surface
            assert e.surface.lower() in (item.text.lower(), plural_of(item.text).lower())
    he = expand_item(Item("he", "pronoun", case="subject"), 0, bleached)[0]
    assert he.text == "He is here." and he.span == (0, 2) and he.surface == "He"


def _tmpl(families, parts=None):
    doc = {"id": "t", "version": "1.0.0", "families": families}
    if parts:
        doc["parts"] = parts
    return parse_template(doc, "templates/t.yaml")


@pytest.mark.parametrize("src", ["{{ term.upper() }}", "{{ term.__class__ }}", "{% for x in term %}{{ x }}{% endfor %}",
                                 "{{ term | attr('x') }}", "{{ term[0] }}", "{{ 'x' ~ term }}", "{{ lipsum() }}"])
def test_templates_cannot_run_code(src):
    with pytest.raises(EatlasError, match="allowed"):
        vet_template(_tmpl({"name": [src]}))


def test_unknown_variable_is_rejected_before_and_during_rendering():
    t = _tmpl({"name": ["{{ nme }} is here."]})
    with pytest.raises(EatlasError, match="unknown variable.*nme") as e:
        vet_template(t)
    assert e.value.file == "templates/t.yaml" and e.value.field == "families.name[0]"
    with pytest.raises(EatlasError, match="undefined variable"):
        expand_item(Item("Amy", "name"), 0, t)


def test_parts_and_set_variables_keep_the_span():
    t = _tmpl({"script": ["{{ s1 }}  {{ s2 }}"]},
              parts={"s1": "{{ term }} is an engineer.",
                     "s2": "{{ subject|capitalize }} works at {{ possessive }} desk."})
    out = expand_item(Item("Amy", "name"), 0, t, family="script", variables={"subject": "she", "possessive": "her"})
    assert out[0].text == "Amy is an engineer.  She works at her desk."
    assert out[0].span == (0, 3)


def test_unequal_targets_are_truncated_with_a_recorded_seed(mini):
    mini.add_set(make_set("names", [{"text": n, "kind": "name"} for n in ("Amy", "Joan", "Lisa", "Kate")]))
    mini.add_test(make_test("t2", "names@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    reg = mini.sync().load()
    a = build_test(reg, reg.tests["t2"], "sent", seed=1)
    b = build_test(reg, reg.tests["t2"], "sent", seed=1)
    c = build_test(reg, reg.tests["t2"], "sent", seed=2)
    # 4 names x 8 templates = 32 sentences; 4 nouns x 14 = 56 -> Y truncated to 32
    assert len(a.x) == len(a.y) == 32 and a.truncated == {"y": (56, 32)} and a.truncation_seed == 1
    assert a.y.items == b.y.items and a.y.items != c.y.items
    full = [e.text for e in build_test(reg, reg.tests["t1"], "sent").y.stimuli]  # bugs untruncated in t1
    assert [full.index(s) for s in a.y.items] == sorted(full.index(s) for s in a.y.items)  # order kept
