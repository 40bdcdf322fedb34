"""``eatlas results import`` at scale: what the trust boundary's checks cost.

Builds a results file of synthetic WEAT runs (benchmarks/bench_duckdb.py's builder, its rows made the kind a run
writes: a result not run has a reason and no numbers), exports it (``results export``), and times, best of
--repeat, the import of that folder into a fresh file, split into its stages: checking the manifest and the
files' checksums and staging the parquet, checking the staged rows (columns and types, NOT NULL, keys, JSON,
runs, the pandera schemas of results and runs), and merging them in one transaction.

The export writes a file per model and test (hive partitions), so the time to read them grows with the files;
the rows' checks grow with the rows. Target: the checks of the rows take at most a quarter of the import.
Run: python benchmarks/bench_import.py [--results 20000] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_duckdb import build  # noqa: E402

from eatlas.registry import load_registry  # noqa: E402
from eatlas.store import db as store  # noqa: E402
from eatlas.store import results_io  # noqa: E402


def stages(db: Path, src: Path, reg) -> dict:
    """One import of ``src`` into the new file ``db``, timed stage by stage (the calls import_results makes)."""
    out = {}
    mem = store.duck()
    try:
        t = time.perf_counter()
        relations, version, listed = results_io._stage_folder(mem, src)
        out["manifest, checksums, staging"] = time.perf_counter() - t
        t = time.perf_counter()
        results_io._check_staged(mem, relations, str(src / "manifest.json"), version, listed)
        out["checks of the rows"] = time.perf_counter() - t
        t = time.perf_counter()
        results_io._merge(db, mem, relations, wait_s=0, reg=reg, src=src)
        out["merge (one transaction)"] = time.perf_counter() - t
    finally:
        mem.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, duckdb "
          f"{duckdb.__version__}, python {platform.python_version()}")
    reg = load_registry()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.duckdb"
        con = store.duck(path)
        info = build(con, args.results)
        con.execute("UPDATE results SET reason = 'too few encodable stimuli', effect_size = NULL, p_value = NULL, "
                    "holm_significant = NULL WHERE status = 'not_run'")
        con.execute("CHECKPOINT")
        con.close()
        t = time.perf_counter()
        results_io.export_results(path, Path(d) / "exp")
        n_files = sum(1 for _ in (Path(d) / "exp").rglob("*.parquet"))
        print(f"{args.results:,} results in {info['runs']:,} runs: export {time.perf_counter() - t:.1f} s, "
              f"{n_files:,} files")
        best = None
        for i in range(args.repeat):
            got = stages(Path(d) / f"into{i}.duckdb", Path(d) / "exp", reg)
            if best is None or sum(got.values()) < sum(best.values()):
                best = got
        total = sum(best.values())
        for name, secs in best.items():
            print(f"{name:32s} {secs:7.2f} s")
        checks = best["checks of the rows"]
        print(f"{'import':32s} {total:7.2f} s")
    verdict = "met" if checks <= total / 4 else "MISSED"
    print(f"target: the checks of the rows take at most a quarter of the import: {verdict} ({checks / total:.0%})")


if __name__ == "__main__":
    main()
