"""The overhead of Ray for a model sweep, and CEAT context extraction lines/s, local and Ray.

1. Sweep: 4 models (the three registered ones and one random static-vector file written here) x the
   default English tests at word and sent level, ``eatlas.run.sweep.sweep`` with engine local (one model
   after another) and ray (one task per model, a local Ray instance started inside the timing, as
   ``eatlas sweep --engine ray`` does).
   Reported: each wall time, Ray's overhead (ray / local - 1), the per-model times, and from them the
   time on N GPUs on paper (the slowest of ceil(models / N) rounds of the measured per-model times).
2. Context extraction: a synthetic corpus (random words from a vocabulary holding the stimuli of the
   CEAT tests weat1, weat3, weat6), 10^5 and 10^6 lines in 4 shards; ``ceat_corpus.corpus_contexts``
   with engine local and ray: lines/s, and the peak resident memory of the process doing the scan
   (local: this process's growth in ru_maxrss; flat when it does not grow with the corpus).

    python benchmarks/bench_distributed.py                       # all
    python benchmarks/bench_distributed.py --skip-sweep --lines 100000
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def word_tests(reg):
    return [t.id for t in reg.tests.values() if t.language == "en" and not t.variant_of and t.level == "word"]


def bench_sweep(model_ids: list[str], n_static: int, n_samples: int, levels: list[str], tmp: Path) -> None:
    from eatlas.registry import load_registry
    from eatlas.run.runner import RunConfig, default_tests
    from eatlas.run.sweep import sweep
    from tests.static_models import write_static_model

    reg = load_registry()
    tests = default_tests(reg) if levels != ["word"] else word_tests(reg)
    models = list(model_ids) + [str(write_static_model(tmp / f"m{i}.txt", i, tests=word_tests(reg), dim=300))
                                for i in range(n_static)]
    n_models = len(models)
    cfg = RunConfig(tests=tests, levels=tuple(levels), n_samples=n_samples, use_cache=False)
    times = {}
    for engine in ("local", "ray"):
        per = {}
        t = time.perf_counter()
        sweep(models, cfg, db=tmp / f"{engine}.duckdb", engine=engine,
              progress=lambda msg, per=per: per.__setitem__(msg.split(": ")[0], msg))
        times[engine] = time.perf_counter() - t
        if engine == "local":
            local_msgs = per
        print(f"sweep {n_models} models x {len(tests)} tests ({','.join(levels)}, n_samples {n_samples}), {engine}: "
              f"{times[engine]:.1f} s", flush=True)
        for msg in per.values():
            print("   ", msg.split("/")[-1] if "/" in msg else msg)
    print(f"Ray overhead on {os.cpu_count()} cores: {times['ray'] / times['local'] - 1:+.0%} "
          f"(ray {times['ray']:.1f} s / local {times['local']:.1f} s)")
    secs = sorted((float(x[1]) for m in local_msgs.values() if (x := re.search(r" in ([\d.]+) s", m))),
                  reverse=True)
    for g in (1, 4, 16):           # longest task first onto the least loaded worker
        load = [0.0] * g
        for x in secs:
            load[load.index(min(load))] += x
        print(f"  on paper, {g} worker(s) (GPU each): {max(load):.1f} s for the {len(secs)} measured per-model "
              "times (+ Ray start)")


def synthetic_corpus(n_lines: int, n_shards: int, folder: Path, keys) -> list[Path]:
    rng = np.random.default_rng(0)
    filler = [f"w{i}" for i in range(5000)]
    stim = [k[0] for k in keys]
    paths = []
    per = n_lines // n_shards
    for s in range(n_shards):
        p = folder / f"shard{s}.txt"
        with open(p, "w", encoding="utf-8") as f:
            for _ in range(per // 1000):
                words = rng.choice(filler, size=(1000, 15))
                hits = rng.random(1000) < 0.3                  # 30 % of lines hold a stimulus
                picks = rng.choice(stim, size=1000)
                for row, h, w in zip(words, hits, picks):
                    if h:
                        row[7] = w
                    f.write(" ".join(row) + "\n")
        paths.append(p)
    return paths


def bench_contexts(sizes: list[int], tmp: Path, ray_too: bool) -> None:
    from eatlas.distributed.ceat_corpus import ceat_keys, corpus_contexts
    from eatlas.registry import load_registry

    reg = load_registry()
    keys = ceat_keys(reg, ["weat1", "weat3", "weat6"])
    print(f"context extraction: {len(keys)} stimuli, 1000 contexts kept per stimulus, 4 shards", flush=True)
    if ray_too:
        import ray
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    for n in sizes:
        folder = tmp / f"c{n}"
        folder.mkdir()
        paths = synthetic_corpus(n, 4, folder, keys)
        for engine in ("local", "ray") if ray_too else ("local",):
            before = rss_mb()
            t = time.perf_counter()
            ctx, lines = corpus_contexts(paths, keys, 1000, 0, engine=engine)
            secs = time.perf_counter() - t
            print(f"  {n:>9,} lines, {engine:5s}: {secs:6.1f} s, {lines / secs:>9,.0f} lines/s, "
                  f"driver peak RSS {rss_mb():.0f} MB (+{rss_mb() - before:.0f})", flush=True)
        for p in paths:
            p.unlink()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["all-minilm-l6-v2", "glove-6b-50d",
                                                     "word2vec-googlenews-wefe-subset"],
                    help="registered model ids (default: the three registered models)")
    ap.add_argument("--static", type=int, default=1, help="random static-vector models added (default 1)")
    ap.add_argument("--levels", nargs="+", default=["word", "sent"])
    ap.add_argument("--n-samples", type=int, default=10_000)
    ap.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--skip-contexts", action="store_true")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.skip_sweep:
            bench_sweep(args.models, args.static, args.n_samples, args.levels, tmp)
        if not args.skip_contexts:
            bench_contexts(args.lines, tmp, not args.no_ray)
    return 0


if __name__ == "__main__":
    sys.exit(main())
