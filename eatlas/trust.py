"""What a cache may be trusted with: a file is read from a cache only when no one but the user could have
written it, and its content carries a seal only this user's EATlas can make.

The cache folder (``$EATLAS_CACHE``) may be shared by a lab. A parsed registry or a shard of vectors read
from there decides the words a run uses and the numbers it stores, so a cache entry is used only when

* its folder is the user's own and not writable by others (group or world): :func:`folder_problem`;
* the file itself is a regular file (not a link), owned by the user and not writable by others, read
  through one descriptor opened without following a link (:func:`read_own`);
* its seal checks: a keyed BLAKE2b digest (:func:`seal`) under a random key kept private to the user
  outside the cache folder (``$XDG_STATE_HOME/eatlas/cache.key``, default ``~/.local/state``), so a
  checksum anyone can recompute (CRC, plain hash) is never what makes an entry trusted.

Anything else is ignored and the entry rebuilt from the source files. Nothing here imports the rest of
eatlas beyond :mod:`eatlas.files`.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import stat
import sys
from pathlib import Path

from .files import new_temp

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_KEY: bytes | None = None
_WARNED: set[str] = set()


def _uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def key_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "eatlas" / "cache.key"


def secret() -> bytes | None:
    """The user's sealing key (made on first use, mode 0o600); None when it cannot be kept privately (then no
    cache is trusted)."""
    global _KEY
    if _KEY is not None:
        return _KEY
    path = key_file()
    for _ in range(2):
        data = read_own(path, private=True)
        if data is not None and len(data) == 32:
            _KEY = data
            return _KEY
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if path.exists() or path.is_symlink():        # someone else's, or not a key: never used
                return None
            tmp = new_temp(path.parent, ".cache.key-", private=True)
            tmp.write_bytes(os.urandom(32))
            try:
                os.link(tmp, path)                          # never over an existing key (two first runs at once)
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
        except OSError:
            return None
    return None


def seal(*parts: bytes | str) -> str | None:
    """A keyed digest of ``parts`` (hex), or None when there is no key."""
    k = secret()
    if k is None:
        return None
    h = hashlib.blake2b(key=k, digest_size=16)
    for p in parts:
        b = p.encode("utf-8") if isinstance(p, str) else bytes(p)
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def sealed(mac: object, *parts: bytes | str) -> bool:
    """Whether ``mac`` is the seal of ``parts``."""
    want = seal(*parts)
    return want is not None and isinstance(mac, str) and hmac.compare_digest(mac, want)


def folder_problem(path: Path) -> str | None:
    """Why the folder ``path`` cannot hold a cache this user trusts (None when it can, or does not exist yet)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    uid = _uid()
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as e:
            return f"is a link that cannot be followed ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if uid is not None and st.st_uid != uid:
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        who = "group and others" if st.st_mode & 0o022 == 0o022 else "group" if st.st_mode & 0o020 else "others"
        return f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def warn_once(where: Path, why: str, what: str) -> None:
    """One line on stderr, once per folder and process."""
    line = f"note: {what} {where} {why}; not used (set EATLAS_CACHE to a folder of your own)"
    if line not in _WARNED:
        _WARNED.add(line)
        print(line, file=sys.stderr)


def _own_stat(st: os.stat_result, private: bool) -> bool:
    """A regular file owned by this user and writable by no one else (``private``: readable by no one else)."""
    uid = _uid()
    return stat.S_ISREG(st.st_mode) and (uid is None or st.st_uid == uid) \
        and not st.st_mode & (0o077 if private else 0o022)


def is_own(path: Path, *, private: bool = False) -> bool:
    """Whether ``path`` itself (not a link) is such a file (:func:`_own_stat`)."""
    try:
        return _own_stat(os.lstat(path), private)
    except OSError:
        return False


def _open_own(path: Path, private: bool, use):
    """``use(fd, st)`` on ``path`` opened without following a link, if it is the user's own file; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        return use(fd, st) if _own_stat(st, private) else None
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def read_own(path: Path, *, private: bool = False) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link) owned by this user and writable by no one else
    (``private``: readable by no one else either); None otherwise."""
    def read(fd, st):
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    return _open_own(path, private, read)


def map_own(path: Path, *, private: bool = False):
    """:func:`read_own`'s file as a read-only memory map (bytes-like; pages read only when touched), or None. The
    map stays valid if the file is later replaced or removed (a new file is a new inode)."""
    import mmap
    return _open_own(path, private, lambda fd, st: mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if st.st_size else None)


def make_private_folder(path: Path) -> None:
    """Create ``path`` (and parents) if needed; a folder made here is writable by the user alone."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        try:
            st = os.stat(path)
            if _uid() is None or st.st_uid == _uid():
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)
        except OSError:
            pass


def not_writable_by_others(path: Path) -> None:
    """Drop group and world write permission of a file this process just wrote (before renaming it in)."""
    try:
        os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o022)
    except OSError:
        pass
