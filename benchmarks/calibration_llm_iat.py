"""Coverage of the LLM-IAT interval (eatlas.stats.llm_iat.score): simulated studies with a known score.

A simulated model pairs attribute word j with the stigmatised group Y in prompt i with probability
sigmoid(mu + beta_j * s_j + u_i), s_j = +1 for a B word and -1 for an A word: beta_j ~ N(beta, tau_w^2) is
how strongly word j carries the stereotype, u_i ~ N(0, tau_p^2) the prompt's lean (group terms, order). Each
study draws 8 A words and 8 B words (Bai et al.'s lists hold 4-12 per half) and P prompts, and every prompt
pairs every word once (a fully parsed response). The score it estimates is E[D] over new words and new
prompts, computed here from 2,000 studies of 2,000 prompts each. The interval (prompts and words resampled)
should contain it in about 95% of studies.

    python benchmarks/calibration_llm_iat.py [--reps 400] [--n-boot 2000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from eatlas.stats.llm_iat import prompt_scores, score


def study(rng, *, n_words, n_prompts, mu, beta, tau_w, tau_p):
    s = np.r_[-np.ones(n_words), np.ones(n_words)]
    is_b = s > 0
    b_j = rng.normal(beta, tau_w, size=2 * n_words)
    u = rng.normal(0, tau_p, size=n_prompts)
    p = 1 / (1 + np.exp(-(mu + b_j[None, :] * s[None, :] + u[:, None])))
    y = rng.random(p.shape) < p
    counts = np.stack([~y, y], axis=-1).astype(float)
    return counts, is_b


def truth(rng, **kw) -> float:
    return float(np.mean([prompt_scores(*study(rng, **{**kw, "n_prompts": 2000})).mean() for _ in range(2000)]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=2000)
    args = ap.parse_args(argv)
    print(f"{args.reps} studies per row, {args.n_boot} resamples, 95% intervals, 8 + 8 words")
    print("| prompts | beta | tau_w | tau_p | true score | mean score | coverage | mean width |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    t0 = time.perf_counter()
    for n_prompts, beta, tau_w, tau_p in [(50, 0.0, 0.5, 0.5), (50, 1.0, 0.5, 0.5), (50, 1.0, 1.0, 1.0),
                                          (20, 1.0, 1.0, 0.5), (50, 2.0, 0.5, 1.5), (100, 0.5, 0.2, 0.2)]:
        kw = dict(n_words=8, mu=0.0, beta=beta, tau_w=tau_w, tau_p=tau_p)
        true = truth(np.random.default_rng(1), n_prompts=n_prompts, **kw)
        rng = np.random.default_rng(2025)
        hits, widths, means = 0, [], []
        for r in range(args.reps):
            res = score(*study(rng, n_prompts=n_prompts, **kw), n_boot=args.n_boot, seed=r)
            hits += res.ci_low <= true <= res.ci_high
            widths.append(res.ci_high - res.ci_low)
            means.append(res.score)
        print(f"| {n_prompts} | {beta} | {tau_w} | {tau_p} | {true:.3f} | {np.mean(means):.3f} | "
              f"{hits / args.reps:.3f} | {np.mean(widths):.3f} |")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
