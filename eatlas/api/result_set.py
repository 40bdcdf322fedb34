"""A run's results in Python: rows to iterate, DataFrames (pandas, Arrow, polars), a table Jupyter renders with the
CLI's columns and legend, and ``save(db)``, which writes the run as ``eatlas run`` does."""
from __future__ import annotations

import html
import json
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EatlasError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from ..run.runner import RunConfig, RunOutcome

# columns the store keeps as JSON (a dict or list per row): text in to_arrow / to_polars, as the store holds them
_JSON_COLUMNS = ("dropped", "overlap")


def result_columns() -> list[str]:
    """The columns of the store's ``results`` table, in its order (eatlas.store.db.ResultRow, run_id first)."""
    from ..store.db import ResultRow
    return ["run_id", *[f.name for f in fields(ResultRow)]]


class Results:
    """The outcome of one run (``eatlas.run``): nothing is written until :meth:`save`.

    ``run``: the run's record (table ``runs``); ``rows``: its results (table ``results``: one per test and level
    of a method over a test's four matrices); ``tables``: the method's own tables (name -> DataFrame); iterating
    gives the rows of :meth:`to_pandas`'s default table as dicts.

    >>> r = eatlas.run("glove-6b-50d", tests=["weat6"], levels=["word"])   # doctest: +SKIP
    >>> r.to_pandas()[["test_id", "effect_size", "p_value"]]               # doctest: +SKIP
    """

    def __init__(self, outcome: RunOutcome, cfg: RunConfig, *, registry: str | Path | None = None):
        self.outcome, self.config, self.registry = outcome, cfg, registry
        self.saved_to: list[Path] = []

    # ------------------------------------------------------------------ what it holds
    @property
    def run(self) -> dict[str, Any]:
        return self.outcome.run

    @property
    def run_id(self) -> str:
        return str(self.outcome.run["run_id"])

    @property
    def method(self) -> str:
        return self.config.method

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.outcome.results

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return dict(self.outcome.tables)

    @property
    def table_names(self) -> list[str]:
        """``results`` (where the method fills it) and the method's own tables this run has."""
        return (["results"] if self.outcome.results else []) + list(self.outcome.tables)

    def default_table(self) -> str:
        """The table :meth:`to_pandas` gives without a name: ``results`` for WEAT (and any method whose rows are
        only there), else the method's first own table (mleat_results, ceat_results, ibd_results, ...)."""
        from ..methods import get as get_method
        own = [t.name for t in get_method(self.method).tables if t.name in self.outcome.tables]
        if self.outcome.results and (self.method == "weat" or not own):
            return "results"
        if own:
            return own[0]
        return "results" if self.outcome.results else next(iter(self.outcome.tables), "results")

    def __len__(self) -> int:
        return len(self.to_pandas())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """The default table's rows, as dicts (for WEAT: one per test and level)."""
        if self.default_table() == "results":
            return iter(self.rows)
        return iter(self.to_pandas().to_dict("records"))

    def __repr__(self) -> str:
        ok = sum(r.get("status") == "ok" for r in self.rows)
        what = f"{len(self.rows)} result(s), {ok} ok" if self.rows else f"tables {', '.join(self.outcome.tables)}"
        return f"<eatlas.Results run {self.run_id[:8]} {self.method} model {self.run['model']}: {what}>"

    # ------------------------------------------------------------------ frames
    def to_pandas(self, table: str | None = None) -> pd.DataFrame:
        """One table as a DataFrame: ``results`` with the store's columns (run_id, test_id, ..., effect_size,
        p_value, ci_low, ci_high, p_concepts, d_concepts, ...), or a method's own (``mleat_results``,
        ``influence``, ...; :attr:`table_names`). Default: :meth:`default_table`."""
        import pandas as pd

        name = table or self.default_table()
        if name == "results":
            cols = result_columns()
            extra = [k for r in self.rows for k in r if k not in cols]
            return pd.DataFrame(self.rows, columns=cols + list(dict.fromkeys(extra)))
        if name not in self.outcome.tables:
            raise EatlasError(f"this {self.method} run has no table {name!r}", field="table",
                              hint=f"one of: {', '.join(self.table_names) or 'none'}")
        return self.outcome.tables[name].copy()

    def to_arrow(self, table: str | None = None) -> pa.Table:
        """:meth:`to_pandas` as an Arrow table (the JSON columns, dropped and overlap, as JSON text)."""
        import pyarrow as pa

        df = self.to_pandas(table)
        for c in _JSON_COLUMNS:
            if c in df.columns:
                df[c] = [None if v is None else json.dumps(v, sort_keys=True, ensure_ascii=False) for v in df[c]]
        return pa.Table.from_pandas(df, preserve_index=False)

    def to_polars(self, table: str | None = None) -> Any:
        """:meth:`to_arrow` as a polars DataFrame (needs polars: pip install polars)."""
        try:
            import polars as pl
        except ImportError:
            raise EatlasError("to_polars needs polars, which is not installed", field="to_polars",
                              hint="pip install polars, or use to_pandas() / to_arrow()") from None
        return pl.from_arrow(self.to_arrow(table))

    # ------------------------------------------------------------------ display
    def _repr_html_(self) -> str:
        """The CLI's results table as HTML (its columns, its caption and the lines saying what the numbers
        answer), or, for a method with its own summary, its main table."""
        from ..methods import get as get_method
        method = get_method(self.method)
        title = html.escape(f"run {self.run_id[:8]}  {self.method}  model {self.run['model']} (pooling "
                            f"{self.run.get('pooling')}, layer {self.run.get('layer')})")
        if method.inputs != "matrices" or not self.rows:
            df = self.to_pandas()
            return (f"<div><p><b>{title}</b></p>" + df.to_html(index=False, max_rows=60, na_rep="-", escape=True)
                    + "</div>")
        from ..cli.run_summary import _cells, _columns, _legend
        heads, cells = _cells(self.outcome, method, self.config)
        cols = _columns(self.config, heads, cells, "full")
        head = "".join(f"<th>{html.escape(h).replace(chr(10), '<br>')}</th>" for h, _, _ in cols)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c[1][i]).replace(chr(10), '<br>')}"
                                        "</td>" for c in cols) + "</tr>" for i in range(len(cells)))
        lines = [_legend(self.config)]
        if method.effect_size and any(r["status"] == "ok" for r in self.rows):
            from ..legend import meanings
            lines += meanings(self.config.ci_method if self.config.ci is not None else None, alternative=None)
        foot = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
        return (f"<div><table><caption>{title}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
                f"</table><ul style='font-size:smaller'>{foot}</ul></div>")

    # ------------------------------------------------------------------ the store
    def save(self, db: str | Path | None = None, *, wait: float = 0.0) -> Path:
        """Write the run to the results database ``db`` (default: eatlas.duckdb, as ``eatlas run``), exactly as
        ``eatlas run`` writes it: then ``eatlas sql``, ``eatlas report`` and the views read it. Returns the file."""
        from ..store import default_db
        from . import core

        path = Path(db) if db is not None else default_db()
        if any(p.resolve() == path.resolve() for p in self.saved_to):
            raise EatlasError(f"run {self.run_id} is already saved in this file", file=str(path),
                              hint="a run is stored once; run again for another run")
        core.before_saving(self.config, path, self.registry)
        core.save(self.outcome, self.config, path, registry=self.registry, wait_s=wait)
        self.saved_to.append(path)
        return path
