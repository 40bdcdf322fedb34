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
    for name, c in (("no CI", replace(cfg, ci=None)), ("CI 95%, 10,000 resamples", cfg)):
        t = time.perf_counter()
        out = evaluate(c, encoder=enc)
        times[name] = time.perf_counter() - t
        print(f"{name:>26}: {times[name]:6.2f} s, {sum(r['status'] == 'ok' for r in out.results)} results")
    ratio = times["CI 95%, 10,000 resamples"] / times["no CI"]
    print(f"with CIs / without: {ratio:.2f}x (target <= 1.5x); tests {', '.join(tests)}; levels word, sent")


if __name__ == "__main__":
    main()
