"""WEAT / SEAT statistics over embedding matrices (one row per stimulus).

Effect size as Caliskan et al. (2017) with the sample standard deviation (ddof=1); p-value as
May et al. (2019) Appendix A: a one-sided permutation test over equal-size re-partitions of
X u Y, exact when there are at most ``n_samples`` partitions, otherwise ``n_samples - 1`` random
partitions plus the observed one, ties counted (>=). A tie is judged within ``tie_tolerance(s)``
(1e-12 x max|s| x n): the same partition sum computed in another order can differ in its last bits,
and an exact tie (e.g. X == Y, or duplicated vectors) must not be lost to rounding.

Exact enumerations (and, for up to 64 stimuli, samples the fast sampler cannot take) are held as a
0/1 matrix so that every partition's statistic is one matrix-vector product, cached per (|X|, |Y|,
n_samples, seed). Sampled partitions are drawn as random bit masks kept when they hold exactly |X|
stimuli (eatlas.stats.subsets: exactly uniform, chunked, bounded memory); very unequal |X| and |Y|, where
few masks would be kept, draw float keys in chunks of rows scaled to the set size instead.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from . import conventions, subsets
from .blas import single_threaded
from .cosine import unit_rows as _unit_rows


@dataclass(frozen=True)
class WeatResult:
    effect_size: float
    p_value: float
    exact: bool
    n_partitions: int
    statistic: float
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    parametric: bool = False
    alternative: str = "greater"
    ci_low: float | None = None       # the interval of ``ci_method`` (see CI_METHODS): the concepts' (default),
    ci_high: float | None = None      # the papers', or the bootstrap's; None when ci=None
    ci_level: float | None = None
    n_boot: int | None = None         # bootstrap resamples (None for the concepts' and the papers' intervals)
    ci_method: str | None = None      # concepts | permutation | percentile | BCa
    d_corrected: float | None = None  # d / sqrt(reliability): the older disattenuated d (eatlas.stats.interval)
    reliability: float | None = None  # 1 - the attribute sample's noise / var(s(w)) over X u Y
    convention: str = "caliskan"      # eatlas.stats.conventions: d's denominator and how the p counts
    # The concepts' question (eatlas.stats.concepts: targets and attributes both samples of their concepts),
    # answered whole whatever ``ci_method``: its p (two-sided, and against ``alternative``), its d, its interval.
    p_concepts: float | None = None   # two-sided: the test the concepts' interval inverts
    p_concepts_one_sided: float | None = None     # the same test against ``alternative``
    d_concepts: float | None = None   # None where not estimable at these set sizes
    concepts_low: float | None = None     # the interval (not estimable: the hull of the confidence set, to +-bound)
    concepts_high: float | None = None
    concepts_estimable: bool | None = None
    concepts_reason: str | None = None    # why not estimable, in words
    # The papers' question (these attribute words; targets exchangeable): the permutation test inverted, on the
    # sample d's scale (eatlas.stats.interval.papers_interval); it contains effect_size.
    papers_low: float | None = None
    papers_high: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@single_threaded
def association(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """s(w, A, B) = mean cos(w, a) - mean cos(w, b) for every row w of W."""
    W, A, B = _unit_rows(W, "W"), _unit_rows(A, "A"), _unit_rows(B, "B")
    return (W @ A.T).mean(axis=1) - (W @ B.T).mean(axis=1)


def effect_size_from_s(s_x: np.ndarray, s_y: np.ndarray) -> float:
    s_all = np.concatenate([s_x, s_y])
    return float((s_x.mean() - s_y.mean()) / s_all.std(ddof=1))


MATRIX_MAX_COLUMNS = 64     # above this, sampled partitions are drawn in chunks instead of cached
_CHUNK_CELLS = 1 << 20      # float keys per chunk of the fallback sampler: 8 MiB, whatever the set size
# Memory one permutation sample may take at most: its statistic in the null distribution (a float64) and, where
# the partitions are kept as a matrix (exact tests, or up to MATRIX_MAX_COLUMNS stimuli), its row of the 0/1
# matrix and of the subsets' indices. `--n-samples` is bounded by the machine's memory at this rate.
BYTES_PER_SAMPLE = 8 + 2 * 8 * MATRIX_MAX_COLUMNS


def _chunk_rows(n: int) -> int:
    return max(1, _CHUNK_CELLS // max(n, 1))


@lru_cache(maxsize=8)
def partition_matrix(n_x: int, n_y: int, n_samples: int, seed: int) -> tuple[np.ndarray, bool]:
    """0/1 matrix (partitions x (n_x+n_y)); row 0 is the observed partition (first n_x are X).

    Exact enumeration when C(n_x+n_y, n_x) <= n_samples, else n_samples-1 uniform random
    partitions (each a subset of size n_x drawn without replacement) after the observed one.
    """
    n = n_x + n_y
    total = math.comb(n, n_x)
    if total <= n_samples:
        combos = np.fromiter(
            itertools.chain.from_iterable(itertools.combinations(range(n), n_x)),
            dtype=np.int64, count=total * n_x,
        ).reshape(total, n_x)
        exact = True
    else:
        combos = np.vstack([np.arange(n_x)[None, :], _random_subsets(n, n_x, n_samples - 1, seed)])
        exact = False
    m = np.zeros((combos.shape[0], n), dtype=np.float64)
    np.put_along_axis(m, combos, 1.0, axis=1)
    m.setflags(write=False)
    return m, exact


def _random_subsets(n: int, k: int, count: int, seed: int, start: int = 0) -> np.ndarray:
    """``count`` uniform random k-subsets of range(n) (rows), reproducible from ``seed``.

    Rows ``start .. start+count`` of the same stream, so chunked draws equal one big draw.
    """
    out = np.empty((count, k), dtype=np.int64)
    chunk = _chunk_rows(n)
    for c0 in range(0, count, chunk):
        rows = min(chunk, count - c0)
        rng = np.random.default_rng([seed, (start + c0) // chunk])
        keys = rng.random((rows, n))
        out[c0:c0 + rows] = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < n else np.arange(n)
    return out


def null_distribution(s: np.ndarray, n_x: int, *, n_samples: int, seed: int) -> tuple[np.ndarray, bool]:
    """Test statistic sum s(X') - sum s(Y') over the partitions; element 0 is the observed one."""
    n = len(s)
    total = s.sum()
    exact = math.comb(n, n_x) <= n_samples
    if not exact and subsets.usable(n, n_x):
        dist = np.empty(n_samples)
        dist[0] = 2.0 * s[:n_x].sum() - total
        dist[1:] = 2.0 * subsets.sampled_sums(s, n_x, n_samples - 1, int(seed)) - total
        return dist, False
    if exact or n <= MATRIX_MAX_COLUMNS:
        m, exact = partition_matrix(n_x, n - n_x, int(n_samples), int(seed))
        return 2.0 * (m @ s) - total, exact
    dist = np.empty(n_samples)
    dist[0] = 2.0 * s[:n_x].sum() - total
    chunk = _chunk_rows(n)
    for c0 in range(0, n_samples - 1, chunk):
        rows = min(chunk, n_samples - 1 - c0)
        idx = _random_subsets(n, n_x, rows, seed, start=c0)
        dist[1 + c0:1 + c0 + rows] = 2.0 * s[idx].sum(axis=1) - total
    return dist, False


def null_pair(s: np.ndarray, other: np.ndarray, n_x: int, *, n_samples: int,
              seed: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`null_distribution` of ``s`` and of ``other`` over the same partitions (the inversion interval's
    X-membership counts, eatlas.stats.interval): one draw of the sampled partitions serves both."""
    n = len(s)
    exact = math.comb(n, n_x) <= n_samples
    if not exact and subsets.usable(n, n_x):
        out = [np.empty(n_samples), np.empty(n_samples)]
        for v, o in zip((s, other), out):
            o[0] = 2.0 * v[:n_x].sum() - v.sum()
        at = 1      # the masks of subsets.sampled_sums, each chunk summed over both vectors (rows: (s, other))
        for ab in subsets._mask_chunks(n, n_x, n_samples - 1, int(seed), work=lambda m: np.column_stack(
                [subsets.masked_sums(m, s), subsets.masked_sums(m, other)])):
            out[0][at:at + len(ab)] = 2.0 * ab[:, 0] - s.sum()
            out[1][at:at + len(ab)] = 2.0 * ab[:, 1] - other.sum()
            at += len(ab)
        return out[0], out[1], False
    dist, exact = null_distribution(s, n_x, n_samples=n_samples, seed=seed)
    return dist, null_distribution(other, n_x, n_samples=n_samples, seed=seed)[0], exact


TIE_RTOL = 1e-12


def tie_tolerance(s: np.ndarray) -> float:
    """Absolute tolerance within which two partition statistics of ``s`` count as tied: rounding of a
    sum of n terms is far below it, any real difference of the statistics far above it."""
    s = np.asarray(s, dtype=np.float64)
    return float(TIE_RTOL * np.abs(s).max() * len(s)) if s.size else 0.0


ALTERNATIVES = ("greater", "less", "two-sided")


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    return alternative


def p_from_null(dist: np.ndarray, tol: float, alternative: str = "greater", parametric: bool = False) -> float:
    """p of the observed statistic ``dist[0]`` against its permutation distribution ``dist``.

    "greater" (Caliskan et al., May et al.): share of partitions with a statistic >= the observed one;
    "less": <=; "two-sided": twice the smaller one-sided p, capped at 1 (the definition of
    scipy.stats.permutation_test). Ties are judged within ``tol``. ``parametric``: the same tails of a
    normal curve fitted to ``dist`` (mean, std with ddof=1) instead of the counts.
    """
    check_alternative(alternative)
    observed = dist[0]
    if parametric:
        from scipy import stats as _stats  # imported here: validate and list need no scipy
        loc, scale = dist.mean(), dist.std(ddof=1)
        greater = float(_stats.norm.sf(observed, loc=loc, scale=scale))
        less = float(_stats.norm.cdf(observed, loc=loc, scale=scale))
    else:
        n = dist.shape[0]
        greater = float(np.count_nonzero(dist >= observed - tol) / n) if alternative != "less" else None
        less = float(np.count_nonzero(dist <= observed + tol) / n) if alternative != "greater" else None
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(1.0, 2.0 * min(greater, less))


def permutation_p(s_x: np.ndarray, s_y: np.ndarray, *, n_samples: int = 100_000, seed: int = 0,
                  parametric: bool = False, alternative: str = "greater") -> tuple[float, bool, int, float]:
    """p of the test statistic sum s(X) - sum s(Y) (one-sided "greater" by default, see
    :func:`p_from_null`); returns (p, exact, n_partitions, stat)."""
    check_alternative(alternative)
    s = np.concatenate([s_x, s_y]).astype(np.float64)
    dist, exact = null_distribution(s, len(s_x), n_samples=int(n_samples), seed=int(seed))
    p = p_from_null(dist, tie_tolerance(s), alternative, parametric)
    return p, exact, int(dist.shape[0]), float(dist[0])


P_METHODS = ("permutation", "authors")

# The intervals a WEAT result can carry as its ci_low/ci_high (``ci_method``), the first the default:
#   concepts: the concepts' question (eatlas.stats.concepts), an interval of the concepts' d (d_concepts);
#   permutation: the papers' question, the permutation test inverted (eatlas.stats.interval.papers_interval), an
#                interval of the sample d (effect_size);
#   percentile, BCa: the stimulus bootstrap's (eatlas.stats.robust), of the sample d.
# A result stores the concepts' and the papers' intervals whichever is chosen (concepts_*, papers_*).
CONCEPTS = "concepts"
PERMUTATION = "permutation"
CI_METHODS = (CONCEPTS, PERMUTATION, "percentile", "BCa")
RETIRED_CI_METHODS = ("inversion",)     # stored by earlier versions: the inversion widened and disattenuated
# Which p a run's Holm mark and notes use (--p-rule): the concepts' (p_concepts, the default) or the papers'
# (p_value). Both are stored.
P_RULES = ("concepts", "papers")


def authors_normal_p(dist: np.ndarray) -> float:
    """Wolfe et al.'s ML-EAT p-value (wolferobert3/ml-eat mleat.py, ``compute_p_value``): a normal
    curve fitted to the permutation distribution (mean, std with ddof=1), and the *smaller* of its
    two tails at the observed statistic ``dist[0]``: ``min(cdf, 1 - cdf)``, whatever the direction."""
    dist = np.asarray(dist, dtype=np.float64)
    from scipy import stats as _stats
    c = float(_stats.norm.cdf(dist[0], loc=dist.mean(), scale=dist.std(ddof=1)))
    return min(c, 1.0 - c)


@single_threaded
def weat(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, *, ci: float | None = 0.95,
         n_boot: int = 10_000, alternative: str = "greater", n_samples: int = 100_000, seed: int = 0,
         parametric: bool = False, ci_method: str = CONCEPTS, convention: str = "caliskan",
         words: tuple[Sequence[Hashable] | None, Sequence[Hashable] | None, Sequence[Hashable] | None,
                      Sequence[Hashable] | None] | None = None) -> WeatResult:
    """The WEAT (word) / SEAT (sentence) test on embedding matrices, one row per stimulus: both questions.

    The papers' question (these attribute words; targets exchangeable): ``effect_size`` (Caliskan et al.'s sample
    d), ``p_value`` (the permutation test, ``alternative`` "greater" by default as Caliskan et al. and May et al.,
    "less" or "two-sided", see :func:`p_from_null`) and ``papers_low``/``papers_high``, that test inverted on the
    sample d's scale (:func:`eatlas.stats.interval.papers_interval`, on the same partitions). The concepts'
    question (targets and attributes both samples of their concepts; :mod:`eatlas.stats.concepts`):
    ``p_concepts``, ``d_concepts`` and its interval ``concepts_low``/``concepts_high``, or words
    (``concepts_reason``) where the concepts' d is not estimable at these set sizes.

    ``ci``: the intervals' level (``None``: no interval; ``p_concepts`` and ``d_concepts`` are still given, the
    latter where estimable at 0.95). ``ci_method`` picks which interval is ``ci_low``/``ci_high``: "concepts"
    (default), "permutation" (the papers'), or the stimulus bootstrap's "percentile" or "BCa"
    (:func:`eatlas.stats.robust.bootstrap_ci`, ``n_boot`` resamples seeded from ``seed``). ``convention``: whose
    sample d and papers' p (:mod:`eatlas.stats.conventions`: "caliskan", the default, Caliskan et al.'s and
    sent-bias's; "weathub", "mleat", "wefe"; see :func:`_convention_p`): it changes how the sample statistic is
    computed (the sample d and the intervals of it are rescaled to its denominator,
    :func:`eatlas.stats.conventions.rescale`), never the concepts' answer, whose estimand has no ddof.
    ``d_corrected`` and ``reliability`` (:func:`eatlas.stats.interval.attenuation`) are the older disattenuation,
    kept as they were.

    ``words``: ``(wx, wy, wa, wb)``, one label per row of X, Y, A and B, the word the row was made from (a sentence
    of a SEAT template, a contextual occurrence): the concepts' answer then takes each word's rows as one unit
    (:mod:`eatlas.stats.concepts`, "Words are the units"); ``None`` (default) keeps one row a unit. A label list
    whose length is not its matrix's rows, or a label shared between X and Y (or A and B), is refused before
    anything is computed. The papers' p and sample d never use it.

    ``p_concepts`` is two-sided, the test the concepts' interval inverts (the interval excludes 0 exactly when
    ``p_concepts`` < 1 - ``ci``); ``p_concepts_one_sided`` is the same test against ``alternative``.

    Example: a SEAT-like test, each word put into two templates (rows), the words as the units::

        import numpy as np, eatlas
        rng = np.random.default_rng(0)
        X, Y, A, B = (rng.normal(size=(16, 50)) for _ in range(4))        # 8 words x 2 sentences each
        wx, wy = [f"x{k // 2}" for k in range(16)], [f"y{k // 2}" for k in range(16)]
        wa, wb = [f"a{k // 2}" for k in range(16)], [f"b{k // 2}" for k in range(16)]
        r = eatlas.weat(X, Y, A, B, words=(wx, wy, wa, wb), n_samples=10_000)
        r.effect_size, r.p_value                # the papers' answer, over sentences
        r.d_concepts, r.p_concepts, (r.concepts_low, r.concepts_high)   # the concepts', over words
    """
    if n_samples < 2:
        raise ValueError("n_samples must be at least 2")
    check_alternative(alternative)
    conv = conventions.check(convention, alternative=alternative, parametric=parametric)
    if ci is not None and not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1) or None, got {ci}")
    if ci is not None and n_boot < 100:
        raise ValueError(f"n_boot must be at least 100, got {n_boot}")
    if ci is not None and ci_method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {', '.join(CI_METHODS)}, got {ci_method!r}")
    X, Y, A, B = (np.asarray(v) for v in (X, Y, A, B))
    from .concepts import check_words
    words = check_words(words, (len(X), len(Y), len(A), len(B)))
    s_x, s_y = association(X, A, B), association(Y, A, B)
    if len(s_x) + len(s_y) < 3:
        raise ValueError("X and Y together need at least 3 stimuli for a sample standard deviation")
    es = effect_size_from_s(s_x, s_y) if conv.ddof == 1 else conventions.effect_size(s_x, s_y, conv.ddof)
    from .interval import attenuation, interval_of
    s = np.concatenate([s_x, s_y]).astype(np.float64)
    boot = None
    if ci is not None and ci_method not in (CONCEPTS, PERMUTATION):
        # the bootstrap runs beside the permutation test (eatlas.stats.blas.beside)
        from .blas import beside
        boot = beside(interval_of, X, Y, A, B, ci=ci, method=ci_method, n_boot=n_boot, seed=seed)
    papers = None
    if ci is not None:
        # the papers' interval inverts this very test: one pass over its partitions gives the p-value and the interval
        from .interval import inversion_ci
        inv = inversion_ci(X, Y, A, B, ci=ci, s=s,
                           null_pair=lambda v, o: null_pair(v, o, len(X), n_samples=int(n_samples), seed=int(seed)),
                           tolerance=tie_tolerance)
        dist = inv.null
        p = p_from_null(dist, tie_tolerance(s), alternative, parametric)
        exact, n_part, stat = inv.exact, int(dist.shape[0]), float(dist[0])
        papers = (inv.papers_low, inv.papers_high)
    else:
        p, exact, n_part, stat = permutation_p(s_x, s_y, n_samples=n_samples, seed=seed, parametric=parametric,
                                               alternative=alternative)
    if conv.name != conventions.DEFAULT:
        p, exact, n_part, stat = _convention_p(s_x, s_y, conv, n_samples=n_samples, seed=seed,
                                               alternative=alternative)
    att = attenuation(X, Y, A, B)
    from .concepts import concepts_test
    units = (len(set(map(str, words[0]))), len(set(map(str, words[1])))) if words is not None else (len(X), len(Y))
    con = concepts_test(X, Y, A, B, ci=0.95 if ci is None else ci, alternative=alternative, words=words) \
        if min(units) >= 2 else None

    def scaled(v):      # d of another denominator is d (ddof=1) times a factor of |X| + |Y| alone (every resample
        return v if v is None else conventions.rescale(v, len(s_x) + len(s_y), ddof=conv.ddof)   # keeps the sizes)
    out = dict(d_corrected=scaled(att.d_corrected), reliability=att.reliability)
    if con is not None:
        out.update(p_concepts=con.p_two_sided, p_concepts_one_sided=con.p, d_concepts=con.d if con.estimable else None,
                   concepts_estimable=bool(con.estimable), concepts_reason=con.reason)
        if ci is not None:
            out.update(concepts_low=con.low, concepts_high=con.high)
    if papers is not None:
        out.update(papers_low=scaled(papers[0]), papers_high=scaled(papers[1]))
    if ci is not None:
        if ci_method == CONCEPTS:
            low, high = (out.get("concepts_low"), out.get("concepts_high"))
        elif ci_method == PERMUTATION:
            low, high = out["papers_low"], out["papers_high"]
        else:
            b = boot.result()
            low, high = scaled(b.low), scaled(b.high)
            out.update(n_boot=getattr(b, "n_boot", None))
        out.update(ci_low=low, ci_high=high, ci_level=float(ci), ci_method=ci_method)
    return WeatResult(effect_size=es, p_value=p, exact=exact, n_partitions=n_part, statistic=stat,
                      n_x=len(X), n_y=len(Y), n_a=len(A), n_b=len(B), parametric=parametric,
                      alternative=alternative, convention=conv.name, **out)


def _convention_p(s_x: np.ndarray, s_y: np.ndarray, conv: conventions.Convention, *, n_samples: int, seed: int,
                  alternative: str) -> tuple[float, bool, int, float]:
    """(p, exact, n_partitions, statistic) of a convention other than the default (eatlas.stats.conventions):

    * "permutation-gt" (WEATHub): the share of partitions whose statistic is larger than the observed one
      (:func:`eatlas.stats.conventions.p_strict`), over every partition when they number at most ``n_samples``,
      else over ``n_samples`` seeded random ones (the observed one not added);
    * "normal-smaller-tail" (ML-EAT): :func:`authors_normal_p` on the permutation distribution of the default;
    * "pooled-resampling" (WEFE): :func:`eatlas.stats.conventions.p_pooled_resampling`, ``n_samples``
      resamples, never exact.
    """
    s = np.concatenate([s_x, s_y]).astype(np.float64)
    n_x, tol = len(s_x), tie_tolerance(s)
    if conv.p_rule == "pooled-resampling":
        p, stat = conventions.p_pooled_resampling(s_x, s_y, tol, n_resamples=int(n_samples), seed=int(seed),
                                                  alternative=alternative)
        return p, False, int(n_samples), stat
    if conv.p_rule == "normal-smaller-tail":
        dist, exact = null_distribution(s, n_x, n_samples=int(n_samples), seed=int(seed))
        return authors_normal_p(dist), exact, int(dist.shape[0]), float(dist[0])
    if conv.p_rule == "permutation-gt":
        exact = math.comb(len(s), n_x) <= n_samples
        # sampled: the observed partition first, then n_samples random ones (the same stream as the default's)
        dist, exact = null_distribution(s, n_x, n_samples=int(n_samples) + (0 if exact else 1), seed=int(seed))
        p, counted = conventions.p_strict(dist, tol, alternative, exact=exact)
        return p, exact, counted, float(dist[0])
    raise ValueError(f"no p-value rule {conv.p_rule!r}")


def holm(p_values: np.ndarray | list[float] | tuple[float, ...], alpha: float = 0.01) -> np.ndarray:
    """Holm-Bonferroni rejections (bool array) at family-wise level ``alpha`` (eatlas.stats.multitest: those of
    statsmodels' multipletests(method='holm'), without importing statsmodels and scipy.stats)."""
    from .multitest import holm as holm_reject

    return holm_reject(p_values, alpha)
