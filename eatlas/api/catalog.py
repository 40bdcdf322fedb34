"""The registry and the store from Python, as DataFrames: the tests, the stimulus sets, the papers' published
numbers, and a results database's runs and results (a read-only DuckDB connection with EATlas's views)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EatlasError

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

TEST_COLUMNS = ["id", "version", "title", "source", "language", "bias_type", "levels", "level", "variant_of",
                "methods", "sets", "file"]
SET_COLUMNS = ["id", "version", "concept", "source", "language", "n_items", "items", "license", "source_kind",
               "variant_of", "file"]


def _known(value: str | None, have: set, field: str) -> None:
    if value is not None and value not in have:
        from difflib import get_close_matches
        near = get_close_matches(str(value), sorted(map(str, have)), n=1)
        raise EatlasError(f"no test or set has {field} {value!r}", field=field,
                          hint=(f"did you mean {near[0]}? " if near else "") + f"known: {len(have)} values")


def tests(*, language: str | None = None, paper: str | None = None, bias_type: str | None = None,
          level: str | None = None, registry: str | Path | None = None) -> pd.DataFrame:
    """The registry's tests (as ``eatlas list``), filtered by language (BCP-47 tag), paper (the source key, e.g.
    ``caliskan2017``), bias type and level a test can run at.

    >>> eatlas.tests(language="en", paper="caliskan2017")["id"].tolist()     # doctest: +SKIP
    """
    import pandas as pd

    from ..levels import levels_of
    from ..registry import load_registry

    reg = load_registry(registry)
    specs = list(reg.tests.values())
    _known(language, {t.language for t in specs}, "language")
    _known(paper, {t.source.get("paper") for t in specs}, "paper")
    _known(bias_type, {t.bias_type for t in specs}, "bias_type")
    rows = []
    for t in specs:
        if (language and t.language != language or paper and t.source.get("paper") != paper
                or bias_type and t.bias_type != bias_type or level and level not in levels_of(t)):
            continue
        rows.append({"id": t.id, "version": t.version, "title": t.title, "source": t.source.get("paper"),
                     "language": t.language, "bias_type": t.bias_type, "levels": list(levels_of(t)),
                     "level": t.level, "variant_of": t.variant_of,
                     "methods": list(t.methods) if t.methods is not None else None, "sets": dict(t.sets),
                     "file": t.file})
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def sets(*, language: str | None = None, paper: str | None = None, source_kind: str | None = None,
         registry: str | Path | None = None) -> pd.DataFrame:
    """The registry's stimulus sets (as ``eatlas list --sets``), with their items, filtered by language, paper and
    source kind.

    >>> eatlas.sets(paper="caliskan2017").loc[0, "items"]       # doctest: +SKIP
    """
    import pandas as pd

    from ..registry import load_registry

    reg = load_registry(registry)
    all_sets = list(reg.sets.values())
    _known(language, {s.language for s in all_sets}, "language")
    _known(paper, {s.source.get("paper") for s in all_sets}, "paper")
    rows = []
    for s in all_sets:
        if (language and s.language != language or paper and s.source.get("paper") != paper
                or source_kind and source_kind not in s.source_kind):
            continue
        rows.append({"id": s.id, "version": s.version, "concept": s.concept, "source": s.source.get("paper"),
                     "language": s.language, "n_items": len(s.items), "items": [i.text for i in s.items],
                     "license": s.license, "source_kind": list(s.source_kind), "variant_of": s.variant_of,
                     "file": s.file})
    return pd.DataFrame(rows, columns=SET_COLUMNS)


def published(*, paper: str | None = None, registry: str | Path | None = None) -> pd.DataFrame:
    """The numbers the papers printed (table ``published_results``: paper, test, model, level, effect size, p,
    ...), before any run; ``paper``: one paper's."""
    from ..registry import load_registry
    from ..store import published_only

    con = published_only(load_registry(registry))
    try:
        df = con.execute("SELECT * FROM published_results ORDER BY ALL").fetchdf()
    finally:
        con.close()
    if paper is not None:
        _known(paper, set(df["paper"]), "paper")
        df = df[df["paper"] == paper].reset_index(drop=True)
    return df


def connect(db: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection to a results database (default eatlas.duckdb) with EATlas's views
    (reproduction, latest_results, ...), sandboxed as ``eatlas sql`` reads a file: it reads that file only.

    >>> con = eatlas.connect("eatlas.duckdb")                          # doctest: +SKIP
    >>> con.sql("SELECT test_id, effect_size FROM results").df()       # doctest: +SKIP
    """
    from ..store import connect as store_connect
    from ..store import default_db
    return store_connect(Path(db) if db is not None else default_db(), read_only=True)


def results(db: str | Path | None = None, *, run_id: str | None = None) -> pd.DataFrame:
    """Table ``results`` of a results database (default eatlas.duckdb), with each run's model and method; ``run_id``:
    one run's."""
    con = connect(db)
    try:
        sql = ("SELECT r.*, u.method, u.model_family, u.started_at FROM results r JOIN runs u USING (run_id)"
               + (" WHERE r.run_id = ?" if run_id else "") + " ORDER BY u.started_at, r.test_id, r.level")
        return con.execute(sql, [run_id] if run_id else []).fetchdf()
    finally:
        con.close()
