"""Printing stored text on a terminal as data, never as markup or control sequences.

Items, titles, notes, SQL values, model paths and error messages may hold anything: ``[/x]`` or
``[bold red]`` would be read by rich as markup (a crash, or text silently hidden), and an escape,
carriage return or bidi control would act on the terminal. :func:`visible` writes every control
and format character (Unicode categories Cc and Cf, and line/paragraph separators) as a Python
escape (``\\x1b``, ``\\u200b``); :func:`esc` does that and escapes rich markup too.
"""
from __future__ import annotations

import re
import unicodedata

HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")     # control, format, separators, surrogates, private, unassigned
_SUSPECT = re.compile(r"[^\x20-\x7e]")                  # only these need a look


def _show(m: re.Match) -> str:
    ch = m[0]
    return ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in HIDDEN else ch


def visible(value) -> str:
    """``str(value)`` with control and format characters written as escapes (``\\x1b``, ``\\u202e``)."""
    return _SUSPECT.sub(_show, "" if value is None else str(value))


def esc(value) -> str:
    """A data value ready for rich markup: :func:`visible`, then rich's markup escaped."""
    from rich.markup import escape  # rich is imported by the commands that print with it, not at start-up

    return escape(visible(value))


def plain_line(text) -> str:
    """An error or message printed without rich: :func:`visible` on each line."""
    return "\n".join(visible(line) for line in str(text).split("\n"))


# ------------------------------------------------------------------ stored text in the report and the site
LONG = 2_000        # characters of one stored value shown in a page; the rest is cut with a note
_KEEP = {"\n": "\n", "\t": "\t"}       # whitespace HTML lays out itself
# bidi controls (embeddings, overrides, isolates, marks): they reorder what follows them on the page. Other format
# characters (zero-width joiners of Persian or Devanagari words, emoji sequences) are part of the text and kept.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_PAGE_HIDDEN = ("Cc", "Zl", "Zp", "Cs")


def _show_html(m: re.Match) -> str:
    ch = m[0]
    if ch in _KEEP:
        return ch
    return ch.encode("unicode_escape").decode("ascii") if ch in BIDI or unicodedata.category(ch) in _PAGE_HIDDEN \
        else ch


def page_text(value, limit: int = LONG) -> str:
    """A stored value as a page shows it (the report and the site: one function): control characters and bidi
    controls written as escapes (``\\u202e``: a model name never displays reversed), newlines and tabs kept,
    and a value longer than ``limit`` characters cut with a note (in time and memory bounded by ``limit``,
    whatever the value's size)."""
    s = "" if value is None else str(value)
    more = len(s) - limit
    if more > 0:
        s = s[:limit]
    s = _SUSPECT.sub(_show_html, s)
    return f"{s}… [cut: {more:,} more characters]" if more > 0 else s


def jinja_finalize(value):
    """Jinja's ``finalize`` for the report's and the site's templates: every text a template prints goes through
    :func:`page_text`; markup made by EATlas itself (``Markup``: figures, tables, JSON) is left as it is."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return page_text(value)
    return value
