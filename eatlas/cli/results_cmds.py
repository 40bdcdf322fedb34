"""The results' commands: sql, report, publish, export, show-influence, and results export/import."""
from __future__ import annotations

import sys
from pathlib import Path

from ..console import esc
from .common import _console


def cmd_sql(args) -> int:
    from ..store import default_db, query

    out, err = _console()
    db = Path(args.db) if args.db else default_db()
    reg = None
    if not db.exists() and not args.write:
        from ..registry import load_registry
        reg = load_registry(args.registry)
        err.print(f"note: no results file {db} (yet): runs and results are empty; published_results and the "
                  "views read the registry's published tables", highlight=False)
    df = query(db, args.query, write=args.write, reg=reg)
    if args.format == "csv":
        from ..guard import neutralise_csv
        sys.stdout.write(neutralise_csv(df).to_csv(index=False))
    elif args.format == "json":
        sys.stdout.write(_json_records(df) + "\n")
    else:
        import pandas as pd
        from rich.table import Table
        t = Table()                 # every value whole: a long one folds onto the next line, never cut with '…'
        for c in df.columns:
            t.add_column(esc(c), overflow="fold")
        # SQL NULL (None, NaN or NA in the frame) shows as blank
        for row in df.itertuples(index=False):
            t.add_row(*(_sql_cell(v, pd) for v in row))
        out.print(t)
        out.print(f"{len(df)} row(s)")
    return 0


def _json_records(df) -> str:
    """`eatlas sql --format json`: one object per row, every float with all its digits (Python's shortest
    exact form; pandas' to_json keeps 15 at most), SQL NULL as null, timestamps as epoch milliseconds (as
    pandas writes them)."""
    import datetime as dt
    import decimal
    import json

    import numpy as np
    import pandas as pd

    def plain(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, (pd.Timestamp, dt.datetime)):
            ts = pd.Timestamp(v)
            return int((ts.tz_convert(None) if ts.tzinfo else ts).value // 1_000_000)
        if isinstance(v, dt.date):
            return v.isoformat()
        if isinstance(v, decimal.Decimal):
            return float(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v).decode("utf-8", "backslashreplace")
        return str(v)

    rows = df.astype(object).where(df.notna(), None).to_dict(orient="records")
    return json.dumps(rows, indent=1, default=plain, ensure_ascii=False, allow_nan=False)


SQL_DIGITS = 6     # significant digits of a float in `eatlas sql`'s table format (csv and json keep every digit)


def _sql_cell(v, pd) -> str:
    """A cell of `eatlas sql`'s table: NULL (None, NaN, NA) blank, a float to SQL_DIGITS significant digits."""
    import numpy as np
    if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and v != v):
        return ""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.{SQL_DIGITS}g}"
    return esc(v)


def cmd_report(args) -> int:
    from ..outputs.report import write_report
    from ..store import default_db

    out, _ = _console()
    db = Path(args.db) if args.db else default_db()
    runs = [r for v in (args.runs or []) for r in v.split(",") if r]
    path = write_report(db, args.out, run_id=args.run, registry=args.registry, runs=runs, model=args.model,
                        all_runs=args.all)
    out.print(f"report written to {esc(path)}", highlight=False)
    return 0


def cmd_publish(args) -> int:
    from ..outputs.publish import hub_token, publish, push
    from ..registry import load_registry
    from ..store import default_db

    out, _ = _console()
    token = hub_token() if args.push else None      # fail before writing anything
    summary = publish(load_registry(args.registry), args.out_dir, seed=args.seed, repo_id=args.push,
                      db=Path(args.db) if args.db else default_db())
    cfgs = summary["configs"]
    out.print(f"wrote {len(cfgs)} config(s), {sum(c['rows'] for c in cfgs)} row(s), registry version "
              f"{summary['version']} to {esc(summary['out'])}", highlight=False)
    if args.push:
        url = push(summary["out"], args.push, summary["version"], token=token)
        out.print(f"pushed to {esc(url)}", highlight=False)
    return 0


def cmd_export(args) -> int:
    from ..outputs.export import export
    from ..registry import load_registry
    from ..store import default_db

    out, err = _console()
    written, skipped = export(load_registry(args.registry), args.format, args.out_dir, test_ids=args.tests,
                              level=args.level, seed=args.seed, db=Path(args.db) if args.db else default_db())
    for tid, why in skipped:
        err.print(f"skipped {esc(tid)}: {esc(why)}", highlight=False)
    out.print(f"wrote {len(written)} {args.format} file(s) to {esc(args.out_dir)}", highlight=False)
    return 0


def cmd_show_influence(args) -> int:
    from ..store import default_db

    out, _ = _console()
    for table in show_influence(Path(args.db) if args.db else default_db(), args.run, args.test,
                                level=args.level, top=args.top):
        out.print(table)
    return 0


def show_influence(db: str | Path, run: str, test: str, *, level: str | None = None, top: int = 10) -> list:
    """One rich Table per level: the most influential stimuli, stimulus texts escaped."""
    from rich.markup import escape
    from rich.table import Table

    from ..store.influence import ROLE_NAMES, influence_rows

    run_id, levels = influence_rows(db, run, test, level=level, top=top)
    tables = []
    for lv, res, rows in levels:
        if res["status"] != "ok":
            title = f"{escape(test)} {escape(f'[{lv}]')} run {run_id[:8]}: not run"
            tables.append(Table(title=title))
            continue
        ci = ""
        if res["ci_low"] is not None:
            ci = f", CI [{res['ci_low']:+.3f}, {res['ci_high']:+.3f}]"
        stable = {True: "no single stimulus flips the sign", False: "one stimulus left out flips the sign",
                  None: ""}[res["sign_stable"]]
        title = (f"{escape(test)} {escape(f'[{lv}]')} run {run_id[:8]}: d = {res['effect_size']:+.3f}{ci}; "
                 f"leave-one-out d in [{_f(res['d_loo_min'])}, {_f(res['d_loo_max'])}]; {stable}")
        t = Table("role", "stimulus", "d without it", "change", title=title)
        for role, item, d, delta in rows:
            t.add_row(ROLE_NAMES.get(role, role), escape(item), _f(d), _f(delta))
        tables.append(t)
    return tables


def _f(v) -> str:
    return "-" if v is None or v != v else f"{v:+.3f}"


def cmd_results(args) -> int:
    from ..store import default_db

    out, err = _console()
    db = Path(args.db) if getattr(args, "db", None) else default_db()
    if args.action == "export":
        from ..store.results_io import export_results
        m = export_results(db, args.path)
        rows = ", ".join(f"{t} {e['rows']}" for t, e in m["tables"].items())
        out.print(f"exported {esc(db)} to {esc(args.path)}: {rows} row(s); manifest "
                  f"{esc(Path(args.path) / 'manifest.json')}", highlight=False)
        if m["left_out"]:
            err.print(f"left out (no table or column this EATlas writes): {esc(', '.join(m['left_out']))}",
                      highlight=False)
    else:
        from ..registry import load_registry
        from ..store.results_io import import_results
        r = import_results(db, args.path, wait_s=args.wait, reg=load_registry(getattr(args, "registry", None)))
        added = ", ".join(f"{t} {n}" for t, n in r["added"].items())
        out.print(f"imported {esc(args.path)} into {esc(db)}: {added} row(s) added; {r['runs_skipped']} run(s) "
                  "already present, skipped", highlight=False)
    return 0
