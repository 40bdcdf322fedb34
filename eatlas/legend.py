"""One significance legend for every table and figure (CLI table, report heatmap, EAT-Maps).

``*`` marks a WEAT/SEAT (or ML-EAT Level 1) effect that is significant after Holm-Bonferroni
correction over the tests of its run, at the run's family-wise alpha, by the p of the run's --p-rule
(``results.holm_significant``, ``holm_p_rule``, ``holm_family``).
Nothing else is starred: ML-EAT Level 2 associations are shown by colour, with their own rule.
"""
from __future__ import annotations

import textwrap

MARK = "*"


def mark(holm_significant) -> str:
    return MARK if holm_significant is True or (holm_significant is not None and holm_significant == 1) else ""


def family_words(n: int | None = None) -> str:
    """The Holm mark's family in words: the run's tests (and how many results it held, where known)."""
    return f"the run's {n} test result(s)" if n else "the run's tests"


def legend(alpha: float | None = None, p_rule: str | None = None, family_size: int | None = None) -> str:
    """The Holm mark in words: its family (the run's tests, ``family_size`` of them where known), α and which p.
    The same result can be marked in a run of 2 tests and not in one of 68: the family is part of the mark."""
    at = f"α = {alpha:g}" if alpha is not None else "the run's α"
    by = {"concepts": " on p concepts", "papers": " on the papers' p"}.get(p_rule or "", "")
    return (f"{MARK} significant after Holm-Bonferroni correction over {family_words(family_size)} at {at}{by}; "
            "the family is the run's: another run's tests give another mark")


def p_floor(n_samples, alternative: str | None = "greater") -> float | None:
    """The smallest p a sampled permutation test gives (eatlas.stats.weat.p_from_null counts the observed
    partition among ``n_samples``): 1/n_samples, twice that two-sided. None for an exact test (no n_samples)."""
    if not n_samples:
        return None
    return min(1.0, (2.0 if alternative == "two-sided" else 1.0) / float(n_samples))


def at_floor(p, n_samples, alternative: str | None = "greater") -> bool | None:
    """Whether a sampled permutation p is at its floor (:func:`p_floor`): no sampled partition was as extreme as
    the observed one, so the p is only bounded by the number sampled. None where no partitions were sampled."""
    floor = p_floor(n_samples, alternative)
    if floor is None or p is None or p != p:
        return None
    return bool(p <= floor * (1 + 1e-9))


def fmt_p(p, at_floor_: bool | None = None) -> str:
    """A p for a table: two significant digits; a sampled permutation p at its floor as '< 1e-05' (the floor of
    100,000 partitions), which is what it says (a bound), not a value to copy into a paper. '-' when None."""
    if p is None or p != p:
        return "-"
    return f"< {p:.2g}" if at_floor_ else f"{p:.2g}"


FLOOR_LINE = ("'< 1e-05': no sampled partition was as extreme as the observed one, so the papers' p is below 1 / "
              "the partitions sampled (results.p_n_samples, --n-samples); report it as a bound")


# What to set in a paper, where the numbers are printed (the run's legend, the report, the site).
WHAT_TO_REPORT = ("For a paper, report the concepts' d with its interval and p concepts; the sample d and p papers "
                  "answer the papers' narrower question (these attribute words fixed), for comparison with them.")
# Why the concepts' d cannot be estimated, in the row's note: the cause, not the set sizes.
NOT_ESTIMABLE_WHY = "the attribute words' noise swamps the targets' spread"


def alternative_line(alternative: str | None) -> str:
    """Which alternative the p-values test, in words, with the option that changes it."""
    return {"greater": "p papers is one-sided: it tests d > 0 (X nearer A than Y is; --alternative greater), and an "
                       "effect in the other direction gets it near 1 and a note; p concepts is two-sided, as its "
                       "interval",
            "less": "p papers is one-sided: it tests d < 0 (--alternative less), and an effect in the other direction "
                    "gets it near 1 and a note; p concepts is two-sided, as its interval",
            "two-sided": "both p are two-sided: they test d ≠ 0 (--alternative two-sided)"}.get(
        alternative or "greater", f"p tests the {alternative} alternative")


def wrap(label: str, width: int = 14, max_lines: int = 4) -> str:
    """A figure's label over at most ``max_lines`` short lines, so that neighbouring labels do not overlap; a longer
    one ends in '…'. Control and bidi characters are shown escaped (eatlas.console.page_text), and only the first
    lines' worth of a label is ever read: a 20 MB model name from a file made elsewhere costs what a short one does."""
    from .console import page_text
    text = str(label)
    head = page_text(text[:width * max_lines + 1], width * max_lines + 1)
    lines = textwrap.wrap(head, width, break_long_words=True, break_on_hyphens=True, max_lines=max_lines,
                          placeholder="…")
    if len(text) > width * max_lines and lines and not lines[-1].endswith("…"):
        lines[-1] = lines[-1][:width - 1] + "…"
    return "\n".join(lines) or head


# What each number of a WEAT result answers, one line each: the CLI after its table, the report and the dataset
# card say the same (docs/methods.md, "What the numbers answer").
P_CONCEPTS_MEANS = ("p concepts (the default; eatlas.stats.concepts): would other words of the same four concepts "
                    "show this association? Targets and attributes are both samples of their concepts, the words the "
                    "units at every level (a word's sentences are one unit). Two-sided, the test its 95% interval "
                    "inverts: the interval excludes 0 exactly when p concepts < 0.05.")
P_MEANS = ("p papers (permutation test, as Caliskan et al. and May et al.): would these target words differ this much "
           "if the labels X and Y were random? It holds the attribute words fixed.")
CI_MEANS = {
    "concepts": "CI: the concepts' d with its interval, from the same question as p concepts (they agree by "
                "construction); where the attribute words' noise swamps the targets' spread it says 'not estimable' "
                "instead.",
    "permutation": "CI (permutation): the papers' question, the permutation test inverted: an interval of the sample "
                   "d with these attribute words fixed.",
    "inversion": "CI (inversion, earlier versions): the permutation test inverted, widened for the attribute sample "
                 "and corrected for attenuation; an interval of d_corrected.",
    "bootstrap": "CI (stimulus bootstrap): how the sample d would vary with other stimuli drawn from the same "
                 "concepts; it does not correct the attenuation below and can contain 0 beside a small p.",
}
ATTENUATION = ("sample d (Caliskan et al.'s) is the number comparable with the papers; it is attenuated at small set "
               "sizes, since each s(w) carries noise from the finite attribute sample. The concepts' d is the "
               "effect of the concepts with that noise removed.")


def ci_means(ci_method: str | None) -> str | None:
    """The line that says what the CI of ``ci_method`` answers (None: no CI)."""
    if not ci_method:
        return None
    return CI_MEANS.get(ci_method, CI_MEANS["bootstrap"])


def meanings(ci_method: str | None, alternative: str | None = "greater") -> list[str]:
    """The lines that say what p (both), the CI (of ``ci_method``; None: no CI), d and the alternative answer."""
    out = [WHAT_TO_REPORT, P_CONCEPTS_MEANS, P_MEANS]
    if ci_method:
        out.append(ci_means(ci_method))
    out.append(ATTENUATION)
    if alternative:
        out.append(alternative_line(alternative)[0].upper() + alternative_line(alternative)[1:] + ".")
    return out
