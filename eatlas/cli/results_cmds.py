"""The results' commands: sql, report, publish, export, show-influence, and results export/import."""
from __future__ import annotations

import sys
from pathlib import Path

from ..console import esc
from .common import _console

# `eatlas sql`'s table shows at most this many rows (rich lays a table out whole, which takes minutes for millions
# of rows); --format csv and json stream every row.
TABLE_MAX_ROWS = 1000
TABLE_MAX_CELL = 2000      # characters of a value the table shows; csv and json write every value whole
SQL_DIGITS = 6     # significant digits of a float in `eatlas sql`'s table format (csv and json keep every digit)


def cmd_sql(args) -> int:
    from ..store import default_db
    from ..store.db import sql_result

    out, err = _console()
    db = Path(args.db) if args.db else default_db()
    reg = None
    if not db.exists() and not args.write:
        from ..registry import load_registry
        reg = load_registry(args.registry)
        err.print(f"note: no results file {esc(db)} (yet): runs and results are empty; published_results and the "
                  "views read the registry's published tables", highlight=False)
    with sql_result(db, args.query, write=args.write, reg=reg) as res:
        if args.format == "csv":
            _write_csv(res)
        elif args.format == "json":
            _write_json(res)
        else:
            _print_table(res, out, err, vertical=args.format == "vertical")
    return 0


def _write_csv(res) -> None:
    """Every row, chunk by chunk, each value as :func:`csv_value` writes it, cells that a spreadsheet would run
    neutralised."""
    import csv
    import decimal

    from ..guard import neutralise_cell
    w = csv.writer(sys.stdout, lineterminator="\n")
    if not res.columns:
        sys.stdout.write("\n")     # a statement without a result: an empty line, as before
        return
    w.writerow([neutralise_cell(c) for c in res.columns])
    for chunk in res.rows():       # a number is written as it is (-Infinity, -0.5); anything else neutralised
        w.writerows([csv_value(v) if isinstance(v, (int, float, decimal.Decimal)) else neutralise_cell(csv_value(v))
                     for v in row] for row in chunk)


def csv_value(v) -> str:
    """A value of `eatlas sql --format csv`: NULL an empty cell and NaN ``NaN`` (never the same), infinities
    ``Infinity`` and ``-Infinity``, a float with all its digits, a DECIMAL or HUGEINT exactly as its digits, a BLOB
    its bytes in base64, a STRUCT, LIST or MAP as JSON (as :func:`json_value` writes its parts), text as it is."""
    import json
    import math

    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else repr(v)
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=json_value, ensure_ascii=False, allow_nan=True)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return json_value(v)
    return str(v)       # int (any size), Decimal (its exact digits), str, date and time, UUID, interval


def _write_json(res) -> None:
    """`eatlas sql --format json`: a list of one object per row (a line each), streamed (see :func:`json_value`)."""
    import json
    n = 0
    sys.stdout.write("[")
    for chunk in res.rows():
        for row in chunk:
            exact: dict[str, str] = {}
            text = json.dumps(dict(zip(res.columns, (_exact(v, exact) for v in row))), default=json_value,
                              ensure_ascii=False, allow_nan=True)
            for mark, digits in exact.items():      # a DECIMAL as a JSON number with every digit it has
                text = text.replace(f'"{mark}"', digits, 1)
            sys.stdout.write((",\n" if n else "\n") + text)
            n += 1
    sys.stdout.write("\n]\n" if n else "]\n")


_MARK = "\ue000eatlas-decimal-{}-{}\ue000"       # a private-use mark no stored text can hold in this place


def _exact(v, exact: dict):
    """``v`` with each DECIMAL (also inside a list or struct) replaced by a mark recorded in ``exact`` with its
    digits, written back as a number after json.dumps (which would give a float's digits)."""
    import decimal
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return str(v)
        mark = _MARK.format(id(exact), len(exact))
        exact[mark] = str(v)
        return mark
    if isinstance(v, dict):
        return {k: _exact(x, exact) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_exact(x, exact) for x in v]
    return v


def json_value(v):
    """A value JSON has no type for: every float keeps all its digits (Python's shortest exact form), NaN and
    infinities are written NaN, Infinity and -Infinity (as Python's json and JavaScript's JSON5 read them; SQL
    NULL is null), timestamps are epoch milliseconds (as pandas writes them), a BLOB is its bytes in base64, a
    UUID, interval or other value its text."""
    import base64
    import datetime as dt
    import decimal

    import numpy as np
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return int((v - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1))
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    return str(v)


def _print_table(res, out, err, *, vertical: bool = False) -> None:
    """The rows as a table, or (``vertical``, or when the columns would not fit the terminal unbroken) one block
    per row, a line per column: a header or a word is never broken into fragments."""
    from rich.table import Table

    from .common import fits, print_records

    rows, more = [], False
    for chunk in res.rows(TABLE_MAX_ROWS + 1):
        rows = [tuple(map(_sql_text, row)) for row in chunk[:TABLE_MAX_ROWS]]
        more = len(chunk) > TABLE_MAX_ROWS
        break
    columns = [str(c) for c in res.columns]
    if not vertical and not fits(out, columns, rows, flexible=len(columns)):
        vertical = True
        err.print(f"note: {len(columns)} columns are too wide for {out.width} characters, so each row is a block "
                  "of lines (--format vertical); --format csv or json writes them for other programs", highlight=False,
                  soft_wrap=True)
    if vertical and not rows:
        out.print(esc(f"columns: {', '.join(columns)}"), highlight=False)
    elif vertical:
        print_records(out, columns, rows)
    else:
        t = Table()                 # every value whole: a long one wraps at its spaces, never cut with '…'
        for c in columns:
            t.add_column(esc(c), overflow="fold")
        for r in rows:
            t.add_row(*map(esc, r))
        out.print(t)
    n = len(rows)
    if more:
        out.print(f"{n} row(s) shown, more follow: the table shows the first {TABLE_MAX_ROWS}; --format csv or "
                  "--format json writes every row", highlight=False)
    else:
        out.print(f"{n} row(s)")


def _sql_text(v) -> str:
    """A cell of `eatlas sql`'s table as text: NULL blank, NaN and infinities as such, a float to SQL_DIGITS
    significant digits, control characters (and a BLOB's bytes) as escapes; a value longer than TABLE_MAX_CELL
    characters cut, with a note (rich would take minutes to fold a cell of megabytes)."""
    from ..console import visible

    if v is None:
        return ""
    if isinstance(v, float):
        return "NaN" if v != v else f"{v:.{SQL_DIGITS}g}"
    if isinstance(v, (bytes, bytearray, memoryview)) and len(v) > TABLE_MAX_CELL:
        return visible(bytes(v[:TABLE_MAX_CELL])) + _cut_note(len(v), "bytes")
    if isinstance(v, str) and len(v) > TABLE_MAX_CELL:
        return visible(v[:TABLE_MAX_CELL]) + _cut_note(len(v), "characters")
    text = visible(v)
    return text[:TABLE_MAX_CELL] + _cut_note(len(text), "characters") if len(text) > TABLE_MAX_CELL else text


def _sql_cell(v) -> str:
    """A cell of `eatlas sql`'s table, ready for rich markup."""
    return esc(_sql_text(v))


def _cut_note(n: int, unit: str) -> str:
    return f" … [cut: {n:,} {unit}; --format csv or --format json writes it whole]"


def cmd_report(args) -> int:
    from ..outputs.report import write_report
    from ..store import default_db

    if args.alpha is not None:
        from ..errors import EatlasError
        raise EatlasError("report takes no --alpha: '*' marks what each run found significant after Holm-Bonferroni "
                          "correction at the alpha it ran with", field="--alpha",
                          hint="leave it out; for another level, run again: eatlas run --alpha X")
    out, _ = _console()
    db = Path(args.db) if args.db else default_db()
    runs = [r for v in (args.runs or []) for r in v.split(",") if r]
    path = write_report(db, args.out, run_id=args.run, registry=args.registry, runs=runs, model=args.model,
                        all_runs=args.all)
    out.print(f"report written to {esc(path)}", highlight=False)
    return 0


def cmd_site(args) -> int:
    from ..outputs.site import write_site
    from ..store import default_db

    out, _ = _console()
    db = Path(args.db) if args.db else default_db()
    s = write_site(db, args.out, registry=args.registry, runs=args.runs, model=args.model, all_runs=args.all,
                   duckdb_wasm=args.duckdb_wasm, figures=args.figures, dataset=args.dataset,
                   download=False if args.offline else None)
    tables = ", ".join(f"{name} {n}" for name, n in s["tables"].items())
    wasm = (f"copied into the site ({s['duckdb_wasm_bytes'] / 1e6:.0f} MB: its SQL box works offline)"
            if s["duckdb_wasm"] == "local" else f"not copied ({s['duckdb_wasm_why']}): the SQL page loads it from "
            "jsDelivr (pinned, hashed) and needs the network")
    out.print(f"site written to {esc(s['out'])}: {s['tests']} test page(s), {s['figures']} forest plot(s), "
              f"{s['results']} result(s) of {s['runs']} run(s) ({esc(s['selection'])}); DuckDB-WASM {esc(wasm)}; "
              f"tables (rows): {esc(tables)}", highlight=False, soft_wrap=True)
    if s["duckdb_wasm"] != "local" and s["duckdb_wasm_why"] != "built with --duckdb-wasm cdn":
        from ..outputs.site import NPM_PACK
        out.print(esc(f"to bundle it: run 'eatlas site {s['out']}' again where registry.npmjs.org can be reached, or "
                      f"mkdir wasm && cd wasm && {NPM_PACK} && cd .. && eatlas site {s['out']} --duckdb-wasm wasm"),
                  highlight=False, soft_wrap=True)
    out.print(f"view it: python -m http.server -d {esc(s['out'])} (then open http://127.0.0.1:8000/)",
              highlight=False, soft_wrap=True)
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
        if res["status"] != "ok" or res["effect_size"] is None:
            why = "not run" if res["status"] != "ok" else "no effect size"
            title = f"{escape(test)} {escape(f'[{lv}]')} run {run_id[:8]}: {why}"
            tables.append(Table(title=title))
            continue
        ci = ""
        method, level = res.get("ci_method"), res.get("ci_level")
        name = f"{level:.0%} CI" if level is not None else "CI"
        if method == "concepts" and res.get("concepts_estimable") is False:
            ci = "; the concepts' d: not estimable (the attribute words' noise swamps the targets' spread)"
        elif res["ci_low"] is not None:     # the interval beside the estimate it is for
            est = {"concepts": ("the concepts' d", res.get("d_concepts")),
                   "inversion": ("d_corrected", res.get("d_corrected"))}.get(method)
            ci = (f"; {est[0]} {est[1]:+.3f}" if est and est[1] is not None else "") + \
                f", {name}{f' ({method})' if method else ''} [{res['ci_low']:+.3f}, {res['ci_high']:+.3f}]"
        stable = {True: "no single stimulus flips the sign", False: "one stimulus left out flips the sign",
                  None: ""}[res["sign_stable"]]
        title = (f"{escape(test)} {escape(f'[{lv}]')} run {run_id[:8]}: sample d = {res['effect_size']:+.3f}"
                 f"{escape(ci)}; "
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
