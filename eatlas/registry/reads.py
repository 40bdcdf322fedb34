"""Which files a check read, and whether they are still as they were.

A run's checks (eatlas.run.runner.refuse_invalid) read a few files: its tests', its sets', its templates', the
bibliography, the schemas, the published tables. What they found is kept (eatlas.registry.cache.known) for those
files as they were when read: each file's size, inode, device, modification and change times, taken from the open
file it was read from, and the digest of the bytes read. The change time is set by the system on every write and
cannot be set back by a program, so any later write, or a file put in its place, is seen, except a write within
the same clock tick as the read (the times would not move): a file whose times are within two seconds of when
the finding was kept is compared by its bytes instead (a folder by its names), as git's index does for 'racily
clean' files.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

RACY_NS = 2_000_000_000
_ACTIVE: list[dict] = []


def signature(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _now(path: str) -> list[int] | None:
    try:
        return signature(os.stat(path))
    except OSError:
        return None


@contextmanager
def recording(into: dict | None = None) -> Iterator[dict]:
    """Within the block, every file the registry reads (path -> [its signature when read, the digest of the bytes
    read], None if it could not be), in ``into`` if given (the first reading of a file is the one kept)."""
    seen: dict[str, list | None] = {} if into is None else into
    _ACTIVE.append(seen)
    try:
        yield seen
    finally:            # by identity: two records may be equal
        del _ACTIVE[next(i for i, d in enumerate(_ACTIVE) if d is seen)]


def active() -> bool:
    """Whether a reading is being recorded (a reader then hashes what it read)."""
    return bool(_ACTIVE)


def note(path, st: os.stat_result, data_digest: str | None) -> None:
    """``path`` was read: ``st``, the stat of the open file it was read from, and the digest of its bytes."""
    if not _ACTIVE:
        return
    p = os.path.abspath(path)
    for seen in _ACTIVE:
        seen.setdefault(p, [signature(st), data_digest])


def _content(path: str) -> bytes:
    """A file's bytes; a folder's sorted names (what a file added or removed there changes)."""
    if os.path.isdir(path):
        return "\0".join(sorted(os.listdir(path))).encode("utf-8", "surrogateescape")
    with open(path, "rb") as f:
        return f.read()


def add(seen: dict, paths: Iterable, known: dict | None = None) -> dict:
    """``seen`` with these files and folders (a file added to or removed from a folder changes its times and its
    names), each as it was when read (``known``: e.g. a registry's entries, read before the check) or else as it is
    now."""
    for path in paths:
        p = os.path.abspath(path)
        if p in seen:
            continue
        if known is not None and p in known:
            seen[p] = known[p]
            continue
        before = _now(p)
        try:
            found = digest(_content(p))
        except OSError:
            found = None
        seen[p] = None if before is None else [before, found if _now(p) == before else None]
    return seen


def unchanged(seen: dict, at: int) -> bool:
    """Whether every file is as it was when read, for a finding kept at ``at`` (ns since the epoch): its stat the
    same, and, where its times are within two seconds of ``at``, its bytes too (a file absent then is absent
    still)."""
    for p, rec in seen.items():
        now = _now(p)
        if rec is None or now is None:
            if rec is not None or now is not None:
                return False
            continue
        sig, kept = rec
        if now != sig:
            return False
        if max(sig[3], sig[4]) >= at - RACY_NS:     # racily clean: the bytes decide
            try:
                same = kept is not None and digest(_content(p)) == kept
            except OSError:
                same = False
            if not same:
                return False
    return True
