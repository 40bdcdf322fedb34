"""Results that travel: ``eatlas results export DIR`` and ``eatlas results import DIR|FILE.duckdb``.

An export is plain hive-partitioned parquet, written by DuckDB's own ``COPY ... (FORMAT parquet,
PARTITION_BY ...)``: ``runs/model=.../``, ``results/model=.../test_id=.../`` and each method table
(``mleat_results``, ``ceat_results``, ...) partitioned the same way, and ``sweep_failures/model=.../`` (a
sweep's failed models), beside a ``manifest.json`` that
names the EATlas version, the schema version, the registry state of the runs, every table's column
types and every file with its sha256. Anyone reads it with DuckDB, pandas or Spark, locally or from
the Hugging Face Hub (``read_parquet('hf://datasets/ORG/NAME/results/**/*.parquet', hive_partitioning=true)``).

An import checks everything before it writes anything: the manifest's format and schema version,
every file's checksum, that every file reads and every column is one this version knows. It then
merges the runs not yet in the local store (by run id: importing twice adds nothing) and the sweep
failures it lacks (by sweep_id, model and config_key) in one transaction, so a failed import leaves the
store as it was.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa

from ..errors import EatlasError
from ..files import new_temp_dir, umask_folders
from ..guard import sha256_of
from .db import SWEEP_FAILURES as FAILURES_DDL
from .db import connect, init_schema, rollback

FORMAT = "eatlas-results"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
CORE = ("runs", "results")
# Tables of the store that are not results of runs (rebuilt from the registry by every run; which printed models
# a run is, eatlas.encoders.identity, is worked out again by the store that imports it).
NOT_EXPORTED = ("published_results", "model_matches", "model_match_state")
HIVE = ("model", "test_id")
# Tables exported beside the run tables though they name no run: a sweep's failed models, merged on import by
# (sweep_id, model, config_key), their identity.
FAILURES = "sweep_failures"
FAILURE_KEY = ("sweep_id", "model", "config_key")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _run_tables(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> list[str]:
    """The store's tables of run results: runs, results, then every method table with a run_id column."""
    where = f"AND table_catalog = {_lit(catalog)}" if catalog else ""
    rows = con.execute(f"""SELECT table_name FROM information_schema.tables
                           WHERE table_type = 'BASE TABLE' AND table_schema = 'main' {where}
                           ORDER BY table_name""").fetchall()
    names = [r[0] for r in rows]
    out = [t for t in CORE if t in names]
    for t in names:
        if t in CORE or t in NOT_EXPORTED:
            continue
        if t == FAILURES:
            out.append(t)
            continue
        cols = {c[0] for c in con.execute(f"DESCRIBE {(_q(catalog) + '.') if catalog else ''}{_q(t)}").fetchall()}
        if "run_id" in cols:
            out.append(t)
    return out


def _columns(con, relation: str) -> list[list[str]]:
    return [[c[0], c[1]] for c in con.execute(f"DESCRIBE {relation}").fetchall()]


# ------------------------------------------------------------------------------------------ export
def export_results(db: str | Path, out: str | Path) -> dict:
    """Write the store's runs, results and method tables under ``out`` as hive-partitioned parquet with a
    manifest; returns the manifest. ``out`` must be absent, empty, or an earlier export (its manifest
    lists every file in it): a folder holding anything else is refused, never overwritten."""
    from .. import __version__

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise EatlasError("not a folder", file=str(out), hint="export writes a folder of parquet files")
    old = _own_files(out) if out.exists() else set()
    con = connect(db, read_only=True)
    try:
        tables = _run_tables(con)
        if "runs" not in tables:
            raise EatlasError("no runs to export", file=str(db), hint="run 'eatlas run' first")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = new_temp_dir(out.parent, f".{out.name}.")      # its contents become the user's files: umask modes
        try:
            manifest = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "eatlas_version": __version__,
                        "exported_at": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
                        "registry": _registry_state(con), "tables": {}}
            for t in tables:
                cols = [c[0] for c in con.execute(f"DESCRIBE {_q(t)}").fetchall()]
                if t == "runs":
                    rel, parts = f"SELECT * FROM {_q(t)}", ["model"]
                elif "model" in cols:
                    rel, parts = f"SELECT * FROM {_q(t)}", [p for p in HIVE if p in cols]
                else:       # a method table names its run only: its model comes from runs
                    rel = (f"SELECT m.*, r.model FROM {_q(t)} m JOIN runs r USING (run_id)")
                    parts = ["model"] + (["test_id"] if "test_id" in cols else [])
                n = con.execute(f"SELECT count(*) FROM ({rel})").fetchall()[0][0]
                entry = {"columns": _columns(con, f"({rel})"), "partition_by": parts, "rows": n,
                         "model_from_runs": "model" not in cols, "files": {}}
                if n:
                    con.execute(f"COPY ({rel}) TO {_lit(tmp / t)} (FORMAT parquet, PARTITION_BY ({', '.join(parts)}))")
                    for f in sorted((tmp / t).rglob("*.parquet")):
                        entry["files"][f.relative_to(tmp).as_posix()] = sha256_of(f)
                manifest["tables"][t] = entry
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            umask_folders(tmp)          # DuckDB makes its partition folders 0o755 whatever the umask
            _replace(out, tmp, old)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        con.close()
    return manifest


def _registry_state(con) -> dict:
    """The registry commits the exported runs ran on, and each test version they hold."""
    commits = [r[0] for r in con.execute(
        "SELECT DISTINCT json_extract_string(registry, '$.commit') c FROM runs WHERE c IS NOT NULL ORDER BY c"
    ).fetchall()]
    tests = {}
    has_results = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'results'"
                              ).fetchall()[0][0]
    if has_results:
        for tid, ver in con.execute("SELECT DISTINCT test_id, test_version FROM results ORDER BY 1, 2").fetchall():
            tests.setdefault(tid, []).append(ver)
    return {"commits": commits, "test_versions": tests}


def _own_files(out: Path) -> set[Path]:
    """The files of an earlier export in ``out`` (which an export may replace); refuses a folder holding any
    file that export did not write."""
    files = {p for p in out.rglob("*") if p.is_file()}
    if not files:
        return set()
    m = out / MANIFEST
    if not m.is_file():
        raise EatlasError("folder is not empty and holds no EATlas export manifest", file=str(out),
                          hint="export into a new or empty folder; nothing was written")
    try:
        manifest = json.loads(m.read_text(encoding="utf-8"))
        listed = {out / f for e in manifest["tables"].values() for f in e["files"]} | {m}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EatlasError("unreadable export manifest", file=str(m),
                          hint="export into a new or empty folder; nothing was written") from None
    foreign = sorted(files - listed)
    if foreign:
        raise EatlasError(f"folder holds {len(foreign)} file(s) an export did not write, e.g. "
                          f"{foreign[0].relative_to(out)}", file=str(out),
                          hint="export into a new or empty folder; nothing was written")
    return files


def _replace(out: Path, tmp: Path, old: set[Path]) -> None:
    """Move the new export from ``tmp`` into ``out``, removing only the earlier export's own files."""
    for f in old:
        f.unlink()
    if out.exists():
        for d in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(d.iterdir()):
                d.rmdir()
    out.mkdir(exist_ok=True)
    for child in tmp.iterdir():
        os.replace(child, out / child.name)


# ------------------------------------------------------------------------------------------ unsaved work
# A run (or a sweep's failures) that was computed but could not be written into the database (in use, disk
# full, a schema that drifted) is kept here, beside the database, as an export folder of its own.
UNSAVED = "eatlas-unsaved"


def unsaved_folder(db: str | Path, name: str) -> Path:
    return Path(db).parent / UNSAVED / name


def save_unsaved(db: str | Path, name: str, reg, *, run: dict | None = None, results: list[dict] | None = None,
                 tables: dict | None = None, failures: list[dict] | None = None) -> Path:
    """Keep work the database could not take: ``run`` (with its ``results`` and method ``tables``) and/or
    sweep ``failures`` (rows of sweep_failures), written exactly as ``eatlas results export`` writes them (into
    a fresh results file first, then exported from it by :func:`export_results`) into
    ``eatlas-unsaved/<name>/`` beside ``db``, which ``eatlas results import`` merges later. Returns the folder;
    nothing is written into ``db``."""
    import pandas as pd

    from .db import write_run

    out = unsaved_folder(db, name)
    if out.exists():
        raise EatlasError("an unsaved export of that name exists already", file=str(out),
                          hint="import it ('eatlas results import'), or move it away")
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = new_temp_dir(out.parent, f".{name}.")
    try:
        tmp_db = scratch / "unsaved.duckdb"
        if run is not None:
            write_run(tmp_db, run, results or [], reg, extra_tables=tables)
        con = connect(tmp_db)
        try:
            con.execute("BEGIN TRANSACTION")
            init_schema(con)
            con.execute(FAILURES_DDL)
            if failures:
                con.register("_fail", pd.DataFrame(failures))
                con.execute("INSERT INTO sweep_failures BY NAME SELECT * FROM _fail")
                con.unregister("_fail")
            con.execute("COMMIT")
        finally:
            con.close()
        export_results(tmp_db, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


# ------------------------------------------------------------------------------------------ import
def import_results(db: str | Path, src: str | Path, *, wait_s: float = 0.0, reg=None) -> dict:
    """Merge an export folder or another results file into ``db``: every run whose id the store lacks, with
    its results and method-table rows, in one transaction. Returns {table: rows added} and the runs skipped."""
    src = Path(src)
    mem = duckdb.connect(":memory:")
    try:
        if src.is_dir():
            relations = _stage_folder(mem, src)
        elif src.is_file():
            relations = _stage_duckdb(mem, src)
        else:
            raise EatlasError("no such file or folder", file=str(src),
                              hint="an 'eatlas results export' folder or an eatlas .duckdb results file")
        return _merge(db, mem, relations, wait_s=wait_s, reg=reg, src=src)
    finally:
        mem.close()


def _known_columns() -> dict[str, dict[str, str]]:
    con = duckdb.connect(":memory:")
    try:
        init_schema(con)
        con.execute(FAILURES_DDL)
        from .db import tables
        # every table of run results, each method's included; an open table (one column per pair of groups,
        # eatlas.methods.Table(open=True)) may hold columns no declaration names
        names = dict.fromkeys([*CORE, *(t.name for t in tables() if not t.open), FAILURES])
        return {t: dict((c[0], c[1]) for c in con.execute(f"DESCRIBE {t}").fetchall()) for t in names}
    finally:
        con.close()


def _check_columns(table: str, cols: list[str], where: str) -> None:
    known = _known_columns()
    if table in known:
        unknown = [c for c in cols if c not in known[table]]
        if unknown:
            raise EatlasError(f"table {table} has column(s) this EATlas does not know: {', '.join(unknown)}",
                              file=where, hint="it was written by a newer EATlas: upgrade eatlas; nothing was written")
        lacking = [c for c in known[table] if c not in cols and ((table in CORE and c in ("run_id", "model"))
                                                                   or (table == FAILURES and c in FAILURE_KEY))]
        if lacking:
            raise EatlasError(f"table {table} lacks column(s) {', '.join(lacking)}", file=where,
                              hint="not an EATlas results export; nothing was written")


def _stage_folder(mem, src: Path) -> list[str]:
    """Check an export folder completely and load its tables into ``mem`` (tables named like the store's)."""
    m = src / MANIFEST
    if not m.is_file():
        raise EatlasError("folder holds no manifest.json", file=str(src),
                          hint="not an 'eatlas results export' folder; nothing was written")
    try:
        manifest = json.loads(m.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise EatlasError(f"manifest is not valid JSON ({e})", file=str(m), hint="nothing was written") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        raise EatlasError(f"not an EATlas results manifest (format {fmt!r})", file=str(m), field="format",
                          hint=f"expected {FORMAT!r}; nothing was written")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        raise EatlasError(f"schema version {version!r} is unknown to this EATlas (it reads 1 to {SCHEMA_VERSION})",
                          file=str(m), field="schema_version",
                          hint="written by a newer EATlas: upgrade eatlas; nothing was written")
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or "runs" not in tables:
        raise EatlasError("manifest lists no runs table", file=str(m), field="tables", hint="nothing was written")
    for entry in tables.values():
        for rel, digest in (entry.get("files") or {}).items():
            f = src / rel
            if not f.is_file():
                raise EatlasError("file listed in the manifest is missing", file=str(f), hint="nothing was written")
            if sha256_of(f) != digest:
                raise EatlasError("file does not match its checksum in the manifest (corrupt or changed)",
                                  file=str(f), hint="export it again; nothing was written")
    relations = []
    for name, entry in tables.items():
        files = sorted(entry.get("files") or {})
        cols = [c[0] for c in entry.get("columns") or []]
        drop_model = bool(entry.get("model_from_runs"))
        _check_columns(name, [c for c in cols if not (drop_model and c == "model")], str(m))
        target = f"_imp_{name}"
        if files:
            parts = entry.get("partition_by") or []
            types = "{" + ", ".join(f"{_lit(p)}: VARCHAR" for p in parts) + "}"
            paths = "[" + ", ".join(_lit(src / f) for f in files) + "]"
            try:
                mem.execute(f"CREATE TABLE {_q(target)} AS SELECT * FROM read_parquet({paths}, hive_partitioning=true, "
                            f"hive_types={types}, union_by_name=true)")
            except duckdb.Error as e:
                raise EatlasError(f"unreadable parquet: {str(e).strip().splitlines()[0]}", file=str(src / name),
                                  hint="nothing was written") from None
            if drop_model:
                mem.execute(f"ALTER TABLE {_q(target)} DROP COLUMN model")
        else:
            mem.execute(f"CREATE TABLE {_q(target)} AS SELECT * FROM (SELECT 1) WHERE false")
            mem.execute(f"ALTER TABLE {_q(target)} ADD COLUMN run_id VARCHAR")
            mem.execute(f"ALTER TABLE {_q(target)} DROP COLUMN \"1\"")
        relations.append(name)
    return relations


def _stage_duckdb(mem, src: Path) -> list[str]:
    try:
        mem.execute(f"ATTACH {_lit(src.resolve())} AS src (READ_ONLY)")
    except duckdb.Error as e:
        raise EatlasError(f"cannot open: {str(e).strip().splitlines()[0]}", file=str(src),
                          hint="an eatlas .duckdb results file or an export folder; nothing was written") from None
    tables = _run_tables(mem, "src")
    if "runs" not in tables:
        raise EatlasError("holds no runs table", file=str(src), hint="not an eatlas results file; nothing was written")
    for t in tables:
        cols = [c[0] for c in mem.execute(f"DESCRIBE src.{_q(t)}").fetchall()]
        _check_columns(t, cols, str(src))
        mem.execute(f"CREATE TABLE {_q('_imp_' + t)} AS SELECT * FROM src.{_q(t)}")
    mem.execute("DETACH src")
    return tables


def _merge(db, mem, relations: list[str], *, wait_s: float, reg, src: Path) -> dict:
    """Write the staged tables' new runs into the store, in one transaction."""
    from ..registry.base import load_registry
    from .db import refresh_conventions, refresh_published

    con = connect(db, wait_s=wait_s)
    added, skipped = {}, 0
    try:
        con.execute("BEGIN TRANSACTION")
        init_schema(con)
        if not con.execute("SELECT count(*) FROM published_results").fetchall()[0][0]:
            refresh_published(con, reg or load_registry())
        if not con.execute("SELECT count(*) FROM published_conventions").fetchall()[0][0]:
            refresh_conventions(con, reg or load_registry())
        ids = mem.execute("SELECT DISTINCT run_id FROM _imp_runs").fetchdf()
        con.register("_ids", ids)
        have = {r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM _ids)"
                                          ).fetchall()}
        con.unregister("_ids")
        skipped = len(have)
        if FAILURES in relations:
            added[FAILURES] = _merge_failures(con, mem)
        # runs first: results and the method tables reference them
        for t in sorted((r for r in relations if r != FAILURES),
                        key=lambda t: (CORE.index(t) if t in CORE else len(CORE), t)):
            frame = _arrow(mem, f"SELECT * FROM {_q('_imp_' + t)}")
            con.register("_new", frame)
            if have:
                con.register("_have", pa.table({"run_id": sorted(have)}))
                sel = "SELECT * FROM _new WHERE run_id NOT IN (SELECT run_id FROM _have)"
            else:
                sel = "SELECT * FROM _new"
            n = con.execute(f"SELECT count(*) FROM ({sel})").fetchall()[0][0]
            if t not in CORE and t != "mleat_results" and n:
                con.execute(f"CREATE TABLE IF NOT EXISTS {_q(t)} AS SELECT * FROM _new WHERE false")
                have_cols = {r[0] for r in con.execute(f"DESCRIBE {_q(t)}").fetchall()}
                for col, typ, *_ in con.execute("DESCRIBE SELECT * FROM _new").fetchall():
                    if col not in have_cols:
                        typ = "VARCHAR" if typ.strip('"') == "NULL" else typ
                        con.execute(f"ALTER TABLE {_q(t)} ADD COLUMN {_q(col)} {typ}")
            if n:
                con.execute(f"INSERT INTO {_q(t)} BY NAME {sel}")
            added[t] = n
            con.unregister("_new")
            if have:
                con.unregister("_have")
        from ..encoders import identity
        identity.refresh(con, reg or load_registry())   # which printed models the new runs are (model_matches)
        con.execute("COMMIT")
    except BaseException as e:
        rollback(con)
        if isinstance(e, duckdb.Error):
            raise EatlasError(f"import failed, nothing was written: {str(e).strip().splitlines()[0]}",
                              file=str(src)) from None
        raise
    finally:
        con.close()
    return {"added": added, "runs_skipped": skipped}


def _merge_failures(con, mem) -> int:
    """Add the sweep failures the store lacks (by sweep_id, model, config_key); returns how many."""
    cols = {r[0] for r in mem.execute(f"DESCRIBE {_q('_imp_' + FAILURES)}").fetchall()}
    if not set(FAILURE_KEY) <= cols:        # an export whose sweep_failures table was empty
        return 0
    con.execute(FAILURES_DDL)
    con.register("_fail", _arrow(mem, f"SELECT DISTINCT ON ({', '.join(FAILURE_KEY)}) * FROM {_q('_imp_' + FAILURES)}"))
    try:
        new = ("SELECT * FROM _fail n WHERE NOT EXISTS (SELECT 1 FROM sweep_failures f WHERE "
               + " AND ".join(f"f.{c} = n.{c}" for c in FAILURE_KEY) + ")")
        n = con.execute(f"SELECT count(*) FROM ({new})").fetchall()[0][0]
        if n:
            con.execute(f"INSERT INTO sweep_failures BY NAME {new}")
        return n
    finally:
        con.unregister("_fail")


def _arrow(con, sql: str) -> pa.Table:
    """A query's result as a pyarrow table (DuckDB 1.x and 2.x name the call differently)."""
    res = con.sql(sql)
    for name in ("to_arrow_table", "fetch_arrow_table"):
        if hasattr(res, name):
            return getattr(res, name)()
    out = res.arrow()
    return out.read_all() if hasattr(out, "read_all") else out
