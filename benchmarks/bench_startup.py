"""Start-up: how long a command takes when everything it can keep is kept.

Times, each the median of ``--repeat`` (5) fresh processes, with the registry and embedding caches warm
(a temporary EATLAS_CACHE, filled by one untimed run of each command first):

* ``eatlas --help`` (target: under 0.3 s);
* ``eatlas list`` (target: under 1.5 s);
* ``eatlas run --tests weat6 --levels word --no-ci`` with the default model into a temporary database
  (target: under 1.2 s; its statistics take about 0.03 s), printing its table as a user sees it;
* ``eatlas validate`` over the whole registry, cold (no registry cache, which validate never trusts) and
  again (target: under 10 s).

Each line gives the wall time (median and fastest), the CPU time of the process (user + system, median),
and the load average, since on a shared machine the wall time moves with the load while the CPU time
moves less. ``--imports`` also lists the heavy libraries each command imported.

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeat 9 --no-validate
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "pandas", "pyarrow", "pandera", "scipy.stats", "statsmodels", "matplotlib",
         "ray", "datasets", "duckdb", "rich", "pydantic", "jinja2")
IMPORTED = ("import sys, runpy; sys.argv = ['eatlas'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('eatlas', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print('imported:', ' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none', file=sys.stderr)")


def timed(argv: list[str], env: dict, repeat: int) -> dict:
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "eatlas", *argv], env=env, cwd=env["BENCH_CWD"],
                           capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if p.returncode not in (0, 1):          # validate exits 1 on a registry with problems: still timed
            sys.exit(f"eatlas {' '.join(argv)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return {"median": statistics.median(walls), "min": min(walls), "cpu": statistics.median(cpus),
            "load": os.getloadavg()[0]}


def imported(argv: list[str], env: dict) -> str:
    p = subprocess.run([sys.executable, "-c", IMPORTED, *argv], env=env, cwd=env["BENCH_CWD"], capture_output=True,
                       text=True)
    return next((ln for ln in p.stderr.splitlines() if ln.startswith("imported:")), "imported: ?")


def show(label: str, r: dict, target: float | None, extra: str = "") -> None:
    verdict = "" if target is None else f" (target < {target:g} s: {'met' if r['median'] < target else 'NOT met'})"
    print(f"{label:44s} median {r['median']:6.3f} s  fastest {r['min']:6.3f} s  cpu {r['cpu']:6.3f} s  "
          f"load {r['load']:5.2f}{verdict}{extra}", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each command (the median is reported)")
    ap.add_argument("--no-validate", action="store_true", help="leave out eatlas validate (the slowest)")
    ap.add_argument("--imports", action="store_true", help="also list the heavy libraries each command imports")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="eatlas-bench-startup-") as tmp:
        env = {**os.environ, "EATLAS_CACHE": str(Path(tmp) / "cache"), "BENCH_CWD": tmp,
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        env.pop("EATLAS_REGISTRY", None)
        db = str(Path(tmp) / "bench.duckdb")
        commands = [("eatlas --help", ["--help"], 0.3),
                    ("eatlas list", ["list"], 1.5),
                    ("eatlas run --tests weat6 --levels word --no-ci", ["--db", db, "run", "--tests", "weat6",
                                                                         "--levels", "word", "--no-ci"], 1.2)]
        print(f"{os.cpu_count()} cores, python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f} "
              f"before; caches warmed by one run of each command", flush=True)
        for _, cmd, _ in commands:
            timed(cmd, env, 1)                  # fills the registry cache, the embedding cache, the database
        for label, cmd, target in commands:
            show(label, timed(cmd, env, args.repeat), target, f"; {imported(cmd, env)}" if args.imports else "")
        if not args.no_validate:
            cold_env = {**env, "EATLAS_CACHE": str(Path(tmp) / "cache-validate")}
            show("eatlas validate (cold: no registry cache)", timed(["validate"], cold_env, 1), 10)
            show("eatlas validate (again)", timed(["validate"], cold_env, max(1, args.repeat // 2)), 10)


if __name__ == "__main__":
    main()
