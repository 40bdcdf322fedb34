"""The parsed registry and what a run's checks found, kept between runs, so a re-run neither parses nor checks
thousands of YAML files again, and costs the same however many files the registry holds.

The parsed registry's file is keyed by catalog.yaml's bytes (with the folder, the EATlas and Python versions:
:func:`catalog_key`): the catalog lists every entry with its version and file, and an entry is used only while its
own file's bytes are those it was made from, so a run reads the catalog, the index rows of its entries and their
files, never the whole registry. An edited catalog gives a new key and the registry is parsed afresh; an edited
entry file is read from the file. Only what loaded without error is kept. The entries live beside the embedding
cache (``$EATLAS_CACHE/registry/``, removed by ``eatlas cache clear``); ``EATLAS_REGISTRY_CACHE=0`` switches them
off.

A file ``<key>.jsonl`` holds a head line (the format, the key, the folder and each section's place and digest),
then its sections, one line each: the catalog's value of each of its top-level keys, each kind's index (a row an
entry: id, version, file, where its line is, its seal, its file's digest, its recorded sha256) and the other
recorded hashes; then one JSON line per set, test, template and criterion (:func:`to_json` writes the few YAML
values JSON lacks, e.g. dates, as tagged objects). The file is mapped, not read: a section is read and checked
against its digest when first used (the index of sets, to look up a run's four sets), an entry decoded when it is
first used, by ``Registry.from_view``. A file that is not of this format, whose key is not the one asked for, or
that is cut short is ignored and the registry parsed afresh; an entry whose seal or source file does not check is
read from its YAML file instead. Files of older EATlas versions are never opened.

What a run's checks found (eatlas.run.runner.refuse_invalid) is kept per test list, and for the published tables,
beside the parsed registry under the catalog's key, with the files the checks read as they were then
(eatlas.registry.reads: size, inode, modification and change times): the next run of those tests checks that
those files are unchanged and checks nothing else. What ``validate`` found for the whole registry (its errors and
warnings) is kept by the digest of every file (:func:`state`), for ``eatlas add``.

The parsed registry is plain data, never a pickle: the cache folder may be shared by a lab
(``EATLAS_CACHE`` on a shared disk), and loading a pickle runs whatever code it names, so anyone who
could write there could run code in every user's ``eatlas``. A plain digest anyone can recompute, so nothing here
is trusted for being consistent (:mod:`eatlas.trust`): the folder must be the user's own and writable by no one
else (else one line says so and the registry is parsed afresh), every file is read only if the user owns it and
no one else can write it, and the head, each entry, the ``.stat`` memo, the run's findings and validate's record
carry a seal (a keyed digest under the user's private key).
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
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import trust
from ..files import write_atomic
from . import reads

FOLDERS = ("registry", "templates", "schemas", "loaders")
# Bumped when what a parsed registry holds changes within one EATlas version (2: TestSpec.methods; 3: JSON
# lines instead of pickles; 4: criteria), so that an entry written by the code before is not taken for one of today's.
# 5: sealed (eatlas.trust) and each entry checked against its source file's bytes; 6: keyed by the catalog, read as used
FORMAT = 6
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


def _kept_by_stats(root: Path, seed: str, suffix: str, take_stats: Callable, compute: Callable) -> str:
    """``compute()``'s digest, kept beside the stats it was computed for (``take_stats()``: a text of the files'
    sizes, inodes, modification and change times, and the newest of those times) in ``<seed digest><suffix>``, and
    taken from there while the stats are what they were. The change time moves on every write, so an edit is always
    seen, unless it came within the same clock tick as the stats the digest was kept with: a digest is kept only
    when the stats are the same after it was computed and every file is at least two seconds old (as git's index
    does for 'racily clean' files). The digest itself stays one of the files' content."""
    if not trusted():
        return compute()
    memo = folder() / f"{hashlib.blake2b(seed.encode(), digest_size=16).hexdigest()}{suffix}"
    stats, newest = take_stats()
    try:
        kept = json.loads(_read(memo) or b"null")
        if isinstance(kept, dict) and kept.get("stats") == stats and isinstance(kept.get("digest"), str) \
                and trust.sealed(kept.get("seal"), suffix, str(root), stats, kept["digest"]):
            return kept["digest"]
    except ValueError:
        pass
    digest = compute()
    if newest < time.time_ns() - RACY_NS and take_stats()[0] == stats:
        _write(memo, json.dumps({"stats": stats, "digest": digest,
                                 "seal": trust.seal(suffix, str(root), stats, digest)}).encode("utf-8"))
    return digest


def state(root: Path) -> str:
    """A digest of the registry folder's files as they are now (path and content). Reading and hashing every file
    takes a few tenths of a second on a large registry, so the digest is kept beside the files' stats
    (``<folder digest>.stat``, :func:`_kept_by_stats`)."""
    from .. import __version__

    seed = f"{root}\0{__version__}\0{FORMAT}\0{sys.version}"
    return _kept_by_stats(root, seed, ".stat", lambda: _stats(root, _paths(root)),
                          lambda: _content(root, _paths(root), seed))


def catalog_key(root: Path) -> str:
    """The key of the parsed registry's cache file: the folder, the EATlas and Python versions and catalog.yaml's
    bytes. The catalog lists every entry with its file: the cache file's head and index are made from it alone,
    and each entry is checked against its own file's bytes when used (a run reads a few, not the registry).
    Hashing the catalog (a few MB) grew with the registry: the key is kept beside the catalog's stats
    (``<folder digest>.catstat``, :func:`_kept_by_stats`)."""
    from .. import __version__

    seed = f"{root}\0{__version__}\0{FORMAT}\0{sys.version}\0"
    path = os.path.join(root, "catalog.yaml")

    def take_stats() -> tuple[str, int]:
        try:
            sig = reads.signature(os.stat(path))
        except OSError as e:
            return f"gone {e.errno}", time.time_ns()        # never kept: the newest time is now
        return json.dumps(sig), max(sig[3], sig[4])

    def compute() -> str:
        h = hashlib.blake2b(seed.encode())
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:            # unreadable: a key of its own; the registry, parsed afresh, says why
            h.update(f"unreadable {e.errno}".encode())
        else:
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()[:32]
    return _kept_by_stats(root, seed, ".catstat", take_stats, compute)


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
            st = os.fstat(f.fileno())
            found = reads.digest(f.read())
        reads.note(os.path.join(root, rel), st, found)
        return found
    except (OSError, TypeError, ValueError):
        return None


_KINDS = ("sets", "tests", "templates", "criteria")


def _row(fields: list) -> bytes | None:
    """An index row: id, version, file (as resolved), file (as the catalog names it), the entry line's offset, size
    and seal, the digest of its source file and the recorded sha256, tab-separated (the paths as JSON strings, the
    absent as '-'; :func:`_encode` adds the entry's place in the catalog). None when the id or version holds a tab
    or a line break (the registry is then not kept)."""
    eid, version, file, raw, offset, size, mac, digest, sha = fields
    if not (isinstance(eid, str) and isinstance(version, str)) or any(c in eid + version for c in "\t\n\r"):
        return None
    if digest is not None and not isinstance(digest, str) or sha is not None and not isinstance(sha, str) \
            or any(c in (x or "") for x in (digest, sha) for c in "\t\n\r"):
        return None
    return "\t".join([eid, version, json.dumps(file), json.dumps(raw), str(offset), str(size), mac,
                      digest or "-", sha or "-"]).encode("utf-8")


ROWS_A_BUCKET = 256     # an index is split into buckets by a hash of the id: a lookup checks one bucket's digest


def _bucket(eid: str, n: int) -> int:
    return zlib.crc32(eid.encode("utf-8")) % n


def _encode(key: str, reg) -> bytes | None:
    """The file of ``reg`` (its ``to_plain()``), or None when a value has no plain form or no seal can be made.

    Its first line is the head (sealed): the format, the key, the folder, the catalog's top-level keys and, for
    each section, its place and digest. The sections follow, one line each: the catalog's value of each top-level
    key (JSON), each kind's index (one row an entry, :func:`_row`, each row after a line break, so that an id is
    found by a search for it), the other recorded hashes; then the entries, one JSON line each, sealed one by one
    with the digest of their source file's bytes (checked when the entry is used)."""
    try:
        head, entries = reg.to_plain()
        lines = [e if isinstance(e, bytes) else _dumps(e) for e in entries]     # bytes: a line kept as it was
        if len(lines) != sum(len(head["entries"][k]) for k in _KINDS):
            return None
        sections: list[tuple[str, bytes]] = [(f"catalog:{k}", _dumps(v)) for k, v in head["catalog"].items()]
        sections.append(("recorded", _dumps(head["recorded_other"])))
        digests: dict[str, str | None] = {}
        offset, n = 0, 0
        buckets = {}
        for kind in _KINDS:
            nb = buckets[kind] = 1 + len(head["entries"][kind]) // ROWS_A_BUCKET
            rows: list[list[bytes]] = [[] for _ in range(nb)]
            for eid, version, file, raw, sha in head["entries"][kind]:
                line = lines[n]
                n += 1
                if file not in digests:
                    digests[file] = _file_digest(head["root"], file)
                mac = trust.seal("entry", key, line, digests[file] or "")
                row = None if mac is None else _row([eid, version, file, raw, offset, len(line), mac,
                                                     digests[file], sha])
                if row is None:
                    return None
                rows[_bucket(eid, nb)].append(b"\n" + row + b"\t" + str(n - 1).encode())   # its place, for order
                offset += len(line) + 1
            sections += [(f"index:{kind}:{b}", b"".join(r)) for b, r in enumerate(rows)]
        places, at = {}, 0          # JSON has no raw line break: each section is one line, an index one line a row
        for name, body in sections:
            places[name] = [at, len(body), hashlib.blake2b(body, digest_size=16).hexdigest()]
            at += len(body) + 1
        top = _dumps({"magic": MAGIC, "format": FORMAT, "key": key, "root": head["root"],
                      "catalog_keys": list(head["catalog"]), "sections": places, "buckets": buckets,
                      "entries_at": at, "size": at + offset})
        mac = trust.seal("head", key, top)
    except (TypeError, ValueError, RecursionError, KeyError, AttributeError):
        return None
    if mac is None:
        return None
    return b"\n".join([mac.encode("ascii") + b" " + top, *(b for _, b in sections), *lines]) + b"\n"


class View:
    """A cache file of this format for one key, sealed by this user, read as it is used: each section checked
    against the digest the sealed head gives it when first read, each entry against its own seal and its source
    file's bytes (:meth:`entry`)."""

    def __init__(self, key: str, data, top: dict, body: int):
        self.key, self._data, self._body = key, data, body
        self.root = top["root"]
        self.catalog_keys = list(top["catalog_keys"])
        self._places, self._entries = top["sections"], body + top["entries_at"]
        self._buckets = {k: int(n) for k, n in top["buckets"].items()}
        self._checked: dict[str, bytes] = {}
        self._rows: dict[str, dict] = {}

    def _section(self, name: str) -> bytes:
        if name not in self._checked:
            at, size, digest = self._places[name]
            body = bytes(self._data[self._body + at:self._body + at + size])
            if len(body) != size or hashlib.blake2b(body, digest_size=16).hexdigest() != digest:
                raise ValueError(f"section {name} of the registry cache is damaged")
            self._checked[name] = body
        return self._checked[name]

    def catalog(self, key: str):
        return from_json(self._section(f"catalog:{key}"))

    def recorded_other(self) -> list:
        return from_json(self._section("recorded"))

    def lookup(self, kind: str, eid) -> tuple | None:
        """The index row of ``eid`` (a search of its bucket of the kind's index, not a read of it whole), or None."""
        if kind in self._rows:
            return self._rows[kind].get(eid)
        if not isinstance(eid, str) or any(c in eid for c in "\t\n\r"):
            return None
        sec = self._section(f"index:{kind}:{_bucket(eid, self._buckets[kind])}")
        at = sec.find(b"\n" + eid.encode("utf-8") + b"\t")
        if at < 0:
            return None
        end = sec.find(b"\n", at + 1)
        return self._fields(sec[at + 1:end if end >= 0 else len(sec)])[1]

    def _fields(self, line: bytes) -> tuple[str, tuple]:
        parts = line.split(b"\t")
        if len(parts) != 10:
            raise ValueError("a row of the registry cache's index is damaged")
        version, file, raw, offset, size, mac, digest, sha = parts[1:9]
        return parts[0].decode("utf-8"), (
            version.decode("utf-8"), json.loads(file), json.loads(raw), int(offset), int(size), mac.decode("ascii"),
            None if digest == b"-" else digest.decode("ascii"), None if sha == b"-" else sha.decode("ascii"),
            int(parts[9]))

    def rows(self, kind: str):
        """(id, row) of every entry of ``kind``, in the catalog's order."""
        if kind not in self._rows:
            found = [self._fields(line) for b in range(self._buckets[kind])
                     for line in self._section(f"index:{kind}:{b}").split(b"\n")[1:]]
            found.sort(key=lambda r: r[1][8])
            self._rows[kind] = dict(found)
        return list(self._rows[kind].items())

    def raw(self, row) -> bytes:
        """An entry's line, as written; ValueError when its bytes are not those sealed."""
        offset, size, mac, digest = row[3], row[4], row[5], row[6]
        line = bytes(self._data[self._entries + offset:self._entries + offset + size])
        if len(line) != size or not trust.sealed(mac, "entry", self.key, line, digest or ""):
            raise ValueError("an entry of the registry cache is damaged")
        return line

    def entry(self, row):
        """An entry, decoded; ValueError when its bytes are not those sealed or its source file's bytes are not
        those it was made from (it is then read from its file)."""
        line = self.raw(row)
        if row[6] is None or _file_digest(self.root, row[1]) != row[6]:
            raise ValueError("an entry of the registry cache is not of its file as it is")
        return from_json(line)


def _decode(key: str, data, restore: Callable):
    """The registry ``data`` holds, if it is a file of this format for ``key`` sealed by this user (None
    otherwise)."""
    end = data.find(b"\n")
    if end < 0:
        return None
    first = bytes(data[:end])
    mac, _, line = first.partition(b" ")
    if not trust.sealed(mac.decode("ascii", "replace"), "head", key, line):
        return None
    try:
        top = from_json(line)
        if not (isinstance(top, dict) and top.get("magic") == MAGIC and top.get("format") == FORMAT
                and top.get("key") == key and top.get("size") == len(data) - end - 1):
            return None
        return restore(View(key, data, top, end + 1))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def load(root: Path, build: Callable, restore: Callable):
    """The registry of ``root``: from the cache when its catalog is as it was, else ``build()`` (kept).
    ``restore(view)`` makes the registry of a cache file (``Registry.from_view``); its entries are checked
    against their files when used."""
    if not trusted():
        reg = build()
        reg._key = None
        return reg
    key = catalog_key(root)
    data = trust.map_own(_path(key))        # mapped: a run reads the index rows and the entries it uses
    reg = _decode(key, data, restore) if data else None
    if reg is not None:
        reg._key = key
        return reg
    reg = build()
    reg._key = key
    encoded = None if getattr(reg, "_partial", False) else _encode(key, reg)   # partial: an entry could not be read
    if encoded is not None:
        _write(_path(key), encoded)
    return reg


def keep(reg, *, key: str | None = None, unless_kept: bool = False) -> None:
    """Keep ``reg`` as the parsed registry of its catalog (``key``: the :func:`catalog_key` it was checked under,
    kept only while the catalog is still that; by default the catalog as it is now: ``eatlas add``, whose registry,
    with the entry it wrote, is that of the files it leaves). ``unless_kept``: not when a file of this user's is
    already kept for that catalog (``validate`` run again on unchanged files: encoding the registry costs it 0.8 s;
    an entry of that file that does not check is rebuilt on use, as any)."""
    if not trusted() or getattr(reg, "_partial", False):
        return
    now = catalog_key(Path(reg.root))
    if key is not None and key != now:
        return
    if unless_kept and trust.map_own(_path(now)) is not None:       # mapped, not read: 20 MB
        return
    encoded = _encode(now, reg)
    if encoded is not None:
        _write(_path(now), encoded)


# ------------------------------------------------------------------ what a run's checks found, per file they read
# A run checks its tests before loading a model (eatlas.run.runner.refuse_invalid); what the checks found is kept
# for the files they read (eatlas.registry.reads: their stats and digests when read), under the catalog's key: the
# next run of the same tests checks only that those files are as they were.
def _marker(reg, name: str) -> Path | None:
    key = getattr(reg, "_key", None)
    if not key or not trusted():
        return None
    return folder() / f"{key}.{name}"


def _tests_name(test_ids: list[str]) -> str:
    return "valid-" + hashlib.sha256("\0".join(sorted(test_ids)).encode()).hexdigest()[:16]


def known(reg, name: str) -> bool:
    """Whether the checks ``name`` stands for passed on these files as they are (a finding this user sealed, for
    files that have not changed since: eatlas.registry.reads.unchanged)."""
    m = _marker(reg, name)
    data = _read(m) if m is not None else None
    if data is None:
        return False
    try:
        kept = json.loads(data)
        files, at = kept["files"], kept["at"]
        if not (isinstance(files, dict) and isinstance(at, int) and all(
                r is None or isinstance(r, list) and len(r) == 2 for r in files.values())
                and trust.sealed(kept.get("seal"), "valid", m.name, str(at), json.dumps(files, sort_keys=True))):
            return False
    except (ValueError, TypeError, KeyError):
        return False
    return reads.unchanged(files, at)


def mark(reg, name: str, files: dict) -> None:
    """Keep that the checks ``name`` stands for passed on ``files`` (path -> what eatlas.registry.reads recorded
    of it when read)."""
    m = _marker(reg, name)
    if m is None:
        return
    at = time.time_ns()
    text = json.dumps(files, sort_keys=True)
    mac = trust.seal("valid", m.name, str(at), text)
    if mac is not None:
        _write(m, json.dumps({"at": at, "files": files, "seal": mac}).encode("utf-8"))


def known_valid(reg, test_ids: list[str]) -> bool:
    """Whether these tests passed a run's checks on their files as they are (:func:`known`)."""
    return known(reg, _tests_name(test_ids))


def mark_valid(reg, test_ids: list[str], files: dict) -> None:
    mark(reg, _tests_name(test_ids), files)


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
_OWN = re.compile(r"[0-9a-f]{16,64}(\.jsonl|\.pickle|\.valid-[0-9a-f]{16}|\.published-valid|\.validate\.json"
                  r"|\.stat|\.catstat)|\.tmp-[0-9a-f]+")


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
