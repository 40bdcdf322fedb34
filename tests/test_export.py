"""Exports: sent-bias files that round-trip and match the authors' files; stimulus tables."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.outputs.export import ROW_COLUMNS, SENT_BIAS_KEYS, export, read_sent_bias
from eatlas.registry import load_registry
from eatlas.registry.stimuli import build_test

# The authors' sent-bias files, committed (CC BY-NC 4.0): tests/data/authors/README.md.
SENT_BIAS = Path(__file__).resolve().parent / "data" / "authors" / "W4ngatang+sent-bias" / "tests"

# Where our files differ from the authors': only the category labels. sent-bias names a concept in
# CamelCase ("EuropeanAmericanNames"); the registry keeps the concept as the paper prints it, which
# is what a round trip must preserve. (file, key) -> (authors' category, ours)
CATEGORY_DIFFERENCES = {
    ("weat3", "targ1"): ("EuropeanAmericanNames", "European American names"),
    ("weat3", "targ2"): ("AfricanAmericanNames", "African American names"),
    ("weat4", "targ1"): ("EuropeanAmericanNames", "European American names"),
    ("weat4", "targ2"): ("AfricanAmericanNames", "African American names"),
    ("weat5", "targ1"): ("EuropeanAmericanNames", "European American names"),
    ("weat5", "targ2"): ("AfricanAmericanNames", "African American names"),
    ("weat6", "targ1"): ("MaleNames", "Male names"),
    ("weat6", "targ2"): ("FemaleNames", "Female names"),
    ("weat7", "attr1"): ("MaleTerms", "Male terms"),
    ("weat7", "attr2"): ("FemaleTerms", "Female terms"),
    ("weat8", "attr1"): ("MaleTerms", "Male terms"),
    ("weat8", "attr2"): ("FemaleTerms", "Female terms"),
    ("weat9", "targ1"): ("MentalDisease", "Mental disease"),
    ("weat9", "targ2"): ("PhysicalDisease", "Physical disease"),
    ("weat10", "targ1"): ("YoungPeoplesNames", "Young people's names"),
    ("weat10", "targ2"): ("OldPeoplesNames", "Old people's names"),
}


@pytest.fixture(scope="module")
def sent_bias_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sent-bias")
    export(load_registry(), "sent-bias", out)
    return out


def test_every_word_test_round_trips(sent_bias_dir):
    reg = load_registry()
    word_tests = [t for t in reg.tests.values() if t.level == "word"]
    assert len(word_tests) >= 30
    for spec in word_tests:
        back = read_sent_bias(sent_bias_dir / f"{spec.id}.jsonl")
        built = build_test(reg, spec, "word")
        for role, c in built.concepts.items():
            assert back[role] == (c.name, c.items), (spec.id, role)
            if not built.truncated:     # the registry's own sets, same concept, same items in order
                s = reg.get_set(spec.sets[role])
                assert back[role] == (s.concept, [i.text for i in s.items]), (spec.id, role)


def test_sentence_tests_export_at_their_own_level(sent_bias_dir):
    reg = load_registry()
    sentence_tests = [t for t in reg.tests.values() if t.level != "word"]
    assert len(sentence_tests) >= 8
    for spec in sentence_tests:
        back = read_sent_bias(sent_bias_dir / f"{spec.id}.jsonl")
        built = build_test(reg, spec)
        assert built.level == spec.level and spec.level in ("sent", "sent(u)")   # hand-written sentences
        for role, c in built.concepts.items():
            assert back[role] == (c.name, c.items), (spec.id, role)
    back = read_sent_bias(sent_bias_dir / "heilman_double_bind_competent_1+3-.jsonl")
    assert back["x"][1][0].startswith("John is the assistant vice president")


@pytest.mark.parametrize("n", range(1, 11))
def test_weat_exports_equal_the_authors_files(sent_bias_dir, n):
    tid = f"weat{n}"
    authors_text = (SENT_BIAS / f"{tid}.jsonl").read_text(encoding="utf-8")
    ours_text = (sent_bias_dir / f"{tid}.jsonl").read_text(encoding="utf-8")
    authors, ours = json.loads(authors_text), json.loads(ours_text)
    differences = {}
    for key in SENT_BIAS_KEYS.values():
        assert ours[key]["examples"] == authors[key]["examples"], key
        if ours[key]["category"] != authors[key]["category"]:
            differences[(tid, key)] = (authors[key]["category"], ours[key]["category"])
    assert differences == {k: v for k, v in CATEGORY_DIFFERENCES.items() if k[0] == tid}
    for key, (theirs, _) in ((k[1], v) for k, v in differences.items()):
        ours[key]["category"] = theirs
    # with the authors' labels the files are byte-identical (only their weat5.jsonl ends in a newline)
    assert json.dumps(ours, indent=2, ensure_ascii=False) == authors_text.removesuffix("\n")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_tables_hold_every_level(tmp_path, fmt):
    reg = load_registry()
    tid = "weat_hdb_competent"
    (path,), skipped = export(reg, fmt, tmp_path, test_ids=[tid])
    assert path.name == f"{tid}.{fmt}" and not skipped
    df = {"csv": lambda p: pd.read_csv(p, keep_default_na=False, na_values=[""]),
          "jsonl": lambda p: pd.read_json(p, lines=True), "parquet": pd.read_parquet}[fmt](path)
    assert list(df.columns) == ROW_COLUMNS
    spec = reg.tests[tid]
    assert list(dict.fromkeys(df["level"])) == ["word", "sent", "sent(u)"] == spec.levels
    for lv in spec.levels:
        built = build_test(reg, spec, lv)
        for role, c in built.concepts.items():
            rows = df[(df["level"] == lv) & (df["role"] == role.upper())]
            assert list(rows["text"]) == c.items
            assert set(rows["set_id"]) == {c.set_ref.split("@")[0]}
    sent = df[df["level"] != "word"]
    assert sent["template_id"].notna().all()
    assert all(t[int(a):int(b)] == s for t, a, b, s in zip(sent["text"], sent["span_start"], sent["span_end"],
                                                              sent["surface"]))


def test_level_option_and_skips(tmp_path):
    reg = load_registry()
    written, skipped = export(reg, "sent-bias", tmp_path, level="sent(u)")
    assert {p.stem for p in written} == {t.id for t in reg.tests.values() if "sent(u)" in t.levels}
    assert ("weat1", "no sent(u) level (levels: word, sent)") in skipped
    first = read_sent_bias(tmp_path / "weat_hdb_likable.jsonl")["x"][1][0]
    assert first == build_test(reg, reg.tests["weat_hdb_likable"], "sent(u)").x.items[0]
    with pytest.raises(EatlasError, match="no sent\\(u\\) level"):
        export(reg, "sent-bias", tmp_path, test_ids=["weat1"], level="sent(u)")


def test_cli_export(tmp_path, capsys):
    assert main(["export", "--format", "sent-bias", str(tmp_path), "--tests", "weat1", "weat+occ"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".eatlas-manifest.json", "weat+occ.jsonl", "weat1.jsonl"]
    assert read_sent_bias(tmp_path / "weat+occ.jsonl")["x"][0] == "MaleNames"
    assert main(["export", "--format", "csv", str(tmp_path / "t"), "--tests", "weat1", "--level", "sent"]) == 0
    assert set(pd.read_csv(tmp_path / "t" / "weat1.csv")["level"]) == {"sent"}
    assert main(["export", str(tmp_path), "--tests", "weat1", "--level", "sent(u)"]) == 2
    assert "has no sent(u) level" in capsys.readouterr().err


def test_read_sent_bias_names_the_bad_field(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"targ1": {"category": "X", "examples": ["a"]}, "targ2": {"category": "Y"},
                             "attr1": {"category": "A", "examples": []}, "attr2": {"category": "B", "examples": []}}))
    with pytest.raises(EatlasError) as e:
        read_sent_bias(p)
    assert e.value.field == "targ2"
    p.write_text("{not json")
    with pytest.raises(EatlasError, match="cannot read a sent-bias test"):
        read_sent_bias(p)
