"""IBD and EIBD on vectors built so that known words are associated with known groups."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

from eatlas.stats.ibd import (
    association_scores,
    constituent_scores,
    eibd,
    ibd,
    ibd_scores,
    labels_from_lists,
    roc_threshold,
)

GROUPS = ("AF", "AM", "EF", "EM", "MF", "MM")
RACE_DIM = {"A": 0, "E": 1, "M": 2}
GENDER_DIM = {"F": 3, "M": 4}
GROUP_DIM = {g: 5 + i for i, g in enumerate(GROUPS)}     # a direction only that group's names share
DIM = 11 + 50
NOISE = 0.1


def _noise(rng, n):
    v = np.zeros((n, DIM))
    v[:, 11:] = NOISE * rng.normal(size=(n, 50))
    return v


def _world(seed=0):
    rng = np.random.default_rng(seed)
    groups = {}
    for g in GROUPS:
        m = _noise(rng, 12)
        m[:, RACE_DIM[g[0]]] += 1.0
        m[:, GENDER_DIM[g[1]]] += 1.0
        m[:, GROUP_DIM[g]] += 1.0
        groups[g] = m

    words = {}

    def word(name, dim):
        v = _noise(rng, 1)[0]
        if dim is not None:
            v[dim] += 1.0
        words[name] = v

    for i in range(3):
        word(f"af_only{i}", GROUP_DIM["AF"])          # emergent: only AF names share the direction
    for i in range(2):
        word(f"mf_only{i}", GROUP_DIM["MF"])
        word(f"black{i}", RACE_DIM["A"])              # race-only
        word(f"fem{i}", GENDER_DIM["F"])              # gender-only
    word("mex0", RACE_DIM["M"])
    word("masc0", GENDER_DIM["M"])
    for i in range(8):
        word(f"insect{i}", None)                      # random words: true negatives
    lists = {
        "af_intersectional": [f"af_only{i}" for i in range(3)] + ["black0", "black1", "fem0", "fem1"],
        "af_emergent": [f"af_only{i}" for i in range(3)],
        "mf_intersectional": ["mf_only0", "mf_only1", "mex0", "fem0", "fem1"],
        "mf_emergent": ["mf_only0", "mf_only1"],
        "african_american": ["black0", "black1"], "mexican_american": ["mex0"],
        "female": ["fem0", "fem1"], "male": ["masc0"],
        "random": [f"insect{i}" for i in range(8)],
    }
    labels = labels_from_lists(lists)
    assert set(labels) == set(words)
    return groups, words, labels, lists


@pytest.fixture(scope="module")
def world():
    return _world()


def test_association_score_is_wefat():
    rng = np.random.default_rng(1)
    W, G1, G2 = rng.normal(size=(3, 9)), rng.normal(size=(5, 9)), rng.normal(size=(6, 9))
    got = association_scores(W, G1, G2)
    for i, w in enumerate(W):
        c1 = [float(w @ x / np.linalg.norm(w) / np.linalg.norm(x)) for x in G1]
        c2 = [float(w @ y / np.linalg.norm(w) / np.linalg.norm(y)) for y in G2]
        assert got[i] == pytest.approx((statistics.fmean(c1) - statistics.fmean(c2)) / statistics.stdev(c1 + c2))


def test_ibd_score_is_the_max_over_the_other_five_groups(world):
    groups, words, _, _ = world
    W = np.vstack([words["black0"], words["insect0"]])
    score, pairs = ibd_scores(groups, W, "AF")
    assert set(pairs) == {"AM", "EF", "EM", "MF", "MM"}
    np.testing.assert_allclose(score, np.max(np.vstack(list(pairs.values())), axis=0))
    assert pairs["AM"][0] < 0.5 < pairs["EF"][0]          # race word: AF ~ AM, AF >> EF


def test_constituent_groups_are_unions_of_names(world):
    groups, words, _, _ = world
    W = np.vstack([words["af_only0"], words["black0"], words["fem0"]])
    score, pairs = constituent_scores(groups, W, "AF")
    assert set(pairs) == {"race:E", "race:M", "gender:M"}
    R_A = np.vstack([groups["AF"], groups["AM"]])
    R_E = np.vstack([groups["EF"], groups["EM"]])
    np.testing.assert_allclose(pairs["race:E"], association_scores(W, R_A, R_E))
    assert score[1] > score[0] and score[2] > score[0]     # single-category words score higher


def test_ibd_detects_the_intersectional_words(world):
    groups, words, labels, lists = world
    r = ibd(groups, words, labels, target="AF", positive_list="af_intersectional")
    assert set(r.detected) == set(lists["af_intersectional"])
    assert (r.tp, r.fp, r.fn) == (7, 0, 0) and r.tn == len(words) - 7
    assert r.accuracy == 1.0 and r.tpr == 1.0 and r.fpr == 0.0
    assert r.chance == pytest.approx(7 / len(words))
    assert r.threshold_source == "roc" and r.threshold >= 0
    mf = ibd(groups, words, labels, target="MF", positive_list="mf_intersectional")
    assert set(mf.detected) == set(lists["mf_intersectional"])


def test_eibd_removes_single_category_words(world):
    groups, words, labels, lists = world
    r = eibd(groups, words, labels, target="AF", positive_list="af_emergent")
    assert set(r.detected) == set(lists["af_emergent"])
    assert r.accuracy == 1.0
    ibd_t = ibd(groups, words, labels, target="AF", positive_list="af_intersectional").threshold
    # with IBD's threshold the race and gender words would be detected; EIBD drops them by construction
    i = {w: k for k, w in enumerate(r.words)}
    for w in ("black0", "fem1"):
        assert r.scores[i[w]] > ibd_t and r.constituent[i[w]] > r.threshold
    for w in lists["af_emergent"]:
        assert r.scores[i[w]] > r.threshold >= r.constituent[i[w]]
    mf = eibd(groups, words, labels, target="MF", positive_list="mf_emergent")
    assert set(mf.detected) == set(lists["mf_emergent"])


def test_eibd_with_a_given_threshold_and_without_labels(world):
    groups, words, _, _ = world
    r = eibd(groups, words, None, target="AF", threshold=1.5)
    assert r.threshold_source == "given" and r.accuracy is None and r.tp is None
    assert set(r.detected) == {"af_only0", "af_only1", "af_only2"}
    with pytest.raises(ValueError):
        ibd(groups, words, None, target="AF")               # no labels, no ROC: a threshold is needed


def test_roc_threshold_picks_max_youden_then_max_tpr():
    # t=0.5: TPR 1, FPR .5; t=2: TPR .5, FPR 0 -> both J = .5, the higher TPR wins
    t, roc = roc_threshold([3.0, 2.0, 1.0, 0.5], [True, False, True, False])
    assert t == 0.5
    k = list(roc["threshold"]).index(0.5)
    assert roc["tpr"][k] == 1.0 and roc["fpr"][k] == 0.5
    # a lone best separation: the largest threshold that keeps it
    t2, _ = roc_threshold([3.0, 2.5, 1.0, 0.5], [True, True, False, False])
    assert t2 == 1.0
    # thresholds stay non-negative unless allowed
    t3, _ = roc_threshold([-0.1, -0.5, -2.0], [True, False, False])
    t4, _ = roc_threshold([-0.1, -0.5, -2.0], [True, False, False], nonnegative=False)
    assert t3 == 0.0 and t4 == -0.5
    with pytest.raises(ValueError):
        roc_threshold([1.0, 2.0], [True, True])


def test_labels_and_missing_words(world):
    groups, words, labels, _ = world
    labels2 = dict(labels)
    labels2["no_vector"] = frozenset({"af_intersectional"})
    r = ibd(groups, words, labels2, target="AF", positive_list="af_intersectional")
    assert r.missing == ("no_vector",)
    words2 = dict(words)
    words2["unlabelled"] = words["insect0"]
    with pytest.raises(ValueError, match="unlabelled"):
        ibd(groups, words2, labels, target="AF", positive_list="af_intersectional")
    with pytest.raises(ValueError):
        eibd({"AFX": groups["AF"], "AM": groups["AM"]}, words, labels, target="AFX", positive_list="af_emergent")


def test_records(world):
    groups, words, labels, _ = world
    r = ibd(groups, words, labels, target="AF", positive_list="af_intersectional")
    row = r.to_dict()
    assert all(isinstance(v, (int, float, str, bool, type(None))) for v in row.values())
    assert row["method"] == "IBD" and row["chance"] == r.n_positive / r.n_words
    rows = r.to_rows()
    assert len(rows) == len(words)
    by_word = {x["word"]: x for x in rows}
    assert by_word["af_only0"]["detected"] and by_word["af_only0"]["positive"]
    assert not by_word["insect0"]["detected"] and by_word["insect0"]["positive"] is False
    assert {"s_AM", "s_EF", "s_EM", "s_MF", "s_MM"} <= set(rows[0])
