"""Where EATlas's data folders are: catalog.yaml, registry/, templates/, schemas/, loaders/.

In a source checkout (and an editable install) they sit at the top of the tree, beside the package.
A wheel carries them inside the package as ``eatlas/_data/`` (pyproject.toml maps them there at
build time). Every module that reads one of these folders asks this module, which looks them up
with :mod:`importlib.resources`, so an installed EATlas runs from any folder. A lab's own registry
is still chosen with ``--registry DIR`` or ``EATLAS_REGISTRY`` (see :func:`eatlas.registry.default_root`).
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .errors import EatlasError

BUNDLE = "_data"     # the folder inside the installed package that holds the data folders


def _package_dir() -> Path:
    top = resources.files("eatlas")
    if not isinstance(top, Path):       # a zip import: the registry is read as plain files
        raise EatlasError(f"eatlas is imported from {top}, not from a folder",
                          hint="install the wheel with pip (it unpacks it) instead of importing it from a zip")
    return top


def data_root() -> Path:
    """The folder that holds catalog.yaml, registry/, templates/, schemas/ and loaders/."""
    pkg = _package_dir()
    bundled = pkg / BUNDLE
    if (bundled / "catalog.yaml").is_file():
        return bundled
    return pkg.resolve().parent        # a source checkout: the folders beside the package


def schema_file() -> Path:
    return data_root() / "schemas" / "stimuli.yaml"


def loaders_dir() -> Path:
    return data_root() / "loaders"


def cache_dir() -> Path:
    """Where EATlas keeps what it computed, ``$EATLAS_CACHE`` (default ``~/.cache/eatlas``): the embedding
    cache (eatlas.encoders.cache) and, in its folder ``registry/``, the parsed registry (eatlas.registry.cache)."""
    env = os.environ.get("EATLAS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "eatlas"


def package_file(name: str) -> Path:
    """A file inside the package itself (e.g. the report's Jinja template)."""
    return _package_dir() / name


def refuse_bundled(root: Path) -> None:
    """Refuse to change the registry inside an installed package (an upgrade would silently drop the change)."""
    bundled = _package_dir() / BUNDLE
    if bundled.is_dir() and Path(root).resolve() == bundled.resolve():
        raise EatlasError("this is the registry installed with the package; a change here would be lost on the "
                          "next upgrade", file=str(root),
                          hint="copy the folder to one of your own and pass --registry DIR (or set EATLAS_REGISTRY)")
