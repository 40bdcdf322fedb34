"""YAML documents parsed once per content: the parse of a registry file's bytes, kept by the hash of those bytes.

``eatlas validate`` parses every file of the registry (4,800 of them) on every call, trusting no cache for its
verdict. A parse is a function of the bytes alone, so it is kept under their hash (BLAKE2b, 160 bits): an edited
file has other bytes, hence another key, and is parsed afresh, and nothing stale can answer for it. Only a parse
that succeeded and reads back equal (:func:`eatlas.registry.cache.to_json`, which tags dates, sets, ...) is kept;
a file that fails to parse is parsed (and reported) every time. Every check after the parse runs on every call.

One file, ``$EATLAS_CACHE/yaml-parse/<format>.jsonl``, holds one line per document (``<hash>\\t<seal>\\t<JSON>``),
new lines appended at the end of the process that parsed them; a line that does not read back is skipped. The file
is started afresh past MAX_BYTES. ``EATLAS_REGISTRY_CACHE=0`` switches it off, as the registry cache.

A parse decides the words a run uses, so the file is trusted as the parsed registry is (:mod:`eatlas.trust`): it
is read only from a folder of the user's own that no one else can write, only when the file itself is the user's
and writable by no one else, and a line is used only when its seal (keyed by the user's private key, over the
hash and the document) checks; anything else is parsed afresh.
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
FORMAT = 2          # 2: each line sealed (eatlas.trust)
MAX_BYTES = 64 << 20

_mem: dict[str, tuple[str, str]] | None = None
_new: dict[str, tuple[str, str]] = {}
_registered = False
# The first DIRECT files of a process are parsed directly: the cache file holds every file of the registry (a few
# MB, read whole), worth reading for validate's 4,800 parses, not for the few files a warm run reads. A file of
# DIRECT_MAX_BYTES or more is always looked up: catalog.yaml (1.2 MB) takes 0.4 s to parse, 34 ms from the cache.
DIRECT = 64
DIRECT_MAX_BYTES = 256 << 10
_direct = 0


def enabled() -> bool:
    return os.environ.get("EATLAS_REGISTRY_CACHE", "1") not in ("0", "false", "no", "")


def path() -> Path:
    from .. import __version__
    from ..paths import cache_dir

    c = "c" if hasattr(yaml, "CSafeLoader") else "py"
    return cache_dir() / "yaml-parse" / f"{FORMAT}-eatlas{__version__}-pyyaml{yaml.__version__}{c}.jsonl"


def _usable() -> bool:
    """The cache folder is the user's own, writable by no one else, and a sealing key is kept."""
    from .. import trust
    d = path().parent
    why = trust.folder_problem(d)
    if why is not None:
        trust.warn_once(d, why, "the YAML parse cache")
        return False
    return trust.secret() is not None


def _load() -> dict[str, tuple[str, str]]:
    """hash -> (seal, document) of the lines of the cache file (empty when the file or its folder is not trusted)."""
    global _mem
    if _mem is None:
        _mem = {}
        from .. import trust
        if not _usable():
            return _mem
        data = trust.read_own(path())
        if data is None or len(data) > MAX_BYTES:
            return _mem
        for line in data.decode("utf-8", errors="replace").split("\n"):
            key, tab, rest = line.partition("\t")
            mac, tab2, doc = rest.partition("\t")
            if tab and tab2 and len(key) == 40:
                _mem[key] = (mac, doc)
    return _mem


def _save() -> None:
    """Append this process's new parses (one write; a line cut short by a crash is skipped when read)."""
    if not _new:
        return
    from .. import trust
    try:
        p = path()
        trust.make_private_folder(p.parent)
        if not _usable():
            return
        if p.is_file() and p.stat().st_size > MAX_BYTES:
            p.unlink()
        text = "".join(f"{k}\t{mac}\t{v}\n" for k, (mac, v) in _new.items())
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.fchmod(fd, os.fstat(fd).st_mode & 0o755)      # whatever the umask: writable by no one else
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

    from .. import trust

    global _direct
    if _mem is None and _direct < DIRECT and len(raw) < DIRECT_MAX_BYTES:     # a run's few files: parsed directly
        _direct += 1
        return parse()
    key = hashlib.blake2b(raw, digest_size=20).hexdigest()
    mem = _load()
    hit = mem.get(key)
    if hit is not None:
        try:
            if trust.sealed(hit[0], "yaml-parse", key, hit[1]):
                return from_json(hit[1])
        except (ValueError, TypeError, KeyError):
            pass
        del mem[key]
    doc = parse()
    try:
        line = json.dumps(to_json(doc), ensure_ascii=False, separators=(",", ":"))
        mac = trust.seal("yaml-parse", key, line)
        if "\n" not in line and mac is not None and from_json(line) == doc:
            mem[key] = _new[key] = (mac, line)
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
