"""SAME (Schröder et al. 2021) as a method, one plug-in file: the formula is eatlas.stats.same, whose
docstring gives the sources.

Roles. In SAME the protected groups are the *attribute* sets (``define_bias_space``) and the neutral
words whose bias is measured are the *targets* (``individual_bias(target)``). The authors' code maps
a WEAT test onto the same roles: its ``WEAT.define_bias_space`` takes the attribute sets A, B and
``WEAT.group_bias`` the target sets X, Y (geometrical_bias/weat.py of the same repository). So
here A and B are SAME's two groups, and X and Y are the targets: one score over X u Y, and the
scores of X and of Y separately (in a WEAT test built to show a bias, skew(X) and skew(Y) have
opposite signs). Table ``same_targets`` holds b(t) of every target stimulus.

Degenerate input: when a_hat and b_hat coincide (e.g. A and B hold the same vectors), the direction
c is zero and no cosine is defined: the test is not run, with that reason.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.same import _unit, direction, same_scores, target_biases
from .base import Matrices, Method, Outcome, Table, register

__all__ = ["SameMethod", "SameResult", "SameTarget", "same_scores", "target_biases"]


@dataclass
class SameResult:
    """One row per test and level: SAME over X u Y with groups A, B, and over X and Y separately."""
    x_name: str
    y_name: str
    a_name: str
    b_name: str
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    same: float                 # mean_{t in X u Y} |b(t)|
    skew: float                 # mean_{t in X u Y} b(t); > 0: towards A
    stereotype: float           # std_{t in X u Y} b(t), ddof=0
    same_x: float
    skew_x: float
    stereotype_x: float
    same_y: float
    skew_y: float
    stereotype_y: float


@dataclass
class SameTarget:
    """b(t) of one target stimulus (role x or y; item: its text as encoded)."""
    role: str
    item: str
    bias: float                 # b(t) = cos(t, a_hat - b_hat), signed: > 0 towards A
    abs_bias: float             # |b(t)|, the SAME contribution of t


@register
class SameMethod(Method):
    name = "same"
    help = ("SAME (Schröder et al. 2021): mean |cos(t, a_hat - b_hat)| of the targets X u Y against groups A, B, "
            "with skew and stereotype; per set and per target; no p-value")
    inputs = "matrices"
    effect_size = False
    stats = ()
    options = ()
    min_stimuli = {"x": 1, "y": 1, "a": 1, "b": 1}     # means and cosines: one stimulus each suffices
    tables = (
        Table("same_results", SameResult,
              doc="SAME, skew and stereotype of X u Y, X and Y against groups A, B (Schröder et al. 2021)"),
        Table("same_targets", SameTarget, key=("role", "item"),
              doc="the signed SAME bias b(t) = cos(t, a_hat - b_hat) of every target stimulus"),
    )
    cite = ("Schröder, Schulz, Kenneweg, Feldhans, Hinder and Hammer (2021), Evaluating Metrics for Bias in Word "
            "Embeddings, arXiv:2111.07864; the authors' code HammerLabML/EmbeddingBiasScores, "
            "geometrical_bias/same.py")

    def compute(self, m: Matrices, cfg) -> Outcome:
        try:
            c = direction(m.a, m.b)
            bx = _unit(m.x, "x") @ (c / np.linalg.norm(c))
            by = _unit(m.y, "y") @ (c / np.linalg.norm(c))
        except ValueError as e:
            return Outcome(not_run=str(e))
        names = m.names
        s, k, st = same_scores(np.concatenate([bx, by]))
        sx, kx, stx = same_scores(bx)
        sy, ky, sty = same_scores(by)
        row = SameResult(x_name=names[0], y_name=names[1], a_name=names[2], b_name=names[3],
                         n_x=len(bx), n_y=len(by), n_a=len(m.a), n_b=len(m.b),
                         same=s, skew=k, stereotype=st, same_x=sx, skew_x=kx, stereotype_x=stx,
                         same_y=sy, skew_y=ky, stereotype_y=sty)
        targets, seen = [], set()
        for role, b in (("x", bx), ("y", by)):
            for text, v in zip(m.texts[role], b):
                if (role, text) in seen:        # the same text twice in one role: the same vector, one row
                    continue
                seen.add((role, text))
                targets.append(SameTarget(role=role, item=text, bias=float(v), abs_bias=float(abs(v))))
        return Outcome(rows={"same_results": [row], "same_targets": targets}, detail=row)

    def summary_columns(self, outcome):
        """The CLI results table's columns: SAME over X u Y, and the skew of X and of Y (> 0: towards A)."""
        def cells(r):
            res = outcome.details.get((r["test_id"], r["level"]))
            return [f"{res.same:.3f}", f"{res.skew_x:+.3f}, {res.skew_y:+.3f}"] if res else ["-", "-"]
        return ["SAME (X u Y)", "skew (X, Y)"], cells
