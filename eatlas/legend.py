"""One significance legend for every table and figure (CLI table, report heatmap, EAT-Maps).

``*`` marks a WEAT/SEAT (or ML-EAT Level 1) effect that is significant after Holm-Bonferroni
correction over the tests of its run, at the run's family-wise alpha (``results.holm_significant``).
Nothing else is starred: ML-EAT Level 2 associations are shown by colour, with their own rule.
"""
from __future__ import annotations

import textwrap

MARK = "*"


def mark(holm_significant) -> str:
    return MARK if holm_significant is True or (holm_significant is not None and holm_significant == 1) else ""


def legend(alpha: float | None = None) -> str:
    at = f"α = {alpha:g}" if alpha is not None else "the run's α"
    return f"{MARK} significant after Holm-Bonferroni correction over the run's tests at {at}"


def wrap(label: str, width: int = 14) -> str:
    """A tick label over several short lines, so that neighbouring labels do not overlap."""
    return "\n".join(textwrap.wrap(str(label), width, break_long_words=True, break_on_hyphens=True)) or str(label)
