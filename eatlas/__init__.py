"""EATlas: a curated, versioned registry of Embedding Association Tests, with the papers' methods.

As a library (eatlas.api): ``eatlas.run(model, tests, levels, method, **options)`` makes the run ``eatlas run``
makes, on a registered id or a model held in memory, and returns :class:`Results`; ``tests``, ``sets``,
``published``, ``connect`` and ``results`` give the registry and the store as DataFrames. Every name but the
statistics is imported when first used, so that ``import eatlas`` stays fast.
"""
from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING, Any

from .errors import EatlasError
from .stats import weat as _weat_module
from .stats.weat import WeatResult, holm, weat

if TYPE_CHECKING:
    from .api import Results, connect, measurement_path, published, results, sets, tests
    from .api import run as run
    from .registry.stimuli import get_test, list_tests

# ``eatlas.weat`` is the function; ``from eatlas.weat import weat, holm`` (the module path of EATlas before
# its subpackages) still finds the statistics module, as it did when that module was eatlas/weat.py.
_sys.modules[f"{__name__}.weat"] = _weat_module

__version__ = "0.1.0"
__all__ = ["EatlasError", "Results", "WeatResult", "connect", "get_test", "holm", "list_tests", "measurement_path",
           "published", "results", "run", "sets", "tests", "weat", "__version__"]

_API = ("Results", "connect", "measurement_path", "published", "results", "sets", "tests")


def __getattr__(name: str) -> Any:
    # the registry (YAML, Jinja) and the library are loaded when first asked for, not by `import eatlas`
    if name in ("get_test", "list_tests"):
        from .registry import stimuli
        return getattr(stimuli, name)
    if name in _API:
        from . import api
        return getattr(api, name)
    if name == "run":
        # the package eatlas.run (the run path) is callable: eatlas.run(model, ...) is eatlas.api.run
        import importlib
        return importlib.import_module(f"{__name__}.run")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
