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


# What each number of a WEAT result answers, one line each: the CLI after its table, the report and the dataset
# card say the same (docs/methods.md, "What the numbers answer").
P_MEANS = ("p (permutation test): would these target stimuli differ this much if the labels X and Y were random? "
           "It holds the attribute stimuli fixed.")
CI_MEANS = {
    "inversion": "CI: how d would vary with other stimuli drawn from the same concepts: the permutation test "
                 "inverted, widened for the attribute sample and corrected for attenuation, so it is about the "
                 "concepts' d and may lie above the attenuated d.",
    "bootstrap": "CI: how d would vary with other stimuli drawn from the same concepts (stimulus bootstrap); it "
                 "does not correct the attenuation below and can contain 0 beside a small p.",
}
ATTENUATION = ("d is attenuated at small set sizes: each s(w) carries noise from the finite attribute sample, which "
               "inflates d's denominator; d_corrected removes that noise (reliability: the share of var s(w) that "
               "is not noise). d stays the number comparable with the papers.")


def meanings(ci_method: str | None) -> list[str]:
    """The lines that say what p, the CI (of ``ci_method``; None: no CI) and d answer."""
    out = [P_MEANS]
    if ci_method:
        out.append(CI_MEANS["inversion" if ci_method == "inversion" else "bootstrap"])
    return out + [ATTENUATION]
