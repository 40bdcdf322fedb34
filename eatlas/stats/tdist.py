"""Student's t and the normal distribution's quantile, without importing scipy.special.

The concepts' answer needs three numbers a test: a t tail probability, a t quantile and (the papers'
interval) a normal quantile. ``scipy.special`` gives them, but importing it costs about 0.2 s (it imports
scipy's array-API layer, which walks numpy's namespace), a sixth of a warm re-run of one test; a run whose
statistics take 0.04 s should not pay that. So:

- the tail of Student's t is the regularized incomplete beta function, ``P(T > t) = I_x(df/2, 1/2) / 2`` with
  ``x = df / (df + t^2)`` for ``t >= 0`` (Abramowitz & Stegun 26.7.1), computed by mpmath's ``betainc`` at
  30 significant digits (mpmath: pure Python, 0.03 s to import);
- its quantile is found by mpmath's bracketing root finder (Illinois) on that tail, so it inverts exactly the
  function that gives the p (an interval and its p agree at the boundary);
- the normal quantile is the standard library's ``statistics.NormalDist.inv_cdf`` (Wichura's AS 241, accurate to
  double precision).

``tests/test_tdist.py`` checks each against scipy.special (stdtr, stdtrit, ndtri) over a grid of df, including
fractional ones (the concepts' Satterthwaite df is not an integer).
"""
from __future__ import annotations

import math
from statistics import NormalDist

DPS = 30        # mpmath's working precision (decimal digits): the float result is then exact to its last bit or so


def _upper_tail(t, df):
    """P(T > t) for t >= 0, as an mpmath number. mpmath gives up (ValueError or NoConvergence) only where the
    tail is far below the smallest double (e.g. df 1e7 and t 60, about exp(-1,800)): 0 there
    (tests/test_tdist.py checks the cases next to it against scipy)."""
    import mpmath
    try:
        return mpmath.betainc(df / 2, mpmath.mpf(1) / 2, 0, df / (df + t * t), regularized=True) / 2
    except (ValueError, mpmath.libmp.NoConvergence):   # NoConvergence is not a ValueError
        return mpmath.mpf(0)


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` > 0 degrees of freedom (scipy: ``stdtr(df, -t)``)."""
    import mpmath
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return float("nan")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if math.isinf(df):          # the normal limit
        return 0.5 * math.erfc(t / math.sqrt(2.0))
    with mpmath.workdps(DPS):
        half = _upper_tail(mpmath.mpf(t), mpmath.mpf(df))
        return float(half if t >= 0 else 1 - half)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) (scipy: ``stdtr(df, t)``)."""
    return t_sf(-t, df)


def t_ppf(p: float, df: float) -> float:
    """The t with P(T <= t) = ``p`` (scipy: ``stdtrit(df, p)``)."""
    import mpmath
    if math.isnan(p) or math.isnan(df) or df <= 0 or not 0 <= p <= 1:
        return float("nan")
    if p == 0.5:
        return 0.0
    if p in (0.0, 1.0):
        return -math.inf if p == 0 else math.inf
    if math.isinf(df):
        return norm_ppf(p)
    if p < 0.5:                 # by symmetry, from the upper tail p itself (1 - p would round a small p away)
        return -_upper_quantile(mpmath.mpf(p), df)
    return _upper_quantile(1 - mpmath.mpf(p), df)


def _upper_quantile(target, df: float) -> float:
    """The t > 0 whose upper tail is ``target`` (< 1/2)."""
    import mpmath
    with mpmath.workdps(DPS):
        df_ = mpmath.mpf(df)
        # Newton's method on the tail (its derivative is minus the density), kept inside a bracket that shrinks
        # at every step (a step leaving it bisects): the quantile inverts exactly the tail that gives the p
        log_c = mpmath.loggamma((df_ + 1) / 2) - mpmath.loggamma(df_ / 2) - mpmath.log(df_ * mpmath.pi) / 2
        # start from the Cornish-Fisher expansion of the t quantile in 1/df (Abramowitz & Stegun 26.7.5)
        z = -NormalDist().inv_cdf(float(target))
        start = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df)
        lo, hi = mpmath.mpf(0), mpmath.inf
        t = mpmath.mpf(start if math.isfinite(start) and start > 0 else max(z, 1.0))
        for _ in range(200):
            excess = _upper_tail(t, df_) - target
            if excess > 0:
                lo = t
            else:
                hi = t
            density = mpmath.exp(log_c - (df_ + 1) / 2 * mpmath.log1p(t * t / df_))
            nxt = t + excess / density if density > 0 else mpmath.nan
            if not lo < nxt < hi:       # outside the bracket: halve it, or go further out while it is open
                nxt = (lo + hi) / 2 if hi != mpmath.inf else 4 * t
            if abs(nxt - t) <= abs(t) * mpmath.mpf(10) ** (-DPS + 8):
                return float(nxt)
            t = nxt
        return float(t)


def norm_ppf(p: float) -> float:
    """The standard normal quantile (scipy: ``ndtri(p)``)."""
    if math.isnan(p) or not 0 <= p <= 1:
        return float("nan")
    if p in (0.0, 1.0):
        return -math.inf if p == 0 else math.inf
    return NormalDist().inv_cdf(p)
