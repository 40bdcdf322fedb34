"""WEAT/SEAT (Caliskan et al. 2017; May et al. 2019): the effect size d of a test's X, Y, A, B, its
permutation test (exact or sampled, ``--alternative``) and its stimulus-bootstrap CI (eatlas.stats.weat)."""
from __future__ import annotations

from ..stats.weat import weat
from .base import STATS_OPTIONS, Matrices, Method, Outcome, register


@register
class Weat(Method):
    name = "weat"
    help = "WEAT/SEAT: effect size d, permutation test, bootstrap CI (Caliskan et al. 2017; May et al. 2019)"
    effect_size = True
    stats = STATS_OPTIONS

    def compute(self, m: Matrices, cfg) -> Outcome:
        return Outcome(stats=weat(m.x, m.y, m.a, m.b, n_samples=cfg.n_samples, seed=cfg.seed,
                                  parametric=cfg.parametric, ci=cfg.ci, n_boot=cfg.n_boot,
                                  alternative=cfg.alternative, ci_method=cfg.ci_method))
