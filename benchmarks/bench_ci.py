"""A run with confidence intervals (the default) against the same run with --no-ci.

Encodes once (the encoder and the embedding cache are shared), then times evaluate() with ci=0.95 (the
default interval, --ci-method inversion; ``--ci-method percentile`` or ``BCa`` times the bootstrap's, with
n_boot=10,000) and with ci=None on the same tests and levels, and the statistics inside it (permutation
tests, the interval, leave-one-out; the interval runs beside the permutation test, so their times overlap
and can add up to more than the run's). Target: at most 1.5x for the whole default run.
Run: python benchmarks/bench_ci.py [TEST ...]   (default: the default run's tests, word and sent;
``--repeat N`` pairs, interleaved, best of each)
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

from _timing import timed

from eatlas.encoders import load_encoder
from eatlas.run.runner import RunConfig, evaluate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tests", nargs="*", help="test ids (default: the default run's tests)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved pairs of runs (best of each is kept)")
    ap.add_argument("--ci-method", default="inversion", choices=("inversion", "percentile", "BCa"))
    args = ap.parse_args(argv)
    enc = load_encoder(None)
    cfg = RunConfig(tests=args.tests or None, levels=("word", "sent"), ci_method=args.ci_method)
    evaluate(replace(cfg, ci=None), encoder=enc)                # warm: encode and cache every text
    spent = _time_statistics()
    times, inner = {}, {}
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    for _ in range(args.repeat):          # interleaved, best of each: the machine is shared
        for name, c in (("no CI", replace(cfg, ci=None)), (f"CI 95%, {args.ci_method}", cfg)):
            spent.clear()
            t = time.perf_counter()
            out = evaluate(c, encoder=enc)
            t = time.perf_counter() - t
            if t < times.get(name, float("inf")):
                times[name], inner[name] = t, dict(spent)
    for name, t in times.items():
        split = ", ".join(f"{k} {v:.2f} s" for k, v in inner[name].items())
        print(f"{name:>26}: {t:6.2f} s (best of {args.repeat}), {sum(r['status'] == 'ok' for r in out.results)} "
              f"results; in it: {split}")
    ratio = times[f"CI 95%, {args.ci_method}"] / times["no CI"]
    print(f"with CIs / without: {ratio:.2f}x (target <= 1.5x); tests "
          f"{', '.join(args.tests) if args.tests else 'the default run (' + str(len(out.run['tests'])) + ')'}; "
          f"levels word, sent; load average after: {os.getloadavg()[0]:.2f}")


def _time_statistics() -> dict:
    """Wrap the statistics the runner calls with timers; returns the dict they add their seconds to."""
    import importlib

    robust, runner, weat, interval = (importlib.import_module(f"eatlas.{m}") for m in
                                      ("stats.robust", "run.runner", "stats.weat", "stats.interval"))
    spent = {}       # (importlib: the package's attribute eatlas.weat is the function, not the module)
    weat.permutation_p = timed(spent, "permutation", weat.permutation_p)
    robust.bootstrap_ci = timed(spent, "bootstrap", robust.bootstrap_ci)
    interval.inversion_ci = timed(spent, "inversion interval", interval.inversion_ci)
    runner.leave_one_out = timed(spent, "leave-one-out", robust.leave_one_out)
    return spent


if __name__ == "__main__":
    main()
