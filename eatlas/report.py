"""A single self-contained HTML page of a results database (no network resources, no scripts).

Sections (each an element id): ``runs``, ``matrix`` (tests x models, effect sizes with Holm marks, as
May et al. 2019 Figure 1), ``eat-map`` (ML-EAT Level 2, from a table ``mleat_results``), ``ceat``
(CEAT draws, from ``ceat_results`` and ``ceat_draws``), ``reproduction`` (ours against the published
effect sizes) and ``provenance`` (every stimulus set). Figures are inline SVG, drawn with matplotlib's
Agg canvas (the plots) or written directly (the EAT-Maps).
"""
from __future__ import annotations

import datetime as _dt
import io
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from .errors import EatlasError
from .registry import LEVELS, Registry
from .store import connect
from .weat import holm

TEMPLATE = Path(__file__).with_name("report_template.html.j2")
SECTIONS = ("runs", "matrix", "eat-map", "ceat", "reproduction", "provenance")
MAX_ES = 2.0   # effect sizes lie in [-2, 2]

# EAT pattern -> (association of X, association of Y) with A or B (ML-EAT, Wolfe et al. 2024)
PATTERN_ASSOCIATIONS = {
    "A-Uniform": ("A", "A"), "B-Uniform": ("B", "B"), "AB-Divergent": ("A", "B"), "BA-Divergent": ("B", "A"),
    "AX-Singular": ("A", None), "BX-Singular": ("B", None), "AY-Singular": (None, "A"), "BY-Singular": (None, "B"),
    "Non-Directional": (None, None),
}


# ------------------------------------------------------------------ reading the database

def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def _resolve_run(con, run_id: str) -> str:
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE starts_with(run_id, ?)", [run_id]).fetchall()]
    if len(ids) != 1:
        raise EatlasError(f"{'no' if not ids else 'more than one'} run matches {run_id!r}", field="run",
                          hint="'eatlas sql \"SELECT run_id, model, finished_at FROM runs\"' lists the runs")
    return ids[0]


def _selected_runs(con, tables: set[str], table: str, run_id: str | None) -> list[str]:
    """The given run if it has rows in ``table``, else the latest run per model that has."""
    if table not in tables:
        return []
    if run_id:
        return [run_id] if con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchone()[0] \
            else []
    return [r[0] for r in con.execute(f"""
        SELECT run_id FROM (
          SELECT run_id, row_number() OVER (PARTITION BY model ORDER BY finished_at DESC, run_id) AS n
          FROM runs WHERE run_id IN (SELECT DISTINCT run_id FROM {table}))
        WHERE n = 1 ORDER BY run_id""").fetchall()]


def _rows(con, table: str, run_ids: list[str]) -> pd.DataFrame:
    if not run_ids:
        return pd.DataFrame()
    marks = ", ".join("?" * len(run_ids))
    return con.execute(f"SELECT t.*, r.model AS run_model FROM {table} t JOIN runs r USING (run_id) "
                       f"WHERE t.run_id IN ({marks})", run_ids).fetchdf()


def _column(df: pd.DataFrame, *names: str) -> pd.Series | None:
    for n in names:
        if n in df.columns:
            return pd.to_numeric(df[n], errors="coerce")
    return None


# ------------------------------------------------------------------ figures

def _figure(figsize):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "eatlas", "font.size": 9}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _test_order(reg: Registry | None, test_id: str, level: str) -> tuple:
    order = list(reg.tests) if reg is not None else []
    return (order.index(test_id) if test_id in order else len(order), test_id,
            LEVELS.index(level) if level in LEVELS else len(LEVELS))


def matrix(results: pd.DataFrame, runs: pd.DataFrame, reg: Registry | None, alpha: float) -> dict | None:
    """Tests x models: effect sizes, marks '*' (p < alpha) and '**' (Holm over all cells shown)."""
    ok = results[results["status"] == "ok"].copy() if len(results) else results
    if not len(ok):
        return None
    ok["holm"] = holm(ok["p_value"].to_numpy(), alpha)
    ok["mark"] = np.where(ok["holm"], "**", np.where(ok["p_value"] < alpha, "*", ""))
    col_of = {r.run_id: f"{r.model}\n{r.run_id[:8]}" for r in runs.itertuples()}
    ok["column"] = ok["run_id"].map(col_of)
    ok["row"] = ok["test_id"] + " [" + ok["level"] + "]"
    rows = sorted(ok["row"].unique(), key=lambda r: _test_order(reg, *r[:-1].split(" [")))
    cols = sorted(ok["column"].unique())
    es = ok.pivot(index="row", columns="column", values="effect_size").reindex(index=rows, columns=cols)
    marks = ok.pivot(index="row", columns="column", values="mark").reindex(index=rows, columns=cols)

    fig = _figure((2.2 + 1.25 * len(cols), 1.4 + 0.24 * len(rows)))
    ax = fig.add_subplot()
    grid = es.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", vmin=-MAX_ES, vmax=MAX_ES, aspect="auto")
    ax.set_facecolor("#dddddd")
    for i in range(len(rows)):
        for j in range(len(cols)):
            v = grid[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:+.2f}{marks.iat[i, j]}", ha="center", va="center", fontsize=7,
                        color="white" if abs(v) > 1.2 else "black")
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.tick_params(length=0)
    fig.colorbar(im, ax=ax, shrink=min(1.0, 8 / max(len(rows), 1)), label="effect size (d)")
    return {"svg": _svg(fig), "n_cells": len(ok), "n_holm": int(ok["holm"].sum()), "alpha": alpha,
            "n_not_run": int((results["status"] != "ok").sum())}


def eat_maps(df: pd.DataFrame, reg: Registry | None) -> list[dict]:
    """One 2x2 map per ML-EAT row: columns X, Y; rows A, B; filled where the pattern says associated."""
    dx, px = _column(df, "x_effect_size"), _column(df, "x_p_value")
    dy, py = _column(df, "y_effect_size"), _column(df, "y_p_value")
    if dx is None or dy is None or "pattern" not in df.columns:
        raise EatlasError("table mleat_results lacks the Level 2 columns",
                          hint="expected x_effect_size, x_p_value, y_effect_size, y_p_value, pattern")
    maps = []
    for i, r in enumerate(df.itertuples()):
        assoc = PATTERN_ASSOCIATIONS.get(r.pattern, (None, None))
        names = _concept_names(reg, r.test_id)
        cells = []
        for role_i, (d, p) in enumerate(((dx.iat[i], px.iat[i] if px is not None else np.nan),
                                         (dy.iat[i], py.iat[i] if py is not None else np.nan))):
            towards = "A" if d >= 0 else "B"
            for row_i, attr in enumerate("AB"):
                cells.append({"x": role_i, "y": row_i, "associated": assoc[role_i] == attr,
                              "text": [f"d = {d:+.2f}", f"p = {p:.3g}"] if attr == towards else []})
        maps.append({"title": f"{r.test_id} [{r.level}]", "model": r.run_model, "pattern": r.pattern,
                     "names": names, "cells": cells})
    return sorted(maps, key=lambda m: (m["model"], _test_order(reg, *m["title"][:-1].split(" ["))))


def _concept_names(reg: Registry | None, test_id: str) -> list[str]:
    if reg is not None and test_id in reg.tests:
        names = [reg.get_set(reg.tests[test_id].sets[r]).concept for r in "xyab"]
        return [n if len(n) <= 16 else n[:15] + "…" for n in names]
    return ["X", "Y", "A", "B"]


def ceat_histograms(res: pd.DataFrame, draws: pd.DataFrame) -> dict | None:
    ces = _column(res, "ces")
    if not len(res) or ces is None or not len(draws):
        return None
    res = res.assign(ces=ces).sort_values(["run_model", "test_id"])
    n = len(res)
    ncols = min(4, n)
    nrows = -(-n // ncols)
    fig = _figure((3.2 * ncols, 2.4 * nrows))
    for k, r in enumerate(res.itertuples()):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        es = pd.to_numeric(draws.loc[(draws["run_id"] == r.run_id) & (draws["test_id"] == r.test_id),
                                     "effect_size"], errors="coerce").dropna()
        ax.hist(es, bins=40, color="#7a9cc6")
        ax.axvline(r.ces, color="#b2182b", lw=1.5, label=f"CES {r.ces:+.2f}")
        ax.set_title(f"{r.test_id} | {r.run_model}", fontsize=8)
        ax.set_xlabel("effect size per draw", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return {"svg": _svg(fig), "n": n}


def reproduction_scatter(df: pd.DataFrame) -> dict | None:
    if len(df):     # a published 'inf' (or any value that is not a finite number) is not a number here
        df = df.replace([np.inf, -np.inf], np.nan)
    df = df.dropna(subset=["our_effect_size", "published_effect_size"]) if len(df) else df
    if not len(df):
        return None
    fig = _figure((5.2, 5.0))
    ax = fig.add_subplot()
    lim = max(MAX_ES, float(np.nanmax(np.abs(df[["our_effect_size", "published_effect_size"]].to_numpy()))) * 1.05)
    ax.plot([-lim, lim], [-lim, lim], color="#888888", lw=1, ls="--", label="identity")
    for (paper, level), g in df.groupby(["paper", "level"]):
        ax.scatter(g["published_effect_size"], g["our_effect_size"], s=18, alpha=0.8, label=f"{paper} [{level}]")
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("published effect size")
    ax.set_ylabel("our effect size")
    ax.legend(fontsize=7, loc="upper left")
    r = float(np.corrcoef(df["published_effect_size"], df["our_effect_size"])[0, 1]) if len(df) > 2 else None
    return {"svg": _svg(fig), "n": len(df), "r": r, "mad": float(df["difference"].abs().mean())}


def provenance(reg: Registry | None) -> list[dict]:
    if reg is None:
        return []
    out = []
    for s in reg.sets.values():
        src = s.source
        cite = (reg.sources.get(src.get("paper")) or {}).get("citation", "")
        out.append({"ref": s.ref, "concept": s.concept, "paper": src.get("paper"), "citation": cite,
                    "section": src.get("section"), "table": src.get("table"),
                    "authors_file": src.get("authors_file"), "license": s.license, "notes": s.notes, "file": s.file})
    return out


# ------------------------------------------------------------------ the page

def build_report(db: str | Path, *, run_id: str | None = None, registry: str | Path | None = None,
                 alpha: float = 0.01) -> str:
    """The report as one HTML string."""
    from jinja2 import Environment, StrictUndefined

    from .registry import load_registry

    reg = load_registry(registry)
    con = connect(db, read_only=True)
    try:
        tables = _tables(con)
        if "runs" not in tables:
            raise EatlasError("the database holds no runs", file=str(db), hint="run 'eatlas run' first")
        if run_id:
            run_id = _resolve_run(con, run_id)
        sel = {t: _selected_runs(con, tables, t, run_id) for t in ("results", "mleat_results", "ceat_results")}
        all_ids = sorted(set().union(*sel.values()))
        runs = con.execute(f"SELECT * FROM runs WHERE run_id IN ({', '.join('?' * len(all_ids))}) "
                           "ORDER BY finished_at", all_ids).fetchdf() if all_ids else pd.DataFrame(columns=["run_id"])
        results = _rows(con, "results", sel["results"])
        mleat = _rows(con, "mleat_results", sel["mleat_results"])
        ceat = _rows(con, "ceat_results", sel["ceat_results"])
        draws = _rows(con, "ceat_draws", sel["ceat_results"]) if "ceat_draws" in tables else pd.DataFrame()
        repro = _rows(con, "reproduction", sel["results"]) if "reproduction" in tables else pd.DataFrame()
    finally:
        con.close()
    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    page = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return page.render(
        version=__version__, generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        db=str(db), run_id=run_id, registry_root=str(reg.root),
        runs=[{**r, "n_results": int((results["run_id"] == r["run_id"]).sum()) if len(results) else 0}
              for r in runs.astype(object).where(runs.notna(), None).to_dict("records")],   # NaN -> blank
        matrix=matrix(results, runs, reg, alpha) if len(results) else None,
        mleat_table="mleat_results" in tables, eat_maps=eat_maps(mleat, reg) if len(mleat) else [],
        ceat_table="ceat_results" in tables, ceat=ceat_histograms(ceat, draws) if len(ceat) else None,
        reproduction=reproduction_scatter(repro) if len(repro) else None,
        sets=provenance(reg), svg_safe=_safe,
        sources=sorted((k, (v or {}).get("citation", "")) for k, v in reg.sources.items()))


def _safe(svg: str):
    from markupsafe import Markup

    return Markup(svg)


def write_report(db: str | Path, out: str | Path, **kw) -> Path:
    """Write the report to ``out``: never over the database, a registry file or a file eatlas did not
    write (eatlas.outputs), checked before the report is built."""
    from .outputs import Outputs
    from .registry import default_root

    out = Path(out)
    root = kw.get("registry") or default_root()
    target = Outputs(out.parent, db=db, registry_root=root, what="report")
    target.check(out.name)
    html = build_report(db, **kw)
    return target.write_text(out.name, html)
