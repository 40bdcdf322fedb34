"""ML-EAT (Wolfe, Hiniker & Howe 2024): Levels 1-3 and the EAT pattern of every test and level, with
EAT-Maps. Level 1 is the WEAT, stored in ``results`` like a WEAT run (so the reproduction views and
the reports treat both alike); all three levels and the pattern go to ``mleat_results``."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..argtypes import PROBABILITY, between
from ..errors import EatlasError
from ..stats.conventions import DEFAULT as DEFAULT_CONVENTION
from ..stats.mleat import MlEatResult, mleat
from ..stats.sceat import SingleCategoryResult
from .base import STATS_OPTIONS, Matrices, Method, Option, Outcome, Table, register


@dataclass
class MleatRow:
    """A row of ``mleat_results``: eatlas.stats.mleat.MlEatResult.to_dict(); docs/methods.md describes it."""
    x_name: str | None
    y_name: str | None
    a_name: str | None
    b_name: str | None
    n_x: int | None
    n_y: int | None
    n_a: int | None
    n_b: int | None
    pattern: str
    alpha: float | None
    effect_threshold: float | None
    n_samples: int | None
    seed: int | None
    parametric: bool | None
    p_method: str | None
    level1_effect_size: float | None
    level1_p_value: float | None
    level1_statistic: float | None
    level1_exact: bool | None
    level1_n_partitions: int | None
    x_effect_size: float | None
    x_p_value: float | None
    x_p_upper: float | None
    x_p_lower: float | None
    x_statistic: float | None
    x_exact: bool | None
    x_n_partitions: int | None
    x_association: str | None
    y_effect_size: float | None
    y_p_value: float | None
    y_p_upper: float | None
    y_p_lower: float | None
    y_statistic: float | None
    y_exact: bool | None
    y_n_partitions: int | None
    y_association: str | None
    ax_mean: float | None
    ax_std: float | None
    bx_mean: float | None
    bx_std: float | None
    ay_mean: float | None
    ay_std: float | None
    by_mean: float | None
    by_std: float | None


@register
class MlEat(Method):
    name = "mleat"
    help = "ML-EAT levels 1-3, EAT patterns and EAT-Maps (Wolfe et al. 2024)"
    effect_size = True
    stats = STATS_OPTIONS
    options = (
        Option("--mleat-alpha", dict(type=PROBABILITY, default=0.05, help="Level-2 significance of an association")),
        Option("--effect-threshold", dict(type=between(0.0, 100.0), default=0.2,
                                          help="Level-2 |d| of an association")),
        Option("--mleat-p", dict(choices=("permutation", "authors"), default="permutation",
                                 help="p-values: permutation test, or the authors' code (normal fit to the "
                                      "permutation distribution, smaller tail, at every level; docs/methods.md)")),
        Option("--maps", dict(help="draw the EAT-Maps (PNG and SVG per test and level, and a grid) into this folder "
                                   "(default: none drawn)")),
        Option("--no-maps", dict(action="store_true", help="draw no EAT-Map (the default without --maps)")),
    )
    tables = (Table("mleat_results", MleatRow, doc="ML-EAT levels 1-3 and the EAT pattern, per test and level"),)

    def check(self, cfg) -> None:
        p = self.option(cfg, "mleat_p")
        if p not in ("permutation", "authors"):
            raise EatlasError(f"unknown ML-EAT p-value {p!r}", field="--mleat-p", hint="permutation or authors")
        if p == "authors" and cfg.parametric:
            raise EatlasError("--mleat-p authors is its own normal approximation", field="--parametric",
                              hint="leave out --parametric, or use --mleat-p permutation")

    def convention(self, cfg) -> str:
        """Level 1's d is Caliskan et al.'s; its p is the authors' code's with --mleat-p authors
        (eatlas.stats.conventions "mleat")."""
        return "mleat" if self.option(cfg, "mleat_p") == "authors" else DEFAULT_CONVENTION

    def before_run(self, cfg, *, db, registry) -> None:
        if self.option(cfg, "no_maps") or not self.option(cfg, "maps"):
            return
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:      # say so before the work, not after it
            raise EatlasError("EAT-Maps need matplotlib", field="--maps",
                              hint="pip install 'eatlas[plots]', or pass --no-maps")
        if self.option(cfg, "maps"):
            _maps_target(Path(self.option(cfg, "maps")), db, registry).check_all(["grid.png", "grid.svg"])

    def compute(self, m: Matrices, cfg) -> Outcome:
        ml = mleat(m.x, m.y, m.a, m.b, n_samples=cfg.n_samples, seed=cfg.seed, parametric=cfg.parametric,
                   alpha=self.option(cfg, "mleat_alpha"), effect_threshold=self.option(cfg, "effect_threshold"),
                   names=m.names, p_method=self.option(cfg, "mleat_p"), ci=cfg.ci, n_boot=cfg.n_boot,
                   alternative=cfg.alternative, ci_method=cfg.ci_method)
        return Outcome(stats=ml.level1, rows={"mleat_results": [ml.to_dict()]}, detail=ml)

    def summary_columns(self, outcome):
        """The results table's extra columns: Level 2 d of X and Y, and the EAT pattern."""
        def cells(r):
            ml = outcome.details.get((r["test_id"], r["level"]))
            return [f"{ml.x.effect_size:+.2f}, {ml.y.effect_size:+.2f}", ml.pattern] if ml else ["-", "-"]
        return ["Level 2 d (X, Y)", "EAT pattern"], cells

    def after_run(self, outcome, cfg, *, db, registry) -> str | None:
        if self.option(cfg, "no_maps") or not outcome.details:
            return None
        if not self.option(cfg, "maps"):        # files only where the user asked for them
            return "EAT-Maps: none drawn; --maps DIR draws them (PNG and SVG, one per test and a grid)"
        folder = Path(self.option(cfg, "maps"))
        _draw_maps(outcome, folder, Path(db), registry)
        return f"EAT-Maps (PNG and SVG, one per test and a grid) in {folder}"

    def report(self, ctx) -> list[dict]:
        """The report's EAT-Map section: Level 2 of each shown ML-EAT result as a 2x2 map."""
        df = ctx.rows("mleat_results", ("test_id", "level"))
        html = ctx.render(EAT_MAP_HTML, eat_maps=eat_maps(ctx, df) if len(df) else [],
                          has_table="mleat_results" in ctx.tables)
        return [{"id": "eat-map", "title": "ML-EAT: EAT-Map", "nav": "EAT-Map", "html": html, "frames": [df]}]


# EAT pattern -> (association of X, association of Y) with A or B (ML-EAT, Wolfe et al. 2024)
PATTERN_ASSOCIATIONS = {
    "A-Uniform": ("A", "A"), "B-Uniform": ("B", "B"), "AB-Divergent": ("A", "B"), "BA-Divergent": ("B", "A"),
    "AX-Singular": ("A", None), "BX-Singular": ("B", None), "AY-Singular": (None, "A"), "BY-Singular": (None, "B"),
    "Non-Directional": (None, None),
}


def eat_maps(ctx, df) -> list[dict]:
    """One 2x2 map per ML-EAT row: columns X, Y; rows A, B; filled where the pattern says associated."""
    dx, px = ctx.column(df, "x_effect_size"), ctx.column(df, "x_p_value")
    dy, py = ctx.column(df, "y_effect_size"), ctx.column(df, "y_p_value")
    if dx is None or dy is None or "pattern" not in df.columns:
        raise EatlasError("table mleat_results lacks the Level 2 columns",
                          hint="expected x_effect_size, x_p_value, y_effect_size, y_p_value, pattern")
    maps = []
    for i, r in enumerate(df.itertuples()):
        assoc = PATTERN_ASSOCIATIONS.get(r.pattern, (None, None))
        names = _concept_names(ctx.registry, r.test_id)
        cells = []
        for role_i, (d, p) in enumerate(((dx.iat[i], px.iat[i] if px is not None else np.nan),
                                         (dy.iat[i], py.iat[i] if py is not None else np.nan))):
            towards = "A" if d >= 0 else "B"
            for row_i, attr in enumerate("AB"):
                cells.append({"x": role_i, "y": row_i, "associated": assoc[role_i] == attr,
                              "text": [f"d = {d:+.2f}", f"p = {p:.3g}"] if attr == towards else []})
        maps.append({"title": f"{r.test_id} [{r.level}]", "model": r.run_model, "pattern": r.pattern,
                     "run": r.run_id[:8],
                     "names": names, "cells": cells})
    return sorted(maps, key=lambda m: (m["model"], ctx.test_order(ctx.registry, *m["title"][:-1].split(" ["))))


def _concept_names(reg, test_id: str) -> list[str]:
    if reg is not None and test_id in reg.tests:
        names = [reg.get_set(reg.tests[test_id].sets[r]).concept for r in "xyab"]
        return [n if len(n) <= 16 else n[:15] + "…" for n in names]
    return ["X", "Y", "A", "B"]


EAT_MAP_HTML = """\
  {% if eat_maps %}
  <figure id="fig-eat-map">
    <div class="grid">
    {% for m in eat_maps %}
      <figure class="panel">
        <svg class="eatmap" viewBox="0 0 220 180" width="220" height="180" role="img"
             aria-label="EAT-Map {{ m.title }}: {{ m.pattern }}">
          <text class="title" x="110" y="13">{{ m.title }}</text>
          <text x="110" y="27">{{ m.pattern }}</text>
          {% for label in ("X", "Y") %}
          <text class="label" x="{{ 68 + loop.index0 * 76 }}" y="45">{{ label }}</text>
          {% endfor %}
          {% for label in ("A", "B") %}
          <text class="label" x="16" y="{{ 84 + loop.index0 * 62 }}">{{ label }}</text>
          {% endfor %}
          {% for c in m.cells %}
          <rect class="{{ 'cell-assoc' if c.associated else 'cell-none' }}" x="{{ 31 + c.x * 76 }}"
                y="{{ 52 + c.y * 62 }}" width="74" height="60" rx="3"></rect>
          {% for line in c.text %}
          <text class="{{ 'on' if c.associated else '' }}" x="{{ 68 + c.x * 76 }}"
                y="{{ 78 + c.y * 62 + loop.index0 * 14 }}">{{ line }}</text>
          {% endfor %}
          {% endfor %}
        </svg>
        <figcaption>{{ m.model }} · run {{ m.run }} · X {{ m.names[0] }}, Y {{ m.names[1] }}, A {{ m.names[2] }},
          B {{ m.names[3] }}</figcaption>
      </figure>
    {% endfor %}
    </div>
    <figcaption>Level 2 of the ML-EAT (Wolfe et al. 2024): each target alone against A and B. Red: the
      target is associated with that attribute according to the stored EAT pattern; d and p are written
      in the row the effect points to. No Level 2 number is starred: {{ legend }} applies to Level 1
      (the Tests × models figure).</figcaption>
  </figure>
  {% else %}
  <p class="note">No ML-EAT run yet{% if has_table and run_id %} for run {{ run_id }}{% endif %}.</p>
  {% endif %}
"""


def _maps_target(folder: Path, db: Path, registry):
    """Where the EAT-Maps go: eatlas.guard decides (never the database, a registry file or a file
    eatlas did not write)."""
    from ..guard import Outputs
    from ..registry.base import default_root

    return Outputs(folder, db=db, registry_root=registry or default_root(), what="EAT-Map")


def _draw_maps(outcome, folder: Path, db: Path, registry=None) -> Path:
    """One EAT-Map per ML-EAT result (<test>_<level>.png/.svg) and the grid of the run (grid.png/.svg)."""
    target = _maps_target(folder, db, registry)
    done = [(tid, lv, ml) for (tid, lv), ml in outcome.details.items()]
    names = [re.sub(r"[^\w+.-]", "-", f"{tid}_{lv}").strip("-") for tid, lv, _ in done]
    target.check_all([f"{n}{ext}" for n in [*names, "grid"] for ext in (".png", ".svg")])
    folder.mkdir(parents=True, exist_ok=True)
    run = outcome.run
    sub = f"model {run['model']} · run {run['run_id'][:8]}"
    holm = {f"{r['test_id']} [{r['level']}]": r["holm_significant"] for r in outcome.results}
    titled = {}
    for name, (tid, lv, ml) in zip(names, done):
        title = f"{tid} [{lv}]"
        _save_into(target, name, eat_map_figure(ml, title=title, subtitle=sub, holm=holm.get(title),
                                                alpha=run["alpha"]))
        titled[title] = ml
    _save_into(target, "grid", eat_map_grid_figure(titled, subtitle=sub, holm=holm, alpha=run["alpha"]))
    target.save()
    return folder


# ---------------------------------------------------------------------------------------------
# EAT-Map figures (PNG and SVG): the ML-EAT result's Level 2 as four cells

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


def _save_into(target, name: str, fig) -> None:
    """The figure as ``name``.png and .svg in an output folder (eatlas.guard.Outputs: each written to a private
    temporary file and renamed into place, so a hard link there is replaced, never drawn through)."""
    import matplotlib

    target.write(name + ".png", lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight"), save=False,
                 checked=True)
    with matplotlib.rc_context({"svg.fonttype": "none"}):    # text stays text (searchable, editable)
        target.write(name + ".svg", lambda tmp: fig.savefig(tmp, bbox_inches="tight"), save=False, checked=True)


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
