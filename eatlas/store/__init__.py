"""The DuckDB results store: one file holding runs, results, each method's tables, the papers' published
results and the views that set them side by side.

``db``: the tables (derived from the row types of the runs, the results and every method's tables), the
views, connecting, writing a run in one transaction and the sandboxed query (re-exported here, as when
this package was one module, ``eatlas/store.py``); ``results_io``: parquet export and import;
``influence``: the query behind ``eatlas show-influence`` and the report's influence table.
"""
from ..registry.published import MAX_CSV_BYTES, PUBLISHED_COLUMNS, read_published
from .db import (
    DUCKDB_MAGIC,
    SANDBOX,
    STORAGE_VERSION,
    SWEEP_FAILURES,
    VIEWS,
    ResultRow,
    RunRow,
    check_writable,
    connect,
    default_db,
    init_schema,
    published_only,
    query,
    refresh_conventions,
    refresh_published,
    reproduction_counts,
    rollback,
    schema_ddl,
    stringify,
    tables,
    write_run,
)

__all__ = [
    "DUCKDB_MAGIC", "MAX_CSV_BYTES", "PUBLISHED_COLUMNS", "SANDBOX", "STORAGE_VERSION", "SWEEP_FAILURES", "VIEWS",
    "ResultRow", "RunRow", "check_writable", "connect", "default_db", "export_results", "import_results",
    "init_schema", "published_only", "query", "read_published", "refresh_conventions", "refresh_published",
    "reproduction_counts",
    "rollback", "schema_ddl", "stringify", "tables", "write_run",
]


def __getattr__(name: str):
    # parquet export and import need pyarrow: loaded when first asked for
    if name in ("export_results", "import_results"):
        from . import results_io
        return getattr(results_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
