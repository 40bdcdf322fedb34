"""The parsed registry and its validation, kept between runs, so a re-run does not parse and check
thousands of YAML files again.

The key is the content of every file the registry reads (the path and bytes of ``catalog.yaml`` and
of everything under ``registry/``, ``templates/``, ``schemas/`` and ``loaders/``, hashed), the folder, the EATlas
version and Python's: any edit, added or removed file gives a new key, and the registry is parsed
afresh. (Reading and hashing the files takes a tenth of the time parsing them does; sizes and
modification times alone would miss an edit of the same length within one clock tick. The digest is kept
with the files' stats, change times included, and read back while those are unchanged: :func:`state`.)
Only what loaded without error is kept, and a test list
is marked valid only after ``validate``'s checks passed on it; what ``validate`` found for the whole
registry (its errors and warnings) is kept too, for ``eatlas add``. The entries live beside the embedding
cache (``$EATLAS_CACHE/registry/``, removed by ``eatlas cache clear``); ``EATLAS_REGISTRY_CACHE=0``
switches them off.

The parsed registry is plain data, never a pickle: the cache folder may be shared by a lab
(``EATLAS_CACHE`` on a shared disk), and loading a pickle runs whatever code it names, so anyone who
could write there could run code in every user's ``eatlas``. A file ``<key>.jsonl`` holds one JSON line
of head (the format, the key, the catalog and the index of the entries: each one's id, version, file,
place and CRC-32) and then one JSON line per set, test and template (:func:`to_json` writes the few YAML
values JSON lacks, e.g. dates, as tagged objects). Only the head is read when the registry is loaded;
an entry is decoded when it is first used (a run of one test reads its four sets, not 2,600), by the
``restore`` function the caller gives (``Registry.from_plain``). A file that is not of this format,
whose key is not the one asked for, or that is cut short is ignored and the registry parsed afresh; an
entry whose CRC or content does not check is read from its YAML file instead (``Registry.from_plain``).
Files of older EATlas versions (``<key>.pickle``) are never opened.

A CRC or a plain hash anyone can recompute, so nothing here is trusted for being consistent
(:mod:`eatlas.trust`): the folder must be the user's own and writable by no one else (else one line says
so and the registry is parsed afresh), every file is read only if the user owns it and no one else can write
it, and the head, each entry, the ``.stat`` memo, the validity markers and validate's record carry a seal (a
keyed digest under the user's private key). An entry also records the digest of its source file's bytes and
is used only while that file is the same: the few files a run uses are read again, never the whole registry.
An entry that fails any check is read from its YAML file.
"""
from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import trust
from ..files import write_atomic

FOLDERS = ("registry", "templates", "schemas", "loaders")
# Bumped when what a parsed registry holds changes within one EATlas version (2: TestSpec.methods; 3: JSON
# lines instead of pickles; 4: criteria), so that an entry written by the code before is not taken for one of today's.
FORMAT = 5     # 5: sealed (eatlas.trust) and each entry checked against its source file's bytes
MAGIC = "eatlas-registry-cache"


def enabled() -> bool:
    return os.environ.get("EATLAS_REGISTRY_CACHE", "1") not in ("0", "false", "no", "")


def trusted() -> bool:
    """Whether the cache folder can be used: the user's own, writable by no one else, and a sealing key kept.
    A folder others can write is refused with one line (the registry is then parsed afresh, nothing kept)."""
    if not enabled():
        return False
    d = folder()
    why = trust.folder_problem(d)      # its parent may be shared: whatever is put there in its place is refused
    if why is not None:
        trust.warn_once(d, why, "the parsed-registry cache")
        return False
    return trust.secret() is not None


def _read(path: Path) -> bytes | None:
    """A cache file's bytes, if this user alone could have written it (eatlas.trust.read_own)."""
    return trust.read_own(path)


def folder() -> Path:
    from ..paths import cache_dir
    return cache_dir() / "registry"


def _paths(root: Path) -> list[str]:
    paths = [os.path.join(root, "catalog.yaml")]
    for name in FOLDERS:
        for base, dirs, files in os.walk(os.path.join(root, name)):
            dirs.sort()
            paths += [os.path.join(base, f) for f in sorted(files)]
    return paths


RACY_NS = 2_000_000_000     # a file changed less than this before its stat was taken may change again unseen


def _stats(root: Path, paths: list[str]) -> tuple[str, int]:
    """A digest of every file's stat (size, inode, modification and change times) and the newest of those
    times. The change time (ctime) is set by the system on every write and cannot be set back by a program."""
    h = hashlib.blake2b(str(root).encode(), digest_size=16)
    newest = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError as e:
            h.update(f"{p}\0gone {e.errno}\0".encode())
            continue
        h.update(f"{p}\0{st.st_size}\0{st.st_ino}\0{st.st_dev}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0".encode())
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    return h.hexdigest(), newest


def state(root: Path) -> str:
    """A digest of the registry folder's files as they are now (path and content).

    Reading and hashing every file takes a few tenths of a second on a large registry, a run's warm start
    most of it; so the digest is kept beside the files' stats (``<folder digest>.stat``) and taken from
    there while every file's size, inode, modification and change time are what they were. The change
    time moves on every write, so an edit is always seen, unless it came within the same clock tick as the
    stats the digest was kept with: a digest is kept only when every file is at least two seconds old (as
    git's index does for 'racily clean' files). The digest itself stays one of the files' content."""
    from .. import __version__

    paths = _paths(root)
    seed = f"{root}\0{__version__}\0{FORMAT}\0{sys.version}"
    memo = folder() / f"{hashlib.blake2b(seed.encode(), digest_size=16).hexdigest()}.stat" if trusted() else None
    stats = None
    if memo is not None:
        stats, newest = _stats(root, paths)
        try:
            kept = json.loads(_read(memo) or b"null")
            if isinstance(kept, dict) and kept.get("stats") == stats and isinstance(kept.get("state"), str) \
                    and trust.sealed(kept.get("seal"), "stat", str(root), stats, kept["state"]):
                return kept["state"]
        except ValueError:
            pass
    digest = _content(root, paths, seed)
    if memo is not None and newest < time.time_ns() - RACY_NS and _stats(root, _paths(root))[0] == stats:
        _write(memo, json.dumps({"stats": stats, "state": digest,
                                 "seal": trust.seal("stat", str(root), stats, digest)}).encode("utf-8"))
    return digest


def _content(root: Path, paths: list[str], seed: str) -> str:
    h = hashlib.blake2b(seed.encode())
    for p in paths:
        rel = os.path.relpath(p, root)
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError as e:            # unreadable (or gone): a state of its own, never that of no such file
            h.update(f"{rel}\0unreadable {e.errno}\0".encode())
            continue
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:32]


def _write(path: Path, data: bytes) -> None:
    """Best effort: a cache that cannot be written is no cache, never an error. Written with the umask's
    mode, as the vectors are: plain data, which a lab sharing the cache may read."""
    def fill(tmp: Path) -> None:
        tmp.write_bytes(data)
        trust.not_writable_by_others(tmp)
    try:
        trust.make_private_folder(path.parent)
        write_atomic(path, fill, prefix=".tmp-", suffix="")
    except OSError:
        pass


# ------------------------------------------------------------------ YAML values as JSON
# JSON has no dates, byte strings, sets, tuples or mappings with keys other than text, which a YAML file (and
# the data classes) may hold: each is written as an object of one tagged key. A mapping whose own keys begin
# with '$' is written as "$map" too, so no mapping of the registry is ever read back as a tag.
def to_json(v: Any) -> Any:
    """``v`` as JSON values (raises TypeError for a value of another kind: the registry is then not kept)."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, list):
        return [to_json(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in v):
            return {k: to_json(x) for k, x in v.items()}
        return {"$map": [[to_json(k), to_json(x)] for k, x in v.items()]}
    if isinstance(v, tuple):
        return {"$tuple": [to_json(x) for x in v]}
    if isinstance(v, _dt.datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, _dt.date):
        return {"$date": v.isoformat()}
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, (set, frozenset)):
        return {"$set": [to_json(x) for x in v]}
    raise TypeError(f"a {type(v).__name__} has no plain form")


_TAGS: dict[str, Callable[[Any], Any]] = {
    "$map": lambda pairs: {k: x for k, x in pairs},
    "$tuple": tuple,
    "$datetime": _dt.datetime.fromisoformat,
    "$date": _dt.date.fromisoformat,
    "$bytes": lambda s: base64.b64decode(s, validate=True),
    "$set": set,
}


def _tagged(obj: dict) -> Any:
    if len(obj) == 1:
        (key, value), = obj.items()
        if key in _TAGS:
            return _TAGS[key](value)
    return obj


def from_json(text: bytes | str) -> Any:
    """What :func:`to_json` wrote, decoded (ValueError, TypeError or KeyError for anything else)."""
    return json.loads(text, object_hook=_tagged)


def _dumps(v: Any) -> bytes:
    return json.dumps(to_json(v), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# ------------------------------------------------------------------ the file
def _path(key: str) -> Path:
    return folder() / f"{key}.jsonl"


def _file_digest(root: str, rel: str) -> str | None:
    """A digest of the bytes of the registry file ``rel`` (an entry's source), None if it cannot be read."""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return hashlib.blake2b(f.read(), digest_size=16).hexdigest()
    except (OSError, TypeError, ValueError):
        return None


def _sources(head: dict) -> list:
    """The source file of each entry, in the order of the entries."""
    return [e[2] for kind in head["entries"].values() for e in kind]


def _encode(key: str, reg) -> bytes | None:
    """The file of ``reg`` (its ``to_plain()``: head and entries), or None when a value has no plain form or no
    seal can be made. Each entry's index row holds its place, its seal (eatlas.trust: bound to the key and the
    entry's line) and the digest of its source file's bytes, checked when the entry is used."""
    try:
        head, entries = reg.to_plain()
        lines = [e if isinstance(e, bytes) else _dumps(e) for e in entries]     # bytes: a line kept as it was
        files = _sources(head)
        digests: dict[str, str | None] = {}
        offset, index = 0, []
        for line, rel in zip(lines, files, strict=True):
            if rel not in digests:
                digests[rel] = _file_digest(head["root"], rel)
            mac = trust.seal("entry", key, line, digests[rel] or "")
            if mac is None:
                return None
            index.append([offset, len(line), mac, digests[rel]])
            offset += len(line) + 1
        top = _dumps({"magic": MAGIC, "format": FORMAT, "key": key, "size": offset, "head": head, "index": index})
        mac = trust.seal("head", key, top)
    except (TypeError, ValueError, RecursionError, KeyError, AttributeError):
        return None
    if mac is None:
        return None
    return b"\n".join([mac.encode("ascii") + b" " + top, *lines]) + b"\n"


def _decode(key: str, data: bytes, restore: Callable):
    """The registry ``data`` holds, if it is a file of this format for ``key`` sealed by this user (None
    otherwise)."""
    end = data.find(b"\n")
    if end < 0:
        return None
    mac, _, line = data[:end].partition(b" ")
    if not trust.sealed(mac.decode("ascii", "replace"), "head", key, line):
        return None
    try:
        top = from_json(line)
        if not (isinstance(top, dict) and top.get("magic") == MAGIC and top.get("format") == FORMAT
                and top.get("key") == key and top.get("size") == len(data) - end - 1):
            return None
        index = top["index"]
        if not all(isinstance(e, list) and len(e) == 4 and isinstance(e[0], int) and isinstance(e[1], int)
                   for e in index):
            return None
        root, files = top["head"]["root"], _sources(top["head"])
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    body = memoryview(data)[end + 1:]

    def raw(n: int) -> bytes:
        """Entry ``n``'s line, as written; ValueError when its bytes are not those sealed."""
        offset, size, seal, digest = index[n]
        line = bytes(body[offset:offset + size])
        if len(line) != size or not trust.sealed(seal, "entry", key, line, digest or ""):
            raise ValueError(f"entry {n} of the registry cache is damaged")
        return line

    def entry(n: int) -> Any:
        """Entry ``n``, decoded; ValueError when its bytes are not those sealed or its source file's bytes are
        not those it was made from (it is then read from its file)."""
        line = raw(n)
        digest = index[n][3]
        if digest is None or _file_digest(root, files[n]) != digest:
            raise ValueError(f"entry {n} of the registry cache is not of its file as it is")
        return from_json(line)
    entry.raw = raw

    try:
        return restore(top["head"], entry, len(index))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def load(root: Path, build: Callable, restore: Callable):
    """The registry of ``root``: from the cache when its files are as they were, else ``build()`` (kept).
    ``restore(head, entry, n)`` makes the registry of a cache file's head, ``entry(i)`` giving its i-th
    entry of ``n`` (``Registry.from_plain``)."""
    if not trusted():
        reg = build()
        reg._state = None
        return reg
    key = state(root)
    data = trust.map_own(_path(key))        # mapped: a run reads the index and the entries it uses, not the file
    reg = _decode(key, data, restore) if data else None
    if reg is not None:
        reg._state = key
        return reg
    reg = build()
    reg._state = key
    encoded = _encode(key, reg)
    if encoded is not None:
        _write(_path(key), encoded)
    return reg


def keep(key: str | None, reg, *, unless_kept: bool = False) -> None:
    """Keep ``reg`` as the parsed registry of the state ``key`` (``eatlas add``: the registry it checked, with
    the entry it wrote, is the registry of the files it leaves). ``unless_kept``: not when a file of this user's
    is already kept for that state (``validate`` run again on unchanged files: encoding the registry costs it
    0.8 s; an entry of that file that does not check is rebuilt on use, as any)."""
    if not key or not trusted():
        return
    if unless_kept and _read(_path(key)) is not None:
        return
    encoded = _encode(key, reg)
    if encoded is not None:
        _write(_path(key), encoded)


def _valid_marker(reg, test_ids: list[str]) -> Path | None:
    key = getattr(reg, "_state", None)
    if not key or not trusted():
        return None
    tests = hashlib.sha256("\0".join(sorted(test_ids)).encode()).hexdigest()[:16]
    return folder() / f"{key}.valid-{tests}"


def known_valid(reg, test_ids: list[str]) -> bool:
    """Whether these tests of this registry state passed validate's checks (a marker this user sealed)."""
    m = _valid_marker(reg, test_ids)
    if m is None:
        return False
    data = _read(m)
    return data is not None and trust.sealed(data.decode("ascii", "replace"), "valid", m.name)


def mark_valid(reg, test_ids: list[str]) -> None:
    m = _valid_marker(reg, test_ids)
    mac = trust.seal("valid", m.name) if m is not None else None
    if mac is not None:
        _write(m, mac.encode("ascii"))


# ------------------------------------------------------------------ validate's outcome, per registry state
# What 'eatlas validate' (or an 'eatlas add' that checked the registry whole) found for the files as they
# are: its errors and warnings (eatlas.registry.checks.problem_rows), kept under the state's key. 'eatlas add' then
# checks only the new entry and what it touches, and takes the rest from here.
def _outcome_path(key: str | None) -> Path | None:
    if not key or not trusted():
        return None
    return folder() / f"{key}.validate.json"


def validation(key: str | None) -> list[dict] | None:
    """validate's problems recorded for this state, as rows; None if none are."""
    path = _outcome_path(key)
    if path is None:
        return None
    data = _read(path)
    try:
        kept = json.loads(data) if data else None
    except ValueError:
        return None
    if not (isinstance(kept, dict) and trust.sealed(kept.get("seal"), "validate", path.name,
                                                     json.dumps(kept.get("rows"), ensure_ascii=False))):
        return None
    rows = kept["rows"]
    return rows if isinstance(rows, list) and all(isinstance(r, dict) for r in rows) else None


def record_validation(key: str | None, rows: list[dict]) -> None:
    """Keep validate's problems (as rows) for this state (best effort, like the rest of the cache)."""
    path = _outcome_path(key)
    if path is not None:
        text = json.dumps(rows, ensure_ascii=False)
        mac = trust.seal("validate", path.name, text)
        if mac is not None:
            _write(path, json.dumps({"rows": json.loads(text), "seal": mac}, ensure_ascii=False).encode("utf-8"))


# ------------------------------------------------------------------ eatlas cache clear
_OWN = re.compile(r"[0-9a-f]{16,64}(\.jsonl|\.pickle|\.valid-[0-9a-f]{16}|\.validate\.json|\.stat)|\.tmp-[0-9a-f]+")


def clear() -> int:
    """Remove the parsed registries and validation records this cache wrote (by the names it gives them), and
    the folder if nothing else is in it; anything else there is left. Returns the number of files removed."""
    d = folder()
    if d.is_symlink() or not d.is_dir():
        return 0
    n = 0
    for p in d.iterdir():
        if _OWN.fullmatch(p.name) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            n += 1
    try:
        d.rmdir()
    except OSError:
        pass
    return n
