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
