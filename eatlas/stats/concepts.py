"""The concepts' question: a p-value and an interval for the effect of the concepts, not of these words.

A WEAT's targets X, Y and attributes A, B are samples of words from four concepts. The permutation
test (:func:`eatlas.stats.weat.weat`) answers the papers' question: with *these* attribute words fixed,
are the target words exchangeable between X and Y? A reader of a bias table asks another one: would
other words of the same concepts show the same association? Then every cosine cos(w, a) belongs to a
crossed array, targets x attributes, whose rows and columns are both random samples (Judd, Westfall &
Kenny 2012, "Treating stimuli as a random factor in social psychology", JPSP 103(1):54-69,
doi:10.1037/a0028347; McCullagh 2000, Bernoulli 6(4):591-613; Owen 2007, Annals of Statistics
35(6):2629-2648).

Model. c(w, a) = m(g, h) + row_w(h) + col_a(g) + e(w, a), g the target concept of w (X or Y), h the
attribute concept of a (A or B); rows, columns and interactions independent with concept-specific
variances. The estimand is the concepts' difference of mean associations

    delta = E c(X, A) - E c(X, B) - E c(Y, A) + E c(Y, B)

and the concepts' d = delta / sigma, sigma^2 = sigma_w^2 + delta^2 / 4, where sigma_w^2 = (var_X S + var_Y S) / 2
is the within-concept variance of the *true* association S(w) = E_a c(w, a) - E_b c(w, b), the two target
concepts weighted equally: the standard deviation over X u Y of a design with as many words of X as of Y (as
Caliskan et al.'s d, whose denominator is the standard deviation over X u Y), so that d is a property of the
concepts and not of how many words a curator listed for each (with the design's shares n_x : n_y instead, the same
word pools had d 1.00 in one design and 0.85 in another). The sample d of Caliskan et al. estimates it with
attenuation, since each s(w) carries the attribute sample's noise (and, with unequal sets, the design's shares).

Words are the units. At a sentence level (SEAT's templates), a contextual-word level or any test expanded from
words, several rows of X, Y, A or B are made from one word: they are nested in their word, and the question is
about other *words* of the concepts, not other sentences of these words. Given each row's word (``words=`` of
:func:`concepts_test`, :func:`eatlas.weat`), the cosine array is first averaged over each (target word, attribute
word) cell, every word one unit whatever its number of sentences, and the crossed estimator below runs on that
word-level array. Treating the sentences as independent items instead counts the words' own variation once per
sentence: in the calibration study (docs/methods.md) that rejected a true null in 13-38% of tests with 5 or 14
templates a word, where the word-level array rejects in about 5%. The papers' permutation p and sample d stay as
the papers computed them (SEAT permutes sentences: that is its question).

The estimate D = mean_X s - mean_Y s is unbiased for delta, and its variance over new samples of all
four concepts is

    Var D = Var_X S / n_x + Var_Y S / n_y                   (which target words)
          + Var_a [col_a(X) - col_a(Y)] / n_a + same for B    (which attribute words)
          + sum over the four blocks of sigma_e^2 / (rows cols)  (their interaction, counted once)

estimated without bias by the mean squares of the array (:func:`concepts_variance`): the sample variance
of s over X, over n_x, already holds X's interaction terms; the variance over a of the column contrast
holds the interactions again, so their estimate (the double-centred block's mean square) is subtracted.
(The stimulus bootstrap resamples rows and columns independently and so counts the interaction twice;
the permutation test counts only the first line.) The test of delta = 0 is Welch's t with these
components and Satterthwaite's degrees of freedom (as Judd et al.'s crossed ANOVA does).

The interval of d is Fieller's for the ratio r = delta / sigma_w (Fieller 1954, "Some problems in interval
estimation", JRSS B 16(2):175-185): the values of r for which the same t-test does not reject D - r sigma_w_hat
= 0, where the spread of the targets' true associations, sigma_w, is itself estimated (sigma_w_hat^2 = the
within-concept variance of s minus the attribute sample's noise in it, without bias). Written in theta = r
sigma_w_hat, the set is

    (D - theta)^2 <= t^2 (V + nu theta^2),      nu = Var(sigma_w_hat^2) / (4 sigma_w^4) = Var(log sigma_w_hat)

(delta method), where nu is the scale's own error over new target words: normal theory for the two sample
variances of s, Var s^2 = 2 sigma^4 / (m - 1), so with equal sets and variances nu = 1 / (2 (n - 2) rho^2), rho
the reliability (:attr:`ConceptsVariance.reliability`): the less of s's spread is the targets' own, the wider.
The attribute words' part of that error is estimated too (the delete-one jackknife over A's and B's words of
(D, sigma_w_hat^2), in closed form: :attr:`ConceptsVariance.sigma_w2_var_attributes` and its covariance with D)
but left out of nu: another attribute sample mostly stretches or shrinks D and sigma_w together, which leaves d
where it was, and the calibration study found that adding it (with its covariance) left coverage as it was while
doubling the share of results that cannot be estimated at 8 words a set (docs/methods.md).

At theta = 0 the condition is the t-test's, so the interval contains 0 exactly when the two-sided p (``p_two_sided``)
>= 1 - level: the p-value and the interval answer one question and agree by construction, never by clipping. That
two-sided p is the one stored and printed as ``p_concepts`` beside the two-sided interval; the p against the run's
``alternative`` (``p``) is kept beside it (``p_concepts_one_sided``).
Each end theta maps to d by theta / sqrt(sigma_w_hat^2 + q theta^2), increasing in theta and within +-1 /
sqrt(q) (:func:`eatlas.stats.interval.d_bound`), so the estimate lies inside its interval. No convention
(:mod:`eatlas.stats.conventions`) enters here: a convention says how the *sample* statistic is computed, and
the concepts' d does not depend on it.

Not estimable. Where t^2 nu >= 1 (the spread of the targets' true associations is not distinguished from
its own sampling error: the attribute words' noise accounts for most of the spread of s, reliability near or
below 0) the set of theta is unbounded, and so is the concepts' d at these set sizes: :class:`ConceptsResult`
then has ``estimable=False``, ``d`` NaN, ``reason`` in words, and as ends the hull of the confidence set, which
reaches +-bound: (-bound, +bound) where the t-test does not reject delta = 0, else from the finite end on the side
of D to that side's bound (the three-decision reading of a two-sided test that rejects). Where sigma_w_hat^2 <= 0
that finite end is 0 itself, open: the interval then starts just above 0 (the smallest positive float). ``p``
(of delta = 0) is still defined, since a zero difference needs no scale.

Calibration (benchmarks/calibration_study.py, docs/methods.md): in models where X and Y are distinct concepts
at delta = 0 (Gaussians apart off the attribute axis, anisotropic t3 noise, GloVe neighbourhoods of the registry's
concepts, GloVe k-means clusters) and in exchangeable ones, p_concepts < 0.05 in about 5% and the interval
covers the population d in about 95%, where the papers' permutation p rejects in up to a third.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blas import single_threaded
from .cosine import unit_rows as _unit_rows

ALTERNATIVES = ("greater", "less", "two-sided")
SHARE = 0.5         # the weight of X's spread in the estimand's sigma_w^2 (and Y's, 1 - SHARE): equal, by definition
Q = SHARE * (1.0 - SHARE)       # the weight of delta^2 in the concepts' d's variance: 1/4
BOUND = 1.0 / float(np.sqrt(Q))     # the largest |d| of the estimand: 2


@dataclass(frozen=True)
class ConceptsVariance:
    """The crossed array's estimates (see the module docstring)."""
    diff: float             # D, the difference of mean associations
    variance: float         # unbiased estimate of Var D over new samples of all four concepts (floored at a tiny > 0)
    df: float               # Satterthwaite's degrees of freedom of ``variance``
    target_part: float      # var_X(s) / n_x + var_Y(s) / n_y
    attribute_part: float   # the attribute samples' part (interaction removed; floored at 0)
    sigma_w2: float         # within-concept variance of the true association S(w), design's shares (may be <= 0)
    ms_within: float        # within-concept variance of s(w) (ddof=1 in each), X and Y in the design's shares
    reliability: float      # sigma_w2 / ms_within: the share of the targets' spread that is not attribute noise
    sigma_w2_var_targets: float = 0.0       # the variance of sigma_w2 over new target words (normal theory)
    sigma_w2_var_attributes: float = 0.0    # ... and over new attribute words (jackknife over A's and B's words)
    sigma_w2_cov_attributes: float = 0.0    # its covariance with D over new attribute words (the same jackknife)


@dataclass(frozen=True)
class ConceptsResult:
    """The concepts' question answered whole: estimate, interval and p of one estimand."""
    d: float                # the concepts' d (NaN where not estimable)
    low: float              # its interval; where not estimable, the confidence set's hull, reaching +-bound
    high: float
    p: float                # p of delta = 0 (so d = 0) against ``alternative``, Welch-Satterthwaite t
    p_two_sided: float      # the same test two-sided: the interval excludes 0 exactly when it is < 1 - level
    level: float
    alternative: str
    estimable: bool
    reason: str | None      # why the concepts' d cannot be estimated here, in words (None when it can)
    diff: float             # D, the difference of mean associations, and its t interval D -+ t se (which needs
    diff_low: float         # no scale, so it is always finite; it excludes 0 exactly when the interval of d does)
    diff_high: float
    se: float               # sqrt of the variance estimate of D
    df: float
    reliability: float


def _block_ms(C: np.ndarray) -> float:
    """The interaction mean square of a two-way block (rows x cols, one observation a cell): the double-centred
    block's squared norm over (rows - 1)(cols - 1); 0 when either side has one row."""
    r, c = C.shape
    if r < 2 or c < 2:
        return 0.0
    Cc = C - C.mean(axis=0, keepdims=True) - C.mean(axis=1, keepdims=True) + C.mean()
    return float(np.square(Cc).sum() / ((r - 1) * (c - 1)))


def _interaction_loo(C: np.ndarray) -> np.ndarray:
    """The interaction mean square of block C (rows x cols) with each column left out in turn: the double-centred
    sum of squares is the scatter of the column-centred columns about their mean, and leaving column j out
    removes c / (c - 1) times its squared distance from that mean. Needs cols >= 3 (else zeros)."""
    r, c = C.shape
    if r < 2 or c < 3:
        return np.zeros(c)
    K = C - C.mean(axis=0, keepdims=True)
    dist = np.square(K - K.mean(axis=1, keepdims=True)).sum(axis=0)
    return (dist.sum() - c / (c - 1.0) * dist) / ((r - 1) * (c - 2))


def _sigma_w2_jackknife(sa: np.ndarray, sb: np.ndarray, n_x: int, share: float) -> tuple[float, float]:
    """The delete-one jackknife, over the attribute words of A and of B (two strata), of (D, sigma_w^2), sigma_w^2 =
    p (var_X s - noise_X) + (1 - p) (var_Y s - noise_Y): how much another sample of attribute words would move
    the estimated spread of the targets' true associations (its variance) and how that moves with D (their
    covariance). Closed form: leaving a_j out moves every s(w) by (mean_a c(w, a) - c(w, a_j)) / (|A| - 1) and
    each block's interaction mean square by :func:`_interaction_loo`. Returns (variance, covariance)."""
    s = sa.mean(axis=1) - sb.mean(axis=1)
    var = cov = 0.0
    for C, other, sign in ((sa, sb, 1.0), (sb, sa, -1.0)):
        k = C.shape[1]
        if k < 3:
            continue
        S = s[:, None] + sign * (C.mean(axis=1, keepdims=True) - C) / (k - 1)       # s(w) without word j, column j
        k_other = other.shape[1]
        theta = np.zeros(k)
        for rows, weight in ((slice(0, n_x), share), (slice(n_x, None), 1.0 - share)):
            ms_loo = _interaction_loo(C[rows])
            ms_other = _block_ms(other[rows])
            var_loo = S[rows].var(axis=0, ddof=1)
            theta += weight * (var_loo - ms_loo / (k - 1) - ms_other / k_other)
        diff = S[:n_x].mean(axis=0) - S[n_x:].mean(axis=0)
        var += (k - 1) / k * float(np.square(theta - theta.mean()).sum())
        cov += (k - 1) / k * float(((theta - theta.mean()) * (diff - diff.mean())).sum())
    return var, cov


def concepts_variance(sa: np.ndarray, sb: np.ndarray, n_x: int) -> ConceptsVariance:
    """:class:`ConceptsVariance` from the cosine blocks sa = cos(W, A), sb = cos(W, B), W the X rows then the Y
    rows."""
    sa = np.asarray(sa, dtype=np.float64)
    sb = np.asarray(sb, dtype=np.float64)
    n = sa.shape[0]
    n_y = n - n_x
    n_a, n_b = sa.shape[1], sb.shape[1]
    s = sa.mean(axis=1) - sb.mean(axis=1)
    sx, sy = s[:n_x], s[n_x:]
    diff = float(sx.mean() - sy.mean())
    vx = float(sx.var(ddof=1)) if n_x > 1 else 0.0
    vy = float(sy.var(ddof=1)) if n_y > 1 else 0.0
    # interaction mean squares of the four blocks
    ms = {("x", "a"): _block_ms(sa[:n_x]), ("y", "a"): _block_ms(sa[n_x:]),
          ("x", "b"): _block_ms(sb[:n_x]), ("y", "b"): _block_ms(sb[n_x:])}
    # components (coefficient * mean square, degrees of freedom) of the variance estimate, for Satterthwaite
    comps: list[tuple[float, float]] = [(vx / n_x, n_x - 1.0), (vy / n_y, n_y - 1.0)]
    attr_comps: list[tuple[float, float]] = []
    for key, C, k in (("a", sa, n_a), ("b", sb, n_b)):
        if k < 2:
            continue
        col = C[:n_x].mean(axis=0) - C[n_x:].mean(axis=0)
        attr_comps.append((float(col.var(ddof=1)) / k, k - 1.0))
        attr_comps.append((-ms[("x", key)] / (n_x * k), (n_x - 1.0) * (k - 1.0)))
        attr_comps.append((-ms[("y", key)] / (n_y * k), (n_y - 1.0) * (k - 1.0)))
    attribute_part = sum(c for c, _ in attr_comps)
    if attribute_part > 0:
        comps += attr_comps
    else:
        attribute_part = 0.0
    target_part = vx / n_x + vy / n_y
    variance = max(target_part + attribute_part, np.finfo(float).tiny)
    denom = sum(c * c / d for c, d in comps if d > 0)
    df = float(variance * variance / denom) if denom > 0 else float(max(n - 2, 1))
    df = max(df, 1.0)
    # the spread of the true associations within each concept: the variance of s minus its attribute noise, the two
    # concepts weighted equally (the estimand's sigma_w^2 = (var_X S + var_Y S) / 2: a property of the concepts,
    # whatever the shares of X and Y in a test's design)
    share = SHARE
    ms_within = float(share * vx + (1 - share) * vy)
    noise_x = ms[("x", "a")] / n_a + ms[("x", "b")] / n_b
    noise_y = ms[("y", "a")] / n_a + ms[("y", "b")] / n_b
    sigma_w2 = float(share * (vx - noise_x) + (1 - share) * (vy - noise_y))
    reliability = sigma_w2 / ms_within if ms_within > 0 else float("nan")
    # the sampling variance of sigma_w2: over new target words, normal theory for the two sample variances of s
    # (Var s^2 = 2 sigma^4 / (m - 1)); over new attribute words, the jackknife (no parametric form: it depends on
    # how the targets' and the attributes' spreads line up)
    var_t = 2.0 * (share * vx) ** 2 / max(n_x - 1, 1) + 2.0 * ((1 - share) * vy) ** 2 / max(n_y - 1, 1)
    var_a, cov_a = _sigma_w2_jackknife(sa, sb, n_x, share)
    return ConceptsVariance(diff=diff, variance=float(variance), df=df, target_part=float(target_part),
                            attribute_part=float(attribute_part), sigma_w2=float(sigma_w2),
                            ms_within=ms_within, reliability=float(reliability),
                            sigma_w2_var_targets=float(var_t), sigma_w2_var_attributes=float(var_a),
                            sigma_w2_cov_attributes=float(cov_a))


def _t_p(t: float, df: float, alternative: str) -> float:
    from .tdist import t_sf
    if alternative == "greater":
        return t_sf(t, df)
    if alternative == "less":
        return t_sf(-t, df)
    return min(1.0, 2.0 * t_sf(abs(t), df))


def concepts_from_blocks(sa: np.ndarray, sb: np.ndarray, n_x: int, *, ci: float = 0.95,
                         alternative: str = "greater") -> ConceptsResult:
    """:func:`concepts_test` on the cosine blocks (:func:`concepts_variance`)."""
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    from .tdist import t_ppf
    v = concepts_variance(sa, sb, n_x)
    se = float(np.sqrt(v.variance))
    p = _t_p(v.diff / se, v.df, alternative)
    p2 = p if alternative == "two-sided" else _t_p(v.diff / se, v.df, "two-sided")
    t = t_ppf(0.5 + ci / 2.0, v.df)
    q = Q
    rel = v.reliability
    nan = float("nan")

    bound = BOUND
    rejected = abs(v.diff) > t * se                  # the two-sided t-test at 1 - ci rejects delta = 0

    def not_estimable(reason: str, c: float) -> ConceptsResult:
        """The confidence set of d reaches +-bound: its hull, on the side the test decides where it rejects."""
        side = float(np.sign(v.diff))
        if not rejected:
            lo_d, hi_d = -bound, bound
        elif v.sigma_w2 > 0 and c > 1.0:
            # the finite root on D's side of (c - 1) theta^2 + b theta - (D^2 - t^2 V) = 0 (roots of both signs)
            b = 2.0 * v.diff
            disc = max(b * b + 4.0 * (c - 1.0) * (v.diff * v.diff - t * t * v.variance), 0.0)
            r = (-b + side * np.sqrt(disc)) / (2.0 * (c - 1.0))
            edge = float(r / np.sqrt(v.sigma_w2 + q * r * r))
            lo_d, hi_d = (edge, bound) if side > 0 else (-bound, edge)
        else:       # no scale at all: every d of D's sign, but not 0 itself (the open end just beside it)
            tiny = float(np.nextafter(0.0, 1.0))
            lo_d, hi_d = (tiny, bound) if side > 0 else (-bound, -tiny)
        dlo, dhi = (v.diff - t * se, v.diff + t * se)
        return ConceptsResult(d=nan, low=float(lo_d), high=float(hi_d), p=p, p_two_sided=p2, level=float(ci),
                              alternative=alternative,
                              estimable=False, reason=reason, diff=v.diff, diff_low=float(dlo), diff_high=float(dhi),
                              se=se, df=v.df, reliability=float(rel))

    if not (np.isfinite(rel) and v.sigma_w2 > 0):
        return not_estimable("the attribute words' own noise accounts for all of the spread of the target words' "
                             "associations, so the concepts' d has no scale at these set sizes", np.inf)
    # Var(log sigma_w_hat) = Var(sigma_w2_hat) / (4 sigma_w^4) over new target words (normal theory); the attribute
    # words' part is left out (module docstring: it mostly stretches D and sigma_w together)
    nu = v.sigma_w2_var_targets / (4.0 * v.sigma_w2 * v.sigma_w2)
    c = t * t * nu
    if c >= 1.0:
        return not_estimable(f"only {rel:.0%} of the spread of the target words' associations is more than the "
                             f"attribute words' noise, too little at these set sizes to bound the concepts' d", c)
    # (D - theta)^2 <= t^2 (V + nu theta^2): (1 - c) theta^2 - b theta + D^2 - t^2 V <= 0
    b = 2.0 * v.diff
    root = float(np.sqrt(max(b * b - 4.0 * (1.0 - c) * (v.diff * v.diff - t * t * v.variance), 0.0)))
    lo = (b - root) / (2.0 * (1.0 - c))
    hi = (b + root) / (2.0 * (1.0 - c))

    def d_of(theta: float) -> float:
        return float(theta / np.sqrt(v.sigma_w2 + q * theta * theta))

    return ConceptsResult(d=d_of(v.diff), low=d_of(lo), high=d_of(hi), p=p, p_two_sided=p2, level=float(ci),
                          alternative=alternative, estimable=True, reason=None, diff=v.diff,
                          diff_low=float(v.diff - t * se), diff_high=float(v.diff + t * se), se=se, df=v.df,
                          reliability=float(rel))


def word_blocks(sa: np.ndarray, sb: np.ndarray, n_x: int, words) -> tuple[np.ndarray, np.ndarray, int]:
    """The cosine blocks averaged over each (target word, attribute word) cell: one row per word of X then of Y,
    one column per word of A (of B), in the order of first appearance, each word one unit whatever its number of
    rows. ``words``: (wx, wy, wa, wb), one label per row of X, Y, A, B (checked by :func:`check_words`)."""
    wx, wy, wa, wb = words

    def groups(labels) -> np.ndarray:
        ids: dict = {}
        return np.array([ids.setdefault(w, len(ids)) for w in labels])

    def mean_rows(M: np.ndarray, g: np.ndarray) -> np.ndarray:
        out = np.zeros((g.max() + 1, M.shape[1]))
        np.add.at(out, g, M)
        return out / np.bincount(g)[:, None]

    gx, gy = groups(wx), groups(wy)
    rows = [mean_rows(M, g) for M, g in ((sa[:n_x], gx), (sa[n_x:], gy))], \
        [mean_rows(M, g) for M, g in ((sb[:n_x], gx), (sb[n_x:], gy))]
    A = mean_rows(np.vstack(rows[0]).T, groups(wa)).T
    B = mean_rows(np.vstack(rows[1]).T, groups(wb)).T
    return A, B, int(gx.max() + 1)


def check_words(words, sizes: tuple[int, int, int, int]) -> tuple | None:
    """``words`` as (wx, wy, wa, wb) lists, or None; refused (ValueError naming the argument and the row) when a list's
    length is not its matrix's rows, or a label is shared between X and Y or between A and B."""
    if words is None:
        return None
    from ..errors import EatlasError

    names = ("wx", "wy", "wa", "wb")
    if not isinstance(words, (tuple, list)) or len(words) != 4:
        raise EatlasError("words= must be four sequences (wx, wy, wa, wb): the word each row of X, Y, A and B was "
                          "made from", field="words", hint="words=(wx, wy, wa, wb), or None for one row a unit")
    out = []
    for name, role, w, n in zip(names, "XYAB", words, sizes):
        if w is None:
            w = [("row", role, k) for k in range(n)]        # one row a unit
        w = list(w)
        if len(w) != n:
            raise EatlasError(f"words[{names.index(name)}] ({name}) has {len(w)} label(s) for the {n} row(s) of "
                              f"{role}", field=f"words.{name}",
                              hint=f"give one label per row of {role}: the word it was made from")
        out.append(w)
    for (i, j) in ((0, 1), (2, 3)):
        other = set(map(_hashable, out[j]))
        for row, label in enumerate(out[i]):
            if _hashable(label) in other:
                raise EatlasError(f"label {label!r} (row {row} of {'XYAB'[i]}) is also a label of {'XYAB'[j]}: a word "
                                  f"cannot be a unit of both {'XYAB'[i]} and {'XYAB'[j]}",
                                  field=f"words.{names[i]}",
                                  hint=f"label the rows of {'XYAB'[i]} and {'XYAB'[j]} apart (e.g. prefix each with "
                                       "its role) when one word stands in both sets")
    return tuple(out)


def _hashable(label):
    return tuple(label) if isinstance(label, list) else label


@single_threaded
def concepts_test(X, Y, A, B, *, ci: float = 0.95, alternative: str = "greater", words=None) -> ConceptsResult:
    """The concepts' question for a test's four matrices (one row per stimulus): the concepts' d with its
    interval at level ``ci``, the p-value of d = 0 against ``alternative`` (``p``) and two-sided (``p_two_sided``,
    the test the interval inverts) (module docstring). ``words``: (wx, wy, wa, wb), the word each row was made from
    (sentences of one word are one unit); None: each row is its own unit."""
    X, Y, A, B = (_unit_rows(m, n) for m, n in ((X, "X"), (Y, "Y"), (A, "A"), (B, "B")))
    words = check_words(words, (len(X), len(Y), len(A), len(B)))
    W = np.vstack([X, Y])
    sa, sb, n_x = W @ A.T, W @ B.T, len(X)
    if words is not None:
        sa, sb, n_x = word_blocks(sa, sb, n_x, words)
    if min(n_x, sa.shape[0] - n_x) < 2:
        raise ValueError("the concepts' question needs at least 2 words in each target set")
    return concepts_from_blocks(sa, sb, n_x, ci=ci, alternative=alternative)
