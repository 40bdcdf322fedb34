"""The methods a run can use, one plug-in module each (see ``eatlas.methods.base``).

Every module of this package is imported once and registers its method; so do the entry points of
group ``eatlas.methods`` of installed packages (a lab's own method, installed beside EATlas). A new
method is one new file here: the CLI, the store and the report find it.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil

from ..errors import EatlasError
from .base import _REGISTRY, Matrices, Method, MethodRun, Option, Outcome, Table, register

__all__ = ["Method", "MethodRun", "Matrices", "Option", "Outcome", "Table", "register", "get", "all_methods",
           "names", "all_tables", "rows_checked_at_write"]

ORDER = ("weat", "mleat", "sceat", "same", "ceat", "ibd")    # how --help lists the built-in ones
_loaded = False


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in pkgutil.iter_modules(__path__):
        if mod.name != "base":
            importlib.import_module(f"{__name__}.{mod.name}")
    for ep in importlib.metadata.entry_points(group="eatlas.methods"):
        ep.load()


def all_methods() -> dict[str, Method]:
    _load()
    rank = {n: i for i, n in enumerate(ORDER)}
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


CHECK_ROWS_ENV = "EATLAS_CHECK_ROWS"


def rows_checked_at_write(name: str | None) -> bool:
    """Whether a run of method ``name`` has its rows checked (eatlas.store.checks, the rules ``results import``
    applies) before it is written: yes for a plug-in from another package, or a method not installed, whose rows,
    like an import's, come from code EATlas does not ship; for this package's own methods only where
    ``EATLAS_CHECK_ROWS=1`` asks for it, as the test suite does (tests/conftest.py), so that every run the tests
    make is checked by the same rules while a user's warm run imports neither pandas nor pandera."""
    import os

    if os.environ.get(CHECK_ROWS_ENV) == "1":
        return True
    m = all_methods().get(name or "")
    return m is None or not type(m).__module__.startswith(__name__ + ".")


def names() -> list[str]:
    return list(all_methods())


def get(name: str) -> Method:
    methods = all_methods()
    if name not in methods:
        raise unknown_method(name)
    return methods[name]


def unknown_method(name: str) -> EatlasError:
    return EatlasError(f"unknown method {name!r}", field="--method", hint=f"one of {', '.join(names())}")


def all_tables() -> list:
    """Every method's own tables (eatlas.methods.base.Table), each once."""
    seen = {}
    for m in all_methods().values():
        for t in m.tables:
            seen.setdefault(t.name, t)
    return list(seen.values())
