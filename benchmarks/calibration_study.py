"""Calibration study of the WEAT's two questions: do p_concepts and the concepts' interval mean what they say,
and where does the papers' permutation p stop answering the concepts' question?

Four large pools of unit vectors stand for the four concepts (X, Y targets; A, B attributes). The
population d is the concepts' d of the whole pools (:func:`population_d`, eatlas.stats.concepts: delta /
sqrt(sigma_w^2 + q delta^2), in the proportions of the cell's design); each replicate draws sets without
replacement and runs EATlas's own code on them: ``eatlas.stats.concepts`` (p_concepts, the concepts' d and
its interval) and the papers' permutation p (``eatlas.stats.weat.permutation_p``, ``--n-samples`` partitions,
2,000 by default: the slow part), and, when asked (``--methods``), the earlier default interval
(``inversion``, through ``eatlas.weat``) and the bootstrap's (``percentile``, ``BCa``). Printed per model,
design, set size n and population d:

* ``attr/t``: median ratio of the attribute words' part of Var D to the target words' part (0 where X and Y
  are exchangeable; the larger, the more the papers' p misses);
* ``rej_c``, ``rej_pp``: share of one-sided p_concepts < 0.05 and of the papers' p < 0.05 (at d = 0 the null
  rejection rates, nominal 0.05; else power); ``n.e.``: share of results not estimable;
* per interval: ``cov``, coverage of the population d (nominal 0.95; a not-estimable result's hull counts as
  the interval it is); ``>hi``, the share wholly above it; ``width``, the median width; ``<0.1w``, the share
  narrower than 0.1; ``±bound``, the share with an end at the largest possible |d|.

Generative models (``--models``). X and Y exchangeable (d = 0 by design):

* ``gauss-light``: 50-d Gaussians around two attribute directions, concentrated (little noise from each
  attribute stimulus in s(w)); targets shifted towards A (X) or B (Y) to set the population d.
* ``gauss-heavy``: 96-d, attribute vectors spread widely around their directions (a lot of noise per
  attribute stimulus, strong attenuation of d at small n).
* ``glove``: resampled real GloVe 6B 50d vectors (``pip install 'eatlas[static]'``): among the 60,000 most
  frequent alphabetic words, A and B are the 3,000 words furthest along the direction from Caliskan et
  al.'s unpleasant to pleasant words (registry ``weat1``) and the 3,000 furthest the other way; X and Y are
  3,000 words each from the rest, drawn with weights tilted towards A (X) or B (Y) to set the population
  d (untilted, X and Y are a random split of one pool).

X and Y distinct concepts (population d set by moving X and Y apart or together along mean A - mean B, d = 0
included):

* ``gauss-sep``: the Gaussian targets apart along a direction orthogonal to the attributes'.
* ``aniso-t3``: independent t3 noise with variances proportional to 1 / i under one random rotation, X and Y
  apart along the noise's largest direction (the attribute words vary most where the targets differ).
* ``glove-weat1``, ``glove-weat3``: each pool the 400 nearest GloVe words of the centroid of one of the
  registry test's own sets (flowers, insects; European- and African-American names; pleasant, unpleasant).
* ``glove-kmeans``: four random k-means clusters (scipy) of the 30,000 most frequent GloVe words.

Outside the default run (name them with ``--models``): ``glove-weat6`` ... ``glove-weat9`` (``glove-weatN`` for any
registry test with the four roles), ``common-dir`` (a dominant direction shared by every vector, cosines of
0.8-0.9 as in contextual sentence embeddings) and ``radial-t3`` (multivariate t3 noise).

Designs (``--designs``): ``equal`` (|X| = |Y| = |A| = |B| = n), ``unequal`` (|Y| = 1.5 n), ``few-attributes``
(|A| = |B| = n / 2).

Run (one core; ``nice`` it on a shared machine):
    python benchmarks/calibration_study.py --quick           # seconds: 2 distinct models, n 8 and 16, d 0 and 1
    nice -n 10 python benchmarks/calibration_study.py --replicates 200 --json study.json   # docs/methods.md's run
    python benchmarks/calibration_study.py --markdown study.json          # its table (--cells: one row per cell)
    python benchmarks/calibration_study.py --models glove-weat3 --d 0 --replicates 1000 --methods concepts inversion
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

from eatlas.stats.concepts import concepts_from_blocks, concepts_variance
from eatlas.stats.robust import bootstrap_ci
from eatlas.stats.weat import permutation_p, weat

EXCHANGEABLE = ("gauss-light", "gauss-heavy", "glove")
DISTINCT = ("gauss-sep", "aniso-t3", "glove-weat1", "glove-weat3", "glove-kmeans")
# more distinct-concept models, not in the default run: other registry tests' neighbourhoods, a dominant direction
# shared by every vector (as in contextual embeddings), radially heavy-tailed (multivariate t3) noise
EXTRA = ("glove-weat6", "glove-weat7", "glove-weat8", "glove-weat9", "common-dir", "radial-t3")
MODELS = EXCHANGEABLE + DISTINCT
# design: (|Y| / |X|, |A| / |X|): |X| = n, |Y| = round(first n), |A| = |B| = max(2, round(second n))
DESIGNS = {"equal": (1.0, 1.0), "unequal": (1.5, 1.0), "few-attributes": (1.0, 0.5)}
DEFAULT_DESIGNS = ("equal", "unequal")
METHODS = ("concepts", "inversion", "percentile", "BCa")


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def population_d(X, Y, A, B, share_x: float = 0.5) -> float:
    """The concepts' d of the whole pools (rows of unit length; eatlas.stats.concepts): the true association
    S(w) = mean_a cos(w, a) - mean_b cos(w, b) = w . (mean A - mean B) over the pools, delta = mean_X S - mean_Y S,
    and d = delta / sqrt(sigma_w^2 + q delta^2), sigma_w^2 = p var_X S + (1 - p) var_Y S, q = p (1 - p), p =
    ``share_x``: 0.5, the concepts' estimand (X's and Y's spreads weighted equally, whatever the design's sizes;
    another share gives the d of a design in those proportions, which the concepts' d no longer estimates)."""
    v = A.mean(axis=0) - B.mean(axis=0)
    sx, sy = X @ v, Y @ v
    delta = float(sx.mean() - sy.mean())
    p = float(share_x)
    return delta / math.sqrt(p * sx.var() + (1 - p) * sy.var() + p * (1 - p) * delta * delta)


@dataclass
class Model:
    name: str
    A: np.ndarray
    B: np.ndarray
    targets: object         # shift -> (X pool, Y pool), increasing population d in the shift
    exchangeable: bool = False      # shift 0 gives X and Y from one distribution (population d 0 by design)

    def pools(self, d: float, share_x: float = 0.5) -> tuple[np.ndarray, np.ndarray, float]:
        """X and Y pools whose population d (design share ``share_x``) is ``d`` (bisection on the shift), and
        that d."""
        def f(t):
            return population_d(*self.targets(t), self.A, self.B, share_x)
        if d == 0 and self.exchangeable:
            X, Y = self.targets(0.0)
            return X, Y, f(0.0)
        lo, hi = -1.0, 1.0
        while f(lo) > d:
            lo *= 2
            if lo < -1e3:
                raise ValueError(f"model {self.name} cannot reach d = {d}")
        while f(hi) < d:
            hi *= 2
            if hi > 1e3:
                raise ValueError(f"model {self.name} cannot reach d = {d}")
        for _ in range(40):
            mid = (lo + hi) / 2
            if f(mid) < d:
                lo = mid
            else:
                hi = mid
        X, Y = self.targets((lo + hi) / 2)
        return X, Y, f((lo + hi) / 2)


def gaussian(name: str, dim: int, attr_signal: float, seed: int, pool: int = 3000) -> Model:
    """Attribute vectors unit(attr_signal * e_a + z), z ~ N(0, I / dim) (|z| about 1): the smaller
    attr_signal, the more noise each attribute stimulus adds to s(w). Targets unit(0.5 e_t +- shift (e_a -
    e_b) / sqrt 2 + z), e_t a direction shared by all targets: X and Y exchangeable at shift 0."""
    rng = np.random.default_rng(seed)
    e_a, e_b, e_t = np.linalg.qr(rng.standard_normal((dim, 3)))[0].T
    z = [rng.standard_normal((pool, dim)) / math.sqrt(dim) for _ in range(4)]
    A, B = _unit(attr_signal * e_a + z[0]), _unit(attr_signal * e_b + z[1])
    toward = (e_a - e_b) / math.sqrt(2)
    return Model(name, A, B, lambda t: (_unit(0.5 * e_t + t * toward + z[2]), _unit(0.5 * e_t - t * toward + z[3])),
                 exchangeable=True)


def gaussian_separated(seed: int, dim: int = 50, attr_signal: float = 0.6, separation: float = 1.2,
                       pool: int = 3000) -> Model:
    """X and Y distinct concepts: the gaussian model's targets, X moved by +separation / 2 and Y by -separation / 2
    along a direction e_s orthogonal to the attributes' (unrelated to A - B), so that another sample of attribute
    stimuli moves the difference of mean associations by (mu_X - mu_Y) . (error of mean A - mean B) even where
    delta = 0. The shift sets the population d along (e_a - e_b)."""
    rng = np.random.default_rng(seed)
    e_a, e_b, e_t, e_s = np.linalg.qr(rng.standard_normal((dim, 4)))[0].T
    z = [rng.standard_normal((pool, dim)) / math.sqrt(dim) for _ in range(4)]
    A, B = _unit(attr_signal * e_a + z[0]), _unit(attr_signal * e_b + z[1])
    toward = (e_a - e_b) / math.sqrt(2)
    half = separation / 2 * e_s
    return Model("gauss-sep", A, B, lambda t: (_unit(0.5 * e_t + half + t * toward + z[2]),
                                               _unit(0.5 * e_t - half - t * toward + z[3])))


def anisotropic_t3(seed: int, dim: int = 50, attr_signal: float = 0.6, separation: float = 1.0,
                   pool: int = 3000) -> Model:
    """Heavy-tailed, anisotropic noise and distinct X and Y: every stimulus is a direction plus Q (lambda^1/2 * t3),
    the t3 coordinates independent (scaled to unit variance), lambda_i proportional to 1 / i (a few directions
    carry most of the spread, as in real embeddings), Q one random rotation shared by the four concepts. X and Y
    are separated along the noise's first direction, orthogonal to e_a and e_b: the attribute stimuli vary most
    exactly where the targets differ."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    lam = 1.0 / np.arange(1, dim + 1)
    lam /= lam.sum()
    e_s = Q[:, 0]
    rest = np.linalg.qr(np.column_stack([e_s, rng.standard_normal((dim, 3))]))[0][:, 1:]
    e_a, e_b, e_t = rest.T

    def noise():
        return (rng.standard_t(3, size=(pool, dim)) / math.sqrt(3.0) * np.sqrt(lam)) @ Q.T

    z = [noise() for _ in range(4)]
    A, B = _unit(attr_signal * e_a + z[0]), _unit(attr_signal * e_b + z[1])
    toward = (e_a - e_b) / math.sqrt(2)
    half = separation / 2 * e_s
    return Model("aniso-t3", A, B, lambda t: (_unit(0.5 * e_t + half + t * toward + z[2]),
                                              _unit(0.5 * e_t - half - t * toward + z[3])))


_GLOVE: dict = {}


def _glove_vocab(vocab: int = 100_000):
    """(words, unit vectors) of the ``vocab`` most frequent alphabetic words of GloVe 6B 50d, and the encoder."""
    if vocab not in _GLOVE:
        from eatlas.encoders import load_encoder
        enc = load_encoder("glove-6b-50d")
        words = sorted(enc.index, key=enc.index.get)[:vocab]
        keep = [i for i, w in enumerate(words) if w.isalpha()]
        _GLOVE[vocab] = ([words[i] for i in keep], _unit(enc.vectors[keep].astype(np.float64)), enc)
    return _GLOVE[vocab]


def _centroid(enc, test_id: str, role: str) -> np.ndarray:
    import eatlas
    test = eatlas.get_test(test_id)
    rows = [enc.index[s.text.lower()] for s in test.concepts[role].stimuli if s.text.lower() in enc.index]
    return _unit(_unit(enc.vectors[rows].astype(np.float64)).mean(axis=0))


def _shifted(X0, Y0, axis):
    """Targets moved apart (t > 0) or together along ``axis`` (mean A - mean B, unit), renormalized."""
    return lambda t: (_unit(X0 + t / 2 * axis), _unit(Y0 - t / 2 * axis))


def glove(seed: int, pool: int = 3000, vocab: int = 60_000) -> Model:
    """Exchangeable targets from real vectors (see the module docstring)."""
    _, V, enc = _glove_vocab()
    V = V[:vocab]
    axis = _unit(_centroid(enc, "weat1", "a") - _centroid(enc, "weat1", "b"))
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

    return Model("glove", A, B, targets, exchangeable=True)


def glove_neighbourhoods(test_id: str, k: int = 400) -> Model:
    """Distinct concepts from real vectors: each pool is the ``k`` nearest words (cosine, among the 100,000 most
    frequent alphabetic GloVe words) of the centroid of one of the registry test's own four sets (weat1:
    flowers, insects, pleasant, unpleasant; weat3: European- and African-American names, pleasant,
    unpleasant), a word near two centroids left out of both. X and Y keep all that makes them different
    concepts; the population d is set by moving them apart or together along mean A - mean B."""
    words, V, enc = _glove_vocab()
    sims = np.column_stack([V @ _centroid(enc, test_id, r) for r in ("x", "y", "a", "b")])
    top = [set(np.argsort(-sims[:, j])[:k]) for j in range(4)]
    pools = [np.array(sorted(t - set().union(*(u for u in top if u is not t)))) for t in top]
    X0, Y0, A, B = (V[i] for i in pools)
    axis = _unit(A.mean(axis=0) - B.mean(axis=0))
    return Model(f"glove-{test_id}", A, B, _shifted(X0, Y0, axis))


def glove_kmeans(seed: int, clusters: int = 40, vocab: int = 30_000, min_size: int = 150) -> Model:
    """Distinct concepts from real vectors: k-means clusters (scipy's kmeans2, k-means++, seeded) of the
    ``vocab`` most frequent alphabetic GloVe words; four clusters of at least ``min_size`` words drawn at
    random are X, Y, A and B."""
    from scipy.cluster.vq import kmeans2
    _, V, _ = _glove_vocab()
    V = V[:vocab]
    rng = np.random.default_rng(seed)
    _, label = kmeans2(V, clusters, minit="++", seed=int(seed), iter=20)
    sizes = np.bincount(label, minlength=clusters)
    big = np.flatnonzero(sizes >= min_size)
    x, y, a, b = rng.choice(big, 4, replace=False)
    X0, Y0, A, B = (V[label == c] for c in (x, y, a, b))
    axis = _unit(A.mean(axis=0) - B.mean(axis=0))
    return Model("glove-kmeans", A, B, _shifted(X0, Y0, axis))


def common_direction(name: str, seed: int, dim: int = 64, strength: float = 3.0, radial: bool = False,
                     separation: float = 1.0, attr_signal: float = 0.5, pool: int = 3000) -> Model:
    """Distinct X and Y (as ``gauss-sep``) in vectors that share one dominant direction e_c (``strength``: cosines
    of 0.8-0.9 between any two stimuli, as in contextual sentence embeddings), and/or with radially heavy-tailed
    noise (``radial``: each stimulus's noise divided by sqrt(chi2_3 / 3), a multivariate t3)."""
    rng = np.random.default_rng(seed)
    e_a, e_b, e_t, e_s, e_c = np.linalg.qr(rng.standard_normal((dim, 5)))[0].T

    def noise():
        z = rng.standard_normal((pool, dim)) / math.sqrt(dim)
        return z / np.sqrt(rng.chisquare(3, size=(pool, 1)) / 3.0) if radial else z

    z = [noise() for _ in range(4)]
    A, B = _unit(strength * e_c + attr_signal * e_a + z[0]), _unit(strength * e_c + attr_signal * e_b + z[1])
    toward = (e_a - e_b) / math.sqrt(2)
    half = separation / 2 * e_s
    return Model(name, A, B, lambda t: (_unit(strength * e_c + 0.5 * e_t + half + t * toward + z[2]),
                                        _unit(strength * e_c + 0.5 * e_t - half - t * toward + z[3])))


def make_model(name: str, seed: int) -> Model:
    if name == "gauss-light":
        return gaussian(name, 50, 1.0, seed)
    if name == "gauss-heavy":
        return gaussian(name, 96, 0.15, seed)
    if name == "glove":
        return glove(seed)
    if name == "gauss-sep":
        return gaussian_separated(seed)
    if name == "aniso-t3":
        return anisotropic_t3(seed)
    if name.startswith("glove-weat"):
        return glove_neighbourhoods(name[len("glove-"):])
    if name == "common-dir":
        return common_direction(name, seed)
    if name == "radial-t3":
        return common_direction(name, seed, strength=0.0, radial=True, separation=1.5)
    if name == "glove-kmeans":
        return glove_kmeans(seed)
    raise ValueError(f"unknown model {name!r} (one of {', '.join(MODELS)})")


def draws(rng, pool_size: int, k: int, reps: int) -> np.ndarray:
    """``reps`` index sets of size k drawn without replacement (one row each)."""
    return np.argpartition(rng.random((reps, pool_size)), k - 1, axis=1)[:, :k]


def _interval_stats(v: np.ndarray, d_pop: float, bound: float) -> dict:
    """Coverage of the population d, median width, the shares narrower than 0.1 and with an end at +-bound, and
    the misses on each side, of intervals ``v`` (one row (low, high) each)."""
    at_bound = (np.abs(v[:, 0]) >= bound - 1e-9) | (np.abs(v[:, 1]) >= bound - 1e-9)
    return {"coverage": float(np.mean((v[:, 0] <= d_pop) & (d_pop <= v[:, 1]))),
            "width": float(np.nanmedian(v[:, 1] - v[:, 0])),
            "narrow": float(np.mean(v[:, 1] - v[:, 0] < 0.1)),
            "at_bound": float(np.mean(at_bound)),
            "miss_below": float(np.mean(v[:, 1] < d_pop)), "miss_above": float(np.mean(v[:, 0] > d_pop))}


def run_cell(X, Y, A, B, n, factor, reps, methods, n_samples, n_boot, seed, attr_factor: float = 1.0) -> dict:
    """One cell: ``reps`` tests of |X| = n, |Y| = round(factor n), |A| = |B| = round(attr_factor n) drawn from the
    pools, each answered
    by the concepts' statistic (eatlas.stats.concepts) and the papers' permutation p (``n_samples`` partitions),
    and by the other interval ``methods`` asked for."""
    rng = np.random.default_rng(seed)
    n_y = int(round(factor * n))
    n_a = max(2, int(round(attr_factor * n)))
    d_pop = population_d(X, Y, A, B)            # the concepts' estimand: equal weights, whatever n : n_y
    bound = 2.0
    ix, iy, ia, ib = (draws(rng, len(P), k, reps) for P, k in ((X, n), (Y, n_y), (A, n_a), (B, n_a)))
    p_papers, p_c, d_c, d_s, ratio = (np.full(reps, np.nan) for _ in range(5))
    estimable = np.zeros(reps, dtype=bool)
    ci = {m: np.empty((reps, 2)) for m in methods}
    for r in range(reps):
        x, y, a, b = X[ix[r]], Y[iy[r]], A[ia[r]], B[ib[r]]
        W = np.vstack([x, y])
        sa, sb = W @ a.T, W @ b.T
        s = sa.mean(axis=1) - sb.mean(axis=1)
        c = concepts_from_blocks(sa, sb, n, ci=0.95, alternative="greater")
        v = concepts_variance(sa, sb, n)
        p_c[r], d_c[r], estimable[r] = c.p, c.d, c.estimable
        ratio[r] = v.attribute_part / v.target_part if v.target_part > 0 else np.nan
        if "concepts" in methods:
            ci["concepts"][r] = c.low, c.high
        if "inversion" in methods:
            res = weat(x, y, a, b, ci=0.95, ci_method="inversion", n_samples=n_samples, seed=seed + r)
            p_papers[r], d_s[r] = res.p_value, res.effect_size
            ci["inversion"][r] = res.ci_low, res.ci_high
        else:
            p_papers[r] = permutation_p(s[:n], s[n:], n_samples=n_samples, seed=seed + r)[0]
            d_s[r] = (s[:n].mean() - s[n:].mean()) / s.std(ddof=1)
        for m in methods:
            if m in ("percentile", "BCa"):
                bci = bootstrap_ci(x, y, a, b, ci=0.95, n_boot=n_boot, seed=seed + r, method=m)
                ci[m][r] = bci.low, bci.high
    p_two = np.minimum(1.0, 2.0 * np.minimum(p_c, 1.0 - p_c))
    out = {"n_x": n, "n_y": n_y, "n_a": n_a, "n_b": n_a, "d_pop": d_pop, "replicates": reps,
           "rejection_concepts": float(np.mean(p_c < 0.05)),
           "rejection_concepts_two_sided": float(np.mean(p_two < 0.05)),
           "rejection_papers": float(np.mean(p_papers < 0.05)),
           "d_bias": float(np.mean(d_s) - d_pop),
           "concepts_d_bias": float(np.nanmean(d_c) - d_pop) if estimable.any() else None,
           "not_estimable": float(np.mean(~estimable)),
           "attribute_to_target": float(np.nanmedian(ratio)), "methods": {}}
    for m, v in ci.items():
        out["methods"][m] = _interval_stats(v, d_pop, bound)
    return out


def fmt_cell(c: dict, methods) -> str:
    parts = [f"{c['n_x']:>3}/{c['n_y']:<3} {c['d_pop']:5.2f} {c['attribute_to_target']:5.2f} "
             f"{c['rejection_concepts']:5.3f} {c['rejection_papers']:5.3f} {c['not_estimable']:5.3f}"]
    for m in methods:
        s = c["methods"][m]
        parts.append(f"{s['coverage']:4.2f} {s['miss_above']:4.2f} {s['width']:5.2f} {s['narrow']:5.3f} "
                     f"{s['at_bound']:5.3f}")
    return " | ".join(parts)


def header(methods) -> str:
    top = " " * 45 + " | ".join(f"{m:^30}" for m in methods)
    sub = "  n_x/n_y d_pop attr/t rej_c rej_pp   n.e. | " + " | ".join(
        " cov  >hi width <0.1w ±bound" for _ in methods)
    return top + "\n" + sub


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS + EXTRA,
                    help=f"default: all but {', '.join(EXTRA)}")
    ap.add_argument("--designs", nargs="+", default=list(DEFAULT_DESIGNS), choices=list(DESIGNS),
                    help="target and attribute sizes: equal (|X| = |Y| = |A| = |B|), unequal (|Y| = 1.5 |X|), "
                         "few-attributes (|A| = |B| = |X| / 2)")
    ap.add_argument("--n", nargs="+", type=int, default=[8, 16, 25], help="set sizes (|X| = |A| = |B| = n)")
    ap.add_argument("--d", nargs="+", type=float, default=[0.0, 0.5, 1.0, 1.5], help="population effect sizes")
    ap.add_argument("--methods", nargs="+", default=["concepts"], choices=METHODS,
                    help="intervals to check (default: the concepts' only; 'inversion' is the papers' interval "
                         "widened and disattenuated, the interval of earlier versions)")
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--n-samples", type=int, default=2_000, help="permutation partitions per test (the papers' p)")
    ap.add_argument("--n-boot", type=int, default=2_000, help="bootstrap resamples (percentile, BCa)")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--quick", action="store_true", help="gauss-sep and aniso-t3, n 8 and 16, d 0 and 1, equal "
                    "sizes, 200 replicates")
    ap.add_argument("--json", help="write every cell's numbers to this file")
    ap.add_argument("--markdown", metavar="JSON", nargs="+", help="print the table of docs/methods.md from the "
                    "--json files of earlier runs, and nothing else")
    ap.add_argument("--cells", action="store_true", help="with --markdown: one row per cell")
    args = ap.parse_args(argv)
    if args.markdown:
        studies = []
        for path in args.markdown:
            with open(path, encoding="utf-8") as f:
                studies.append(json.load(f))
        print(markdown(studies, cells=args.cells))
        return 0
    if args.quick:
        args.models, args.designs, args.n, args.d, args.replicates = \
            ["gauss-sep", "aniso-t3"], ["equal"], [8, 16], [0.0, 1.0], 200
    print(f"calibration study: {args.replicates} replicates per cell, the papers' p on {args.n_samples} partitions, "
          f"n_boot {args.n_boot}, 95% intervals; load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)",
          flush=True)
    cells = []
    t0 = time.time()
    for mi, name in enumerate(args.models):
        model = make_model(name, args.seed + mi)
        for design in args.designs:
            print(f"\n{name}, {design} target sizes\n" + header(args.methods), flush=True)
            y_factor, a_factor = DESIGNS[design]
            for di, d in enumerate(args.d):
                X, Y, _ = model.pools(d)            # the concepts' d of the pools, equal weights
                for ni, n in enumerate(args.n):
                    seed = args.seed * 1000 + mi * 100 + di * 10 + ni
                    c = run_cell(X, Y, model.A, model.B, n, y_factor, args.replicates, args.methods,
                                 args.n_samples, args.n_boot, seed, a_factor)
                    c.update(model=name, design=design, distinct=name not in EXCHANGEABLE)
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


def markdown(studies: list[dict], cells: bool = False) -> str:
    """The studies as the markdown table of docs/methods.md: one row per model, design and n, the population d's
    side by side (``cells``: one row per cell instead, every number the study keeps)."""
    lines = []
    for study in studies:
        s = study["settings"]
        lines.append(f"{s['replicates']} replicates per cell; the papers' permutation p on {s['n_samples']:,} "
                     f"partitions; 95% intervals; seed {s['seed']}; models {', '.join(s['models'])}.")
    rows = [c for study in studies for c in study["cells"]]
    if cells:
        lines += ["", "| model | X/Y/A (B = A) | population d | attribute / target variance | p_concepts < 0.05 | "
                  "papers' p < 0.05 | coverage | width | narrower than 0.1 | not estimable | an end at ±bound |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for c in rows:
            v = c["methods"]["concepts"]
            lines.append("| " + " | ".join([
                c["model"], f"{c['n_x']}/{c['n_y']}/{c['n_a']}", f"{c['d_pop']:.2f}", f"{c['attribute_to_target']:.2f}",
                f"{c['rejection_concepts']:.3f}", f"{c['rejection_papers']:.3f}", f"{v['coverage']:.3f}",
                f"{v['width']:.2f}", f"{v['narrow']:.3f}", f"{c['not_estimable']:.3f}", f"{v['at_bound']:.3f}"]) + " |")
        return "\n".join(lines)
    groups: dict = {}
    for c in rows:
        groups.setdefault((c["model"], c["n_x"], c["n_y"], c["n_a"]), []).append(c)
    ds = sorted({round(c["d_pop"], 1) for c in rows})
    lines += ["", "| model | X/Y/A (B = A) | attribute / target variance | at d = 0: p_concepts < 0.05 | "
              "the papers' p < 0.05 | coverage at d = " + " / ".join(f"{d:g}" for d in ds) + " | width at d = "
              + " / ".join(f"{d:g}" for d in ds) + " | not estimable (most) | an end at ±bound (most) | "
              "narrower than 0.1 (most) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (model, n_x, n_y, n_a), group in groups.items():
        by_d = {round(c["d_pop"], 1): c for c in group}
        null = by_d.get(0.0)

        def per_d(key, fmt, by_d=by_d):
            return " / ".join(fmt.format(by_d[d]["methods"]["concepts"][key]) if d in by_d else "-" for d in ds)
        lines.append("| " + " | ".join([
            model, f"{n_x}/{n_y}/{n_a}", f"{np.median([c['attribute_to_target'] for c in group]):.2f}",
            f"{null['rejection_concepts']:.3f}" if null else "-", f"{null['rejection_papers']:.3f}" if null else "-",
            per_d("coverage", "{:.2f}"), per_d("width", "{:.1f}"),
            f"{max(c['not_estimable'] for c in group):.2f}",
            f"{max(c['methods']['concepts']['at_bound'] for c in group):.2f}",
            f"{max(c['methods']['concepts']['narrow'] for c in group):.2f}"]) + " |")
    return "\n".join(lines)


def summary(cells, methods) -> None:
    """The worst cell of each criterion, for the exchangeable and the distinct-concept models."""
    print("summary over all cells (worst cell):")
    for kind, group in (("exchangeable", [c for c in cells if not c.get("distinct")]),
                        ("distinct", [c for c in cells if c.get("distinct")])):
        if not group:
            continue
        null = [c for c in group if abs(c["d_pop"]) < 0.05]
        if null:
            rc = [c["rejection_concepts"] for c in null]
            rp = [c["rejection_papers"] for c in null]
            print(f"  {kind}: at d = 0, p_concepts < 0.05 in {min(rc):.3f}-{max(rc):.3f}, the papers' p < 0.05 in "
                  f"{min(rp):.3f}-{max(rp):.3f} ({len(null)} cells)")
        for m in methods:
            def cov(sel, m=m, group=group):
                v = [c["methods"][m]["coverage"] for c in group if sel(c["d_pop"])]
                return f"{min(v):.3f}-{max(v):.3f}" if v else "-"
            narrow8 = [c["methods"][m]["narrow"] for c in group if c["n_x"] == 8]
            print(f"  {kind} {m:>10}: coverage at d = 0 {cov(lambda d: abs(d) < 0.05)}, about 0.5 "
                  f"{cov(lambda d: 0.3 <= d <= 0.7)}, about 1 {cov(lambda d: 0.9 <= d <= 1.1)}, 1.5 "
                  f"{cov(lambda d: d > 1.3)}; narrower than 0.1 at n = 8 at most "
                  f"{max(narrow8) if narrow8 else 0:.3f}")


if __name__ == "__main__":
    sys.exit(main())
