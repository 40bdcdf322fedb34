"""Which files a check read, and whether they are still as they were.

A run's checks (eatlas.run.runner.refuse_invalid) read a few files: its tests', its sets', its templates', the
bibliography, the schemas, the published tables. What they found is kept (eatlas.registry.cache.known_valid) for
those files as they were when read: each file's size, inode, device, modification and change times, taken from
the open file it was read from. The change time is set by the system on every write and cannot be set back by a
program, so any later write, or a file put in its place, is seen. A file written less than two seconds before
the check may change again within the same clock tick unseen: no finding is kept for it (:func:`settled`), as
git's index does for 'racily clean' files.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

RACY_NS = 2_000_000_000
_ACTIVE: list[dict] = []


def signature(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]


def _now(path: str) -> list[int] | None:
    try:
        return signature(os.stat(path))
    except OSError:
        return None


@contextmanager
def recording(into: dict | None = None) -> Iterator[dict]:
    """Within the block, every file the registry reads (path -> its signature when read, None if it could not
    be), in ``into`` if given (the first reading of a file is the one kept)."""
    seen: dict[str, list[int] | None] = {} if into is None else into
    _ACTIVE.append(seen)
    try:
        yield seen
    finally:            # by identity: two records may be equal
        del _ACTIVE[next(i for i, d in enumerate(_ACTIVE) if d is seen)]


def note(path, st: os.stat_result | None = None) -> None:
    """``path`` was read (``st``: the stat of the open file it was read from)."""
    if not _ACTIVE:
        return
    p = os.path.abspath(path)
    sig = signature(st) if st is not None else _now(p)
    for seen in _ACTIVE:
        seen.setdefault(p, sig)


def add(seen: dict, paths: Iterable, known: dict | None = None) -> dict:
    """``seen`` with these files (or folders: a file added to or removed from one changes its times), each as it
    was when read (``known``: e.g. a registry's entries, read before the check) or else as it is now."""
    for path in paths:
        p = os.path.abspath(path)
        if p not in seen:
            seen[p] = known[p] if known is not None and p in known else _now(p)
    return seen


def unchanged(seen: dict) -> bool:
    """Whether every file is as it was (a file absent then is absent still)."""
    return all(_now(p) == sig for p, sig in seen.items())


def settled(seen: dict) -> bool:
    """Whether every file was last written at least two seconds ago (a later write in the same tick would
    otherwise leave its times as they were)."""
    limit = time.time_ns() - RACY_NS
    return all(sig is None or max(sig[3], sig[4]) < limit for sig in seen.values())
