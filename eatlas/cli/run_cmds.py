"""The commands of issue 14 (``eatlas results export|import``, ``eatlas sweep``), kept beside cli.py."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..levels import DEFAULT as DEFAULT_LEVELS


def cmd_results(args) -> int:
    from ..store.db import default_db
    from .main import _console

    out, err = _console()
    db = Path(args.db) if getattr(args, "db", None) else default_db()
    if args.action == "export":
        from ..store.results_io import export_results
        m = export_results(db, args.path)
        rows = ", ".join(f"{t} {e['rows']}" for t, e in m["tables"].items())
        out.print(f"exported {db} to {args.path}: {rows} row(s); manifest {Path(args.path) / 'manifest.json'}",
                  highlight=False)
    else:
        from ..registry.base import load_registry
        from ..store.results_io import import_results
        r = import_results(db, args.path, wait_s=args.wait, reg=load_registry(getattr(args, "registry", None)))
        added = ", ".join(f"{t} {n}" for t, n in r["added"].items())
        out.print(f"imported {args.path} into {db}: {added} row(s) added; {r['runs_skipped']} run(s) already "
                  "present, skipped", highlight=False)
    return 0


def cmd_sweep(args) -> int:
    from ..run.runner import RunConfig
    from ..run.sweep import read_models_file, sweep
    from ..store.db import default_db
    from .main import _console

    out, err = _console()
    db = Path(args.db) if getattr(args, "db", None) else default_db()
    models = list(args.models or []) + (read_models_file(args.models_file) if args.models_file else [])
    cfg = RunConfig(tests=args.tests, levels=tuple(args.levels), seed=args.seed, n_samples=args.n_samples,
                    alpha=args.alpha, parametric=args.parametric, use_cache=not args.no_cache, method=args.method,
                    language=args.language, batch_size=args.batch_size)
    r = sweep(models, cfg, db=db, engine=args.engine, ray_address=args.ray_address, resume=args.resume,
              registry=getattr(args, "registry", None), wait_s=args.wait,
              progress=None if args.quiet else (lambda msg: err.print(msg, highlight=False, markup=False)))
    out.print(f"sweep {r['sweep_id']}: {len(r['done'])} model(s) run, {len(r['failed'])} failed, "
              f"{len(r['skipped'])} skipped (already stored); results in {db}"
              + (" (failures: SELECT * FROM sweep_failures)" if r["failed"] else ""), highlight=False)
    return 1 if r["failed"] else 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from .main import PROBABILITY, SEED, _at_least, _ListOption

    sw = sub.add_parser("sweep", help="run the tests over many models, one task per model (locally or on Ray)")
    sw.add_argument("--models", nargs="+", action=_ListOption, help="model ids, folders or vector files")
    sw.add_argument("--models-file", help="a file of models, one a line (# comments)")
    sw.add_argument("--tests", nargs="+", action=_ListOption, help="test ids (default: every canonical test "
                    "of --language)")
    sw.add_argument("--language", default="en")
    sw.add_argument("--levels", nargs="+", action=_ListOption, default=list(DEFAULT_LEVELS))
    from .. import methods
    sw.add_argument("--method", choices=[n for n, m in methods.all_methods().items() if m.inputs == "matrices"],
                    default="weat", help="a method over the tests' four matrices (its own options keep their "
                                         "defaults)")
    sw.add_argument("--seed", type=SEED, default=0)
    sw.add_argument("--n-samples", type=_at_least(2), default=100_000)
    sw.add_argument("--alpha", type=PROBABILITY, default=0.01)
    sw.add_argument("--parametric", action="store_true")
    sw.add_argument("--batch-size", type=_at_least(1), default=64)
    sw.add_argument("--no-cache", action="store_true")
    sw.add_argument("--engine", choices=("local", "ray"), default="local",
                    help="local: one model after another here; ray: one Ray task per model")
    sw.add_argument("--ray-address", help="a Ray cluster (HOST:PORT, ray://HOST:PORT, auto); default: start a "
                                          "local Ray instance")
    sw.add_argument("--resume", action="store_true", help="skip a model already stored with this configuration")
    sw.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a database in use")
    sw.add_argument("--quiet", action="store_true", help="no progress lines")
    sw.set_defaults(fn=cmd_sweep)

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
