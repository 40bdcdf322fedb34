"""Unicode checks on stimulus text: characters that must not be in an item, scripts mixed within
one item, and look-alike items (Unicode confusables).

* **Refused characters**: every control and format character (general categories ``Cc``, ``Cf``:
  NUL, escape, bell, newline, tab, zero-width space/joiner/non-joiner, word joiner, BOM, soft
  hyphen, bidi controls, and the renderer's private span markers U+0002/U+0003), private-use,
  surrogate and unassigned code points (``Co``, ``Cs``, ``Cn``), line and paragraph separators
  (``Zl``, ``Zp``) and every space other than U+0020 (``Zs``: no-break, thin, ideographic spaces).
  They are invisible in a review, and a tokenizer treats them as something else.
* **Mixed scripts**: one item whose letters come from more than one script (Latin with a Cyrillic
  ``о``). Characters of the Common and Inherited scripts (digits, punctuation, hyphen, apostrophe,
  spaces, combining accents) go with any script; Latin + Han + Hiragana/Katakana (Japanese), Latin
  + Han + Hangul (Korean) and Latin + Han + Bopomofo count as one writing system, as in UTS #39's
  "highly restrictive" profile. A zero-width joiner or non-joiner between two letters of one script
  that shapes with joiners (Brahmic, Arabic) is part of the spelling and kept (RFC 5892, CONTEXTJ).
* **Confusables**: two items whose *skeletons* are equal look the same to a reader (``John`` and
  ``Jоhn`` with a Cyrillic o). The skeleton follows UTS #39 (Unicode Security Mechanisms, section 4):
  NFD, every character replaced by its prototype, NFD again. The prototypes come from Unicode's
  confusables.txt as shipped by the ``confusable-homoglyphs`` package (MIT; its ``confusables.json``
  lists each character's confusables in both directions and its ``categories.json`` the script of
  every code point, from Unicode's Scripts.txt). The package has no skeleton function, so the
  prototype of a character is the representative of its class of mutually confusable single
  characters (a class in confusables.txt is one prototype and the characters that map to it), or
  the multi-character prototype a character maps to (``m`` -> ``rn``).
"""
from __future__ import annotations

import functools
import json
import unicodedata
from functools import lru_cache
from importlib import resources

REFUSED_CATEGORIES = {"Cc": "control character", "Cf": "invisible format character",
                      "Co": "private-use character", "Cs": "surrogate", "Cn": "unassigned code point",
                      "Zl": "line separator", "Zp": "paragraph separator"}
NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED"})
# Scripts written together in one word by a living orthography (UTS #39, highly restrictive).
_COMBINED = (frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}), frozenset({"LATIN", "HAN", "HANGUL"}),
             frozenset({"LATIN", "HAN", "BOPOMOFO"}))
_JOINERS = "\u200c\u200d"     # ZWNJ, ZWJ: part of the spelling in Brahmic and Arabic scripts
_NO_JOINERS = frozenset({"LATIN", "GREEK", "CYRILLIC", "ARMENIAN"}) | NEUTRAL_SCRIPTS
_BIDI_MARKS = "\u200e\u200f"     # the package wraps right-to-left characters in these for display


def item_key(text: str, case_sensitive: bool) -> str:
    """The key under which two items of a set are the same item: NFKC, and case-folded unless case counts."""
    t = unicodedata.normalize("NFKC", text)
    return t if case_sensitive else t.casefold()


def char_name(ch: str) -> str:
    """``U+200B ZERO WIDTH SPACE``."""
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '<unnamed>')}"


def bad_chars(text: str) -> list[tuple[str, str]]:
    """[(character, what it is)] for every refused character in ``text``, each once, in order."""
    if text.isprintable():      # Python's printable: no Other (Cc Cf Cs Co Cn) or Separator (Zs Zl Zp) but U+0020,
        return []               # exactly the refused categories (and the same Unicode database as unicodedata)
    out, seen = [], set()
    for i, ch in enumerate(text):
        if ch in seen or ch == " ":
            continue
        if ch in _JOINERS and 0 < i < len(text) - 1 and _joined(text[i - 1], text[i + 1]):
            continue
        cat = unicodedata.category(ch)
        what = REFUSED_CATEGORIES.get(cat) or ("space other than U+0020" if cat == "Zs" else None)
        if what:
            seen.add(ch)
            out.append((ch, what))
    return out


def _joined(before: str, after: str) -> bool:
    """A zero-width (non-)joiner between two characters of one script that shapes with joiners
    (Telugu, Devanagari, Arabic, ...): part of the word's spelling, as in RFC 5892's CONTEXTJ rules,
    so it is kept; between Latin, Greek, Cyrillic or Common characters it is refused."""
    a, b = script(before), script(after)
    return a == b and a not in _NO_JOINERS


@lru_cache(maxsize=1)
def _data() -> tuple[dict, list, list]:
    pkg = resources.files("confusable_homoglyphs")
    confusables = json.loads(pkg.joinpath("confusables.json").read_text(encoding="utf-8"))
    cats = json.loads(pkg.joinpath("categories.json").read_text(encoding="utf-8"))
    names = cats["iso_15924_aliases"]
    ranges = [(a, b, names[k]) for a, b, k, _ in cats["code_points_ranges"]]    # sorted (start, end, script)
    return confusables, [r[0] for r in ranges], ranges


@lru_cache(maxsize=65536)
def script(ch: str) -> str:
    """The Unicode script of one character (upper-case alias, e.g. LATIN, CYRILLIC, COMMON)."""
    import bisect

    _, starts, ranges = _data()
    cp = ord(ch)
    i = bisect.bisect_right(starts, cp) - 1
    if i >= 0 and ranges[i][0] <= cp <= ranges[i][1]:
        return ranges[i][2]
    return "UNKNOWN"


def scripts(text: str) -> dict[str, str]:
    """script -> first character of it, for the scripts of ``text`` other than Common/Inherited."""
    out: dict[str, str] = {}
    for ch in text:
        s = script(ch)
        if s not in NEUTRAL_SCRIPTS and s not in out:
            out[s] = ch
    return out


def mixed_scripts(text: str) -> dict[str, str] | None:
    """The scripts of ``text`` (script -> a character of it) when it mixes scripts, else None."""
    if text.isascii():          # ASCII is Latin letters and Common signs: one script at most
        return None
    found = scripts(text)
    if len(found) < 2 or any(set(found) <= c for c in _COMBINED):
        return None
    return found


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """character -> prototype, for every character that has one other than itself."""
    confusables, _, _ = _data()
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    multi: dict[str, str] = {}
    for ch, entries in confusables.items():
        for e in entries:
            other = e["c"].strip(_BIDI_MARKS)
            if len(other) == 1 and len(ch) == 1:
                a, b = find(ch), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            elif len(ch) == 1 and other:
                multi[ch] = other      # confusables.txt sources are single characters: this is ch's prototype
    out = {c: find(c) for c in parent}
    out.update(multi)
    return {c: p for c, p in out.items() if c != p}


@functools.lru_cache(maxsize=1 << 17)     # the same items recur across a registry's tests
def skeleton(text: str) -> str:
    """UTS #39 skeleton: equal skeletons mean the two strings look alike."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(_translation()))


@lru_cache(maxsize=1)
def _translation() -> dict[int, str]:
    """:func:`_prototypes` as a ``str.translate`` table (every key is one character)."""
    return {ord(c): p for c, p in _prototypes().items()}


def differing(a: str, b: str) -> list[str]:
    """The characters of ``a`` that are not in ``b`` (the look-alikes), as ``U+XXXX NAME``."""
    return [char_name(c) for c in dict.fromkeys(a) if c not in b]
