"""EATlas: a curated, versioned registry of Embedding Association Tests, with the papers' methods."""
import sys as _sys

from .errors import EatlasError
from .stats import weat as _weat_module
from .stats.weat import WeatResult, holm, weat

# ``eatlas.weat`` is the function; ``from eatlas.weat import weat, holm`` (the module path of EATlas before
# its subpackages) still finds the statistics module, as it did when that module was eatlas/weat.py.
_sys.modules[f"{__name__}.weat"] = _weat_module

__version__ = "0.1.0"
__all__ = ["EatlasError", "WeatResult", "get_test", "holm", "list_tests", "weat", "__version__"]


def __getattr__(name: str):
    # the registry (YAML, Jinja) is loaded when first asked for, not by `import eatlas` (`eatlas --help`)
    if name in ("get_test", "list_tests"):
        from .registry import stimuli
        return getattr(stimuli, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
