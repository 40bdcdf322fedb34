"""A licence as a registry file records it: an SPDX licence expression, a ``LicenseRef-`` of its own, or unspecified.

The ``license:`` of a set, test, template, criterion or authors' repository is what a dataset card and
DATA-LICENSES.md print, so a typo there is published. It must be one of:

- an SPDX licence expression (https://spdx.org/licenses/): one identifier as the SPDX list spells it
  (``CC-BY-NC-4.0``, ``MIT``), deprecated identifiers included (``GPL-3.0``, as the authors' files state it), or
  identifiers joined with ``AND``, ``OR``, ``WITH`` and parentheses;
- ``LicenseRef-<name>`` (SPDX's form for a licence that is not on the list), with the licence's text or URL in the
  entry's ``license_note`` (an authors' repository: its ``note``);
- ``unspecified``: the source states no licence.

Anything else is refused with the nearest identifiers. The identifiers are the SPDX License List's, shipped in
``spdx_ids.txt`` beside this module (written by ``python -m eatlas.registry.spdx --write`` from the list the
``license-expression`` package carries, the SPDX list inside ScanCode's licence index): nothing is fetched, and
checking a licence imports nothing.
"""
from __future__ import annotations

import difflib
import re
import sys
from functools import cache
from pathlib import Path

UNSPECIFIED = "unspecified"
IDS_FILE = Path(__file__).with_name("spdx_ids.txt")
_REF = re.compile(r"^LicenseRef-[A-Za-z0-9.-]+$")
_OPS = ("AND", "OR", "WITH")


@cache
def _index() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(licence ids, exception ids, lower-case id -> id), from spdx_ids.txt (``exception: `` marks an exception)."""
    ids, exceptions = set(), set()
    for line in IDS_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            if line.startswith("exception: "):
                exceptions.add(line[len("exception: "):])
            else:
                ids.add(line)
    lower = {k.lower(): k for k in ids | exceptions}
    return frozenset(ids), frozenset(exceptions), lower


def _tokens(value: str) -> list[str]:
    return [t for t in re.split(r"\s+|(?=[()])|(?<=[()])", value.strip()) if t]


def _well_formed(tokens: list[str]) -> str | None:
    """None when the tokens are an SPDX expression (id[+] [WITH exception], AND/OR, parentheses); else what is wrong."""
    pos = 0

    def term() -> str | None:
        nonlocal pos
        if pos >= len(tokens):
            return "it ends where a licence is expected"
        if tokens[pos] == "(":
            pos += 1
            bad = expr()
            if bad:
                return bad
            if pos >= len(tokens) or tokens[pos] != ")":
                return "a '(' is not closed"
            pos += 1
            return None
        if tokens[pos] in _OPS or tokens[pos] == ")":
            return f"{tokens[pos]!r} stands where a licence is expected"
        pos += 1
        if pos < len(tokens) and tokens[pos] == "WITH":
            if pos + 1 >= len(tokens) or tokens[pos + 1] in (*_OPS, "(", ")"):
                return "WITH needs an exception after it"
            pos += 2
        return None

    def expr() -> str | None:
        nonlocal pos
        bad = term()
        while not bad and pos < len(tokens) and tokens[pos] in ("AND", "OR"):
            pos += 1
            bad = term()
        return bad

    bad = expr()
    if not bad and pos < len(tokens):
        bad = f"{tokens[pos]!r} follows a complete licence (join licences with AND or OR)"
    return bad


@cache
def license_problem(value: str, has_note: bool = False) -> tuple[str, str] | None:
    """``(message, hint)`` when ``value`` is not a licence of the forms above; None when it is. ``has_note``: the
    entry gives the licence's text or URL (needed by a ``LicenseRef-``)."""
    if not isinstance(value, str) or not value.strip():
        return "the licence is empty", f"write the SPDX identifier the source states, or {UNSPECIFIED}"
    if value == UNSPECIFIED:
        return None
    if value.strip().lower() == UNSPECIFIED:
        return f"licence {value!r} is not spelled as the registry spells it", f"write {UNSPECIFIED}"
    ids, exceptions, lower = _index()
    tokens = _tokens(value)
    if not any(t in _OPS for t in tokens) and len(tokens) > 1 and "(" not in tokens:
        tokens = [value.strip()]            # a phrase ("free for research"): one unknown licence, not three
    unknown, refs, cased = [], [], []
    after_with = False
    for t in tokens:
        if t in ("(", ")"):
            continue
        if t in _OPS:
            after_with = t == "WITH"
            continue
        if t.upper() in _OPS:
            cased.append((t, t.upper()))
            continue
        plain = t[:-1] if t.endswith("+") else t
        if _REF.match(plain):
            refs.append(plain)
        elif plain in (exceptions if after_with else ids):
            pass
        elif plain.lower() in lower:
            cased.append((t, lower[plain.lower()] + t[len(plain):]))
        else:
            unknown.append(t)
        after_with = False
    if unknown:
        near = difflib.get_close_matches(unknown[0], sorted(ids), n=3, cutoff=0.6)
        return (f"licence {value!r}: {', '.join(repr(u) for u in unknown)} "
                f"{'is' if len(unknown) == 1 else 'are'} not on the SPDX licence list",
                (f"did you mean {', '.join(near)}? " if near else "")
                + "write the SPDX identifier the source states (spdx.org/licenses), LicenseRef-<name> with the "
                  f"licence's text or URL in license_note, or {UNSPECIFIED}")
    if cased:
        fixed = " ".join(dict(cased).get(t, t) for t in tokens)
        return (f"licence {value!r} is not spelled as the SPDX list spells it",
                f"write {fixed.replace('( ', '(').replace(' )', ')')}")
    bad = _well_formed(tokens)
    if bad:
        return (f"licence {value!r} is not a licence expression: {bad}",
                "join identifiers with AND, OR or WITH, e.g. MIT OR Apache-2.0")
    if refs and not has_note:
        return (f"licence {refs[0]} is not on the SPDX list, and no license_note gives its text or URL",
                "add license_note: with the licence's URL or its text")
    return None


def note_gives_licence(note) -> bool:
    """Whether a ``license_note`` gives a licence's text or URL (a URL, or at least a few words)."""
    return isinstance(note, str) and re.search(r"https?://\S+|\S+\s+\S+\s+\S+", note) is not None


def write_ids() -> str:
    """spdx_ids.txt's text from the installed ``license-expression`` package's licence index (ScanCode's own
    ``LicenseRef-scancode-*`` keys left out: they are not SPDX's)."""
    import importlib.metadata

    from license_expression import get_license_index

    ids, exceptions = set(), set()
    for lic in get_license_index():
        for k in [lic.get("spdx_license_key"), *(lic.get("other_spdx_license_keys") or [])]:
            if k and not k.startswith("LicenseRef-"):
                (exceptions if lic.get("is_exception") else ids).add(k)
    head = ["# The SPDX License List's licence and exception identifiers (deprecated ones included), one a line;",
            "# 'exception: ' marks an exception. Written by 'python -m eatlas.registry.spdx --write' from the list",
            f"# inside license-expression {importlib.metadata.version('license-expression')} "
            "(ScanCode's licence index)."]
    return "\n".join(head + sorted(ids) + [f"exception: {e}" for e in sorted(exceptions)]) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        IDS_FILE.write_text(write_ids(), encoding="utf-8")
    else:
        sys.exit("usage: python -m eatlas.registry.spdx --write")
