"""Results files this user's EATlas wrote last and nobody has changed since: checked once, not on every run.

Before a run does any work, the results file is read as data (no view in a table's place, no macro), its schema
compared with the declared one and a probe write tried (:func:`eatlas.store.db.check_writable`); the write
compares the schema again. On a file this EATlas wrote and closed itself, and which is byte for byte as it left
it, each of those checks gives the answer it gave then: a warm re-run of one test paid a quarter of its time for
them. So after each write the file's identity is remembered (device, inode, size, modification and change
time: any write, rename or ``chmod`` changes the change time, which no one can set back), with a fingerprint of
this EATlas's code, sealed with the user's private key (:mod:`eatlas.trust`) in the user's private state folder.
A file whose identity and code fingerprint match the record is the one this EATlas checked and wrote; anything
else (a file edited with ``eatlas sql --write`` or another program, replaced, copied in, or written by another
version) gets every check, as before.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from .. import trust
from ..files import new_temp


@functools.lru_cache(maxsize=1)
def _code() -> str:
    """This EATlas: its version and every module's size and modification time (an edited checkout is another)."""
    from .. import __version__
    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(__version__.encode(), digest_size=16)
    for p in sorted(root.rglob("*.py")):
        st = p.stat()
        h.update(f"\0{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


def _identity(db: Path) -> list[int] | None:
    """The file's identity, or None when it has a write-ahead log (not closed cleanly) or cannot be read."""
    try:
        if os.path.lexists(str(db) + ".wal"):
            return None
        st = os.stat(db)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _folder() -> Path:
    return trust.key_file().parent / "stores"


def _write_sealed(dest: Path, body: str) -> None:
    """``body`` and its seal into ``dest`` (private temporary file, renamed into place); best effort."""
    mac = trust.seal(body)
    if mac is None:
        return
    try:
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if trust.folder_problem(dest.parent):
            return
        tmp = new_temp(dest.parent, ".store-", ".json", private=True)
        try:
            tmp.write_text(json.dumps({"body": body, "seal": mac}))
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError:
        pass


def _read_sealed(src: Path) -> str | None:
    data = trust.read_own(src, private=True)
    if not data:
        return None
    try:
        rec = json.loads(data)
        body = rec.get("body")
        return body if isinstance(body, str) and trust.sealed(rec.get("seal"), body) else None
    except (ValueError, AttributeError):
        return None


def per_code(name: str, compute):
    """``compute()`` (a JSON value that only this EATlas's code decides, e.g. the declared schema), kept sealed
    per code fingerprint: computed once per version of the code, not on every run."""
    dest = _folder() / f"{name}-{_code()}.json"
    body = _read_sealed(dest)
    if body is not None:
        try:
            return json.loads(body)
        except ValueError:
            pass
    value = compute()
    _write_sealed(dest, json.dumps(value))
    return value


def _record(real: Path) -> Path:
    name = hashlib.blake2b(str(real).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return _folder() / f"{name}.json"


def unchanged(db: str | Path) -> bool:
    """Whether ``db`` is as this EATlas (this code) left it after its last write."""
    try:
        real = Path(db).resolve()
    except OSError:
        return False
    ident = _identity(real)
    return ident is not None and _read_sealed(_record(real)) == json.dumps([str(real), ident, _code()])


def remember(db: str | Path) -> None:
    """Record ``db`` as this EATlas left it (call after its connection is closed); best effort."""
    try:
        real = Path(db).resolve()
    except OSError:
        return
    ident = _identity(real)
    if ident is not None:
        _write_sealed(_record(real), json.dumps([str(real), ident, _code()]))
