"""Holm's correction in numpy (eatlas.stats.multitest) gives what statsmodels' multipletests(method='holm')
gives, flag for flag and bit for bit, so the runs' holm_significant column is unchanged without importing
statsmodels (and scipy.stats) on every run."""
from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats import multitest as sm

from eatlas import holm as public_holm
from eatlas.stats.multitest import holm, holm_adjusted

ALPHAS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0)


def _vector(rng: np.random.Generator, m: int, alpha: float) -> np.ndarray:
    """p-values of one family: uniform, tiny, ties (a coarse grid), exactly 1, exactly 0, and values on
    Holm's thresholds alpha / k, where a rounding difference would flip a flag."""
    kinds = rng.choice(6, size=m)
    p = rng.uniform(size=m)
    p[kinds == 1] = rng.uniform(size=(kinds == 1).sum()) * alpha / m
    p[kinds == 2] = rng.integers(0, 5, size=(kinds == 2).sum()) / 4         # ties, 0 and 1 among them
    p[kinds == 3] = 1.0
    p[kinds == 4] = alpha / rng.integers(1, m + 1, size=(kinds == 4).sum())
    p[kinds == 5] = rng.choice([0.0, 0.001, 0.01, 0.05], size=(kinds == 5).sum())
    return p


@pytest.fixture
def no_gc(monkeypatch):
    """statsmodels runs a full garbage collection in every Holm call (``import gc`` inside multipletests); it
    changes nothing in the result and makes 10,000 calls take minutes."""
    import gc
    monkeypatch.setattr(gc, "collect", lambda *a: 0)


def test_equal_to_statsmodels_on_10000_random_families(no_gc):
    rng = np.random.default_rng(20261125)
    n_rejecting = n_mixed = 0
    for n in range(10_000):
        m = int(rng.integers(1, 60)) if n % 10 else int(rng.integers(1, 4))
        alpha = float(rng.choice(ALPHAS)) if n % 3 else float(rng.uniform(0.0005, 0.5))
        p = _vector(rng, m, alpha)
        want_reject, want_adj, _, _ = sm.multipletests(p, alpha=alpha, method="holm")
        got = holm(p, alpha=alpha)
        assert got.dtype == bool and np.array_equal(got, want_reject), (p.tolist(), alpha)
        assert np.array_equal(holm_adjusted(p), want_adj), (p.tolist(), alpha)
        assert np.array_equal(holm(list(p), alpha), got)            # a list, as the run path passes it
        n_rejecting += bool(got.any())
        n_mixed += bool(got.any() and not got.all())
    assert n_rejecting > 2_000 and n_mixed > 1_000      # the families exercise both outcomes, not only one


def test_small_cases_by_hand():
    # sorted 0.01, 0.02, 0.03 against 0.05/3, 0.05/2, 0.05/1: all three rejected
    assert holm([0.03, 0.01, 0.02], alpha=0.05).tolist() == [True, True, True]
    # 0.02 > 0.05/2 stops the procedure: 0.03 is not rejected although it is below 0.05
    assert holm([0.01, 0.03, 0.026], alpha=0.05).tolist() == [True, False, False]
    assert holm_adjusted([0.01, 0.03, 0.026]).tolist() == pytest.approx([0.03, 0.052, 0.052])
    assert holm([1.0, 0.5], alpha=1.0).tolist() == [True, True]       # 0.5 <= 1/2, then 1 <= 1/1
    assert holm([1.0, 1.0], alpha=1.0).tolist() == [False, False]     # 1 > 1/2 stops at the first
    assert holm([], alpha=0.05).tolist() == [] and holm_adjusted([]).tolist() == []
    assert holm_adjusted([0.6, 0.7]).tolist() == [1.0, 1.0]            # capped at 1


def test_the_public_function_is_the_numpy_one():
    p = [0.001, 0.2, 0.003, 0.5]       # 0.001 <= 0.01/4, 0.003 <= 0.01/3, 0.2 > 0.01/2
    assert public_holm(p, alpha=0.01).tolist() == holm(p, alpha=0.01).tolist() == [True, False, True, False]
