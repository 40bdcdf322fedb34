"""Parsers of option values, shared by the CLI and the methods' option declarations (eatlas.methods)."""
from __future__ import annotations

import argparse

INT64_MAX = 2**63 - 1


def at_least(low: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{v} is below {low}")
        if v > INT64_MAX:               # the results store holds 64-bit integers
            raise argparse.ArgumentTypeError(f"{text} is above {INT64_MAX} (2**63 - 1)")
        return v
    return parse


def between(low: float, high: float, *, open_low: bool = False, open_high: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (low < v if open_low else low <= v) or not (v < high if open_high else v <= high):
            raise argparse.ArgumentTypeError(f"{v:g} is outside {'(' if open_low else '['}{low:g}, {high:g}"
                                             f"{')' if open_high else ']'}")
        return v
    return parse


SEED, POSITIVE, PROBABILITY = at_least(0), at_least(1), between(0.0, 1.0, open_low=True)


def physical_memory() -> int | None:
    """This machine's memory in bytes (None: not known)."""
    import os
    try:
        n = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return n if n > 0 else None


def _gib(n: float) -> str:
    return f"{n / 2**30:,.0f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def memory_problem(value: int, unit_bytes: int, what: str) -> str | None:
    """Why ``value`` units of ``unit_bytes`` each cannot fit in this machine's memory (None: they may)."""
    have = physical_memory()
    if have is None or value * unit_bytes <= have:
        return None
    return (f"{value} {what} need about {_gib(value * unit_bytes)} of memory ({unit_bytes:,} bytes each), more than "
            f"this machine's {_gib(have)}: at most {have // unit_bytes}")


def memory_bounded(low: int, unit_bytes: int, what: str):
    """:func:`at_least` ``low``, and at most what this machine's memory holds at ``unit_bytes`` per unit (the
    estimate the statistic's module gives: a value above it would fail only after the work began, or swap)."""
    base = at_least(low)

    def parse(text: str) -> int:
        v = base(text)
        why = memory_problem(v, unit_bytes, what)
        if why:
            raise argparse.ArgumentTypeError(why)
        return v
    return parse
