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
