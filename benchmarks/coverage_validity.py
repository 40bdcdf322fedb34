"""Coverage of the validity method's intervals (eatlas.stats.validity): how often the 95% interval of Pearson's r
and of Spearman's rho holds the population value, at the sizes of real criteria (n = 20, 35, 50 items).

Data: bivariate normal, and bivariate Student t with 3 degrees of freedom (heavy tails; its Pearson correlation is
the scale matrix's rho), at rho = 0, 0.5, 0.8. Intervals: the bootstrap over items (percentile, the method's
default, and BCa) and, for Pearson's r, the Fisher z interval for comparison. The population Spearman rho is
6/pi asin(rho/2) for the normal; for the t it is estimated from one sample of 2,000,000 pairs.

    python benchmarks/coverage_validity.py [--reps 400] [--n-boot 2000] [--seed 0]

Prints one line per cell: coverage of each interval (the share of replicates whose interval holds the population
value) and its Monte Carlo standard error. docs/validity.md states the figures of one run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from eatlas.stats.validity import _pearson, _spearman, bootstrap_ci, fisher_ci  # noqa: E402


def draw(rng, dist: str, rho: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    cov = np.array([[1.0, rho], [rho, 1.0]])
    z = rng.multivariate_normal([0.0, 0.0], cov, size=n)
    if dist == "t3":
        z = z / np.sqrt(rng.chisquare(3, size=n) / 3)[:, None]
    return z[:, 0], z[:, 1]


def spearman_truth(dist: str, rho: float) -> float:
    if dist == "normal":
        return 6 / np.pi * np.arcsin(rho / 2)
    x, y = draw(np.random.default_rng(12345), dist, rho, 2_000_000)
    return float(_spearman(x, y))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 35, 50])
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"reps {args.reps}, bootstrap resamples {args.n_boot}, nominal 95%")
    print(f"{'data':7} {'rho':>4} {'n':>3} | {'r BCa':>6} {'r pct':>6} {'r Fisher':>8} | {'rho_s BCa':>9} "
          f"{'rho_s pct':>9} | mc se")
    t0 = time.perf_counter()
    for dist in ("normal", "t3"):
        for rho in (0.0, 0.5, 0.8):
            s_true = spearman_truth(dist, rho)
            for n in args.sizes:
                hits = np.zeros(5)
                for _ in range(args.reps):
                    x, y = draw(rng, dist, rho, n)
                    seed = int(rng.integers(2**31))
                    cells = [bootstrap_ci(x, y, _pearson, n_boot=args.n_boot, seed=seed, method="BCa"),
                             bootstrap_ci(x, y, _pearson, n_boot=args.n_boot, seed=seed, method="percentile"),
                             fisher_ci(float(_pearson(x, y)), n),
                             bootstrap_ci(x, y, _spearman, n_boot=args.n_boot, seed=seed, method="BCa"),
                             bootstrap_ci(x, y, _spearman, n_boot=args.n_boot, seed=seed, method="percentile")]
                    truth = [rho, rho, rho, s_true, s_true]
                    hits += [lo is not None and lo <= t <= hi for (lo, hi), t in zip(cells, truth)]
                cov = hits / args.reps
                se = np.sqrt(0.95 * 0.05 / args.reps)
                print(f"{dist:7} {rho:4.1f} {n:3d} | {cov[0]:6.3f} {cov[1]:6.3f} {cov[2]:8.3f} | {cov[3]:9.3f} "
                      f"{cov[4]:9.3f} | {se:.3f}", flush=True)
    print(f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
