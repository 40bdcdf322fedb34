"""Rows as columns that DuckDB scans directly: ``con.register(name, as_columns(rows))``.

DuckDB reads a mapping of column name to numpy array as a table, as it reads a pandas DataFrame, so
the results store writes a run without importing pandas and pyarrow (a third of a second at start-up).
Each column is typed as pandas would have typed it from the same rows: ``bool`` when every value is a
boolean, ``int64`` when every value is a whole number, ``float64`` when every value is a number or
missing (missing as NaN, which DuckDB reads as NULL, as from a DataFrame), otherwise Python objects,
which DuckDB types by their values (text, lists, booleans with NULLs).
"""
from __future__ import annotations

import numpy as np

_NUMBER = (int, float, np.integer, np.floating)
_BOOL = (bool, np.bool_)


def _array(values: list) -> np.ndarray:
    present = [v for v in values if v is not None]
    if present and not any(isinstance(v, _BOOL) for v in present) and all(isinstance(v, _NUMBER) for v in present):
        if len(present) == len(values) and all(isinstance(v, (int, np.integer)) for v in present):
            try:
                return np.array(values, dtype=np.int64)
            except OverflowError:           # beyond int64: kept as Python objects, as pandas does
                pass
        else:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    elif present and len(present) == len(values) and all(isinstance(v, _BOOL) for v in present):
        return np.array(values, dtype=bool)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):          # one by one: numpy would read a list value as a dimension
        out[i] = v
    return out


def _as_text(v):
    """A cell of a column of objects as text, unless it is text, a boolean, a list or a mapping (which DuckDB
    stores as such): a tuple, a path or a number among text becomes its str; None stays NULL."""
    if v is None or isinstance(v, (str, bool, list, dict)):
        return v
    return str(v)


def as_columns(rows: list[dict], names: list[str] | None = None, *, text: bool = False) -> dict[str, np.ndarray]:
    """``rows`` (dicts) as ``{column: array}`` in the order of ``names`` (default: every key, in the order
    first seen); a key a row lacks is None there. ``text``: a column of objects holds text (see
    :func:`_as_text`), as ``eatlas.store.db.stringify`` makes a DataFrame's."""
    if names is None:
        names = list(dict.fromkeys(k for r in rows for k in r))
    out = {}
    for c in names:
        col = _array([r.get(c) for r in rows])
        if text and col.dtype == object:
            for i, v in enumerate(col):
                col[i] = _as_text(v)
        out[c] = col
    return out
