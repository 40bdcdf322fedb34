"""The values a row of the store may hold: one pandera schema per table of run results that has rules beyond its
column types (``results``, ``runs``, ``influence``), used twice: on a run's own rows before ``write_run`` stores
them, and on every row ``eatlas results import`` brings in (an export folder or another results file).

``results``: p in [0, 1]; effect sizes, CI bounds and leave-one-out bounds finite (NULL allowed: a test not run,
a method without a WEAT d); counts >= 0; a CI level in (0, 1) with its lower bound at most the effect size it
is an interval of and the upper at least it (the bootstrap's: the effect size; the inversion interval's:
``d_corrected``); a status of ``ok`` or ``not_run`` (with a reason, and no numbers); an ``ok`` result of a
method with a WEAT-comparable d (eatlas.methods: ``effect_size = True``) with its d and p; known levels,
alternatives and CI methods. Every run table: no NaN, p-values and significance levels (by name) in [0, 1],
``n_*`` counts >= 0 (:func:`schema`).

pandas reads a SQL NULL and a NaN alike, so every column is built here from the rows with NULL as pandas' NA
and NaN kept as NaN (a masked array), and a NaN fails "finite" where a NULL passes.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from ..errors import EatlasError

ROLES = ("x", "y", "a", "b")
STATUSES = ("ok", "not_run")
CI_TOLERANCE = 1e-9         # the CI bounds are compared with d to this (relative) precision
INVERSION = "inversion"     # eatlas.stats.interval.INVERSION (earlier versions): the interval of d_corrected
CONCEPTS = "concepts"       # eatlas.stats.weat.CONCEPTS: the interval of d_concepts


# --------------------------------------------------------------------------------------------- frames
def _masked(values: list, kind: str):
    """A pandas array of ``values`` (None: NULL) keeping NaN apart from NULL."""
    mask = np.array([v is None for v in values], dtype=bool)
    if kind == "float":
        data = np.array([np.nan if v is None else _float(v) for v in values], dtype=np.float64)
        return pd.arrays.FloatingArray(data, mask)
    if kind == "int":
        data = np.array([0 if v is None else int(v) for v in values], dtype=np.int64)
        return pd.arrays.IntegerArray(data, mask)
    if kind == "bool":
        data = np.array([False if v is None else bool(v) for v in values], dtype=bool)
        return pd.arrays.BooleanArray(data, mask)
    return pd.array([None if v is None else str(v) for v in values], dtype=object)


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan


_KINDS = {"DOUBLE": "float", "FLOAT": "float", "REAL": "float", "BIGINT": "int", "INTEGER": "int",
          "SMALLINT": "int", "BOOLEAN": "bool", "VARCHAR": "str"}


def frame(columns: dict[str, list], types: dict[str, str]) -> pd.DataFrame:
    """The columns (name -> values, None for NULL), typed by their DuckDB types."""
    return pd.DataFrame({c: _masked(v, _KINDS.get(types.get(c, "VARCHAR"), "str")) for c, v in columns.items()})


def arrow_frame(table, types: dict[str, str]) -> pd.DataFrame:
    """A pyarrow table's columns, typed by their DuckDB types, NULL as NA and NaN kept (without Python objects
    for numbers: an import may bring millions of rows)."""
    import pyarrow.compute as pc

    out = {}
    for c in table.column_names:
        col = table.column(c).combine_chunks() if hasattr(table.column(c), "combine_chunks") else table.column(c)
        kind = _KINDS.get(types.get(c, "VARCHAR"), "str")
        mask = col.is_null().to_numpy(zero_copy_only=False)
        if kind == "float":
            out[c] = pd.arrays.FloatingArray(pc.cast(col, "float64").fill_null(0.0).to_numpy(zero_copy_only=False)
                                             .astype(np.float64), mask)
        elif kind == "int":
            out[c] = pd.arrays.IntegerArray(pc.cast(col, "int64").fill_null(0).to_numpy(zero_copy_only=False)
                                            .astype(np.int64), mask)
        elif kind == "bool":
            out[c] = pd.arrays.BooleanArray(col.fill_null(False).to_numpy(zero_copy_only=False).astype(bool), mask)
        else:
            out[c] = pd.array(col.to_pylist(), dtype=object)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------- checks
def _finite(s: pd.Series) -> pd.Series:
    return pd.Series(np.isfinite(s.to_numpy(dtype=np.float64, na_value=0.0)), index=s.index)


def _flag(df: pd.DataFrame, bad) -> pd.Series:
    """A row-wise check's result: True where the row passes (NA counts as passing)."""
    return ~pd.Series(bad, index=df.index).fillna(False).astype(bool)


def _has(df, *cols) -> bool:
    return all(c in df.columns for c in cols)


def _ci_order(df):
    if not _has(df, "ci_low", "ci_high"):
        return pd.Series(True, index=df.index)
    return _flag(df, df["ci_low"] > df["ci_high"])


def _ci_around_d(df):
    """The interval holds the estimate it is an interval of: the papers' (permutation) and the stimulus bootstrap's
    (percentile, BCa) the effect size; the concepts' ``d_concepts`` (NULL where not estimable); the earlier
    versions' inversion interval, disattenuated, ``d_corrected``. The stored concepts' and papers' intervals
    (concepts_low/high, papers_low/high) hold theirs too."""
    if not _has(df, "ci_low", "ci_high", "effect_size"):
        return pd.Series(True, index=df.index)
    point = df["effect_size"]
    if _has(df, "ci_method", "d_corrected"):
        inversion = (df["ci_method"] == INVERSION).fillna(False).astype(bool)
        point = point.where(~inversion, df["d_corrected"])
    if _has(df, "ci_method", "d_concepts"):
        concepts = (df["ci_method"] == CONCEPTS).fillna(False).astype(bool)
        point = point.where(~concepts, df["d_concepts"])
    tol = point.abs().clip(lower=1.0) * CI_TOLERANCE
    bad = (df["ci_low"] > point + tol) | (df["ci_high"] < point - tol)
    if _has(df, "ci_method", "n_x", "n_y"):
        # the concepts' interval (the hull of its confidence set where d_concepts is not estimable) stays within the
        # largest |d| of concepts in the proportions n_x : n_y (eatlas.stats.interval.d_bound)
        n_x, n_y = df["n_x"].astype("Float64"), df["n_y"].astype("Float64")
        bound = (n_x + n_y) / (n_x * n_y) ** 0.5 + CI_TOLERANCE
        concepts = (df["ci_method"] == CONCEPTS).fillna(False).astype(bool)
        bad = bad | (concepts & ((df["ci_low"] < -bound) | (df["ci_high"] > bound)))
    for lo, hi, est in (("concepts_low", "concepts_high", "d_concepts"), ("papers_low", "papers_high", "effect_size")):
        if _has(df, lo, hi, est):
            t = df[est].abs().clip(lower=1.0) * CI_TOLERANCE
            bad = bad | (df[lo] > df[est] + t) | (df[hi] < df[est] - t) | (df[lo] > df[hi])
    return _flag(df, bad)


def _not_run_has_reason(df):
    if not _has(df, "status", "reason"):
        return pd.Series(True, index=df.index)
    return _flag(df, (df["status"] == "not_run") & df["reason"].isna())


def _not_run_has_no_numbers(df):
    cols = [c for c in ("effect_size", "p_value", "ci_low", "ci_high", "p_concepts", "d_concepts") if c in df.columns]
    if "status" not in df.columns or not cols:
        return pd.Series(True, index=df.index)
    return _flag(df, (df["status"] == "not_run") & df[cols].notna().any(axis=1))


def _ok_has_d(df):
    """An ``ok`` result of a method with a WEAT-comparable d holds its d and p (``_d`` marks those rows)."""
    if not _has(df, "status", "_d"):
        return pd.Series(True, index=df.index)
    lacks = df["effect_size"].isna() if "effect_size" in df.columns else pd.Series(True, index=df.index)
    if "p_value" in df.columns:
        lacks = lacks | df["p_value"].isna()
    return _flag(df, (df["status"] == "ok") & df["_d"].astype(bool) & lacks)


def _significant_is_ok(df):
    if not _has(df, "status", "holm_significant"):
        return pd.Series(True, index=df.index)
    return _flag(df, (df["holm_significant"] == True) & (df["status"] != "ok"))  # noqa: E712 (a masked array)


# Columns of any run table that hold a probability, by name (p-values of every method, a significance level).
PROBABILITY_COLUMN = re.compile(r"(^|_)(p_value|p_upper|p_lower|p_two_tailed|p_one_tailed|alpha)$")


@functools.lru_cache(maxsize=1)
def _specific() -> dict:
    """table -> (column -> (checks, nullable, unique), row checks): the rules of results, runs and influence."""
    import pandera.pandas as pa

    from ..levels import NAMES as LEVELS
    from ..stats.weat import ALTERNATIVES, CI_METHODS, P_RULES, RETIRED_CI_METHODS
    CI_METHODS = CI_METHODS + RETIRED_CI_METHODS

    def col(*checks, nullable=True, unique=False):
        return (list(checks), nullable, unique)

    finite = pa.Check(_finite, error="is not a finite number")
    probability = pa.Check(lambda s: (s >= 0) & (s <= 1), error="is outside [0, 1]")
    count = pa.Check(lambda s: s >= 0, error="is negative")
    positive = pa.Check(lambda s: s >= 1, error="is below 1")
    text = pa.Check(lambda s: s.str.len() > 0, error="is empty")

    def one_of(values, what):
        return pa.Check(lambda s: s.isin(values), error=f"is not a known {what} ({', '.join(values)})")

    results = {
        "run_id": col(text, nullable=False), "test_id": col(text, nullable=False),
        "test_version": col(text, nullable=False), "level": col(one_of(LEVELS, "level"), nullable=False),
        "model": col(text, nullable=False), "status": col(one_of(STATUSES, "status"), nullable=False),
        "effect_size": col(finite), "p_value": col(probability), "d_corrected": col(finite),
        "reliability": col(finite), "p_concepts": col(probability), "p_concepts_one_sided": col(probability),
        "d_concepts": col(finite),
        **{c: col(finite) for c in ("concepts_low", "concepts_high", "papers_low", "papers_high",
                                    "concepts_hull_low", "concepts_hull_high")},
        "holm_p_rule": col(one_of(P_RULES, "p rule")), "holm_family": col(text), "holm_family_size": col(positive),
        "ci_low": col(finite), "ci_high": col(finite), "d_loo_min": col(finite), "d_loo_max": col(finite),
        "ci_level": col(pa.Check(lambda s: (s > 0) & (s < 1), error="is outside (0, 1)")),
        **{c: col(count) for c in ("n_x", "n_y", "n_a", "n_b", "n_dropped", "truncation_seed")},
        "n_partitions": col(positive), "n_boot": col(positive), "p_n_samples": col(positive),
        "alternative": col(one_of(ALTERNATIVES, "alternative")), "ci_method": col(one_of(CI_METHODS, "CI method")),
    }
    result_rows = [
        pa.Check(_ci_order, error="has a CI whose lower bound is above its upper bound"),
        pa.Check(_ci_around_d, error="has a CI that does not hold its effect size"),
        pa.Check(_not_run_has_reason, error="is not run and gives no reason"),
        pa.Check(_not_run_has_no_numbers, error="is not run but holds an effect size, p-value or CI"),
        pa.Check(_ok_has_d, error="is ok but lacks its effect size or p-value (its method gives both)"),
        pa.Check(_significant_is_ok, error="is Holm-significant but not ok"),
    ]
    runs = {
        "run_id": col(text, nullable=False, unique=True), "method": col(text, nullable=False),
        "model": col(text, nullable=False), "model_fingerprint": col(nullable=False),
        "seed": col(count, nullable=False), "n_samples": col(positive),
        "alpha": col(pa.Check(lambda s: (s > 0) & (s <= 1), error="is outside (0, 1]")),
        "model_dimension": col(positive),
    }
    influence = {
        "run_id": col(text, nullable=False), "role": col(one_of(ROLES, "role"), nullable=False),
        "item": col(nullable=False), "d_without": col(finite), "delta": col(finite),
    }
    # validity (eatlas.methods.validity): correlations and their bounds in [-1, 1], p-values in [0, 1], items used
    # at most the items and with the dropped adding up to them, bounds ordered, a not-run row with its reason
    correlation = pa.Check(lambda s: (s >= -1) & (s <= 1), error="is outside [-1, 1]")
    read = pa.Check(lambda s: pd.Series(True, index=s.index), error="")     # a column a row check reads
    validity = {
        "criterion_id": col(text, nullable=False), "status": col(one_of(STATUSES, "status"), nullable=False),
        **{c: col(finite, correlation) for c in ("pearson_r", "pearson_ci_low", "pearson_ci_high", "spearman_rho",
                                                 "spearman_ci_low", "spearman_ci_high")},
        "pearson_p": col(probability), "spearman_p": col(probability),
        "ci": col(pa.Check(lambda s: (s > 0) & (s < 1), error="is outside (0, 1)")), "n_boot": col(positive),
        "reason": col(read),
    }
    validity_rows = [
        pa.Check(lambda df: _le(df, "n_used", "n_items"), error="uses more items (n_used) than it has (n_items)"),
        pa.Check(lambda df: _le(df, "n_dropped", "n_items"), error="drops more items (n_dropped) than it has"),
        pa.Check(_used_and_dropped, error="has n_used + n_dropped different from n_items"),
        pa.Check(lambda df: _le(df, "pearson_ci_low", "pearson_ci_high") & _le(df, "spearman_ci_low",
                                                                                 "spearman_ci_high"),
                 error="has a CI whose lower bound is above its upper bound"),
        pa.Check(_not_run_has_reason, error="is not run and gives no reason"),
        pa.Check(lambda df: _ok_holds(df, "pearson_r", "spearman_rho"), error="is ok but lacks its r or rho"),
    ]
    validity_items = {
        "criterion_id": col(text, nullable=False), "item": col(text, nullable=False),
        "criterion_value": col(finite, nullable=False), "association": col(finite), "weight": col(finite),
        "used": col(read),
    }
    validity_item_rows = [pa.Check(lambda df: _ok_holds(df, "association", flag="used"),
                                   error="is used but has no association")]
    # the LLM IAT (eatlas.methods.llm_iat): scores and their bounds in [-1, 1] (Bai et al.'s score), shares and
    # rates in [0, 1], the four counts and every count >= 0, parsed prompts at most the prompts
    score = correlation
    share = probability
    llm_iat = {
        "status": col(one_of(STATUSES, "status")),
        **{c: col(finite, score) for c in ("iat_bias", "logprob_bias", "ci_low", "ci_high", "iat_bias_unparsed_as_zero",
                                           "score_x_first", "score_y_first", "order_effect")},
        **{c: col(finite, share) for c in ("parse_rate", "min_parse_rate", "first_share", "one_group_share")},
        **{c: col(count) for c in ("a", "b", "c", "d", "n_prompts", "n_parsed", "n_pairs", "n_x", "n_y", "n_a",
                                   "n_b", "n_x_first", "n_y_first", "n_one_group", "n_decisions", "n_near_ties")},
        "ci_level": col(pa.Check(lambda s: (s > 0) & (s < 1), error="is outside (0, 1)")), "n_boot": col(positive),
        "sd": col(finite, count), "temperature": col(finite, count), "near_tie_nats": col(finite, count),
        "reason": col(read),
    }
    llm_iat_rows = [
        pa.Check(lambda df: _le(df, "ci_low", "ci_high"), error="has a CI whose lower bound is above its upper bound"),
        pa.Check(lambda df: _le(df, "n_parsed", "n_prompts"), error="parsed more prompts (n_parsed) than it has"),
        pa.Check(_not_run_has_reason, error="is not run and gives no reason"),
    ]
    llm_order = {"first_share": col(finite, share), "score": col(finite, score),
                 **{c: col(count) for c in ("n_prompts", "n_pairs", "to_first")}}
    llm_responses = {"score": col(finite, score), **{c: col(count) for c in ("a", "b", "c", "d", "n_pairs",
                                                                            "n_tokens")}}
    return {"results": (results, result_rows), "runs": (runs, []), "influence": (influence, []),
            "validity_results": (validity, validity_rows), "validity_items": (validity_items, validity_item_rows),
            "llm_iat_results": (llm_iat, llm_iat_rows),
            "llm_iat_order": (llm_order, [pa.Check(lambda df: _le(df, "to_first", "n_pairs"),
                                                   error="gives more pairs to the first-named group than it has")]),
            "llm_iat_responses": (llm_responses, [])}


def _le(df, lo: str, hi: str):
    """Rows where ``lo`` <= ``hi`` (or either is NULL, or the frame lacks one of them)."""
    if not _has(df, lo, hi):
        return pd.Series(True, index=df.index)
    return _flag(df, df[lo] > df[hi])


def _used_and_dropped(df):
    if not _has(df, "n_used", "n_dropped", "n_items"):
        return pd.Series(True, index=df.index)
    return _flag(df, df["n_used"] + df["n_dropped"] != df["n_items"])


def _ok_holds(df, *cols: str, flag: str | None = None):
    """An ok row (``status`` ok, or the boolean ``flag`` true) holds each of ``cols``."""
    gate = flag or "status"
    if not _has(df, gate, *cols):
        return pd.Series(True, index=df.index)
    on = (df[gate] == True) if flag else (df["status"] == "ok")  # noqa: E712 (a masked array)
    return _flag(df, on & df[list(cols)].isna().any(axis=1))


@functools.lru_cache(maxsize=64)
def _schema(table: str, types: tuple) -> tuple:
    import pandera.pandas as pa

    not_nan = pa.Check(lambda s: pd.Series(~np.isnan(s.to_numpy(dtype=np.float64, na_value=0.0)), index=s.index),
                       error="(not a number) is not a value a run stores (it stores NULL)")
    probability = pa.Check(lambda s: (s >= 0) & (s <= 1), error="is outside [0, 1]")
    count = pa.Check(lambda s: s >= 0, error="is negative")
    columns, rows = _specific().get(table, ({}, []))
    out = {}
    for c, typ in types:
        kind = _KINDS.get(typ)
        checks = [not_nan] if kind == "float" else []
        if kind == "float" and PROBABILITY_COLUMN.search(c) and c not in columns:
            checks.append(probability)
        if kind == "int" and c.startswith("n_") and c not in columns:
            checks.append(count)
        own, nullable, unique = columns.get(c, ([], True, False))
        if checks or own or not nullable or unique:
            out[c] = pa.Column(checks=checks + own, nullable=nullable, unique=unique, required=False, coerce=False)
    wanted = [*out, *(["_d"] if table == "results" else [])]
    return pa.DataFrameSchema(out, checks=rows, strict=False), wanted


def schema(table: str, types: dict[str, str]):
    """The pandera schema of a run table with these columns (name -> DuckDB type), and the columns it reads: the
    rules of results, runs and influence (see the module's docstring), and for every table: no NaN (a run
    stores NULL), a p-value or significance level (``p_value``, ``*_p_value``, ``p_upper``, ``alpha``, ...) in
    [0, 1], a count (``n_*``) not negative."""
    return _schema(table, tuple(types.items()))


IDENTITY = ("run_id", "test_id", "level", "role", "item", "criterion_id", "scoring", "prompt_index")
# (what names a row in a message)


def checked_columns(table: str, types: dict[str, str]) -> list[str]:
    """The columns the schema of ``table`` reads, and those that name a row (:data:`IDENTITY`)."""
    wanted = [c for c in schema(table, types)[1] if c != "_d"]
    return wanted + [c for c in IDENTITY if c in types and c not in wanted] if wanted else []


def check_rows(table: str, df: pd.DataFrame, types: dict[str, str], *, where: str | None = None,
               d_methods=None) -> None:
    """Raise one line naming the first row of ``table`` that breaks its schema (and how many rows do).

    ``df``: the rows (:func:`frame` or :func:`arrow_frame`: NULL as NA, NaN kept); ``types``: the table's columns
    (name -> DuckDB type); ``d_methods``: for ``results``, per row, whether its run's method gives a
    WEAT-comparable d. ``where``: the file they come from."""
    import pandera.errors

    the_schema, wanted = schema(table, types)
    if not len(df) or not wanted:
        return
    df = df[[c for c in df.columns if c in wanted or c in IDENTITY]].reset_index(drop=True)
    if d_methods is not None:
        df["_d"] = pd.array(list(d_methods), dtype="boolean")
    try:
        the_schema.validate(df, lazy=True)
    except pandera.errors.SchemaErrors as e:
        cases = e.failure_cases
        first = cases.iloc[0]
        n = cases["index"].nunique()
        row_check = first["schema_context"] == "DataFrameSchema"
        column = None if row_check else first["column"]
        if column in df.columns:
            what = f"field '{column}': {_show(first['failure_case'])} {first['check']}"
        else:
            what = f"a row {first['check']}"
        more = f" (and {n - 1} more row(s))" if n > 1 else ""
        raise EatlasError(f"table {table}{_who(df, first['index'])}, {what}{more}", file=where,
                          hint="a value no EATlas run writes; nothing was written") from None


def _who(df: pd.DataFrame, idx) -> str:
    if not isinstance(idx, (int, np.integer)) or not 0 <= idx < len(df):
        return ""
    row = df.iloc[int(idx)]
    parts = []
    for c, label in (("run_id", "run"), ("test_id", "test"), ("level", "level"), ("criterion_id", "criterion"),
                     ("scoring", "scoring"), ("prompt_index", "prompt"), ("role", "role"), ("item", "item")):
        if c in df.columns and not pd.isna(row[c]):
            v = str(row[c])
            parts.append(f"{label} {v[:8] if c == 'run_id' else v!r}")
    return (" (" + ", ".join(parts) + ")") if parts else f" (row {int(idx) + 1})"


def _show(v) -> str:
    if isinstance(v, float) and np.isnan(v):
        return "NaN"
    return repr(v.item() if isinstance(v, np.generic) else v)
