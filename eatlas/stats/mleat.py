"""ML-EAT: the Multilevel Embedding Association Test (Wolfe, Hiniker and Howe 2024).

Level 1 is the WEAT (``eatlas.stats.weat.weat``, eq. 1-4). Level 2 tests each target group T alone
against A and B (eq. 5-8)::

    u(T, x) = mean_{t in T} cos(t, x)
    d_{A,B,T} = (mean_{a in A} u(T, a) - mean_{b in B} u(T, b)) / std_{x in A u B} u(T, x)

(std with ddof=1), with a permutation test that re-partitions the *attribute* words A u B (eq. 7);
the computation is ``eatlas.stats.sceat.single_category_test`` so Level 2 with one target word is the
SC-EAT (eq. 9). Level 3 gives the mean and sample standard deviation (ddof=1, eq. 10-11) of the
cosine similarities of A-X, B-X, A-Y and B-Y.

EAT pattern (the paper's taxonomy, from Level 2): a target group is *associated* with A when
``d > effect_threshold`` (0.2, Cohen's "small") and its upper-tail permutation p < ``alpha``
(0.05); with B when ``d < -effect_threshold`` and its lower-tail p < ``alpha``. Then

    X\\Y      A            B            none
    A     A-Uniform    AB-Divergent  AX-Singular
    B     BA-Divergent B-Uniform     BX-Singular
    none  AY-Singular  BY-Singular   Non-Directional

Choices where the paper is silent or garbled (see docs/methods.md): eq. 7 is one-sided towards A,
yet the paper marks negative Level-2 effects as significant, so a B association uses the lower
tail of the same permutation distribution; the EAT-Map text says "p-value > 0.05" which must mean
p < 0.05; both comparisons are strict; ties in the permutation distribution count (>=) as in
``weat.permutation_p``.

``p_method="authors"`` gives the p-values of the authors' code instead (wolferobert3/ml-eat mleat.py,
``compute_p_value``): a normal curve fitted to the permutation distribution and the smaller of its
two tails, at Level 1 and Level 2 alike (``weat.authors_normal_p``); see docs/methods.md.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from .sceat import SingleCategoryResult, single_category_test
from .weat import (
    P_METHODS,
    WeatResult,
    _unit_rows,
    association,
    authors_normal_p,
    null_distribution,
    weat,
)

__all__ = ["PATTERNS", "Level3Result", "MlEatResult", "classify_pattern", "level2", "level3", "mleat"]

PATTERNS = (
    "AB-Divergent", "BA-Divergent", "A-Uniform", "B-Uniform",
    "AX-Singular", "BX-Singular", "AY-Singular", "BY-Singular", "Non-Directional",
)

_PATTERN_OF = {
    ("A", "B"): "AB-Divergent", ("B", "A"): "BA-Divergent",
    ("A", "A"): "A-Uniform", ("B", "B"): "B-Uniform",
    ("A", None): "AX-Singular", ("B", None): "BX-Singular",
    (None, "A"): "AY-Singular", (None, "B"): "BY-Singular",
    (None, None): "Non-Directional",
}


def classify_pattern(x_association: str | None, y_association: str | None) -> str:
    """The EAT pattern from the Level-2 associations of X and Y (each "A", "B" or None)."""
    try:
        return _PATTERN_OF[(x_association, y_association)]
    except KeyError:
        raise ValueError(f"associations must be 'A', 'B' or None, got {x_association!r}, {y_association!r}") from None


@dataclass(frozen=True)
class Level3Result:
    """Mean and sample std (ddof=1) of the cosine similarities of each attribute-target pair."""
    ax_mean: float
    ax_std: float
    bx_mean: float
    bx_std: float
    ay_mean: float
    ay_std: float
    by_mean: float
    by_std: float

    def to_dict(self) -> dict:
        return asdict(self)


def _mean_std(c: np.ndarray) -> tuple[float, float]:
    return float(c.mean()), float(c.std(ddof=1)) if c.size > 1 else float("nan")


def level3(X, Y, A, B) -> Level3Result:
    X, Y, A, B = _unit_rows(X, "X"), _unit_rows(Y, "Y"), _unit_rows(A, "A"), _unit_rows(B, "B")
    ax, bx, ay, by = (_mean_std(p @ t.T) for p, t in ((A, X), (B, X), (A, Y), (B, Y)))
    return Level3Result(*ax, *bx, *ay, *by)


def level2(T, A, B, *, n_samples: int = 100_000, seed: int = 0, parametric: bool = False,
           alpha: float = 0.05, effect_threshold: float = 0.2, p_method: str = "permutation") -> SingleCategoryResult:
    """Level 2: target group T (one row per stimulus) against A and B, attribute words permuted."""
    T, A, B = _unit_rows(T, "T"), _unit_rows(A, "A"), _unit_rows(B, "B")
    u_a = (A @ T.T).mean(axis=1)
    u_b = (B @ T.T).mean(axis=1)
    return single_category_test(u_a, u_b, n_target=len(T), n_samples=n_samples, seed=seed,
                                parametric=parametric, alpha=alpha, effect_threshold=effect_threshold,
                                p_method=p_method)


@dataclass(frozen=True)
class MlEatResult:
    level1: WeatResult
    x: SingleCategoryResult        # Level 2, d_{A,B,X}
    y: SingleCategoryResult        # Level 2, d_{A,B,Y}
    level3: Level3Result
    pattern: str
    alpha: float
    effect_threshold: float
    n_samples: int
    seed: int
    parametric: bool
    names: tuple[str, str, str, str] = ("X", "Y", "A", "B")
    p_method: str = "permutation"

    def to_dict(self) -> dict:
        """One flat record (scalars only), e.g. one row of a DuckDB table ``mleat_results``."""
        row = {
            "x_name": self.names[0], "y_name": self.names[1], "a_name": self.names[2], "b_name": self.names[3],
            "n_x": self.level1.n_x, "n_y": self.level1.n_y, "n_a": self.level1.n_a, "n_b": self.level1.n_b,
            "pattern": self.pattern, "alpha": self.alpha, "effect_threshold": self.effect_threshold,
            "n_samples": self.n_samples, "seed": self.seed, "parametric": self.parametric,
            "p_method": self.p_method,
            "level1_effect_size": self.level1.effect_size, "level1_p_value": self.level1.p_value,
            "level1_statistic": self.level1.statistic, "level1_exact": self.level1.exact,
            "level1_n_partitions": self.level1.n_partitions,
        }
        for key, r in (("x", self.x), ("y", self.y)):
            row.update({
                f"{key}_effect_size": r.effect_size, f"{key}_p_value": r.p_value,
                f"{key}_p_upper": r.p_upper, f"{key}_p_lower": r.p_lower, f"{key}_statistic": r.statistic,
                f"{key}_exact": r.exact, f"{key}_n_partitions": r.n_partitions,
                f"{key}_association": r.association,
            })
        row.update(self.level3.to_dict())
        return row

    def to_rows(self) -> list[dict]:
        return [self.to_dict()]


def mleat(X, Y, A, B, *, n_samples: int = 100_000, seed: int = 0, parametric: bool = False,
          alpha: float = 0.05, effect_threshold: float = 0.2,
          names: Sequence[str] = ("X", "Y", "A", "B"), p_method: str = "permutation",
          ci: float | None = 0.95, n_boot: int = 10_000, alternative: str = "greater",
          ci_method: str = "concepts") -> MlEatResult:
    """All three ML-EAT levels and the EAT pattern for embedding matrices (one row per stimulus).

    ``n_samples``/``seed``/``parametric`` are passed to every permutation test (Level 1 permutes
    targets, Level 2 attributes); ``alpha`` and ``effect_threshold`` set the association rule.
    ``p_method``: "permutation" (default) or "authors" (the authors' normal fit, smaller tail).
    ``ci``, ``n_boot`` and ``alternative`` apply to Level 1 (the WEAT, :func:`eatlas.stats.weat.weat`);
    Level 2 keeps the authors' rule (both one-sided tails).
    """
    if len(names) != 4:
        raise ValueError("names must give the four concepts X, Y, A, B")
    if p_method not in P_METHODS:
        raise ValueError(f"p_method must be one of {P_METHODS}, got {p_method!r}")
    if p_method == "authors" and parametric:
        raise ValueError("p_method='authors' is its own normal approximation; leave parametric off")
    kw = dict(n_samples=n_samples, seed=seed, parametric=parametric)
    l1 = weat(X, Y, A, B, **kw, ci=ci, n_boot=n_boot, alternative=alternative, ci_method=ci_method)
    if p_method == "authors":
        s = np.concatenate([association(X, A, B), association(Y, A, B)])
        dist, _ = null_distribution(s, len(X), n_samples=int(n_samples), seed=int(seed))
        l1 = replace(l1, p_value=authors_normal_p(dist), convention="mleat")   # eatlas.stats.conventions
    rule = dict(alpha=alpha, effect_threshold=effect_threshold, p_method=p_method)
    rx, ry = level2(X, A, B, **kw, **rule), level2(Y, A, B, **kw, **rule)
    return MlEatResult(
        level1=l1, x=rx, y=ry, level3=level3(X, Y, A, B),
        pattern=classify_pattern(rx.association, ry.association),
        alpha=float(alpha), effect_threshold=float(effect_threshold), n_samples=int(n_samples),
        seed=int(seed), parametric=bool(parametric), names=tuple(str(n) for n in names), p_method=p_method,
    )

