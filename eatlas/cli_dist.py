"""The commands of issue 14 (``eatlas results export|import``, ``eatlas sweep``), kept beside cli.py."""
from __future__ import annotations

import argparse
from pathlib import Path


def cmd_results(args) -> int:
    from .cli import _console
    from .store import default_db

    out, err = _console()
    db = Path(args.db) if getattr(args, "db", None) else default_db()
    if args.action == "export":
        from .results_io import export_results
        m = export_results(db, args.path)
        rows = ", ".join(f"{t} {e['rows']}" for t, e in m["tables"].items())
        out.print(f"exported {db} to {args.path}: {rows} row(s); manifest {Path(args.path) / 'manifest.json'}",
                  highlight=False)
    else:
        from .registry import load_registry
        from .results_io import import_results
        r = import_results(db, args.path, wait_s=args.wait, reg=load_registry(getattr(args, "registry", None)))
        added = ", ".join(f"{t} {n}" for t, n in r["added"].items())
        out.print(f"imported {args.path} into {db}: {added} row(s) added; {r['runs_skipped']} run(s) already "
                  "present, skipped", highlight=False)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    res = sub.add_parser("results", help="export the results as hive-partitioned parquet, or import such an export "
                                         "or another results file")
    rs = res.add_subparsers(dest="action", required=True)
    ex = rs.add_parser("export", help="write runs, results and method tables as parquet partitioned by model and "
                                      "test, with manifest.json")
    ex.add_argument("path", help="a new or empty folder (or an earlier export, which is replaced)")
    im = rs.add_parser("import", help="merge an export folder or a .duckdb results file into --db (by run id)")
    im.add_argument("path", help="an 'eatlas results export' folder or an eatlas .duckdb file")
    im.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a database in use")
    for p in (ex, im):
        p.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB results file (default eatlas.duckdb)")
        p.add_argument("--registry", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    res.set_defaults(fn=cmd_results)
