"""The one item-cleaning routine of the curation scripts (scripts/curate_wave3.py, scripts/curate_weathub.py,
scripts/curate_wave2en.py): an authors' list, as their own code reads it, becomes a set's items by one set of
rules, and every change is returned with its position in the authors' list so that list can be rebuilt exactly
(:func:`rebuild`); the scripts record the changes with the set (``source.differences``) and say them in its
notes (:func:`difference_note`). The rules (docs/registry-format.md, "What a set changed from its authors' list"):

1. a control character is removed (backspace) or made a space (tab, line feed, carriage return);
2. an invisible format character (STRIP_FORMAT: bidi marks, a BOM, a zero-width space, a soft hyphen) is removed;
3. surrounding spaces are stripped, and the text NFC-normalised (the registry's text form);
4. repeated spaces inside an item are made one;
5. a zero-width joiner or non-joiner at a word's edge (where it joins nothing) is removed;
6. an item mixing two scripts in one word is left out, where the source's script asks (``drop_mixed``);
7. an empty item is left out (nothing between two commas; with ``nan_is_empty``, a spreadsheet cell that
   pandas read as 'nan');
8. an item that repeats an earlier one (the same text after NFKC, as the validator compares; case-insensitively
   where the set is) is kept once, at its first position.

A change the script asks for by name (``custom``: the authors' text -> (ours, why)) is applied first and
recorded with its reason. Not part of the package: curation tooling only.
"""
from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from eatlas.registry.textcheck import item_key, mixed_scripts  # noqa: E402

# Invisible format characters an authors' cell may carry around a word (bidi marks, a BOM, a zero-width space):
# the registry refuses them in a stimulus (docs/registry-format.md, "Characters in stimuli"); each one removed is
# recorded as a difference. Joiners (U+200C, U+200D) are part of some spellings and are left to the validator.
STRIP_FORMAT = {"\u200e": "LEFT-TO-RIGHT MARK", "\u200f": "RIGHT-TO-LEFT MARK", "\ufeff": "BYTE ORDER MARK",
                "\u200b": "ZERO WIDTH SPACE", "\u202a": "LEFT-TO-RIGHT EMBEDDING", "\u202c": "POP DIRECTIONAL FORMATTING",
                "\u00ad": "SOFT HYPHEN"}


CONTROL = {"\b": "U+0008 BACKSPACE removed", "\t": "U+0009 TAB made a space", "\n": "U+000A LINE FEED made a space",
           "\r": "U+000D CARRIAGE RETURN made a space"}


def curate_list(raw: list[str], *, case_sensitive: bool = True, custom: dict[str, tuple[str, str]] | None = None,
                drop_mixed: bool = False, nan_is_empty: bool = False) -> tuple[list[str], list[dict]]:
    """The authors' list (as their own code splits it) -> (our items, the differences), by the rules of the
    module docstring. A difference without ``stored`` is an item left out, one with ``stored`` an item kept in
    another form."""
    kept, diffs, seen = [], [], {}
    for pos, text in enumerate(raw):
        t = text
        extra = []
        if custom and text in custom:
            t, why = custom[text]
            extra.append(why)
        for ch, why in CONTROL.items():
            if ch in t:
                t = t.replace(ch, "" if ch == "\b" else " ")
                extra.append(why)
        removed = [name for ch, name in STRIP_FORMAT.items() if ch in t]
        for ch in STRIP_FORMAT:
            t = t.replace(ch, "")
        t = unicodedata.normalize("NFC", t.strip())
        t = re.sub(" {2,}", " ", t)
        for j in ("\u200c", "\u200d"):            # a joiner at a word's edge joins nothing: removed
            if re.search(f"(^|\\s){j}|{j}(\\s|$)", t):
                t = re.sub(f"(^|(?<=\\s)){j}+|{j}+((?=\\s)|$)", "", t)
                extra.append(f"U+{ord(j):04X} {'ZERO WIDTH NON-JOINER' if j == chr(0x200c) else 'ZERO WIDTH JOINER'}"
                             " at a word's edge removed")
        mixed = mixed_scripts(t) if drop_mixed and t else None
        if mixed:
            diffs.append({"position": pos, "text": text, "reason": "left out: the item mixes scripts ("
                          + ", ".join(f"{k} U+{ord(v):04X}" for k, v in mixed.items())
                          + "), which the registry refuses in one stimulus"})
            continue
        if nan_is_empty and t == "nan":
            diffs.append({"position": pos, "text": text, "reason": "empty spreadsheet cell, read as 'nan'"})
            continue
        if not t:
            diffs.append({"position": pos, "text": text, "reason": "empty item (nothing between two commas)"})
            continue
        k = item_key(t, case_sensitive)
        if k in seen:
            diffs.append({"position": pos, "text": text, "reason": f"repeats position {seen[k]}"})
            continue
        seen[k] = pos
        if t != text:
            why = list(extra)
            if removed:
                why.append("removed " + ", ".join(f"U+{ord(ch):04X} {n}" for ch, n in STRIP_FORMAT.items()
                                                   if n in removed))
            if text.strip() != text and not extra:
                why.append("surrounding spaces stripped")
            if unicodedata.normalize("NFC", text) != text:
                why.append("NFC-normalised")
            if "  " in text.strip():
                why.append("repeated spaces made one")
            diffs.append({"position": pos, "text": text, "stored": t, "reason": "; ".join(why) or "normalised"})
        kept.append(t)
    return kept, diffs


def rebuild(items: list[str], diffs: list[dict]) -> list[str]:
    """The authors' list from our items and the recorded differences (inverse of :func:`curate_list`)."""
    out = list(items)
    changed = {d["stored"]: d["text"] for d in diffs if "stored" in d}
    out = [changed.get(t, t) for t in out]
    for d in sorted((d for d in diffs if "stored" not in d), key=lambda d: d["position"]):
        out.insert(d["position"], d["text"])
    return out


def difference_note(diffs: list[dict]) -> str:
    """The DIFFERENCE sentence of a set's notes (empty when the list is the authors' exactly)."""
    if not diffs:
        return ""
    reps = sum(d["reason"].startswith("repeats") for d in diffs)
    empty = sum(d["reason"].startswith("empty") for d in diffs)
    mixed = sum(d["reason"].startswith("left out: the item mixes") for d in diffs)
    norm = sum("stored" in d for d in diffs)
    only_spaces = all(d["reason"] == "surrounding spaces stripped" for d in diffs if "stored" in d)
    parts = []
    if reps:
        parts.append(f"{reps} repeated item(s) kept once (a set holds each stimulus once; the authors' list, used "
                     "by their code as is, counts a repeat twice)")
    if empty:
        parts.append(f"{empty} empty item(s) (two commas with nothing between) left out")
    if mixed:
        parts.append(f"{mixed} item(s) that mix two scripts in one word (e.g. Bengali letters inside a Tamil word) left "
                     "out, since the registry refuses such a stimulus")
    if norm:
        parts.append(f"{norm} item(s) stored " + ("without the spaces around them" if only_spaces else
                                                   "normalised (spaces, invisible marks or Unicode form)"))
    return "DIFFERENCE: " + "; ".join(parts) + "; each change, with its position in the authors' list, is in " \
        "source.differences."


clean_items = curate_list     # the routine's name outside wave 3
