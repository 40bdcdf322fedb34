"""WEATHub (registry/weathub2023) against the authors' files (iamshnoo/weathub, GPL-3.0).

The authors' lists are not committed (GPL-3.0 data in an Apache-2.0 package): tests/data/authors/weathub/
digests.json holds, per authors' file and role, the sha256 of the NFC-normalised list (and of the raw
list where that differs) and the set curated from it. Every set is rebuilt here from its items and the
differences it records (``source.differences``: positions left out, with why), and must give the
authors' digest: a list that differs without a recorded difference fails.
Regenerating: ``python scripts/curate_weathub.py GIT_DIR`` (a snapshot of github:iamshnoo/weathub).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from eatlas.registry import load_registry
from eatlas.registry.textcheck import item_key

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = json.loads((ROOT / "tests/data/authors/weathub/digests.json").read_text(encoding="utf-8"))
README = (ROOT / "registry/weathub2023/README.md").read_text(encoding="utf-8")
ROLE = {"targ1": "x", "targ2": "y", "attr1": "a", "attr2": "b"}


@pytest.fixture(scope="module")
def reg():
    return load_registry(ROOT)


def _sha(items) -> str:
    return hashlib.sha256(json.dumps(list(items), ensure_ascii=False).encode("utf-8")).hexdigest()


def _rebuild(items: list[str], differences: list[dict]) -> list[str]:
    out = list(items)
    for d in sorted(differences, key=lambda d: d["position"]):
        out.insert(d["position"], d["text"])
    return out


def test_every_authors_list_is_rebuilt_exactly_from_its_set(reg):
    assert len(DIGESTS["lists"]) == 2736            # 684 files (data/<lang>_{human,gt,all,new,india}) x 4 roles
    bad = []
    for e in DIGESTS["lists"]:
        s = reg.sets[e["set"]]
        rebuilt = _rebuild([i.text for i in s.items], s.source.get("differences") or [])
        if _sha(rebuilt) != e["sha256_nfc"] or len(rebuilt) != e["n"]:
            bad.append(f"{e['file']} {e['role']} -> {s.id}")
    assert not bad, f"{len(bad)} list(s) differ from the authors' without a recorded difference: {bad[:5]}"


def test_each_recorded_difference_is_a_repeat_or_an_empty_cell(reg):
    n = 0
    for s in reg.sets.values():
        if s.source.get("paper") != "weathub2023":
            continue
        diffs = s.source.get("differences") or []
        full = _rebuild([i.text for i in s.items], diffs)
        for d in diffs:
            n += 1
            if d["text"] == "nan":
                assert "empty spreadsheet cell" in d["reason"], (s.id, d)
                continue
            first = int(re.fullmatch(r"repeats position (\d+)", d["reason"])[1])
            assert first < d["position"] and item_key(full[first], True) == item_key(d["text"], True), (s.id, d)
        if diffs:
            assert "DIFFERENCE" in s.notes, s.id
    assert n > 0


def test_sets_record_nfc_normalisation_and_keep_zero_width_joiners(reg):
    raw_differs = {e["set"] for e in DIGESTS["lists"] if "sha256_raw" in e}
    assert raw_differs
    for sid in raw_differs:
        assert "NFC-normalised" in reg.sets[sid].notes, sid
    joiners = [i.text for s in reg.sets.values() if s.source.get("paper") == "weathub2023" for i in s.items
               if "\u200c" in i.text or "\u200d" in i.text]
    assert joiners and all(unicodedata.normalize("NFC", t) == t for t in joiners)


def test_tests_use_the_sets_of_their_authors_file(reg):
    by_file = {}
    for e in DIGESTS["lists"]:
        by_file.setdefault(e["file"], {})[ROLE[e["role"]]] = e["set"]
    imported = set()
    for t in reg.tests.values():
        if t.source.get("paper") != "weathub2023":
            continue
        f = t.source["authors_file"].removeprefix("iamshnoo/weathub ")
        imported.add(f)
        assert {r: ref.split("@")[0] for r, ref in t.sets.items()} == by_file[f], t.id
        assert t.language == reg.sets[by_file[f]["x"]].language == f.split("/")[1].split("_")[0]
        assert t.license == "GPL-3.0" and "cc-by-4.0" in t.raw["license_note"]
    # every authors' file is a test (those whose lists put an item in both targets or attributes as variants)
    assert sorted(set(by_file) - imported) == []


def test_machine_translation_and_full_lists_are_variants_of_the_human_translation(reg):
    wh = {tid: t for tid, t in reg.tests.items() if t.source.get("paper") == "weathub2023"}
    for tid, t in wh.items():
        m = re.fullmatch(r"weathub_([a-z]+)_(weat\w+?)(?:_(gt|all))?", tid)
        if m[3] and t.variant != "authors-lists":
            assert t.variant == {"gt": "machine_translation", "all": "human_translation_extended"}[m[3]]
            canon = f"weathub_{m[1]}_{m[2]}"
            if canon in wh and wh[canon].variant_of is None:
                assert t.variant_of == canon, tid
            else:       # the human translation is itself a variant (its lists overlap): the English test
                assert t.variant_of == m[2] and reg.tests[m[2]].source["paper"] == "caliskan2017", tid
    assert sum(t.variant_of is not None for t in wh.values()) > 100
    gt_sets = [s for s in reg.sets.values() if s.variant == "machine_translation"]
    assert gt_sets and all(s.source_kind == ["translation_machine"] for s in gt_sets)
    assert all(reg.sets[s.variant_of].variant == "human_translation" for s in gt_sets if s.variant_of)


def test_languages_and_the_english_default(reg):
    langs = {t.language for t in reg.tests.values()}
    assert len(langs) >= 20 and "en" in langs
    english = [t for t in reg.tests.values() if t.language == "en"]
    # WEATHub's English lists (data/en_new, data/en_india) are English tests; every other one is not
    assert all(not t.id.startswith("weathub_") or t.id.startswith("weathub_en_") for t in english)


def test_published_results_point_at_imported_tests(reg):
    from eatlas.store import read_published
    entries = [e for e in reg.catalog["published"] if e["paper"] == "weathub2023"]
    pub = read_published(reg, entries)
    assert set(pub["statistic"]) == {"effect_size", "p_value"}
    ids = set(pub["test_id"]) - {""}
    assert ids and ids <= set(reg.tests)
    assert (pub.loc[pub["test_id"] == "", "note"].str.contains("no EATlas test")).all()
    assert pub["table_id"].str.startswith("final_results/").all()


def _shared(reg, t, p, q) -> list[str]:
    kp = {item_key(i.text, True) for i in reg.get_set(t.sets[p]).items}
    return [i.text for i in reg.get_set(t.sets[q]).items if item_key(i.text, True) in kp]


def test_tests_whose_lists_overlap_are_variants_declaring_the_overlap(reg):
    """The 146 tests whose authors' lists put one item in both targets or both attributes are kept, as variants
    (`variant: authors-lists`) naming a canonical test, with exactly the shared items in `overlap:`; the default
    run of any language leaves them out, and every other test shares no item between X and Y or A and B."""
    from eatlas.run.runner import default_tests

    wh = {tid: t for tid, t in reg.tests.items() if t.source.get("paper") == "weathub2023"}
    pairs = ("x/y", "a/b")
    kept = {tid: t for tid, t in wh.items() if set(t.overlap or {}) & set(pairs)}
    assert len(kept) == 146
    for tid, t in wh.items():
        declared = {pair: _shared(reg, t, *pair.split("/")) for pair in pairs}
        assert {k: v for k, v in (t.overlap or {}).items() if k in pairs} == {k: v for k, v in declared.items()
                                                                             if v}, tid
        assert (t.variant == "authors-lists") == (tid in kept), tid
        # an item in a target and an attribute set is kept too (a warning unless declared): declared exactly
        for pair, items in (t.overlap or {}).items():
            if pair not in pairs:
                assert items == _shared(reg, t, *pair.split("/")), (tid, pair)
    assert wh["weathub_ar_weat14"].overlap == {"x/a": ["مثقف"]} and wh["weathub_ar_weat14"].variant_of is None
    for tid, t in kept.items():
        canon = reg.tests[t.variant_of]
        assert canon.variant_of is None and not canon.overlap, tid
        assert f"`{tid}` (data/" in README
    assert kept["weathub_hi_weat7"].overlap == {"a/b": ["वह", "उसका"]}
    assert kept["weathub_hi_weat7"].variant_of == "weat7"                     # the English test it translates
    assert kept["weathub_ja_weat7_all"].variant_of == "weathub_ja_weat7"      # the same language's human one
    assert not set(kept) & set(default_tests(reg, "all"))


def test_fasttext_rows_are_stored_once_as_fasttext(reg):
    """The fastText rows that every model folder of a sheet repeats are stored once, family fasttext; the other
    tables hold none."""
    from eatlas.store import read_published
    entries = [e for e in reg.catalog["published"] if e["paper"] == "weathub2023"]
    pub = read_published(reg, entries)
    ft = pub[pub["model"] == "fasttext"]
    assert len(ft) and (ft["model_family"] == "fasttext").all()
    assert ft["source_file"].str.endswith("_fasttext.csv").all()
    key = ["row_label", "column_label", "statistic"]
    assert not ft.duplicated(subset=key).any()
    others = pub[pub["model"] != "fasttext"]
    assert not others["source_file"].str.endswith("_fasttext.csv").any()
    # the authors-lists variants link their printed numbers
    row = pub[(pub["test_id"] == "weathub_hi_weat7") & (pub["model"] == "distilbert-CLS")
              & (pub["statistic"] == "effect_size")]
    assert row["row_label"].tolist() == ["hi | contextual,HT,distilbert-CLS"]


def test_models_yaml_names_the_hub_models_the_authors_code_loaded(reg):
    import yaml
    doc = yaml.safe_load((ROOT / "registry/weathub2023/published/models.yaml").read_text(encoding="utf-8"))
    models = {m["model"]: m for m in doc["models"]}
    from eatlas.store import read_published
    pub = read_published(reg, [e for e in reg.catalog["published"] if e["paper"] == "weathub2023"])
    assert set(pub["model"]) == set(models)               # every printed Method is named
    assert models["distilbert-CLS"]["hub_ids"] == ["distilbert-base-multilingual-cased"]
    assert models["xlmr-avg-all-hidden-subword-avg"]["hub_ids"] == ["xlm-roberta-base"]
    assert models["indic-bert-CLS"]["hub_ids"] == ["ai4bharat/indic-bert"]
    assert models["mono-indic-bert-CLS"]["hub_id_by_language"] == {"bn": "l3cube-pune/bengali-bert",
                                                                   "hi": "l3cube-pune/hindi-bert-v2"}
    assert models["mono-bert-CLS"]["hub_id_by_language"]["zh"] == "bert-base-chinese"
    # the CLS method is EATlas's standard encoding pooled at the first token; the others re-encode each subword
    # alone, which no EATlas encoding does, so no run is theirs
    assert {k: (m.get("encoding"), m.get("pooling")) for k, m in models.items() if k.endswith("-CLS")} == {
        k: ("standard", "cls") for k in models if k.endswith("-CLS")}
    assert all(m["encoding"] == "unknown" and m["departures"] for k, m in models.items()
               if k != "fasttext" and not k.endswith("-CLS"))
    assert models["distilbert-avg-all-hidden-subword-avg"]["paper_method"] == "M5"
    assert models["fasttext"]["hub_ids"] == [] and "cc.<lang>.300.bin" in models["fasttext"]["no_hub_id"]
    assert all(m["model_family"] == pub.loc[pub["model"] == k, "model_family"].iloc[0] for k, m in models.items())


@pytest.mark.skipif(not os.environ.get("EATLAS_WEATHUB_GIT"),
                    reason="set EATLAS_WEATHUB_GIT to a snapshot of github:iamshnoo/weathub")
def test_curation_script_reproduces_the_registry():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/curate_weathub.py"), os.environ["EATLAS_WEATHUB_GIT"],
                           "--check"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
