"""The DuckDB results store: one file holding runs, results, each method's tables, the papers' published
results and the views that set them side by side.

``db``: the tables (derived from the row types of the runs, the results and every method's tables), the
views, connecting, writing a run in one transaction and the sandboxed query (re-exported here, as when
this package was one module, ``eatlas/store.py``); ``results_io``: parquet export and import;
``influence``: the query behind ``eatlas show-influence`` and the report's influence table.
"""
from ..registry.published import MAX_CSV_BYTES, PUBLISHED_COLUMNS, read_published
from .db import (
    DERIVED_COLUMNS,
    DUCKDB_MAGIC,
    MAX_JSON,
    MAX_TEXT,
    MIGRATE_RESULTS,
    NO_AUTO_EXTENSIONS,
    OPEN_COLUMN_TYPES,
    PUBLISHED_STATE,
    RUN_TABLES_WITHOUT_RUN_ID,
    SANDBOX,
    STORAGE_VERSION,
    SWEEP_FAILURES,
    VIEWS,
    Declared,
    ResultRow,
    RunRow,
    SqlResult,
    check_run_rows,
    check_schema,
    check_text_sizes,
    check_writable,
    connect,
    declared_tables,
    declared_views,
    default_db,
    duck,
    gives_d,
    hostile_objects,
    init_schema,
    max_text,
    migrate_results,
    own_views,
    pairing,
    published_only,
    query,
    read_as_data,
    refresh_conventions,
    refresh_published,
    repair_hint,
    reproduction_counts,
    rollback,
    schema_ddl,
    schema_problems,
    sql_result,
    stringify,
    tables,
    write_run,
)

__all__ = [
    "DUCKDB_MAGIC", "Declared", "MAX_CSV_BYTES", "NO_AUTO_EXTENSIONS", "OPEN_COLUMN_TYPES", "PUBLISHED_COLUMNS",
    "PUBLISHED_STATE", "RUN_TABLES_WITHOUT_RUN_ID", "ResultRow", "RunRow", "SANDBOX", "STORAGE_VERSION",
    "SWEEP_FAILURES", "SqlResult", "VIEWS", "check_run_rows", "check_schema", "check_writable", "connect",
    "declared_tables", "declared_views", "default_db", "duck", "export_results", "gives_d", "import_results",
    "hostile_objects", "init_schema", "DERIVED_COLUMNS", "MIGRATE_RESULTS", "migrate_results",
    "published_only", "query", "read_as_data", "read_published",
    "refresh_conventions", "refresh_published", "repair_hint", "reproduction_counts", "rollback", "schema_ddl",
    "schema_problems", "sql_result", "stringify", "tables", "write_run",
    "MAX_JSON", "MAX_TEXT", "check_text_sizes", "max_text", "own_views", "pairing",
]


def __getattr__(name: str):
    # parquet export and import need pyarrow: loaded when first asked for
    if name in ("export_results", "import_results"):
        from . import results_io
        return getattr(results_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
