"""Bootstrap confidence intervals and leave-one-out influence, against plain loops."""
import numpy as np
import pytest

from eatlas.stats.robust import bootstrap_ci, leave_one_out, resample_statistic
from eatlas.stats.weat import association, effect_size_from_s


def _d(X, Y, A, B) -> float:
    return effect_size_from_s(association(X, A, B), association(Y, A, B))


def _mats(seed=0, n=(8, 8, 7, 9), dim=12, shift=0.6):
    rng = np.random.default_rng(seed)
    X, Y, A, B = (rng.normal(size=(k, dim)) for k in n)
    X[:, 0] += shift       # X leans towards A, Y towards B: a clear positive effect
    A[:, 0] += shift
    Y[:, 1] += shift
    B[:, 1] += shift
    return X, Y, A, B


def test_resample_statistic_equals_the_effect_size_of_the_resampled_rows():
    X, Y, A, B = _mats()
    stat, sizes = resample_statistic(X, Y, A, B)
    rng = np.random.default_rng(3)
    idx = [rng.integers(0, k, size=(5, k)) for k in sizes]      # 5 resamples at once
    got = stat(*idx)
    for r in range(5):
        ix, iy, ia, ib = (i[r] for i in idx)
        assert got[r] == pytest.approx(_d(X[ix], Y[iy], A[ia], B[ib]), abs=1e-12)
    # identity indices give the test's own effect size
    assert stat(*(np.arange(k) for k in sizes)) == pytest.approx(_d(X, Y, A, B), abs=1e-12)


def test_bootstrap_ci_agrees_with_a_plain_loop_and_is_seeded():
    X, Y, A, B = _mats(1)
    ci = bootstrap_ci(X, Y, A, B, ci=0.95, n_boot=4000, seed=7)
    again = bootstrap_ci(X, Y, A, B, ci=0.95, n_boot=4000, seed=7)
    assert (ci.low, ci.high) == (again.low, again.high)
    d = _d(X, Y, A, B)
    assert ci.low < d < ci.high
    rng = np.random.default_rng(11)
    loop = []
    for _ in range(4000):
        rows = [m[rng.integers(0, len(m), len(m))] for m in (X, Y, A, B)]
        loop.append(_d(*rows))
    lo, hi = np.percentile(loop, [2.5, 97.5])
    assert ci.low == pytest.approx(lo, abs=0.08) and ci.high == pytest.approx(hi, abs=0.08)
    assert (ci.level, ci.n_boot, ci.method) == (0.95, 4000, "percentile")


def test_bootstrap_ci_wider_at_higher_level_and_bca_available():
    X, Y, A, B = _mats(2)
    narrow = bootstrap_ci(X, Y, A, B, ci=0.5, n_boot=2000, seed=0)
    wide = bootstrap_ci(X, Y, A, B, ci=0.99, n_boot=2000, seed=0)
    assert wide.low < narrow.low and wide.high > narrow.high
    bca = bootstrap_ci(X, Y, A, B, ci=0.95, n_boot=2000, seed=0, method="BCa")
    assert bca.method == "BCa" and bca.low < bca.high


@pytest.mark.parametrize("kw", [{"ci": 0}, {"ci": 1.0}, {"ci": 1.5}, {"n_boot": 99}, {"method": "basic"}])
def test_bootstrap_ci_refuses_bad_settings(kw):
    X, Y, A, B = _mats()
    with pytest.raises(ValueError):
        bootstrap_ci(X, Y, A, B, **kw)


def test_leave_one_out_equals_recomputing_without_each_stimulus():
    X, Y, A, B = _mats(4)
    inf = leave_one_out(X, Y, A, B)
    mats = {"x": X, "y": Y, "a": A, "b": B}
    assert len(inf.d_without) == sum(len(m) for m in mats.values())
    for role, i, d in zip(inf.role, inf.index, inf.d_without):
        reduced = dict(mats)
        reduced[role] = np.delete(mats[role], i, axis=0)
        assert d == pytest.approx(_d(reduced["x"], reduced["y"], reduced["a"], reduced["b"]), abs=1e-12)
    assert inf.effect_size == pytest.approx(_d(X, Y, A, B), abs=1e-12)
    assert inf.d_min <= inf.effect_size <= inf.d_max
    assert np.allclose(inf.delta, inf.d_without - inf.effect_size)


def test_sign_stability_flags_a_single_word_that_carries_the_effect():
    rng = np.random.default_rng(5)
    dim = 10
    X, Y, B = rng.normal(size=(6, dim)), rng.normal(size=(6, dim)), rng.normal(size=(6, dim))
    A = rng.normal(size=(5, dim))
    # one attribute word pointing at X's mean and away from Y's: the effect hangs on it
    carrier = X.mean(axis=0) - Y.mean(axis=0)
    d_without_it = _d(X, Y, A, B)
    A = np.vstack([A, 3 * carrier / np.linalg.norm(carrier)])
    d_with_it = _d(X, Y, A, B)
    assert np.sign(d_with_it) != np.sign(d_without_it)          # the construction does what it says
    inf = leave_one_out(X, Y, A, B)
    assert not inf.sign_stable
    flip = (inf.role == "a") & (inf.index == 5)
    assert inf.d_without[flip][0] == pytest.approx(d_without_it, abs=1e-12)
    assert leave_one_out(*_mats(6, shift=3.0)).sign_stable
