"""IBD and EIBD (Guo & Caliskan 2021): the intersectional and emergent biases of each group of Guo &
Caliskan's names, detected among the Ghavami & Peplau validation lists, thresholds chosen on the ROC
curve (eatlas.stats.ibd); the paper's printed chance rates and accuracies beside ours."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EatlasError
from .base import Method, MethodRun, Option, Stopped, Table, interrupted, register

RACE_CODE = {"african_american": "A", "european_american": "E", "mexican_american": "M"}
GENDER_CODE = {"female": "F", "male": "M"}
RACE_WORDS = {"A": "African American", "E": "European American", "M": "Mexican American"}
GENDER_WORDS = {"F": "females", "M": "males"}


@dataclass
class IbdRow:
    """A row of ``ibd_results``: eatlas.stats.ibd.DetectionResult.to_dict() and the paper's printed rates."""
    method: str
    target: str
    positive_list: str | None
    threshold: float | None
    threshold_source: str | None
    detected: str | None
    n_words: int | None
    n_positive: int | None
    tp: int | None
    fp: int | None
    tn: int | None
    fn: int | None
    accuracy: float | None
    tpr: float | None
    fpr: float | None
    chance: float | None
    missing: str | None
    eibd_rule: str | None
    paper_chance: float | None
    paper_accuracy: float | None
    dropped_names: str | None


@dataclass
class IbdWordRow:
    """A row of ``ibd_words``: one attribute word's scores (and one ``s_<pair>`` column per pair of groups)."""
    method: str
    target: str
    word: str
    score: float | None
    constituent_score: float | None
    detected: bool | None
    threshold: float | None
    positive: bool | None
    lists: str | None


@register
class Ibd(Method):
    name = "ibd"
    help = "IBD/EIBD on Guo & Caliskan's names and validation lists (Guo & Caliskan 2021)"
    inputs = "groups"
    levels = ("word",)
    options = (Option("--ibd-groups", dict(nargs="+", metavar="CODE", help="the intersectional groups to analyse, "
                                           "e.g. AF MM (default: every group of the registry)")),
               Option("--eibd-rule", dict(choices=("any", "all"), default="any",
                                          help="EIBD drops a word when any constituent (race, gender) score exceeds "
                                               "t (any: the paper) or only when all do (all: the rule the authors' "
                                               "code intends)")),)
    tables = (Table("ibd_results", IbdRow, per_test=False, doc="IBD/EIBD detection per group"),
              Table("ibd_words", IbdWordRow, per_test=False, open=True, doc="every attribute word's scores"))

    def check(self, cfg) -> None:
        if cfg.tests:
            raise EatlasError("IBD/EIBD runs on Guo & Caliskan's name groups and validation lists, not on tests",
                              field="--tests", hint="leave out --tests")

    def run(self, ctx) -> MethodRun:
        rule, groups = self.option(ctx.cfg, "eibd_rule"), self.option(ctx.cfg, "ibd_groups")
        try:
            summaries, words_rows, settings = run_ibd(ctx.encoder, ctx.registry, targets=groups, eibd_rule=rule)
        except Stopped as stop:         # Ctrl-C after a group finished: those are stored, and said
            summaries, words_rows, settings = stop.rows["ibd_results"], stop.rows["ibd_words"], stop.settings
            interrupted(settings, ctx.notes, stop, unit="group", resume="--ibd-groups")
        return MethodRun(rows={"ibd_results": summaries, "ibd_words": words_rows}, levels=["word"],
                         settings=settings)

    def summary(self, outcome):
        from rich.table import Table as RichTable

        from ..console import esc
        run = outcome.run
        t = RichTable("method", "group", "threshold", "detected", "accuracy", "TPR", "FPR", "chance", "paper accuracy",
                      title=esc(f"IBD/EIBD  run {run['run_id'][:8]}  model {run['model']}"))
        for r in outcome.tables["ibd_results"].to_dict("records"):
            pa = r.get("paper_accuracy")
            t.add_row(esc(r["method"]), esc(r["target"]), f"{r['threshold']:.3g}",
                      str(len(r["detected"].split(",")) if r["detected"] else 0), f"{r['accuracy']:.1%}",
                      f"{r['tpr']:.2f}", f"{r['fpr']:.2f}", f"{r['chance']:.1%}",
                      "" if pa is None or pa != pa else f"{pa:.1%}")
        return t


def _validation_sets(reg) -> dict:
    """The Ghavami & Peplau validation lists (sets tagged ibd_validation), keyed without 'guo2021_val_'."""
    from ..registry.checks import has_tag

    return {s.id.removeprefix("guo2021_val_"): s for s in reg.sets.values() if has_tag(s, "ibd_validation")}


def ibd_inputs(reg):
    """(groups: code -> [names], lists: short name -> [words]) from the registry's Guo & Caliskan sets."""
    groups: dict[str, list[str]] = {}
    validation = _validation_sets(reg)
    lists = {key: [i.text for i in s.items] for key, s in validation.items()}
    listed = {v.id for v in validation.values()}
    for s in reg.sets.values():
        g = s.group or {}
        if s.id in listed:
            continue
        if s.source.get("paper") == "guo2021" and g.get("race") in RACE_CODE and g.get("gender") in GENDER_CODE \
                and all(i.kind == "name" for i in s.items):
            groups[RACE_CODE[g["race"]] + GENDER_CODE[g["gender"]]] = [i.text for i in s.items]
    if len(groups) < 2 or not lists:
        raise EatlasError("the registry has no Guo & Caliskan name groups and validation lists for IBD",
                          hint="sets with group: {race, gender} and tags: [ibd_validation]")
    return groups, lists


def run_ibd(encoder, reg, *, targets: list[str] | None = None, eibd_rule: str = "any"):
    """IBD and EIBD for each intersectional group: (ibd_results rows, ibd_words rows, settings).
    ``eibd_rule``: EIBD drops a word when "any" constituent score exceeds t (the paper) or "all" do."""
    from ..stats.ibd import labels_from_lists

    groups, lists = ibd_inputs(reg)
    words = sorted({w for ws in lists.values() for w in ws})
    names = sorted({n for ns in groups.values() for n in ns})
    enc_w, enc_n = encoder.encode(words), encoder.encode(names)
    wvec = {w: enc_w.vectors[i] for i, w in enumerate(words) if not enc_w.missing[i]}
    nvec = {n: enc_n.vectors[i] for i, n in enumerate(names) if not enc_n.missing[i]}
    dropped_names = [n for n in names if n not in nvec]
    gm = {}
    for code, ns in groups.items():
        kept = [nvec[n] for n in ns if n in nvec]
        if len(kept) < 2:
            raise EatlasError(f"group {code} has {len(kept)} encodable names; IBD needs at least 2",
                              hint=f"names missing from the model: {', '.join(n for n in ns if n not in nvec)}")
        gm[code] = np.vstack(kept)
    unknown = [g for g in targets or [] if g not in gm]
    if unknown:
        raise EatlasError(f"no group {', '.join(unknown)} among the registry's name groups", field="--ibd-groups",
                          hint=f"one of {', '.join(sorted(gm))}")
    labels = labels_from_lists(lists)
    labels = {w: labels.get(w, frozenset()) for w in wvec}
    concepts = {key: s.concept for key, s in _validation_sets(reg).items()}
    printed = _printed_rates(reg)
    summaries, words_rows = [], []
    settings = {"targets": targets, "lists": sorted(lists), "groups": sorted(groups), "eibd_rule": eibd_rule}
    order = list(targets or sorted(gm))
    for k, code in enumerate(order):
        try:
            one, words_one = _one_group(code, gm, wvec, labels, lists, concepts, printed, words, dropped_names,
                                        eibd_rule)
        except KeyboardInterrupt:       # Ctrl-C: the finished groups are kept (and stored), this one not
            if not summaries:
                raise
            raise Stopped({"ibd_results": summaries, "ibd_words": words_rows}, done=order[:k],
                          rest=order[k:], settings=settings) from None
        summaries += one
        words_rows += words_one
    return summaries, words_rows, settings


def _one_group(code, gm, wvec, labels, lists, concepts, printed, words, dropped_names, eibd_rule):
    """IBD and EIBD for one group: its ibd_results and ibd_words rows."""
    from ..stats.ibd import eibd, ibd

    summaries, words_rows = [], []
    lc = code.lower()
    for method, fn, plist in (("IBD", ibd, f"{lc}_intersectional"), ("EIBD", eibd, f"{lc}_emergent")):
        if plist not in lists:
            continue
        r = fn(gm, wvec, labels, target=code, positive_list=plist,
               **({"rule": eibd_rule} if method == "EIBD" else {}))
        row = r.to_dict()
        row["paper_chance"] = printed.get(("chance", concepts.get(plist)))
        row["paper_accuracy"] = printed.get(("accuracy", f"{method} | {_group_words(code)}"))
        row["missing"] = ",".join(sorted(set(words) - set(wvec)))
        row["dropped_names"] = ",".join(dropped_names)
        summaries.append(row)
        words_rows += r.to_rows()
    return summaries, words_rows


def _group_words(code: str) -> str:
    """'AF' -> 'African American females', as the paper's prose names the group."""
    return f"{RACE_WORDS.get(code[:1], code)} {GENDER_WORDS.get(code[1:], '')}".strip()


def _printed_rates(reg) -> dict:
    """The paper's printed chance rates (by list, as printed) and detection accuracies (by 'IBD | group'),
    as fractions, from the registry's published results of Guo & Caliskan."""
    from ..registry.published import read_published

    pub = read_published(reg)
    pub = pub[(pub["paper"] == "guo2021") & ~pub["missing"]]
    out = {}
    for r in pub.itertuples():
        kind = {"random_chance_percent": "chance", "detection_accuracy_percent": "accuracy"}.get(r.statistic)
        if kind and r.table_id == ("Appendix" if kind == "chance" else "prose"):
            out[(kind, r.row_label)] = float(r.value) / 100
    return out
