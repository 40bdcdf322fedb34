"""The run path: registry -> tests expanded at each level -> every text encoded once -> the method -> one
run record -> the store (``runner``), and a sweep of one configuration over many models, here or on Ray
(``sweep``)."""
import sys as _sys
import types as _types

from .runner import Phase, RunConfig, RunOutcome, check_config, default_tests, evaluate, package_versions, run

__all__ = ["Phase", "RunConfig", "RunOutcome", "check_config", "default_tests", "evaluate", "package_versions", "run"]


class _CallableModule(_types.ModuleType):
    """``eatlas.run`` is this package and the library's run at once: calling it runs a model (eatlas.api.run),
    its attributes are the run path's modules (eatlas.run.runner, eatlas.run.sweep)."""

    def __call__(self, *args, **kwargs):
        from ..api import run
        return run(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
