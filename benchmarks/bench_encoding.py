"""Encoding speed of a full run: every test in the catalog at word, sent and c-word levels.

Three timings on the same distinct texts, default model (all-MiniLM-L6-v2):

* bare: the texts straight through transformers (AutoTokenizer + AutoModel, sorted by length,
  batches of 64, ``inference_mode``, last hidden state only): the floor any encoder pays;
* cold: ``eatlas.run.runner._encode_all`` with an empty cache (tokenise, forward, pool, span vectors,
  write the cache);
* warm: the same again, everything from the cache.

Then a whole run (``evaluate``: model load, expansion, encoding, WEAT for every test) cold and
warm. Targets: cold encoding <= 1.15 x bare, warm >= 20 x faster than cold, a whole cold run
< 2 minutes on 2 CPU cores. On a shared machine timings wander: each is repeated (``--repeat``,
interleaved) and the fastest kept.

    python benchmarks/bench_encoding.py [--repeat 3] [--n-samples 100000] [--threads N] [--skip-run]
    taskset -c 0,1 python benchmarks/bench_encoding.py     # the 2-core figure

Measured 2026-11-22 on a shared 2-core machine (other jobs running, so wall times wander by 2-3x):
1 thread, CPU time: bare 9.4 s, cold 7.5 s (0.81 x), warm 0.04 s (190 x faster than cold);
2 threads: cold 0.80-1.50 x bare wall (1.08 x CPU at worst), warm 134-177 x faster than cold;
whole run, 100 test/level pairs, n_samples 100,000: cold 34-43 s, warm 31-33 s (WEAT dominates).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch

from eatlas.encoders import load_encoder
from eatlas.encoders.cache import EmbeddingCache
from eatlas.registry import load_registry
from eatlas.registry.stimuli import build_test
from eatlas.run.runner import RunConfig, _encode_all, evaluate

LEVELS = ("word", "sent", "c-word")


def built_tests():
    reg = load_registry()
    out = []
    for spec in reg.tests.values():
        for lv in LEVELS:
            if (spec.level == "word") if lv == "word" else ("sent" in spec.expansions):
                out.append(build_test(reg, spec, lv))     # the pairs evaluate() runs
    return out


def bare_forward(enc, texts: list[str], batch_size: int = 64) -> None:
    tok, model = enc.tokenizer, enc.model
    texts = sorted(texts, key=len)
    with torch.inference_mode():
        for s in range(0, len(texts), batch_size):
            batch = tok(texts[s:s + batch_size], padding=True, truncation=True, max_length=enc.max_length,
                        return_tensors="pt")
            model(**batch)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def cpu_timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds; CPU time moves less than wall time when other processes share the cores."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--n-samples", type=int, default=100_000)
    ap.add_argument("--threads", type=int, help="torch threads (default: the cores this process may use); "
                    "1 gives the steadiest CPU times on a shared machine")
    ap.add_argument("--skip-run", action="store_true", help="encoding timings only")
    args = ap.parse_args()

    built = built_tests()
    texts = sorted({s.text for t in built for c in t.concepts.values() for s in c.stimuli})
    enc = load_encoder()
    if args.threads:
        torch.set_num_threads(args.threads)
    n_items = len({(t.level.startswith("c-word"), s.text, s.span) for t in built for c in t.concepts.values()
                   for s in c.stimuli})
    print(f"{len(built)} test/level pairs, {len(texts)} distinct texts, {n_items} vectors (plain + span); "
          f"torch threads {torch.get_num_threads()}, cores {len(os.sched_getaffinity(0))}")

    bare, cold, warm = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as d:
            cache = EmbeddingCache(d)
            bare.append(cpu_timed(lambda: bare_forward(enc, texts)))
            cold.append(cpu_timed(lambda: _encode_all(enc, built, cache=cache)))  # noqa: B023 (called at once)
            calls = enc.calls
            warm.append(cpu_timed(lambda: _encode_all(enc, built, cache=cache)))  # noqa: B023 (called at once)
            assert enc.calls == calls, "the warm pass called the model"
    for what, k in (("wall", 0), ("CPU", 1)):
        b, c, w = (min(x[k] for x in xs) for xs in (bare, cold, warm))
        print(f"encoding, {what:4} (fastest of {args.repeat}): bare forward {b:6.2f} s   cold {c:6.2f} s "
              f"({c / b:.2f} x bare)   warm {w:6.3f} s ({c / w:.0f} x faster than cold)")

    if args.skip_run:
        return
    with tempfile.TemporaryDirectory() as d:
        cfg = RunConfig(levels=LEVELS, n_samples=args.n_samples)
        run_cold = timed(lambda: evaluate(cfg, encoder=load_encoder(), cache=EmbeddingCache(d)))
        run_warm = timed(lambda: evaluate(cfg, encoder=load_encoder(), cache=EmbeddingCache(d)))
    print(f"whole run (load model + expand + encode + WEAT for {len(built)} pairs, n_samples {args.n_samples}): "
          f"cold {run_cold:.1f} s, warm {run_warm:.1f} s")


if __name__ == "__main__":
    main()
