"""The papers' interval of the WEAT effect size (the permutation test inverted), the inversion interval built on
it, and the attenuation of d at small set sizes. The concepts' question has its own p and interval,
:mod:`eatlas.stats.concepts`.

Why another interval. A WEAT's s(w) = mean cos(w, a) - mean cos(w, b) is computed from a *sample* of
attribute stimuli, so every s(w) carries sampling noise from A and B. That noise spreads the s(w) of the
targets and inflates the standard deviation in d's denominator: the sample d is attenuated towards 0 at
the set sizes the papers use (Spearman's attenuation of a correlation by measurement error; WEAT's d is
twice a point-biserial correlation). The stimulus bootstrap (``eatlas.stats.robust``) resamples the
attribute stimuli once more, attenuating its resamples again, and resamples a crossed array (targets x
attributes) as if its two factors were independent, which counts their interaction twice (McCullagh
2000; Owen 2007): its percentile interval is too wide near d = 0, too low at large d, and can contain 0
beside a permutation p < 0.01. ``benchmarks/calibration_study.py`` measures all of this.

The intervals here (docs/methods.md derives them): :func:`papers_interval` is step 1 alone, mapped to the sample
d's scale (the papers' question: these attribute words, the targets exchangeable); the inversion interval
(``ci_method="inversion"``, :func:`inversion_ci`) is steps 1-3:

1. **The permutation test inverted** (Garthwaite 1996): for every partition of the test's own
   permutation distribution (the same partitions, seed and tie tolerance as its p-value), the shift
   theta of X's s(w) at which that partition's statistic equals the observed one. The shifts theta at
   which the one-sided tests do not reject at (1 - level) / 2 form an interval for the difference of
   mean associations. Its lower end is above 0 exactly when p_greater <= (1 - level) / 2 and its upper
   end below 0 exactly when p_less <= (1 - level) / 2: it answers the permutation p's own question.
2. **Widened for the attribute sample**: the permutation test holds A and B fixed; with other attribute
   stimuli the difference would move by (mean x - mean y) . delta, delta the attribute sample's error.
   Its variance, unbiasedly estimated from the cosine blocks, is added to each half-width. A widened
   end never crosses 0 where the test's own end did not (the sign stays the test's).
   The standard deviation of d's denominator is estimated too: its normal-theory variance adds
   theta^2 / (2 (n - 2)) (n = |X| + |Y|).
3. **Mapped to d and disattenuated**: each end theta becomes the d of the targets with X shifted to a
   difference theta, theta / sqrt((SS_within + n_x n_y / n theta^2) / (n - 1)) (the standard deviation
   over X u Y grows with the shift), divided by sqrt(reliability), reliability = 1 - noise / var(s),
   noise = tr(S_W S_A) / |A| + tr(S_W S_B) / |B| (S: sample covariances of the unit vectors; the trace is
   read from the double-centred cosine block). The reliability is floored at
   :data:`RELIABILITY_FLOOR`, and the ends are kept within the largest |d| the target sizes allow
   (:func:`d_bound`). The mapping keeps signs, so step 1's agreement with the p-value survives.

That agreement was the design's target, and the calibration study shows it was the wrong one: where X and Y are
distinct concepts (every real test) the permutation p is anti-conservative for the population question, and an
interval kept from crossing 0 wherever that p rejects inherits it (coverage 0.38-0.92 at population d = 0 in
the study's distinct-concept models). :mod:`eatlas.stats.concepts` answers the population question whole.

``d_corrected`` = d / sqrt(reliability) is the matching point estimate, an additional number: the paper-
comparable d stays the headline and is computed as before.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blas import single_threaded
from .cosine import unit_rows as _unit_rows

RELIABILITY_FLOOR = 0.1     # below it the attribute sample is too noisy to correct for: d_corrected <= d / sqrt(0.1)
INVERSION = "inversion"
CI_METHODS = (INVERSION, "percentile", "BCa")       # the first is the default
MIN_CHECKED_SIZE = 8        # the smallest set size of benchmarks/calibration_study.py: below it a result carries a note


@dataclass(frozen=True)
class Attenuation:
    """How much the attribute sample's noise inflates the spread of s(w) over the targets."""
    variance: float         # sample variance of s(w) over X u Y (ddof=1), d's denominator squared
    noise: float            # its expected part due to the finite A and B (unbiased estimate)
    reliability: float      # 1 - noise / variance (may be <= 0: then the floor is used)
    d: float                # Caliskan et al.'s d
    d_corrected: float      # d / sqrt(max(reliability, RELIABILITY_FLOOR)), within +-d_bound


@dataclass(frozen=True)
class InversionCI:
    low: float
    high: float
    level: float
    method: str
    n_partitions: int
    attenuation: Attenuation
    shift_low: float        # the interval of the difference of mean associations (theta), before step 3
    shift_high: float
    exact: bool = False     # the partitions were all of them
    null: np.ndarray | None = None      # the permutation statistics the interval inverted (observed first)
    papers_low: float = float("nan")    # the papers' interval (:func:`papers_interval`): step 1 alone, on the
    papers_high: float = float("nan")   # sample d's scale (no widening, no disattenuation)


def d_bound(n_x: int, n_y: int) -> float:
    """The largest |d| of concepts in the proportions n_x : n_y: d = (mean_X - mean_Y) / sd over X u Y, and
    the variance over X u Y is at least p (1 - p) (mean_X - mean_Y)^2, p = n_x / n, so |d| <= 1 / sqrt(p (1 -
    p)) = n / sqrt(n_x n_y) (2 for equal sizes; a sample's d, with ddof=1, stays below sqrt(n (n - 1) / (n_x
    n_y)))."""
    n = n_x + n_y
    return float(n / np.sqrt(n_x * n_y))


def _interaction_trace(C: np.ndarray) -> float:
    """tr(S_rows S_cols) for the cosine block C = R @ K.T of unit rows R and K: the squared norm of the
    double-centred block over (rows - 1)(cols - 1). 0 when either side has one row."""
    r, c = C.shape
    if r < 2 or c < 2:
        return 0.0
    Cc = C - C.mean(axis=0, keepdims=True) - C.mean(axis=1, keepdims=True) + C.mean()
    return float(np.square(Cc).sum() / ((r - 1) * (c - 1)))


def attenuation_from_blocks(sa: np.ndarray, sb: np.ndarray, n_x: int) -> Attenuation:
    """:class:`Attenuation` from the cosine blocks sa = cos(W, A), sb = cos(W, B) (W: X rows, then Y rows).

    E[var(s)] = v' S_W v + tr(S_W Sigma_delta) over the attribute sample, v the population direction mean A -
    mean B and Sigma_delta = Sigma_A / |A| + Sigma_B / |B| the covariance of its sampling error; tr(S_W S_A) /
    |A| + tr(S_W S_B) / |B| estimates the second term without bias (A, B independent of the targets)."""
    s = sa.mean(axis=1) - sb.mean(axis=1)
    n_a, n_b = sa.shape[1], sb.shape[1]
    var = float(s.var(ddof=1))
    noise = _interaction_trace(sa) / n_a + _interaction_trace(sb) / n_b
    diff = float(s[:n_x].mean() - s[n_x:].mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        d = diff / np.sqrt(var) if var > 0 else float("nan")
        rel = 1.0 - noise / var if var > 0 else float("nan")
    bound = d_bound(n_x, len(s) - n_x)
    dc = float(np.clip(d / np.sqrt(max(rel, RELIABILITY_FLOOR)), -bound, bound)) if np.isfinite(d) else float("nan")
    return Attenuation(variance=var, noise=float(noise), reliability=float(rel), d=float(d), d_corrected=dc)


def _blocks(X, Y, A, B):
    X, Y, A, B = (_unit_rows(m, n) for m, n in ((X, "X"), (Y, "Y"), (A, "A"), (B, "B")))
    W = np.vstack([X, Y])
    return W @ A.T, W @ B.T, len(X)


@single_threaded
def attenuation(X, Y, A, B) -> Attenuation:
    """:class:`Attenuation` of a test's four matrices (one row per stimulus)."""
    return attenuation_from_blocks(*_blocks(X, Y, A, B))


def attribute_variance(sa: np.ndarray, sb: np.ndarray, n_x: int) -> float:
    """Unbiased estimate (floored at 0) of the variance that a new attribute sample adds to the difference of
    mean associations: (mu_X - mu_Y)' Sigma_delta (mu_X - mu_Y). The plug-in (x_bar - y_bar)' S_A (x_bar -
    y_bar) / |A| (the variance over a in A of mean_x cos(x, a) - mean_y cos(y, a), over |A|) also holds the
    targets' own sampling error, tr(S_A (S_X / |X| + S_Y / |Y|)) / |A|, which is subtracted."""
    out = 0.0
    n_y = sa.shape[0] - n_x
    for C in (sa, sb):
        k = C.shape[1]
        if k < 2:
            continue
        col = C[:n_x].mean(axis=0) - C[n_x:].mean(axis=0)
        out += (col.var(ddof=1) - _interaction_trace(C[:n_x]) / n_x - _interaction_trace(C[n_x:]) / n_y) / k
    return max(out, 0.0)


def inverted_shifts(dist: np.ndarray, in_x: np.ndarray, s: np.ndarray, n_x: int, tol: float) -> tuple[np.ndarray, int]:
    """For each partition of a permutation distribution: the shift theta of X's s(w) at which its statistic
    equals the observed one. ``dist``: the statistic sum s(X') - sum s(Y') of every partition (element 0 the
    observed one), ``in_x``: how many of X's stimuli each partition puts in X'. Returns (theta of the
    partitions that move some stimulus between X and Y, how many do not). Shifting X by theta moves the
    partition's difference of means by theta c, c = m / n_x - (n_x - m) / n_y, and the observed one's by
    theta, so they meet at theta = (D_obs - D) / (1 - c). A partition counted as a tie or above by the
    p-value (``dist >= dist[0] - tol``) gets theta <= 0, any other theta > 0, so the counts at theta = 0
    are the p-value's."""
    n = len(s)
    n_y = n - n_x
    total = float(s.sum())
    sum_x = (dist + total) / 2.0
    D = sum_x / n_x - (total - sum_x) / n_y
    same = in_x >= n_x - 0.5            # the observed split (sampled partitions may repeat it)
    c = in_x / n_x - (n_x - in_x) / n_y
    ge = dist >= dist[0] - tol
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = (D[0] - D) / (1.0 - c)
    theta = np.where(ge, np.minimum(theta, 0.0), np.maximum(theta, np.nextafter(0.0, 1.0)))
    return theta[~same], int(np.count_nonzero(same))


def shift_interval(theta: np.ndarray, n_same: int, level: float) -> tuple[float, float]:
    """The shifts not rejected by either one-sided permutation test at (1 - level) / 2: p_greater(t) =
    (n_same + #{theta <= t}) / K exceeds (1 - level) / 2 from the j-th smallest theta on, and p_less(t) =
    (n_same + #{theta >= t}) / K up to the j-th largest; +-inf where there are too few partitions."""
    K = len(theta) + n_same
    j = int(np.floor((1.0 - level) / 2.0 * K + 1e-9)) - n_same + 1
    if j < 1 or j > len(theta):
        return -np.inf, np.inf
    srt = np.sort(theta)
    return float(srt[j - 1]), float(srt[len(srt) - j])


@single_threaded
def inversion_ci(X, Y, A, B, *, null_pair, tolerance, ci: float = 0.95, s: np.ndarray | None = None) -> InversionCI:
    """The default confidence interval of the WEAT effect size (module docstring; docs/methods.md).

    ``null_pair(values, other)``: the permutation statistics sum v(X') - sum v(Y') of both vectors over the
    partitions of the test's p-value (observed first) and whether they are all of them; ``tolerance(s)``
    its tie tolerance; ``s``: the test's s(w), X then Y (default: from the cosine blocks).
    :func:`eatlas.stats.weat.weat` passes its own (``null_pair`` with its ``n_samples`` and ``seed``,
    ``tie_tolerance``, its s(w)) and reads its p-value off the same statistics (``null``), so the interval
    inverts the very test whose p it reports. It is then widened for the attribute sample and
    disattenuated."""
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    sa, sb, n_x = _blocks(X, Y, A, B)
    n = sa.shape[0]
    n_y = n - n_x
    att = attenuation_from_blocks(sa, sb, n_x)
    s = sa.mean(axis=1) - sb.mean(axis=1) if s is None else np.asarray(s, dtype=np.float64)
    indicator = np.zeros(n)
    indicator[:n_x] = 1.0
    dist, counts, exact = null_pair(s, indicator)
    dist = np.asarray(dist, dtype=np.float64)
    in_x = (np.asarray(counts, dtype=np.float64) + n_x) / 2.0     # the indicator's statistic is m - (n_x - m)
    theta, n_same = inverted_shifts(dist, in_x, s, n_x, tolerance(s))
    lo, hi = shift_interval(theta, n_same, ci)
    diff = float(s[:n_x].mean() - s[n_x:].mean())
    from .tdist import norm_ppf
    z = norm_ppf(0.5 + ci / 2.0)
    # the attribute sample's variance, and the standard deviation's (normal theory: var log sd = 1 / (2 (n - 2)))
    extra = z * z * (attribute_variance(sa, sb, n_x) + diff * diff / (2.0 * max(n - 2, 1)))
    wlo = diff - np.sqrt((diff - lo) ** 2 + extra) if np.isfinite(lo) else -np.inf
    whi = diff + np.sqrt((hi - diff) ** 2 + extra) if np.isfinite(hi) else np.inf
    if lo > 0 >= wlo:                       # the test puts the shift above 0: so does the interval
        wlo = lo
    if hi < 0 <= whi:
        whi = hi
    bound = d_bound(n_x, n_y)
    ss_within = float(np.square(s[:n_x] - s[:n_x].mean()).sum() + np.square(s[n_x:] - s[n_x:].mean()).sum())
    between = n_x * n_y / n

    def d_of(theta):
        """d of these targets had X been shifted to a difference theta, disattenuated, within +-bound."""
        if not np.isfinite(theta):
            return float(np.sign(theta) * bound)
        sd = np.sqrt((ss_within + between * theta * theta) / (n - 1))
        return float(np.clip(theta / sd / np.sqrt(max(att.reliability, RELIABILITY_FLOOR)), -bound, bound)) \
            if sd > 0 else float("nan")

    low, high = d_of(wlo), d_of(whi)
    return InversionCI(low=low, high=high, level=float(ci), method=INVERSION, n_partitions=int(len(dist)),
                       attenuation=att, shift_low=float(wlo), shift_high=float(whi), exact=bool(exact), null=dist,
                       papers_low=sample_d_of_shift(lo, s, n_x), papers_high=sample_d_of_shift(hi, s, n_x))


def sample_d_of_shift(theta: float, s: np.ndarray, n_x: int) -> float:
    """The sample d (Caliskan et al.'s, ddof=1) of the targets' s(w) had X been shifted to a difference of mean
    associations ``theta``: theta / sqrt((SS_within + n_x n_y / n theta^2) / (n - 1)). Increasing in theta, equal
    to the sample's own d at theta = D, and tending to +-sqrt(n (n - 1) / (n_x n_y)) as theta -> +-inf (the
    value an infinite end maps to)."""
    s = np.asarray(s, dtype=np.float64)
    n = len(s)
    n_y = n - n_x
    between = n_x * n_y / n
    if not np.isfinite(theta):
        return float(np.sign(theta) * np.sqrt((n - 1) / between))
    ss_within = float(np.square(s[:n_x] - s[:n_x].mean()).sum() + np.square(s[n_x:] - s[n_x:].mean()).sum())
    sd = np.sqrt((ss_within + between * theta * theta) / (n - 1))
    return float(theta / sd) if sd > 0 else float("nan")


def papers_interval(X, Y, A, B, *, null_pair, tolerance, ci: float = 0.95,
                    s: np.ndarray | None = None) -> tuple[float, float]:
    """The papers' interval: the permutation test inverted (step 1 of :func:`inversion_ci` alone, on the same
    partitions as its p-value), mapped to the sample d's scale by :func:`sample_d_of_shift`: no widening for
    the attribute sample, no disattenuation. It answers the papers' question (these attribute words, the
    targets exchangeable), contains the sample d, and excludes 0 on the side of the alternative exactly when
    that one-sided permutation p <= (1 - ci) / 2. Returns (low, high); :func:`inversion_ci` computes the same
    ends (``papers_low``, ``papers_high``) in its one pass."""
    r = inversion_ci(X, Y, A, B, null_pair=null_pair, tolerance=tolerance, ci=ci, s=s)
    return r.papers_low, r.papers_high


def interval_of(X, Y, A, B, *, ci: float, method: str, n_boot: int, seed: int):
    """The stimulus bootstrap's interval ``method`` ("percentile" or "BCa"; :func:`eatlas.stats.robust.bootstrap_ci`,
    ``n_boot`` resamples seeded from ``seed``); :func:`eatlas.stats.weat.weat` computes the inversion interval
    itself, with its p-value."""
    from .robust import bootstrap_ci
    return bootstrap_ci(X, Y, A, B, ci=ci, n_boot=n_boot, seed=seed, method=method)


def disagreement(p: float, alternative: str, low: float, high: float, *, alpha: float, level: float) -> str | None:
    """Where a p-value and a confidence interval of the same result disagree: "contains 0" when p < ``alpha`` but
    the interval contains 0; "excludes 0" when the interval excludes 0 on the side of the alternative (above 0
    for "greater", below for "less", either for "two-sided") but p is not below the level that matches a
    two-sided interval of ``level``, (1 - level) / 2 one-sided or 1 - level two-sided; else None. The
    inversion interval never disagrees in either way at ``alpha`` <= (1 - level) / 2 (docs/methods.md)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    if p < alpha and low <= 0 <= high:
        return "contains 0"
    above, below = low > 0, high < 0
    side = {"greater": above, "less": below}.get(alternative, above or below)
    matching = (1 - level) if alternative == "two-sided" else (1 - level) / 2
    if side and p >= matching + 1e-12:
        return "excludes 0"
    return None
