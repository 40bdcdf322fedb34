"""Nothing computed is lost: a run that cannot be written into the database is kept beside it.

When the write of a finished run fails (the database is in use past ``--wait``, the disk is full, its
schema drifted), the run is written as an export folder ``eatlas-unsaved/<run id>/`` beside the database,
in the format ``eatlas results export`` writes (eatlas.store.results_io.save_unsaved), and the error says
the one command that imports it later. ``eatlas run`` and ``eatlas sweep`` both store through here.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from ..errors import EatlasError


def import_command(folder: str | Path, db: str | Path) -> str:
    """The command that merges a kept folder into the database."""
    return f"eatlas results import {shlex.quote(str(folder))} --db {shlex.quote(str(db))}"


class NotWritten(EatlasError):
    """A computed run the database did not take; ``folder``: where it is kept (None: it could not be kept)."""

    def __init__(self, message: str, *, file: str, hint: str | None, folder: Path | None, cause: EatlasError):
        super().__init__(message, file=file, hint=hint)
        self.folder, self.cause = folder, cause


def keep(db: str | Path, reg, name: str, **what) -> Path:
    """Write ``what`` (run, results, tables and/or failures) into ``eatlas-unsaved/<name>/`` beside ``db``."""
    from ..store.results_io import save_unsaved

    try:
        return save_unsaved(db, name, reg, **what)
    except EatlasError:
        raise
    except Exception as e:      # disk full, permissions, ... : said in one line by the caller
        raise EatlasError(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}",
                          file=str(Path(db).parent / "eatlas-unsaved" / name)) from None


def kept(cause: EatlasError, db: str | Path, run: dict, results: list[dict], reg, *,
         tables: dict | None = None) -> NotWritten:
    """After ``cause`` stopped the write of a computed run: keep the run in ``eatlas-unsaved/<run id>/`` and
    return the :class:`NotWritten` error that says where, and the command that imports it."""
    try:
        folder = keep(db, reg, run["run_id"], run=run, results=results, tables=tables)
    except EatlasError as k:
        return NotWritten(f"{cause.message}; the run was computed but could not be kept either: {k.render()}",
                          file=str(db), hint=cause.hint, folder=None, cause=cause)
    hint = f"import it when the database can be written: {import_command(folder, db)}"
    return NotWritten(f"{cause.message}; the run was computed but not written, and is kept in {folder}",
                      file=str(db), hint=hint + (f"; {cause.hint}" if cause.hint else ""), folder=folder,
                      cause=cause)


def write_or_keep(db: str | Path, run: dict, results: list[dict], reg, *, tables: dict | None = None,
                  wait_s: float = 0.0) -> None:
    """Write the run into ``db`` (one transaction), or, if that fails, keep it in ``eatlas-unsaved/<run id>/``
    and raise :class:`NotWritten` saying where and how to import it."""
    from ..methods import rows_checked_at_write
    from ..store.db import write_run

    try:
        write_run(db, run, results, reg, wait_s=wait_s, extra_tables=tables,
                  check=rows_checked_at_write(run.get("method")))
    except EatlasError as e:
        raise kept(e, db, run, results, reg, tables=tables) from None
