"""Writing a file into place, with the permissions the user expects: every writer of EATlas uses this.

A file is written to a temporary name in its own folder and renamed over the destination, so a reader
never sees half a file and an interrupted write leaves the old file (and at worst a temporary one).
The temporary file is created by :func:`new_temp` with mode ``0o666`` and the kernel applies the
process's umask (or the folder's default ACL), exactly as for ``open(path, "w")``: with umask 022 the
file is ``0o644``, with 077 it is ``0o600``. ``tempfile.mkstemp`` always creates ``0o600``, so a dataset
published into a shared folder or onto a web server came out unreadable to everyone else.

``private=True`` keeps a file to its owner (``0o600`` whatever the umask), for a file no one else should
read (the parsed-registry cache asked for it while it held pickles; it is plain JSON now, written with
the umask's mode like the rest). Folders get ``0o777`` less the umask
(:func:`dir_mode`; :func:`umask_folders` for folders another program created with a fixed mode).

Nothing here imports the rest of eatlas, so any module may use it.
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

_BINARY = getattr(os, "O_BINARY", 0)        # Windows: no newline translation on the raw descriptor


def umask() -> int:
    """The process's umask (read from /proc where there is one, so it is never changed even for a moment)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o077)       # elsewhere the only way to read it is to set it: for that instant, strict
    os.umask(old)
    return old


def file_mode() -> int:
    """The mode ``open()`` gives a new file under the current umask."""
    return 0o666 & ~umask()


def dir_mode() -> int:
    """The mode ``mkdir`` gives a new folder under the current umask."""
    return 0o777 & ~umask()


def new_temp(folder: str | Path, prefix: str, suffix: str = "", *, private: bool = False) -> Path:
    """Create an empty file ``folder/<prefix><random><suffix>`` that did not exist before (O_EXCL) and
    return its path: mode 0o666 less the umask, or 0o600 when ``private``."""
    folder = Path(folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY
    for _ in range(100):
        path = folder / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            fd = os.open(path, flags, 0o600 if private else 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return path
    raise FileExistsError(f"no free temporary name {prefix}*{suffix} in {folder}")


def write_atomic(dest: str | Path, write: Callable[[Path], object], *, prefix: str = ".eatlas-tmp-",
                 suffix: str | None = None, private: bool = False, fsync: bool = False) -> Path:
    """``write(tmp)`` writes the content to a temporary file beside ``dest`` (made by :func:`new_temp`),
    which then replaces ``dest`` in one rename; on any error or interrupt the temporary file is removed
    and ``dest`` is left as it was. ``suffix`` defaults to that of ``dest`` (so libraries that choose a
    format by it, e.g. pyarrow or matplotlib, see the right one). ``fsync``: flush the content to disk
    before the rename (a crash then leaves the old file or the new one, never an empty one)."""
    dest = Path(dest)
    tmp = new_temp(dest.parent, prefix, dest.suffix if suffix is None else suffix, private=private)
    try:
        write(tmp)
        if fsync:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def write_text(dest: str | Path, text: str, **kw) -> Path:
    """:func:`write_atomic` of a UTF-8 text."""
    return write_atomic(dest, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), **kw)


def new_temp_dir(parent: str | Path, prefix: str) -> Path:
    """Create a new empty folder ``parent/<prefix><random>`` with mode 0o777 less the umask (unlike
    ``tempfile.mkdtemp``'s 0o700: its contents are moved out as the user's outputs)."""
    parent = Path(parent)
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir(0o777)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary folder name {prefix}* in {parent}")


def umask_folders(folder: str | Path) -> None:
    """Give every folder under ``folder`` (not ``folder`` itself) the mode the umask gives: for trees another
    program wrote with a fixed folder mode (DuckDB's ``COPY ... PARTITION_BY`` makes its folders 0o755
    whatever the umask; its files already get 0o666 less the umask)."""
    mode = dir_mode()
    for base, dirs, _ in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(base, name), mode)
