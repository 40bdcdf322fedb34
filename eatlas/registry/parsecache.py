"""YAML documents parsed once per content: the parse of a registry file's bytes, kept by the hash of those bytes.

``eatlas validate`` parses every file of the registry (4,800 of them) on every call, trusting no cache for its
verdict. A parse is a function of the bytes alone, so it is kept under their hash (BLAKE2b, 160 bits): an edited
file has other bytes, hence another key, and is parsed afresh, and nothing stale can answer for it. Only a parse
that succeeded and reads back equal (:func:`eatlas.registry.cache.to_json`, which tags dates, sets, ...) is kept;
a file that fails to parse is parsed (and reported) every time. Every check after the parse runs on every call.

One file, ``$EATLAS_CACHE/yaml-parse/<format>.jsonl``, holds one line per document (``<hash>\\t<JSON>``), new
lines appended at the end of the process that parsed them; a line that does not read back is skipped. The file
is started afresh past MAX_BYTES. ``EATLAS_REGISTRY_CACHE=0`` switches it off, as the registry cache.
"""
from __future__ import annotations

import atexit
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

# The parse depends on PyYAML (its version and whether libyaml does the reading) and on EATlas's own building of
# the document (eatlas.registry.base.parse_yaml): all in the file's name.
FORMAT = 1
MAX_BYTES = 64 << 20

_mem: dict[str, str] | None = None
_new: dict[str, str] = {}
_registered = False


def enabled() -> bool:
    return os.environ.get("EATLAS_REGISTRY_CACHE", "1") not in ("0", "false", "no", "")


def path() -> Path:
    from .. import __version__
    from ..paths import cache_dir

    c = "c" if hasattr(yaml, "CSafeLoader") else "py"
    return cache_dir() / "yaml-parse" / f"{FORMAT}-eatlas{__version__}-pyyaml{yaml.__version__}{c}.jsonl"


def _load() -> dict[str, str]:
    global _mem
    if _mem is None:
        _mem = {}
        try:
            p = path()
            if p.is_file() and p.stat().st_size <= MAX_BYTES:
                with p.open(encoding="utf-8", errors="replace") as f:
                    for line in f:
                        key, tab, doc = line.rstrip("\n").partition("\t")
                        if tab and len(key) == 40:
                            _mem[key] = doc
        except OSError:
            pass
    return _mem


def _save() -> None:
    """Append this process's new parses (one write; a line cut short by a crash is skipped when read)."""
    if not _new:
        return
    try:
        p = path()
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_file() and p.stat().st_size > MAX_BYTES:
            p.unlink()
        text = "".join(f"{k}\t{v}\n" for k, v in _new.items())
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        _new.clear()
    except OSError:
        pass                # a read-only or full cache: parses are simply not kept


def parsed(raw: bytes, parse: Callable[[], Any]) -> Any:
    """``parse()``'s document for the file whose bytes are ``raw``: read back from the cache where the same bytes
    were parsed before, else parsed and kept."""
    from .cache import from_json, to_json

    if not enabled():
        return parse()
    import json

    key = hashlib.blake2b(raw, digest_size=20).hexdigest()
    mem = _load()
    hit = mem.get(key)
    if hit is not None:
        try:
            return from_json(hit)
        except (ValueError, TypeError, KeyError):
            del mem[key]
    doc = parse()
    try:
        line = json.dumps(to_json(doc), ensure_ascii=False, separators=(",", ":"))
        if "\n" not in line and from_json(line) == doc:
            mem[key] = _new[key] = line
            global _registered
            if not _registered:
                atexit.register(_save)
                _registered = True
    except (TypeError, ValueError, KeyError):
        pass
    return doc


def clear() -> int:
    """Remove the kept parses (only the files this module writes, by their names); returns how many."""
    import re

    global _mem
    _mem = None
    _new.clear()
    folder = path().parent
    n = 0
    for p in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        if re.fullmatch(r"\d+-eatlas.+-pyyaml.+\.jsonl", p.name) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            n += 1
    try:
        folder.rmdir()
    except OSError:
        pass            # absent, or something else is in it: kept
    return n
