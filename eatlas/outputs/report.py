"""A single self-contained HTML page of a results database (no network resources, no scripts).

Sections (each an element id): ``runs``, ``matrix`` (tests x models, effect sizes with Holm marks, as
May et al. 2019 Figure 1), ``forest`` (effect sizes with their bootstrap CIs, models side by side, the
published numbers marked; forest_plots), ``influence`` (beside it: each result's most influential stimuli,
"Bad Seeds"; influence_table), then each method's own sections, from its plug-in's ``report``
(eatlas.methods: ``eat-map``, ML-EAT Level 2; ``ceat``, CEAT draws), ``reproduction`` (ours against the
published effect sizes) and ``provenance`` (the tests, sets and templates the shown runs used). Figures are
inline SVG, drawn with matplotlib's Agg canvas (the plots) or written directly (the EAT-Maps).
"""
from __future__ import annotations

import datetime as _dt
import io
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..console import jinja_finalize
from ..errors import EatlasError
from ..methods import all_methods
from ..paths import package_file
from ..registry.base import LEVELS, Registry
from ..store.db import connect
from ..store.influence import resolve_run

TEMPLATE = package_file("outputs/report_template.html.j2")
SECTIONS = ("results", "runs", "matrix", "forest", "influence", "eat-map", "ceat", "llm-iat", "validity",
            "reproduction", "provenance", "references")
MAX_ES = 2.0   # effect sizes lie in [-2, 2]


# ------------------------------------------------------------------ reading the database

def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def _selected_rows(con, tables: set[str], table: str, keys: tuple[str, ...], run_ids: list[str] | None,
                   model: str | None, all_runs: bool) -> pd.DataFrame:
    """Rows of ``table`` from the chosen runs (``run_ids``), of one ``model``, or all; by default (and within
    a model) the newest run's row per model and ``keys`` (test, level), so a quick one-test run replaces
    only its own cells."""
    if table not in tables:
        return pd.DataFrame()
    sql, params = selection_sql(table, keys, run_ids, model, all_runs)
    return con.execute(sql, params).fetchdf()


def selection_sql(table: str, keys: tuple[str, ...], run_ids: list[str] | None, model: str | None, all_runs: bool,
                  *, columns: str = "t.*, r.model AS run_model") -> tuple[str, list]:
    """The query (and its parameters) of :func:`_selected_rows`: the report and the static site
    (eatlas.outputs.site) choose the same rows."""
    where, params = [], []
    if run_ids:
        where.append(f"t.run_id IN ({', '.join('?' * len(run_ids))})")
        params += run_ids
    if model:
        where.append("r.model = ?")
        params.append(model)
    part = ", ".join(["r.model"] + [f"t.{k}" for k in keys])
    newest = "" if all_runs or run_ids else \
        f"QUALIFY row_number() OVER (PARTITION BY {part} ORDER BY r.finished_at DESC, t.run_id DESC) = 1"
    return (f"SELECT {columns} FROM {table} t JOIN runs r USING (run_id) "
            f"{'WHERE ' + ' AND '.join(where) if where else ''} {newest}", params)


def _rows(con, table: str, run_ids: list[str]) -> pd.DataFrame:
    if not run_ids:
        return pd.DataFrame()
    marks = ", ".join("?" * len(run_ids))
    return con.execute(f"SELECT t.*, r.model AS run_model FROM {table} t JOIN runs r USING (run_id) "
                       f"WHERE t.run_id IN ({marks})", run_ids).fetchdf()


def _column(df: pd.DataFrame, *names: str, numeric: bool = True) -> pd.Series | None:
    """The first of the columns ``names`` that ``df`` has, as numbers (``numeric``: NaN where a value is not one)
    or as it is (a text column, e.g. ``ci_method``); None when it has none of them."""
    for n in names:
        if n in df.columns:
            return pd.to_numeric(df[n], errors="coerce") if numeric else df[n]
    return None


def interval_estimate(df: pd.DataFrame) -> pd.Series:
    """The estimate each row's interval (ci_low/ci_high) is an interval of, by its ``ci_method``: the concepts' d
    (concepts; NaN where not estimable), d_corrected (inversion, earlier versions), else the sample d."""
    d = pd.to_numeric(df["effect_size"], errors="coerce") if "effect_size" in df.columns else \
        pd.Series(np.nan, index=df.index)
    method = _column(df, "ci_method", numeric=False)
    if method is None:
        return d
    for name, col in (("concepts", "d_concepts"), ("inversion", "d_corrected")):
        c = _column(df, col)
        is_it = (method == name).fillna(False).astype(bool)
        d = d.where(~is_it, c if c is not None else np.nan)
    return d


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
    """Tests in natural order of their ids (weat2 before weat10; eatlas.ids), as the CLI and the site list them,
    then levels in their order. ``reg`` is unused (kept for the methods' report sections that pass it)."""
    from ..ids import natural_key
    return (natural_key(test_id), LEVELS.index(level) if level in LEVELS else len(LEVELS))


def matrix(results: pd.DataFrame, runs: pd.DataFrame, reg: Registry | None, alpha: float | None,
           by_run: bool = False) -> dict | None:
    """Tests x models (x runs when ``by_run``): effect sizes, '*' where the result is Holm-significant at its
    run's alpha (eatlas.legend: the mark of the CLI table and the EAT-Maps too)."""
    from ..legend import legend, mark, wrap

    ok = results[results["status"] == "ok"].copy() if len(results) else results
    if not len(ok):
        return None
    ok["mark"] = ok["holm_significant"].map(lambda v: "" if pd.isna(v) else mark(bool(v)))     # NULL: NA or None
    n = 8 if len({r[:8] for r in runs["run_id"]}) == len(runs) else max(map(len, runs["run_id"]))
    col_of = {r.run_id: (f"{wrap(r.model, 16)}\n{wrap('run ' + r.run_id[:n], 16)}" if by_run else wrap(r.model, 16))
              for r in runs.itertuples()}
    ok["column"] = ok["run_id"].map(col_of)
    ok["row"] = ok["test_id"] + " [" + ok["level"] + "]"
    rows = sorted(ok["row"].unique(), key=lambda r: _test_order(reg, *r[:-1].split(" [")))
    cols = sorted(ok["column"].unique())
    es = ok.pivot(index="row", columns="column", values="effect_size").reindex(index=rows, columns=cols)
    marks = ok.pivot(index="row", columns="column", values="mark").reindex(index=rows, columns=cols)
    alphas = sorted(set(runs.loc[runs["run_id"].isin(ok["run_id"]), "alpha"].dropna())) if "alpha" in runs else []
    note = legend(alphas[0] if len(alphas) == 1 else None)

    width = 2.6 + 1.35 * len(cols)
    fig = _figure((width, 2.2 + 0.24 * len(rows)))
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
    ax.set_xticks(range(len(cols)), cols, fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.tick_params(length=0)
    fig.colorbar(im, ax=ax, shrink=min(1.0, 8 / max(len(rows), 1)), label="effect size (d)")
    runs_shown = ", ".join(sorted({r[:n] for r in ok["run_id"]}))
    fig.text(0.01, 0.0, f"{note}\nruns: {runs_shown}", fontsize=7, ha="left", va="top", wrap=True)
    return {"svg": _svg(fig), "fig": fig, "n_cells": len(ok), "n_holm": int((ok["mark"] != "").sum()),
            "legend": note, "n_not_run": int((results["status"] != "ok").sum())}


def _place_labels(fig, ax, points: list[tuple[float, float, str]], fontsize: float = 6) -> int:
    """Label each point beside it, trying eight offsets and keeping the first that overlaps no label or tick
    label already drawn; a point with no free place stays unlabelled. Returns how many were left out."""
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    taken = [t.get_window_extent(renderer) for t in (*ax.get_xticklabels(), *ax.get_yticklabels(),
                                                     ax.xaxis.label, ax.yaxis.label) if t.get_text()]
    legend = ax.get_legend()
    if legend is not None:
        taken.append(legend.get_window_extent(renderer))
    left = 0
    offsets = [(4, 4), (4, -8), (-4, 4), (-4, -8), (6, -2), (-6, -2), (0, 8), (0, -12)]
    for x, y, text in points:
        for dx, dy in offsets:
            t = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                            ha="left" if dx >= 0 else "right", va="bottom" if dy >= 0 else "top", color="#333333")
            box = t.get_window_extent(renderer)
            inside = ax.get_window_extent(renderer)
            if not any(box.overlaps(b) for b in taken) and inside.contains(box.x0, box.y0) and \
                    inside.contains(box.x1, box.y1):
                taken.append(box)
                break
            t.remove()
        else:
            left += 1
    return left


def reproduction_scatter(df: pd.DataFrame) -> dict | None:
    """Ours against the printed effect sizes of the same model: one colour and one Pearson r per model,
    each point labelled with its test and level."""
    if len(df):     # a published 'inf' (or any value that is not a finite number) is not a number here
        df = df.replace([np.inf, -np.inf], np.nan)
    df = df.dropna(subset=["our_effect_size", "published_effect_size"]) if len(df) else df
    if not len(df):
        return None
    fig = _figure((6.0, 5.6))
    ax = fig.add_subplot()
    lim = max(MAX_ES, float(np.nanmax(np.abs(df[["our_effect_size", "published_effect_size"]].to_numpy()))) * 1.05)
    ax.plot([-lim, lim], [-lim, lim], color="#888888", lw=1, ls="--", label="identity")
    per_model = []
    for (model, published), g in df.groupby(["model", "published_model"]):
        r = float(np.corrcoef(g["published_effect_size"], g["our_effect_size"])[0, 1]) if len(g) > 2 else None
        per_model.append({"model": model, "published_model": published, "n": len(g), "r": r,
                          "runs": ", ".join(sorted({x[:8] for x in g["run_id"]}))})
        ax.scatter(g["published_effect_size"], g["our_effect_size"], s=18, alpha=0.8,
                   label=f"{model} vs {published} (n={len(g)}" + (f", r={r:.2f})" if r is not None else ")"))
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("published effect size")
    ax.set_ylabel("our effect size")
    ax.legend(fontsize=6, loc="upper left")
    runs = ", ".join(sorted({x[:8] for x in df["run_id"]}))
    ax.set_title(f"same model only · runs {runs}", fontsize=8)
    left = _place_labels(fig, ax, [(float(r.published_effect_size), float(r.our_effect_size),
                                    f"{r.test_id} [{r.level}] {r.paper}") for r in df.itertuples()])
    return {"svg": _svg(fig), "fig": fig, "n": len(df), "per_model": per_model, "unlabelled": left,
            "mad": float(df["difference"].abs().mean())}


# ------------------------------------------------------------------ forest plot (section "forest")

FOREST_ROWS = 30        # rows (test and level) per forest figure; more rows make several figures
FOREST_MARKERS = ("o", "s", "^", "v", "P", "X", "<", ">", "h", "p")
# Published effect sizes: drawn larger than and behind the results, so a result equal to it stays visible
PUBLISHED_STYLE = {"same_model": dict(marker="D", s=70, facecolors="black", edgecolors="black", zorder=2.5),
                   "same_family": dict(marker="D", s=70, facecolors="none", edgecolors="#555555", linewidths=1.1,
                                       zorder=2.5)}
PUBLISHED_GLYPH = {"same_model": "◆", "same_family": "◇"}
# A printed effect size of a shown test and level that pairs with no shown result (another model): drawn on its
# row's centre line (the static site's test pages pass them, so a page shows every printed number of its test)
OTHER_STYLE = dict(marker="x", s=34, color="#444444", linewidths=1.1, zorder=2.4)
OTHER_GLYPH = "×"


def _plain(text) -> str:
    """A string from the database as literal matplotlib text (a '$' would start mathtext)."""
    return str(text).replace("$", r"\$")


def _tail(label: str, width: int) -> str:
    """A long model name (a path) cut to its end, the part that tells models apart; the Runs table has it whole."""
    return label if len(label) <= width else "…" + label[-(width - 1):]


def _values(glyph: str, values: list[float]) -> str:
    """One paper's printed numbers of one kind in a row: each of one or two, else their range and count."""
    if len(values) <= 2:
        return ", ".join(f"{glyph}{v:+.2f}" for v in values)
    return f"{glyph}{values[0]:+.2f}…{values[-1]:+.2f} ({len(values)})"


def _pack(parts: list[str], *, width: int = 34, lines: int = 2) -> str:
    """``parts`` joined by '; ' over at most ``lines`` lines of about ``width`` characters (the last takes the rest)."""
    out = [""]
    for part in parts:
        if out[-1] and len(out[-1]) + 2 + len(part) > width and len(out) < lines:
            out.append("")
        out[-1] += ("; " if out[-1] else "") + part
    return "\n".join(out)


# The estimate each interval (ci_method) is for: the marker on its bar.
ESTIMATE_OF = {"concepts": "the concepts' d", "inversion": "d_corrected", "permutation": "the sample d",
               "percentile": "the sample d", "BCa": "the sample d"}


def _series(results: pd.DataFrame, by_run: bool) -> pd.Series:
    """The forest's series of each result: its model, or its model and run when runs were chosen."""
    if not by_run:
        return results["run_model"].astype(str)
    return results["run_model"].astype(str) + " · run " + results["run_id"].str[:8]


def forest_plots(results: pd.DataFrame, published: pd.DataFrame, reg: Registry | None, *, by_run: bool = False,
                 rows_per_figure: int = FOREST_ROWS, others: pd.DataFrame | None = None) -> dict | None:
    """Effect sizes with their stimulus-bootstrap CIs (``ci_low``/``ci_high``; no bar where NULL), one row per
    test and level, the models (or runs) side by side in a row, filled where Holm-significant; the published
    effect sizes of the same test and level (``published``: rows of the view ``reproduction_loose``) marked,
    same-model ones apart from same-family ones, each row naming the papers. ``others``: printed effect sizes
    (columns test_id, level, paper, published_effect_size) that pair with no shown result, marked x on their
    row (a row may hold only these). Several figures of at most ``rows_per_figure`` rows each."""
    from matplotlib.lines import Line2D

    ok = results[results["status"] == "ok"].copy() if len(results) else pd.DataFrame(
        columns=["run_id", "test_id", "level", "status", "run_model", "effect_size", "holm_significant"])
    oth = others.copy() if others is not None and len(others) else pd.DataFrame(
        columns=["test_id", "level", "paper", "published_effect_size", "row"])
    if len(oth):
        oth["published_effect_size"] = pd.to_numeric(oth["published_effect_size"], errors="coerce")
        oth = oth[np.isfinite(oth["published_effect_size"])].copy()
        oth["row"] = oth["test_id"].astype(str) + " [" + oth["level"].astype(str) + "]"
    if not len(ok) and not len(oth):
        return None
    ok["series"] = _series(ok, by_run) if len(ok) else pd.Series(dtype=str)
    ok["row"] = ok["test_id"].astype(str) + " [" + ok["level"].astype(str) + "]"
    ok["sample_d"] = pd.to_numeric(ok["effect_size"], errors="coerce")
    ok["d"] = interval_estimate(ok) if len(ok) else pd.Series(dtype=float)    # the marker on the interval's own bar
    for col in ("ci_low", "ci_high", "ci_level", "papers_low", "papers_high"):
        c = _column(ok, col)
        ok[col] = c if c is not None else np.nan
    not_estimable = _column(ok, "concepts_estimable", numeric=False)
    method_of = _column(ok, "ci_method", numeric=False)
    if not_estimable is not None and method_of is not None:
        # an interval that only bounds an unbounded confidence set: no bar, as the table prints words
        hull = ((not_estimable == False) & (method_of == "concepts")).fillna(False).astype(bool)  # noqa: E712
        ok.loc[hull, ["ci_low", "ci_high"]] = np.nan
    ok["own"] = (ok["d"] - ok["sample_d"]).abs().fillna(1.0) < 1e-12 if len(ok) else pd.Series(dtype=bool)
    keys = pd.concat([ok[["row", "test_id", "level"]], oth[["row", "test_id", "level"]]]).drop_duplicates("row")
    keys = keys.set_index("row")
    rows = sorted(keys.index, key=lambda r: _test_order(reg, keys.at[r, "test_id"], keys.at[r, "level"]))
    series = sorted(ok["series"].unique())
    colours = [f"C{i % 10}" for i in range(len(series))]
    markers = [FOREST_MARKERS[i % len(FOREST_MARKERS)] for i in range(len(series))]
    style = {s: (colours[i], markers[i]) for i, s in enumerate(series)}

    pub = published.copy() if len(published) else pd.DataFrame(
        columns=["run_id", "test_id", "level", "paper", "published_effect_size", "match"])
    if len(pub):
        pub["published_effect_size"] = pd.to_numeric(pub["published_effect_size"], errors="coerce")
        pub = pub[np.isfinite(pub["published_effect_size"])]
        if "match" not in pub.columns:      # the strict view: the same model only
            pub["match"] = "same_model"
        pub = pub.merge(ok[["run_id", "test_id", "level", "series", "row"]], on=["run_id", "test_id", "level"])
        pub = pub.drop_duplicates(["series", "row", "paper", "published_effect_size", "match"])

    values = np.concatenate([ok[["d", "ci_low", "ci_high", "sample_d"]].to_numpy(dtype=float).ravel(),
                             pub["published_effect_size"].to_numpy(dtype=float),
                             oth["published_effect_size"].to_numpy(dtype=float)])
    values = values[np.isfinite(values)]
    lim = max(MAX_ES, float(np.abs(values).max()) if len(values) else 0.0) * 1.05
    k = len(series)
    row_h = max(0.34, 0.12 + 0.13 * k)      # inches per row
    step = min(0.8 / max(k, 1), 0.25)
    offset = {s: (i - (k - 1) / 2) * step for i, s in enumerate(series)}
    levels = sorted({float(v) for v in ok["ci_level"].dropna()})
    ci_methods = sorted({str(v) for v in method_of.dropna()}) if method_of is not None else []
    ci_name = (f"{levels[0]:.0%} CI" if len(levels) == 1 else "CI") + (f" ({', '.join(ci_methods)})" if ci_methods
                                                                       else "")
    estimates = sorted({ESTIMATE_OF.get(m, "the sample d") for m in ci_methods})
    n_no_ci = int((ok["ci_low"].isna() | ok["ci_high"].isna()).sum())
    n_not_estimable = int(hull.sum()) if not_estimable is not None and method_of is not None else 0
    apart = bool(len(ok)) and not bool(ok["own"].all())     # a sample d apart from the interval's estimate

    handles = [Line2D([], [], ls="none", marker=style[s][1], color=style[s][0], label=_plain(_tail(s, 52)))
               for s in series]
    if len(ok):
        handles += [Line2D([], [], ls="none", marker="o", mfc="#777777", mec="#777777", label="Holm-significant"),
                    Line2D([], [], ls="none", marker="o", mfc="white", mec="#777777", label="not Holm-significant"),
                    Line2D([], [], color="#777777", lw=1.4,
                           label=f"bar: the {ci_name} of {' / '.join(estimates) or 'd'}"
                                 "; no bar: none stored, or not estimable")]
        if apart:
            handles.append(Line2D([], [], ls="none", marker="|", ms=9, color="#777777",
                                  label="sample d (comparable with the papers')"))
    for match, text in (("same_model", "published (same model)"), ("same_family", "published (same family)")):
        if len(pub) and (pub["match"] == match).any():
            st = PUBLISHED_STYLE[match]
            handles.append(Line2D([], [], ls="none", marker=st["marker"], ms=8, mfc=st["facecolors"],
                                  mec=st["edgecolors"], label=f"{PUBLISHED_GLYPH[match]} {text}"))
    if len(oth):
        handles.append(Line2D([], [], ls="none", marker=OTHER_STYLE["marker"], ms=7, color=OTHER_STYLE["color"],
                              label=f"{OTHER_GLYPH} published (a model not shown here)"))

    figures = []
    for start in range(0, len(rows), rows_per_figure):
        part = rows[start:start + rows_per_figure]
        pos = {r: i for i, r in enumerate(part)}
        # the axes' height grows with the rows (margins in inches); the legend goes above it (bbox tight)
        height = row_h * len(part) + 0.6
        fig = _figure((6.4, height))
        fig.subplots_adjust(left=0.25, right=0.9, bottom=0.5 / height, top=1 - 0.1 / height)
        ax = fig.add_subplot()
        for i in range(0, len(part), 2):
            ax.axhspan(i - 0.5, i + 0.5, color="#f3f3f5", zorder=0, lw=0)
        ax.axvline(0, color="#444444", lw=0.9, zorder=1)
        sub = ok[ok["row"].isin(pos)]
        for j, s in enumerate(series):
            g = sub[sub["series"] == s]
            if not len(g):
                continue
            colour, marker = style[s]
            y = g["row"].map(pos).to_numpy(dtype=float) + offset[s]
            d = g["d"].to_numpy(dtype=float)
            has_ci = (g["ci_low"].notna() & g["ci_high"].notna()).to_numpy()
            if has_ci.any():
                lo, hi = g["ci_low"].to_numpy(dtype=float)[has_ci], g["ci_high"].to_numpy(dtype=float)[has_ci]
                ax.hlines(y[has_ci], lo, hi, color=colour, lw=1.4, zorder=2, gid=f"forest-ci-{j}")
            holm = g["holm_significant"].map(lambda v: not pd.isna(v) and bool(v))
            face = [colour if h else "white" for h in holm]
            ax.scatter(d, y, marker=marker, s=30, facecolors=face, edgecolors=colour, linewidths=1.2, zorder=3,
                       gid=f"forest-series-{j}")
            other = ~g["own"].to_numpy(dtype=bool)
            if other.any():     # the sample d, where the interval's estimate is another number (the concepts' d)
                ax.scatter(g["sample_d"].to_numpy(dtype=float)[other], y[other], marker="|", s=60, color=colour,
                           linewidths=1.4, zorder=3, gid=f"forest-sample-{j}")
        psub = pub[pub["row"].isin(pos)] if len(pub) else pub
        for match, st in PUBLISHED_STYLE.items():
            g = psub[psub["match"] == match] if len(psub) else psub
            if len(g):
                y = g["row"].map(pos).to_numpy(dtype=float) + g["series"].map(offset).to_numpy(dtype=float)
                ax.scatter(g["published_effect_size"], y, gid=f"forest-published-{match}", **st)
        osub = oth[oth["row"].isin(pos)] if len(oth) else oth
        if len(osub):
            ax.scatter(osub["published_effect_size"], osub["row"].map(pos).to_numpy(dtype=float),
                       gid="forest-published-other", **OTHER_STYLE)
        papers = {}         # row -> paper -> {(value, match)}: each printed number named by its paper
        for r in psub.itertuples() if len(psub) else ():
            papers.setdefault(r.row, {}).setdefault(str(r.paper), set()).add((float(r.published_effect_size), r.match))
        for r in osub.itertuples() if len(osub) else ():
            papers.setdefault(r.row, {}).setdefault(str(r.paper), set()).add((float(r.published_effect_size), "other"))
        glyphs = {**PUBLISHED_GLYPH, "other": OTHER_GLYPH}
        for r, by_paper in papers.items():
            label = _pack([f"{p} " + ", ".join(_values(glyphs[m], sorted(v for v, m2 in vals if m2 == m))
                                                for m in glyphs if any(m2 == m for _, m2 in vals))
                           for p, vals in sorted(by_paper.items())], lines=max(1, int(row_h / 0.15)))
            ax.text(1.01, pos[r], _plain(label), transform=ax.get_yaxis_transform(), fontsize=8, va="center",
                    ha="left", color="#333333", gid="forest-paper")
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xlim(-lim, lim)
        ax.set_yticks(range(len(part)), [_plain(r) for r in part], fontsize=10)
        ax.tick_params(axis="y", length=0)
        ax.tick_params(axis="x", labelsize=9)
        ax.set_xlabel("effect size d" if not apart else "effect size d: " + " / ".join(estimates)
                      + " (marker on its bar), sample d (|)", fontsize=10)
        ax.grid(axis="x", color="#dddddd", lw=0.6, zorder=0)
        ax.set_axisbelow(True)
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.01), fontsize=9,
                  ncol=2 if max(len(h.get_label()) for h in handles) <= 44 else 1,
                  frameon=False, borderaxespad=0.2)
        figures.append({"svg": _svg(fig), "fig": fig, "rows": part})
    from ..legend import ci_means, meanings
    lines = meanings(None, alternative=None)
    lines[2:2] = list(dict.fromkeys(ci_means(m) for m in ci_methods))     # each shown interval's line
    return {"figures": figures, "rows": rows, "series": series, "n_results": len(ok), "n_no_ci": n_no_ci,
            "n_not_estimable": n_not_estimable, "estimates": estimates,
            "ci_name": ci_name, "meanings": lines, "n_published": len(pub), "n_others": len(oth),
            "papers": sorted({str(p) for p in pub["paper"]}),
            "n_not_run": int((results["status"] != "ok").sum()) if len(results) else 0}


# ------------------------------------------------------------------ influence table (section "influence")

INFLUENCE_TOP = 5


def influence_table(con, tables: set[str], results: pd.DataFrame, reg: Registry | None, *, by_run: bool = False,
                    top: int = INFLUENCE_TOP) -> dict:
    """For each shown result (the forest's rows and series), its ``top`` most influential stimuli (largest
    |delta| in table ``influence``, eatlas.store.influence.top_influence) with the result's leave-one-out range
    and sign stability; a stimulus whose leaving out flips the sign of d is flagged. ``available`` is False for
    a database written before the influence table existed."""
    from ..store.influence import ROLE_NAMES, top_influence

    ok = results[results["status"] == "ok"].copy() if len(results) else results
    if "influence" not in tables or not len(ok):
        return {"available": "influence" in tables, "groups": [], "top": top}
    ok["series"] = _series(ok, by_run)
    ok["_estimate"] = interval_estimate(ok)
    ok = ok.assign(_order=[_test_order(reg, t, lv) for t, lv in zip(ok["test_id"], ok["level"])])
    ok = ok.sort_values(["_order", "series"], kind="stable")
    groups = []
    for r in ok.to_dict("records"):
        d = _number(r.get("effect_size"))
        rows = []
        for role, item, d_without, delta in top_influence(con, r["run_id"], r["test_id"], r["level"], top):
            d_without = _number(d_without)
            flips = d is not None and d_without is not None and d != 0 and (d_without > 0) != (d > 0)
            rows.append({"role": ROLE_NAMES.get(role, role), "item": item, "d_without": d_without,
                         "delta": _number(delta), "flips": flips})
        stable = r.get("sign_stable")
        stable = None if stable is None or stable != stable else bool(stable)
        method = r.get("ci_method") if isinstance(r.get("ci_method"), str) else None
        level = _number(r.get("ci_level"))
        groups.append({"test_id": r["test_id"], "level": r["level"], "series": r["series"], "run": r["run_id"][:8],
                       "d": d, "ci_low": _number(r.get("ci_low")), "ci_high": _number(r.get("ci_high")),
                       "estimate": _number(r.get("_estimate")),
                       "estimate_name": ESTIMATE_OF.get(method, "the sample d").removeprefix("the "),
                       "ci_name": (f"{level:.0%} CI" if level is not None else "CI") + (f" ({method})" if method
                                                                                          else ""),
                       "not_estimable": method == "concepts" and r.get("concepts_estimable") is False,
                       "d_loo_min": _number(r.get("d_loo_min")), "d_loo_max": _number(r.get("d_loo_max")),
                       "sign_stable": stable, "rows": rows, "notes": _notes(r.get("notes"))})
    return {"available": True, "groups": groups, "top": top,
            "n_unstable": sum(g["sign_stable"] is False for g in groups)}


def _notes(v) -> list[str]:
    """A result's stored notes (``results.notes``; absent in a database written before them)."""
    if v is None or isinstance(v, float):
        return []
    return [str(n) for n in list(v)]


def _number(v) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def inputs_used(con, tables: set[str], reg: Registry | None, tests_of_runs: dict[str, set[str]]) -> dict:
    """The tests, stimulus sets and templates the shown runs used (``tests_of_runs``: run id -> the tests of its
    shown rows): what each run recorded in table ``run_inputs`` (version and content hash,
    eatlas.registry.provenance), with each one's provenance from the registry; a run that recorded none (written before
    ``run_inputs`` existed, or by other means) counts with what its tests name in the registry now. A row whose
    registry copy is gone or differs now (version or content) says so in ``changed``."""
    from ..registry.provenance import run_inputs

    runs = sorted(tests_of_runs)
    rows, recorded = [], set()
    if runs and "run_inputs" in tables:
        marks = ", ".join("?" * len(runs))
        found = con.execute(f"SELECT DISTINCT run_id, kind, id, version, sha256 FROM run_inputs "
                            f"WHERE run_id IN ({marks})", runs).fetchall()
        recorded = {r[0] for r in found}
        rows = [dict(zip(("kind", "id", "version", "sha256"), r[1:])) for r in found]
    # a run of no test (validity: the registry's criteria) records its criteria, version and content hash, in
    # its settings; it is not a run written before run_inputs existed
    derived = [r for r in runs if r not in recorded and tests_of_runs[r]]
    criteria = _criteria_used(con, reg, [r for r in runs if not tests_of_runs[r]])
    for rid in derived if reg is not None else ():
        for tid in sorted(tests_of_runs[rid]):
            try:
                rows += run_inputs(reg, [tid])
            except EatlasError:       # a test this registry does not hold (or names a set it lacks)
                continue
    seen, out = set(), {"test": [], "set": [], "template": []}
    for r in rows:
        key = (r["kind"], r["id"], r["version"], r["sha256"])
        if key in seen or r["kind"] not in out:
            continue
        seen.add(key)
        out[r["kind"]].append(_input_row(reg, r))
    order = list(reg.tests) if reg is not None else []
    out["test"].sort(key=lambda e: (order.index(e["id"]) if e["id"] in order else len(order), e["id"], e["ref"]))
    out["set"].sort(key=lambda e: (e["id"], e["ref"]))
    out["template"].sort(key=lambda e: (e["id"], e["ref"]))
    papers = {e["paper"] for kind in out.values() for e in kind if e["paper"]}
    return {"tests": out["test"], "sets": out["set"], "templates": out["template"], "criteria": criteria, "runs": runs,
            "derived": [r[:8] for r in derived],
            "papers": sorted(papers),
            "in_registry": {k: len(getattr(reg, k)) if reg is not None else 0 for k in ("tests", "sets", "templates")}}


def _criteria_used(con, reg: Registry | None, runs: list[str]) -> list[dict]:
    """The validity criteria the runs ``runs`` read, as each recorded them in its settings (id, version, content
    sha256; eatlas.methods.validity), with what differs in the registry now."""
    import json

    if not runs:
        return []
    got = con.execute(f"SELECT settings FROM runs WHERE run_id IN ({', '.join('?' * len(runs))})", runs).fetchall()
    out, seen = [], set()
    known = getattr(reg, "criteria", {}) if reg is not None else {}
    for (settings,) in got:
        try:
            crit = (json.loads(settings) if isinstance(settings, str) else settings or {}).get("criteria") or {}
        except (ValueError, AttributeError):
            continue
        for cid, rec in sorted(crit.items()) if isinstance(crit, dict) else ():
            version, sha = str((rec or {}).get("version", "")), str((rec or {}).get("sha256", ""))
            if (cid, version, sha) in seen:
                continue
            seen.add((cid, version, sha))
            now = known.get(cid)
            changed = "not in this registry" if now is None else \
                f"now {now.version}" if now.version != version else \
                "content differs now" if sha and now.hash() != sha else ""
            out.append({"ref": f"{cid}@{version}", "sha256": sha, "title": now.title if now else "",
                        "paper": (now.source.get("paper") or "") if now else "", "changed": changed})
    return out


def _input_row(reg: Registry | None, r: dict) -> dict:
    """One used test, set or template: what the run read (id, version, content hash) and its provenance now."""
    kind, oid, version, sha = r["kind"], r["id"], r["version"], r["sha256"]
    store = {"test": "tests", "set": "sets", "template": "templates"}[kind]
    obj = getattr(reg, store).get(oid) if reg is not None else None
    if obj is None:
        changed = "not in this registry"
    elif obj.version != version:
        changed = f"the registry holds {obj.ref} now"
    elif obj.hash() != sha:
        changed = f"the registry's {obj.ref} has other content now"
    else:
        changed = None
    src = (getattr(obj, "source", None) or {}) if obj is not None else {}
    paper = src.get("paper")
    row = {"kind": kind, "id": oid, "ref": f"{oid}@{version}", "sha256": sha, "changed": changed, "paper": paper,
           "citation": (reg.sources.get(paper) or {}).get("citation", "") if reg is not None and paper else ""}
    if kind == "set":
        row.update(concept=obj.concept if obj else "", section=src.get("section"), table=src.get("table"),
                   authors_file=src.get("authors_file"), license=obj.license if obj else "",
                   notes=obj.notes if obj else None)
    elif kind == "test":
        row.update(title=obj.title if obj else "", license=obj.license if obj else "")
    return row


def references(reg: Registry | None, *frames: pd.DataFrame) -> list[dict]:
    """The works to cite for the tests (at their levels) in the result tables, via eatlas.registry.cite: each with
    its one-line citation, its BibTeX and the tests that draw on it; EATlas last."""
    from ..registry.cite import EATLAS_AUTHORS, EATLAS_TITLE, citations

    if reg is None:
        return []
    pairs = dict.fromkeys((str(r["test_id"]), r.get("level") if isinstance(r.get("level"), str) else None)
                          for df in frames if len(df) and "test_id" in df.columns
                          for r in df.to_dict("records"))
    out: dict[str, dict] = {}
    for tid, level in pairs:
        try:
            cites = citations(reg, tid, level)
        except EatlasError:          # a test this registry does not hold, or a level it lacks: its own level
            try:
                cites = citations(reg, tid)
            except EatlasError:
                continue
        for key, bib in cites:
            e = out.setdefault(key, {"key": key, "bibtex": bib, "tests": [],
                                     "citation": reg.sources[key]["citation"] if key in reg.sources
                                     else f"{EATLAS_AUTHORS}. {EATLAS_TITLE}."})
            label = tid + (f" [{level}]" if level else "")
            if label not in e["tests"]:
                e["tests"].append(label)
    return sorted(out.values(), key=lambda e: e["key"] == "eatlas")


# ------------------------------------------------------------------ the methods' sections

class ReportContext:
    """What a method's ``report`` (eatlas.methods) gets: the selected rows of its tables, figures, rendering."""

    def __init__(self, con, tables: set[str], reg, pick: dict, run_id: str | None):
        self.con, self.tables, self.registry, self._pick, self.run_id = con, tables, reg, pick, run_id

    def rows(self, table: str, keys: tuple[str, ...]) -> pd.DataFrame:
        """The rows of ``table`` the report shows (the chosen runs, or the newest per model and ``keys``)."""
        return _selected_rows(self.con, self.tables, table, keys, **self._pick)

    def rows_of_runs(self, table: str, run_ids) -> pd.DataFrame:
        return _rows(self.con, table, sorted(set(run_ids))) if table in self.tables else pd.DataFrame()

    def figure(self, figsize):
        return _figure(figsize)

    def svg(self, fig):
        return _safe(_svg(fig))

    def render(self, template: str, **kw):
        """A fragment of the page from a Jinja template (autoescaped), as markup."""
        from jinja2 import Environment, StrictUndefined
        from markupsafe import Markup

        from ..legend import legend

        env = Environment(autoescape=True, finalize=jinja_finalize, undefined=StrictUndefined, trim_blocks=True,
                          lstrip_blocks=True)
        return Markup(env.from_string(template).render(legend=legend(), svg_safe=_safe, run_id=self.run_id, **kw))

    test_order = staticmethod(_test_order)
    column = staticmethod(_column)


# ------------------------------------------------------------------ the results table

def _cell(v):
    """A DataFrame cell as a Python value, NULL (NaN, NA, None) as None."""
    try:
        return None if v is None or pd.isna(v) else v
    except (TypeError, ValueError):        # a list or an array: not missing
        return v


def _iv(lo, hi) -> str:
    return f"[{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""


def results_table(results: pd.DataFrame, runs: pd.DataFrame) -> dict | None:
    """The report's first section: one row per result, with the CLI's columns (eatlas.cli.run_summary): test,
    version, level, model, n per set, the concepts' d with its interval (or 'not estimable'), the sample d with
    its (the papers') interval, p concepts, p papers ('< 1e-05' at its floor), the Holm mark with its family
    (the result's run: how many results it held) and the notes. Rows in natural order of the test ids."""
    from ..ids import natural_key
    from ..legend import NOT_ESTIMABLE_WHY, fmt_p, mark

    if not len(results):
        return None
    df = results.astype(object).where(results.notna(), None) if hasattr(results, "notna") else results
    rows = []
    for r in df.to_dict("records"):
        r = {k: _cell(v) for k, v in r.items()}
        if r.get("effect_size") is None and r.get("status") == "ok":
            continue                # a method without a WEAT d: its own section holds its numbers
        row = {"test_id": r["test_id"], "version": r.get("test_version") or "", "level": r["level"],
               "model": r.get("model") or "", "run": str(r["run_id"])[:8],
               "n": ",".join("" if r.get(f"n_{x}") is None else str(int(r[f"n_{x}"])) for x in "xyab"),
               "d": "", "ci": "", "sample": "", "papers_ci": "", "p": "-", "p_papers": "-", "holm": "",
               "family": None, "notes": []}
        if r.get("status") != "ok":
            row["notes"] = [r.get("reason") or "not run"]
        else:
            estimable = r.get("concepts_estimable")
            if estimable is False:
                row["d"] = "not estimable"
            elif r.get("d_concepts") is not None:
                row["d"] = f"{r['d_concepts']:+.2f}"
                row["ci"] = _iv(r.get("concepts_low"), r.get("concepts_high"))
            row["sample"] = f"{r['effect_size']:+.2f}"
            row["papers_ci"] = _iv(r.get("papers_low"), r.get("papers_high"))
            row["p"] = fmt_p(r.get("p_concepts"))
            row["p_papers"] = fmt_p(r.get("p_value"), r.get("p_at_floor"))
            row["holm"] = mark(r.get("holm_significant"))
            size = r.get("holm_family_size")
            row["family"] = int(size) if size is not None else None
            notes = r.get("notes")
            old = "the concepts' d is not estimable at these set sizes: "    # the words of earlier versions
            row["notes"] = [f"the concepts' d is not estimable: {NOT_ESTIMABLE_WHY} ({n[len(old):]})"
                            if str(n).startswith(old) else str(n) for n in ([] if notes is None else list(notes))]
        rows.append(row)
    if not rows:
        return None
    from ..levels import NAMES as LEVEL_NAMES
    rows.sort(key=lambda x: (natural_key(x["test_id"]), LEVEL_NAMES.index(x["level"]) if x["level"] in LEVEL_NAMES
                             else len(LEVEL_NAMES), x["model"], x["run"]))
    alphas = sorted({float(a) for a in runs["alpha"].dropna()}) if "alpha" in runs else []
    rules = sorted({str(v) for v in results["holm_p_rule"].dropna()}) if "holm_p_rule" in results else []
    levels = sorted({float(v) for v in results["ci_level"].dropna()}) if "ci_level" in results else []
    return {"rows": rows, "alpha": ", ".join(f"{a:g}" for a in alphas) or None,
            "p_rule": rules[0] if len(rules) == 1 else None,
            "ci_level": f"{levels[0]:.0%}" if len(levels) == 1 else "",
            "any_floor": any(r["p_papers"].startswith("<") for r in rows),
            "several_models": len({r["model"] for r in rows}) > 1}


# ------------------------------------------------------------------ the page

def build_report(db: str | Path, *, run_id: str | None = None, registry: str | Path | None = None,
                 alpha: float | None = None, runs: list[str] | None = None, model: str | None = None,
                 all_runs: bool = False, influence_top: int = INFLUENCE_TOP) -> str:
    """The report as one HTML string. Which results: ``runs`` (ids or unique prefixes; ``run_id`` is one),
    every run of ``model``, every run (``all_runs``), or by default the newest result per model, test and
    level. The page says which runs it shows. ``alpha`` is unused: a result is starred when its own run found
    it Holm-significant at that run's alpha. ``influence_top``: stimuli per result in the influence table."""
    from jinja2 import Environment, StrictUndefined

    from ..legend import FLOOR_LINE, WHAT_TO_REPORT, legend
    from ..registry.base import load_registry

    reg = load_registry(registry)
    con = connect(db, read_only=True)
    try:
        tables = _tables(con)
        if "runs" not in tables:
            raise EatlasError("the database holds no runs", file=str(db), hint="run 'eatlas run' first")
        wanted = [run_id] if run_id else list(runs or [])
        ids = [resolve_run(con, r) for r in wanted] or None
        if model and not con.execute("SELECT count(*) FROM runs WHERE model = ?", [model]).fetchone()[0]:
            raise EatlasError(f"no run of model {model!r}", field="--model",
                              hint="'eatlas sql \"SELECT DISTINCT model FROM runs\"' lists the models")
        pick = dict(run_ids=ids, model=model, all_runs=all_runs)
        results = _selected_rows(con, tables, "results", ("test_id", "level"), **pick)
        ctx = ReportContext(con, tables, reg, pick, ids[0] if ids and len(ids) == 1 else None)
        method_sections = [sec for m in all_methods().values() for sec in m.report(ctx)]
        frames = [f for sec in method_sections for f in sec.get("frames", [])]
        shown = sorted(set().union(*(set(d["run_id"]) for d in (results, *frames) if len(d))))
        tests_of_runs = {r: set() for r in shown}
        for d in (results, *frames):
            if len(d) and "test_id" in d.columns:
                for rid, tid in d[["run_id", "test_id"]].drop_duplicates().itertuples(index=False):
                    tests_of_runs[rid].add(str(tid))
        inputs = inputs_used(con, tables, reg, tests_of_runs)
        runs_df = con.execute(f"SELECT * FROM runs WHERE run_id IN ({', '.join('?' * len(shown))}) "
                              "ORDER BY finished_at", shown).fetchdf() if shown else pd.DataFrame(columns=["run_id"])
        repro = pd.DataFrame()
        repro_view = next((v for v in ("reproduction_all_runs", "reproduction") if v in tables), None)
        if repro_view and len(results):       # the selected runs' pairs, an older run's too
            con.register("_sel", results[["run_id", "test_id", "level"]])
            repro = con.execute(f"SELECT p.* FROM {repro_view} p JOIN (SELECT DISTINCT run_id, test_id, level FROM "
                                "_sel) USING (run_id, test_id, level)").fetchdf()
        by_run = bool(ids) or all_runs
        published = _forest_published(con, tables, results)
        influence = influence_table(con, tables, results, reg, by_run=by_run, top=influence_top)
    finally:
        con.close()
    if ids:
        selection = f"the run(s) {', '.join(i[:8] for i in ids)}"
    elif all_runs:
        selection = "every run" + (f" of model {model}" if model else "")
    else:
        selection = "the newest result per model, test and level" + (f" of model {model}" if model else "")
    env = Environment(autoescape=True, finalize=jinja_finalize, undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True)
    page = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return page.render(
        version=__version__, generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        db=str(db), run_id=ids[0] if ids and len(ids) == 1 else None, registry_root=str(reg.root),
        selection=selection, legend=legend(),
        runs=[{**r, "n_results": int((results["run_id"] == r["run_id"]).sum()) if len(results) else 0}
              for r in runs_df.astype(object).where(runs_df.notna(), None).to_dict("records")],   # NaN -> blank
        table=results_table(results, runs_df) if len(results) else None,
        what_to_report=WHAT_TO_REPORT, floor_line=FLOOR_LINE,
        holm_line=legend_of_table(results, runs_df),
        matrix=matrix(results, runs_df, reg, alpha, by_run=by_run) if len(results) else None,
        forest=forest_plots(results, published, reg, by_run=by_run) if len(results) else None,
        influence=influence,
        method_sections=method_sections,
        reproduction=reproduction_scatter(repro) if len(repro) else None,
        inputs=inputs, svg_safe=_safe, fmt=_fmt,
        sources=sorted((k, (reg.sources.get(k) or {}).get("citation", "")) for k in inputs["papers"]),
        references=references(reg, results, *frames))


def legend_of_table(results: pd.DataFrame, runs: pd.DataFrame) -> str:
    """The Holm mark's legend under the results table: its family (each result's own run's tests, the number
    beside the mark), α and the p it used."""
    from ..legend import legend

    alphas = sorted({float(a) for a in runs["alpha"].dropna()}) if "alpha" in runs else []
    rules = sorted({str(v) for v in results["holm_p_rule"].dropna()}) if "holm_p_rule" in results else []
    sizes = sorted({int(v) for v in results["holm_family_size"].dropna()}) if "holm_family_size" in results else []
    line = legend(alphas[0] if len(alphas) == 1 else None, rules[0] if len(rules) == 1 else None,
                  sizes[0] if len(sizes) == 1 and runs.shape[0] == 1 else None)
    return line + " ('of N' in the Holm column: the family, the N results of that result's run)"


def _forest_published(con, tables: set[str], results: pd.DataFrame) -> pd.DataFrame:
    """The published effect sizes beside the selected results: view ``reproduction_loose`` (same model and
    same family, column ``match``), or ``reproduction`` (same model only) in a database written before it."""
    view = next((v for v in ("reproduction_loose_all_runs", "reproduction_loose", "reproduction") if v in tables), None)
    if view is None or not len(results):
        return pd.DataFrame()
    con.register("_forest_sel", results[["run_id", "test_id", "level"]].drop_duplicates())
    try:
        return con.execute(f"SELECT p.* FROM {view} p JOIN _forest_sel USING (run_id, test_id, level)").fetchdf()
    finally:
        con.unregister("_forest_sel")


def _fmt(v) -> str:
    return "–" if v is None else f"{v:+.3f}"


def _safe(svg: str):
    from markupsafe import Markup

    return Markup(svg)


def write_report(db: str | Path, out: str | Path, **kw) -> Path:
    """Write the report to ``out`` and nothing else: never over the database, a registry file or a file eatlas
    did not write (eatlas.guard.write_single: the report carries its own record, no manifest is left beside
    it), checked before the report is built."""
    from ..guard import write_single
    from ..registry.base import default_root

    out = Path(out)
    root = kw.get("registry") or default_root()
    write_single(out, "", db=db, registry_root=root, what="report", check_only=True)
    html = build_report(db, **kw)
    return write_single(out, html, db=db, registry_root=root, what="report")
