"""Run every benchmark in this folder in turn and print its figures.

Each ``bench_*.py`` runs in its own Python process (so one's imports and caches do not flatter the
next) with its default arguments; its output is passed through under a header, with its wall time
and exit status. Exit status: 0 when every script succeeded, 1 otherwise.

    python benchmarks/run_all.py                 # all of them, in name order
    python benchmarks/run_all.py duckdb ceat     # only those whose name contains one of the words
    python benchmarks/run_all.py --list
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(words: list[str]) -> list[Path]:
    found = sorted(p for p in HERE.glob("bench_*.py") if p.is_file())
    return [p for p in found if not words or any(w in p.stem for w in words)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("only", nargs="*", help="run only the scripts whose name contains one of these words")
    ap.add_argument("--list", action="store_true", help="list the scripts and stop")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed to each script")
    args = ap.parse_args(argv)
    todo = scripts(args.only)
    if args.list or not todo:
        print("\n".join(p.name for p in todo) or f"no benchmark matches {args.only}")
        return 0 if todo else 1
    print(f"{len(todo)} benchmark(s) on {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}", flush=True)
    summary = []
    for p in todo:
        print(f"\n=== {p.name} " + "=" * max(0, 66 - len(p.name)), flush=True)
        t = time.perf_counter()
        try:
            rc = subprocess.run([sys.executable, str(p)], cwd=HERE.parent, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        secs = time.perf_counter() - t
        summary.append((p.name, rc, secs))
        print(f"--- {p.name}: {'ok' if rc == 0 else f'FAILED ({rc})'} in {secs:.1f} s", flush=True)
    print("\nsummary")
    for name, rc, secs in summary:
        print(f"  {name:32s} {'ok' if rc == 0 else f'FAILED ({rc})':14s} {secs:8.1f} s")
    return 0 if all(rc == 0 for _, rc, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
