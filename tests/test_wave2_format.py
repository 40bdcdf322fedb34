"""The wave-2 registry fields (docs/registry-format.md, "Wave-2 fields"): language, a set's default
item kind, source_kind, variant/variant_of, license_note; the commands that use them."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.registry import Registry
from eatlas.registry.schemas import check_registry
from tests.conftest import make_set, make_test


def problems(mini):
    return [p.render() for p in check_registry(Registry(mini.root))]


def only(msgs, *needles):
    hits = [m for m in msgs if all(n in m for n in needles)]
    assert hits, f"no message with {needles} in {msgs}"
    return hits[0]


def bare_set(sid, items, **extra):
    """A set file written with bare-string (or partial) items, as a curator may now write it."""
    doc = make_set(sid, ["placeholder"], **extra)
    doc["items"] = items
    return doc


def hindi(mini, *, test_extra=None, **set_extra):
    """A Hindi word test beside the English one (no sentence template: the source has none)."""
    mini.add_set(bare_set("hi_flowers", ["गुलाब", "कमल", "चमेली", "गेंदा"], language="hi", kind="noun",
                          **set_extra))
    mini.add_set(bare_set("hi_insects", ["चींटी", "मक्खी", "मच्छर", "टिड्डी"], language="hi", kind="noun"))
    mini.add_set(bare_set("hi_good", ["अच्छा", "सुंदर", "प्यारा", "शांत"], language="hi", kind="adjective"))
    mini.add_set(bare_set("hi_bad", ["बुरा", "गंदा", "कड़वा", "दुखी"], language="hi", kind="adjective"))
    mini.add_test(make_test("hi_t1", "hi_flowers@1.0.0", "hi_insects@1.0.0", "hi_good@1.0.0", "hi_bad@1.0.0",
                            **{"language": "hi", "expansions": {}, **(test_extra or {})}))
    return mini.sync()


def test_bare_string_items_take_the_set_kind_and_hash_as_the_long_form(mini):
    long = mini.load().sets["roses"]
    mini.add_set(bare_set("roses", ["rose", "tulip", {"text": "daisy"}, "lily"], kind="noun"))
    short = mini.sync(fresh=False).load().sets["roses"]        # same version: the content must be the same
    assert [(i.text, i.kind) for i in short.items] == [(i.text, i.kind) for i in long.items]
    assert short.hash() == long.hash() and problems(mini) == []
    mini.add_set(bare_set("roses", ["rose", {"text": "he", "kind": "pronoun", "case": "subject"}, "daisy", "lily"],
                          kind="noun"))
    reg = mini.sync().load()
    assert [i.kind for i in reg.sets["roses"].items] == ["noun", "pronoun", "noun", "noun"]   # a mapping overrides


def test_bare_string_without_a_set_kind_says_how_to_fix_it(mini):
    mini.add_set(bare_set("roses", ["rose", "tulip"]))
    with pytest.raises(EatlasError, match="bare string; give its kind") as e:
        mini.sync()
    assert "declare the set's kind" in str(e.value) and "items[0]" in str(e.value)


@pytest.mark.parametrize("tag, hint", [("EN_us", "write en-US"), ("english", "BCP-47"), ("h1", "BCP-47"),
                                       ("zh-hans", "write zh-Hans")])
def test_language_must_be_a_bcp47_tag(mini, tag, hint):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], language=tag))
    with pytest.raises(EatlasError, match="is not a BCP-47 tag") as e:
        mini.sync()
    assert hint in str(e.value) and "field 'language'" in str(e.value) and "roses.yaml" in str(e.value)


@pytest.mark.parametrize("tag", ["en", "hi", "ckb", "zh-Hans", "pt-BR", "es-419", "sr-Latn-RS"])
def test_valid_language_tags(mini, tag):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], language=tag))
    assert mini.sync().load().sets["roses"].language == tag


def test_language_defaults_to_english_and_the_catalog_records_it(mini):
    hindi(mini)
    cat = yaml.safe_load((mini.root / "catalog.yaml").read_text())
    lang = {e["id"]: e["language"] for e in cat["sets"] + cat["tests"]}
    assert lang["roses"] == "en" and lang["t1"] == "en" and lang["hi_flowers"] == "hi" and lang["hi_t1"] == "hi"
    assert problems(mini) == []


def test_changing_a_language_is_a_content_change(mini):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], language="en-GB"))
    with pytest.raises(EatlasError, match="content changed but version 1.0.0 did not"):
        mini.sync(fresh=False)


def test_test_language_must_match_its_sets(mini):
    hindi(mini, test_extra={"language": "ur"})
    msg = only(problems(mini), "test hi_t1", "field 'language'")
    assert "ur" in msg and "hi_flowers" in msg


def test_non_english_test_cannot_use_an_english_template(mini):
    hindi(mini, test_extra={"expansions": {"sent": {"template": "may2019_bleached@1.0.0"}}})
    msg = only(problems(mini), "test hi_t1", "expansions.sent.template")
    assert "may2019_bleached" in msg and "word level" in msg


def test_unknown_source_kind_is_refused_with_the_vocabulary(mini):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], source_kind=["social_science", "survey"]))
    msg = only(problems(mini.sync()), "unknown source kind 'survey'")
    assert "registry/testpaper/sets/roses.yaml" in msg and "set roses" in msg and "source_kind[1]" in msg
    assert "crowdsourced" in msg                       # the hint lists the allowed tags


def test_variants(mini):
    mini.add_set(make_set("roses_mt", ["rose", "tulip", "daisy", "lily"], variant="machine_translation",
                          variant_of="roses"))
    assert problems(mini.sync()) == []
    reg = mini.load()
    assert (reg.sets["roses_mt"].variant, reg.sets["roses_mt"].variant_of) == ("machine_translation", "roses")
    mini.add_set(make_set("roses_mt2", ["rose", "tulip", "daisy", "lily"], variant="x", variant_of="roses_mt"))
    assert "itself a variant of roses" in only(problems(mini.sync()), "set roses_mt2", "variant_of")
    mini.add_set(make_set("roses_mt2", ["rose", "tulip", "daisy", "lily"], variant="x", variant_of="rosez"))
    assert "'rosez', which is not a set" in only(problems(mini.sync()), "set roses_mt2", "variant_of")
    mini.add_set(make_set("roses_mt2", ["rose", "tulip", "daisy", "lily"], variant_of="roses"))
    with pytest.raises(EatlasError, match="variant_of needs a variant label"):
        mini.sync()


def test_list_filters_by_language_and_source_kind(mini, capsys):
    hindi(mini, source_kind=["translation_human"])
    capsys.readouterr()
    assert main(["--registry", str(mini.root), "list", "--language", "hi"]) == 0
    out = capsys.readouterr().out
    assert "hi_t1" in out and "t1 " not in out.replace("hi_t1", "") and "1 test(s)" in out
    assert main(["--registry", str(mini.root), "list", "--source-kind", "translation_human"]) == 0
    out = capsys.readouterr().out
    assert "hi_t1" in out and "1 test(s)" in out
    assert main(["--registry", str(mini.root), "list", "--source-kind", "translated"]) == 2
    assert "one of: social_science" in capsys.readouterr().err


def _static_for(reg):
    from eatlas.encoders import _WORD_RE, StaticEncoder
    words = sorted({w for s in reg.sets.values() for i in s.items for w in _WORD_RE.findall(i.text)})
    vecs = np.random.default_rng(0).normal(size=(len(words), 8))
    return StaticEncoder(words, vecs, model_id="toy", family="static", fingerprint="toy", lowercase=False)


def test_default_run_is_english_unless_a_language_is_named(mini):
    from eatlas.run.runner import RunConfig, evaluate
    reg = hindi(mini).load()
    enc = _static_for(reg)
    out = evaluate(RunConfig(levels=("word",), n_samples=100, use_cache=False), registry=mini.root, encoder=enc)
    assert [r["test_id"] for r in out.results] == ["t1"]
    out = evaluate(RunConfig(levels=("word",), n_samples=100, use_cache=False, language="hi"), registry=mini.root,
                   encoder=enc)
    assert [r["test_id"] for r in out.results] == ["hi_t1"] and out.results[0]["status"] == "ok"
    out = evaluate(RunConfig(levels=("word",), n_samples=100, use_cache=False, language="all"), registry=mini.root,
                   encoder=enc)
    assert sorted(r["test_id"] for r in out.results) == ["hi_t1", "t1"]
    with pytest.raises(EatlasError, match="no test in language 'fr'"):
        evaluate(RunConfig(levels=("word",), use_cache=False, language="fr"), registry=mini.root, encoder=enc)


def test_publish_has_languages_and_groups_configs_by_licence(mini, tmp_path):
    import pandas as pd

    from eatlas.outputs.publish import publish
    hindi(mini, license="GPL-3.0", license_note="The repository's LICENSE is GPL-3.0; its Hub card says CC-BY-4.0.")
    publish(mini.load(), tmp_path / "ds")
    card = (tmp_path / "ds" / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["language"] == ["en", "hi"]
    rows = pd.read_parquet(tmp_path / "ds" / "data" / "hi_t1" / "test.parquet")
    assert set(rows["language"]) == {"hi"}
    sets = pd.read_parquet(tmp_path / "ds" / "data" / "sets" / "test.parquet")
    assert set(sets.loc[sets["set_id"] == "hi_flowers", "language"]) == {"hi"}
    groups = (tmp_path / "ds" / "LICENSE.md").read_text().split("### Configs by licence")[1].split("###")[0]
    # hi_t1: a CC0-1.0 test with one GPL-3.0 set; t1: CC0-1.0 sets, CC-BY-NC-4.0 template
    assert "`CC0-1.0` + `GPL-3.0`: 2 config(s): `hi_t1`, `sets`" in groups     # sets: one row per item
    assert "`CC-BY-NC-4.0` + `CC0-1.0`: 1 config(s): `t1`" in groups
    assert "Hub card says CC-BY-4.0" in card.split("### Licence notes")[1]
    assert "### Configs by licence" in (tmp_path / "ds" / "LICENSE.md").read_text()


def test_unspecified_licence_is_never_called_open(mini, tmp_path):
    from eatlas.outputs.publish import publish
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], license="unspecified"))
    publish(mini.sync().load(), tmp_path / "ds")
    groups = (tmp_path / "ds" / "LICENSE.md").read_text().split("### Configs by licence")[1].split("###")[0]
    line = only(groups.splitlines(), "`unspecified`", "`t1`")
    assert "not open" in line


def test_default_run_holds_canonical_tests_only(mini):
    """Variants run only when named: the default run tests each test once (one Holm family)."""
    from eatlas.run.runner import default_tests
    mini.add_test(make_test("t1_v", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            variant="authors-code", variant_of="t1"))
    reg = mini.sync().load()
    assert "t1" in default_tests(reg) and "t1_v" not in default_tests(reg)
    assert "t1_v" not in default_tests(reg, "all")
