"""A run with confidence intervals (the default) against the same run with --no-ci.

Encodes once (the encoder and the embedding cache are shared), then times evaluate() with ci=0.95,
n_boot=10,000 and with ci=None on the same tests and levels. Target: at most 1.5x.
Run: python benchmarks/bench_ci.py [TEST ...]   (default: weat1 .. weat10 at word and sent)
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace

from eatlas.encoders import load_encoder
from eatlas.runner import RunConfig, evaluate


def main(argv=None):
    tests = (argv if argv is not None else sys.argv[1:]) or [f"weat{i}" for i in range(1, 11)]
    enc = load_encoder(None)
    cfg = RunConfig(tests=tests, levels=("word", "sent"))
    evaluate(replace(cfg, ci=None), encoder=enc)                # warm: encode and cache every text
    times = {}
    for _ in range(3):          # interleaved, best of three: the machine is shared
        for name, c in (("no CI", replace(cfg, ci=None)), ("CI 95%, 10,000 resamples", cfg)):
            t = time.perf_counter()
            out = evaluate(c, encoder=enc)
            times[name] = min(times.get(name, float("inf")), time.perf_counter() - t)
    for name, t in times.items():
        print(f"{name:>26}: {t:6.2f} s (best of 3), {sum(r['status'] == 'ok' for r in out.results)} results")
    ratio = times["CI 95%, 10,000 resamples"] / times["no CI"]
    print(f"with CIs / without: {ratio:.2f}x (target <= 1.5x); tests {', '.join(tests)}; levels word, sent")


if __name__ == "__main__":
    main()
