"""EATlas: a curated, versioned registry of Embedding Association Tests, with the papers' methods."""
from .errors import EatlasError
from .stimuli import get_test, list_tests
from .weat import WeatResult, holm, weat

__version__ = "0.1.0"
__all__ = ["EatlasError", "WeatResult", "get_test", "holm", "list_tests", "weat", "__version__"]
