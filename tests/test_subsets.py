"""The sampled permutation test's subset sampler (eatlas.stats.subsets): exactly uniform, right sums, the
same p as a plain float-key sampler within Monte Carlo error, bounded memory."""
import itertools
import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats

from eatlas.stats import subsets
from eatlas.stats.weat import null_distribution, permutation_p


def _members(masks: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little")[:, :n].astype(bool)


@pytest.mark.parametrize("n, k", [(6, 3), (7, 2), (8, 5)])
def test_every_k_subset_is_equally_likely(n, k):
    count = 60_000
    bits = _members(subsets.random_masks(n, k, count, seed=11), n)
    assert (bits.sum(axis=1) == k).all()
    code = {c: i for i, c in enumerate(itertools.combinations(range(n), k))}
    seen = np.bincount([code[tuple(np.flatnonzero(r))] for r in bits], minlength=len(code))
    assert len(seen) == math.comb(n, k) and seen.min() > 0
    assert stats.chisquare(seen).pvalue > 1e-3
    # and each element is in the subset with probability k / n
    share = bits.mean(axis=0)
    assert np.abs(share - k / n).max() < 5 * math.sqrt(k / n * (1 - k / n) / count)


@pytest.mark.parametrize("n", [63, 64, 65, 130])
def test_masks_hold_k_of_the_n_stimuli_and_nothing_beyond(n):
    masks = subsets.random_masks(n, n // 2, 3000, seed=2)
    assert masks.shape == (3000, (n + 63) // 64)
    full = np.unpackbits(masks.view(np.uint8), axis=1, bitorder="little")
    assert (full[:, n:] == 0).all() and (full.sum(axis=1) == n // 2).all()
    s = np.random.default_rng(0).normal(size=n)
    direct = np.array([s[r].sum() for r in full[:, :n].astype(bool)])
    assert np.allclose(subsets.masked_sums(masks, s), direct, rtol=0, atol=1e-12)
    assert np.allclose(subsets.sampled_sums(s, n // 2, 3000, seed=2), direct, rtol=0, atol=1e-12)


def test_seeded_and_different_across_seeds():
    s = np.random.default_rng(1).normal(size=100)
    a = subsets.sampled_sums(s, 50, 5000, seed=4)
    assert np.array_equal(a, subsets.sampled_sums(s, 50, 5000, seed=4))
    assert not np.array_equal(a, subsets.sampled_sums(s, 50, 5000, seed=5))


def _reference_p(s_x, s_y, n_samples, seed):
    """Plain vectorised numpy: random float keys, argpartition, gather-sum."""
    s = np.concatenate([s_x, s_y])
    rng = np.random.default_rng(seed)
    keys = rng.random((n_samples - 1, len(s)))
    idx = np.argpartition(keys, len(s_x) - 1, axis=1)[:, :len(s_x)]
    dist = np.concatenate([[2 * s_x.sum() - s.sum()], 2 * s[idx].sum(axis=1) - s.sum()])
    return np.mean(dist >= dist[0] - 1e-12)


@pytest.mark.parametrize("n_x, n_y", [(10, 10), (120, 120), (90, 60)])
def test_sampled_p_equals_the_reference_within_monte_carlo_error(n_x, n_y):
    rng = np.random.default_rng(n_x)
    s_x, s_y = rng.normal(0.02, 0.1, n_x), rng.normal(0.0, 0.1, n_y)
    n_samples = 40_000
    p, exact, n_part, _ = permutation_p(s_x, s_y, n_samples=n_samples, seed=3)
    assert not exact and n_part == n_samples
    if math.comb(n_x + n_y, n_x) <= 200_000:      # against the exact p
        ref = permutation_p(s_x, s_y, n_samples=math.comb(n_x + n_y, n_x))[0]
    else:
        ref = _reference_p(s_x, s_y, n_samples, seed=9)
    se = math.sqrt(max(ref * (1 - ref), 1e-4) / n_samples) * (1 if n_x == 10 else math.sqrt(2))
    assert abs(p - ref) < 4.5 * se, (p, ref)


def test_very_unequal_sets_fall_back_to_float_keys_and_stay_correct():
    assert not subsets.usable(300, 30)
    rng = np.random.default_rng(5)
    s_x, s_y = rng.normal(0.03, 0.1, 30), rng.normal(0.0, 0.1, 270)
    dist, exact = null_distribution(np.concatenate([s_x, s_y]), 30, n_samples=20_000, seed=1)
    assert not exact and dist.shape == (20_000,)
    p = permutation_p(s_x, s_y, n_samples=20_000, seed=1)[0]
    ref = _reference_p(s_x, s_y, 20_000, seed=2)
    assert abs(p - ref) < 4.5 * math.sqrt(2 * max(ref * (1 - ref), 1e-4) / 20_000)


def test_memory_stays_bounded_for_large_sets():
    rng = np.random.default_rng(6)
    s_x, s_y = rng.normal(0.0, 0.1, 1000), rng.normal(0.0, 0.1, 1000)
    tracemalloc.start()
    try:
        permutation_p(s_x, s_y, n_samples=30_000, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
