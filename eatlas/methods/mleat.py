"""ML-EAT (Wolfe, Hiniker & Howe 2024): Levels 1-3 and the EAT pattern of every test and level, with
EAT-Maps. Level 1 is the WEAT, stored in ``results`` like a WEAT run (so the reproduction views and
the reports treat both alike); all three levels and the pattern go to ``mleat_results``."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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
                                 help="p-values: permutation test (default), or the authors' code (normal fit to the "
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
                   alternative=cfg.alternative)
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

    def report(self, con, run_ids, reg) -> list[dict]:
        return []       # the report's eat-map section reads mleat_results itself (eatlas.report)


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
