"""SC-EAT as a run method (``eatlas run --method sceat``): every target stimulus of X and Y against A and B.

For each target stimulus w (a row of X or of Y), ``eatlas.stats.sceat.sc_eat(w, A, B)``: the single-category
effect size ``d(w) = (mean_A cos(w, a) - mean_B cos(w, b)) / std_{A u B} cos(w, x)`` (ddof=1; Caliskan
et al. 2017's WEFAT statistic, ML-EAT eq. 9 of Wolfe, Hiniker and Howe 2024) and the permutation test
over re-partitions of the attribute words A u B (ML-EAT eq. 7-8), both tails kept. ``association`` is
ML-EAT's rule: "A" when d > ``--sceat-threshold`` and p_upper < ``--sceat-alpha``, "B" when d <
-threshold and p_lower < alpha. The defaults, 0.05 and 0.2, are ML-EAT's own (``--mleat-alpha``,
``--effect-threshold``). ``--n-samples`` and ``--parametric`` reach the permutation test; every target
uses the run's seed, so its partitions are the same for every target of a test.

No correction for multiple comparisons is applied across the targets (as for ML-EAT's two Level-2
tests); ``eatlas.stats.weat.holm`` is available. A target equally similar to every attribute (standard
deviation 0) has no effect size: its row has null statistics and the reason; when no target of the
test has one, the test is not run.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from ..argtypes import PROBABILITY, between
from ..errors import EatlasError
from ..stats.sceat import sc_eat
from .base import Matrices, Method, Option, Outcome, Table, register

__all__ = ["SceatMethod", "SceatRow"]

DEFAULT_ALPHA = 0.05        # ML-EAT's association rule (RunConfig.mleat_alpha)
DEFAULT_THRESHOLD = 0.2     # ... and its |d| threshold (RunConfig.effect_threshold)


@dataclass
class SceatRow:
    """One target stimulus of X or Y (``role``; ``item``: its text as encoded) against A and B."""
    role: str
    item: str
    effect_size: float | None
    p_value: float | None       # the tail the effect points to
    p_upper: float | None       # association with A
    p_lower: float | None       # association with B
    statistic: float | None     # sum_A cos(w, a) - sum_B cos(w, b)
    exact: bool | None
    n_partitions: int | None
    n_a: int
    n_b: int
    association: str | None     # "A", "B" or null
    alpha: float
    effect_threshold: float
    parametric: bool
    reason: str | None          # why a target has no statistics


ALPHA_TYPE, THRESHOLD_TYPE = PROBABILITY, between(0.0, 100.0)     # as ML-EAT's --mleat-alpha, --effect-threshold


def _valid(parse, value, flag: str) -> float:
    """An option value set through the API (not parsed by the CLI) passes the same parser, or a one-line error."""
    try:
        return parse(str(value))
    except argparse.ArgumentTypeError as e:
        raise EatlasError(str(e), field=flag) from None


@register
class SceatMethod(Method):
    name = "sceat"
    help = ("SC-EAT (WEFAT): for every target stimulus of X and Y, its effect size and permutation p against "
            "A and B, and ML-EAT's association rule")
    inputs = "matrices"
    effect_size = False
    stats = ("n_samples", "parametric")
    min_stimuli = {"x": 0, "y": 0, "a": 1, "b": 1}     # one target is a test; A and B (three together) below
    options = (
        Option("--sceat-alpha", dict(type=ALPHA_TYPE, default=DEFAULT_ALPHA, metavar="P",
                                     help="significance of a target's association (ML-EAT's rule)")),
        Option("--sceat-threshold", dict(type=THRESHOLD_TYPE, default=DEFAULT_THRESHOLD, metavar="D",
                                         help="|d| above which a significant target is associated "
                                              "(ML-EAT's rule)")),
    )
    tables = (
        Table("sceat_results", SceatRow, key=("role", "item"),
              doc="SC-EAT of every target stimulus of X and Y against A and B (eatlas.stats.sceat.sc_eat)"),
    )
    cite = ("Caliskan, Bryson and Narayanan (2017), Science 356(6334):183-186, doi:10.1126/science.aal4230 "
            "(WEFAT); Wolfe, Hiniker and Howe (2024), ML-EAT, eq. 7-9")

    def check(self, cfg) -> None:
        _valid(ALPHA_TYPE, self.option(cfg, "sceat_alpha"), "--sceat-alpha")
        _valid(THRESHOLD_TYPE, self.option(cfg, "sceat_threshold"), "--sceat-threshold")

    def compute(self, m: Matrices, cfg) -> Outcome:
        alpha = float(self.option(cfg, "sceat_alpha"))
        thr = float(self.option(cfg, "sceat_threshold"))
        n_samples, seed = int(cfg.n_samples), int(cfg.seed)
        parametric = bool(getattr(cfg, "parametric", False))
        n_a, n_b = len(m.a), len(m.b)
        if n_a < 1 or n_b < 1 or n_a + n_b < 3:
            return Outcome(not_run=f"SC-EAT needs at least one stimulus in A and in B and three together "
                                   f"(A {n_a}, B {n_b})")
        rows, seen = [], set()
        for role, mat in (("x", m.x), ("y", m.y)):
            for text, w in zip(m.texts[role], np.asarray(mat, dtype=np.float64)):
                if (role, text) in seen:        # the same text twice in one role: the same vector, one row
                    continue
                seen.add((role, text))
                base = dict(role=role, item=text, n_a=n_a, n_b=n_b, alpha=alpha, effect_threshold=thr,
                            parametric=parametric)
                try:
                    r = sc_eat(w, m.a, m.b, n_samples=n_samples, seed=seed, parametric=parametric,
                               alpha=alpha, effect_threshold=thr)
                except ValueError as e:
                    rows.append(SceatRow(effect_size=None, p_value=None, p_upper=None, p_lower=None,
                                         statistic=None, exact=None, n_partitions=None, association=None,
                                         reason=str(e), **base))
                    continue
                rows.append(SceatRow(effect_size=r.effect_size, p_value=r.p_value, p_upper=r.p_upper,
                                     p_lower=r.p_lower, statistic=r.statistic, exact=r.exact,
                                     n_partitions=r.n_partitions, association=r.association, reason=None, **base))
        if not rows:
            return Outcome(not_run="no target stimulus in X or Y")
        if all(r.effect_size is None for r in rows):
            return Outcome(not_run="SC-EAT undefined for every target: " + rows[0].reason)
        return Outcome(rows={"sceat_results": rows}, detail=rows)

    def summary_columns(self, outcome):
        """The CLI results table's columns: how many targets of X and of Y are associated with A and with B."""
        def cells(r):
            rows = outcome.details.get((r["test_id"], r["level"]))
            if not rows:
                return ["-", "-"]
            return [" ".join(f"{sum(1 for x in rows if x.role == role and x.association == g)}{g}" for g in "AB")
                    for role in ("x", "y")]
        return ["X associated", "Y associated"], cells
