"""The static site's pages of the validity criteria (eatlas.registry.criteria): ``criteria/<id>.html``, one per
criterion: what it measures, where every value comes from (data file, rows, repository, licence, reliability),
its items, and the shown validity runs (eatlas.methods.validity) with their correlation and the scatter of the
items' associations against the criterion values (the report's figure). Written by eatlas.outputs.site."""
from __future__ import annotations

import pandas as pd

from ..registry.base import Registry


def page_rel(criterion_id: str) -> str:
    return f"criteria/{criterion_id}.html"


class _Figures:
    """What eatlas.methods.validity.validity_scatter needs of a report context: a figure and its SVG."""

    def figure(self, figsize):
        from .report import _figure
        return _figure(figsize)

    def svg(self, fig):
        from .report import _safe, _svg
        return _safe(_svg(fig))


def criteria_index(reg: Registry, shown: pd.DataFrame) -> list[dict]:
    """One row per criterion for the site's index: id, title, source, items, licence, runs shown."""
    n_runs = shown.groupby("criterion_id").size().to_dict() if len(shown) else {}
    return [{"id": c.id, "href": page_rel(c.id), "title": c.title, "source": c.source.get("paper") or "",
             "items": len(c.items), "license": c.license, "n_runs": n_runs.get(c.id, 0)}
            for c in getattr(reg, "criteria", {}).values()]


def criterion_page(env, common: dict, reg: Registry, cid: str, shown: pd.DataFrame, items: pd.DataFrame,
                   *, figures: bool, csp: str, printed: dict | None = None) -> str:
    """The HTML page of one criterion with the shown runs' results (rows of validity_results / _items); ``csp``:
    the page's Content-Security-Policy (eatlas.outputs.site.csp); ``printed``: (run id, criterion id) -> the
    paper's printed r beside it (eatlas.methods.validity.printed_correlations)."""
    from ..methods.validity import _ci, _text, validity_scatter

    printed = printed or {}

    c = reg.criteria[cid]
    mine = shown[shown["criterion_id"] == cid] if len(shown) else shown
    rows = []
    for r in mine.sort_values("run_model").to_dict("records") if len(mine) else []:
        ok = r["status"] == "ok"
        rows.append({"run": str(r["run_id"])[:8], "model": r["run_model"], "n": f"{r['n_used']} of {r['n_items']}",
                     "r": f"{r['pearson_r']:+.3f} {_ci(r, 'pearson')}" if ok else f"not run: {_text(r.get('reason'))}",
                     "p": f"{r['pearson_p']:.2g}" if ok else "",
                     "rho": f"{r['spearman_rho']:+.3f} {_ci(r, 'spearman')}" if ok else "",
                     "dropped": _text(r.get("dropped")),
                     "printed": printed.get((r["run_id"], cid), "none in the registry")})
    fig = None
    if figures and len(mine) and len(items):
        fig = validity_scatter(_Figures(), mine, items[items["criterion_id"] == cid], printed)
    spec = c.criterion
    return env.get_template("criterion.html.j2").render(
        **common, root="../", csp=csp, c=c, spec=spec, rows=rows, fig=fig,
        license_note=c.raw.get("license_note"),
        items=[{"text": i.text, "value": f"{i.value:g}", "rows": ",".join(map(str, i.rows)),
                "weight": "" if i.weight is None else f"{i.weight:g}"} for i in c.items])
