"""The DuckDB results store: runs, results, the papers' published results, and the reproduction view.

A run is written in one transaction after everything was computed, so a failed or interrupted run
leaves the database as it was. A database another process is writing is reported as in use.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import duckdb
import pandas as pd

from .errors import EatlasError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    method VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    model_fingerprint VARCHAR NOT NULL,
    model_family VARCHAR,
    pooling VARCHAR,
    layer VARCHAR,
    subword VARCHAR,
    seed BIGINT NOT NULL,
    n_samples BIGINT,
    alpha DOUBLE,
    levels VARCHAR[],
    tests VARCHAR[],
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    eatlas_version VARCHAR,
    package_versions JSON,
    registry JSON,
    settings JSON
);
CREATE TABLE IF NOT EXISTS results (
    run_id VARCHAR NOT NULL REFERENCES runs (run_id),
    test_id VARCHAR NOT NULL,
    test_version VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    pooling VARCHAR,
    layer VARCHAR,
    subword VARCHAR,
    status VARCHAR NOT NULL,          -- ok | not_run
    reason VARCHAR,
    effect_size DOUBLE,
    p_value DOUBLE,
    exact BOOLEAN,
    n_partitions BIGINT,
    parametric BOOLEAN,
    n_x INTEGER, n_y INTEGER, n_a INTEGER, n_b INTEGER,
    holm_significant BOOLEAN,
    template VARCHAR,
    truncation_seed BIGINT,
    n_dropped INTEGER,
    dropped JSON,                     -- stimuli not encodable (e.g. out of vocabulary), per role
    alternative VARCHAR, ci_low DOUBLE, ci_high DOUBLE, ci_level DOUBLE, n_boot BIGINT,
    d_loo_min DOUBLE, d_loo_max DOUBLE, sign_stable BOOLEAN,
    PRIMARY KEY (run_id, test_id, level)
);
-- Stimulus influence ("Bad Seeds"): the effect size with each stimulus left out (eatlas.robust).
CREATE TABLE IF NOT EXISTS influence (
    run_id VARCHAR NOT NULL REFERENCES runs (run_id),
    test_id VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    role VARCHAR NOT NULL,            -- x | y | a | b
    item VARCHAR NOT NULL,            -- the stimulus text
    d_without DOUBLE,
    delta DOUBLE                      -- d_without - effect_size
);
-- ML-EAT (Wolfe et al. 2024): levels 1-3 and the EAT pattern, one row per test and level of a run.
-- Column names are those of eatlas.mleat.MlEatResult.to_dict(); docs/methods.md describes them.
CREATE TABLE IF NOT EXISTS mleat_results (
    run_id VARCHAR NOT NULL REFERENCES runs (run_id),
    test_id VARCHAR NOT NULL,
    test_version VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    x_name VARCHAR, y_name VARCHAR, a_name VARCHAR, b_name VARCHAR,
    n_x INTEGER, n_y INTEGER, n_a INTEGER, n_b INTEGER,
    pattern VARCHAR NOT NULL,
    alpha DOUBLE, effect_threshold DOUBLE, n_samples BIGINT, seed BIGINT, parametric BOOLEAN, p_method VARCHAR,
    level1_effect_size DOUBLE, level1_p_value DOUBLE, level1_statistic DOUBLE, level1_exact BOOLEAN,
    level1_n_partitions BIGINT,
    x_effect_size DOUBLE, x_p_value DOUBLE, x_p_upper DOUBLE, x_p_lower DOUBLE, x_statistic DOUBLE,
    x_exact BOOLEAN, x_n_partitions BIGINT, x_association VARCHAR,
    y_effect_size DOUBLE, y_p_value DOUBLE, y_p_upper DOUBLE, y_p_lower DOUBLE, y_statistic DOUBLE,
    y_exact BOOLEAN, y_n_partitions BIGINT, y_association VARCHAR,
    ax_mean DOUBLE, ax_std DOUBLE, bx_mean DOUBLE, bx_std DOUBLE,
    ay_mean DOUBLE, ay_std DOUBLE, by_mean DOUBLE, by_std DOUBLE,
    PRIMARY KEY (run_id, test_id, level)
);
"""

PUBLISHED_COLUMNS = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance",
                     "missing", "test_id", "level", "model", "model_family", "note"]

# The reproduction view: our WEAT effect sizes beside the papers' printed ones, matched on test, level
# and model family. A printed 'cbow-<f>' family (May et al. and Tan & Celis: sentences as the mean of
# word vectors) matches our static runs of family <f>, which encode sentences exactly so (and a single
# word as its own vector). Results and runs are first cut down to the (test, level) pairs and families that
# some paper printed (semi-joins), then joined: with a million results this halves the time of the
# plain three-way join, whose optimiser built a hash table of runs x published rows first
# (benchmarks/bench_duckdb.py).
VIEWS = """
CREATE OR REPLACE VIEW reproduction AS
WITH p AS (
    SELECT test_id, level, regexp_replace(model_family, '^cbow-', '') AS model_family, paper, table_id,
           model AS published_model, row_label, column_label,
           TRY_CAST(value AS DOUBLE) AS published_effect_size, significance AS published_significance
    FROM published_results
    WHERE statistic = 'effect_size' AND NOT missing
      AND column_label NOT LIKE 'Level 2%'   -- ML-EAT Level 2 effect sizes are single-target, not the WEAT
)
SELECT r.run_id, r.test_id, r.test_version, r.level, r.model, ru.model_family,
       r.effect_size AS our_effect_size, r.p_value AS our_p_value, r.holm_significant AS our_significant,
       p.paper, p.table_id, p.published_model, p.row_label, p.column_label,
       p.published_effect_size, p.published_significance,
       r.effect_size - p.published_effect_size AS difference
FROM (SELECT * FROM results
      WHERE status = 'ok' AND (test_id, level) IN (SELECT test_id, level FROM p)) r
JOIN (SELECT run_id, model_family FROM runs
      WHERE model_family IN (SELECT model_family FROM p)) ru USING (run_id)
JOIN p ON p.test_id = r.test_id AND p.level = r.level AND p.model_family = ru.model_family;

-- ML-EAT beside the ML-EAT tables: every printed Level 1-3 number of a test next to ours (one row per
-- printed cell), with both EAT patterns. `agrees`: our number rounds to the printed one at the printed
-- precision (|ours - printed| <= half a unit of its last printed digit).
CREATE OR REPLACE VIEW mleat_reproduction AS
WITH ours AS (
    SELECT m.run_id, m.test_id, m.test_version, m.level, ru.model, ru.model_family, m.pattern,
           unnest(['Level 1: A,B,X,Y', 'Level 2: A,B,X', 'Level 2: A,B,Y',
                   'Level 3: A,X mean', 'Level 3: A,X std', 'Level 3: B,X mean', 'Level 3: B,X std',
                   'Level 3: A,Y mean', 'Level 3: A,Y std', 'Level 3: B,Y mean', 'Level 3: B,Y std']) AS column_label,
           unnest([m.level1_effect_size, m.x_effect_size, m.y_effect_size, m.ax_mean, m.ax_std, m.bx_mean,
                   m.bx_std, m.ay_mean, m.ay_std, m.by_mean, m.by_std]) AS our_value
    FROM mleat_results m JOIN runs ru USING (run_id)
), pub AS (
    SELECT * FROM published_results WHERE paper = 'wolfe2024' AND NOT missing
)
SELECT o.run_id, o.test_id, o.test_version, o.level, o.model, o.model_family,
       p.table_id, p.model AS published_model, p.row_label, o.column_label,
       o.our_value, TRY_CAST(p.value AS DOUBLE) AS published_value, p.significance AS published_significance,
       o.our_value - TRY_CAST(p.value AS DOUBLE) AS difference,
       abs(o.our_value - TRY_CAST(p.value AS DOUBLE))
           <= 0.5 * pow(10, -length(split_part(p.value, '.', 2))) + 1e-9 AS agrees,
       o.pattern AS our_pattern, pp.value AS published_pattern
FROM ours o
JOIN pub p ON p.test_id = o.test_id AND p.level = o.level AND p.model_family = o.model_family
          AND p.column_label = o.column_label
LEFT JOIN pub pp ON pp.test_id = o.test_id AND pp.level = o.level AND pp.model_family = o.model_family
          AND pp.table_id = p.table_id AND pp.model = p.model AND pp.statistic = 'pattern';
"""


def default_db() -> Path:
    return Path(os.environ.get("EATLAS_DB", "eatlas.duckdb"))


def connect(path: str | Path, *, read_only: bool = False, wait_s: float = 0.0,
            sandbox: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the database; a lock held by another process becomes a clear 'in use' error, after
    retrying for ``wait_s`` seconds (DuckDB lets one process at a time open a file for writing,
    and no reader opens it meanwhile). ``sandbox``: read-only and nothing else (see SANDBOX)."""
    path = Path(path)
    if (read_only or sandbox) and not path.exists():
        raise EatlasError("no such database", file=str(path), hint="run 'eatlas run' first, or pass --db FILE")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if sandbox:
                return _sandboxed(path)
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            msg = str(e)
            if "not a valid duckdb database" in msg.lower() and not read_only and _empty_leftover(path):
                continue     # a 0-byte file left by a process killed while creating it: holds nothing
            if "lock" not in msg.lower():
                raise EatlasError(f"cannot open database: {msg.splitlines()[0]}", file=str(path),
                                  hint="is this an eatlas results file? pass another --db FILE") from None
            if time.monotonic() >= deadline:
                pid = re.search(r"\(PID (\d+)\)", msg)
                raise EatlasError("database is in use by another process" + (f" (PID {pid[1]})" if pid else ""),
                                  file=str(path), hint="wait for it to finish; 'eatlas run --wait SECONDS' waits "
                                                       "for it") from None
            time.sleep(0.2)
        except duckdb.Error as e:
            raise EatlasError(f"cannot open database: {str(e).splitlines()[0]}", file=str(path),
                              hint="is this an eatlas results file? pass another --db FILE") from None


def _empty_leftover(path: Path) -> bool:
    """Remove a 0-byte database file (and no WAL): DuckDB refuses it, and it cannot hold any data."""
    try:
        if path.stat().st_size == 0 and not Path(str(path) + ".wal").exists():
            path.unlink()
            return True
    except OSError:
        pass
    return False


# Columns added to ``results`` after its first release: a database written before gets them (NULL) on
# its next write.
RESULTS_ADDED = (("alternative", "VARCHAR"), ("ci_low", "DOUBLE"), ("ci_high", "DOUBLE"), ("ci_level", "DOUBLE"),
                 ("n_boot", "BIGINT"), ("d_loo_min", "DOUBLE"), ("d_loo_max", "DOUBLE"), ("sign_stable", "BOOLEAN"))


def init_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SCHEMA)
    have = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                      "WHERE table_name = 'results' AND table_schema = current_schema()").fetchall()}
    for col, typ in RESULTS_ADDED:
        if col not in have:
            con.execute(f"ALTER TABLE results ADD COLUMN {col} {typ}")
    con.execute("""CREATE TABLE IF NOT EXISTS published_results (
        paper VARCHAR, table_id VARCHAR, row_label VARCHAR, column_label VARCHAR, statistic VARCHAR,
        value VARCHAR, significance VARCHAR, missing BOOLEAN, test_id VARCHAR, level VARCHAR, model VARCHAR,
        model_family VARCHAR, note VARCHAR, source_file VARCHAR)""")
    con.execute(VIEWS)


MAX_CSV_BYTES = 20_000_000


def read_published(reg, entries: list | None = None) -> pd.DataFrame:
    """The published-results CSVs named in the catalog (or ``entries`` of it), as one table of text."""
    frames = []
    for e in reg.catalog.get("published") or [] if entries is None else entries:
        obj = f"published {e.get('id')}"
        rel = e.get("file")
        p = reg.resolve(rel, "catalog.yaml", obj)
        if not p.is_file():
            raise EatlasError("file not found", file=str(rel), obj=obj,
                              hint="fix the path in catalog.yaml, or run 'eatlas catalog --sync'")
        if p.stat().st_size > MAX_CSV_BYTES:
            raise EatlasError(f"file is {p.stat().st_size} bytes, over the {MAX_CSV_BYTES}-byte limit", file=str(rel),
                              obj=obj, hint="split the table")
        try:
            df = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        except UnicodeDecodeError as err:
            raise EatlasError(f"not valid UTF-8 (byte {err.start})", file=str(rel), obj=obj,
                              hint="save the file as UTF-8") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as err:
            raise EatlasError(f"not a readable CSV: {str(err).strip().splitlines()[0]}", file=str(rel), obj=obj,
                              hint=f"one header line ({','.join(PUBLISHED_COLUMNS)}), then one row per cell") from None
        lacking = [c for c in PUBLISHED_COLUMNS if c not in df.columns]
        if lacking:
            raise EatlasError(f"missing column(s) {', '.join(lacking)}", file=str(rel), obj=obj, field=lacking[0],
                              hint=f"the header must name: {','.join(PUBLISHED_COLUMNS)}")
        df = df[PUBLISHED_COLUMNS].copy()
        df["missing"] = df["missing"].str.lower().isin(["true", "1", "yes"])
        df["source_file"] = e.get("file")
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=PUBLISHED_COLUMNS + ["source_file"])
    return pd.concat(frames, ignore_index=True)


def refresh_published(con: duckdb.DuckDBPyConnection, reg) -> int:
    """Replace published_results with the registry's CSVs (inside the caller's transaction)."""
    df = read_published(reg)
    con.execute("DELETE FROM published_results")
    if len(df):
        con.register("_pub", df)
        con.execute("INSERT INTO published_results SELECT paper, table_id, row_label, column_label, statistic, "
                    "value, significance, missing, test_id, NULLIF(level, ''), model, model_family, note, "
                    "source_file FROM _pub")
        con.unregister("_pub")
    return len(df)


def write_run(db: str | Path, run: dict, results: list[dict], reg, *, wait_s: float = 0.0,
              extra_tables: dict[str, pd.DataFrame] | None = None) -> None:
    """Write one run and its results atomically (one transaction)."""
    con = connect(db, wait_s=wait_s)
    try:
        con.execute("BEGIN TRANSACTION")
        init_schema(con)
        refresh_published(con, reg)
        run = dict(run)
        for k in ("package_versions", "registry", "settings"):
            run[k] = json.dumps(run.get(k) or {}, sort_keys=True)
        cols = list(run)
        con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [run[c] for c in cols])
        if results:
            df = pd.DataFrame(results)
            df["dropped"] = df["dropped"].map(lambda d: json.dumps(d or {}, sort_keys=True))
            con.register("_res", df)
            con.execute(f"INSERT INTO results ({', '.join(df.columns)}) SELECT {', '.join(df.columns)} FROM _res")
            con.unregister("_res")
        for name, frame in (extra_tables or {}).items():
            con.register("_extra", frame)
            con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM _extra WHERE false")
            # A method's later run may carry columns its first did not (e.g. a test not run has no numbers):
            # add them, typed as the new rows are, so no column is ever dropped.
            have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
            for col, typ, *_ in con.execute("DESCRIBE SELECT * FROM _extra").fetchall():
                if col not in have:
                    quoted = '"' + col.replace('"', '""') + '"'
                    typ = "VARCHAR" if typ.strip('"') == "NULL" else typ     # a column of None only
                    con.execute(f"ALTER TABLE {name} ADD COLUMN {quoted} {typ}")
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _extra")
            con.unregister("_extra")
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise
    finally:
        con.close()


# Without --write, `eatlas sql` is read-only *and* sandboxed: DuckDB's read_only mode still lets a
# statement read or write other files (COPY ... TO, read_csv('/etc/...'), ATTACH, EXPORT DATABASE) and
# INSTALL extensions from the network, so external access is switched off and the configuration locked
# (a later SET cannot switch it back on). The file is attached read-only to a private in-memory
# database first (settings are per database instance, and a connection with other settings may be
# open to the same file in this process).
SANDBOX = ("SET enable_external_access = false", "SET autoinstall_known_extensions = false",
           "SET autoload_known_extensions = false", "SET allow_community_extensions = false",
           "SET lock_configuration = true")


def _sandboxed(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    try:
        alias = path.stem if re.fullmatch(r"[A-Za-z_]\w*", path.stem) and path.stem.lower() not in (
            "memory", "system", "temp", "main") else "results_db"
        quoted = str(path.resolve()).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS \"{alias}\" (READ_ONLY)")
        con.execute(f'USE "{alias}"')
        for stmt in SANDBOX:
            con.execute(stmt)
        return con
    except BaseException:
        con.close()
        raise


def published_only(reg=None) -> duckdb.DuckDBPyConnection:
    """Before any run (no results file): an in-memory database with the registry's published results,
    the empty run tables and the views, sandboxed as a results file is. Nothing is written to disk."""
    if reg is None:
        from .registry import load_registry
        reg = load_registry()
    con = duckdb.connect(":memory:")
    try:
        init_schema(con)
        refresh_published(con, reg)
        for stmt in SANDBOX:
            con.execute(stmt)
        return con
    except BaseException:
        con.close()
        raise


def query(db: str | Path, sql: str, *, write: bool = False, wait_s: float = 0.0, reg=None) -> pd.DataFrame:
    """Run one SQL statement. Without a results file (no run yet) and without ``write``, the registry's
    published results and the views are queried in memory (``reg``: the registry, default the bundled one)."""
    if not Path(db).exists():
        if write:
            raise EatlasError("no such database", file=str(db),
                              hint="the results file is created by 'eatlas run'; pass --db FILE for another one")
        con = published_only(reg)
    else:
        con = connect(db, read_only=not write, wait_s=wait_s, sandbox=not write)
    try:
        try:
            return con.execute(sql).fetchdf()
        except duckdb.Error as e:
            msg = str(e).strip().splitlines()[0]
            low = msg.lower()
            if "read-only" in low:
                hint = "the database is opened read-only; pass --write to change it"
            elif not write and ("disabled by configuration" in low or "configuration has been locked" in low
                                or "external extensions is disabled" in low):
                hint = ("without --write, 'eatlas sql' reads only this database: no other files, ATTACH, COPY, "
                        "INSTALL/LOAD or settings; pass --write to allow them")
            else:
                hint = "tables: runs, results, published_results; view: reproduction"
            raise EatlasError(f"SQL error: {msg}", file=str(db), hint=hint) from None
    finally:
        con.close()
