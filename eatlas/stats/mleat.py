"""ML-EAT: the Multilevel Embedding Association Test (Wolfe, Hiniker and Howe 2024).

Level 1 is the WEAT (``eatlas.weat.weat``, eq. 1-4). Level 2 tests each target group T alone
against A and B (eq. 5-8)::

    u(T, x) = mean_{t in T} cos(t, x)
    d_{A,B,T} = (mean_{a in A} u(T, a) - mean_{b in B} u(T, b)) / std_{x in A u B} u(T, x)

(std with ddof=1), with a permutation test that re-partitions the *attribute* words A u B (eq. 7);
the computation is ``eatlas.sceat.single_category_test`` so Level 2 with one target word is the
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

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

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

__all__ = [
    "PATTERNS", "Level3Result", "MlEatResult", "classify_pattern", "level2", "level3", "mleat",
    "draw_eat_map", "draw_eat_map_grid",
]

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
          ci_method: str = "percentile") -> MlEatResult:
    """All three ML-EAT levels and the EAT pattern for embedding matrices (one row per stimulus).

    ``n_samples``/``seed``/``parametric`` are passed to every permutation test (Level 1 permutes
    targets, Level 2 attributes); ``alpha`` and ``effect_threshold`` set the association rule.
    ``p_method``: "permutation" (default) or "authors" (the authors' normal fit, smaller tail).
    ``ci``, ``n_boot`` and ``alternative`` apply to Level 1 (the WEAT, :func:`eatlas.weat.weat`);
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
        l1 = replace(l1, p_value=authors_normal_p(dist))
    rule = dict(alpha=alpha, effect_threshold=effect_threshold, p_method=p_method)
    rx, ry = level2(X, A, B, **kw, **rule), level2(Y, A, B, **kw, **rule)
    return MlEatResult(
        level1=l1, x=rx, y=ry, level3=level3(X, Y, A, B),
        pattern=classify_pattern(rx.association, ry.association),
        alpha=float(alpha), effect_threshold=float(effect_threshold), n_samples=int(n_samples),
        seed=int(seed), parametric=bool(parametric), names=tuple(str(n) for n in names), p_method=p_method,
    )


# ---------------------------------------------------------------------------------------------
# EAT-Map

_GRAY = (0.86, 0.86, 0.86)
_RED = (0.80, 0.12, 0.12)


def _cell_colour(r: SingleCategoryResult, row: str):
    """Red (opacity grows with |d| from the threshold up to 2) where r is associated with row."""
    if r.association != row:
        return _GRAY + (1.0,)
    strength = min(1.0, max(0.0, (abs(r.effect_size) - r.effect_threshold) / (2.0 - r.effect_threshold)))
    return _RED + (0.45 + 0.55 * strength,)


def _draw_map(ax, result: MlEatResult, title: str | None = None, fontsize: float = 10,
              holm: bool | None = None) -> None:
    from matplotlib.patches import Rectangle

    from ..legend import mark, wrap

    ax.set_xlim(0, 2)
    ax.set_ylim(0, 2)
    ax.set_aspect("equal")
    for col, r in enumerate((result.x, result.y)):
        towards = "A" if r.effect_size >= 0 else "B"
        for row_i, row in enumerate(("A", "B")):
            y0 = 1 - row_i          # A on top
            ax.add_patch(Rectangle((col, y0), 1, 1, facecolor=_cell_colour(r, row), edgecolor="white", lw=2))
            if row == towards:
                text = f"d = {r.effect_size:+.2f}\np = {r.p_value:.3g}"
                ax.text(col + 0.5, y0 + 0.5, text, ha="center", va="center", fontsize=fontsize,
                        color="white" if r.association == row else "black")
    ax.set_xticks([0.5, 1.5], [wrap(result.names[0]), wrap(result.names[1])], fontsize=fontsize)
    ax.set_yticks([1.5, 0.5], [wrap(result.names[2]), wrap(result.names[3])], fontsize=fontsize)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    l1 = result.level1
    head = f"{title}\n" if title else ""
    n_lines = max(len(wrap(n).splitlines()) for n in result.names[:2])
    ax.set_title(f"{head}{result.pattern}\nLevel 1 d = {l1.effect_size:+.2f}{mark(holm)}",
                 fontsize=fontsize + 1, pad=fontsize * (1.2 + 1.3 * n_lines))


def _outputs(path) -> tuple[Path, Path]:
    p = Path(path)
    if p.suffix.lower() in (".png", ".svg"):
        p = p.with_suffix("")
    p.parent.mkdir(parents=True, exist_ok=True)
    return p.with_name(p.name + ".png"), p.with_name(p.name + ".svg")


def _save(fig, path) -> tuple[Path, Path]:
    import matplotlib

    png, svg = _outputs(path)
    fig.savefig(png, dpi=150, bbox_inches="tight")
    with matplotlib.rc_context({"svg.fonttype": "none"}):    # text stays text (searchable, editable)
        fig.savefig(svg, bbox_inches="tight")
    return png, svg


def _figure(nrows: int = 1, ncols: int = 1, **kw):
    """A figure on the Agg canvas (no pyplot, so no global backend state is touched)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=kw.pop("figsize", None))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, **kw)


_NOTE = ("Level 2: red, associated (p < {a:g} and |d| > {t:g}); gray, not; d and p in the row the effect points "
         "to.\n{legend}.")


def _note(result, alpha, subtitle) -> str:
    from ..legend import legend
    head = f"{subtitle}\n" if subtitle else ""
    return head + _NOTE.format(a=result.alpha, t=result.effect_threshold, legend=legend(alpha))


def draw_eat_map(result: MlEatResult, path, *, title: str | None = None, subtitle: str | None = None,
                 holm: bool | None = None, alpha: float | None = None) -> tuple[Path, Path]:
    """Write the four-cell EAT-Map (columns X, Y; rows A, B) as ``<path>.png`` and ``<path>.svg``.
    ``subtitle``: the model and run; ``holm``: whether Level 1 is Holm-significant at the run's ``alpha``."""
    return _save(eat_map_figure(result, title=title, subtitle=subtitle, holm=holm, alpha=alpha), path)


def eat_map_figure(result: MlEatResult, *, title: str | None = None, subtitle: str | None = None,
                   holm: bool | None = None, alpha: float | None = None):
    """The figure draw_eat_map saves."""
    fig, ax = _figure(figsize=(3.8, 4.4))
    _draw_map(ax, result, title, holm=holm)
    fig.text(0.5, 0.0, _note(result, alpha, subtitle), ha="center", va="top", fontsize=6, wrap=True)
    return fig


def draw_eat_map_grid(results, path, *, ncols: int | None = None, subtitle: str | None = None,
                      holm: dict | None = None, alpha: float | None = None) -> tuple[Path, Path]:
    """Write EAT-Maps of a run side by side; ``results`` is a mapping title -> result or a sequence;
    ``holm``: title -> Level 1 Holm-significant."""
    return _save(eat_map_grid_figure(results, ncols=ncols, subtitle=subtitle, holm=holm, alpha=alpha), path)


def eat_map_grid_figure(results, *, ncols: int | None = None, subtitle: str | None = None, holm: dict | None = None,
                        alpha: float | None = None):
    """The figure draw_eat_map_grid saves."""
    items = list(results.items()) if isinstance(results, Mapping) else [(None, r) for r in results]
    if not items:
        raise ValueError("no results to draw")
    n = len(items)
    ncols = ncols or min(4, n)
    nrows = -(-n // ncols)
    fig, axes = _figure(nrows, ncols, figsize=(3.6 * ncols, 4.3 * nrows), squeeze=False)
    for ax, (title, r) in zip(axes.flat, items):
        _draw_map(ax, r, title, fontsize=8, holm=(holm or {}).get(title))
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    r0 = items[0][1]
    fig.text(0.5, 0.0, _note(r0, alpha, subtitle), ha="center", va="top", fontsize=7)
    fig.tight_layout()
    return fig
