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

import errno
import os
import secrets
import stat
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


# ------------------------------------------------------------------ writing under a folder, through no link
# A command that writes many files (a site of a thousand pages) checks its paths once and then writes for tens of
# seconds; a folder on the way turned into a symbolic link meanwhile must not carry a single byte elsewhere. So
# the files of an output are written relative to a descriptor of its folder: every folder below it is opened
# with O_NOFOLLOW (a link there is refused, never followed), each file is written into a private temporary folder
# (mode 0o700, made with mkdir, which fails if the name exists) opened the same way, through /proc/self/fd where
# there is one (so even a rename of that folder redirects nothing), and renamed into place within the folder's
# descriptor: a hard-linked destination is replaced, never written through.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
SAFE = bool(_NOFOLLOW) and all(f in os.supports_dir_fd for f in (os.open, os.mkdir, os.rename, os.unlink, os.stat))
_PROC = os.path.isdir("/proc/self/fd")


class LinkOnTheWay(OSError):
    """A folder on the way to a file being written is a symbolic link (or not a folder) now."""


def open_dir(path: str | Path) -> int:
    """A descriptor of the folder ``path`` (created with its parents if missing)."""
    Path(path).mkdir(parents=True, exist_ok=True)
    return os.open(path, _DIR)


def descend(base_fd: int, parts, *, create: bool = False, shown: str | Path = "") -> int:
    """A new descriptor of the folder ``parts`` below ``base_fd``, no link followed (LinkOnTheWay otherwise);
    missing folders are made when ``create`` (mode 0o777 less the umask)."""
    fd = os.dup(base_fd)
    done = Path(shown)
    for name in parts:
        done = done / name
        try:
            try:
                nfd = os.open(name, _DIR | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = os.open(name, _DIR | _NOFOLLOW, dir_fd=fd)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            raise LinkOnTheWay(e.errno, f"{done} is a symbolic link or not a folder now; nothing was written "
                                        "through it") from None
        os.close(fd)
        fd = nfd
    return fd


def _identity(name: str, dir_fd: int) -> tuple[int, int] | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def write_under(base_fd: int, rel: str, write: Callable[[Path], object], *, prefix: str = ".eatlas-tmp-",
                shown: str | Path = "", fsync: bool = False, protect: frozenset = frozenset()) -> Path:
    """``write(tmp)`` writes a file, which then replaces ``rel`` (a relative POSIX path) below the folder
    ``base_fd``: see the comment above. ``protect``: (st_dev, st_ino) of files never to be replaced (the results
    database): refused by identity, whatever the name. Returns ``shown/rel``."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise ValueError(f"not a relative path: {rel!r}")
    name = parts[-1]
    dfd = descend(base_fd, parts[:-1], create=True, shown=shown)
    try:
        for _ in range(100):
            tname = f"{prefix}{secrets.token_hex(6)}"
            try:
                os.mkdir(tname, 0o700, dir_fd=dfd)
                break
            except FileExistsError:
                continue
        pfd = os.open(tname, _DIR | _NOFOLLOW, dir_fd=dfd)
        try:
            where = Path(f"/proc/self/fd/{pfd}") if _PROC else Path(shown, *parts[:-1], tname)
            write(where / name)
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(f"{Path(shown, rel)}: what was written is not a regular file")
            if fsync:
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW, dir_fd=pfd)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            if protect and _identity(name, dfd) in protect:
                raise OSError(f"{Path(shown, rel)} is the results database (same file); not replaced")
            os.rename(name, name, src_dir_fd=pfd, dst_dir_fd=dfd)
        finally:
            for left in os.listdir(pfd):
                try:
                    os.unlink(left, dir_fd=pfd)
                except OSError:
                    pass
            os.close(pfd)
            try:
                os.rmdir(tname, dir_fd=dfd)
            except OSError:
                pass
    finally:
        os.close(dfd)
    return Path(shown, *parts)


def unlink_under(base_fd: int, rel: str, *, shown: str | Path = "") -> None:
    """Remove the file ``rel`` below ``base_fd``, no link on the way followed (LinkOnTheWay otherwise)."""
    parts = [p for p in rel.split("/") if p]
    dfd = descend(base_fd, parts[:-1], shown=shown)
    try:
        os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)


def rename_into(src_dir_fd: int, name: str, dst_dir_fd: int) -> None:
    """Move ``name`` from one folder descriptor to another (same file system), replacing what is there."""
    os.rename(name, name, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
