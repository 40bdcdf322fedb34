"""The DuckDB results store: runs, results, the papers' published results, and the reproduction view.

A run is written in one transaction after everything was computed, so a failed or interrupted run
leaves the database as it was. A database another process is writing is reported as in use.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
import re
import tempfile
import time
import typing
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..columns import as_columns
from ..errors import EatlasError
from ..registry.published import CONVENTION_COLUMNS as _CONVENTION_COLUMNS
from ..registry.published import (
    DERIVED_COLUMNS,
    PUBLISHED_COLUMNS,
    SCHEMA_FILE,
    derive_columns,
    read_conventions,
    read_published,
    read_significance,
)
from ..registry.published import SIGNIFICANCE_COLUMNS as _SIGNIFICANCE_COLUMNS
from ..stats.conventions import CONVENTIONS as _CONVENTIONS
from . import known

if typing.TYPE_CHECKING:
    import pandas as pd


@dataclass
class RunRow:
    """A row of ``runs``: one per run of any method (eatlas.run.runner.run_record)."""
    run_id: str
    method: str
    model: str
    model_fingerprint: str
    model_family: str | None
    pooling: str | None
    layer: str | None
    subword: str | None
    seed: int
    n_samples: int | None
    alpha: float | None
    levels: list[str] | None
    tests: list[str] | None
    started_at: _dt.datetime
    finished_at: _dt.datetime
    eatlas_version: str | None
    package_versions: dict | None
    registry: dict | None
    settings: dict | None


@dataclass
class ResultRow:
    """A row of ``results``: one per test and level of a run over a test's four matrices (eatlas.run.runner)."""
    test_id: str
    test_version: str
    level: str
    model: str
    pooling: str | None
    layer: str | None
    subword: str | None
    status: str                     # ok | not_run
    reason: str | None
    effect_size: float | None       # a WEAT-comparable d (NULL for a method without one: its own table has its numbers)
    p_value: float | None
    exact: bool | None
    n_partitions: int | None
    parametric: bool | None
    n_x: int | None
    n_y: int | None
    n_a: int | None
    n_b: int | None
    holm_significant: bool | None   # Holm-Bonferroni over the run's family (holm_family), by the p of holm_p_rule
    template: str | None
    truncation_seed: int | None
    n_dropped: int | None
    dropped: dict | None            # stimuli not encodable (e.g. out of vocabulary), per role
    alternative: str | None
    ci_low: float | None            # the interval of ci_method, the one shown beside its estimate: d_concepts's
    ci_high: float | None           # (concepts), or effect_size's (permutation, percentile, BCa); runs before the
    ci_level: float | None          # concepts' question: d_corrected's (inversion)
    n_boot: int | None
    ci_method: str | None           # concepts | permutation | percentile | BCa (inversion: earlier versions)
    d_loo_min: float | None
    d_loo_max: float | None
    sign_stable: bool | None
    also_as: list[str] | None       # the run's other tests with identical stimuli at this level, computed once as this
    d_corrected: float | None       # d / sqrt(reliability), the older disattenuated d (eatlas.stats.interval); never
                                    # paired with a paper's d; d_concepts is the estimate with an interval
    reliability: float | None       # 1 - the attribute sample's noise / var(s(w)) over X u Y
    notes: list[str] | None         # p/CI disagreement, a set smaller than the calibration study checked, a
                                    # concepts' d not estimable, an effect opposite to a one-sided alternative
                                    # (eatlas.run.runner.result_notes)
    convention: str | None          # eatlas.stats.conventions: d's denominator and the p's rule (NULL: before them,
                                    # caliskan); NULL for a method without a WEAT-comparable effect size
    overlap: dict | None            # "x/y" / "a/b" -> items the authors' lists put in both sets (the test's overlap:)
    language_warning: str | None    # the test's language is not among those the model declares (eatlas.run.runner)
    # The concepts' question (eatlas.stats.concepts: targets and attributes both samples of their concepts), stored
    # whatever ci_method: its p (two-sided), its d and interval at ci_level; where the d is not estimable
    # at these set sizes, d_concepts is NULL, concepts_reason says why in words, and the interval is the hull of
    # the confidence set (reaching the largest |d| the set sizes allow).
    p_concepts: float | None
    d_concepts: float | None
    concepts_low: float | None
    concepts_high: float | None
    concepts_estimable: bool | None
    concepts_reason: str | None
    # p_concepts is two-sided (the test its interval inverts: the interval excludes 0 exactly when p_concepts <
    # 1 - ci_level); this is the same test against `alternative` (NULL in stores written before it)
    p_concepts_one_sided: float | None
    # The papers' question (these attribute words; targets exchangeable): p_value's own interval, the permutation
    # test inverted, of the sample d (effect_size).
    papers_low: float | None
    papers_high: float | None
    # Where the concepts' d is not estimable, concepts_low/high and (ci_method concepts) ci_low/high are NULL: no
    # interval. The hull of the confidence set (reaching the largest |d| the set sizes allow) is kept here instead,
    # for what it is; NULL for an estimable result.
    concepts_hull_low: float | None
    concepts_hull_high: float | None
    # The partitions p_value's permutation test sampled (NULL for an exact test, a parametric or normal p), and
    # whether p_value is at its floor 1/p_n_samples (2/p_n_samples two-sided): no sampled partition was as extreme
    # as the observed one, so p is a bound, printed '< 1e-05' (eatlas.legend.fmt_p).
    p_n_samples: int | None
    p_at_floor: bool | None
    # The family holm_significant was computed over: which p (concepts | papers, --p-rule), an id of its members
    # (test, version, level), the rule and alpha (eatlas.run.runner.mark_family), and how many results it held.
    holm_p_rule: str | None
    holm_family: str | None
    holm_family_size: int | None


def _table_ddl(name: str, cols: list[tuple[str, str, bool]], key: tuple[str, ...] | None, refs: bool) -> str:
    lines = [f'    "{c}" {typ}{" NOT NULL" if nn else ""}'
             + (" REFERENCES runs (run_id)" if refs and c == "run_id" else "") for c, typ, nn in cols]
    if key:
        lines.append(f"    PRIMARY KEY ({', '.join(key)})")
    return f"CREATE TABLE IF NOT EXISTS {name} (\n" + ",\n".join(lines) + "\n);"


def tables() -> list:
    """Every table of run results, as eatlas.methods.Table: runs, results, influence, each method's own."""
    from ..methods import Table, all_tables
    from ..methods.base import INFLUENCE_TABLE

    runs = Table("runs", RunRow, per_test=False, doc="one row per run")
    results = Table("results", ResultRow, per_test=False, doc="one row per test and level of a run")
    return [runs, results, INFLUENCE_TABLE, *all_tables()]


def schema_ddl() -> list[tuple[str, str, list]]:
    """(table name, CREATE TABLE statement, columns) of every table of run results, derived from the row types."""
    from ..methods.base import columns_of

    out = []
    for t in tables():
        if t.name == "runs":
            cols, key = columns_of(t.row), ("run_id",)
        elif t.name == "results":
            cols, key = [("run_id", "VARCHAR", True)] + columns_of(t.row), ("run_id", "test_id", "level")
        else:
            cols, key = t.columns(), t.primary_key()
        out.append((t.name, _table_ddl(t.name, cols, key, refs=t.name != "runs"), cols))
    return out


# The reproduction views: our WEAT effect sizes beside the papers' printed ones, matched on test and level.
# Which run stands beside which printed model is decided by one rule, eatlas.encoders.identity.match, for each
# run, level and printed model, and kept in table model_matches (match = same_model | same_family, differs):
# `reproduction` holds the pairs with the same model encoded as the authors' code did (a hub id and the
# configuration facts the paper states, or a registered identity with the name, size, corpus and dimension it
# states; the authors' encoding, pooling and layer), `reproduction_loose` adds every looser pair (the same
# family, the same hub id with another configuration or encoding, a hub model of the paper's model_type),
# with `differs` saying what differs (e.g. `corpus ... vs Common Crawl (840B tokens); dimension 50 vs 300`,
# `encoding standard vs sent-bias`). Both pair only effect sizes of the same d denominator
# (eatlas.stats.conventions). A result also stands for the run's tests with identical stimuli (results.also_as,
# computed once): a number printed under any of their names pairs with it, `published_test_id` saying which.
# Each shows the newest run's pair per model configuration (model, pooling, layer, subword), method, convention and
# printed cell, so a second identical run leaves its rows as they were; the `..._all_runs` views keep every run's
# (a report or site of chosen runs reads those).
# Results are first cut down to the (test, level) pairs some paper printed (semi-join), and meet only the printed
# cells of the models their run was matched with (CTE pm): with a million results this keeps the view fast
# (benchmarks/bench_duckdb.py).
# d's denominator of a result (eatlas.stats.conventions): a run stored before conventions (NULL) is caliskan's.
_DENOMINATOR = "CASE " + " ".join(f"WHEN convention = '{c.name}' THEN '{c.denominator}'" for c in _CONVENTIONS.values()
                                   ) + " ELSE 'sample' END"
# The rule of a result's p (eatlas.stats.conventions.P_RULES), likewise.
_P_RULE = "CASE " + " ".join(f"WHEN convention = '{c.name}' THEN '{c.p_rule}'" for c in _CONVENTIONS.values()
                             ) + " ELSE 'permutation-ge' END"


def _newest(cells: str, tiebreak: str = "") -> str:
    """The QUALIFY condition that keeps, of a view's rows joined with ``runs ru``, the newest run's row per model
    configuration (model, pooling, layer, subword), method and the view's own ``cells`` (its convention, test,
    level and printed cell): the views without ``_all_runs`` show each pair once, however often it was run."""
    return (f"row_number() OVER (PARTITION BY ru.model, ru.pooling, ru.layer, ru.subword, ru.method, {cells} "
            f"ORDER BY ru.finished_at DESC, ru.run_id DESC{', ' + tiebreak if tiebreak else ''}) = 1")


# Our significance by a published table's own rule (table published_significance: the paper's p rule, level and
# correction): our p of the same rule below the level, where the rule states a level and no correction we could
# repeat (a correction runs over the paper's family, which a run does not hold); NULL otherwise.
VIEWS = f"""
CREATE OR REPLACE VIEW reproduction_loose_all_runs AS
WITH p AS (
    SELECT pr.test_id, pr.level, coalesce(pr.model_family, '') AS published_family, pr.paper, pr.table_id,
           pr.model AS published_model, pr.row_label, pr.column_label,
           pr.value_num AS published_effect_size, pr.significance AS published_significance,
           pc.convention AS published_convention, coalesce(pc.d_denominator, 'sample') AS p_denominator,
           pv.value_num AS published_p_value,
           coalesce(ps.rule, 'unspecified') AS published_rule, ps.level AS rule_level,
           ps.correction AS rule_correction, ps.p_rule AS rule_p
    FROM published_results pr
    LEFT JOIN published_conventions pc ON pc.paper = pr.paper
    LEFT JOIN published_significance ps ON ps.paper = pr.paper AND ps.table_id = pr.table_id
    LEFT JOIN published_results pv ON pv.estimand = 'p_value' AND NOT pv.missing AND pv.paper = pr.paper
          AND pv.table_id = pr.table_id AND pv.model = pr.model AND pv.row_label = pr.row_label
          AND pv.column_label = pr.column_label
    WHERE pr.estimand = 'weat_d' AND NOT pr.missing     -- not ML-EAT's single-target d's (published estimand)
), r AS (          -- a result's own test id, and the ids it also stands for (results.also_as: the run's tests
                    -- with identical stimuli, computed once): a number printed under any of them pairs with it
    SELECT *, test_id AS published_test_id, {_DENOMINATOR} AS our_denominator, {_P_RULE} AS our_p_rule FROM results
    WHERE status = 'ok' AND effect_size IS NOT NULL         -- a method without a WEAT d (SAME, SC-EAT): none
      AND (test_id, level) IN (SELECT test_id, level FROM p)
), ra AS (
    SELECT *, unnest(also_as) AS published_test_id, {_DENOMINATOR} AS our_denominator, {_P_RULE} AS our_p_rule
    FROM results
    WHERE also_as IS NOT NULL AND status = 'ok' AND effect_size IS NOT NULL
), pm AS MATERIALIZED (  -- the printed cells of the models each run was matched with (model_matches): joined
                          -- first, the results then meet only those (not every model's cells of their test)
    SELECT mm.run_id, mm.match, mm.differs, p.*
    FROM model_matches mm JOIN p ON p.paper = mm.paper AND p.published_model = mm.published_model
          AND p.published_family = mm.published_family AND p.level = mm.level
), j AS (           -- two joins, not one over a union of r and ra: the plain one keeps the plan (and the speed)
                    -- of a store without also_as
    SELECT r.*, ru.model_family, ru.family_source, pm.* EXCLUDE (run_id, test_id, level)
    FROM r JOIN runs ru USING (run_id)
    JOIN pm ON pm.run_id = r.run_id AND pm.test_id = r.test_id AND pm.level = r.level
          AND pm.p_denominator = r.our_denominator
    UNION ALL
    SELECT r.*, ru.model_family, ru.family_source, pm.* EXCLUDE (run_id, test_id, level)
    FROM ra r JOIN runs ru USING (run_id)
    JOIN pm ON pm.run_id = r.run_id AND pm.test_id = r.published_test_id AND pm.level = r.level
          AND pm.p_denominator = r.our_denominator
)
SELECT run_id, test_id, test_version, level, model, model_family, family_source,
       effect_size AS our_effect_size, p_value AS our_p_value, holm_significant AS our_significant,
       paper, table_id, published_test_id, published_model, row_label, column_label, published_effect_size,
       published_significance,
       effect_size - published_effect_size AS difference,
       coalesce(convention, 'caliskan') AS convention, published_convention, published_p_value,
       published_rule,
       CASE WHEN rule_level IS NULL OR rule_correction <> 'none' OR rule_p <> our_p_rule THEN NULL
            ELSE p_value < rule_level END AS our_significant_by_published_rule,
       p_concepts AS our_p_concepts, d_concepts AS our_d_concepts, holm_p_rule AS our_holm_p_rule,
       holm_family AS our_holm_family,
       match, coalesce(differs, '') AS differs
FROM j;

CREATE OR REPLACE VIEW reproduction_all_runs AS
SELECT * EXCLUDE (differs) FROM reproduction_loose_all_runs WHERE match = 'same_model';

CREATE OR REPLACE VIEW reproduction_loose AS
SELECT a.* FROM reproduction_loose_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.convention, a.published_test_id, a.level, a.paper, a.table_id, a.published_model, "
                 "a.row_label, a.column_label", "(a.test_id = a.published_test_id) DESC")};

CREATE OR REPLACE VIEW reproduction AS
SELECT a.* FROM reproduction_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.convention, a.published_test_id, a.level, a.paper, a.table_id, a.published_model, "
                 "a.row_label, a.column_label", "(a.test_id = a.published_test_id) DESC")};

-- ML-EAT beside the ML-EAT tables: every printed Level 1-3 number of a test next to ours (one row per
-- printed cell), with both EAT patterns. `agrees`: our number rounds to the printed one at the printed
-- precision (|ours - printed| <= half a unit of its last printed digit). Same model only, as `reproduction`
-- (table model_matches); `mleat_reproduction_loose` adds the looser pairs with `match` and `differs`. Newest run
-- per model configuration and printed cell; `mleat_reproduction(_loose)_all_runs` every run.
CREATE OR REPLACE VIEW mleat_reproduction_loose_all_runs AS
WITH mm AS (        -- each ML-EAT result under its test's id and the ids it also stands for (results.also_as)
    SELECT *, test_id AS published_test_id FROM mleat_results
    UNION ALL BY NAME
    SELECT m.*, unnest(r.also_as) AS published_test_id
    FROM mleat_results m JOIN results r USING (run_id, test_id, level) WHERE r.also_as IS NOT NULL
), ours AS (
    SELECT m.run_id, m.test_id, m.test_version, m.level, m.published_test_id, ru.model, ru.model_family, m.pattern,
           m.level1_p_value, CASE WHEN m.p_method = 'authors' THEN 'normal-smaller-tail' ELSE 'permutation-ge' END
               AS our_p_rule,
           unnest(['Level 1: A,B,X,Y', 'Level 2: A,B,X', 'Level 2: A,B,Y',
                   'Level 3: A,X mean', 'Level 3: A,X std', 'Level 3: B,X mean', 'Level 3: B,X std',
                   'Level 3: A,Y mean', 'Level 3: A,Y std', 'Level 3: B,Y mean', 'Level 3: B,Y std']) AS column_label,
           unnest([m.level1_effect_size, m.x_effect_size, m.y_effect_size, m.ax_mean, m.ax_std, m.bx_mean,
                   m.bx_std, m.ay_mean, m.ay_std, m.by_mean, m.by_std]) AS our_value
    FROM mm m JOIN runs ru USING (run_id)
), pub AS (
    SELECT pr.* FROM published_results pr WHERE pr.paper = 'wolfe2024' AND NOT pr.missing
), j AS (
    SELECT o.*, p.table_id, p.model AS published_model, p.row_label, p.value, p.significance, x.match, x.differs,
           coalesce(ps.rule, 'unspecified') AS published_rule, ps.level AS rule_level,
           ps.correction AS rule_correction, ps.p_rule AS rule_p
    FROM ours o
    JOIN pub p ON p.test_id = o.published_test_id AND p.level = o.level AND p.column_label = o.column_label
    LEFT JOIN published_significance ps ON ps.paper = p.paper AND ps.table_id = p.table_id
    JOIN model_matches x ON x.run_id = o.run_id AND x.level = o.level AND x.paper = p.paper
          AND x.published_model = p.model AND x.published_family = coalesce(p.model_family, '')
)
SELECT j.run_id, j.test_id, j.test_version, j.level, j.model, j.model_family,
       j.table_id, j.published_test_id, j.published_model, j.row_label, j.column_label,
       j.our_value, TRY_CAST(j.value AS DOUBLE) AS published_value, j.significance AS published_significance,
       j.our_value - TRY_CAST(j.value AS DOUBLE) AS difference,
       abs(j.our_value - TRY_CAST(j.value AS DOUBLE))
           <= 0.5 * pow(10, -length(split_part(j.value, '.', 2))) + 1e-9 AS agrees,
       j.pattern AS our_pattern, pp.value AS published_pattern,
       j.published_rule,
       CASE WHEN j.rule_level IS NULL OR j.rule_correction <> 'none' OR j.rule_p <> j.our_p_rule
                 OR j.column_label NOT LIKE 'Level 1%' THEN NULL
            ELSE j.level1_p_value < j.rule_level END AS our_significant_by_published_rule,
       j.match, coalesce(j.differs, '') AS differs
FROM j
LEFT JOIN pub pp ON pp.test_id = j.published_test_id AND pp.level = j.level AND pp.table_id = j.table_id
          AND pp.model = j.published_model AND pp.statistic = 'pattern';

CREATE OR REPLACE VIEW mleat_reproduction_all_runs AS
SELECT * EXCLUDE (differs) FROM mleat_reproduction_loose_all_runs WHERE match = 'same_model';

CREATE OR REPLACE VIEW mleat_reproduction_loose AS
SELECT a.* FROM mleat_reproduction_loose_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.published_test_id, a.level, a.table_id, a.published_model, a.row_label, a.column_label",
                 "(a.test_id = a.published_test_id) DESC")};

CREATE OR REPLACE VIEW mleat_reproduction AS
SELECT a.* FROM mleat_reproduction_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.published_test_id, a.level, a.table_id, a.published_model, a.row_label, a.column_label",
                 "(a.test_id = a.published_test_id) DESC")};

-- Validity (eatlas.methods.validity) beside a paper's printed correlation: a published row whose test_id is a
-- criterion's id and whose statistic is pearson_r or spearman_rho, matched with the run's model as the
-- reproduction views match (table model_matches, level word). `validity_reproduction` keeps the same model only;
-- both show the newest run per model configuration and printed cell, the `_all_runs` views every run.
CREATE OR REPLACE VIEW validity_reproduction_loose_all_runs AS
SELECT v.run_id, v.criterion_id, v.criterion_version, ru.model, ru.model_family, v.n_used, v.n_items,
       pr.statistic,
       CASE pr.statistic WHEN 'pearson_r' THEN v.pearson_r ELSE v.spearman_rho END AS our_value,
       CASE pr.statistic WHEN 'pearson_r' THEN v.pearson_ci_low ELSE v.spearman_ci_low END AS our_ci_low,
       CASE pr.statistic WHEN 'pearson_r' THEN v.pearson_ci_high ELSE v.spearman_ci_high END AS our_ci_high,
       pr.paper, pr.table_id, pr.model AS published_model, pr.row_label, pr.column_label,
       TRY_CAST(pr.value AS DOUBLE) AS published_value, pr.significance AS published_significance,
       pr.note AS published_note,
       CASE pr.statistic WHEN 'pearson_r' THEN v.pearson_r ELSE v.spearman_rho END
           - TRY_CAST(pr.value AS DOUBLE) AS difference,
       mm.match, coalesce(mm.differs, '') AS differs
FROM validity_results v
JOIN runs ru USING (run_id)
JOIN published_results pr ON pr.test_id = v.criterion_id AND pr.statistic IN ('pearson_r', 'spearman_rho')
      AND NOT pr.missing
JOIN model_matches mm ON mm.run_id = v.run_id AND mm.level = 'word' AND mm.paper = pr.paper
      AND mm.published_model = pr.model AND mm.published_family = coalesce(pr.model_family, '')
WHERE v.status = 'ok';

CREATE OR REPLACE VIEW validity_reproduction_all_runs AS
SELECT * EXCLUDE (differs) FROM validity_reproduction_loose_all_runs WHERE match = 'same_model';

CREATE OR REPLACE VIEW validity_reproduction_loose AS
SELECT a.* FROM validity_reproduction_loose_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.criterion_id, a.statistic, a.paper, a.table_id, a.published_model, a.row_label, "
                 "a.column_label")};

CREATE OR REPLACE VIEW validity_reproduction AS
SELECT a.* FROM validity_reproduction_all_runs a JOIN runs ru USING (run_id)
QUALIFY {_newest("a.criterion_id, a.statistic, a.paper, a.table_id, a.published_model, a.row_label, "
                 "a.column_label")};

-- Each model's newest result per test and level: one row per model (with its pooling, layer and subword), method,
-- convention, test and level, from the run that finished last. Its Holm mark is that run's (holm_family says over
-- which results; marks of different families do not compare).
CREATE OR REPLACE VIEW latest_results AS
SELECT r.*, ru.method, ru.finished_at
FROM results r JOIN runs ru USING (run_id)
QUALIFY row_number() OVER (PARTITION BY r.model, r.pooling, r.layer, r.subword, ru.method,
                                        coalesce(r.convention, ''), r.test_id, r.level
                           ORDER BY ru.finished_at DESC, r.run_id DESC) = 1;
"""


# A sweep's models that failed (eatlas.run.sweep), exported and imported with the runs (eatlas.store.results_io).
SWEEP_FAILURES = """CREATE TABLE IF NOT EXISTS sweep_failures (
    sweep_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    config_key VARCHAR NOT NULL,
    error VARCHAR NOT NULL,
    failed_at TIMESTAMP NOT NULL,
    engine VARCHAR,
    settings JSON
)"""


# The storage format of a new results file: DuckDB 1.0 and every later client read it (README, "Results
# store"). Without it DuckDB 2.x writes its own format, which no 1.x client opens. DuckDB keeps a file's
# format when it opens it again, so later runs keep it readable.
STORAGE_VERSION = "v1.0.0"


def default_db() -> Path:
    return Path(os.environ.get("EATLAS_DB", "eatlas.duckdb"))


# Every connection EATlas opens loads and installs no extension by itself: a query, or a file handed to it
# (a SQLite file, an hf:// path), would otherwise make DuckDB download an extension from the internet. An
# extension installed beforehand may still be LOADed by name (`eatlas sql --write`).
NO_AUTO_EXTENSIONS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def duck(database: str | Path = ":memory:", *, read_only: bool = False, **config) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with :data:`NO_AUTO_EXTENSIONS`: the one way EATlas opens a DuckDB connection."""
    con = duckdb.connect(str(database), read_only=read_only, config={**NO_AUTO_EXTENSIONS, **config})
    if str(database) != ":memory:":
        try:        # catalog and schema: a file named e.g. pg_catalog.duckdb would otherwise name a system schema
            name = con.execute("SELECT current_database()").fetchall()[0][0]
            con.execute('USE "' + name.replace('"', '""') + '".main')
        except BaseException:
            con.close()
            raise
    return con


def connect(path: str | Path, *, read_only: bool = False, wait_s: float = 0.0,
            sandbox: bool = False, writes_to: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """Open the database; a lock held by another process becomes a clear 'in use' error, after
    retrying for ``wait_s`` seconds (DuckDB lets one process at a time open a file for writing,
    and no reader opens it meanwhile). ``sandbox``: read-only and nothing else (see SANDBOX), as ``eatlas sql``
    reads a file. ``read_only``: sandboxed too, and the file checked as data (:func:`read_as_data`: its tables
    are tables, it defines no function, the views are this EATlas's own): every command that reads a results
    file from elsewhere (site, report, show-influence, export, a resumed sweep) opens it so. ``writes_to``: the
    one folder a sandboxed connection may write into (an export's COPY)."""
    path = Path(path)
    if (read_only or sandbox) and not path.exists():
        raise EatlasError("no such database", file=str(path), hint="run 'eatlas run' first, or pass --db FILE")
    _check_header(path)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if sandbox or read_only:
                con = _sandboxed(path, writes_to)
                if read_only and not sandbox:       # sql reads the file as it is (its own views too), sandboxed
                    try:
                        read_as_data(con, path)
                    except BaseException:
                        con.close()
                        raise
                return con
            if not read_only and not path.exists():     # a new file: in a format DuckDB 1.x clients read
                return duck(path, storage_compatibility_version=STORAGE_VERSION)
            return duck(path, read_only=read_only)
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


DUCKDB_MAGIC = b"DUCK"      # bytes 8-12 of every DuckDB database file


def _check_header(path: Path) -> None:
    """Refuse a file of another program before DuckDB opens it (DuckDB would try to download a reader
    extension for a SQLite file, and reports a text file only as a parse failure)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return          # connect() reports these
    except OSError as e:
        raise EatlasError(f"cannot read the database: {e.strerror or e}", file=str(path)) from None
    if not head or head[8:12] == DUCKDB_MAGIC:
        return
    what = "a SQLite database" if head.startswith(b"SQLite format 3") else "not a DuckDB database"
    raise EatlasError(f"cannot open database: {what}", file=str(path),
                      hint="is this an eatlas results file? pass another --db FILE")


def check_writable(path: str | Path) -> None:
    """Before a run does any work: the results file can be opened for writing (an existing DuckDB file
    that is not damaged, not in use and not read-only, or a new file in a folder that can be written),
    so that no finished run is lost at write time. Creates nothing."""
    path = Path(path)
    if path.is_dir():
        raise EatlasError("is a folder, not a database file", file=str(path), hint="pass --db FILE")
    if not path.exists():
        folder = path.parent
        if not folder.is_dir():
            raise EatlasError("the database's folder does not exist", file=str(path),
                              hint=f"create {folder} first, or pass another --db FILE")
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".eatlas-probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise EatlasError(f"cannot create the database: the folder cannot be written ({e.strerror or e})",
                              file=str(path), hint="pass --db FILE in a folder you can write") from None
        return
    if not os.access(path, os.R_OK | os.W_OK):
        raise EatlasError("the database file is read-only", file=str(path),
                          hint="make it writable, or pass another --db FILE")
    if path.stat().st_size == 0:
        return          # a 0-byte leftover: connect() replaces it
    if known.unchanged(path):
        return          # as this EATlas checked and wrote it last, unchanged since (eatlas.store.known)
    check_schema(path)      # read first as data (sandboxed, read_as_data): a view or macro in its place is refused
    try:
        con = connect(path)
    except EatlasError as e:
        if "in use by another process" in e.message:
            return      # checked at the write, which waits for it (--wait) or says so
        raise
    try:
        check_schema(path, con)         # a store that drifted is refused with its repair, before any work
        con.execute("SELECT count(*) FROM information_schema.tables").fetchall()
        # DuckDB reads a block only when a query needs it, so a file cut short opens and fails at the write:
        # read every row, and try the write (a probe run, rolled back) as write_run will do it.
        con.execute("BEGIN TRANSACTION")
        init_schema(con)
        for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                "WHERE table_type = 'BASE TABLE' AND table_schema = 'main'").fetchall():
            q = '"' + t.replace('"', '""') + '"'
            con.execute(f"SELECT count(*) FROM {q} AS r WHERE r IS NOT NULL").fetchall()
        con.execute("INSERT INTO runs (run_id, method, model, model_fingerprint, seed, started_at, finished_at) "
                    "VALUES ('eatlas-probe', 'probe', 'probe', 'probe', 0, now(), now())")
        con.execute("ROLLBACK")
    except duckdb.Error as e:
        raise EatlasError(f"cannot open database: {str(e).splitlines()[0]}", file=str(path),
                          hint="is this an eatlas results file? pass another --db FILE") from None
    finally:
        con.close()


def _empty_leftover(path: Path) -> bool:
    """Remove a 0-byte database file (and no WAL): DuckDB refuses it, and it cannot hold any data."""
    try:
        if path.stat().st_size == 0 and not Path(str(path) + ".wal").exists():
            path.unlink()
            return True
    except OSError:
        pass
    return False


def init_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables (derived from the row types) and views; a database written by an earlier
    version gets the columns added since (NULL in its old rows)."""
    existing: dict[str, set] = {}        # one query for every table's columns (a run writes twice: probe, write)
    for table, col in con.execute("SELECT table_name, column_name FROM information_schema.columns "
                                  "WHERE table_schema = current_schema()").fetchall():
        existing.setdefault(table, set()).add(col)
    changed = False
    for name, ddl, cols in schema_ddl():
        if name not in existing:
            con.execute(ddl)
            changed = True
        have = existing.get(name) or {c for c, _, _ in cols}
        added = [col for col, _, _ in cols if col not in have]
        for col, typ, _ in cols:
            if col in added:
                con.execute(f'ALTER TABLE {name} ADD COLUMN "{col}" {typ}')
                changed = True
        if name == "results" and name in existing and ("concepts_hull_low" in added or "p_n_samples" in added):
            migrate_results(con)
    if "published_results" not in existing:
        con.execute("""CREATE TABLE IF NOT EXISTS published_results (
            paper VARCHAR, table_id VARCHAR, row_label VARCHAR, column_label VARCHAR, statistic VARCHAR,
            value VARCHAR, significance VARCHAR, missing BOOLEAN, test_id VARCHAR, level VARCHAR, model VARCHAR,
            model_family VARCHAR, note VARCHAR, source_file VARCHAR, value_num DOUBLE, estimand VARCHAR)""")
    else:       # a store of before the derived columns: refresh_published fills them (its digest names them)
        for col, typ in (("value_num", "DOUBLE"), ("estimand", "VARCHAR")):
            if col not in existing["published_results"]:
                con.execute(f"ALTER TABLE published_results ADD COLUMN {col} {typ}")
                changed = True
    if "published_conventions" not in existing:
        con.execute(_PUBLISHED_CONVENTIONS)
        changed = True
    if "published_significance" not in existing:
        con.execute(_PUBLISHED_SIGNIFICANCE)
        changed = True
    from ..encoders import identity
    from ..registry import provenance
    identity.init(con)
    provenance.init(con)
    _views(con, changed)


# Rows written before the hull and the floor had columns of their own: a not-estimable result's hull moves out of
# concepts_low/high and ci_low/high (ci_method concepts) into concepts_hull_low/high, and a sampled permutation p
# gets its number of partitions and whether it is at its floor (eatlas.legend.at_floor). Run when those columns
# are added to an older store (init_schema) and after an import (eatlas.store.results_io); idempotent.
_PERMUTATION_P = "coalesce(convention, 'caliskan') IN (" + ", ".join(
    f"'{c.name}'" for c in _CONVENTIONS.values() if c.p_rule == "permutation-ge") + ")"
MIGRATE_RESULTS = (
    """UPDATE results SET
        concepts_hull_low = coalesce(concepts_low, CASE WHEN ci_method = 'concepts' THEN ci_low END),
        concepts_hull_high = coalesce(concepts_high, CASE WHEN ci_method = 'concepts' THEN ci_high END),
        concepts_low = NULL, concepts_high = NULL,
        ci_low = CASE WHEN ci_method = 'concepts' THEN NULL ELSE ci_low END,
        ci_high = CASE WHEN ci_method = 'concepts' THEN NULL ELSE ci_high END
    WHERE concepts_estimable = false AND (concepts_low IS NOT NULL OR concepts_high IS NOT NULL
          OR (ci_method = 'concepts' AND (ci_low IS NOT NULL OR ci_high IS NOT NULL)))""",
    f"""UPDATE results SET p_n_samples = n_partitions,
        p_at_floor = p_value <= (CASE WHEN alternative = 'two-sided' THEN 2.0 ELSE 1.0 END) / n_partitions
                                * (1 + 1e-9)
    WHERE p_n_samples IS NULL AND p_at_floor IS NULL AND exact = false AND NOT coalesce(parametric, false)
      AND n_partitions > 0 AND p_value IS NOT NULL AND {_PERMUTATION_P}""")


def migrate_results(con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> None:
    """Bring the results' rows written by an earlier version (or by a caller of write_run that gave the rows as
    they were) to this one's columns (:data:`MIGRATE_RESULTS`); ``run_id``: only that run's rows."""
    for stmt in MIGRATE_RESULTS:
        con.execute(stmt + (" AND run_id = ?" if run_id is not None else ""), [run_id] if run_id is not None else [])


_VIEW_NAMES = tuple(re.findall(r"CREATE OR REPLACE VIEW (\w+)", VIEWS))
_VIEWS_MARK = "eatlas views " + hashlib.blake2b(VIEWS.encode(), digest_size=8).hexdigest()


def _views(con: duckdb.DuckDBPyConnection, changed: bool) -> None:
    """Create the views, unless each is already the one of this code and no table changed: every view made
    here carries a comment naming the text it was made from (replacing a view by other SQL drops it), so a
    run's two schema checks (probe and write) do not rebuild them (40 ms each)."""
    if not changed:
        marked = con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal AND schema_name = "
                             "current_schema() AND comment = ?", [_VIEWS_MARK]).fetchone()[0]
        if marked == len(_VIEW_NAMES):
            return
    con.execute(VIEWS)
    for name in _VIEW_NAMES:
        con.execute(f"COMMENT ON VIEW {name} IS '{_VIEWS_MARK}'")


# The digest of the published CSVs last loaded (refresh_published): a table of the store, rebuilt from the registry.
PUBLISHED_STATE = "CREATE TABLE IF NOT EXISTS published_state (digest VARCHAR, n_rows BIGINT)"
# Tables of run results without a run_id column, exported and imported with the runs all the same.
RUN_TABLES_WITHOUT_RUN_ID = ("sweep_failures",)
# The types an open table's further columns may have (eatlas.methods.Table(open=True): one column per pair of
# groups, added as rows bring them).
OPEN_COLUMN_TYPES = ("DOUBLE", "BIGINT", "INTEGER", "BOOLEAN", "VARCHAR")


@dataclass(frozen=True)
class Declared:
    """A table as this EATlas creates it: ``columns`` (name -> DuckDB type, in order), the NOT NULL ones, its
    primary key, ``open`` (further columns allowed, eatlas.methods.Table(open=True)), and ``runs``: whether it
    holds results of runs (exported and imported with them), or data rebuilt from the registry (the published
    tables), which never travels."""
    name: str
    columns: dict
    not_null: frozenset
    key: tuple
    open: bool
    runs: bool


def declared_tables() -> dict[str, Declared]:
    """Every table of the store, as :func:`init_schema` (and the sweep's and the published state's DDL) creates
    it in this EATlas: derived from that DDL, so a column another part adds (a method's row type, a run column)
    is declared with it. Views are in :func:`declared_views`."""
    return dict(_declared(tuple((t.name, t.row, t.open) for t in tables()))[0])


def declared_views() -> tuple[str, ...]:
    return _declared(tuple((t.name, t.row, t.open) for t in tables()))[1]


@functools.lru_cache(maxsize=4)
def _declared(signature: tuple) -> tuple[tuple, tuple]:
    """Made in an in-memory database (0.1 s), once per version of the code, of DuckDB and of the installed methods'
    row types (kept sealed, :func:`eatlas.store.known.per_code`)."""
    import dataclasses
    shape = repr([(name, getattr(row, "__module__", ""), getattr(row, "__qualname__", ""), is_open,
                   [(f.name, str(f.type)) for f in dataclasses.fields(row)] if dataclasses.is_dataclass(row) else "")
                  for name, row, is_open in signature])
    name = "declared-" + hashlib.blake2b((duckdb.__version__ + shape).encode(), digest_size=8).hexdigest()
    tables_, views = known.per_code(name, lambda: _declared_now(signature))
    return (tuple((t, Declared(t, dict(c), frozenset(nn), tuple(k), bool(o), bool(r)))
                  for t, c, nn, k, o, r in tables_), tuple(views))


def _declared_now(signature: tuple) -> list:
    con = duck()
    try:
        init_schema(con)
        con.execute(SWEEP_FAILURES)
        con.execute(PUBLISHED_STATE)
        open_tables = {name for name, _, is_open in signature if is_open}
        cols: dict[str, dict] = {}
        not_null: dict[str, set] = {}
        for t, c, typ, nullable in con.execute(
                "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                "WHERE table_schema = 'main' AND table_name IN (SELECT table_name FROM information_schema.tables "
                "WHERE table_type = 'BASE TABLE' AND table_schema = 'main') "
                "ORDER BY table_name, ordinal_position").fetchall():
            cols.setdefault(t, {})[c] = typ
            if nullable == "NO":
                not_null.setdefault(t, set()).add(c)
        keys = {t: tuple(k) for t, k in con.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type = 'PRIMARY KEY' AND schema_name = 'main'").fetchall()}
        views = tuple(r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                                "WHERE table_type = 'VIEW' AND table_schema = 'main'").fetchall())
        out = [[t, list(c.items()), sorted(not_null.get(t, ())), list(keys.get(t, ())), t in open_tables,
                "run_id" in c or t in RUN_TABLES_WITHOUT_RUN_ID] for t, c in cols.items()]
        return [out, list(views)]
    finally:
        con.close()


def schema_problems(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> list[str]:
    """How the tables of a database (``catalog``: an attached one) differ from :func:`declared_tables`: a declared
    table that is a view, a declared view that is a table, a column this EATlas does not declare (an open table's
    further columns of a plain type aside), a column of another type, a NOT NULL the declaration does not have.
    A declared column or table that is missing is not a difference: a store written by an earlier version gets
    them (init_schema). Tables the store does not declare (a user's own) are left alone."""
    where = "table_schema = 'main'" + (f" AND table_catalog = {_sql_text(catalog)}" if catalog
                                       else " AND table_catalog = current_database()")
    declared, views = declared_tables(), declared_views()
    kinds = dict(con.execute(f"SELECT table_name, table_type FROM information_schema.tables WHERE {where}"
                             ).fetchall())
    out = []
    for name, kind in sorted(kinds.items()):
        if name in declared and kind != "BASE TABLE":
            out.append(f"{name} is a view, where EATlas keeps a table")
        elif name in views and kind == "BASE TABLE":
            out.append(f"{name} is a table, where EATlas keeps a view")
    have: dict[str, list] = {}
    for t, c, typ, nullable in con.execute(
            f"SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE {where} "
            "ORDER BY table_name, ordinal_position").fetchall():
        have.setdefault(t, []).append((c, typ, nullable == "NO"))
    for name, d in declared.items():
        if kinds.get(name) != "BASE TABLE":
            continue
        for c, typ, nn in have.get(name, []):
            want = d.columns.get(c)
            if want is None:
                if not (d.open and typ in OPEN_COLUMN_TYPES):
                    out.append(f"table {name} has column {c} ({typ}), which this EATlas does not declare")
            elif typ != want:
                out.append(f"column {name}.{c} is {typ}, where this EATlas writes {want}")
            elif nn and c not in d.not_null:
                out.append(f"column {name}.{c} is NOT NULL, where this EATlas may write NULL")
    return out


def repair_hint(db: str | Path) -> str:
    """How to move a store's runs into a fresh file (export keeps the declared tables and columns only)."""
    return (f"repair: 'eatlas results export FOLDER --db {db}' writes its runs, 'eatlas results import FOLDER --db "
            "NEW.duckdb' loads them into a fresh file; then use NEW.duckdb")


def check_schema(db: str | Path, con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Before any work: the store's tables, columns and types are what this EATlas writes (:func:`schema_problems`),
    else one line naming the first difference and the repair. A missing or empty file passes (it is created);
    a store another process holds is checked when it is written (``con``: an open connection to use)."""
    if con is None:
        path = Path(db)
        if not path.is_file() or path.stat().st_size == 0:
            return
        try:
            con = connect(path, read_only=True)
        except EatlasError as e:
            if "in use by another process" in e.message:
                return
            raise
        try:
            return check_schema(db, con)
        finally:
            con.close()
    problems = schema_problems(con)
    if problems:
        from .. import __version__
        more = f" (and {len(problems) - 1} more difference(s))" if len(problems) > 1 else ""
        raise EatlasError(f"the results store differs from what EATlas {__version__} writes: {problems[0]}{more}; "
                          "nothing was computed or written", file=str(db), hint=repair_hint(db))


def _sql_text(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def stringify(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns hold text: a tuple or other value becomes its str (None stays NULL)."""
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].map(lambda v: None if v is None else (v if isinstance(v, (str, bool, list, dict))
                                                                 else str(v)))
    return df


def _published_digest(reg) -> str | None:
    """A digest of the catalog's published entries and their CSVs' stats (None: a file cannot be read;
    :func:`read_published` then says which)."""
    import hashlib

    from .. import __version__
    h = hashlib.blake2b(f"{__version__}\0{','.join(PUBLISHED_COLUMNS + DERIVED_COLUMNS)}".encode(), digest_size=16)
    try:        # the derived columns follow the schema's and the conventions files' estimand rules: hashed too
        h.update(SCHEMA_FILE.read_bytes() + b"\0")
        for p in sorted((Path(reg.root) / "registry").glob("*/published/conventions.yaml")):
            h.update(p.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        root = str(reg.root)
        for e in reg.catalog.get("published") or []:
            # each CSV by its stats, change time and inode included (an edit, or a file put in its place, changes
            # them), not its bytes: 14 MB hashed on every write grew with the registry. Not resolved (a path that
            # leaves the folder is refused by read_published, which reads the files when this digest changes)
            st = os.stat(os.path.join(root, e["file"]))
            h.update(json.dumps([e.get("id"), e.get("file"), e.get("sha256"), st.st_size, st.st_mtime_ns,
                                 st.st_ctime_ns, st.st_ino, st.st_dev]).encode() + b"\0")
    except (OSError, EatlasError, TypeError, KeyError):
        return None
    return h.hexdigest()


def refresh_published(con: duckdb.DuckDBPyConnection, reg) -> int:
    """Replace published_results with the registry's CSVs (inside the caller's transaction). Skipped when
    the table holds what the same CSVs gave last time (their digest and the row count are recorded in
    ``published_state``): reading the CSVs is half the time of writing a small run."""
    digest = _published_digest(reg)
    con.execute(PUBLISHED_STATE)
    if digest is not None:
        last = con.execute("SELECT digest, n_rows FROM published_state").fetchall()
        # fetchall: a result read to its end (DuckDB 2 refuses register() while one is half read)
        n_now = con.execute("SELECT count(*) FROM published_results").fetchall()[0][0]
        if last == [(digest, n_now)]:
            return n_now
    df = derive_columns(reg, read_published(reg))
    con.execute("DELETE FROM published_results")
    if len(df):
        con.register("_pub", df)
        con.execute("INSERT INTO published_results (paper, table_id, row_label, column_label, statistic, value, "
                    "significance, missing, test_id, level, model, model_family, note, source_file, value_num, "
                    "estimand) SELECT paper, table_id, row_label, column_label, statistic, value, significance, "
                    "missing, test_id, NULLIF(level, ''), model, model_family, note, source_file, value_num, "
                    "estimand FROM _pub")
        con.unregister("_pub")
    con.execute("DELETE FROM published_state")
    if digest is not None:
        con.execute("INSERT INTO published_state VALUES (?, ?)", [digest, len(df)])
    return len(df)


# Which convention each paper's published numbers follow (registry/<paper>/published/conventions.yaml).
_PUBLISHED_CONVENTIONS = f"""CREATE TABLE IF NOT EXISTS published_conventions (
    {', '.join(f'{c} VARCHAR' for c in _CONVENTION_COLUMNS)})"""


# Which rule each published table marks significance by (``significance:`` of the conventions files).
_PUBLISHED_SIGNIFICANCE = "CREATE TABLE IF NOT EXISTS published_significance (" + ", ".join(
    f"{c} {'DOUBLE' if c == 'level' else 'VARCHAR'}" for c in _SIGNIFICANCE_COLUMNS) + ")"


def refresh_conventions(con: duckdb.DuckDBPyConnection, reg) -> int:
    """Replace published_conventions and published_significance with the registry's conventions files (inside the
    caller's transaction)."""
    rows = read_conventions(reg)
    con.execute("DELETE FROM published_conventions")
    if rows:
        con.executemany(f"INSERT INTO published_conventions VALUES ({', '.join('?' * len(_CONVENTION_COLUMNS))})",
                        [[r[c] for c in _CONVENTION_COLUMNS] for r in rows])
    con.execute(_PUBLISHED_SIGNIFICANCE)
    con.execute("DELETE FROM published_significance")
    sig = read_significance(reg)
    if sig:
        con.executemany(f"INSERT INTO published_significance VALUES ({', '.join('?' * len(_SIGNIFICANCE_COLUMNS))})",
                        [[r[c] for c in _SIGNIFICANCE_COLUMNS] for r in sig])
    return len(rows)


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Undo the open transaction after a failure; a connection with none open (or already broken) is left
    as it is, so the original error is the one raised."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def write_run(db: str | Path, run: dict, results: list[dict], reg, *, wait_s: float = 0.0,
              extra_tables: dict[str, pd.DataFrame] | None = None, check: bool = True) -> None:
    """Write one run and its results atomically (one transaction). ``check``: first check the rows by the rules
    an import applies (eatlas.store.checks); the run path leaves it to the tests for EATlas's own methods
    (eatlas.methods.rows_checked_at_write)."""
    if check:
        check_run_rows(run, results, extra_tables)      # the values import checks too (eatlas.store.checks)
    con = connect(db, wait_s=wait_s)
    try:
        con.execute("BEGIN TRANSACTION")
        if not known.unchanged(db):     # (checked with the file held) as this EATlas wrote it last: schema as then
            check_schema(db, con)
        init_schema(con)
        refresh_published(con, reg)
        from ..encoders import identity
        from ..registry import provenance
        refresh_conventions(con, reg)
        run = dict(run)
        for k in ("package_versions", "registry", "settings"):
            run[k] = json.dumps(run.get(k) or {}, sort_keys=True)
        inputs = json.loads(run["registry"]).get("inputs") or []
        cols = list(run)
        con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [run[c] for c in cols])
        provenance.write(con, run["run_id"], inputs)
        if results:
            res = as_columns([{**r, "dropped": json.dumps(r.get("dropped") or {}, sort_keys=True)} for r in results])
            con.register("_res", res)
            con.execute(f"INSERT INTO results ({', '.join(res)}) SELECT {', '.join(res)} FROM _res")
            con.unregister("_res")
            migrate_results(con, run["run_id"])     # rows given as earlier versions stored them: no hull as bounds
        for name in extra_tables or {}:
            # a run's MethodTables give their columns (no DataFrame, no pandas); a DataFrame is scanned as it is
            columns = getattr(extra_tables, "columns", None)
            con.register("_extra", columns(name) if callable(columns) else extra_tables[name])
            con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM _extra WHERE false")
            # An open table (Table(open=True), e.g. one column per pair of groups) may get new columns: add
            # them, typed as the new rows are, so no column is ever dropped.
            have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
            for col, typ, *_ in con.execute("DESCRIBE SELECT * FROM _extra").fetchall():
                if col not in have:
                    quoted = '"' + col.replace('"', '""') + '"'
                    typ = "VARCHAR" if typ.strip('"') == "NULL" else typ     # a column of None only
                    con.execute(f"ALTER TABLE {name} ADD COLUMN {quoted} {typ}")
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _extra")
            con.unregister("_extra")
        identity.refresh(con, reg)      # the papers' models, and which of them this run is (model_matches)
        con.execute("COMMIT")
        counts = None
        if results:         # what the command then says of it (reproduction_counts): here, on the file still held,
            try:            # after the commit (a failure here is reproduction_counts' own read's to report)
                _published_of(con, results)
                own_views(con, db)
                counts = pairing(con, run["run_id"])
            except (duckdb.Error, EatlasError):
                counts = None
        con.close()
        known.remember(db)
        if counts is not None:
            _PAIRING[(str(Path(db).resolve()), run["run_id"])] = counts
    except BaseException as e:
        rollback(con)
        if isinstance(e, (duckdb.Error, OSError)) and not isinstance(e, EatlasError):
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise EatlasError(f"the run could not be written, and nothing of it was: {first}", file=str(db),
                              hint="check the free space and permissions, then run again") from None
        raise
    finally:
        con.close()


def gives_d(method: str | None) -> bool:
    """Whether runs of ``method`` give a WEAT-comparable effect size (an uninstalled method's: not known, no)."""
    from ..methods import all_methods
    m = all_methods().get(method or "")
    return bool(m is not None and m.effect_size)


def check_run_rows(run: dict, results: list[dict], extra_tables: dict | None = None) -> None:
    """A run's rows pass the checks every imported row passes (eatlas.store.checks), before anything is written:
    runs, results and every table of the method. They are checked as they will be stored: a NaN is written as
    NULL (DuckDB reads a pandas NaN so). This imports pandas and pandera: the one place a warm run needs them,
    as a run's rows are checked by the same rules as imported ones."""
    import pandas as pd

    from .checks import check_rows, checked_columns, frame

    def stored(v):
        return None if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v) else v

    declared = declared_tables()
    types = declared["runs"].columns
    check_rows("runs", frame({c: [stored(run.get(c))] for c in checked_columns("runs", types) if c in run}, types),
               types)
    if results:
        types = declared["results"].columns
        cols = {c: [stored(r.get(c)) for r in results] for c in checked_columns("results", types) if c in results[0]}
        check_rows("results", frame(cols, types), types, d_methods=[gives_d(run.get("method"))] * len(results))
    for name, table in (extra_tables or {}).items():
        if name in declared and table is not None and len(table):
            types = declared[name].columns
            cols = {c: [stored(v) for v in table[c].tolist()] for c in checked_columns(name, types)
                    if c in table.columns}
            check_rows(name, frame(cols, types), types)


def reproduction_counts(db: str | Path, run_id: str) -> dict:
    """How a stored run's results pair with the papers' printed numbers: ``results`` (its results with a WEAT
    effect size), ``same_model`` (those in view ``reproduction``), ``loose_only`` (in ``reproduction_loose``
    only: a model of the same family), and ML-EAT's ``mleat`` and ``mleat_agree`` (printed Level 1-3 numbers
    beside the run's in ``mleat_reproduction``, and how many of them agree). A run this process has just written
    gives the counts its write computed (in its transaction, through EATlas's own views), when the file is still
    as that write left it."""
    kept = _PAIRING.get((str(Path(db).resolve()), run_id))
    if kept is not None and known.unchanged(db):
        return dict(kept)
    con = connect(db, read_only=True)
    try:
        return pairing(con, run_id)
    finally:
        con.close()


def _published_of(con: duckdb.DuckDBPyConnection, results: list[dict]) -> None:
    """A temporary ``published_results`` holding the printed tables that name one of ``results``' tests (or the
    tests they also stand for), whole: the views then pair this run's results over those tables only, at a cost
    that does not grow with the registry's published numbers (the counts are the same: a table naming none of
    the run's tests has no cell that pairs with it)."""
    ids = sorted({r["test_id"] for r in results} | {a for r in results for a in (r.get("also_as") or [])})
    main = _q(con.execute("SELECT current_database()").fetchone()[0]) + ".main.published_results"
    con.execute(f"CREATE TEMP TABLE published_results AS SELECT * FROM {main} WHERE (paper, table_id) IN "
                f"(SELECT paper, table_id FROM {main} WHERE list_contains(?, test_id))", [ids])


# (results file, run id) -> the counts write_run computed for that run (reproduction_counts)
_PAIRING: dict[tuple[str, str], dict] = {}


def pairing(con: duckdb.DuckDBPyConnection, run_id: str) -> dict:
    """:func:`reproduction_counts` on an open connection whose views are EATlas's own (:func:`read_as_data`,
    :func:`own_views`)."""
    one = lambda sql: con.execute(sql, [run_id]).fetchone()[0]     # noqa: E731
    out = {"results": one("SELECT count(*) FROM results WHERE run_id = ? AND status = 'ok' "
                          "AND effect_size IS NOT NULL"),
           "same_model": one("SELECT count(DISTINCT (test_id, level)) FROM reproduction_all_runs "
                             "WHERE run_id = ?")}
    out["loose_only"] = con.execute(
        "SELECT count(*) FROM (SELECT DISTINCT test_id, level FROM reproduction_loose_all_runs WHERE run_id = ? "
        "EXCEPT SELECT DISTINCT test_id, level FROM reproduction_all_runs WHERE run_id = ?)",
        [run_id, run_id]).fetchone()[0]
    # what keeps the loose pairs from being the paper's model, most often (e.g. 'encoding standard vs sent-bias')
    top = con.execute("SELECT differs FROM reproduction_loose_all_runs WHERE run_id = ? AND match <> 'same_model' "
                      "AND differs <> '' GROUP BY differs ORDER BY count(*) DESC, differs LIMIT 1",
                      [run_id]).fetchone()
    out["loose_differs"] = top[0] if top else None
    out["mleat"], out["mleat_agree"] = con.execute(
        "SELECT count(*), count(*) FILTER (agrees) FROM mleat_reproduction_all_runs WHERE run_id = ?",
        [run_id]).fetchone()
    return out


# Without --write, `eatlas sql` is read-only *and* sandboxed: DuckDB's read_only mode still lets a
# statement read or write other files (COPY ... TO, read_csv('/etc/...'), ATTACH, EXPORT DATABASE) and
# INSTALL extensions from the network, so external access is switched off and the configuration locked
# (a later SET cannot switch it back on). The file is attached read-only to a private in-memory
# database first (settings are per database instance, and a connection with other settings may be
# open to the same file in this process).
SANDBOX = ("SET enable_external_access = false", "SET autoinstall_known_extensions = false",
           "SET autoload_known_extensions = false", "SET allow_community_extensions = false",
           "SET lock_configuration = true")


def _sandboxed(path: Path, writes_to: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    con = duck()
    try:
        alias = path.stem if re.fullmatch(r"[A-Za-z_]\w*", path.stem) and path.stem.lower() not in (
            "memory", "system", "temp", "main", "information_schema", "pg_catalog") else "results_db"
        quoted = str(path.resolve()).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS \"{alias}\" (READ_ONLY)")
        con.execute(f'USE "{alias}".main')      # catalog and schema: a stem such as pg_catalog names no schema
        if writes_to is not None:       # set before external access is switched off and the settings locked
            con.execute(f"SET allowed_directories = [{_sql_text(str(Path(writes_to).resolve()) + os.sep)}]")
        for stmt in SANDBOX:
            con.execute(stmt)
        return con
    except BaseException:
        con.close()
        raise


def hostile_objects(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> list[str]:
    """What in an opened results file would make reading it run something other than EATlas's queries: a table
    EATlas declares that is a view (or anything but a table) there, a function or macro the file defines (it
    would replace a built-in one, e.g. ``lower``, in every query). Each named."""
    out = []
    declared = declared_tables()
    cat = _sql_text(catalog) if catalog else "current_database()"
    for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = " + cat +
                               " AND schema_name = 'main' AND NOT internal ORDER BY view_name").fetchall():
        if name in declared:
            out.append(f"{name} is a view, where EATlas keeps a table")
    for name, kind in con.execute("SELECT DISTINCT function_name, function_type FROM duckdb_functions() "
                                  f"WHERE database_name = {cat} AND NOT internal "
                                  "ORDER BY function_name").fetchall():
        out.append(f"the file defines the {kind} {name}, which EATlas never writes")
    return out


# each view's statement, its comments left out (a comment may hold a ';')
_VIEW_STATEMENTS = tuple(s.strip() for s in re.sub(r"--[^\n]*", "", VIEWS).split(";")
                         if "CREATE OR REPLACE VIEW" in s)


def read_as_data(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    """A results file from elsewhere is data, never a program (a connection from :func:`_sandboxed`): refuse
    it when :func:`hostile_objects` finds anything, naming it; and read EATlas's views (``reproduction``, ...)
    as this EATlas defines them, never as the file does: each made again as a temporary view, which hides the
    file's. A table EATlas declares that the file lacks is read as an empty one, and a column it lacks (a file of
    an older EATlas) as NULL, so every view can be made; a view that still cannot be made refuses the file,
    naming the view and why (a file's own view is never what answers)."""
    bad = hostile_objects(con)
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise EatlasError(f"not a results file EATlas reads: {bad[0]}{more}; nothing was read", file=str(path),
                          hint="a results file holds tables only; 'eatlas results export' of the store that made "
                               "it gives a folder that imports safely")
    check_text_sizes(con, path)
    own_views(con, path)


# The longest text value a results file is read with (characters; EATLAS_MAX_TEXT overrides it). EATlas writes
# none near it (the longest are CEAT's corpus contexts and the LLM IAT's responses, a few thousand); a file with
# one is refused before any work, so that a report or site of a file from elsewhere is bounded in time and
# memory (a 20 MB model name cost the report 13 s and 3.9 GB, and every figure drawing it minutes).
MAX_TEXT = 100_000
# JSON columns (a run's settings, its registry snapshot, package versions) are EATlas's own records, read as JSON,
# never drawn: their limit is larger (a run's registry snapshot named every set before 2026-11-29: 150 KB for 3,700
# sets; files written then are still read).
MAX_JSON = 64_000_000


def max_text() -> int:
    raw = os.environ.get("EATLAS_MAX_TEXT", "").strip()
    try:
        return max(1, int(raw)) if raw else MAX_TEXT
    except ValueError:
        raise EatlasError(f"EATLAS_MAX_TEXT is {raw!r}, not a number of characters", field="EATLAS_MAX_TEXT",
                          hint=f"a whole number, e.g. {MAX_TEXT}") from None


def check_text_sizes(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    """Refuse a file with a text value longer than :func:`max_text` characters (a JSON one: :data:`MAX_JSON`),
    naming the table, column and length (one query per table: the lengths DuckDB keeps)."""
    limit = max_text()
    cat = con.execute("SELECT current_database()").fetchone()[0]
    cols: dict[str, list[tuple[str, int]]] = {}
    for table, col, typ in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_catalog = ? AND "
            "table_schema = 'main' AND (data_type IN ('VARCHAR', 'JSON') OR data_type LIKE 'VARCHAR[]%') "
            "AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND "
            "table_schema = 'main' AND table_type = 'BASE TABLE') ORDER BY table_name, ordinal_position",
            [cat, cat]).fetchall():
        cols.setdefault(table, []).append((col, max(limit, MAX_JSON) if typ == "JSON" else limit))
    for table, names in cols.items():
        lengths = con.execute("SELECT " + ", ".join(
            f"max(length(CAST({_q(c)} AS VARCHAR)))" for c, _ in names) + f" FROM {_q(cat)}.main.{_q(table)}"
                              ).fetchone()
        for (c, limit), n in zip(names, lengths):
            if n is not None and n > limit:
                raise EatlasError(f"not a results file EATlas reads: {table}.{c} holds a value of {n:,} characters "
                                  f"(the limit is {limit:,}); nothing was read", file=str(path), field=f"{table}.{c}",
                                  hint="EATlas writes no value near that long; to read the file all the same, set "
                                       f"EATLAS_MAX_TEXT to more than {n}")


def own_views(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    """EATlas's views made again from EATlas's text as temporary views of ``con`` (which hide the file's own): a
    declared table the file lacks read as an empty one, a column it lacks as NULL; a view that still cannot be
    made refuses the file, naming it."""
    cat = con.execute("SELECT current_database()").fetchone()[0]
    have: dict[str, dict[str, str]] = {}
    for table, col, typ in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_catalog = ? "
            "AND table_schema = 'main' ORDER BY table_name, ordinal_position", [cat]).fetchall():
        have.setdefault(table, {})[col] = typ
    for name, d in declared_tables().items():
        cols = have.get(name)
        if cols is None:        # not in the file: an empty table of EATlas's own columns
            body = ", ".join(f"{_q(c)} {t}" for c, t in d.columns.items())
            con.execute(f"CREATE TEMP TABLE {_q(name)} ({body})")
        elif set(d.columns) - set(cols):     # an older file: the columns added since, NULL
            extra = ", ".join(f"NULL::{t} AS {_q(c)}" for c, t in d.columns.items() if c not in cols)
            con.execute(f"CREATE TEMP VIEW {_q(name)} AS SELECT *, {extra} FROM {_q(cat)}.main.{_q(name)}")
    for stmt in _VIEW_STATEMENTS:
        try:
            con.execute(stmt.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW", 1))
        except duckdb.Error as e:
            m = re.search(r"VIEW\s+(\S+)", stmt)
            why = str(e).strip().splitlines()[0][:300]
            raise EatlasError(f"not a results file EATlas reads: EATlas's view {m[1] if m else '?'} cannot be made "
                              f"from it ({why}); nothing was read", file=str(path),
                              hint="its tables are not those of an EATlas results file: 'eatlas results export' of "
                                   "the store that made it gives a folder that imports safely") from None


def _q(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def published_only(reg=None) -> duckdb.DuckDBPyConnection:
    """Before any run (no results file): an in-memory database with the registry's published results,
    the empty run tables and the views, sandboxed as a results file is. Nothing is written to disk."""
    if reg is None:
        from ..registry.base import load_registry
        reg = load_registry()
    con = duck()
    try:
        init_schema(con)
        refresh_published(con, reg)
        refresh_conventions(con, reg)
        from ..encoders import identity
        identity.refresh(con, reg)      # the papers' models (published_models), queryable before any run
        for stmt in SANDBOX:
            con.execute(stmt)
        return con
    except BaseException:
        con.close()
        raise


class SqlResult:
    """The rows of one statement, fetched as they are read (``rows``: Python values, NULL as None and NaN as NaN;
    ``frames``: DataFrames), a DuckDB error while fetching becoming the same one-line error as at the start."""

    def __init__(self, cursor, db, write: bool):
        self._cur, self._db, self._write = cursor, db, write
        desc = cursor.description if cursor is not None else None
        self.columns = [d[0] for d in desc] if desc else []
        self.types = [str(d[1]) for d in desc] if desc else []

    def rows(self, n: int = 10_000):
        """Lists of at most ``n`` row tuples, until the result is read."""
        while self._cur is not None:
            try:
                chunk = self._cur.fetchmany(n)
            except duckdb.Error as e:
                raise _sql_error(e, self._db, self._write) from None
            if not chunk:
                return
            yield chunk

    def frames(self, vectors: int = 16):
        """DataFrames of about ``vectors`` x 2,048 rows (as ``fetchdf`` types them), until the result is read."""
        while self._cur is not None:
            try:
                df = self._cur.fetch_df_chunk(vectors)
            except duckdb.Error as e:
                raise _sql_error(e, self._db, self._write) from None
            if not len(df):
                return
            yield df

    def frame(self) -> pd.DataFrame:
        if self._cur is None:
            return pd.DataFrame()       # a statement that returns no rows (a comment only, SET, ...)
        try:
            return self._cur.fetchdf()
        except duckdb.Error as e:
            raise _sql_error(e, self._db, self._write) from None


def _sql_error(e: duckdb.Error, db, write: bool) -> EatlasError:
    msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
    low = msg.lower()
    if "read-only" in low:
        hint = "the database is opened read-only; pass --write to change it"
    elif not write and ("disabled by configuration" in low or "configuration has been locked" in low
                        or "external extensions is disabled" in low or "external access" in low):
        hint = ("without --write, 'eatlas sql' reads only this database: no other files, ATTACH, COPY, "
                "INSTALL/LOAD or settings; pass --write to allow them")
    else:
        hint = "tables: runs, results, published_results; view: reproduction"
    return EatlasError(f"SQL error: {msg}", file=str(db), hint=hint)


@contextlib.contextmanager
def sql_result(db: str | Path, sql: str, *, write: bool = False, wait_s: float = 0.0, reg=None):
    """Run one SQL statement and yield its :class:`SqlResult`, read while the connection is open. Without a
    results file (no run yet) and without ``write``, the registry's published results and the views are queried
    in memory (``reg``: the registry, default the bundled one)."""
    if not sql.strip() or not sql.strip().strip(";").strip():
        raise EatlasError("empty SQL query", field="query", hint="e.g. eatlas sql \"SELECT * FROM runs\"")
    if not Path(db).exists():
        if write:
            raise EatlasError("no such database", file=str(db),
                              hint="the results file is created by 'eatlas run'; pass --db FILE for another one")
        con = published_only(reg)
    else:
        con = connect(db, read_only=not write, wait_s=wait_s, sandbox=not write)
    try:
        try:
            cur = con.execute(sql)
        except duckdb.Error as e:
            raise _sql_error(e, db, write) from None
        yield SqlResult(cur if cur is not None and cur.description is not None else None, db, write)
    finally:
        con.close()


def query(db: str | Path, sql: str, *, write: bool = False, wait_s: float = 0.0, reg=None) -> pd.DataFrame:
    """Run one SQL statement and return all its rows (see :func:`sql_result`)."""
    with sql_result(db, sql, write=write, wait_s=wait_s, reg=reg) as res:
        return res.frame()
