"""Permutation test: ours against the sent-bias per-partition loop and a plain vectorised sampler.

Prints time for exact enumeration at n=8 per side (cached 0/1 matrix); for 100,000 sampled partitions
at n=25 per side with a new seed on every call (no cache can help), against sent-bias's loop on the
same s(w) values (target >= 20x); at sentence size (350 per side, new seeds) against a plain vectorised
numpy sampler (random float keys, argpartition, gather-sum, chunked; target >= 3x, same p within Monte
Carlo error); and the peak memory (tracemalloc) and time at 100, 1,000 and 3,000 per side (target
< 256 MB, time linear). Run: python benchmarks/bench_permutation.py
"""
from __future__ import annotations

import itertools
import os
import platform
import random
import time
import tracemalloc

import numpy as np

from eatlas.stats.weat import partition_matrix, permutation_p


def loop_exact(s_x, s_y):
    """sent-bias's exact test: one Python iteration per partition."""
    s = list(s_x) + list(s_y)
    observed = sum(s_x) - sum(s_y)
    idx = set(range(len(s)))
    hits = total = 0
    for xs in itertools.combinations(range(len(s)), len(s_x)):
        stat = sum(s[i] for i in xs) - sum(s[i] for i in idx.difference(xs))
        hits += stat >= observed
        total += 1
    return hits / total


def loop_sampled(s_x, s_y, n_samples, seed=0):
    """sent-bias's sampled test: one random shuffle per sample (observed counted once)."""
    rnd = random.Random(seed)
    s = list(s_x) + list(s_y)
    n = len(s_x)
    observed = sum(s_x) - sum(s_y)
    hits = 1
    for _ in range(n_samples - 1):
        rnd.shuffle(s)
        hits += (sum(s[:n]) - sum(s[n:])) >= observed
    return hits / n_samples


def timed(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    rng = np.random.default_rng(0)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, python {platform.python_version()}")
    # exact, n = 8 per side: C(16, 8) = 12,870 partitions
    s_x, s_y = rng.normal(0.1, 0.1, 8), rng.normal(0.0, 0.1, 8)
    t_loop, p_loop = timed(lambda: loop_exact(s_x, s_y), repeat=1)
    partition_matrix.cache_clear()
    t_cold, _ = timed(lambda: permutation_p(s_x, s_y), repeat=1)
    t_warm, (p_ours, exact, n_part, _) = timed(lambda: permutation_p(s_x, s_y))
    print(f"exact n=8:    loop {t_loop * 1e3:8.1f} ms | ours cold {t_cold * 1e3:6.2f} ms, warm {t_warm * 1e3:6.2f} ms"
          f" | speed-up (warm) {t_loop / t_warm:7.0f}x | p loop={p_loop:.6f} ours={p_ours:.6f} "
          f"identical={p_loop == p_ours} exact={exact} partitions={n_part}")
    # sampled, n = 25 per side, 100,000 partitions, a new seed on every call (no cache hit)
    s_x, s_y = rng.normal(0.05, 0.1, 25), rng.normal(0.0, 0.1, 25)
    t_loop, p_loop = timed(lambda: loop_sampled(s_x, s_y, 100_000), repeat=1)
    seeds = iter(range(1000, 2000))
    t_ours, (p_ours, exact, n_part, _) = timed(lambda: permutation_p(s_x, s_y, n_samples=100_000, seed=next(seeds)))
    print(f"sampled n=25: loop {t_loop * 1e3:8.1f} ms | ours (new seed each call) {t_ours * 1e3:6.2f} ms"
          f" | speed-up {t_loop / t_ours:5.0f}x (target >= 20x) | p loop={p_loop:.5f} ours={p_ours:.5f} "
          f"(|diff| {abs(p_loop - p_ours):.5f}, MC s.e. {np.sqrt(2 * p_ours * (1 - p_ours) / 100_000):.5f})")
    # sentence size: 350 per side, 100,000 partitions, new seeds
    s_x, s_y = rng.normal(0.005, 0.1, 350), rng.normal(0.0, 0.1, 350)
    t_ref, p_ref = timed(lambda: plain_sampled(s_x, s_y, 100_000, seed=next(seeds)), repeat=3)
    t_big, (p_big, *_rest) = timed(lambda: permutation_p(s_x, s_y, n_samples=100_000, seed=next(seeds)), repeat=3)
    print(f"sampled n=350: plain numpy {t_ref * 1e3:7.1f} ms | ours {t_big * 1e3:7.1f} ms | speed-up "
          f"{t_ref / t_big:4.1f}x (target >= 3x) | p plain={p_ref:.5f} ours={p_big:.5f} "
          f"(|diff| {abs(p_ref - p_big):.5f}, MC s.e. of the difference "
          f"{np.sqrt(2 * p_big * (1 - p_big) / 100_000):.5f})")
    # memory and time against the set size
    for n in (100, 1000, 3000):
        s_x, s_y = rng.normal(0.0, 0.1, n), rng.normal(0.0, 0.1, n)
        tracemalloc.start()
        t = time.perf_counter()
        permutation_p(s_x, s_y, n_samples=100_000, seed=next(seeds))
        dt = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"sampled n={n} per side, 100,000 partitions: {dt:6.2f} s, peak {peak / 2 ** 20:6.1f} MiB "
              f"(target < 256 MB)")


def plain_sampled(s_x, s_y, n_samples, seed=0, chunk=8192):
    """The plain vectorised numpy sampler: random float keys, argpartition, gather-sum, chunked."""
    s = np.concatenate([s_x, s_y])
    total, k = s.sum(), len(s_x)
    observed = 2 * s_x.sum() - total
    rng = np.random.default_rng(seed)
    hits = 1
    for c0 in range(0, n_samples - 1, chunk):
        rows = min(chunk, n_samples - 1 - c0)
        idx = np.argpartition(rng.random((rows, len(s))), k - 1, axis=1)[:, :k]
        hits += np.count_nonzero(2 * s[idx].sum(axis=1) - total >= observed - 1e-12)
    return hits / n_samples


if __name__ == "__main__":
    main()
