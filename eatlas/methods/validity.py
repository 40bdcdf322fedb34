"""Criterion validity as a run method (``eatlas run --method validity``): each item's association checked against a
criterion about the world, across the items.

For every criterion of the registry (``registry/<source>/criteria/``, eatlas.registry.criteria; ``--criteria``
picks some), each item w (an occupation, a first name) gets its association, WEFAT's statistic of Caliskan, Bryson
and Narayanan (2017)::

    s(w, A, B) = (mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)) / std_{x in A u B} cos(w, x)     (ddof=1)

with A and B the criterion's two attribute sets (e.g. female and male terms; eatlas.stats.sceat.effect_sizes, the
statistic SC-EAT stores per stimulus). Then Pearson's r and Spearman's rho of the associations with the items'
criterion values, their p-values, and their bootstrap intervals over items (eatlas.stats.validity.correlate:
percentile by default, ``--validity-ci-method BCa``; ``--ci`` and ``--n-boot`` as for every interval; coverage in
docs/validity.md). Stored per run and criterion in ``validity_results`` (n items, used and dropped, the
dropped items by name, r, rho, their intervals and p) and per item in ``validity_items`` (the association, the
criterion value, the data rows it came from; an item the model cannot encode is listed with ``used`` false and
the reason, never silently left out). An attribute word the model cannot encode is left out of A or B and named
in ``dropped_attributes``.

What the correlation says is about the items together: the associations of items with higher criterion values
tend to be higher. It says nothing about whether any one item's association is fair, right or wrong.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EatlasError
from ..stats.validity import CI_METHODS
from .base import Method, MethodRun, Option, Stopped, Table, interrupted, register

__all__ = ["ValidityMethod", "ValidityRow", "ValidityItemRow", "run_validity"]

ASSOCIATION = "wefat"       # s(w, A, B), Caliskan et al. (2017)


@dataclass
class ValidityRow:
    """One criterion of one run: the correlation of the items' associations with their criterion values."""
    criterion_id: str
    criterion_version: str
    paper: str | None
    measure: str
    unit: str
    year: int | None
    a_set: str                  # id@version
    b_set: str
    n_a: int                    # attribute words encoded
    n_b: int
    dropped_attributes: str | None
    n_items: int
    n_used: int
    n_dropped: int
    dropped: str | None         # the items not used, comma-separated (validity_items says why)
    status: str                 # ok | not_run
    reason: str | None
    association: str            # wefat: s(w, A, B)
    expected_sign: str
    pearson_r: float | None
    pearson_p: float | None
    pearson_ci_low: float | None
    pearson_ci_high: float | None
    spearman_rho: float | None
    spearman_p: float | None
    spearman_ci_low: float | None
    spearman_ci_high: float | None
    ci: float | None
    n_boot: int | None
    ci_method: str | None


@dataclass
class ValidityItemRow:
    """One item of a criterion: its association (null when not encodable) and its criterion value."""
    criterion_id: str
    item: str
    kind: str
    criterion_value: float
    association: float | None
    used: bool
    reason: str | None
    data_rows: str              # the criterion's data-file rows the value comes from
    weight: float | None


@register
class ValidityMethod(Method):
    name = "validity"
    help = ("criterion validity: each item's WEFAT association s(w, A, B) (Caliskan et al. 2017) correlated with "
            "a criterion about the world (census, labour statistics), Pearson and Spearman with bootstrap intervals")
    inputs = "criteria"
    levels = ("word",)
    stats = ("ci", "n_boot")
    undeclared = False          # it runs the registry's criteria, not its tests
    options = (
        Option("--criteria", dict(nargs="+", metavar="ID", help="the criteria to check (default: every criterion "
                                                                "of the registry; 'eatlas list --criteria')")),
        Option("--validity-ci-method", dict(choices=CI_METHODS, default="percentile",
                                            help="the bootstrap interval of r and rho over items (default "
                                                 "percentile: closer to 95%% than BCa at 20-50 items, "
                                                 "docs/validity.md)")),
    )
    tables = (
        Table("validity_results", ValidityRow, per_test=False, key=("criterion_id",),
              doc="each criterion's Pearson and Spearman correlation of the items' associations with their values"),
        Table("validity_items", ValidityItemRow, per_test=False, key=("criterion_id", "item"),
              doc="each item's association and criterion value (used false: not encodable, with the reason)"),
    )
    cite = ("Caliskan, Bryson and Narayanan (2017), Science 356(6334):183-186, doi:10.1126/science.aal4230 (WEFAT)")

    def check(self, cfg) -> None:
        if cfg.tests:
            raise EatlasError("the validity method runs the registry's criteria, not tests", field="--tests",
                              hint="leave out --tests; pick criteria with --criteria ID")
        if cfg.ci is None:
            return
        if self.option(cfg, "validity_ci_method") not in CI_METHODS:
            raise EatlasError(f"unknown CI method {self.option(cfg, 'validity_ci_method')!r}",
                              field="--validity-ci-method", hint=", ".join(CI_METHODS))

    def run(self, ctx) -> MethodRun:
        from ..errors import ValidationFailed
        from ..registry.criteria import check_criterion

        cfg = ctx.cfg
        chosen = self.option(cfg, "criteria") or list(getattr(ctx.registry, "criteria", {}))
        problems = [p for cid in chosen if cid in ctx.registry.criteria
                    for p in check_criterion(ctx.registry, ctx.registry.criteria[cid], item_table=False)]
        if problems:            # before the model loads: a value not derived from its source is never correlated
            raise ValidationFailed(problems)
        try:
            results, items, settings = run_validity(
                ctx.encoder, ctx.registry, criteria=self.option(cfg, "criteria"), ci=cfg.ci, n_boot=int(cfg.n_boot),
                seed=int(cfg.seed), ci_method=self.option(cfg, "validity_ci_method"))
        except Stopped as stop:         # Ctrl-C after a criterion finished: those are stored, and said
            results, items, settings = stop.rows["validity_results"], stop.rows["validity_items"], stop.settings
            interrupted(settings, ctx.notes, stop, unit="criterion", resume="--criteria")
        return MethodRun(rows={"validity_results": results, "validity_items": items}, levels=["word"],
                         settings=settings, detail=results)

    def summary(self, outcome):
        from rich.table import Table as RichTable

        from ..console import esc
        run = outcome.run
        t = RichTable("criterion", "n used / items", "Pearson r [CI]", "p", "Spearman rho [CI]", "expected",
                      title=esc(f"criterion validity  run {run['run_id'][:8]}  model {run['model']}"))
        for r in outcome.tables["validity_results"].to_dict("records"):
            if r["status"] != "ok":
                t.add_row(esc(r["criterion_id"]), f"{r['n_used']} / {r['n_items']}", esc(f"not run: {r['reason']}"),
                          "", "", esc(r["expected_sign"]))
                continue
            t.add_row(esc(r["criterion_id"]), f"{r['n_used']} / {r['n_items']}",
                      f"{r['pearson_r']:+.2f} {_ci(r, 'pearson')}", f"{r['pearson_p']:.2g}",
                      f"{r['spearman_rho']:+.2f} {_ci(r, 'spearman')}", esc(r["expected_sign"]))
        return t

    def report(self, ctx) -> list[dict]:
        res = ctx.rows("validity_results", ("criterion_id",))
        items = ctx.rows_of_runs("validity_items", res["run_id"]) if len(res) else None
        printed = printed_correlations(ctx.con, res) if len(res) else {}
        fig = validity_scatter(ctx, res, items, printed) if items is not None and len(items) else None
        html = ctx.render(VALIDITY_HTML, fig=fig, rows=_report_rows(res, printed) if len(res) else [],
                          has_table="validity_results" in ctx.tables)
        return [{"id": "validity", "title": "Validity: associations against census, labour and human-rating data",
                 "nav": "Validity", "html": html, "frames": [res] if len(res) else []}]


def _text(v) -> str:
    """A nullable text cell of a frame: '' for NULL (None or NaN)."""
    return "" if v is None or v != v else str(v)


def _ci(r: dict, stat: str) -> str:
    lo, hi = r.get(f"{stat}_ci_low"), r.get(f"{stat}_ci_high")
    if lo is None or hi is None or lo != lo or hi != hi:
        return ""
    return f"[{lo:+.2f}, {hi:+.2f}]"


def _sets(reg, c, role: str):
    ref = getattr(c, role)
    try:
        return reg.get_set(ref)
    except EatlasError as e:
        raise EatlasError(f"criterion {c.id}: {e.message}", file=c.file, field=role, hint=e.hint) from None


def run_validity(encoder, reg, *, criteria: list[str] | None = None, ci: float | None = 0.95, n_boot: int = 10_000,
                 seed: int = 0, ci_method: str = "percentile") -> tuple[list[ValidityRow], list[ValidityItemRow], dict]:
    """The validity rows of each criterion (all of the registry's, or ``criteria``), the item rows and the
    run's settings (the criteria's versions and content hashes)."""
    from ..stats.sceat import effect_sizes
    from ..stats.validity import correlate

    known = getattr(reg, "criteria", {})
    if not known:
        raise EatlasError("the registry has no criteria", hint="criteria are registry/<source>/criteria/*.yaml files, "
                                                               "indexed by 'eatlas catalog --sync'")
    wanted = list(criteria) if criteria else list(known)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], list(known), n=3, cutoff=0.5)
        raise EatlasError(f"unknown criterion {unknown[0]!r}", field="--criteria",
                          hint=(f"did you mean {', '.join(close)}? " if close else "") + "see 'eatlas list --criteria'")
    results, item_rows = [], []
    order_of = list(dict.fromkeys(wanted))
    settings = {"criteria": {cid: {"version": known[cid].version, "sha256": known[cid].hash()} for cid in order_of},
                "association": ASSOCIATION, "ci_method": ci_method if ci is not None else None}
    for k, cid in enumerate(order_of):
        try:
            c = known[cid]
            sa, sb = _sets(reg, c, "a"), _sets(reg, c, "b")
            a_words, b_words = [i.text for i in sa.items], [i.text for i in sb.items]
            texts = [i.text for i in c.items]
            every = list(dict.fromkeys(texts + a_words + b_words))
            enc = encoder.encode(every)
            order = {t: n for n, t in enumerate(every)}
            # an item only partly in the model's vocabulary ("nurse zzqxqq") is not encodable, as the WEAT's stimuli:
            # a static model would score it as its known words alone (eatlas.encoders.Encoder.covers)
            covered = dict(zip(every, map(bool, np.asarray(encoder.covers(every), dtype=bool))))
            partly = (getattr(encoder, "uncovered_reason", None)
                      or "partly outside the model's vocabulary (not encodable)")

            def vec(t, enc=enc, order=order, covered=covered):
                n = order[t]
                return None if enc.missing[n] or not covered[t] else np.asarray(enc.vectors[n], dtype=np.float64)
            A = [v for v in map(vec, a_words) if v is not None]
            B = [v for v in map(vec, b_words) if v is not None]
            dropped_attr = [w for w in a_words + b_words if vec(w) is None]
            spec = c.criterion
            base = dict(criterion_id=c.id, criterion_version=c.version, paper=c.source.get("paper"),
                        measure=spec.get("measure", ""), unit=spec.get("unit", ""), year=spec.get("year"),
                        a_set=sa.ref, b_set=sb.ref, n_a=len(A), n_b=len(B),
                        dropped_attributes=", ".join(dropped_attr) or None, n_items=len(c.items),
                        association=ASSOCIATION, expected_sign=c.expected_sign)
            rows = []
            for it in c.items:
                rows.append(ValidityItemRow(criterion_id=c.id, item=it.text, kind=it.kind,
                                            criterion_value=float(it.value), association=None, used=False,
                                            reason=None, data_rows=",".join(map(str, it.rows)), weight=it.weight))
            why_not = None
            if len(A) < 1 or len(B) < 1 or len(A) + len(B) < 3:
                why_not = (f"too few attribute words the model encodes (A {len(A)}, B {len(B)}; WEFAT needs 1, 1, "
                           "3 together)")
            for r in rows:
                v = vec(r.item)
                if v is None:
                    r.reason = "not in the model's vocabulary (not encodable)" if enc.missing[order[r.item]] else partly
                elif why_not:
                    r.reason = why_not
                elif not np.any(v):
                    r.reason = "its vector is zero; no cosine is defined"
                else:
                    try:
                        r.association = float(effect_sizes(v[None, :], np.vstack(A), np.vstack(B))[0])
                        r.used = True
                    except ValueError as e:
                        r.reason = str(e).replace("rows [0] of W are", "the item is")
            used = [r for r in rows if r.used]
            dropped = [r.item for r in rows if not r.used]
            stats = dict(pearson_r=None, pearson_p=None, pearson_ci_low=None, pearson_ci_high=None,
                         spearman_rho=None, spearman_p=None, spearman_ci_low=None, spearman_ci_high=None, ci=None,
                         n_boot=None, ci_method=None)
            if why_not is None:
                try:
                    cor = correlate([r.association for r in used], [r.criterion_value for r in used], ci=ci,
                                    n_boot=n_boot, seed=seed, method=ci_method)
                    stats = {k: getattr(cor, k) for k in stats}
                except ValueError as e:
                    why_not = str(e)
            results.append(ValidityRow(**base, n_used=len(used), n_dropped=len(dropped),
                                       dropped=", ".join(dropped) or None,
                                       status="ok" if why_not is None else "not_run", reason=why_not, **stats))
            item_rows += rows
        except KeyboardInterrupt:     # Ctrl-C: the finished criteria are kept (and stored), this one not
            done = order_of[:k]
            if not done:
                raise
            kept = [r for r in item_rows if r.criterion_id in done]
            raise Stopped({"validity_results": results[:k], "validity_items": kept}, done=done, rest=order_of[k:],
                          settings={**settings, "criteria": {c: settings["criteria"][c] for c in done}}) from None
    return results, item_rows, settings


def printed_correlations(con, res) -> dict:
    """(run_id, criterion_id) -> the paper's printed Pearson r beside that run (view
    validity_reproduction_loose_all_runs: the same model first, else the same family, with what differs), as text
    with its provenance and the printed bound of P where the note gives one; empty where the registry holds none."""
    ids = sorted(set(res["run_id"]))
    got = []
    # every run's pairs; an older store has only the loose view
    for view in ("validity_reproduction_loose_all_runs", "validity_reproduction_loose"):
        try:
            got = con.execute("SELECT run_id, criterion_id, published_value, paper, table_id, published_model, match, "
                              f"differs, published_note FROM {view} WHERE statistic = 'pearson_r' "
                              f"AND run_id IN ({', '.join('?' * len(ids))}) "
                              "ORDER BY match <> 'same_model', paper, table_id", ids).fetchall()
            break
        except Exception:           # a database written before the view: nothing printed beside
            got = []
    out: dict = {}
    for run, cid, v, paper, table, model, match, differs, note in got:
        if (run, cid) in out or v is None:
            continue
        bound = str(note).split(" as printed")[0] if note and str(note).startswith("P <") else ""
        how = "" if match == "same_model" else f"; {str(match).replace('_', ' ')}" + (f": {differs}" if differs else "")
        out[(run, cid)] = f"{v:+.2f}{', ' + bound if bound else ''} ({paper}, {table}, {model}{how})"
    return out


def _report_rows(res, printed: dict | None = None) -> list[dict]:
    printed = printed or {}
    out = []
    for r in res.sort_values(["run_model", "criterion_id"]).to_dict("records"):
        ok = r["status"] == "ok"
        out.append({"model": r["run_model"], "criterion": r["criterion_id"], "n": f"{r['n_used']} of {r['n_items']}",
                    "dropped": _text(r.get("dropped")), "r": f"{r['pearson_r']:+.3f} {_ci(r, 'pearson')}" if ok else
                    f"not run: {r.get('reason')}", "p": f"{r['pearson_p']:.2g}" if ok else "",
                    "rho": f"{r['spearman_rho']:+.3f} {_ci(r, 'spearman')}" if ok else "",
                    "expected": r["expected_sign"], "measure": f"{r['measure']} ({r['unit']}, {r['year']})",
                    "printed": printed.get((r["run_id"], r["criterion_id"]), "none in the registry")})
    return out


def _set_name(ref) -> str:
    """A set reference as words for an axis: ``female_terms_weat7@1.0.0`` -> ``female terms weat7``."""
    return str(ref).split("@")[0].replace("_", " ")


def place_labels(ax, x, y, texts, *, fontsize: float = 6.5) -> int:
    """Label the points (x, y) where a label overprints no label placed before it nor leaves the axes: greedily,
    the points farthest from the others' centre first, each tried right, left, above and below its point. Returns
    the number of labels drawn; a point left unlabelled keeps its marker (the table below the figure names every
    item)."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    cx, cy = (np.nanmean(x), np.nanmean(y)) if len(x) else (0.0, 0.0)
    sx, sy = (np.nanstd(x) or 1.0, np.nanstd(y) or 1.0) if len(x) else (1.0, 1.0)
    order = sorted(range(len(x)), key=lambda i: -(((x[i] - cx) / sx) ** 2 + ((y[i] - cy) / sy) ** 2))
    # the markers themselves (3 px around each) are obstacles too
    pts = ax.transData.transform(np.column_stack([x, y])) if len(x) else np.empty((0, 2))
    placed = [(px - 3, py - 3, px + 3, py + 3) for px, py in pts]
    drawn = 0
    for i in order:
        for dx, dy, ha, va in ((4, 2, "left", "bottom"), (-4, 2, "right", "bottom"), (0, 5, "center", "bottom"),
                               (0, -5, "center", "top")):
            t = ax.annotate(str(texts[i]), (x[i], y[i]), xytext=(dx, dy), textcoords="offset points",
                            fontsize=fontsize, ha=ha, va=va, color="#333")
            bb = t.get_window_extent(renderer)
            r = (bb.x0, bb.y0, bb.x1, bb.y1)
            inside = r[0] >= box.x0 and r[2] <= box.x1 and r[1] >= box.y0 and r[3] <= box.y1
            mine = (pts[i][0] - 3, pts[i][1] - 3, pts[i][0] + 3, pts[i][1] + 3)
            clash = any(not (r[2] < q[0] or r[0] > q[2] or r[3] < q[1] or r[1] > q[3])
                        for q in placed if q != mine)
            if inside and not clash:
                placed.append(r)
                drawn += 1
                break
            t.remove()
    return drawn


def validity_scatter(ctx, res, items, printed: dict | None = None) -> dict | None:
    """One scatter per criterion and model: each item's association against its criterion value, the least-squares
    line, r with its interval (and the paper's printed r, where the registry holds one) in the title; the y axis
    says which attribute set each direction points to; labels only where they do not overprint."""
    import pandas as pd

    res = res[res["status"] == "ok"].sort_values(["run_model", "criterion_id"])
    if not len(res):
        return None
    n = len(res)
    ncols = min(2, n)
    nrows = -(-n // ncols)
    fig = ctx.figure((7.0 * ncols, 5.6 * nrows))
    labelled = 0
    for k, r in enumerate(res.itertuples()):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        sel = items[(items["run_id"] == r.run_id) & (items["criterion_id"] == r.criterion_id)]
        sel = sel[sel["used"].astype(bool)]
        x = pd.to_numeric(sel["criterion_value"], errors="coerce").to_numpy(dtype=float)
        y = pd.to_numeric(sel["association"], errors="coerce").to_numpy(dtype=float)
        ax.scatter(x, y, s=16, color="#2166ac", alpha=0.8)
        if len(x) >= 2 and np.ptp(x) > 0:
            slope, icpt = np.polyfit(x, y, 1)
            xs = np.linspace(x.min(), x.max(), 2)
            ax.plot(xs, slope * xs + icpt, color="#b2182b", lw=1.2)
        ci = _ci(r._asdict(), "pearson")
        paper = (printed or {}).get((r.run_id, r.criterion_id))
        ax.set_title(f"{r.criterion_id} | {r.run_model}\nr = {r.pearson_r:+.2f} {ci}, n = {r.n_used}"
                     + (f"; paper r = {paper.split(' ')[0].rstrip(',')}" if paper else ""), fontsize=9)
        ax.set_xlabel(f"{r.measure} ({r.unit}, {r.year})", fontsize=8)
        a_name, b_name = _set_name(getattr(r, "a_set", "A")), _set_name(getattr(r, "b_set", "B"))
        ax.set_ylabel(f"association s(w, A, B)\n(\u2212) toward {b_name} \u2026 toward {a_name} (+)", fontsize=8)
        ax.axhline(0, color="#999", lw=0.5)
        ax.tick_params(labelsize=8)
        fig.tight_layout()
        labelled += place_labels(ax, x, y, list(sel["item"]))
    fig.tight_layout()
    return {"svg": ctx.svg(fig), "n": n, "labelled": labelled}


VALIDITY_HTML = """\
  {% if rows %}
  <table class="results">
    <thead><tr><th>model</th><th>criterion</th><th>items used</th><th>Pearson r [CI]</th><th>p</th>
      <th>Spearman rho [CI]</th><th>paper's r (its model)</th><th>expected sign</th><th>criterion</th>
      <th>not encodable</th></tr></thead>
    <tbody>
    {% for r in rows %}
      <tr><td>{{ r.model }}</td><td>{{ r.criterion }}</td><td>{{ r.n }}</td><td>{{ r.r }}</td><td>{{ r.p }}</td>
        <td>{{ r.rho }}</td><td>{{ r.printed }}</td><td>{{ r.expected }}</td><td>{{ r.measure }}</td>
        <td>{{ r.dropped }}</td></tr>
    {% endfor %}
    </tbody>
  </table>
  {% if fig %}
  <figure id="fig-validity">
    {{ fig.svg }}
    <figcaption>Each item's association s(w, A, B) (Caliskan et al.'s WEFAT) against its criterion value, with the
      least-squares line; r is Pearson's, its interval the bootstrap over items. Above zero an item is closer to the
      attribute set A (for Caliskan et al.'s criteria, the female terms), below zero to B. An item's name is
      printed only where it overprints no other label. The correlation is across items: it
      does not make any one item's association fair or unfair. {{ fig.n }} criterion/model pair(s).</figcaption>
  </figure>
  {% endif %}
  {% else %}
  <p class="note">No validity run yet{% if has_table and run_id %} for run {{ run_id }}{% endif %}
    (eatlas run --method validity).</p>
  {% endif %}
"""
