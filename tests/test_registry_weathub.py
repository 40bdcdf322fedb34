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
    missing = sorted(set(by_file) - imported)
    # every authors' file is a test, or is listed with its reason among the tests not imported
    assert all(f"({f})" in README for f in missing), [f for f in missing if f"({f})" not in README][:5]


def test_machine_translation_and_full_lists_are_variants_of_the_human_translation(reg):
    wh = {tid: t for tid, t in reg.tests.items() if t.source.get("paper") == "weathub2023"}
    for tid, t in wh.items():
        m = re.fullmatch(r"weathub_([a-z]+)_(weat\w+?)(?:_(gt|all))?", tid)
        if m[3]:
            assert t.variant == {"gt": "machine_translation", "all": "human_translation_extended"}[m[3]]
            canon = f"weathub_{m[1]}_{m[2]}"
            assert t.variant_of == (canon if canon in wh else None), tid
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


@pytest.mark.skipif(not os.environ.get("EATLAS_WEATHUB_GIT"),
                    reason="set EATLAS_WEATHUB_GIT to a snapshot of github:iamshnoo/weathub")
def test_curation_script_reproduces_the_registry():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/curate_weathub.py"), os.environ["EATLAS_WEATHUB_GIT"],
                           "--check"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
