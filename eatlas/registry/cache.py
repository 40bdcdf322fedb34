"""The parsed registry and its validation, kept between runs, so a re-run does not parse and check
thousands of YAML files again.

The key is the content of every file the registry reads (the path and bytes of ``catalog.yaml`` and
of everything under ``registry/``, ``templates/``, ``schemas/`` and ``loaders/``, hashed), the folder, the EATlas
version and Python's: any edit, added or removed file gives a new key, and the registry is parsed
afresh. (Reading and hashing the files takes a tenth of the time parsing them does; sizes and
modification times alone would miss an edit of the same length within one clock tick.)
Only what loaded without error is kept, and a test list
is marked valid only after ``validate``'s checks passed on it; what ``validate`` found for the whole
registry (its errors and warnings) is kept too, for ``eatlas add``. The entries live beside the embedding
cache (``$EATLAS_CACHE/registry/``, removed by ``eatlas cache clear``); ``EATLAS_REGISTRY_CACHE=0``
switches them off. They are pickles: the cache folder is the user's own, as for the vectors.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

from ..files import write_atomic

FOLDERS = ("registry", "templates", "schemas", "loaders")
# Bumped when what a parsed registry holds changes within one EATlas version (2: TestSpec.methods), so that
# an entry pickled by the code before is not taken for one of today's.
FORMAT = 2


def enabled() -> bool:
    return os.environ.get("EATLAS_REGISTRY_CACHE", "1") not in ("0", "false", "no", "")


def folder() -> Path:
    from ..paths import cache_dir
    return cache_dir() / "registry"


def state(root: Path) -> str:
    """A digest of the registry folder's files as they are now (path and content)."""
    from .. import __version__

    h = hashlib.blake2b(f"{root}\0{__version__}\0{FORMAT}\0{sys.version}".encode())
    paths = [root / "catalog.yaml"]
    for name in FOLDERS:
        for base, dirs, files in os.walk(root / name):
            dirs.sort()
            paths += [Path(base) / f for f in sorted(files)]
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError as e:            # unreadable (or gone): a state of its own, never that of no such file
            h.update(f"{p.relative_to(root)}\0unreadable {e.errno}\0".encode())
            continue
        h.update(f"{p.relative_to(root)}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:32]


def _write(path: Path, data: bytes) -> None:
    """Best effort: a cache that cannot be written is no cache, never an error. Private (0o600 whatever the
    umask, eatlas.files): a pickle runs code when loaded, and no one else needs this one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda tmp: tmp.write_bytes(data), prefix=".tmp-", suffix="", private=True)
    except OSError:
        pass


def load(root: Path, build):
    """The registry of ``root``: from the cache when its files are as they were, else ``build()`` (kept)."""
    if not enabled():
        return build()
    key = state(root)
    path = folder() / f"{key}.pickle"
    try:
        with open(path, "rb") as f:
            reg = pickle.load(f)
        reg._state = key
        return reg
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        pass
    reg = build()
    reg._state = key
    try:
        data = pickle.dumps(reg, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return reg
    _write(path, data)
    return reg


def keep(key: str | None, reg) -> None:
    """Keep ``reg`` as the parsed registry of the state ``key`` (``eatlas add``: the registry it checked, with
    the entry it wrote, is the registry of the files it leaves)."""
    if not key or not enabled():
        return
    import copy

    reg = copy.copy(reg)
    for scratch in ("_validation_expansions", "_state"):        # what checking it left on it
        reg.__dict__.pop(scratch, None)
    try:
        data = pickle.dumps(reg, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    _write(folder() / f"{key}.pickle", data)


def _valid_marker(reg, test_ids: list[str]) -> Path | None:
    key = getattr(reg, "_state", None)
    if not key or not enabled():
        return None
    tests = hashlib.sha256("\0".join(sorted(test_ids)).encode()).hexdigest()[:16]
    return folder() / f"{key}.valid-{tests}"


def known_valid(reg, test_ids: list[str]) -> bool:
    m = _valid_marker(reg, test_ids)
    return m is not None and m.is_file()


def mark_valid(reg, test_ids: list[str]) -> None:
    m = _valid_marker(reg, test_ids)
    if m is not None:
        _write(m, b"")


# ------------------------------------------------------------------ validate's outcome, per registry state
# What 'eatlas validate' (or an 'eatlas add' that checked the registry whole) found for the files as they
# are: its errors and warnings (eatlas.registry.checks.problem_rows), kept under the state's key. 'eatlas add' then
# checks only the new entry and what it touches, and takes the rest from here.
def _outcome_path(key: str | None) -> Path | None:
    if not key or not enabled():
        return None
    return folder() / f"{key}.validate.json"


def validation(key: str | None) -> list[dict] | None:
    """validate's problems recorded for this state, as rows; None if none are."""
    import json

    path = _outcome_path(key)
    if path is None:
        return None
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rows if isinstance(rows, list) and all(isinstance(r, dict) for r in rows) else None


def record_validation(key: str | None, rows: list[dict]) -> None:
    """Keep validate's problems (as rows) for this state (best effort, like the rest of the cache)."""
    import json

    path = _outcome_path(key)
    if path is not None:
        _write(path, json.dumps(rows, ensure_ascii=False).encode("utf-8"))
