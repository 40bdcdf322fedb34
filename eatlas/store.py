"""The DuckDB results store: runs, results, the papers' published results, and the reproduction view.

A run is written in one transaction after everything was computed, so a failed or interrupted run
leaves the database as it was. A database another process is writing is reported as in use.
"""
from __future__ import annotations

import json
import os
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
    PRIMARY KEY (run_id, test_id, level)
);
"""

PUBLISHED_COLUMNS = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance",
                     "missing", "test_id", "level", "model", "model_family", "note"]

VIEWS = """
CREATE OR REPLACE VIEW reproduction AS
SELECT r.run_id, r.test_id, r.test_version, r.level, r.model, ru.model_family,
       r.effect_size AS our_effect_size, r.p_value AS our_p_value, r.holm_significant AS our_significant,
       p.paper, p.table_id, p.model AS published_model, p.row_label, p.column_label,
       TRY_CAST(p.value AS DOUBLE) AS published_effect_size, p.significance AS published_significance,
       r.effect_size - TRY_CAST(p.value AS DOUBLE) AS difference
FROM results r
JOIN runs ru USING (run_id)
JOIN published_results p
  ON p.test_id = r.test_id AND p.level = r.level AND p.model_family = ru.model_family
 AND p.statistic = 'effect_size' AND NOT p.missing
 AND p.column_label NOT LIKE 'Level 2%'      -- ML-EAT Level 2 effect sizes are single-target, not the WEAT
WHERE r.status = 'ok';
"""


def default_db() -> Path:
    return Path(os.environ.get("EATLAS_DB", "eatlas.duckdb"))


def connect(path: str | Path, *, read_only: bool = False, wait_s: float = 0.0) -> duckdb.DuckDBPyConnection:
    """Open the database; a lock held by another process becomes a clear 'in use' error."""
    path = Path(path)
    if read_only and not path.exists():
        raise EatlasError("no such database", file=str(path), hint="run 'eatlas run' first")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            msg = str(e)
            if "lock" not in msg.lower():
                raise EatlasError(f"cannot open database: {msg.splitlines()[0]}", file=str(path)) from None
            if time.monotonic() >= deadline:
                raise EatlasError("database is in use by another eatlas process", file=str(path),
                                  hint="wait for it to finish (or pass --wait SECONDS)") from None
            time.sleep(0.2)
        except duckdb.Error as e:
            raise EatlasError(f"cannot open database: {str(e).splitlines()[0]}", file=str(path)) from None


def init_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SCHEMA)
    con.execute("""CREATE TABLE IF NOT EXISTS published_results (
        paper VARCHAR, table_id VARCHAR, row_label VARCHAR, column_label VARCHAR, statistic VARCHAR,
        value VARCHAR, significance VARCHAR, missing BOOLEAN, test_id VARCHAR, level VARCHAR, model VARCHAR,
        model_family VARCHAR, note VARCHAR, source_file VARCHAR)""")
    con.execute(VIEWS)


def read_published(reg) -> pd.DataFrame:
    frames = []
    for e in reg.catalog.get("published") or []:
        p = reg.resolve(e.get("file"), "catalog.yaml", f"published {e.get('id')}")
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        lacking = [c for c in PUBLISHED_COLUMNS if c not in df.columns]
        if lacking:
            raise EatlasError(f"missing column(s) {', '.join(lacking)}", file=str(e.get("file")), field=lacking[0])
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


def query(db: str | Path, sql: str, *, write: bool = False) -> pd.DataFrame:
    con = connect(db, read_only=not write)
    try:
        try:
            return con.execute(sql).fetchdf()
        except duckdb.Error as e:
            msg = str(e).splitlines()[0]
            hint = "the database is opened read-only; pass --write to change it" if "read-only" in msg.lower() \
                else None
            raise EatlasError(f"SQL error: {msg}", hint=hint) from None
    finally:
        con.close()
