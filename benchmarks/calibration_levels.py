"""Calibration of the concepts' answer at every level: words, sentences nested in words, contextual words.

A sentence-level test (SEAT) puts each word into the same templates, so its rows are sentences nested in words;
a contextual-word level reads each word in several contexts. The concepts' question is about other *words* of the
concepts, so the unit is the word: ``eatlas.weat(..., words=...)`` averages each word's rows before the crossed
estimator (eatlas.stats.concepts, "Words are the units"). This study draws tests from a model in which that
nesting is real and reports, per level, how often p_concepts < 0.05 at a true null and how often the concepts'
95% interval covers the population d of the words, with the words as units (``words=``) and, for comparison, with
every row taken as a unit (``words=None``, what the concepts' answer did before).

Model (dim 50). Words of X, Y, A, B are drawn around their concept's centre with spread 1: A and B apart along
e1 (the attribute axis), X and Y apart along e2 (distinct concepts, orthogonal to the attributes: delta = 0), and
for an effect X and Y shifted along e1 too. A sentence is its word + its template's vector (the same few templates
for every word, drawn once: the templates are fixed, not sampled) + a sentence's own noise; a contextual
occurrence is its word + its own noise. ``rho`` sets the within-word correlation of the association s, about 0.4
or 0.85, through the size of the noise. The population d is the concepts' d of the word-level association over
large pools (equal weights of X's and Y's spreads).

    python benchmarks/calibration_levels.py                 # the table of docs/methods.md (about 10 min, 2 cores)
    python benchmarks/calibration_levels.py --reps 100      # a quick look
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

DIM = 50


def _unit(m):
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


class Nested:
    """Four concepts of words, each word read in ``m`` rows (templates or contexts)."""

    def __init__(self, level: str, m: int, rho: float, shift: float, seed: int, attr: float = 0.8,
                 separation: float = 1.0, lean: float = 1.5):
        rng = np.random.default_rng(seed)
        self.lean = lean
        self.level, self.m = level, m
        e = np.eye(DIM)
        self.centre = {"x": separation * e[1] / 2 + shift * e[0] / 2, "y": -separation * e[1] / 2 - shift * e[0] / 2,
                       "a": attr * e[0] + 2.0 * e[2], "b": -attr * e[0] + 2.0 * e[2]}
        # noise of a row about its word: the larger, the less a word's rows agree (rho ~ word / (word + noise))
        self.noise = float(np.sqrt((1.0 - rho) / rho))
        self.templates = (rng.normal(scale=0.5, size=(m, DIM)) if level == "sent" else np.zeros((m, DIM)))
        self.templates[:, 0] = 0.0      # no template leans to A or B: at shift 0, delta = 0 by symmetry

    def words(self, rng, role: str, k: int) -> np.ndarray:
        W = self.centre[role] + rng.normal(size=(k, DIM))
        if role in "xy":        # target words differ in their lean to A or B: the spread the concepts' d scales by
            W[:, 0] += self.lean * rng.normal(size=k)
        return W

    def rows(self, rng, W: np.ndarray) -> np.ndarray:
        """Each word's m rows, word by word: (k * m, DIM)."""
        if self.level == "word":
            return W
        R = W[:, None, :] + self.templates[None, :, :] + self.noise * rng.normal(size=(len(W), self.m, DIM))
        return R.reshape(-1, DIM)

    def draw(self, rng, n: int):
        """One test: n words a concept; the rows and each row's word label."""
        out, labels = [], []
        for role in "xyab":
            W = self.words(rng, role, n)
            out.append(self.rows(rng, W))
            per = 1 if self.level == "word" else self.m
            labels.append([(role, k) for k in range(n) for _ in range(per)])
        return out, tuple(labels)

    def population_d(self, seed: int = 999, pool: int = 20_000) -> float:
        """The concepts' d of the word-level association S(w) = E cos(rows of w, rows of a) - ... over big pools
        (a cosine of unit rows is a dot product, so E over a's rows is the dot with their mean)."""
        rng = np.random.default_rng(seed)
        per = 1 if self.level == "word" else self.m
        mean_a, mean_b = (_unit(self.rows(rng, self.words(rng, r, pool))).mean(axis=0) for r in "ab")

        def s_words(role):
            T = _unit(self.rows(rng, self.words(rng, role, pool)))
            return (T @ (mean_a - mean_b)).reshape(-1, per).mean(axis=1)
        sx, sy = s_words("x"), s_words("y")
        delta = sx.mean() - sy.mean()
        return float(delta / np.sqrt((sx.var() + sy.var()) / 2 + delta * delta / 4))


def within_word_correlation(model: Nested, seed: int = 5) -> float:
    """The share of the association's variance between words (an intraclass correlation of s over X's rows)."""
    if model.level == "word":
        return float("nan")
    rng = np.random.default_rng(seed)
    R, _ = model.draw(rng, 200)
    X, _, A, B = (_unit(r) for r in R)
    s = ((X @ A.T).mean(axis=1) - (X @ B.T).mean(axis=1)).reshape(-1, model.m)
    between, within = s.mean(axis=1).var(ddof=1), s.var(axis=1, ddof=1).mean()
    return float((between - within / model.m) / (between - within / model.m + within))


def cell(model: Nested, n: int, reps: int, seed: int) -> dict:
    import eatlas
    d_pop = model.population_d()
    rng = np.random.default_rng(seed)
    out = {"words": [], "rows": []}
    for _ in range(reps):
        (X, Y, A, B), labels = model.draw(rng, n)
        for how, words in (("words", labels), ("rows", None)):
            r = eatlas.weat(X, Y, A, B, words=words, n_samples=200, ci=0.95)
            hit = r.concepts_estimable and r.concepts_low <= d_pop <= r.concepts_high
            out[how].append((r.p_concepts < 0.05, bool(hit) if r.concepts_estimable else None))
    res = {"d_pop": d_pop}
    for how, v in out.items():
        rej = np.mean([a for a, _ in v])
        est = [h for _, h in v if h is not None]
        res[how] = (float(rej), float(np.mean(est)) if est else float("nan"), len(est) / len(v))
    return res


# (level, rows a word, the model's rho): rho 0.15 and 0.6 give a within-word correlation of s of about 0.4 and
# 0.85 (printed per cell), the range seen in MiniLM's SEAT sentences (0.82-0.86) and below
CELLS = [("word", 1, 1.0), ("sent", 5, 0.15), ("sent", 5, 0.6), ("sent", 14, 0.15), ("sent", 14, 0.6),
         ("c-word", 5, 0.15), ("c-word", 5, 0.6)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n", type=int, default=8, help="words a concept")
    ap.add_argument("--shifts", type=float, nargs="+", default=[0.0, 0.3])
    args = ap.parse_args(argv)
    print("| level | rows a word | within-word corr. of s | shift | population d | p_concepts < 0.05 (words; "
          "rows) | coverage (words; rows) | estimable (words) |")
    print("|---|---|---|---|---|---|---|---|")
    t0 = time.time()
    for k, (level, m, rho) in enumerate(CELLS):
        for shift in args.shifts:
            model = Nested(level, m, rho, shift, seed=100 + k)
            icc = within_word_correlation(model)
            c = cell(model, args.n, args.reps, seed=k * 10 + int(shift * 10))
            w, r = c["words"], c["rows"]
            print(f"| {level} | {m} | {'-' if level == 'word' else f'{icc:.2f}'} | {shift:g} | {c['d_pop']:+.2f} | "
                  f"{w[0]:.3f}; {r[0]:.3f} | {w[1]:.3f}; {r[1]:.3f} | {w[2]:.2f} |", flush=True)
    print(f"({args.reps} replicates a cell, {args.n} words a concept, {time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
