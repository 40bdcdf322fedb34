"""The published-results tables (``registry/<paper>/published/*.csv``): read into one table of text
(:func:`read_published`, which the results store loads into ``published_results``), and checked against
``schemas/published.yaml``: the header (names and order), numeric values, test ids, levels, model
families, formula-like cells, and each table's content hash recorded in catalog.yaml."""
from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EatlasError
from ..paths import data_root, loaders_dir
from .base import LEVELS, Registry, read_yaml

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_FILE = data_root() / "schemas" / "published.yaml"
MAX_REPORTED = 5        # problems reported per table (a wrong column would otherwise repeat on every row)


@lru_cache(maxsize=1)
def schema() -> dict:
    return read_yaml(SCHEMA_FILE)


def file_hash(path: Path) -> str:
    """sha256 of the table's bytes, line endings normalised (a checkout on Windows hashes the same)."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def published_inputs(reg: Registry) -> list[Path]:
    """The files and folders :func:`eatlas.registry.schemas.check_published` depends on besides those it reads as
    YAML (recorded as read): every table the catalog lists, the schema, the model loaders (their families) and the
    folders where conventions files and loaders are found (a file added there changes them)."""
    root = Path(reg.root)
    out = [SCHEMA_FILE, loaders_dir(), *loaders_dir().glob("*.yaml"), root / "registry",
           *(root / "registry").glob("*/published")]
    for e in reg.catalog.get("published") or []:
        try:
            out.append(reg.resolve(e.get("file"), "catalog.yaml", f"published {e.get('id')}"))
        except EatlasError:
            pass            # the check says why
    return out


def _number(v: str) -> float | None:
    try:
        x = float(v)
    except ValueError:
        return None
    return x


def families(reg: Registry | None = None) -> set[str]:
    return _families(str(loaders_dir()))


@lru_cache(maxsize=8)
def _families(loaders_dir: str) -> frozenset[str]:
    """The schema's model families and those of the model loader entries (``loaders/*.yaml``, read here for
    their ``family`` alone: eatlas.encoders.loaders checks the entries, a layer above the registry)."""
    fams = set(schema()["model_families"])
    own = set()
    try:
        for p in sorted(Path(loaders_dir).glob("*.yaml")):
            doc = read_yaml(p)
            if isinstance(doc, dict) and isinstance(doc.get("family"), str):
                own.add(doc["family"])
    except EatlasError:
        own = set()          # a broken loader is reported by validate on its own
    return frozenset(fams | own | {f"cbow-{f}" for f in own})


def _formula_like(col: str, v: str, starts: tuple, plus) -> bool:
    """A cell a spreadsheet would run as a formula: it begins with one of ``starts`` and is not a number (nor, in a
    row or column label, a printed +label such as Tan & Celis's '+C11: ...')."""
    return v.startswith(starts) and _number(v) is None and not (col in ("row_label", "column_label")
                                                                and plus.match(v))


def _not_finite(statistic: str, missing: str, value: str, text_statistics) -> bool:
    """A value that must be a finite number (its statistic is not printed as text, and it is not an empty missing
    cell) and is not one."""
    if statistic in text_statistics or (missing == "true" and value == ""):
        return False
    x = _number(value)
    return x is None or not math.isfinite(x)


def _all_rows_pass(body: list[list[str]], cols: list[str], sch: dict, tests: set, fams, sources, plus,
                   starts: tuple) -> bool:
    """Whether no row of a table has a problem :func:`check_table` reports, judged on each column's distinct values
    (a few hundred, of 54,000 rows): the rule of each check, applied once per distinct value instead of per row."""
    if not body or any(len(row) != len(cols) for row in body):
        return not body
    col = dict(zip(cols, zip(*body)))
    if any(_formula_like(c, v, starts, plus) for c, values in col.items() for v in set(values)):
        return False
    text = set(sch["text_statistics"])
    if any(_not_finite(*svm, text) for svm in set(zip(col["statistic"], col["missing"], col["value"]))):
        return False
    return (set(col["missing"]) <= set(sch["missing"]) and set(col["test_id"]) - {""} <= tests
            and set(col["level"]) - {""} <= set(LEVELS) and set(col["model_family"]) - {""} <= set(fams)
            and (not sources or set(col["paper"]) <= set(sources)))


def check_table(reg: Registry, entry: dict) -> list[EatlasError]:
    """Every problem of one catalog ``published`` entry's table (at most MAX_REPORTED)."""
    sch = schema()
    rel = entry.get("file")
    obj = f"published {entry.get('id')}"
    path = reg.resolve(rel, "catalog.yaml", obj)
    if not path.is_file():
        return []            # read_published reports it
    where = {"file": str(rel), "obj": obj}
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (UnicodeDecodeError, csv.Error):
        return []            # read_published reports it
    if not rows:
        return []
    header, out = rows[0], []
    cols = list(sch["columns"])
    if header != cols:
        extra = [c for c in header if c not in cols]
        what = (f"unknown column(s) {', '.join(map(repr, extra))}" if extra else
                "missing column(s) " + ", ".join(c for c in cols if c not in header) if set(cols) - set(header) else
                "columns in another order")
        return [EatlasError(f"the header differs from the schema: {what}", field="header",
                            hint=f"the header is exactly: {','.join(cols)}", **where)]
    tests = set(reg.tests) | set(getattr(reg, "criteria", {}))      # a printed correlation names its criterion
    fams = families(reg)
    plus = re.compile(sch["printed_plus_label"])
    starts = tuple(sch["formula_start"])
    if _all_rows_pass(rows[1:], cols, sch, tests, fams, reg.sources, plus, starts):
        rows = rows[:1]             # nothing to report: the row-by-row loop below names each problem's line
    for n, row in enumerate(rows[1:], start=2):
        if len(out) >= MAX_REPORTED:
            break
        if len(row) != len(cols):
            out.append(EatlasError(f"line {n} has {len(row)} cells, the header {len(cols)}", field=f"line {n}",
                                   hint="quote cells that hold commas", **where))
            continue
        r = dict(zip(cols, row))
        line = f"line {n}"
        joined = "\0" + "\0".join(row)        # one scan of the row for a cell that begins like a formula
        for c, v in (r.items() if any("\0" + s in joined for s in starts) else ()):
            if _formula_like(c, v, starts, plus):
                out.append(EatlasError(f"{line}: cell {v[:40]!r} begins like a spreadsheet formula", field=c,
                                       hint="write the text without a leading =, +, -, @ (a number may be signed)",
                                       **where))
        if r["missing"] not in sch["missing"]:
            out.append(EatlasError(f"{line}: missing is {r['missing']!r}", field="missing",
                                   hint="true or false", **where))
        if _not_finite(r["statistic"], r["missing"], r["value"], sch["text_statistics"]):
            out.append(EatlasError(f"{line}: value {r['value'][:40]!r} of statistic {r['statistic']!r} is not a "
                                   "finite number", field="value",
                                   hint="the number as printed; an unprinted cell is empty with missing = true",
                                   **where))
        if r["test_id"] and r["test_id"] not in tests:
            out.append(EatlasError(f"{line}: unknown test id {r['test_id']!r}", field="test_id",
                                   hint="a test or criterion id of the catalog, or empty", **where))
        if r["level"] and r["level"] not in LEVELS:
            out.append(EatlasError(f"{line}: unknown level {r['level']!r}", field="level",
                                   hint=f"one of: {', '.join(LEVELS)}, or empty", **where))
        if r["model_family"] and r["model_family"] not in fams:
            out.append(EatlasError(f"{line}: unknown model family {r['model_family']!r}", field="model_family",
                                   hint=f"one of: {', '.join(sorted(fams))} (schemas/published.yaml, loaders/)",
                                   **where))
        if reg.sources and r["paper"] not in reg.sources:
            out.append(EatlasError(f"{line}: unknown paper {r['paper']!r}", field="paper",
                                   hint="add it to registry/sources.yaml", **where))
    recorded = reg.recorded_hash.get(("published", entry.get("id")))
    if recorded is None:
        out.append(EatlasError("no version and sha256 recorded in catalog.yaml", file="catalog.yaml", obj=obj,
                               field="sha256", hint="run 'eatlas catalog --sync'"))
    elif recorded != file_hash(path):
        out.append(EatlasError(f"content changed but version {entry.get('version')} did not", field="sha256",
                               hint="run 'eatlas catalog --sync', which records the new content under a new "
                                    "version", **where))
    return out[:MAX_REPORTED + 1]


# The columns of a published-results CSV, as the results store's table published_results holds them.
PUBLISHED_COLUMNS = ["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance",
                     "missing", "test_id", "level", "model", "model_family", "note"]

MAX_CSV_BYTES = 20_000_000


def read_published(reg, entries: list | None = None) -> pd.DataFrame:
    """The published-results CSVs named in the catalog (or ``entries`` of it), as one table of text."""
    import pandas as pd

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


# The columns the results store derives from a published table's text (:func:`derive_columns`).
DERIVED_COLUMNS = ["value_num", "estimand"]
UNICODE_MINUS = "\u2212"


def value_numbers(values: pd.Series, statistics: pd.Series) -> pd.Series:
    """The printed text of each value as a number (``.18`` 0.18, ``+1.81`` 1.81, ``\u22120.3`` -0.3); NaN where the
    text is not a finite number or its statistic is printed as text (schemas/published.yaml, text_statistics)."""
    import numpy as np
    import pandas as pd

    text = values.astype(str).str.strip().str.replace(UNICODE_MINUS, "-", regex=False)
    x = pd.to_numeric(text.where(text.str.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")), errors="coerce")
    x = x.where(np.isfinite(x) & ~statistics.isin(schema()["text_statistics"]))
    return x.astype(float)


def estimand_rules(reg) -> list[dict]:
    """The ``estimands:`` rules of every paper's conventions.yaml (paper, statistic, tables, columns, estimand)."""
    return [r for c in _read_conventions(reg) for r in c["estimands"]]


def derive_columns(reg, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (from :func:`read_published`) with ``value_num`` (:func:`value_numbers`) and ``estimand``: the kind of
    number a row holds, so that one filter gives like with like. A statistic's default estimand is in
    schemas/published.yaml (``estimands``: effect_size is a WEAT d, mean an ML-EAT mean cosine, ...); a paper's
    conventions.yaml overrides it for some of its tables or columns (``estimands:``, e.g. ML-EAT's Level 2 effect
    sizes are single-target d's); a statistic with neither keeps its own name."""
    from fnmatch import fnmatchcase

    df = df.copy()
    df["value_num"] = value_numbers(df["value"], df["statistic"])
    defaults = schema().get("estimands") or {}
    df["estimand"] = df["statistic"].map(lambda s: defaults.get(s, s))
    if not len(df):
        return df
    for r in estimand_rules(reg):
        mask = (df["paper"] == r["paper"]) & (df["statistic"] == r["statistic"])
        if r["tables"]:
            mask &= df["table_id"].isin(r["tables"])
        if r["columns"]:
            mask &= df["column_label"].map(lambda c, globs=r["columns"]: any(fnmatchcase(c, g) for g in globs))
        df.loc[mask, "estimand"] = r["estimand"]
    return df


# Which convention (eatlas.stats.conventions) each paper's published numbers follow:
# registry/<paper>/published/conventions.yaml, one per paper (PUBLISHED.md, docs/registry-format.md).
CONVENTIONS_FILE = "conventions.yaml"
CONVENTION_COLUMNS = ["paper", "convention", "d_denominator", "p_rule", "stated_in", "source_file"]
_CONVENTION_KEYS = {"paper", "convention", "stated_in", "significance", "estimands"}
# A rule of ``estimands:`` (a list in conventions.yaml): the rows of ``statistic`` in ``tables`` (all when absent)
# whose column_label matches one of the ``columns`` globs (all when absent) hold ``estimand``; ``stated_in`` says
# where the paper says so.
_ESTIMAND_KEYS = {"statistic", "tables", "columns", "estimand", "stated_in"}
# The rule each published table marks significance by (``significance:`` of conventions.yaml, one entry per group of
# tables): its level (a number, or 'unspecified' where the paper does not state it), its correction for multiple
# tests (none | holm | unspecified), the printed marks that mean significant by it, and where it is stated. The
# p-value is the convention's (p_rule). A table with no entry marks by a rule 'unspecified'.
SIGNIFICANCE_COLUMNS = ["paper", "table_id", "p_rule", "level", "correction", "marks", "rule", "stated_in",
                        "source_file"]
_SIGNIFICANCE_KEYS = {"tables", "level", "correction", "marks", "stated_in"}
CORRECTIONS = ("none", "holm", "unspecified")
UNSPECIFIED = "unspecified"


def read_conventions(reg) -> list[dict]:
    """Every ``registry/<paper>/published/conventions.yaml``: the convention of the paper's published numbers,
    with what it means (d's denominator, the p-value's rule) and where that was read (CONVENTION_COLUMNS). An
    unreadable or wrong file raises EatlasError naming it."""
    return [{k: v for k, v in r.items() if k in CONVENTION_COLUMNS} for r in _read_conventions(reg)]


def _read_conventions(reg) -> list[dict]:
    from ..stats import conventions

    rows = []
    for p in sorted((Path(reg.root) / "registry").glob(f"*/published/{CONVENTIONS_FILE}")):
        rel = p.relative_to(reg.root).as_posix()
        doc = read_yaml(p, root=Path(reg.root))
        folder = p.parent.parent.name
        if not isinstance(doc, dict):
            raise EatlasError("expected a mapping with 'paper', 'convention' and 'stated_in'", file=rel)
        unknown = sorted(set(doc) - _CONVENTION_KEYS)
        if unknown:
            raise EatlasError(f"unknown key(s) {', '.join(unknown)}", file=rel, field=unknown[0],
                              hint="the keys are paper, convention, stated_in, significance, estimands")
        if doc.get("paper") != folder:
            raise EatlasError(f"paper is {doc.get('paper')!r} but the file is in registry/{folder}", file=rel,
                              field="paper", hint=f"paper: {folder}")
        name = doc.get("convention")
        if name not in conventions.CONVENTIONS:
            raise EatlasError(f"unknown convention {name!r}", file=rel, field="convention",
                              hint=f"one of: {', '.join(conventions.NAMES)} (docs/methods.md, 'Conventions')")
        if not isinstance(doc.get("stated_in"), str) or not doc["stated_in"].strip():
            raise EatlasError("no stated_in", file=rel, field="stated_in",
                              hint="say where the convention was read (the authors' file and commit, or the paper)")
        conv = conventions.CONVENTIONS[name]
        rows.append({"paper": folder, "convention": name, "d_denominator": conv.denominator,
                     "p_rule": conv.p_rule, "stated_in": doc["stated_in"].strip(), "source_file": rel,
                     "significance": _significance(doc.get("significance"), folder, conv.p_rule, rel),
                     "estimands": _estimands(doc.get("estimands"), folder, rel)})
    return rows


def _estimands(entries, paper: str, rel: str) -> list[dict]:
    """The rules of a conventions file's ``estimands:`` list (see _ESTIMAND_KEYS), checked."""
    if entries is None:
        return []
    known = set(schema().get("estimand_names") or {})
    if not isinstance(entries, list):
        raise EatlasError("estimands must be a list of entries (statistic, tables, columns, estimand, stated_in)",
                          file=rel, field="estimands")
    rows = []
    for i, e in enumerate(entries):
        where = f"estimands[{i}]"
        if not isinstance(e, dict):
            raise EatlasError("expected a mapping with statistic, estimand, stated_in (tables, columns optional)",
                              file=rel, field=where)
        unknown = sorted(set(e) - _ESTIMAND_KEYS)
        missing = sorted({"statistic", "estimand", "stated_in"} - set(e))
        if unknown or missing:
            raise EatlasError(f"{'unknown' if unknown else 'missing'} key(s) {', '.join(unknown or missing)}",
                              file=rel, field=f"{where}.{(unknown or missing)[0]}",
                              hint="the keys are statistic, tables, columns, estimand, stated_in")
        for k in ("tables", "columns"):
            v = e.get(k)
            if v is not None and not (isinstance(v, list) and v and all(isinstance(t, str) and t for t in v)):
                raise EatlasError(f"{k} must be a list of text", file=rel, field=f"{where}.{k}")
        if e["estimand"] not in known:
            raise EatlasError(f"unknown estimand {e['estimand']!r}", file=rel, field=f"{where}.estimand",
                              hint="one of: " + ", ".join(sorted(known)) + " (schemas/published.yaml, estimand_names)")
        if not isinstance(e["statistic"], str) or not isinstance(e["stated_in"], str) or not e["stated_in"].strip():
            raise EatlasError("statistic and stated_in are text", file=rel, field=where)
        rows.append({"paper": paper, "statistic": e["statistic"], "tables": e.get("tables") or [],
                     "columns": e.get("columns") or [], "estimand": e["estimand"]})
    return rows


def _significance(entries, paper: str, p_rule: str, rel: str) -> list[dict]:
    """The rows of a conventions file's ``significance:`` list (see SIGNIFICANCE_COLUMNS), checked."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise EatlasError("significance must be a list of entries (tables, level, correction, marks, stated_in)",
                          file=rel, field="significance")
    rows = []
    for i, e in enumerate(entries):
        where = f"significance[{i}]"
        if not isinstance(e, dict):
            raise EatlasError("expected a mapping with tables, level, correction, marks, stated_in", file=rel,
                              field=where)
        unknown = sorted(set(e) - _SIGNIFICANCE_KEYS)
        missing = sorted(_SIGNIFICANCE_KEYS - set(e))
        if unknown or missing:
            raise EatlasError(f"{'unknown' if unknown else 'missing'} key(s) {', '.join(unknown or missing)}",
                              file=rel, field=f"{where}.{(unknown or missing)[0]}",
                              hint="the keys are tables, level, correction, marks, stated_in")
        tables, level, corr, marks = e["tables"], e["level"], e["correction"], e["marks"]
        if not (isinstance(tables, list) and tables and all(isinstance(t, str) and t for t in tables)):
            raise EatlasError("tables must list table ids", file=rel, field=f"{where}.tables")
        if level != UNSPECIFIED and not (isinstance(level, (int, float)) and not isinstance(level, bool)
                                         and 0 < level < 1):
            raise EatlasError(f"level {level!r} is neither a number in (0, 1) nor 'unspecified'", file=rel,
                              field=f"{where}.level", hint="write 'unspecified' where the paper does not state it")
        if corr not in CORRECTIONS:
            raise EatlasError(f"unknown correction {corr!r}", file=rel, field=f"{where}.correction",
                              hint=", ".join(CORRECTIONS))
        if not (isinstance(marks, list) and all(isinstance(m, str) for m in marks)):
            raise EatlasError("marks must list the printed marks (e.g. ['*', '**'])", file=rel, field=f"{where}.marks")
        if not isinstance(e["stated_in"], str) or not e["stated_in"].strip():
            raise EatlasError("no stated_in", file=rel, field=f"{where}.stated_in",
                              hint="say where the rule is stated (the paper's section or caption)")
        lv = None if level == UNSPECIFIED else float(level)
        rule = (f"{p_rule} p" + (f" < {lv:g}" if lv is not None else ", level unspecified")
                + {"none": ", uncorrected", "holm": ", Holm-Bonferroni over the paper's family",
                   "unspecified": ", correction unspecified"}[corr]
                + (f" (marked {' or '.join(marks)})" if marks else ""))
        for t in tables:
            rows.append({"paper": paper, "table_id": t, "p_rule": p_rule, "level": lv, "correction": corr,
                         "marks": " ".join(marks), "rule": rule, "stated_in": e["stated_in"].strip(),
                         "source_file": rel})
    return rows


def read_significance(reg) -> list[dict]:
    """Every published table's significance rule (``significance:`` of the papers' conventions.yaml), one row per
    table (SIGNIFICANCE_COLUMNS); checked as :func:`read_conventions` checks the files."""
    return [s for r in _read_conventions(reg) for s in r["significance"]]


def check_conventions(reg) -> list[EatlasError]:
    """The problem of the papers' conventions files (at most one: the first file that is wrong)."""
    try:
        read_conventions(reg)
    except EatlasError as e:
        return [e]
    return []
