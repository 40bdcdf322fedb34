"""The curation scripts' one item-cleaning routine (scripts/item_cleaning.py): each rule on a small list, the
authors' list rebuilt from every difference it records, and the shipped registry a fixed point of it (the lists
the scripts wrote are what the routine makes of them: re-running it changes nothing)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from item_cleaning import curate_list, difference_note, rebuild  # noqa: E402

from eatlas.registry import load_registry  # noqa: E402


@pytest.mark.parametrize("raw, kept, reason", [
    ([" rose", "tulip"], ["rose", "tulip"], "surrounding spaces stripped"),
    (["rose\u200e", "tulip"], ["rose", "tulip"], "removed U+200E LEFT-TO-RIGHT MARK"),
    (["ro\u00adse", "tulip"], ["rose", "tulip"], "removed U+00AD SOFT HYPHEN"),
    (["blue\tbell", "tulip"], ["blue bell", "tulip"], "U+0009 TAB made a space"),
    (["blue  bell", "tulip"], ["blue bell", "tulip"], "repeated spaces made one"),
    (["cafe\u0301", "tulip"], ["caf\u00e9", "tulip"], "NFC-normalised"),
    (["\u200cگل", "tulip"], ["گل", "tulip"], "U+200C ZERO WIDTH NON-JOINER at a word's edge removed"),
    (["rose", "", "tulip"], ["rose", "tulip"], "empty item (nothing between two commas)"),
    (["rose", "tulip", "rose"], ["rose", "tulip"], "repeats position 0"),
    (["rose", "tulip", "ｒｏｓｅ"], ["rose", "tulip"], "repeats position 0"),         # the same after NFKC
])
def test_each_rule_changes_an_item_and_says_why(raw, kept, reason):
    out, diffs = curate_list(raw)
    assert out == kept
    assert len(diffs) == 1 and reason in diffs[0]["reason"], diffs
    assert rebuild(out, diffs) == raw                   # the authors' list, exactly, from what is recorded
    assert difference_note(diffs).startswith("DIFFERENCE: ")


def test_the_options_are_the_source_s_facts_not_other_rules():
    assert curate_list(["rose", "nan"])[0] == ["rose", "nan"]                 # a word 'nan' is a word
    out, diffs = curate_list(["rose", "nan"], nan_is_empty=True)              # WEATHub: pandas' empty cell
    assert out == ["rose"] and diffs[0]["reason"] == "empty spreadsheet cell, read as 'nan'"
    assert curate_list(["Rose", "rose"])[0] == ["Rose", "rose"]
    assert curate_list(["Rose", "rose"], case_sensitive=False)[0] == ["Rose"]
    out, diffs = curate_list(["ee/eë/ей"], custom={"ee/eë/ей": ("ee/ей", "a transliteration left out")})
    assert out == ["ee/ей"] and "transliteration" in diffs[0]["reason"] and rebuild(out, diffs) == ["ee/eë/ей"]
    assert curate_list(["rose", "tulip"]) == (["rose", "tulip"], [])          # a clean list: no difference


@pytest.fixture(scope="module")
def reg():
    return load_registry(ROOT)


CURATED = ("espanabonet2022", "lewis2020", "czarnowska2021", "smith2022", "bhutani2024", "hofmann2024", "liang2023",
           "malik2022", "omrani2023", "weathub2023", "may2019", "meade2022", "guo2021", "garg2018", "bolukbasi2016",
           "manzini2019", "zhao2018gn", "antoniak2021", "bai2024")


def test_every_curated_set_is_what_the_routine_makes_of_it(reg):
    """The scripts' sets (wave 3, WEATHub, wave 2) hold items the routine leaves as they are: no item with spaces
    around it, an invisible mark, a control character, another Unicode form or a repeat. So running the routine
    on the registry again changes nothing; every change it made from an authors' list is in source.differences
    (checked against the authors' digests by tests/test_registry_wave3.py and tests/test_registry_weathub.py)."""
    sets = [s for s in reg.sets.values() if s.source.get("paper") in CURATED]
    assert len(sets) > 2500
    changed = []
    for s in sets:
        items = [i.text for i in s.items]
        out, diffs = curate_list(items, case_sensitive=(s.raw or {}).get("case_sensitive") is not False)
        if out != items or diffs:
            changed.append((s.id, diffs[:2]))
    assert not changed, changed[:5]
