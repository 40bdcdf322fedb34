"""Ids as people read them: natural order (weat2 before weat10) and "did you mean" for a misspelt one.

One key for every place that lists test ids (CLI, report, site), so that they agree. Imports nothing of eatlas.
"""
from __future__ import annotations

import difflib
import re

_RUNS = re.compile(r"(\d+)")


def natural_key(text) -> tuple:
    """A sort key that orders the digit runs of ``text`` by their value: weat1, weat2, ..., weat10, weat10b.
    Case is ignored first (then kept as a tie-break), so 'Weat3' sits beside 'weat3'; None sorts first."""
    s = "" if text is None else str(text)
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in _RUNS.split(s) if p)
    return parts, s


def natural_sorted(items, key=None) -> list:
    """``items`` in natural order (of ``key(item)``, default the item itself)."""
    return sorted(items, key=lambda x: natural_key(key(x) if key is not None else x))


def close_ids(name, known, n: int = 3) -> list[str]:
    """The known ids most like ``name`` (difflib; case ignored), best first; [] when none is close."""
    known = [str(k) for k in known]
    lower = {}
    for k in known:
        lower.setdefault(k.lower(), k)
    found = difflib.get_close_matches(str(name).lower(), list(lower), n=n, cutoff=0.6)
    return [lower[f] for f in found]


def did_you_mean(name, known, n: int = 3) -> str:
    """'did you mean a, b? ' (with its trailing space) for the ids of ``known`` close to ``name``, else ''."""
    close = close_ids(name, known, n)
    return f"did you mean {', '.join(close)}? " if close else ""
