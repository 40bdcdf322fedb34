"""Student's t and the normal quantile of eatlas.stats.tdist against scipy.special, which the concepts' p and
interval used before (the numbers a stored result holds must not move)."""
import math

import numpy as np
import pytest
from scipy.special import ndtri, stdtr, stdtrit

from eatlas.stats.tdist import norm_ppf, t_cdf, t_ppf, t_sf

DFS = [0.3, 0.5, 1.0, 1.7, 2.0, 3.0, 4.6, 7.3, 15.0, 29.9, 40.0, 200.0, 1e4, 1e7]
TS = [-80.0, -8.0, -3.0, -1.2, -0.1, 0.0, 1e-9, 0.3, 1.96, 2.5, 4.0, 12.0, 60.0, 1e3]


@pytest.mark.parametrize("df", DFS)
def test_tail_equals_scipy(df):
    for t in TS:
        want = float(stdtr(df, -t))
        got = t_sf(t, df)
        # scipy's cephes rounds a tail within 1e-9 of one half to it (stdtr(1, -1e-9) is 0.5): abs 1e-9
        assert got == pytest.approx(want, rel=1e-10, abs=1e-9), (t, df)
        assert t_cdf(t, df) == pytest.approx(float(stdtr(df, t)), rel=1e-10, abs=1e-9), (t, df)


def test_tail_equals_the_closed_forms():
    """df 1 (Cauchy) and 2 have closed forms: exact where scipy rounds."""
    for t in TS:
        r = math.sqrt(2 + t * t)
        df2 = 1 / ((r + t) * r) if t > 0 else 0.5 - t / (2 * r)     # written without cancellation
        assert t_sf(t, 1.0) == pytest.approx(math.atan2(1.0, t) / math.pi, rel=1e-13, abs=1e-300)
        assert t_sf(t, 2.0) == pytest.approx(df2, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("df", DFS)
def test_quantile_equals_scipy_and_inverts_the_tail(df):
    for p in [1e-12, 1e-6, 0.001, 0.025, 0.1, 0.4, 0.5, 0.6, 0.9, 0.95, 0.975, 0.995, 0.999999]:
        want = float(stdtrit(df, p))
        got = t_ppf(p, df)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (p, df)
        assert t_cdf(got, df) == pytest.approx(p, rel=1e-9), (p, df)


def test_edges():
    assert t_sf(math.inf, 3) == 0.0 and t_sf(-math.inf, 3) == 1.0
    assert math.isnan(t_sf(math.nan, 3)) and math.isnan(t_sf(1.0, 0)) and math.isnan(t_ppf(0.9, -1))
    assert t_ppf(0.0, 5) == -math.inf and t_ppf(1.0, 5) == math.inf and t_ppf(0.5, 5) == 0.0
    assert t_sf(2.0, math.inf) == pytest.approx(float(stdtr(np.inf, -2.0)), rel=1e-12)
    assert t_ppf(0.975, math.inf) == pytest.approx(1.959963984540054, rel=1e-12)


def test_normal_quantile_equals_scipy():
    for p in [1e-300, 1e-10, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.999, 1 - 1e-12]:
        assert norm_ppf(p) == pytest.approx(float(ndtri(p)), rel=1e-12, abs=1e-15), p
    assert norm_ppf(0.0) == -math.inf and norm_ppf(1.0) == math.inf and math.isnan(norm_ppf(1.5))
