"""Cold run against warm re-run, end to end, and where the time goes.

Runs ``eatlas run --tests weat1 weat3 weat6 --levels word,sent,c-word`` (default model, CIs on, the
default 100,000 permutation samples and 10,000 bootstrap resamples) twice, each in a fresh Python
process, with a fresh embedding cache (EATLAS_CACHE) and database in a temporary folder: the first run
encodes every text (cold), the second finds all of them in the cache (warm). Target: the warm
run at least 10x faster than the cold one, end to end.

Each run reports its wall time (the whole process: interpreter, imports, run, write) and the split,
taken from the runner's progress callback (a phase lasts until the next one starts): imports, cli (the
CLI's own checks), registry+checks (loading the registry and validating the tests), expanding, loading
(the model), encoding, testing (the statistics) and writing; and, inside testing, the time spent in the
permutation tests (``eatlas.stats.weat.permutation_p``), the bootstrap CIs (``eatlas.stats.robust.bootstrap_ci``) and
leave-one-out (``eatlas.stats.robust.leave_one_out``).

    python benchmarks/bench_rerun.py                    # weat1, weat3, weat6 at word, sent, c-word
    python benchmarks/bench_rerun.py --tests weat1 --levels word,sent
    python benchmarks/bench_rerun.py --profile 25       # also cProfile's top 25 (cumulative) of the warm run

``--registry-copies 1 3`` times the warm re-run against the registry copied 1x and 3x (benchmarks/_registry_copies.py:
every set, test and published table again under new ids, indexed by ``eatlas catalog --sync``), each with its own
fresh cache: a re-run of one test must cost the same however many sets the registry holds (target: the 3x registry's
warm re-run within 10% of the 1x one's, CPU time and wall).

    python benchmarks/bench_rerun.py --model glove-6b-50d --tests weat6 --levels word --registry-copies 1 3
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMED = (("permutation", "eatlas.stats.weat", "permutation_p"), ("bootstrap", "eatlas.stats.robust", "bootstrap_ci"),
         ("leave-one-out", "eatlas.stats.robust", "leave_one_out"))


def child(argv: list[str], out_json: str, profile: int) -> None:
    """One run in this process; phase timings to ``out_json``."""
    t_start = time.perf_counter()
    import importlib

    import eatlas.cli
    import eatlas.run.runner
    import eatlas.stats.robust
    import eatlas.stats.weat
    marks = [("imports", t_start)]
    spent = {name: 0.0 for name, _, _ in TIMED}
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _timing import timed

    for name, mod, attr in TIMED:
        m = importlib.import_module(mod)
        setattr(m, attr, timed(spent, name, getattr(m, attr)))
    if hasattr(eatlas.run.runner, "leave_one_out"):      # imported by name into the runner
        eatlas.run.runner.leave_one_out = eatlas.stats.robust.leave_one_out
    evaluate = eatlas.run.runner.evaluate

    def evaluate_timed(*a, progress=None, **kw):
        marks.append(("registry+checks", time.perf_counter()))

        def seen(ph):
            if marks[-1][0] != ph.name:
                marks.append((ph.name, time.perf_counter()))
            if progress:
                progress(ph)
        out = evaluate(*a, progress=seen, **kw)
        marks.append(("writing", time.perf_counter()))
        return out

    eatlas.run.runner.evaluate = evaluate_timed
    marks.append(("cli", time.perf_counter()))
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        rc = prof.runcall(eatlas.cli.main, argv)
    else:
        rc = eatlas.cli.main(argv)
    marks.append(("end", time.perf_counter()))
    if rc:
        raise SystemExit(f"eatlas run failed with exit status {rc}")
    phases = {}
    for (name, t0), (_, t1) in zip(marks, marks[1:]):
        phases[name] = phases.get(name, 0.0) + t1 - t0
    Path(out_json).write_text(json.dumps({"phases": phases, "stats": spent}))
    if profile:
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)


def one_run(argv: list[str], env: dict, profile: int = 0) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out_json = f.name
    t, c0 = time.perf_counter(), os.times()
    proc = subprocess.run([sys.executable, __file__, "--child", out_json, "--profile", str(profile), "--", *argv],
                          env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    c1 = os.times()
    cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    if proc.returncode:
        sys.exit(f"run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    if profile:
        print(proc.stderr[-12000:])
    res = json.loads(Path(out_json).read_text())
    os.unlink(out_json)
    return {"wall": wall, "cpu": cpu, **res}


def show(label: str, r: dict) -> None:
    ph = " | ".join(f"{k} {v:6.2f}" for k, v in r["phases"].items())
    st = r["stats"]
    testing = r["phases"].get("testing", 0.0)
    inner = ", ".join(f"{k} {v:5.2f}" for k, v in st.items())
    print(f"{label:>5}: wall {r['wall']:6.2f} s, CPU {r['cpu']:6.2f} s | {ph}")
    print(f"{'':>5}  in testing ({testing:.2f} s): {inner}; other {testing - sum(st.values()):5.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", nargs="+", default=["weat1", "weat3", "weat6"])
    ap.add_argument("--levels", default="word,sent,c-word")
    ap.add_argument("--model", default=None)
    ap.add_argument("--no-ci", action="store_true", help="pass --no-ci to both runs")
    ap.add_argument("--warm-runs", type=int, default=1, help="warm re-runs to time (the best is compared)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's top N of the warm run")
    ap.add_argument("--registry-copies", type=int, nargs="+", default=None, metavar="N",
                    help="time the warm re-run against the registry copied N times (e.g. 1 3)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.rest, args.child, args.profile)
    if args.registry_copies:
        return by_registry_size(args)
    with tempfile.TemporaryDirectory(prefix="eatlas-bench-rerun-") as tmp:
        env = {**os.environ, "EATLAS_CACHE": str(Path(tmp) / "cache"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        run_argv = ["run", "--quiet", "--db", str(Path(tmp) / "bench.duckdb"), "--tests", *args.tests,
                    "--levels", *args.levels.split(",")] + (["--model", args.model] if args.model else []) + \
            (["--no-ci"] if args.no_ci else [])
        print(f"eatlas run --tests {' '.join(args.tests)} --levels {args.levels}{' --no-ci' if args.no_ci else ''}"
              f"{' --model ' + args.model if args.model else ''}; load average {os.getloadavg()[0]:.2f}, "
              f"{os.cpu_count()} cores")
        cold = one_run(run_argv, env)
        show("cold", cold)
        warm = [one_run(run_argv, env, args.profile if i == args.warm_runs - 1 else 0) for i in range(args.warm_runs)]
        best = min(warm, key=lambda r: r["wall"])
        show("warm", best)
        print(f"warm re-run {cold['wall'] / best['wall']:.2f}x faster than cold (target >= 10x); "
              f"statistics {sum(best['stats'].values()):.2f} s of the warm run's {best['wall']:.2f} s; "
              f"load average {os.getloadavg()[0]:.2f}")


def by_registry_size(args) -> None:
    """--registry-copies: the warm re-run against registries of 1x, 3x, ... the sets, each with a fresh cache."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _registry_copies import registry_copies

    best = {}
    with tempfile.TemporaryDirectory(prefix="eatlas-bench-registry-") as tmp:
        for n in args.registry_copies:
            reg = registry_copies(Path(tmp) / f"registry{n}x", n)
            env = {**os.environ, "EATLAS_CACHE": str(Path(tmp) / f"cache{n}x"), "EATLAS_REGISTRY": str(reg),
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
            argv = ["run", "--quiet", "--db", str(Path(tmp) / f"bench{n}x.duckdb"), "--tests", *args.tests,
                    "--levels", *args.levels.split(",")] + (["--model", args.model] if args.model else []) + \
                (["--no-ci"] if args.no_ci else [])
            with open(reg / "catalog.yaml", encoding="utf-8") as f:
                entries = sum(1 for line in f if line.startswith("  - "))
            print(f"registry {n}x ({entries} catalog entries); load average {os.getloadavg()[0]:.2f}")
            show("cold", one_run(argv, env))
            warm = [one_run(argv, env) for _ in range(args.warm_runs)]
            best[n] = (min(r["wall"] for r in warm), min(r["cpu"] for r in warm))
            show("warm", min(warm, key=lambda r: r["wall"]))
    (n0, (w0, c0)), *rest = best.items()
    for n, (w, c) in rest:
        print(f"registry {n}x against {n0}x: warm re-run wall {w:.2f} s vs {w0:.2f} s ({100 * (w / w0 - 1):+.0f}%), "
              f"CPU {c:.2f} s vs {c0:.2f} s ({100 * (c / c0 - 1):+.0f}%) (target: within +10%)")


if __name__ == "__main__":
    main()
