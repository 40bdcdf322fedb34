"""Where eatlas may write: every output (report, publish, export, EAT-Maps) goes through here.

A command writes only files it wrote itself before, never the results database, a registry file,
or a file the user put there. Each folder eatlas writes into holds a manifest,
``.eatlas-manifest.json``: the path (relative to that folder) and sha256 of every file eatlas wrote
there. An existing file may be replaced only when the manifest lists it with the hash it still has
(so a file the user edited since is refused too); a file is written to a temporary name in the
same folder and renamed into place (eatlas.files: with the permissions the user's umask gives),
then recorded.

Also here: :func:`neutralise_csv`, the OWASP defence against formula injection in CSV outputs.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from . import files as _files
from .errors import EatlasError
from .files import write_atomic

if TYPE_CHECKING:
    import pandas as pd

MANIFEST = ".eatlas-manifest.json"
TEMP_PREFIX = ".eatlas-tmp-"        # a file being written, renamed into place when whole
REGISTRY_PARTS = ("registry", "templates", "schemas", "loaders")    # folders of a registry root that eatlas reads
REGISTRY_FILES = ("catalog.yaml",)


# What this process has written through here, folder -> (what, files): an interrupted command says so, rather
# than "nothing was written" (main() clears it at the start of each command).
_WRITTEN: dict[Path, list] = {}


def clear_written() -> None:
    _WRITTEN.clear()


def _note(folder: Path, what: str) -> None:
    _WRITTEN.setdefault(Path(folder), [what, 0])[1] += 1


def written_summary() -> str:
    """What the command wrote before it was stopped, for its last line: each folder and how many files, which
    its manifest records (a new run of the command replaces them), or "nothing was written"."""
    if not _WRITTEN:
        return "nothing was written"
    parts = []
    for folder, (what, n) in _WRITTEN.items():
        rec = f", recorded in {folder / MANIFEST}" if (folder / MANIFEST).is_file() and what != "report" else ""
        parts.append(f"{n} file(s) of the {what} in {folder}{rec}")
    return ("wrote " + "; ".join(parts) + "; the rest was not written (files of an earlier one are left as they "
            "were): run the command again to finish")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _same(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _registry_roots(registry_root: str | Path | None) -> tuple[Path, ...]:
    """The registries an output must never touch, resolved: the one given, the one ``EATLAS_REGISTRY`` names and
    the bundled one (whatever a caller passed)."""
    return _resolved_roots(None if registry_root is None else str(registry_root), os.environ.get("EATLAS_REGISTRY"))


@functools.lru_cache(maxsize=32)
def _resolved_roots(registry_root: str | None, env: str | None) -> tuple[Path, ...]:
    from .paths import data_root

    roots = [Path(registry_root)] if registry_root is not None else []
    if env:
        roots.append(Path(env))
    try:
        roots.append(data_root())
    except Exception:      # noqa: BLE001 - no bundled registry found: nothing more to protect
        pass
    return tuple(dict.fromkeys(r.resolve() for r in roots))


def protected_reason(path: str | Path, *, db: str | Path | None = None,
                     registry_root: str | Path | None = None) -> str | None:
    """Why ``path`` must never be written or removed by an output (None: it may be): the results database (and
    its log), a file of a registry (the one given, ``EATLAS_REGISTRY``'s, the bundled one)."""
    p = Path(path)
    if db is not None:
        dbp = Path(db)
        for q in (dbp, Path(str(dbp) + ".wal")):
            if _same(p, q):
                return "it is the results database" if q == dbp else "it is the results database's log"
    rp = p.resolve()
    for root in _registry_roots(registry_root):
        if any(rp == root / f for f in REGISTRY_FILES) or \
                any(rp.is_relative_to(root / d) for d in REGISTRY_PARTS):
            return f"it is inside the registry ({root})"
    return None


def outside_reason(folder: str | Path, rel) -> str | None:
    """Why ``folder/rel`` is not a file inside ``folder`` (None: it is): ``rel`` must be a relative path without
    ``..`` that, once every symbolic link on the way is resolved, still lies inside ``folder``. Every path an
    output removes or replaces through a manifest is checked so, so a manifest someone else wrote (a folder
    shared or unpacked) cannot name a file elsewhere."""
    if not isinstance(rel, str) or not rel.strip() or "\x00" in rel:
        return "it is not a path"
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive \
            or rel.startswith(("/", "\\")):
        return "it is an absolute path"
    if ".." in PurePosixPath(rel).parts or ".." in PureWindowsPath(rel).parts:
        return "it climbs out of the folder with '..'"
    base = Path(folder).resolve()
    try:
        target = (Path(folder) / rel).resolve()
    except (OSError, RuntimeError):
        return "its symbolic links cannot be resolved"
    if target == base or not target.is_relative_to(base):
        return "a symbolic link on the way leads out of the folder"
    return None


def safe_output_path(path: str | Path, *, db: str | Path | None = None, registry_root: str | Path | None = None,
                     what: str = "output") -> Path:
    """``path`` if an output may be written there (see :class:`Outputs`), else a one-line EatlasError."""
    p = Path(path)
    Outputs(p.parent, db=db, registry_root=registry_root, what=what).check(p.name)
    return p


class Outputs:
    """The files eatlas writes into ``folder`` and the manifest recording them."""

    def __init__(self, folder: str | Path, *, db: str | Path | None = None, registry_root: str | Path | None = None,
                 what: str = "output"):
        self.folder, self.db, self.registry_root, self.what = Path(folder), db, registry_root, what
        self.entries: dict[str, str] = self._read_manifest()
        self._fd: int | None = None        # the folder, opened at the first write: every file goes below it

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def _base(self) -> int:
        if self._fd is None:
            self._fd = _files.open_dir(self.folder)
        return self._fd

    def _protected_ids(self) -> frozenset:
        """(st_dev, st_ino) of the results database and its log: never replaced, whatever their name."""
        out = set()
        if self.db is not None:
            for q in (Path(self.db), Path(str(self.db) + ".wal")):
                try:
                    st = os.stat(q)
                    out.add((st.st_dev, st.st_ino))
                except OSError:
                    pass
        return frozenset(out)

    # ------------------------------------------------------------------ the manifest
    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST

    def _read_manifest(self) -> dict[str, str]:
        if self.folder.exists() and not self.folder.is_dir():
            raise EatlasError("not a folder", file=str(self.folder), hint=f"the {self.what} needs a folder there")
        try:
            doc = json.loads(self.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise EatlasError(f"unreadable manifest of the files eatlas wrote: {e}", file=str(self.manifest),
                              hint="remove the folder's eatlas outputs and the manifest, or write elsewhere") from None
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise EatlasError("not a manifest of eatlas outputs", file=str(self.manifest),
                              hint="write into another folder")
        for rel in files:       # before anything is touched: every entry a file of this folder that may be replaced
            why = outside_reason(self.folder, rel)
            if why is None and rel == MANIFEST:
                why = "it is the manifest itself"
            if why is None:
                why = protected_reason(self.folder / rel, db=self.db, registry_root=self.registry_root)
            if why:
                raise EatlasError(f"the manifest lists {rel!r}, which eatlas never writes there ({why}); refused, "
                                  "nothing was written or removed", file=str(self.manifest),
                                  hint="eatlas did not write this manifest: write into a new folder")
        return dict(files)

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"written_by": "eatlas", "files": dict(sorted(self.entries.items()))}, indent=1)
        self._replace(MANIFEST, lambda tmp: Path(tmp).write_text(text + "\n", encoding="utf-8"))

    # ------------------------------------------------------------------ checks
    def owned(self, rel: str) -> bool:
        """Listed in the manifest with the content it has now (and a file inside the folder)."""
        p = self.folder / rel
        return rel in self.entries and outside_reason(self.folder, rel) is None and p.is_file() and \
            not p.is_symlink() and sha256_of(p) == self.entries[rel]

    def check(self, rel: str) -> Path:
        """Raise unless ``folder/rel`` may be (over)written."""
        p = self.folder / rel
        why = outside_reason(self.folder, rel) or protected_reason(p, db=self.db, registry_root=self.registry_root)
        if why is None and rel == MANIFEST:
            why = "it is eatlas's manifest"
        if why is None and (p.exists() or p.is_symlink()):
            if p.is_dir() and not p.is_symlink():
                why = "a folder is in the way"
            elif rel not in self.entries:
                why = "it exists and eatlas did not write it"
            elif not self.owned(rel):
                why = "it was changed since eatlas wrote it"
        if why:
            raise EatlasError(f"will not write the {self.what} there: {why}", file=str(p),
                              hint="choose another path, or move that file away first")
        return p

    def check_all(self, rels) -> None:
        for rel in rels:
            self.check(rel)

    # ------------------------------------------------------------------ writing
    def _replace(self, rel: str, write) -> Path:
        """``write(tmp)`` into ``.eatlas-tmp-*`` beside the file, renamed into place (eatlas.files: the
        mode the user's umask gives; the temporary file is removed on any error or interrupt)."""
        if not _files.SAFE:
            dest = self.folder / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            return write_atomic(dest, write, prefix=TEMP_PREFIX)
        try:
            return _files.write_under(self._base(), rel, write, prefix=TEMP_PREFIX, shown=self.folder,
                                      protect=self._protected_ids())
        except _files.LinkOnTheWay as e:
            raise EatlasError(f"will not write the {self.what} there: {e.strerror}", file=str(self.folder / rel),
                              hint="a folder inside the output changed while it was written; write into a new "
                                   "folder") from None

    def write(self, rel: str, write, *, save: bool = True, checked: bool = False) -> Path:
        """``write(tmp_path)`` writes the file; it is renamed to ``folder/rel`` and recorded. ``checked``: the
        caller has just checked ``rel`` (:meth:`check_all`, before writing any of many files)."""
        if not checked:
            self.check(rel)
        dest = self._replace(rel, write)
        self.entries[rel] = sha256_of(dest)
        _note(self.folder, self.what)
        if save:
            self.save()
        return dest

    def write_text(self, rel: str, text: str, *, save: bool = True, checked: bool = False) -> Path:
        return self.write(rel, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), save=save, checked=checked)

    def record(self, rel: str, *, save: bool = True) -> None:
        """Record a file written by other means (after :meth:`check`)."""
        self.entries[rel] = sha256_of(self.folder / rel)
        if save:
            self.save()

    def remove_leftovers(self) -> list[Path]:
        """Remove the temporary files (``.eatlas-tmp-*``, see :meth:`_replace`) a killed eatlas left in the folder
        and its subfolders: eatlas alone names files so, and one that is not renamed into place is never used."""
        gone = []
        if self.folder.is_dir():
            for base, dirs, files in os.walk(self.folder):     # symbolic links to folders are not followed
                for name in [d for d in dirs if d.startswith(TEMP_PREFIX)]:     # a private folder of write_under
                    p = Path(base) / name
                    dirs.remove(name)
                    if not p.is_symlink() and outside_reason(self.folder, p.relative_to(self.folder).as_posix()) \
                            is None:
                        import shutil
                        shutil.rmtree(p, ignore_errors=True)
                        gone.append(p)
                for name in files:
                    p = Path(base) / name
                    if name.startswith(TEMP_PREFIX) and p.is_file() and not p.is_symlink() and \
                            outside_reason(self.folder, p.relative_to(self.folder).as_posix()) is None:
                        p.unlink()
                        gone.append(p)
        return gone

    def forget(self, rel: str) -> None:
        """Remove a file eatlas wrote and no longer writes (only if unchanged, inside the folder and not
        protected: :func:`outside_reason`, :func:`protected_reason`), and its empty folders."""
        p = self.folder / rel
        if self.owned(rel) and protected_reason(p, db=self.db, registry_root=self.registry_root) is None:
            if _files.SAFE:
                try:
                    _files.unlink_under(self._base(), rel, shown=self.folder)
                except (_files.LinkOnTheWay, FileNotFoundError):
                    self.entries.pop(rel, None)
                    return
            else:
                p.unlink()
            for d in p.parents:
                if d == self.folder or not d.is_relative_to(self.folder):
                    break
                try:
                    d.rmdir()
                except OSError:
                    break
        self.entries.pop(rel, None)


# ---------------------------------------------------------------------- a single file (the report)
# A file written alone into a folder the user names (``eatlas report ~/report.html``) keeps no manifest beside it:
# it carries its own record, a last line with the sha256 of the text before it, so it may be replaced later only
# while it is still exactly what eatlas wrote; a file without that line, or edited since, is refused.
STAMP = "<!-- written by eatlas; sha256 of the text above: {} -->\n"
_STAMP_RE = re.compile(r"<!-- written by eatlas; sha256 of the text above: ([0-9a-f]{64}) -->\n\Z")


def stamped(text: str) -> str:
    """``text`` with its :data:`STAMP` line."""
    if not text.endswith("\n"):
        text += "\n"
    return text + STAMP.format(hashlib.sha256(text.encode("utf-8")).hexdigest())


def stamp_intact(path: str | Path) -> bool:
    """``path`` ends with the :data:`STAMP` line of the text above it: eatlas wrote it and no one changed it."""
    return _stamp(path) == "intact"


def _stamp(path: str | Path) -> str | None:
    """"intact" (:func:`stamp_intact`), "changed" (it holds eatlas's stamp line, but the text is not the one the
    line records), or None (no stamp: eatlas did not write it)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    cut = data.rfind(b"<!-- written by eatlas;")
    if cut < 0:
        return None
    m = _STAMP_RE.match(data[cut:].decode("utf-8", "replace"))
    return "intact" if m and hashlib.sha256(data[:cut]).hexdigest() == m[1] else "changed"


def write_single(path: str | Path, text: str, *, db: str | Path | None = None,
                 registry_root: str | Path | None = None, what: str = "output", check_only: bool = False) -> Path:
    """Write ``text`` (stamped: :func:`stamped`) to ``path`` and nothing else into its folder: never over the
    database, a registry file, a folder or link, or a file eatlas did not write or that changed since (a file an
    earlier eatlas recorded in the folder's manifest, unchanged, may be replaced too). ``check_only``: check and
    return, writing nothing."""
    p = Path(path)
    why = protected_reason(p, db=db, registry_root=registry_root)
    if why is None and p.is_symlink():
        why = "it is a symbolic link"
    elif why is None and p.exists():
        if not p.is_file():
            why = "it is not a regular file"
        else:
            state = _stamp(p)
            if state == "changed" or (state is None and p.name in _manifest_entries(p.parent)
                                      and not _listed_unchanged(p)):
                why = "it was changed since eatlas wrote it"
            elif state is None and not _listed_unchanged(p):
                why = "it exists and eatlas did not write it"
    if why:
        raise EatlasError(f"will not write the {what} there: {why}", file=str(p),
                          hint="choose another path, or move that file away first")
    if check_only:
        return p
    data = stamped(text).encode("utf-8")
    p.parent.mkdir(parents=True, exist_ok=True)
    if _files.SAFE:         # into a private folder, renamed into place: a hard link there is replaced
        fd = _files.open_dir(p.parent)
        try:
            done = _files.write_under(fd, p.name, lambda tmp: Path(tmp).write_bytes(data), prefix=TEMP_PREFIX,
                                      shown=p.parent)
        finally:
            os.close(fd)
    else:
        done = write_atomic(p, lambda tmp: Path(tmp).write_bytes(data), prefix=TEMP_PREFIX)
    _note(p.parent, what)
    return done


def _manifest_entries(folder: Path) -> dict:
    try:
        return Outputs(folder).entries
    except EatlasError:
        return {}


def _listed_unchanged(p: Path) -> bool:
    """An earlier eatlas kept a manifest beside a single file: listed there with the content it has now."""
    try:
        return Outputs(p.parent).owned(p.name)
    except EatlasError:
        return False


# ---------------------------------------------------------------------- CSV formula injection
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise_cell(v):
    """A text cell a spreadsheet would run as a formula gets a leading ``'`` (OWASP, CSV injection);
    numbers (``-0.5``, ``+1e-3``) and everything else are left as they are."""
    if isinstance(v, str) and v.startswith(_FORMULA_START) and not _NUMBER.fullmatch(v):
        return "'" + v
    return v


def neutralise_csv(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells are safe to open in a spreadsheet (see :func:`neutralise_cell`)."""
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c].dtype):
            out[c] = out[c].map(neutralise_cell)
    out.columns = [neutralise_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out
