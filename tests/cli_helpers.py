"""Helpers the command-line tests share: a command run as a user runs it, its one-line error, a query of the
results store."""
from __future__ import annotations

import duckdb


def cli(capsys, *args) -> tuple[int, str, str]:
    """``eatlas ARGS`` as in a new process (the registry read again: a test may have changed it); its exit
    code, standard output and standard error; never a traceback."""
    from eatlas.cli import main
    from eatlas.registry import base

    base._DEFAULT.clear()
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err and "Traceback" not in cap.out
    return rc, cap.out, cap.err


def one_line_error(rc: int, err: str, *needles: str) -> None:
    """Exit 2 and one line 'error: ...' holding every needle."""
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"


def rows(db, sql: str) -> list[tuple]:
    """The rows of a query of a results file, opened read-only and closed again."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
