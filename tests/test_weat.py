import itertools
import math

import numpy as np
import pytest

from eatlas import holm, weat
from eatlas.stats.weat import association, partition_matrix


def loop_p(s_x, s_y):
    """The sent-bias algorithm: one Python iteration per equal-size partition, ties counted."""
    s = list(s_x) + list(s_y)
    n = len(s_x)
    observed = sum(s_x) - sum(s_y)
    total, hits = 0, 0
    for xs in itertools.combinations(range(len(s)), n):
        xs = set(xs)
        stat = sum(s[i] for i in xs) - sum(s[i] for i in range(len(s)) if i not in xs)
        hits += stat >= observed - 1e-12
        total += 1
    return hits / total


def test_hand_checked_effect_size_and_exact_p():
    a, b = [[1.0, 0.0]], [[0.0, 1.0]]
    X = [[1.0, 0.0], [2.0, 0.0]]      # s = +1, +1
    Y = [[0.0, 3.0], [0.0, 1.0]]      # s = -1, -1
    r = weat(X, Y, a, b)
    # mean difference 2, sample std of [1, 1, -1, -1] = sqrt(4/3)
    assert r.effect_size == pytest.approx(2 / math.sqrt(4 / 3))
    assert r.exact and r.n_partitions == 6
    assert r.p_value == pytest.approx(1 / 6)  # only the observed partition reaches the observed statistic
    assert (r.n_x, r.n_y, r.n_a, r.n_b) == (2, 2, 1, 1)


def test_effect_size_uses_sample_std():
    rng = np.random.default_rng(1)
    X, Y, A, B = (rng.normal(size=(5, 7)) for _ in range(4))
    s_x, s_y = association(X, A, B), association(Y, A, B)
    expected = (s_x.mean() - s_y.mean()) / np.concatenate([s_x, s_y]).std(ddof=1)
    assert weat(X, Y, A, B).effect_size == pytest.approx(expected)


def test_ties_count_towards_p():
    a, b = [[1.0, 0.0]], [[0.0, 1.0]]
    X = [[1.0, 1.0], [1.0, 0.0]]
    Y = [[1.0, 0.0], [1.0, 1.0]]     # same multiset of s as X -> ties
    r = weat(X, Y, a, b)
    assert r.p_value == pytest.approx(loop_p(association(np.array(X), np.array(a), np.array(b)),
                                             association(np.array(Y), np.array(a), np.array(b))))
    assert r.p_value > 0.5


@pytest.mark.parametrize("n", [3, 4, 5])
def test_exact_p_equals_loop(n):
    rng = np.random.default_rng(n)
    X, Y, A, B = (rng.normal(size=(n, 6)) for _ in range(4))
    r = weat(X, Y, A, B)
    assert r.exact and r.n_partitions == math.comb(2 * n, n)
    assert r.p_value == loop_p(association(X, A, B), association(Y, A, B))


def test_exact_only_when_partitions_fit():
    rng = np.random.default_rng(0)
    X, Y, A, B = (rng.normal(size=(8, 6)) for _ in range(4))
    assert weat(X, Y, A, B, n_samples=100_000).exact            # C(16, 8) = 12,870
    r = weat(X, Y, A, B, n_samples=12_869)
    assert not r.exact and r.n_partitions == 12_869
    r = weat(X, Y, A, B, n_samples=math.comb(16, 8))
    assert r.exact and r.n_partitions == math.comb(16, 8)


def test_sampled_p_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(8, 5)) + 0.3, rng.normal(size=(8, 5))
    A, B = rng.normal(size=(8, 5)) + 0.3, rng.normal(size=(8, 5))
    exact = weat(X, Y, A, B).p_value
    s1 = weat(X, Y, A, B, n_samples=5000, seed=7)
    s2 = weat(X, Y, A, B, n_samples=5000, seed=7)
    s3 = weat(X, Y, A, B, n_samples=5000, seed=8)
    assert s1.p_value == s2.p_value
    assert s1.p_value != s3.p_value or exact in (0.0, 1.0)
    assert abs(s1.p_value - exact) < 0.03


def test_sampled_partitions_are_valid_and_include_observed():
    m, exact = partition_matrix(25, 25, 1000, 0)
    assert not exact and m.shape == (1000, 50)
    assert np.all(m.sum(1) == 25)
    assert np.all(m[0, :25] == 1) and np.all(m[0, 25:] == 0)
    assert len({row.tobytes() for row in m}) > 990   # random draws, (almost surely) distinct


def test_parametric_p():
    rng = np.random.default_rng(5)
    X, Y, A, B = rng.normal(size=(6, 4)) + 1, rng.normal(size=(6, 4)), rng.normal(size=(6, 4)) + 1, \
        rng.normal(size=(6, 4))
    r = weat(X, Y, A, B, parametric=True)
    assert r.parametric and 0 <= r.p_value <= 1
    assert r.p_value != weat(X, Y, A, B).p_value


def test_zero_vector_is_an_error():
    with pytest.raises(ValueError, match="zero"):
        weat([[0.0, 0.0], [1, 0]], [[1.0, 1.0], [1, 2]], [[1.0, 0.0]], [[0.0, 1.0]])


def test_holm_bonferroni():
    p = [0.001, 0.004, 0.03, 0.0049]
    # sorted: 0.001*4=0.004 <.01 reject; 0.004*3=.012 > .01 stop -> only the first is rejected
    assert holm(p, alpha=0.01).tolist() == [True, False, False, False]
    assert holm([0.001, 0.002], alpha=0.01).tolist() == [True, True]
    assert holm([], alpha=0.01).tolist() == []
