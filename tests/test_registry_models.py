"""Registry files checked by declared models (eatlas.registry.models), their JSON Schema files, and the one
place where pydantic's findings become EATlas's messages."""
from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from eatlas.errors import EatlasError
from eatlas.registry import models, parse_set, parse_template, parse_test, terms
from tests.conftest import ROOT, make_set, make_test

PARSERS = {"set": parse_set, "test": parse_test, "template": parse_template}


def _validator(kind: str) -> Draft202012Validator:
    schema = json.loads((ROOT / "schemas" / models.SCHEMA_FILES[kind]).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_committed_schema_files_are_what_the_models_give(capsys):
    """schemas/*.schema.json are generated (python -m eatlas.registry.models --write-schemas) and cannot drift
    from the models: a changed model without regenerated files fails here."""
    for kind, name in models.SCHEMA_FILES.items():
        assert (ROOT / "schemas" / name).read_text(encoding="utf-8") == models.render(kind), name
    assert models.main(["--check"]) == 0
    assert "are those of the models" in capsys.readouterr().out


def test_check_says_which_file_is_stale(tmp_path, capsys):
    assert models.main(["--write-schemas", "--dir", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(models.SCHEMA_FILES.values())
    (tmp_path / "test.schema.json").write_text("{}\n", encoding="utf-8")
    assert models.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "test.schema.json differ from the models" in capsys.readouterr().err


def test_the_field_lists_are_the_models_fields():
    assert terms.SET_KEYS == set(models.SetFile.model_fields)
    assert terms.ITEM_KEYS == set(models.ItemModel.model_fields)
    assert terms.TEST_KEYS == set(models.TestFile.model_fields)
    assert terms.TEMPLATE_KEYS == set(models.TemplateFile.model_fields)
    assert terms.CATALOG_KEYS == set(models.CatalogFile.model_fields)


def test_every_shipped_file_validates_against_its_schema():
    """The schema an editor uses is not stricter than the parser on the registry's own files (2,600 sets: the
    raw documents come from the parsed registry, so the YAML is read once per session; about 3 s)."""
    from eatlas.registry import load_registry

    reg = load_registry()
    for kind, entries in (("set", reg.sets), ("test", reg.tests), ("template", reg.templates)):
        v = _validator(kind)
        bad = {eid: [e.message for e in v.iter_errors(obj.raw)][:2] for eid, obj in entries.items()
               if not v.is_valid(obj.raw)}
        assert not bad, (kind, dict(list(bad.items())[:5]))
        assert len(entries) > (2000 if kind == "set" else 400 if kind == "test" else 3)


def _set(**change):
    doc = make_set("roses", ["rose", "tulip"])
    doc.update(change)
    return doc


def _test(**change):
    doc = make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0")
    doc.update(change)
    return doc


def _template(**change):
    doc = {"id": "t", "version": "1.0.0", "families": {"name": ["This is {{ term }}."]}}
    doc.update(change)
    return doc


BAD = [
    ("set", _set(colour="red"), "colour", "unknown key(s) colour"),
    ("set", _set(version="1.0"), "version", "not semantic"),
    ("set", _set(id="Roses"), "id", "invalid id 'Roses'"),
    ("set", _set(items=[{"text": 1984, "kind": "noun"}]), "items[0].text", "expected text, got int 1984"),
    ("set", _set(items=[{"text": "rose"}]), "items[0].kind", "the item has no kind"),
    ("set", _set(items=[{"text": "rose", "kind": "noun", "colour": "red"}]), "items[0].colour", "unknown key(s)"),
    ("set", _set(language="EN_us"), "language", "write en-US"),
    ("set", _set(case_sensitive="no"), "case_sensitive", "expected true or false"),
    ("set", _set(source={"section": "1"}), "source.paper", "source has no paper"),
    ("set", _set(template_vars={"subject": 1}), "template_vars", "template_vars must map names to text"),
    ("test", _test(x="roses"), "x", "expected 'id@version'"),
    ("test", _test(y="roses@1.0"), "y", "not semantic"),
    ("test", _test(expansions={"sentence": {"template": "may2019_bleached@1.0.0"}}), "expansions.sentence",
     "unknown expansion level 'sentence'"),
    ("test", _test(expansions={"sent": {"template": "may2019_bleached@1.0.0", "famlies": {}}}),
     "expansions.sent.famlies", "allowed: families, template, vars"),
    ("test", _test(methods=["weat", "weat"]), "methods", "names a method twice"),
    ("test", _test(methods=[]), "methods", "non-empty list"),
    ("test", _test(equal_targets="yes"), "equal_targets", "expected true or false"),
    ("template", _template(families={"name": []}), "families.name", "a family must be a non-empty list"),
    ("template", _template(variables=["group 0"]), "variables", "a list of variable names"),
    ("template", _template(parts={"s1": 5}), "parts", "parts must map names to template strings"),
]


@pytest.mark.parametrize("kind, doc, field, words", BAD, ids=[f"{k}-{f}" for k, _, f, _ in BAD])
def test_a_bad_file_is_refused_by_the_parser_and_by_the_schema(kind, doc, field, words):
    """The same faults an editor marks (JSON Schema) are the parser's, in EATlas's words with the field."""
    assert not _validator(kind).is_valid(doc)
    with pytest.raises(EatlasError) as e:
        PARSERS[kind](doc, f"registry/testpaper/{kind}s/x.yaml")
    assert e.value.field == field and words in e.value.message + " (" + (e.value.hint or "") + ")", e.value.render()
    assert e.value.file == f"registry/testpaper/{kind}s/x.yaml" and e.value.obj.startswith(kind) and e.value.hint


def test_every_problem_of_a_file_is_listed_in_the_models_order():
    doc = _set(id="Roses", version=1.0, colour="red", concept=["Roses"],
               items=[{"text": 1, "kind": "noun"}, "tulip", {"text": "lily"}])
    found: list[EatlasError] = []
    s = parse_set(doc, "x.yaml", found)
    assert [(p.field, p.message.split(" (")[0][:30]) for p in found] == [
        ("id", "invalid id 'Roses'"), ("colour", "unknown key(s) colour"),
        ("version", "version 1.0 is not semantic"), ("concept", "expected text, got a list ['Ro"),
        ("items[0].text", "expected text, got int 1"), ("items[1]", "item 'tulip' is a bare string;"),
        ("items[2].kind", "the item has no kind")]
    assert all(p.obj == "set ?" and p.file == "x.yaml" for p in found)
    assert s is not None and s.id == "?" and s.version is None and s.items == []      # what could be read
    with pytest.raises(EatlasError, match="invalid id 'Roses'"):           # without a list: the first one
        parse_set(doc, "x.yaml")


_PYDANTIC_WORDS = ("Input should", "String should", "Field required", "Extra inputs", "validation error",
                   "is not valid (", "pydantic")
_values = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=6),
                    st.sampled_from(["1.0.0", "roses@1.0.0", "Roses", "en", "sent", "x", "weat"]),
                    st.lists(st.one_of(st.text(max_size=4), st.integers()), max_size=3),
                    st.dictionaries(st.sampled_from(["text", "kind", "x", "sent", "template", "name", "1"]),
                                    st.one_of(st.text(max_size=4), st.integers(), st.none()), max_size=3))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["set", "test", "template"]), changes=st.dictionaries(
    st.sampled_from(sorted(terms.SET_KEYS | terms.TEST_KEYS | terms.TEMPLATE_KEYS | {"colour"})), _values,
    max_size=4))
def test_every_problem_is_in_eatlas_words(kind, changes):
    """Whatever is wrong with a field, the message is EATlas's (never pydantic's text, never the fallback),
    names the field and says what to do."""
    doc = {"set": _set, "test": _test, "template": _template}[kind](**changes)
    found: list[EatlasError] = []
    try:
        if kind == "template":
            parse_template(doc, "x.yaml")
        else:
            PARSERS[kind](doc, "x.yaml", found)
    except EatlasError as e:
        found.append(e)
    for p in found:
        text = p.render()
        assert not any(w in text for w in _PYDANTIC_WORDS), text
        assert p.field and p.hint, text


def test_a_catalog_problem_names_the_entry(mini, tmp_path):
    from eatlas.registry import Registry

    cat = yaml.safe_load((mini.root / "catalog.yaml").read_text())
    cat["sets"][1]["version"] = "1.0"
    (mini.root / "catalog.yaml").write_text(yaml.safe_dump(cat), encoding="utf-8")
    with pytest.raises(EatlasError) as e:
        Registry(mini.root)
    assert (e.value.file, e.value.obj, e.value.field) == ("catalog.yaml", f"catalog set {cat['sets'][1]['id']}",
                                                          "sets[1].version")
    cat["sets"][1] = ["not", "a", "mapping"]
    (mini.root / "catalog.yaml").write_text(yaml.safe_dump(cat), encoding="utf-8")
    with pytest.raises(EatlasError) as e:
        Registry(mini.root)
    assert e.value.obj == "catalog sets[1]" and "expected a mapping" in e.value.message
    assert "eatlas catalog --sync" in e.value.hint
