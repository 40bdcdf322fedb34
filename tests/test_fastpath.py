"""The fast statistics give the reference computation's results: the bootstrap's count-matrix statistic
against the effect size of the resampled rows, its interval against scipy.stats.bootstrap on the same
resamples, and the threaded, chunked permutation sampler against one plain sequential draw."""
import numpy as np
import pytest

from eatlas import subsets
from eatlas.blas import single_thread
from eatlas.robust import _blocks, bootstrap_ci, count_statistic, resample_statistic


def _mats(seed=0, n=(9, 7, 6, 8), dim=16):
    rng = np.random.default_rng(seed)
    X, Y, A, B = (rng.normal(size=(k, dim)) for k in n)
    X[:, 0] += 0.7
    A[:, 0] += 0.7
    return X, Y, A, B


@pytest.mark.parametrize("n", [(9, 7, 6, 8), (5, 5, 1, 4), (1, 6, 5, 5), (30, 30, 40, 12)])
def test_count_statistic_equals_the_effect_size_of_the_resampled_rows(n):
    X, Y, A, B = _mats(1, n)
    reference, sizes = resample_statistic(X, Y, A, B)            # float64, gathers the resampled rows
    sa, sb, n_x = _blocks(X, Y, A, B)
    fast64, fast32 = count_statistic(sa, sb, n_x, dtype=np.float64), count_statistic(sa, sb, n_x)
    rng = np.random.default_rng(5)
    idx = [rng.integers(0, k, size=(200, k), dtype=np.int32) if k > 1 else np.zeros(1, dtype=np.int32)
           for k in sizes]
    ref = reference(*(i.astype(np.int64) for i in idx))
    assert np.allclose(fast64(*idx), ref, rtol=0, atol=1e-12)
    assert np.allclose(fast32(*idx), ref, rtol=0, atol=1e-5)
    # the identity resample is the test itself
    ident = [np.arange(k, dtype=np.int32)[None, :] for k in sizes]
    assert fast64(*ident)[0] == pytest.approx(reference(*(np.arange(k) for k in sizes)), abs=1e-12)


@pytest.mark.parametrize("n, level, seed", [((9, 7, 6, 8), 0.95, 3), ((40, 35, 1, 20), 0.9, 11),
                                            ((300, 280, 30, 25), 0.95, 0)])
def test_percentile_interval_is_scipys_on_the_same_resamples(n, level, seed):
    from scipy.stats import bootstrap

    X, Y, A, B = _mats(seed, n)
    reference, sizes = resample_statistic(X, Y, A, B)
    got = bootstrap_ci(X, Y, A, B, ci=level, n_boot=3000, seed=seed)
    varying = [i for i, k in enumerate(sizes) if k > 1]

    def stat(*idx, axis=-1):
        full = [np.zeros(1, dtype=np.int64)] * 4
        for i, ix in zip(varying, idx):
            full[i] = ix
        return reference(*full)

    step = max(1, (1 << 21) // max(sizes[0] + sizes[1], sizes[2], sizes[3]))   # the batch bootstrap_ci uses
    res = bootstrap(tuple(np.arange(sizes[i]) for i in varying), stat, n_resamples=3000, vectorized=True,
                    paired=False, confidence_level=level, method="percentile", rng=np.random.default_rng(seed),
                    batch=step)
    assert got.low == pytest.approx(res.confidence_interval.low, abs=1e-5)
    assert got.high == pytest.approx(res.confidence_interval.high, abs=1e-5)
    other = bootstrap_ci(X, Y, A, B, ci=level, n_boot=3000, seed=seed + 1)
    assert (other.low, other.high) != (got.low, got.high)


def _plain_masks(n, k, count, seed):
    """The sampler's definition, drawn the plain way: one seeded stream of n-bit rows, the first
    ``count`` rows with exactly k ones."""
    words = (n + 63) // 64
    bitgen = np.random.default_rng([seed, 0x5B175]).bit_generator
    out = []
    while sum(map(len, out)) < count:
        bits = bitgen.random_raw(50_000 * words).reshape(-1, words)
        if n % 64:
            bits[:, -1] &= np.uint64((1 << (n % 64)) - 1)
        ones = np.bitwise_count(bits).sum(axis=1)
        out.append(bits[ones == k])
    return np.concatenate(out)[:count]


@pytest.mark.parametrize("n, k, count", [(50, 25, 30_000), (70, 35, 4000), (130, 64, 2000), (20, 10, 500)])
@pytest.mark.parametrize("threads", [True, False, "short"])
def test_chunked_threaded_sampler_draws_the_stream_of_one_plain_draw(n, k, count, threads, monkeypatch):
    if not threads:
        monkeypatch.setattr(subsets, "_pool", lambda: (None, 1))
    if threads == "short":      # the chunks planned from the acceptance fall short: more are drawn, in order
        exact = subsets.acceptance
        monkeypatch.setattr(subsets, "acceptance", lambda n, k: min(1.0, 3 * exact(n, k)))
    monkeypatch.setattr(subsets, "_WORDS_PER_CHUNK", 4096)        # many chunks, in flight at once
    monkeypatch.setattr(subsets, "_MIN_PARALLEL_WORDS", 256)
    want = _plain_masks(n, k, count, seed=9)
    assert np.array_equal(subsets.random_masks(n, k, count, seed=9), want)
    s = np.random.default_rng(1).normal(size=n)
    direct = np.array([s[[i for i in range(n) if int(row[i // 64]) >> (i % 64) & 1]].sum() for row in want[:300]])
    assert np.allclose(subsets.sampled_sums(s, k, count, seed=9)[:300], direct, rtol=0, atol=1e-12)


def test_single_thread_limits_blas_and_restores_it():
    from threadpoolctl import threadpool_info

    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    with single_thread():
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    assert [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"] == before
