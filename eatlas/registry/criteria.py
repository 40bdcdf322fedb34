"""Validity criteria: per item (a word or a name) a value about the world, e.g. the percentage of women among
the people employed in an occupation (US Bureau of Labor Statistics, 2015) or a first name's gender score in the
1990 US census, against which the items' associations are correlated (``eatlas run --method validity``).

A criterion is a registry file, ``registry/<source>/criteria/<id>.yaml`` (its fields: the declared model
:class:`eatlas.registry.models.CriterionFile`, JSON Schema ``schemas/criterion.schema.json``), indexed in
``catalog.yaml`` under ``criteria:``. Its values are not typed in: each item names the rows of its data file
(``criterion.data_file``, a file of a ``registry/<source>/data/`` folder whose ``provenance.yaml`` records where it
was copied from and its sha256) that its value comes from, and :func:`check_criteria` (run by ``eatlas validate``)
derives every value again from those rows: the one row's value (``aggregate: single``) or the rows' values weighted
by ``weight_column`` (``weighted_mean``). It also checks that the rows are all the rows naming the item (one of
``key_columns`` is its text, without regard to case, among the rows matching ``where``), that the attribute sets
``a`` and ``b`` exist at their versions, and the items' table against a pandera schema (:func:`item_schema`).
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from ..errors import EatlasError
from .base import Criterion, Registry

TOLERANCE = 1e-9        # relative: a value derived again equals the file's up to floating-point rounding


def item_schema():
    """The pandera schema of a criterion's items (one row per item): text without outer whitespace and unique
    within the criterion without regard to case, a finite value, at least one data row, a positive weight."""
    import pandera.pandas as pa

    def unique_casefold(s):
        return ~s.str.casefold().duplicated(keep=False)

    return pa.DataFrameSchema({
        "criterion": pa.Column(str),
        "n": pa.Column(int),
        "text": pa.Column(str, [pa.Check.str_length(min_value=1),
                                pa.Check(lambda s: s == s.str.strip(), element_wise=False,
                                         error="text has leading or trailing whitespace"),
                                pa.Check(unique_casefold, error="the item is listed twice (without regard to case)")]),
        "value": pa.Column(float, pa.Check(lambda s: s.map(math.isfinite), error="value is not a finite number")),
        "n_rows": pa.Column(int, pa.Check.ge(1)),
        "weight": pa.Column(float, pa.Check.gt(0), nullable=True),
    }, strict=True)


def item_table(c: Criterion):
    import pandas as pd

    return pd.DataFrame({"criterion": [c.id] * len(c.items), "n": list(range(len(c.items))),
                         "text": [i.text for i in c.items], "value": [float(i.value) for i in c.items],
                         "n_rows": [len(i.rows) for i in c.items],
                         "weight": pd.Series([i.weight for i in c.items], dtype="float64")})


def _item_problems(c: Criterion) -> list[EatlasError]:
    import pandera.pandas as pa

    if not c.items:
        return []
    try:
        item_schema().validate(item_table(c), lazy=True)
    except pa.errors.SchemaErrors as err:
        out, seen = [], set()
        fc = err.failure_cases
        for r in fc.itertuples():
            n = int(r.index) if r.index is not None and r.index == r.index else None
            fld = f"items[{n}].{r.column}" if n is not None and isinstance(r.column, str) else "items"
            msg = str(r.check)
            if (fld, msg) in seen:
                continue
            seen.add((fld, msg))
            out.append(EatlasError(msg if " " in msg else f"{r.column} fails {msg}", file=c.file,
                                   obj=f"criterion {c.id}", field=fld, hint="fix the item, or re-run the criterion's "
                                   "curation script"))
        return out
    return []


def read_data(reg: Registry, c: Criterion) -> list[dict]:
    """The rows of the criterion's data file (CSV, or tab-separated when it ends in .tsv), as text."""
    spec = c.criterion
    rel = spec.get("data_file")
    where = {"file": c.file, "obj": f"criterion {c.id}", "field": "criterion.data_file"}
    path = reg.resolve(rel, c.file, f"criterion {c.id}")
    parts = Path(rel).parts
    if len(parts) != 4 or parts[0] != "registry" or parts[2] != "data":
        raise EatlasError(f"data file {rel!r} is not in a registry/<source>/data/ folder",
                          hint="copy the source file there and list it in that folder's provenance.yaml", **where)
    if not path.is_file():
        raise EatlasError(f"data file {rel!r} does not exist", hint="restore it, or fix the path", **where)
    text = path.read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text), delimiter="\t" if path.suffix == ".tsv" else ","))


def _number(v, what: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{what} {v!r} is not a number") from None


def derive(c: Criterion, rows: list[dict]) -> list[tuple[int, list[str], float | None, float | None]]:
    """Every item's value derived again from the data rows: (item index, problems, value, weight)."""
    spec = c.criterion
    keys, col, wcol = spec["key_columns"], spec["value_column"], spec.get("weight_column")
    where = spec.get("where") or {}
    kept = {n: r for n, r in enumerate(rows, 1) if all(r.get(k) == v for k, v in where.items())}
    by_key: dict[str, list[int]] = {}
    for n, r in kept.items():
        for k in keys:
            if r.get(k):
                by_key.setdefault(r[k].casefold(), [])
                if n not in by_key[r[k].casefold()]:
                    by_key[r[k].casefold()].append(n)
    out = []
    for i, item in enumerate(c.items):
        probs: list[str] = []
        missing = [n for n in item.rows if n not in kept]
        if missing:
            probs.append(f"row(s) {', '.join(map(str, missing))} are not data rows of the file"
                         + (f" with {where}" if where else ""))
            out.append((i, probs, None, None))
            continue
        naming = by_key.get(item.text.casefold(), [])
        if sorted(item.rows) != sorted(naming):
            probs.append(f"rows {sorted(item.rows)} are not the rows naming {item.text!r} in "
                         f"{', '.join(keys)}: {sorted(naming)}")
        try:
            vals = [_number(kept[n].get(col), f"row {n}'s {col}") for n in item.rows]
            if spec["aggregate"] == "single":
                if len(vals) != 1:
                    probs.append(f"aggregate single takes one row, the item lists {len(vals)}")
                value, weight = vals[0], (_number(kept[item.rows[0]].get(wcol), f"row {item.rows[0]}'s {wcol}")
                                          if wcol else None)
            else:
                ws = [_number(kept[n].get(wcol), f"row {n}'s {wcol}") for n in item.rows]
                weight = sum(ws)
                value = sum(w * v for w, v in zip(ws, vals)) / weight
        except (ValueError, ZeroDivisionError, TypeError) as e:
            probs.append(str(e))
            out.append((i, probs, None, None))
            continue
        out.append((i, probs, value, weight))
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def check_criterion(reg: Registry, c: Criterion, *, item_table: bool = True) -> list[EatlasError]:
    """Every problem of one criterion: its items' table (``item_table``: the pandera schema, which a run leaves to
    ``eatlas validate``), its paper, attribute sets, changelog, and each value derived again from its data rows."""
    from .base import semver_key

    obj = f"criterion {c.id}"
    out = _item_problems(c) if item_table else []
    if reg.sources and c.source.get("paper") not in reg.sources:
        out.append(EatlasError(f"unknown paper {c.source.get('paper')!r}", file=c.file, obj=obj, field="source.paper",
                               hint="add it to registry/sources.yaml"))
    for role in ("a", "b"):
        ref = getattr(c, role)
        sid, _, ver = ref.partition("@")
        s = reg.sets.get(sid)
        if s is None:
            out.append(EatlasError(f"names set {sid!r}, which is not in the catalog", file=c.file, obj=obj, field=role,
                                   hint="name an attribute set of the registry, id@version"))
        elif s.version != ver:
            out.append(EatlasError(f"set {sid} is at version {s.version}, not {ver}", file=c.file, obj=obj, field=role,
                                   hint=f"run 'eatlas bump {sid} --follow' (or refer to {sid}@{s.version})"
                                   if (semver_key(ver) or (0,)) < (semver_key(s.version) or (0,))
                                   else f"refer to {sid}@{s.version}"))
    if semver_key(c.version) is not None and not any(isinstance(e, dict) and str(e.get("version")) == c.version
                                                     for e in c.changelog):
        out.append(EatlasError(f"changelog has no entry for version {c.version}", file=c.file, obj=obj,
                               field="changelog", hint="add - {version: ..., date: ..., change: ...}"))
    recorded = reg.recorded_hash.get(("criteria", c.id))
    if recorded is None:
        out.append(EatlasError("no sha256 recorded in catalog.yaml", file="catalog.yaml", obj=obj, field="sha256",
                               hint="run 'eatlas catalog --sync'"))
    elif recorded != c.hash():
        out.append(EatlasError(f"content changed but version {c.version} did not", file=c.file, obj=obj,
                               field="version", hint="bump the version, add a changelog entry, then "
                                                     "'eatlas catalog --sync'"))
    spec = c.criterion
    if spec.get("aggregate") == "weighted_mean" and not spec.get("weight_column"):
        out.append(EatlasError("aggregate weighted_mean needs a weight_column", file=c.file, obj=obj,
                               field="criterion.weight_column", hint="name the data file's column of the weights"))
        return out
    try:
        rows = read_data(reg, c)
    except EatlasError as e:
        return out + [e]
    header = set(rows[0]) if rows else set()
    cols = [spec["value_column"], *spec["key_columns"], *([spec["weight_column"]] if spec.get("weight_column") else []),
            *(spec.get("where") or {})]
    absent = [k for k in cols if k not in header]
    if absent:
        return out + [EatlasError(f"the data file has no column(s) {', '.join(absent)}", file=c.file, obj=obj,
                                  field="criterion", hint=f"its columns: {', '.join(sorted(header))}")]
    for i, probs, value, weight in derive(c, rows):
        item = c.items[i]
        for p in probs:
            out.append(EatlasError(p, file=c.file, obj=obj, field=f"items[{i}].rows",
                                   hint="list the data rows the value comes from (1-based, header not counted)"))
        if value is None:
            continue
        if not _close(value, item.value):
            what = "the value of its row" if spec["aggregate"] == "single" else "the weighted_mean of its rows"
            out.append(EatlasError(f"value {item.value!r} of {item.text!r} is not {what} ({value!r})",
                                   file=c.file, obj=obj, field=f"items[{i}].value",
                                   hint="values are derived from the data file, never typed: re-run the curation "
                                        "script"))
        if item.weight is not None and weight is not None and not _close(weight, item.weight):
            out.append(EatlasError(f"weight {item.weight!r} of {item.text!r} is not its rows' {spec['weight_column']} "
                                   f"({weight!r})", file=c.file, obj=obj, field=f"items[{i}].weight",
                                   hint="re-run the curation script"))
    return out


def check_criteria(reg: Registry) -> list[EatlasError]:
    """Every problem of every criterion of the registry (``eatlas validate``)."""
    out = []
    for c in getattr(reg, "criteria", {}).values():
        out += check_criterion(reg, c)
    return out


def criterion_rows(reg: Registry, c: Criterion) -> list[dict]:
    """One plain row per item, with where its value comes from: the criterion, the item, its value and unit, the
    data file, its rows and the source (for the published dataset and ``eatlas show``)."""
    spec = c.criterion
    return [{"criterion_id": c.id, "criterion_version": c.version, "item": i.text, "kind": i.kind,
             "value": i.value, "unit": spec.get("unit"), "measure": spec.get("measure"),
             "weight": i.weight, "data_file": spec.get("data_file"), "rows": ",".join(map(str, i.rows)),
             "agency": spec.get("agency"), "year": spec.get("year"), "paper": c.source.get("paper"),
             "license": c.license} for i in c.items]


def items_from_rows(rows: list[dict], *, key_column: str, value_column: str, kind: str = "word",
                    words: list[str] | None = None, where: dict | None = None) -> list[dict]:
    """Criterion items (text, kind, value, rows) read from a data file's rows, one per row naming a word
    (``key_column``) among those matching ``where``; with ``words``, only those words, in that order. A word named
    by several rows is refused (aggregate the file first, or give a weight column and write the items yourself).
    ``eatlas criterion add`` (eatlas.registry.criterion_add) reads a user's table by the same rule, naming every
    row at fault instead of stopping at the first."""
    where = where or {}
    found: dict[str, list[int]] = {}
    for n, r in enumerate(rows, 1):
        if all(r.get(k) == v for k, v in where.items()) and r.get(key_column):
            found.setdefault(r[key_column].strip().casefold(), []).append(n)
    order = words if words is not None else list(dict.fromkeys(r[key_column].strip() for r in rows
                                                                if r.get(key_column) and all(
                                                                    r.get(k) == v for k, v in where.items())))
    out = []
    for w in order:
        at = found.get(w.casefold(), [])
        if len(at) != 1:
            raise EatlasError(f"{w!r} is named by {len(at)} rows of the file" + (f" with {where}" if where else ""),
                              field=key_column, hint="one row per word (aggregate the file first), or leave it out")
        out.append({"text": w, "kind": kind, "value": _number(rows[at[0] - 1].get(value_column),
                                                              f"row {at[0]}'s {value_column}"), "rows": at})
    return out
