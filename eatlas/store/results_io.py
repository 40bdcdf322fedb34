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
from urllib.parse import unquote

import duckdb
import pyarrow as pa

from ..errors import EatlasError
from ..files import new_temp_dir, umask_folders
from ..guard import sha256_of
from .db import (
    OPEN_COLUMN_TYPES,
    _check_header,
    check_schema,
    connect,
    declared_tables,
    duck,
    hostile_objects,
    init_schema,
    rollback,
    schema_problems,
)
from .db import SWEEP_FAILURES as FAILURES_DDL

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


def _run_tables(con: duckdb.DuckDBPyConnection) -> tuple[list[str], list[str]]:
    """The store's tables of run results that this EATlas declares (eatlas.store.db.declared_tables: runs, results,
    influence, run_inputs, sweep_failures, each method's), runs and results first; and the store's other tables
    that hold a run_id (a user's own, a method no longer installed), which an export leaves out."""
    names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = "
                                       "'BASE TABLE' AND table_schema = 'main' ORDER BY table_name").fetchall()]
    declared = declared_tables()
    names = [t for t in names if t not in NOT_EXPORTED]
    out = [t for t in CORE if t in names] + [t for t in names if t not in CORE and t in declared
                                             and declared[t].runs]
    other = [t for t in names if t not in declared and "run_id" in
             {c[0] for c in con.execute(f"DESCRIBE {_q(t)}").fetchall()}]
    return out, other


def _columns(con, relation: str) -> list[list[str]]:
    return [[c[0], c[1]] for c in con.execute(f"DESCRIBE {relation}").fetchall()]


def _select(con, table: str, left_out: list[str]) -> str:
    """The columns of ``table`` an export writes: the declared ones the store has, each as its declared type (a
    store that drifted is exported as this EATlas writes, its further columns left out and named in
    ``left_out``); an open table's further columns of a plain type too."""
    d = declared_tables()[table]
    out = []
    for c, typ in con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                              "AND table_schema = 'main' AND table_catalog = current_database() "
                              "ORDER BY ordinal_position", [table]).fetchall():
        want = d.columns.get(c)
        if want is None and d.open and typ in OPEN_COLUMN_TYPES:
            want = typ
        if want is None:
            left_out.append(f"{table}.{c}")
        else:
            out.append(_q(c) if want == typ else f"CAST({_q(c)} AS {want}) AS {_q(c)}")
    return ", ".join(out)


# ------------------------------------------------------------------------------------------ export
def export_results(db: str | Path, out: str | Path) -> dict:
    """Write the store's runs, results and method tables under ``out`` as hive-partitioned parquet with a
    manifest; returns the manifest, and under ``left_out`` (not written to the file) the tables and columns of
    the store this EATlas does not declare, which were not exported. ``out`` must be absent, empty, or an
    earlier export (its manifest lists every file in it with the content it has): a folder holding anything
    else is refused, never overwritten."""
    from .. import __version__

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise EatlasError("not a folder", file=str(out), hint="export writes a folder of parquet files")
    old = _own_files(out, db) if out.exists() else set()
    if not Path(db).exists():
        raise EatlasError("no such database", file=str(db), hint="run 'eatlas run' first, or pass --db FILE")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_temp_dir(out.parent, f".{out.name}.")      # its contents become the user's files: umask modes
    try:
        con = connect(db, read_only=True, writes_to=tmp)   # sandboxed: DuckDB writes into tmp and nowhere else
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tables, other = _run_tables(con)
        if "runs" not in tables:
            raise EatlasError("no runs to export", file=str(db), hint="run 'eatlas run' first")
        left_out = list(other)
        try:
            manifest = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "eatlas_version": __version__,
                        "exported_at": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
                        "registry": _registry_state(con), "tables": {}}
            for t in tables:
                cols = [c[0] for c in con.execute(f"DESCRIBE {_q(t)}").fetchall()]
                sel = _select(con, t, left_out)
                if t == "runs":
                    rel, parts = f"SELECT {sel} FROM {_q(t)}", ["model"]
                elif "model" in cols:
                    rel, parts = f"SELECT {sel} FROM {_q(t)}", [p for p in HIVE if p in cols]
                else:       # a method table names its run only: its model comes from runs
                    rel = f"SELECT m.*, r.model FROM (SELECT {sel} FROM {_q(t)}) m JOIN runs r USING (run_id)"
                    parts = ["model"] + (["test_id"] if "test_id" in cols else [])
                try:
                    n = con.execute(f"SELECT count(*) FROM ({rel})").fetchall()[0][0]
                except duckdb.Error as e:
                    raise EatlasError(f"table {t} cannot be exported as this EATlas writes it: "
                                      f"{str(e).strip().splitlines()[0]}", file=str(db),
                                      hint="the store was changed by other means; nothing was written") from None
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
        shutil.rmtree(tmp, ignore_errors=True)
    return {**manifest, "left_out": left_out}


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


def _own_files(out: Path, db: str | Path | None = None) -> set[Path]:
    """The files of an earlier export in ``out`` (which an export may replace): each listed in its manifest with
    the content it has now. Refuses a folder holding any other file (one the user put there, or one changed since,
    even under a name the manifest lists): nothing of it is removed."""
    files = {p for p in out.rglob("*") if p.is_file() or p.is_symlink()}
    if not files:
        return set()
    m = out / MANIFEST
    if not m.is_file() or m.is_symlink():
        raise EatlasError("folder is not empty and holds no EATlas export manifest", file=str(out),
                          hint="export into a new or empty folder; nothing was written")
    try:
        manifest = json.loads(m.read_text(encoding="utf-8"))
        listed = {rel: digest for e in manifest["tables"].values() for rel, digest in e["files"].items()}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in listed.items()):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, OSError):
        raise EatlasError("unreadable export manifest", file=str(m),
                          hint="export into a new or empty folder; nothing was written") from None
    from ..guard import outside_reason, protected_reason
    for rel in listed:      # a manifest someone else wrote names nothing outside the folder, nor the database
        why = outside_reason(out, rel) or protected_reason(out / rel, db=db)
        if why:
            raise EatlasError(f"the export manifest lists {rel!r}, which an export never writes ({why}); refused, "
                              "nothing was written or removed", file=str(m),
                              hint="export into a new or empty folder")
    own = {m}
    for f in files - {m}:
        rel = f.relative_to(out).as_posix()
        if rel in listed and not f.is_symlink() and sha256_of(f) == listed[rel]:
            own.add(f)
    foreign = sorted(files - own)
    if foreign:
        raise EatlasError(f"folder holds {len(foreign)} file(s) an export did not write or that changed since, e.g. "
                          f"{foreign[0].relative_to(out)}", file=str(out),
                          hint="export into a new or empty folder; nothing was written")
    return own


def _replace(out: Path, tmp: Path, old: set[Path]) -> None:
    """Move the new export from ``tmp`` into ``out``, removing only the earlier export's own files: through
    descriptors of the two folders, no symbolic link followed (eatlas.files.descend), so a folder of the export
    turned into a link after the check carries nothing elsewhere and removes nothing there."""
    from .. import files as _files
    if _files.SAFE:
        out.mkdir(exist_ok=True)
        pfd = _files.open_dir(out.parent)
        try:
            ofd = _files.descend(pfd, [out.name], shown=out.parent)
        except _files.LinkOnTheWay as e:
            raise EatlasError(f"will not export there: {e.strerror}", file=str(out),
                              hint="export into a new folder") from None
        finally:
            os.close(pfd)
        try:
            for f in sorted(old):
                try:
                    _files.unlink_under(ofd, f.relative_to(out).as_posix(), shown=out)
                except FileNotFoundError:
                    pass
                except _files.LinkOnTheWay as e:
                    raise EatlasError(f"will not export there: {e.strerror}", file=str(f),
                                      hint="a folder of the export changed while it was written; export into a "
                                           "new folder") from None
            for base, _dirs, _here in sorted(os.walk(out, topdown=False), key=lambda w: -len(w[0])):
                rel = Path(base).relative_to(out)
                if rel.parts:
                    try:
                        pfd = _files.descend(ofd, rel.parts[:-1], shown=out)
                    except (OSError, _files.LinkOnTheWay):
                        continue
                    try:
                        os.rmdir(rel.parts[-1], dir_fd=pfd)
                    except OSError:
                        pass
                    finally:
                        os.close(pfd)
            tfd = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW)
            try:
                for child in os.listdir(tfd):
                    _files.rename_into(tfd, child, ofd)
            finally:
                os.close(tfd)
        finally:
            os.close(ofd)
        return
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
# What an import reads is data another lab sends: checked completely before anything is written (see the module's
# docstring). Limits keep a hostile export from exhausting memory before the checks speak.
MAX_MANIFEST_BYTES = 64 << 20
NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
COLUMN = r"^[^\x00-\x1f\x7f]{1,256}$"
SHA256 = r"^[0-9a-f]{64}$"


def _manifest_model():
    """The manifest's declared shape (pydantic): types, fields and nesting, nothing else."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, StringConstraints

    Name = Annotated[str, StringConstraints(pattern=NAME)]
    Column = Annotated[str, StringConstraints(pattern=COLUMN)]
    Text = Annotated[str, StringConstraints(max_length=1024)]
    Digest = Annotated[str, StringConstraints(pattern=SHA256)]
    RelPath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

    class Entry(Strict):
        columns: list[Annotated[list[Column], Field(min_length=2, max_length=2)]] = Field(max_length=10_000)
        partition_by: list[Literal["model", "test_id"]] = Field(max_length=2)
        rows: int = Field(ge=0)
        model_from_runs: bool
        files: dict[RelPath, Digest] = Field(max_length=1_000_000)

    class RegistryState(Strict):
        commits: list[Text] = Field(max_length=100_000)
        test_versions: dict[Text, list[Text]] = Field(max_length=100_000)

    class Manifest(Strict):
        format: Literal[FORMAT]
        schema_version: int = Field(ge=1, le=SCHEMA_VERSION)
        eatlas_version: Text
        exported_at: Text
        registry: RegistryState
        tables: dict[Name, Entry] = Field(max_length=1000)

    return Manifest


def import_results(db: str | Path, src: str | Path, *, wait_s: float = 0.0, reg=None) -> dict:
    """Merge an export folder or another results file into ``db``: every run whose id the store lacks, with
    its results and method-table rows, in one transaction. Returns {table: rows added} and the runs skipped.
    Everything is checked first (see the module's docstring); a failed import writes nothing."""
    src = Path(src)
    check_schema(db)                # a store that drifted is refused (with its repair) before anything is read
    mem = duck()
    try:
        if src.is_dir():
            relations, version, listed = _stage_folder(mem, src)
            where = src / MANIFEST
        elif src.is_file():
            relations, version, listed = _stage_duckdb(mem, src), None, None
            where = src
        else:
            raise EatlasError("no such file or folder", file=str(src),
                              hint="an 'eatlas results export' folder or an eatlas .duckdb results file")
        _check_staged(mem, relations, str(where), version, listed)
        _check_runs_agree(mem, relations, str(where))
        return _merge(db, mem, relations, wait_s=wait_s, reg=reg, src=src)
    finally:
        mem.close()


def _refuse(message: str, where, *, field: str | None = None, hint: str = "nothing was written"):
    raise EatlasError(message, file=str(where), field=field, hint=hint)


def _newer(version: str | None) -> bool | None:
    """Whether an export's EATlas version is newer than this one (None: not known)."""
    from packaging.version import InvalidVersion, Version

    from .. import __version__
    try:
        return Version(str(version)) > Version(__version__)
    except (InvalidVersion, TypeError):
        return None


def _older(version: str | None) -> bool:
    """Whether an export's EATlas version is older than this one (an unreadable version is not)."""
    from packaging.version import InvalidVersion, Version

    from .. import __version__
    try:
        return Version(str(version)) < Version(__version__)
    except (InvalidVersion, TypeError):
        return False


def _who_knows(version: str | None) -> str:
    """Which EATlas would know a table or column this one does not (the hint of such a refusal)."""
    from .. import __version__
    if version and _newer(version):
        return f"it was written by EATlas {version}, newer than this {__version__}: upgrade to {version} or later"
    return (f"no EATlas up to {__version__} writes it" + (f" (the export says EATlas {version} wrote it)"
                                                         if version else "") + "; nothing was written")


def _read_manifest(src: Path) -> dict:
    m = src / MANIFEST
    if not m.is_file() or not _inside(src, m):
        _refuse("folder holds no manifest.json", src, hint="not an 'eatlas results export' folder; nothing was written")
    if m.stat().st_size > MAX_MANIFEST_BYTES:
        _refuse(f"manifest is larger than {MAX_MANIFEST_BYTES >> 20} MiB", m)
    try:
        manifest = json.loads(m.read_text(encoding="utf-8"))
    except RecursionError:
        _refuse("manifest is nested too deeply", m)
    except (ValueError, UnicodeDecodeError) as e:
        _refuse(f"manifest is not valid JSON ({e})", m)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        _refuse(f"not an EATlas results manifest (format {fmt!r})", m, field="format",
                hint=f"expected {FORMAT!r}; nothing was written")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        _refuse(f"schema version {version!r} is unknown to this EATlas (it reads 1 to {SCHEMA_VERSION})", m,
                field="schema_version", hint="written by a newer EATlas: upgrade eatlas; nothing was written")
    from pydantic import ValidationError
    try:
        _manifest_model().model_validate(manifest)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        more = f" (and {e.error_count() - 1} more problem(s))" if e.error_count() > 1 else ""
        _refuse(f"manifest does not have the shape of an EATlas export: {err['msg']}{more}", m, field=loc)
    if "runs" not in manifest["tables"]:
        _refuse("manifest lists no runs table", m, field="tables")
    return manifest


def _inside(root: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _listed_file(root: str, rel: str, table: str, parts: list[str]) -> tuple[str, list[str]] | None:
    """The file a manifest entry names, if it is a regular file inside the export folder ``root`` (resolved) in
    its table's partition folders (``<table>/<p>=<value>/.../<name>.parquet``): its path and its partition values
    (as DuckDB writes them, percent-encoded); else None."""
    segs = rel.split("/")
    if rel.startswith("/") or "\\" in rel or any(s in ("", ".", "..") for s in segs) or len(segs) != len(parts) + 2 \
            or segs[0] != table or not segs[-1].endswith(".parquet") \
            or any(not seg.startswith(p + "=") for seg, p in zip(segs[1:-1], parts)):
        return None
    path = os.path.join(root, *segs)
    try:
        real = os.path.realpath(path)
        if not real.startswith(root + os.sep) or not os.path.isfile(real):
            return None
    except (OSError, ValueError):
        return None
    return path, [unquote(seg[len(p) + 1:]) for seg, p in zip(segs[1:-1], parts)]


def _stage_folder(mem, src: Path) -> tuple[list[str], str | None, dict]:
    """Check an export folder completely and load its tables into ``mem`` (as ``_imp_<table>``)."""
    manifest = _read_manifest(src)
    m = src / MANIFEST
    version = manifest["eatlas_version"]
    declared = declared_tables()
    for name, entry in manifest["tables"].items():
        _check_table_name(name, declared, version, m)
        _check_columns(name, [c for c, _ in entry["columns"] if not (entry["model_from_runs"] and c == "model")],
                       dict(entry["columns"]), declared[name], version, m, complete=not _older(version))
    # One message for a file that is missing, outside the folder or changed: which of them is not said.
    root = os.path.realpath(src)
    found: dict[str, dict[str, list[str]]] = {}
    for name, entry in manifest["tables"].items():
        for rel, digest in entry["files"].items():
            f = _listed_file(root, rel, name, entry["partition_by"])
            if f is None or sha256_of(Path(f[0])) != digest:
                _refuse(f"file {rel!r} of the manifest is missing, lies outside the export folder, or is not the "
                        "file the manifest lists (its checksum differs)", src,
                        hint="export it again; nothing was written")
            found.setdefault(name, {})[f[0]] = f[1]
    _confine(mem, root)
    relations = []
    for name, entry in manifest["tables"].items():
        target = _q(f"_imp_{name}")
        parts = entry["partition_by"]
        listed = [c for c, _ in entry["columns"] if not (entry["model_from_runs"] and c == "model")]
        if not entry["files"]:
            cols = [(c, t) for c, t in entry["columns"] if not (entry["model_from_runs"] and c == "model")]
            mem.execute(f"CREATE TABLE {target} ({', '.join(f'{_q(c)} {_type(t, name, m)}' for c, t in cols)})")
            relations.append(name)
            continue
        _stage_files(mem, name, found[name], parts, src)
        if entry["model_from_runs"]:
            mem.execute(f"ALTER TABLE {target} DROP COLUMN model")
        got = [c[0] for c in mem.execute(f"DESCRIBE {target}").fetchall()]
        if set(got) != set(listed):
            diff = sorted(set(got) ^ set(listed))
            _refuse(f"the files of table {name} and the manifest list different columns ({', '.join(diff[:5])})",
                    m, field=f"tables.{name}.columns", hint="export it again; nothing was written")
        relations.append(name)
    return relations, version, {name: entry["rows"] for name, entry in manifest["tables"].items()}


def _stage_files(mem, name: str, files: dict[str, list[str]], parts: list[str], src: Path) -> None:
    """Read a table's files once (each file's own columns and its name) and add the partition columns from the
    folders; a file that holds a partition column itself must agree with its folder."""
    raw, target = _q(f"_raw_{name}"), _q(f"_imp_{name}")
    paths = "[" + ", ".join(_lit(f) for f in sorted(files)) + "]"
    try:
        mem.execute(f"CREATE TABLE {raw} AS SELECT * FROM read_parquet({paths}, hive_partitioning=false, "
                    "union_by_name=true, filename=true)")
    except duckdb.Error as e:
        _refuse(f"unreadable parquet of table {name}: {str(e).strip().splitlines()[0]}", src)
    hive = pa.table({"filename": list(files), **{p: [v[i] for v in files.values()] for i, p in enumerate(parts)}})
    mem.register("_hive", hive)
    try:
        inner = {c[0] for c in mem.execute(f"DESCRIBE {raw}").fetchall()}
        for p in parts:
            if p in inner:          # a file carries its partition column too: it must agree with its folder
                bad = mem.execute(f"SELECT r.filename, r.{_q(p)} FROM {raw} r JOIN _hive h USING (filename) "
                                  f"WHERE r.{_q(p)} IS DISTINCT FROM h.{_q(p)} LIMIT 1").fetchall()
                if bad:
                    rel = os.path.relpath(bad[0][0], os.path.realpath(src))
                    _refuse(f"column {p} holds {bad[0][1]!r} in file {rel!r}, whose partition folder says "
                            "otherwise", src, field=p,
                            hint="a file and its partition folder must agree; nothing was written")
        drop = ", ".join(["filename", *(_q(p) for p in parts if p in inner)])
        keep = ", ".join(f"h.{_q(p)}" for p in parts)
        mem.execute(f"CREATE TABLE {target} AS SELECT r.* EXCLUDE ({drop}){', ' + keep if keep else ''} "
                    f"FROM {raw} r JOIN _hive h USING (filename)")
        mem.execute(f"DROP TABLE {raw}")
    finally:
        mem.unregister("_hive")


def _type(typ: str, table: str, where) -> str:
    """A column type of the manifest, used in DDL only once it is one a declared table has."""
    if typ not in {t for d in declared_tables().values() for t in d.columns.values()} | set(OPEN_COLUMN_TYPES):
        _refuse(f"table {table} has a column of type {typ!r}, which no EATlas table has", where)
    return typ


def _confine(mem, root: str) -> None:
    """The staging connection reads the export folder (``root``, resolved) and nothing else (DuckDB >= 1.2:
    allowed_directories)."""
    try:
        mem.execute(f"SET allowed_directories = [{_lit(root + '/')}]")
        mem.execute("SET enable_external_access = false")
    except duckdb.Error:
        pass        # an older DuckDB: the paths were checked above, and only they are read


def _check_table_name(name: str, declared: dict, version, where) -> None:
    if name not in declared:
        _refuse(f"table {name} is not a table of run results this EATlas writes", where, field=f"tables.{name}",
                hint=_who_knows(version))
    if not declared[name].runs:
        _refuse(f"table {name} is rebuilt from the registry and never imported (it holds no runs)", where,
                field=f"tables.{name}", hint="an export holds run tables only; nothing was written")


def _check_columns(table: str, cols: list[str], types: dict, d, version, where, *, complete: bool) -> None:
    """The columns of an imported table: each one the declaration has, of its type; the NOT NULL ones there; and,
    ``complete``, every declared column (an export that says this EATlas or a newer one wrote it; a file or an
    export of an earlier version may lack the columns added since, which are then NULL)."""
    from .. import __version__
    unknown = [c for c in cols if c not in d.columns and not (d.open and types.get(c) in OPEN_COLUMN_TYPES)]
    if unknown:
        _refuse(f"table {table} has column(s) {', '.join(unknown[:5])}, which this EATlas does not write", where,
                field=f"tables.{table}.columns", hint=_who_knows(version))
    wrong = [(c, types[c], d.columns[c]) for c in cols if c in d.columns and types.get(c) != d.columns[c]]
    if wrong:
        c, got, want = wrong[0]
        _refuse(f"column {table}.{c} is {got}, where this EATlas writes {want}", where,
                field=f"tables.{table}.columns", hint="not an EATlas export of this version; nothing was written")
    need = set(d.columns) if complete else d.not_null
    lacking = [c for c in d.columns if c in need and c not in cols]
    if lacking:
        _refuse(f"table {table} lacks column(s) {', '.join(lacking[:5])}, which EATlas {__version__} writes", where,
                field=f"tables.{table}.columns", hint="not a complete EATlas export; nothing was written")


def _stage_duckdb(mem, src: Path) -> list[str]:
    """Check another results file and load its run tables into ``mem``: its tables must be the store's own (no
    table EATlas does not declare, no drifted column); the published tables, rebuilt from the registry, are never
    read."""
    _check_header(src)
    try:
        mem.execute(f"ATTACH {_lit(src.resolve())} AS src (READ_ONLY)")
    except duckdb.Error as e:
        _refuse(f"cannot open: {str(e).strip().splitlines()[0]}", src,
                hint="an eatlas .duckdb results file or an export folder; nothing was written")
    try:
        mem.execute("SET enable_external_access = false")     # nothing but the attached file from here on
        kinds = dict(mem.execute("SELECT table_name, table_type FROM information_schema.tables "
                                 "WHERE table_catalog = 'src' AND table_schema = 'main'").fetchall())
        declared = declared_tables()
        if kinds.get("runs") != "BASE TABLE":
            _refuse("holds no runs table", src, hint="not an eatlas results file; nothing was written")
        hostile = hostile_objects(mem, "src")       # a view in a table's place, a macro: data only, never a program
        if hostile:
            _refuse(f"not a results file EATlas reads: {hostile[0]}", src,
                    hint="a results file holds tables only; nothing was written")
        for name, kind in sorted(kinds.items()):
            if kind == "BASE TABLE" and name not in declared:
                _refuse(f"holds table {name}, which is not a table this EATlas writes", src,
                        hint=f"{_who_knows(None).split(';')[0]}; drop it from a copy of the file, or export the runs "
                             "you want with 'eatlas results export'; nothing was written")
        problems = schema_problems(mem, "src")
        if problems:
            _refuse(f"the file's tables differ from what this EATlas writes: {problems[0]}", src,
                    hint="not an eatlas results file of this version; nothing was written")
        tables = [t for t, d in declared.items() if d.runs and kinds.get(t) == "BASE TABLE"]
        for t in tables:
            mem.execute(f"CREATE TABLE {_q('_imp_' + t)} AS SELECT * FROM src.{_q(t)}")
    except duckdb.Error as e:
        _refuse(f"unreadable: {str(e).strip().splitlines()[0]}", src,
                hint="an eatlas .duckdb results file or an export folder; nothing was written")
    finally:
        try:
            mem.execute("DETACH src")
        except duckdb.Error:
            pass
    return tables


def _check_staged(mem, relations: list[str], where: str, version, rows_listed: dict | None = None) -> None:
    """The staged rows, as a run's own would be checked (eatlas.store.checks), and as the store would take them:
    declared columns and types, NOT NULL filled, primary keys unique, JSON that parses, every row's run among
    the runs it brings."""
    from .checks import arrow_frame, check_rows, checked_columns
    from .db import gives_d

    declared = declared_tables()
    for name in relations:
        d = declared[name]
        t = _q("_imp_" + name)
        cols = {c[0]: c[1] for c in mem.execute(f"DESCRIBE {t}").fetchall()}
        _check_columns(name, list(cols), cols, d, version, where, complete=version is not None and not _older(version))
        for c in sorted(d.not_null & set(cols)):
            n = mem.execute(f"SELECT count(*) FROM {t} WHERE {_q(c)} IS NULL").fetchall()[0][0]
            if n:
                _refuse(f"table {name}: {n} row(s) without {c}, which every row holds", where, field=c)
        key = [c for c in d.key if c in cols]
        if key and len(key) == len(d.key):
            k = ", ".join(_q(c) for c in key)
            dup = mem.execute(f"SELECT {k} FROM {t} GROUP BY ALL HAVING count(*) > 1 LIMIT 1").fetchall()
            if dup:
                _refuse(f"table {name} holds two rows for {', '.join(f'{c}={v!r}' for c, v in zip(key, dup[0]))}",
                        where, hint="each row is there once in an EATlas export; nothing was written")
        for c, typ in cols.items():
            if typ == "JSON":
                for (v,) in mem.execute(f"SELECT {_q(c)} FROM {t} WHERE {_q(c)} IS NOT NULL").fetchall():
                    try:
                        json.loads(v)
                    except RecursionError:
                        _refuse(f"table {name}: a value of {c} is nested too deeply", where, field=c)
                    except ValueError:
                        _refuse(f"table {name}: a value of {c} is not JSON", where, field=c)
        if name != "runs" and "run_id" in cols:
            orphan = mem.execute(f"SELECT run_id FROM {t} WHERE run_id NOT IN (SELECT run_id FROM _imp_runs) "
                                 "LIMIT 1").fetchall()
            if orphan:
                _refuse(f"table {name} holds rows of run {str(orphan[0][0])[:36]!r}, which its runs table does not "
                        "hold", where, hint="not a complete EATlas export; nothing was written")
        wanted = [c for c in checked_columns(name, cols) if c in cols]
        if wanted:
            sel = ", ".join(f"t.{_q(c)}" for c in wanted)
            if name == "results":
                sql = f"SELECT {sel}, ru.method AS _method FROM {t} t LEFT JOIN _imp_runs ru USING (run_id)"
            else:
                sql = f"SELECT {sel} FROM {t} t"
            table = _arrow(mem, sql)
            d_methods = [gives_d(m) for m in table.column("_method").to_pylist()] if name == "results" else None
            check_rows(name, arrow_frame(table.select(wanted), cols), cols, where=where, d_methods=d_methods)
        declared_rows = rows_listed.get(name) if rows_listed else None
        if declared_rows is not None:
            n = mem.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            if n != declared_rows:
                _refuse(f"the files of table {name} hold {n} row(s), the manifest says {declared_rows}", where,
                        field=f"tables.{name}.rows", hint="export it again; nothing was written")


EARLIEST_RUN = _dt.datetime(2000, 1, 1)     # no embedding association test ran before: an earlier time is wrong


def _check_runs_agree(mem, relations: list[str], where: str) -> None:
    """What the rows say about their runs holds: each run's method is one this EATlas has (built in or an installed
    plug-in), its start and end lie between 2000 and tomorrow with the start first, and each row of a run agrees
    with it (its model is the run's; a result's test and level are among those the run ran)."""
    from ..methods import all_methods

    if "runs" not in relations:
        return
    methods = all_methods()
    cols = {c[0] for c in mem.execute("DESCRIBE _imp_runs").fetchall()}
    for run_id, method in mem.execute("SELECT run_id, method FROM _imp_runs ORDER BY run_id").fetchall():
        if method not in methods:
            _refuse(f"run {str(run_id)[:36]!r} is of method {method!r}, which this EATlas does not have", where,
                    field="runs.method", hint=f"methods here: {', '.join(sorted(methods))} (a plug-in's runs import "
                                              "once the plug-in is installed); nothing was written")
    if {"started_at", "finished_at"} <= cols:
        latest = _dt.datetime.now() + _dt.timedelta(days=1)
        bad = mem.execute("SELECT run_id, started_at, finished_at FROM _imp_runs WHERE started_at < ? OR "
                          "finished_at < ? OR started_at > ? OR finished_at > ? OR finished_at < started_at "
                          "ORDER BY run_id LIMIT 1", [EARLIEST_RUN, EARLIEST_RUN, latest, latest]).fetchall()
        if bad:
            rid, a, b = bad[0]
            why = "it finished before it started" if a and b and b < a else \
                f"a time outside {EARLIEST_RUN:%Y-%m-%d} to tomorrow"
            _refuse(f"run {str(rid)[:36]!r} started {a} and finished {b}: {why}", where,
                    field="runs.started_at", hint="not the times of a run; nothing was written")
    for name in relations:
        if name == "runs":
            continue
        tcols = {c[0] for c in mem.execute(f"DESCRIBE {_q('_imp_' + name)}").fetchall()}
        if "run_id" not in tcols:
            continue
        t = _q("_imp_" + name)
        if "model" in tcols:
            bad = mem.execute(f"SELECT t.run_id, t.model, r.model FROM {t} t JOIN _imp_runs r USING (run_id) "
                              "WHERE t.model IS DISTINCT FROM r.model LIMIT 1").fetchall()
            if bad:
                _refuse(f"table {name}: a row of run {str(bad[0][0])[:36]!r} is of model {bad[0][1]!r}, its run of "
                        f"model {bad[0][2]!r}", where, field=f"{name}.model",
                        hint="a row and its run name one model; nothing was written")
        if name == "results" and {"test_id", "level"} <= tcols and {"tests", "levels"} <= cols:
            also = "OR list_has_any(coalesce(t.also_as, []), r.tests)" if "also_as" in tcols else ""
            bad = mem.execute(f"SELECT t.run_id, t.test_id, t.level FROM {t} t JOIN _imp_runs r USING (run_id) "
                              f"WHERE r.tests IS NOT NULL AND NOT (list_contains(r.tests, t.test_id) {also}) "
                              "OR r.levels IS NOT NULL AND NOT list_contains(r.levels, t.level) LIMIT 1").fetchall()
            if bad:
                _refuse(f"table results: run {str(bad[0][0])[:36]!r} holds a result of test {bad[0][1]!r} at level "
                        f"{bad[0][2]!r}, which the run did not run", where, field="results.test_id",
                        hint="a result belongs to the run that ran its test and level; nothing was written")


def _merge(db, mem, relations: list[str], *, wait_s: float, reg, src: Path) -> dict:
    """Write the staged tables' new runs into the store, in one transaction."""
    from ..registry.base import load_registry
    from .db import refresh_conventions, refresh_published

    con = connect(db, wait_s=wait_s)
    added, skipped = {}, 0
    try:
        con.execute("BEGIN TRANSACTION")
        check_schema(db, con)
        init_schema(con)
        if not con.execute("SELECT count(*) FROM published_results").fetchall()[0][0]:
            refresh_published(con, reg or load_registry())
        if not con.execute("SELECT (SELECT count(*) FROM published_conventions) * (SELECT count(*) FROM "
                           "published_significance)").fetchall()[0][0]:
            refresh_conventions(con, reg or load_registry())
        ids = mem.execute("SELECT DISTINCT run_id FROM _imp_runs").fetchdf()
        con.register("_ids", ids)
        have = {r[0] for r in con.execute("SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM _ids)"
                                          ).fetchall()}
        con.unregister("_ids")
        skipped = len(have)
        declared = declared_tables()
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
            if declared[t].open and n:      # an open table's further columns, added as write_run adds them
                have_cols = {r[0] for r in con.execute(f"DESCRIBE {_q(t)}").fetchall()}
                for col, typ, *_ in con.execute("DESCRIBE SELECT * FROM _new").fetchall():
                    if col not in have_cols:
                        con.execute(f"ALTER TABLE {_q(t)} ADD COLUMN {_q(col)} {typ}")
            if n:
                con.execute(f"INSERT INTO {_q(t)} BY NAME {sel}")
            added[t] = n
            con.unregister("_new")
            if have:
                con.unregister("_have")
        if added.get("results"):
            # an earlier version's rows: a not-estimable result's hull out of its bounds, a p's partitions and floor
            from .db import migrate_results
            migrate_results(con)
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
