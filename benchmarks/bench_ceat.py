"""CEAT speed: eatlas.stats.ceat (vectorised over draws) against the authors' per-draw Python loop.

Random contextual vectors: 8 stimuli per set, 768 dimensions, 50 contexts per stimulus,
N = 10,000 draws. The authors' loop is re-implemented faithfully from their ``ceat_meta``
(one draw at a time: build X, Y, A, B with a list comprehension per set, ``effect_size`` calling
``associate`` per word, twice per target word, each ``associate`` two ``cosine_similarity`` calls,
then their random-effects code). It runs for 1,000 draws and its time is extrapolated linearly
to 10,000; it gets the same draw indices as eatlas (the only change to their code: an index
array replaces ``np.random.randint``), so both must give the same combined effect size.

The loop is timed twice: with scikit-learn's ``cosine_similarity`` as the authors call it, and
with a bare numpy cosine (a faster baseline than theirs, so a conservative ratio).

    python benchmarks/bench_ceat.py [--draws 10000] [--loop-draws 1000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.stats

from eatlas.stats.ceat import ceat, draw_indices

N_WORDS, DIM, N_CTX = 8, 768, 50


def numpy_cosine_similarity(X, Y):
    """sklearn.metrics.pairwise.cosine_similarity without its input validation."""
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    Y = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    return X @ Y.T


def authors_ceat(weat_dict, groups, idx, cosine_similarity):
    """The authors' ceat_meta with the per-draw randint replaced by idx[i, stimulus]."""
    def associate(w, A, B):
        return cosine_similarity(w.reshape(1, -1), A).mean() - cosine_similarity(w.reshape(1, -1), B).mean()

    def effect_size(X, Y, A, B):
        delta_mean = np.mean([associate(X[i, :], A, B) for i in range(X.shape[0])]) - \
            np.mean([associate(Y[i, :], A, B) for i in range(Y.shape[0])])
        XY = np.concatenate((X, Y), axis=0)
        s = [associate(XY[i, :], A, B) for i in range(XY.shape[0])]
        std_dev = np.std(s, ddof=1)
        var = std_dev ** 2
        return delta_mean / std_dev, var

    col = {wd: k for k, wd in enumerate(w for g in groups for w in g)}
    N = idx.shape[0]
    e_lst, v_lst = [], []
    for i in range(N):
        X = np.array([weat_dict[wd][idx[i, col[wd]]] for wd in groups[0]])
        Y = np.array([weat_dict[wd][idx[i, col[wd]]] for wd in groups[1]])
        A = np.array([weat_dict[wd][idx[i, col[wd]]] for wd in groups[2]])
        B = np.array([weat_dict[wd][idx[i, col[wd]]] for wd in groups[3]])
        e, v = effect_size(X, Y, A, B)
        e_lst.append(e)
        v_lst.append(v)
    e_ary = np.array(e_lst)
    w_ary = 1 / np.array(v_lst)
    q1 = np.sum(w_ary * (e_ary ** 2))
    q2 = ((np.sum(e_ary * w_ary)) ** 2) / np.sum(w_ary)
    q = q1 - q2
    df = N - 1
    if q > df:
        c = np.sum(w_ary) - np.sum(w_ary ** 2) / np.sum(w_ary)
        tao_square = (q - df) / c
    else:
        tao_square = 0
    v_star_ary = np.array(v_lst) + tao_square
    w_star_ary = 1 / v_star_ary
    pes = np.sum(w_star_ary * e_ary) / np.sum(w_star_ary)
    v = 1 / np.sum(w_star_ary)
    z = pes / np.sqrt(v)
    p_value = scipy.stats.norm.sf(z, loc=0, scale=1)
    return pes, p_value, e_ary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--loop-draws", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    rng = np.random.default_rng(2021)
    groups = [[f"{s}{i}" for i in range(N_WORDS)] for s in "XYAB"]
    weat_dict = {wd: rng.normal(size=(N_CTX, DIM)) for g in groups for wd in g}
    sets = [[weat_dict[wd] for wd in g] for g in groups]
    counts = [N_CTX] * (4 * N_WORDS)

    ceat(*sets, n_draws=args.draws, seed=0)          # warm-up (imports statsmodels)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = ceat(*sets, n_draws=args.draws, seed=0, sampling="paper")
        times.append(time.perf_counter() - t0)
    t_vec = statistics.median(times)

    # identical draws: the indices ceat drew from seed 0 (checked below), first loop-draws of them
    idx = draw_indices(counts, args.draws, sampling="paper", seed=0)
    sub = idx[: args.loop_draws]
    vec_sub = ceat(*sets, indices=sub)

    baselines = {}
    try:
        from sklearn.metrics.pairwise import cosine_similarity as sk_cos
        baselines["authors' loop, sklearn cosine_similarity (as their code)"] = sk_cos
    except ImportError:
        pass
    baselines["authors' loop, numpy cosine (faster than theirs)"] = numpy_cosine_similarity

    print(f"CEAT benchmark: {N_WORDS} stimuli per set, {DIM}-d, {N_CTX} contexts per stimulus, "
          f"N = {args.draws:,} draws, sampling = paper")
    print(f"  ({res.n_with_replacement} of {4 * N_WORDS} stimuli have fewer than N contexts, so the paper's rule "
          f"draws them with replacement; the loop is timed on {args.loop_draws:,} draws and extrapolated)")
    print(f"  eatlas.stats.ceat (method={res.method}): median {t_vec * 1e3:.1f} ms over {args.repeat} runs "
          f"(min {min(times) * 1e3:.1f} ms)  CES = {res.ces:+.6f}  p(two-tailed) = {res.p_two_tailed:.4g}")
    ok = True
    for name, cos in baselines.items():
        t0 = time.perf_counter()
        pes, p1, e_loop = authors_ceat(weat_dict, groups, sub, cos)
        t_loop = time.perf_counter() - t0
        t_full = t_loop * args.draws / args.loop_draws
        ratio = t_full / t_vec
        same_ces = abs(pes - vec_sub.ces) <= 1e-9 * max(1.0, abs(pes))
        max_es = float(np.max(np.abs(e_loop - vec_sub.effect_sizes)))
        ok &= same_ces
        print(f"  {name}: {t_loop:.2f} s for {args.loop_draws:,} draws, "
              f"extrapolated x{args.draws // args.loop_draws} to {t_full:.1f} s for {args.draws:,}; "
              f"speed-up {ratio:,.0f}x")
        print(f"    same {args.loop_draws:,} draws: loop CES = {pes:+.12f}, eatlas CES = {vec_sub.ces:+.12f} "
              f"({'equal' if same_ces else 'DIFFERENT'}; max |ES diff| per draw {max_es:.1e}; "
              f"one-tailed p loop {p1:.6g} vs eatlas {vec_sub.p_one_tailed:.6g})")
    drawn_same = np.array_equal(vec_sub.effect_sizes,
                                ceat(*sets, indices=idx, method=res.method).effect_sizes[: args.loop_draws])
    print(f"  ceat(seed=0) uses draw_indices(seed=0): "
          f"{'yes' if np.array_equal(ceat(*sets, indices=idx).effect_sizes, res.effect_sizes) else 'NO'}; "
          f"prefix consistent: {'yes' if drawn_same else 'NO'}")
    print(f"  targets: under 1 s {'met' if t_vec < 1 else 'MISSED'}; "
          f"same combined effect size {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
