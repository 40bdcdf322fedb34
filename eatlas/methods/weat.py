"""WEAT/SEAT (Caliskan et al. 2017; May et al. 2019): the effect size d of a test's X, Y, A, B, its
permutation test (exact or sampled, ``--alternative``) and its stimulus-bootstrap CI (eatlas.stats.weat);
``--convention`` computes d and p as another code base does (eatlas.stats.conventions)."""
from __future__ import annotations

from ..errors import EatlasError
from ..stats import conventions
from ..stats.weat import weat
from .base import STATS_OPTIONS, Matrices, Method, Option, Outcome, register


@register
class Weat(Method):
    name = "weat"
    help = "WEAT/SEAT: effect size d, permutation test, bootstrap CI (Caliskan et al. 2017; May et al. 2019)"
    effect_size = True
    stats = STATS_OPTIONS
    options = (Option("--convention", {"choices": conventions.NAMES, "default": conventions.DEFAULT,
                                       "help": "whose effect size and p-value: caliskan (Caliskan et al., "
                                               "sent-bias), weathub (p counts only larger statistics), mleat (the "
                                               "ML-EAT code's normal-fit p), wefe (population standard deviation; "
                                               "p from resampling X u Y with replacement, seeded); docs/methods.md, "
                                               "'Conventions'"}),)

    def convention(self, cfg) -> str:
        return self.option(cfg, "convention")

    def check(self, cfg) -> None:
        name = self.option(cfg, "convention")
        try:
            conventions.check(name, alternative=cfg.alternative, parametric=cfg.parametric)
        except ValueError as e:
            flag = "--parametric" if cfg.parametric else "--alternative"
            raise EatlasError(str(e), field="--convention", hint=f"leave {flag} out, or use --convention "
                                                                 f"{conventions.DEFAULT}") from None

    paired_forms = True     # a gendered language's test (forms:): Lewis & Lupyan's measure, eatlas.stats.forms

    def compute(self, m: Matrices, cfg) -> Outcome:
        if m.forms:
            return self._forms(m, cfg)
        return Outcome(stats=weat(m.x, m.y, m.a, m.b, n_samples=cfg.n_samples, seed=cfg.seed,
                                  parametric=cfg.parametric, ci=cfg.ci, n_boot=cfg.n_boot,
                                  alternative=cfg.alternative, ci_method=cfg.ci_method,
                                  convention=self.convention(cfg), words=m.words))

    def _forms(self, m: Matrices, cfg) -> Outcome:
        from ..stats.forms import weat_forms
        if self.convention(cfg) != conventions.DEFAULT:
            return Outcome(not_run=f"--convention {self.convention(cfg)}: a test of paired forms (forms:) has Lewis "
                                   f"& Lupyan's d only (--convention {conventions.DEFAULT})")
        if cfg.ci is not None and cfg.ci_method != "concepts":
            return Outcome(not_run=f"--ci-method {cfg.ci_method}: a test of paired forms (forms:) has the concepts' "
                                   "interval only (--ci-method concepts)")
        return Outcome(stats=weat_forms(m.x, m.y, m.a, m.b, m.forms["a"], m.forms["b"], n_samples=cfg.n_samples,
                                        seed=cfg.seed, parametric=cfg.parametric, ci=cfg.ci,
                                        alternative=cfg.alternative))
