"""IBD and EIBD: (emergent) intersectional bias detection (Guo and Caliskan 2021).

Association score of an attribute word w with two groups of names G1, G2 (WEFAT, Caliskan et al.
2017; the SC-EAT formula of ``eatlas.stats.sceat.effect_sizes``, ddof=1)::

    s(w, G1, G2) = (mean_{x in G1} cos(w, x) - mean_{y in G2} cos(w, y)) / std_{x in G1 u G2} cos(w, x)

IBD for an intersectional group C (e.g. African American females, "AF"): w is detected when
``s(w, C, C') > t`` for *any* other intersectional group C' (the union over the pairs), i.e. when
``ibd_score(w) = max_{C' != C} s(w, C, C') > t``.

EIBD for C = (race r, gender g): the IBD words minus those also above t for a constituent group:
``s(w, R_r, R_r') > t`` for another race r' or ``s(w, G_g, G_g') > t`` for another gender g', where
a race group R_r is the union of the names of every intersectional group of race r (and G_g of
gender g). So w is detected when ``ibd_score(w) > t`` and ``constituent_score(w) <= t`` with
``constituent_score(w) = max(max_{r'} s(w, R_r, R_r'), max_{g'} s(w, G_g, G_g'))``; the same t is
used for both steps (the paper's "same positive threshold"). That is ``rule="any"`` (the paper's
prose: a word is dropped when *any* constituent score exceeds t). ``rule="all"`` is the rule the
authors' code intends (weiguowilliam/CEAT code/ibd.py, ``inner_eibd``): drop a word only when *all*
its constituent scores exceed t, i.e. ``constituent_score(w) = min(...)`` over the same pairs.
(Their code never applies it: it sums numpy booleans, which add as logical OR, so their EIBD
detects exactly the IBD words; see docs/methods.md.)

Threshold: the paper treats detection as a one-vs-all classifier over the validation words
(Ghavami and Peplau 2013 lists plus random words): positives are the words of the target's list,
negatives every other word; t is chosen on the ROC curve with the highest TPR - FPR, ties broken
by the highest TPR (the paper); remaining ties (same TPR and FPR, hence the same detections) by the
largest t. ``nonnegative_threshold=True`` keeps t >= 0 ("positive effect size threshold").
Reported: accuracy (TP+TN)/all, TPR, FPR, and the chance rate |positives| / |words| (the paper's
"random chance of correct classification", e.g. 14/98 = 14.3% for AF intersectional).

Labels are plain data (word -> names of the validation lists it is on); list names are free. The
paper's own chance rates and accuracies are published numbers, kept with the registry's published
results (registry/guo2021/published/) and joined to a run by ``eatlas.methods.ibd.run_ibd``.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from .sceat import effect_sizes

EIBD_RULES = ("any", "all")

__all__ = [
    "EIBD_RULES", "DetectionResult", "association_scores", "ibd_scores",
    "constituent_scores", "roc_threshold", "ibd", "eibd", "labels_from_lists",
]

def labels_from_lists(lists: Mapping[str, Collection[str]]) -> dict[str, frozenset[str]]:
    """Invert ``{list name: words}`` into ``{word: frozenset of list names}``."""
    out: dict[str, set[str]] = {}
    for name, words in lists.items():
        for w in words:
            out.setdefault(w, set()).add(name)
    return {w: frozenset(s) for w, s in out.items()}


def _categories(groups: Mapping[str, np.ndarray], categories) -> dict[str, tuple[str, str]]:
    if categories is None:
        bad = [g for g in groups if len(g) != 2]
        if bad:
            raise ValueError(f"groups {bad} are not two-letter codes (race, gender); pass categories=")
        return {g: (g[0], g[1]) for g in groups}
    missing = [g for g in groups if g not in categories]
    if missing:
        raise ValueError(f"categories has no (race, gender) for groups {missing}")
    return {g: tuple(categories[g]) for g in groups}


def _matrix(words: list[str], attributes: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.vstack([np.asarray(attributes[w], dtype=np.float64).reshape(1, -1) for w in words])


def association_scores(W, G1, G2) -> np.ndarray:
    """s(w, G1, G2) for every row of W (attribute vectors) and name matrices G1, G2."""
    return effect_sizes(W, G1, G2)


def ibd_scores(groups: Mapping[str, np.ndarray], W, target: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(max over pairs, {other group: s(w, target, other)}) for every row of W."""
    if target not in groups:
        raise ValueError(f"target {target!r} is not one of the groups {sorted(groups)}")
    pairs = {g: association_scores(W, groups[target], m) for g, m in groups.items() if g != target}
    if not pairs:
        raise ValueError("IBD needs at least two groups")
    return np.max(np.vstack(list(pairs.values())), axis=0), pairs


def constituent_scores(groups: Mapping[str, np.ndarray], W, target: str, categories=None, rule: str = "any"
                       ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(max over constituent pairs, {"race:r'" or "gender:g'": score}) for the target's race and gender;
    with ``rule="all"`` the min over the pairs (a word exceeds t on all of them when its min does)."""
    if rule not in EIBD_RULES:
        raise ValueError(f"rule must be one of {EIBD_RULES}, got {rule!r}")
    cats = _categories(groups, categories)
    race, gender = cats[target]

    def union(axis: int, value: str) -> np.ndarray:
        return np.vstack([np.asarray(m) for g, m in groups.items() if cats[g][axis] == value])

    pairs: dict[str, np.ndarray] = {}
    for axis, label, own in ((0, "race", race), (1, "gender", gender)):
        others = sorted({c[axis] for c in cats.values()} - {own})
        for o in others:
            pairs[f"{label}:{o}"] = association_scores(W, union(axis, own), union(axis, o))
    if not pairs:
        raise ValueError("EIBD needs at least two races or two genders")
    stacked = np.vstack(list(pairs.values()))
    return (np.max(stacked, axis=0) if rule == "any" else np.min(stacked, axis=0)), pairs


def _rates(detected: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """detected: (candidates, words) bool -> TPR, FPR per candidate."""
    npos, nneg = positive.sum(), (~positive).sum()
    tpr = (detected & positive).sum(axis=1) / npos
    fpr = (detected & ~positive).sum(axis=1) / nneg
    return tpr, fpr


def _detect(t: np.ndarray, score: np.ndarray, excl: np.ndarray | None) -> np.ndarray:
    det = score[None, :] > t[:, None]
    if excl is not None:
        det &= ~(excl[None, :] > t[:, None])
    return det


def roc_threshold(score, positive, *, exclusion_score=None, nonnegative: bool = True
                  ) -> tuple[float, dict[str, np.ndarray]]:
    """Threshold with the highest TPR - FPR (ties: highest TPR, then largest threshold).

    Detection at t is ``score > t`` (and ``exclusion_score <= t`` when given, for EIBD). Returns the
    threshold and the ROC table (``threshold``, ``tpr``, ``fpr``) over every distinct outcome.
    """
    score = np.asarray(score, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    excl = None if exclusion_score is None else np.asarray(exclusion_score, dtype=np.float64)
    if positive.all() or not positive.any():
        raise ValueError("the ROC needs both positive and negative words")
    values = score if excl is None else np.concatenate([score, excl])
    cand = np.unique(np.concatenate([values, [values.min() - 1.0]]))
    if nonnegative:
        cand = np.unique(np.concatenate([cand[cand >= 0], [0.0]]))
    tpr, fpr = _rates(_detect(cand, score, excl), positive)
    j = tpr - fpr
    best = np.flatnonzero(np.isclose(j, j.max(), rtol=0, atol=1e-12))
    best = best[np.isclose(tpr[best], tpr[best].max(), rtol=0, atol=1e-12)]
    t = float(cand[best].max())
    return t, {"threshold": cand, "tpr": tpr, "fpr": fpr}


@dataclass(frozen=True)
class DetectionResult:
    method: str                       # "IBD" or "EIBD"
    target: str                       # intersectional group, e.g. "AF"
    positive_list: str | None         # the validation list scored as positives
    threshold: float
    threshold_source: str             # "roc" or "given"
    words: tuple[str, ...]
    scores: tuple[float, ...]         # ibd_score per word
    constituent: tuple[float, ...] | None   # EIBD: constituent_score per word (max, or min for rule "all")
    detected: tuple[str, ...]
    n_words: int
    n_positive: int | None
    tp: int | None
    fp: int | None
    tn: int | None
    fn: int | None
    accuracy: float | None
    tpr: float | None
    fpr: float | None
    chance: float | None              # n_positive / n_words
    missing: tuple[str, ...]          # labelled words without a vector (left out, listed here)
    pair_scores: dict = field(repr=False, compare=False, default_factory=dict)
    labels: dict = field(repr=False, compare=False, default_factory=dict)
    eibd_rule: str | None = None      # EIBD: "any" (paper's prose) or "all" (authors' code's intent)

    def to_dict(self) -> dict:
        """One flat summary record (e.g. a row of ``ibd_results``)."""
        d = asdict(self)
        for k in ("words", "scores", "constituent", "pair_scores", "labels"):
            d.pop(k)
        d["detected"] = ",".join(self.detected)
        d["missing"] = ",".join(self.missing)
        return d

    def to_rows(self) -> list[dict]:
        """One record per attribute word: scores, each pair's score, detection and label."""
        rows = []
        for i, w in enumerate(self.words):
            row = {"method": self.method, "target": self.target, "word": w, "score": self.scores[i],
                   "constituent_score": None if self.constituent is None else self.constituent[i],
                   "detected": w in set(self.detected), "threshold": self.threshold,
                   "positive": None if self.positive_list is None else self.positive_list in self.labels.get(w, ()),
                   "lists": ",".join(sorted(self.labels.get(w, ())))}
            row.update({f"s_{k}": float(v[i]) for k, v in self.pair_scores.items()})
            rows.append(row)
        return rows


def _run(method: str, groups, attributes, labels, target, positive_list, threshold, categories,
         nonnegative_threshold, rule: str | None = None) -> DetectionResult:
    groups = {g: np.asarray(m, dtype=np.float64) for g, m in groups.items()}
    if labels is not None:
        unlabelled = [w for w in attributes if w not in labels]
        if unlabelled:
            raise ValueError(f"attribute words without a labels entry: {unlabelled} "
                             "(give an empty collection for a word on no list)")
        missing = tuple(w for w in labels if w not in attributes)
        if positive_list is None:
            raise ValueError("positive_list is required with labels")
    else:
        missing = ()
        if threshold is None:
            raise ValueError("without labels there is no ROC: give a threshold")
    words = list(attributes)
    if not words:
        raise ValueError("no attribute words")
    W = _matrix(words, attributes)
    score, pairs = ibd_scores(groups, W, target)
    excl = None
    if method == "EIBD":
        excl, cpairs = constituent_scores(groups, W, target, categories, rule=rule)
        pairs = {**pairs, **cpairs}
    positive = None
    if labels is not None:
        positive = np.array([positive_list in labels[w] for w in words])
    if threshold is None:
        t, _ = roc_threshold(score, positive, exclusion_score=excl, nonnegative=nonnegative_threshold)
        source = "roc"
    else:
        t, source = float(threshold), "given"
    det = _detect(np.array([t]), score, excl)[0]
    metrics = dict(n_positive=None, tp=None, fp=None, tn=None, fn=None, accuracy=None, tpr=None, fpr=None,
                   chance=None)
    if positive is not None:
        tp = int((det & positive).sum())
        fp = int((det & ~positive).sum())
        tn = int((~det & ~positive).sum())
        fn = int((~det & positive).sum())
        npos = int(positive.sum())
        metrics = dict(n_positive=npos, tp=tp, fp=fp, tn=tn, fn=fn, accuracy=(tp + tn) / len(words),
                       tpr=tp / npos if npos else float("nan"),
                       fpr=fp / (len(words) - npos) if len(words) > npos else float("nan"),
                       chance=npos / len(words))
    return DetectionResult(
        method=method, target=target, positive_list=positive_list, threshold=t, threshold_source=source,
        words=tuple(words), scores=tuple(float(x) for x in score),
        constituent=None if excl is None else tuple(float(x) for x in excl),
        detected=tuple(w for w, d in zip(words, det) if d), n_words=len(words), missing=missing,
        pair_scores={k: tuple(float(x) for x in v) for k, v in pairs.items()},
        labels={} if labels is None else {w: frozenset(labels[w]) for w in words}, eibd_rule=rule,
        **metrics,
    )


def ibd(groups: Mapping[str, np.ndarray], attributes: Mapping[str, np.ndarray],
        labels: Mapping[str, Collection[str]] | None, *, target: str, positive_list: str | None = None,
        threshold: float | None = None, nonnegative_threshold: bool = True) -> DetectionResult:
    """Intersectional Bias Detection for ``target`` (a key of ``groups``).

    groups: group -> name-embedding matrix (one row per name), e.g. the six race x gender groups.
    attributes: word -> vector (the validation words, or any vocabulary).
    labels: word -> validation lists it is on (``labels_from_lists``); every attribute word needs an
        entry; labelled words without a vector are listed in ``missing``. ``None`` with a given
        ``threshold`` detects without evaluating.
    positive_list: the list whose words are the positives (e.g. ``"af_intersectional"``).
    threshold: fixed t; ``None`` chooses it on the ROC curve.
    """
    return _run("IBD", groups, attributes, labels, target, positive_list, threshold, None, nonnegative_threshold)


def eibd(groups: Mapping[str, np.ndarray], attributes: Mapping[str, np.ndarray],
         labels: Mapping[str, Collection[str]] | None, *, target: str, positive_list: str | None = None,
         threshold: float | None = None, categories: Mapping[str, tuple[str, str]] | None = None,
         nonnegative_threshold: bool = True, rule: str = "any") -> DetectionResult:
    """Emergent Intersectional Bias Detection; as ``ibd``, plus ``categories`` (group -> (race,
    gender)); by default a group key is a two-letter code read as (race, gender), e.g. "AF".
    ``rule``: drop an IBD word when "any" constituent score exceeds t (the paper), or only when
    "all" do (the authors' code's intent)."""
    if rule not in EIBD_RULES:
        raise ValueError(f"rule must be one of {EIBD_RULES}, got {rule!r}")
    return _run("EIBD", groups, attributes, labels, target, positive_list, threshold, categories,
                nonnegative_threshold, rule)
