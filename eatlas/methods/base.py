"""The plug-in interface of a method: what it needs, what it asks on the command line, what it stores.

A method is one module in ``eatlas/methods/`` (or a third-party package's entry point in group
``eatlas.methods``) holding one ``Method`` subclass decorated with ``@register``. From its
declaration come the CLI's ``--method`` choices and the method's own options
(``eatlas.cli``), the store's tables (``eatlas.store`` derives their DDL from the row types
declared here), the run record (one run path, ``eatlas.run.runner``) and its report and CLI summary.

Two kinds of input:

* ``inputs = "matrices"``: the run path expands each test at each level, encodes every unique
  text once (with the embedding cache), drops what cannot be encoded (recorded with the result),
  and calls ``compute(m, cfg)`` with the test's X, Y, A, B matrices. It writes one ``results``
  row per test and level (status, counts, dropped stimuli; the effect size, p-value and CI when
  the method gives a WEAT-comparable effect size, ``effect_size = True``, which also gets
  Holm-Bonferroni and the leave-one-out stimulus influence).
* anything else (``"corpus"``, ``"groups"``): the method's ``run(ctx)`` does its own encoding
  through ``ctx.encoder`` and returns its tables' rows.

Rows are dicts or instances of the declared row dataclass; the run path adds ``run_id`` (and, for
per-test tables, ``test_id``, ``test_version`` and ``level``).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..levels import NAMES as ALL_LEVELS
from ..stats.conventions import DEFAULT as DEFAULT_CONVENTION

# The statistics options shared by the methods built on the permutation test and the stimulus bootstrap.
STATS_OPTIONS = ("n_samples", "parametric", "alternative", "ci", "n_boot", "ci_method", "p_rule")


@dataclass(frozen=True)
class Option:
    """One command-line option of a method: ``flag`` (e.g. '--mleat-alpha') and argparse keywords
    (type, default, choices, action, help, metavar, nargs). Its value reaches the method as
    ``cfg.options[dest]``."""
    flag: str
    kwargs: dict = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.kwargs.get("dest") or self.flag.lstrip("-").replace("-", "_")

    @property
    def default(self):
        if self.kwargs.get("action") == "store_true":
            return False
        return self.kwargs.get("default")


@dataclass(frozen=True)
class Table:
    """A method's own table. ``row``: a dataclass whose fields (and their annotated types) are the
    columns after the run path's own (``run_id``; with ``per_test``, also test_id, test_version and
    level). ``key``: the further primary-key columns (none: one row per run, or per test and level).
    ``open``: rows may carry further columns (e.g. one per pair of groups), added as they come."""
    name: str
    row: type
    per_test: bool = True
    key: tuple[str, ...] = ()
    open: bool = False
    doc: str = ""
    unique: bool = True         # False: no primary key (several rows may share every key column)

    def prefix(self) -> list[tuple[str, str, bool]]:
        cols = [("run_id", "VARCHAR", True)]
        if self.per_test:
            cols += [("test_id", "VARCHAR", True), ("test_version", "VARCHAR", True), ("level", "VARCHAR", True)]
        return cols

    def columns(self) -> list[tuple[str, str, bool]]:
        """(name, DuckDB type, not null) of every column, the run path's first."""
        return self.prefix() + columns_of(self.row)

    def primary_key(self) -> tuple[str, ...] | None:
        if self.unique and (self.key or self.per_test):
            return tuple(c for c, _, _ in self.prefix()) + self.key
        return None


_DUCK = {str: "VARCHAR", int: "BIGINT", float: "DOUBLE", bool: "BOOLEAN", dict: "JSON",
         _dt.datetime: "TIMESTAMP", list: "VARCHAR[]"}


def duck_type(tp) -> tuple[str, bool]:
    """(DuckDB type, nullable) of an annotation: str, int, float, bool, dict (JSON), datetime, list[str],
    ``X | None`` (nullable); ``typing.Annotated[X, "TYPE"]`` names the DuckDB type itself."""
    nullable = False
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(tp))
        tp = args[0] if len(args) == 1 else tp
        origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return typing.get_args(tp)[1], nullable
    if origin is list:
        return "VARCHAR[]", nullable
    if tp in _DUCK:
        return _DUCK[tp], nullable
    raise TypeError(f"no DuckDB type for {tp!r}")


def columns_of(row: type) -> list[tuple[str, str, bool]]:
    hints = typing.get_type_hints(row, include_extras=True)
    out = []
    for f in dataclasses.fields(row):
        typ, nullable = duck_type(hints[f.name])
        out.append((f.name, typ, not nullable))
    return out


def as_dict(row) -> dict:
    return dataclasses.asdict(row) if dataclasses.is_dataclass(row) else dict(row)


@dataclass
class Matrices:
    """A test at one level, as a matrices method sees it: the encodable stimuli of each role
    (``x``, ``y``, ``a``, ``b``: float64 arrays of shape (n, d)), their texts (``texts[role]``) and
    the test (``test``: eatlas.registry.stimuli.Test, with concept names and provenance)."""
    x: np.ndarray
    y: np.ndarray
    a: np.ndarray
    b: np.ndarray
    texts: dict
    test: Any
    stimuli: dict = field(default_factory=dict)     # role -> the stimulus (word) of each row, its text's source
    # paired forms (a gendered language's test, TestSpec.forms): "a", "b" -> target y's attribute matrices, rows
    # aligned with ``a`` and ``b`` (x's forms); empty for a test without forms
    forms: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The four concepts' names (X, Y, A, B)."""
        return [self.test.concepts[r].name for r in ("x", "y", "a", "b")]

    @property
    def words(self) -> tuple | None:
        """The unit of each row for the concepts' answer (eatlas.stats.concepts, "Words are the units"): at a level
        expanded from words (sentences, contextual words), the (role, word) each row was made from, so a word's
        rows are one unit; None at the word level, where each row is a word. The role keeps a word that the
        authors' lists put in two sets (an overlap) a unit of each."""
        if getattr(self.test, "level", "word") == "word" or not self.stimuli:
            return None
        return tuple([(r, w) for w in self.stimuli.get(r, [])] for r in ("x", "y", "a", "b"))


@dataclass
class Outcome:
    """What ``compute`` returns for one test at one level. A method with ``effect_size = True``
    fills ``stats`` (an object with effect_size, p_value, exact, n_partitions, ci_low, ci_high, such
    as eatlas.stats.weat.WeatResult). ``rows``: table name -> rows of its own tables. ``detail``: kept in
    memory for the method's ``after_run`` (e.g. ML-EAT's result, for its EAT-Maps). ``not_run``: the
    reason the test could not be computed (it is then stored as not run)."""
    stats: Any = None
    rows: dict = field(default_factory=dict)
    detail: Any = None
    not_run: str | None = None


@dataclass
class MethodRun:
    """What ``run`` returns (methods whose input is not a test's four matrices)."""
    rows: dict                          # table name -> rows
    settings: dict = field(default_factory=dict)    # recorded in runs.settings
    test_ids: list = field(default_factory=list)
    levels: list = field(default_factory=list)
    n_samples: int | None = None
    detail: Any = None
    templates: list = field(default_factory=list)   # id@version of registry templates it used beyond the tests'


class Stopped(KeyboardInterrupt):
    """Ctrl-C inside a method's own loop after some units finished: ``rows`` (table -> rows of the finished units
    only), ``done`` and ``rest`` (the units' names). The method stores the rows and says so (:func:`interrupted`);
    a Ctrl-C before any unit finished is a plain KeyboardInterrupt (nothing stored)."""

    def __init__(self, rows: dict, done: list[str], rest: list[str], settings: dict | None = None):
        super().__init__()
        self.rows, self.done, self.rest, self.settings = rows, done, rest, dict(settings or {})


def interrupted(settings: dict, notes: list, stop: Stopped, *, unit: str, resume: str) -> None:
    """What a method records and says after :class:`Stopped`: ``interrupted`` and ``not_finished`` in the run's
    settings (as the WEAT-style runner and the LLM IAT record them; the command then exits 130) and one note
    naming what was stored and the option that resumes (``resume``, e.g. ``--tests``)."""
    settings.update(interrupted=True, not_finished=list(stop.rest))
    notes.append(f"interrupted (Ctrl-C) after {len(stop.done)} {unit}(s): {', '.join(stop.done)} stored; resume "
                 f"with the same command and {resume} {' '.join(stop.rest)}")


class Method:
    """Subclass, declare, decorate with ``@register``.

    ``cfg`` (eatlas.run.runner.RunConfig) holds what every run has: model, tests, levels, seed, alpha,
    min_coverage, the statistics options (n_samples, parametric, alternative, ci, n_boot; those the
    method lists in ``stats``) and ``options``, the method's own Option values by dest (read them with
    ``self.option(cfg, dest)``, which falls back to the declared default)."""
    name: ClassVar[str]
    help: ClassVar[str]
    inputs: ClassVar[str] = "matrices"
    levels: ClassVar[tuple[str, ...]] = ALL_LEVELS        # the levels it can run
    effect_size: ClassVar[bool] = False                   # a WEAT-comparable d in results (Holm, influence)
    stats: ClassVar[tuple[str, ...]] = ()                 # the STATS_OPTIONS it uses
    options: ClassVar[tuple[Option, ...]] = ()
    tables: ClassVar[tuple[Table, ...]] = ()
    cite: ClassVar[str] = ""                              # the formula's source, as docs/methods.md cites it
    # The fewest stimuli per role (x, y, a, b) the method can compute with. A test whose set holds fewer is
    # not one the method runs (left out of its default run, refused when named); one left with fewer
    # encodable stimuli by a model is stored as not run. WEAT's d needs a standard deviation: 2 each.
    min_stimuli: ClassVar[dict[str, int]] = {"x": 2, "y": 2, "a": 2, "b": 2}
    # whether compute() reads Matrices.forms (a test of paired forms, TestSpec.forms); a method that does not is
    # not run on such a test
    paired_forms: ClassVar[bool] = False
    # Whether it runs the tests that declare no `methods:` (docs/registry-format.md): every method over
    # embeddings does; a method of another kind (e.g. prompting a generative model) runs only the tests
    # whose `methods:` name it.
    undeclared: ClassVar[bool] = True
    # Whether ``eatlas run`` prints the run's progress as plain lines where standard error is no terminal (a pipe, a
    # log file): a method whose run takes minutes per test (prompting a generative model) says so; the others draw
    # their bars on a terminal only.
    progress_lines: ClassVar[bool] = False

    def check(self, cfg) -> None:
        """Refuse bad option values before any work (raise EatlasError naming the option)."""

    def registry_problems(self, reg) -> list:
        """What `eatlas validate` reports about the registry as this method would use it (EatlasErrors: a test
        that names the method in its `methods:` but cannot be run by it, a template it reads that asks for what
        it cannot fill). Default: nothing."""
        return []

    def compute(self, m: Matrices, cfg) -> Outcome:       # inputs == "matrices"
        raise NotImplementedError

    def run(self, ctx) -> MethodRun:                      # any other inputs
        raise NotImplementedError

    def summary(self, outcome):
        """A rich renderable the CLI prints after the run (None: the results table)."""
        return None

    def stage(self, outcome, cfg, *, db, registry):
        """Files that belong with the run, written before it is stored (e.g. CEAT's contexts.parquet);
        returns a callable that removes them again if storing fails (None: nothing written)."""
        return None

    def after_run(self, outcome, cfg, *, db, registry) -> str | None:
        """Work after the run is stored (e.g. drawing figures); returns a line for the user."""
        return None

    def report(self, ctx) -> list[dict]:
        """The method's sections of the HTML report: dicts with ``id``, ``title``, ``nav`` (the link text),
        ``html`` (markup from ``ctx.render``) and ``frames`` (the rows shown, for the page's run list and
        references). ``ctx`` (eatlas.outputs.report.ReportContext): ``rows(table, keys)`` (the selected rows of a
        table), ``rows_of_runs``, ``figure``/``svg`` (matplotlib to inline SVG), ``render`` (Jinja)."""
        return []

    def convention(self, cfg) -> str | None:
        """The convention (eatlas.stats.conventions) of the effect size and p-value this run stores in ``results``
        (None for a method without a WEAT-comparable effect size). Default: Caliskan et al.'s."""
        return DEFAULT_CONVENTION if self.effect_size else None

    def option(self, cfg, dest: str):
        return cfg.options.get(dest, next(o.default for o in self.options if o.dest == dest))


# The one table every method with a WEAT-comparable effect size writes besides ``results`` (the run path
# fills it; the store derives its DDL from this declaration like every method's own).
@dataclass
class InfluenceRow:
    """A row of ``influence`` ("Bad Seeds"): the effect size with one stimulus left out (eatlas.stats.robust)."""
    role: str                 # x | y | a | b
    item: str                 # the stimulus text
    d_without: float | None
    delta: float | None       # d_without - effect_size


INFLUENCE_TABLE = Table("influence", InfluenceRow, unique=False,
                        doc="stimulus influence: the effect size with each stimulus left out")
INFLUENCE_COLUMNS = [c for c, _, _ in INFLUENCE_TABLE.columns()]


_REGISTRY: dict[str, Method] = {}


def register(cls: type[Method]) -> type[Method]:
    """Class decorator: make ``cls`` a method of ``eatlas run --method``."""
    for attr in ("name", "help"):
        if not getattr(cls, attr, None):
            raise TypeError(f"method {cls.__name__} declares no {attr}")
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise TypeError(f"two methods are called {cls.name!r}: {type(_REGISTRY[cls.name]).__name__} and "
                        f"{cls.__name__}")
    bad = [lv for lv in cls.levels if lv not in ALL_LEVELS]
    if bad:
        raise TypeError(f"method {cls.name}: unknown level(s) {', '.join(bad)}")
    if set(cls.min_stimuli) - {"x", "y", "a", "b"} or not all(isinstance(n, int) and n >= 0
                                                              for n in cls.min_stimuli.values()):
        raise TypeError(f"method {cls.name}: min_stimuli maps roles x, y, a, b to counts")
    unknown = [s for s in cls.stats if s not in STATS_OPTIONS]
    if unknown:
        raise TypeError(f"method {cls.name}: unknown statistics option(s) {', '.join(unknown)}")
    for t in cls.tables:
        if not dataclasses.is_dataclass(t.row):
            raise TypeError(f"method {cls.name}: table {t.name}'s row is not a dataclass")
        columns_of(t.row)           # every column has a type
    _REGISTRY[cls.name] = cls()
    return cls
