"""The stimuli whose leaving out moves a stored effect size most (the ``influence`` table, written by every
WEAT/ML-EAT run; eatlas.stats.robust.leave_one_out): the query behind ``eatlas show-influence`` and the
report's influence table, and a run named by an id prefix."""
from __future__ import annotations

from pathlib import Path

from ..errors import EatlasError

ROLE_NAMES = {"x": "X", "y": "Y", "a": "A", "b": "B"}


# What says which estimate a result's interval is for (eatlas.stats.weat.CI_METHODS).
_ESTIMATE_COLUMNS = ("ci_method", "ci_level", "d_concepts", "concepts_estimable", "d_corrected")


def influence_rows(db: str | Path, run: str, test: str, *, level: str | None = None, top: int = 10):
    """``(run_id, [(level, result row, influence rows sorted by |delta| descending, at most top)])``."""
    from .db import connect

    con = connect(db, read_only=True)    # sandboxed, checked as data
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "runs" not in tables:
            raise EatlasError("the database holds no run", file=str(db), hint="run 'eatlas run' first")
        run_id = resolve_run(con, run)
        from ..methods import all_methods
        method = con.execute("SELECT method FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]
        m = all_methods().get(method)
        if m is not None and not m.effect_size:
            with_d = ", ".join(n for n, x in all_methods().items() if x.effect_size)
            raise EatlasError(f"run {run_id[:8]} is a {method} run: {method} gives no WEAT effect size, so no "
                              "stimulus moves one", field="run", hint=f"show-influence reads runs of {with_d}")
        if "influence" not in tables:
            raise EatlasError("the database has no influence table (written before EATlas stored it)", file=str(db),
                              hint="run the test again")
        cols = {r[0] for r in con.execute("DESCRIBE results").fetchall()}
        if "also_as" in cols:   # a test computed under another id with the same stimuli (results.also_as)
            kept = con.execute("SELECT test_id FROM results WHERE run_id = ? AND list_contains(also_as, ?) "
                               "AND NOT EXISTS (SELECT 1 FROM results WHERE run_id = ? AND test_id = ?) LIMIT 1",
                               [run_id, test, run_id, test]).fetchall()
            test = kept[0][0] if kept else test
        where, params = "run_id = ? AND test_id = ?", [run_id, test]
        if level:
            where, params = where + " AND level = ?", params + [level]
        have = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                          "WHERE table_name = 'results'").fetchall()}
        # the interval's own estimate (a store written before a column existed: NULL)
        extra = ", ".join(c if c in have else f"NULL AS {c}" for c in _ESTIMATE_COLUMNS)
        res = con.execute(f"SELECT level, status, effect_size, ci_low, ci_high, d_loo_min, d_loo_max, sign_stable, "
                          f"{extra} FROM results WHERE {where} ORDER BY level", params).fetchall()
        if not res:
            have = [r[0] for r in con.execute("SELECT DISTINCT test_id || ' [' || level || ']' FROM results "
                                              "WHERE run_id = ? ORDER BY 1", [run_id]).fetchall()]
            raise EatlasError(f"run {run_id[:8]} has no result for test {test!r}"
                              + (f" at level {level!r}" if level else ""), field="test",
                              hint="it has: " + (", ".join(have[:12]) + (" ..." if len(have) > 12 else "")
                                                 if have else "no results"))
        out = []
        for lv, status, *rest in res:
            rows = top_influence(con, run_id, test, lv, top)
            out.append((lv, dict(zip(("status", "effect_size", "ci_low", "ci_high", "d_loo_min", "d_loo_max",
                                      "sign_stable", *_ESTIMATE_COLUMNS), [status, *rest])), rows))
        return run_id, out
    finally:
        con.close()


def resolve_run(con, run_id: str) -> str:
    """The one run whose id starts with ``run_id`` (a prefix), else a one-line error."""
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE starts_with(run_id, ?)", [run_id]).fetchall()]
    if len(ids) != 1:
        raise EatlasError(f"{'no' if not ids else 'more than one'} run matches {run_id!r}", field="run",
                          hint="'eatlas sql \"SELECT run_id, model, finished_at FROM runs\"' lists the runs")
    return ids[0]


def top_influence(con, run_id: str, test_id: str, level: str, top: int) -> list[tuple]:
    """The ``top`` rows ``(role, item, d_without, delta)`` of one result in table ``influence``, the largest
    |delta| first (ties by role and item). Shared by ``show-influence`` and the report's influence table."""
    return con.execute("SELECT role, item, d_without, delta FROM influence WHERE run_id = ? AND test_id = ? "
                       "AND level = ? ORDER BY abs(delta) DESC NULLS LAST, role, item LIMIT ?",
                       [run_id, test_id, level, int(top)]).fetchall()
