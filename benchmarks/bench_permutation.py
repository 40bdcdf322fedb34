"""Permutation test: ours (vectorised, cached partitions) against the sent-bias per-partition loop.

Prints time for exact enumeration at n=8 per side and for 100,000 sampled partitions at n=25,
with the loop on the same s(w) values; exact p-values must be identical.
Run: python benchmarks/bench_permutation.py
"""
from __future__ import annotations

import itertools
import os
import platform
import random
import time

import numpy as np

from eatlas.weat import partition_matrix, permutation_p


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
    # sampled, n = 25 per side, 100,000 partitions
    s_x, s_y = rng.normal(0.05, 0.1, 25), rng.normal(0.0, 0.1, 25)
    t_loop, p_loop = timed(lambda: loop_sampled(s_x, s_y, 100_000), repeat=1)
    partition_matrix.cache_clear()
    t_cold, _ = timed(lambda: permutation_p(s_x, s_y, n_samples=100_000), repeat=1)
    t_warm, (p_ours, exact, n_part, _) = timed(lambda: permutation_p(s_x, s_y, n_samples=100_000))
    print(f"sampled n=25: loop {t_loop * 1e3:8.1f} ms | ours cold {t_cold * 1e3:6.2f} ms, warm {t_warm * 1e3:6.2f} ms"
          f" | speed-up (warm) {t_loop / t_warm:7.0f}x | p loop={p_loop:.5f} ours={p_ours:.5f} "
          f"(different random partitions; |diff| {abs(p_loop - p_ours):.5f})")
    # sentence-level size: 350 per side, chunked draws
    s_x, s_y = rng.normal(0.01, 0.1, 350), rng.normal(0.0, 0.1, 350)
    t_big, (p_big, *_rest) = timed(lambda: permutation_p(s_x, s_y, n_samples=100_000), repeat=2)
    print(f"sampled n=350: ours {t_big * 1e3:8.1f} ms (chunked, bounded memory) p={p_big:.5f}")
    print("target: >= 100x the loop once warm, identical exact p")


if __name__ == "__main__":
    main()
