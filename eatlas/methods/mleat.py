"""ML-EAT (Wolfe, Hiniker & Howe 2024): Levels 1-3 and the EAT pattern of every test and level, with
EAT-Maps. Level 1 is the WEAT, stored in ``results`` like a WEAT run (so the reproduction views and
the reports treat both alike); all three levels and the pattern go to ``mleat_results``."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..argtypes import PROBABILITY, between
from ..errors import EatlasError
from ..mleat import mleat
from .base import STATS_OPTIONS, Matrices, Method, Option, Outcome, Table, register


@dataclass
class MleatRow:
    """A row of ``mleat_results``: eatlas.mleat.MlEatResult.to_dict(); docs/methods.md describes it."""
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
        Option("--maps", dict(help="folder for the EAT-Maps (default: eat-maps/<run id> beside the database)")),
        Option("--no-maps", dict(action="store_true", help="draw no EAT-Map")),
    )
    tables = (Table("mleat_results", MleatRow, doc="ML-EAT levels 1-3 and the EAT pattern, per test and level"),)

    def check(self, cfg) -> None:
        p = self.option(cfg, "mleat_p")
        if p not in ("permutation", "authors"):
            raise EatlasError(f"unknown ML-EAT p-value {p!r}", field="--mleat-p", hint="permutation or authors")
        if p == "authors" and cfg.parametric:
            raise EatlasError("--mleat-p authors is its own normal approximation", field="--parametric",
                              hint="leave out --parametric, or use --mleat-p permutation")

    def before_run(self, cfg, *, db, registry) -> None:
        if self.option(cfg, "no_maps"):
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
        folder = Path(self.option(cfg, "maps") or Path(db).parent / "eat-maps" / outcome.run["run_id"][:8])
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
    """Where the EAT-Maps go: eatlas.outputs decides (never the database, a registry file or a file
    eatlas did not write)."""
    from ..outputs import Outputs
    from ..registry import default_root

    return Outputs(folder, db=db, registry_root=registry or default_root(), what="EAT-Map")


def _draw_maps(outcome, folder: Path, db: Path, registry=None) -> Path:
    """One EAT-Map per ML-EAT result (<test>_<level>.png/.svg) and the grid of the run (grid.png/.svg)."""
    from ..mleat import draw_eat_map, draw_eat_map_grid

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
        draw_eat_map(ml, folder / name, title=title, subtitle=sub, holm=holm.get(title), alpha=run["alpha"])
        titled[title] = ml
    draw_eat_map_grid(titled, folder / "grid", subtitle=sub, holm=holm, alpha=run["alpha"])
    for n in [*names, "grid"]:
        for ext in (".png", ".svg"):
            target.record(n + ext, save=False)
    target.save()
    return folder
