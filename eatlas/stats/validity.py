"""Criterion validity: how the items' associations go with a criterion about the world, across items.

:func:`correlate` gives Pearson's r and Spearman's rho of two paired samples (the items' associations and their
criterion values), each with its usual p-value (scipy.stats.pearsonr: the t test of r = 0; scipy.stats.spearmanr:
the same t approximation on the ranks) and a confidence interval from the bootstrap over items (pairs resampled
with replacement; percentile by default, BCa on request) by scipy.stats.bootstrap. The coverage of these
intervals at n = 20 to 50 items, for bivariate normal and heavy-tailed data, is measured by
``benchmarks/coverage_validity.py`` and stated in docs/validity.md.

A correlation is a statement about the items together: a high r says that items with higher criterion values tend
to have higher associations, not that any one item's association is right, fair or unfair.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CI_METHODS = ("BCa", "percentile")


@dataclass(frozen=True)
class Correlation:
    n: int
    pearson_r: float
    pearson_p: float
    pearson_ci_low: float | None
    pearson_ci_high: float | None
    spearman_rho: float
    spearman_p: float
    spearman_ci_low: float | None
    spearman_ci_high: float | None
    ci: float | None
    n_boot: int | None
    ci_method: str | None


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    num = (x * y).sum(axis=axis)
    den = np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(num / den, -1.0, 1.0)


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    from scipy.stats import rankdata

    return _pearson(rankdata(x, axis=axis), rankdata(y, axis=axis), axis=axis)


def bootstrap_ci(x: np.ndarray, y: np.ndarray, statistic, *, ci: float = 0.95, n_boot: int = 10_000, seed: int = 0,
                 method: str = "percentile") -> tuple[float | None, float | None]:
    """The bootstrap interval of ``statistic(x, y, axis)`` over the pairs (x_i, y_i); (None, None) when it is
    undefined (e.g. every resample has the same value)."""
    import warnings

    from scipy.stats import bootstrap

    if method not in CI_METHODS:
        raise ValueError(f"unknown CI method {method!r}; one of {', '.join(CI_METHODS)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # a degenerate distribution: the interval is NaN, said as None
        res = bootstrap((x, y), statistic, paired=True, vectorized=True, n_resamples=n_boot, confidence_level=ci,
                        method=method, rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (None, None)


def correlate(x, y, *, ci: float | None = 0.95, n_boot: int = 10_000, seed: int = 0,
              method: str = "percentile") -> Correlation:
    """Pearson and Spearman correlation of ``x`` (associations) with ``y`` (criterion values), their p-values and
    (``ci`` not None) their bootstrap intervals over the pairs. Needs at least three pairs, neither sample
    constant."""
    from scipy.stats import pearsonr, spearmanr

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be two samples of the same length")
    if len(x) < 3:
        raise ValueError(f"a correlation needs at least 3 items, got {len(x)}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("one of the samples is constant; no correlation is defined")
    pr, sr = pearsonr(x, y), spearmanr(x, y)
    lo = hi = slo = shi = None
    if ci is not None:
        lo, hi = bootstrap_ci(x, y, _pearson, ci=ci, n_boot=n_boot, seed=seed, method=method)
        slo, shi = bootstrap_ci(x, y, _spearman, ci=ci, n_boot=n_boot, seed=seed, method=method)
    return Correlation(n=len(x), pearson_r=float(pr.statistic), pearson_p=float(pr.pvalue), pearson_ci_low=lo,
                       pearson_ci_high=hi, spearman_rho=float(sr.statistic), spearman_p=float(sr.pvalue),
                       spearman_ci_low=slo, spearman_ci_high=shi, ci=ci, n_boot=n_boot if ci is not None else None,
                       ci_method=method if ci is not None else None)


def fisher_ci(r: float, n: int, ci: float = 0.95) -> tuple[float, float]:
    """The Fisher z interval of Pearson's r (for bivariate normal data), for comparison with the bootstrap."""
    from scipy.stats import norm

    z, se = np.arctanh(np.clip(r, -0.999999, 0.999999)), 1 / np.sqrt(n - 3)
    q = norm.ppf(0.5 + ci / 2)
    return float(np.tanh(z - q * se)), float(np.tanh(z + q * se))
