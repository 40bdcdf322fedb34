"""The fast statistics give the reference computation's results: the bootstrap's count-matrix statistic
against the effect size of the resampled rows, its interval against the percentiles of that reference on
the same resamples (and against scipy.stats.bootstrap within Monte Carlo error), and the threaded,
chunked permutation sampler against one plain sequential draw."""
import numpy as np
import pytest

from eatlas.stats import subsets
from eatlas.stats.blas import single_thread
from eatlas.stats.robust import (
    CHUNK_INDICES,
    _blocks,
    bootstrap_ci,
    count_statistic,
    draw_resamples,
    resample_chunks,
    resample_statistic,
)


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
def test_percentile_interval_is_the_percentiles_of_the_reference_statistic_on_its_resamples(n, level, seed):
    X, Y, A, B = _mats(seed, n)
    reference, sizes = resample_statistic(X, Y, A, B)            # float64, gathers the resampled rows
    got = bootstrap_ci(X, Y, A, B, ci=level, n_boot=3000, seed=seed)
    dist = []
    for _, m, stream in resample_chunks(sizes, 3000, seed):
        idx = draw_resamples(sizes, m, stream)
        dist.append(reference(*(i.astype(np.int64) for i in idx)))
    dist = np.concatenate(dist)
    assert len(dist) == 3000
    low, high = np.percentile(dist, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    assert got.low == pytest.approx(low, abs=1e-5) and got.high == pytest.approx(high, abs=1e-5)
    other = bootstrap_ci(X, Y, A, B, ci=level, n_boot=3000, seed=seed + 1)
    assert (other.low, other.high) != (got.low, got.high)


def test_resample_chunks_cover_every_resample_once_and_depend_only_on_sizes_and_seed():
    for sizes, n_boot in [((9, 7, 6, 8), 10_000), ((350, 350, 215, 250), 10_000), ((5, 5, 5, 5), 150),
                          ((3000, 3000, 10, 10), 10_001)]:
        chunks = resample_chunks(sizes, n_boot, 0)
        assert [c[0] for c in chunks] == list(np.cumsum([0] + [c[1] for c in chunks[:-1]]))
        assert sum(c[1] for c in chunks) == n_boot and all(c[1] > 0 for c in chunks)
        step = CHUNK_INDICES // max(sizes[0] + sizes[1], sizes[2], sizes[3])
        assert max(c[1] for c in chunks) <= max(step, 1)
        again = resample_chunks(sizes, n_boot, 0)
        assert [draw_resamples(sizes, 5, c[2])[0].tolist() for c in chunks] == \
            [draw_resamples(sizes, 5, c[2])[0].tolist() for c in again]
    # chunks draw different resamples: each has its own stream
    a, b = resample_chunks((50, 50, 50, 50), 10_000, 0)[:2]
    assert not np.array_equal(draw_resamples((50,) * 4, 10, a[2])[0], draw_resamples((50,) * 4, 10, b[2])[0])


def test_draws_are_uniform_indices_of_each_set():
    sizes = (7, 300, 1, 70_000)
    ix, iy, ia, ib = draw_resamples(sizes, 400, np.random.SeedSequence(3))
    assert ix.shape == (400, 7) and iy.shape == (400, 300) and ib.shape == (400, 70_000)
    assert ia.tolist() == [0]                       # a set of one is the same in every resample
    assert ix.min() == 0 and ix.max() == 6 and iy.max() == 299 and ib.max() == 69_999   # no overflow past 2**16
    counts = np.bincount(iy.ravel(), minlength=300)
    expected = 400                                  # 400 rows x 300 draws over 300 values
    assert abs(counts.mean() - expected) < 1e-9 and counts.std() < 4 * np.sqrt(expected)


@pytest.mark.parametrize("n, seed", [((9, 7, 6, 8), 3), ((60, 60, 40, 45), 1)])
def test_percentile_interval_agrees_with_scipy_bootstrap_within_monte_carlo_error(n, seed):
    """The same procedure as scipy.stats.bootstrap(method="percentile"), on another random stream:
    endpoints agree within the Monte Carlo error of 20,000 resamples."""
    from scipy.stats import bootstrap

    X, Y, A, B = _mats(seed, n)
    reference, sizes = resample_statistic(X, Y, A, B)
    got = bootstrap_ci(X, Y, A, B, ci=0.95, n_boot=20_000, seed=seed)
    res = bootstrap(tuple(np.arange(k) for k in sizes), lambda *i, axis=-1: reference(*i), n_resamples=20_000,
                    vectorized=True, paired=False, confidence_level=0.95, method="percentile",
                    rng=np.random.default_rng(seed + 100), batch=2000)
    width = res.confidence_interval.high - res.confidence_interval.low
    assert got.low == pytest.approx(res.confidence_interval.low, abs=0.03 * width)
    assert got.high == pytest.approx(res.confidence_interval.high, abs=0.03 * width)


def test_interval_does_not_depend_on_the_number_of_threads(monkeypatch):
    from eatlas.stats import blas

    X, Y, A, B = _mats(2, (120, 110, 90, 80))
    threaded = bootstrap_ci(X, Y, A, B, n_boot=4000, seed=5)
    monkeypatch.setattr(blas, "_POOL", (None, 1, None))
    monkeypatch.setenv("EATLAS_THREADS", "1")
    assert blas.workers() == (None, 1)
    alone = bootstrap_ci(X, Y, A, B, n_boot=4000, seed=5)
    assert (alone.low, alone.high) == (threaded.low, threaded.high)


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


def test_single_thread_limits_numpys_blas_and_restores_it():
    """The BLAS numpy's products use (scipy may load a second copy of OpenBLAS after the limit's controller
    was made; the statistics' products never go through it)."""
    from threadpoolctl import threadpool_info

    def numpys():
        blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
        return [i["num_threads"] for i in blas if "numpy" in i["filepath"]] or [i["num_threads"] for i in blas]

    before = numpys()
    with single_thread():
        assert numpys() and all(n == 1 for n in numpys())
    assert numpys() == before
