"""Words, not sentences, are the units of the concepts' answer; its d belongs to the concepts; its p and interval
answer one question.

(a) ``words=`` with one row a word gives the answer without it; a word's rows repeated (sentences identical to
    their word) give the word-level answer exactly;
(b) bad ``words=`` (a length that is not its matrix's, a label in both X and Y or in both A and B) is refused
    before anything is computed, naming the argument and the row;
(c) the concepts' d of the same word pools does not change with the design's n_x : n_y (equal weights);
(d) for every alternative, the interval excludes 0 exactly when p_concepts (two-sided) < 1 - level, and the
    one-sided p is stored beside it;
(e) a small simulation of SEAT-like tests (words random, 5 templates a word, within-word correlation about 0.8):
    with words as units p_concepts < 0.05 in at most 10% at the null; every sentence a unit rejects far more;
(f) the runner passes the words at sentence level: the stored p_concepts is the word-unit answer.
"""
from __future__ import annotations

import numpy as np
import pytest

import eatlas
from benchmarks.calibration_levels import Nested
from eatlas.errors import EatlasError
from eatlas.stats.concepts import concepts_test


def _mats(seed, n=(8, 8, 8, 8), shift=0.4, dim=30):
    rng = np.random.default_rng(seed)
    e = np.eye(dim)
    X = rng.normal(size=(n[0], dim)) + shift * e[0]
    Y = rng.normal(size=(n[1], dim)) - shift * e[0] + e[1]
    A = rng.normal(size=(n[2], dim)) + e[0]
    B = rng.normal(size=(n[3], dim)) - e[0]
    return X, Y, A, B


def test_one_row_a_word_is_the_answer_without_words_and_repeated_rows_change_nothing():
    X, Y, A, B = _mats(1)
    base = eatlas.weat(X, Y, A, B, n_samples=2_000)
    labels = tuple([f"{r}{k}" for k in range(len(M))] for r, M in zip("xyab", (X, Y, A, B)))
    same = eatlas.weat(X, Y, A, B, n_samples=2_000, words=labels)
    assert same.p_concepts == pytest.approx(base.p_concepts, abs=1e-12)
    assert (same.concepts_low, same.concepts_high) == pytest.approx((base.concepts_low, base.concepts_high))
    rep = [np.repeat(M, 3, axis=0) for M in (X, Y, A, B)]          # each word in three identical "sentences"
    rep_words = tuple(list(np.repeat(lab, 3)) for lab in labels)
    nested = eatlas.weat(*rep, n_samples=2_000, words=rep_words)
    assert nested.p_concepts == pytest.approx(base.p_concepts, abs=1e-9)
    assert nested.d_concepts == pytest.approx(base.d_concepts, abs=1e-9)
    flat = eatlas.weat(*rep, n_samples=2_000)                        # the sentences as units: a third the variance
    assert flat.p_concepts < nested.p_concepts
    assert nested.effect_size == pytest.approx(flat.effect_size)       # the papers' answer never uses the words
    assert nested.p_value == flat.p_value


def test_bad_words_are_refused_before_any_work():
    X, Y, A, B = _mats(2)
    labels = [[f"{r}{k}" for k in range(8)] for r in "xyab"]
    with pytest.raises(EatlasError, match=r"words\[1\] \(wy\) has 7 label\(s\) for the 8 row\(s\) of Y"):
        eatlas.weat(X, Y, A, B, words=(labels[0], labels[1][:7], labels[2], labels[3]))
    shared = list(labels[1])
    shared[5] = "x3"
    with pytest.raises(EatlasError, match=r"label 'x3' \(row 3 of X\) is also a label of Y"):
        eatlas.weat(X, Y, A, B, words=(labels[0], shared, labels[2], labels[3]))
    with pytest.raises(EatlasError, match="is also a label of B"):
        eatlas.weat(X, Y, A, B, words=(labels[0], labels[1], labels[2], labels[2]))
    with pytest.raises(EatlasError, match="four sequences"):
        eatlas.weat(X, Y, A, B, words=(labels[0], labels[1]))


def test_the_concepts_d_does_not_depend_on_the_designs_shares():
    """The same population seen through designs of 20:20, 8:32 and 32:8 words: the concepts' d estimates one number
    (equal weights of X's and Y's spreads), where the design's shares used to move it (0.64 at 8:32, 0.93 at 32:8
    in this population)."""
    rng = np.random.default_rng(5)
    dim, pool = 30, 20_000
    e = np.eye(dim)
    Xp = rng.normal(size=(pool, dim)) + 1.0 * e[0]
    Yp = rng.normal(size=(pool, dim))
    Yp[:, 0] = -1.0 + 4.0 * rng.normal(size=pool)       # Y's words lean to A or B four times as widely as X's
    A, B = rng.normal(size=(40, dim)) + 2 * e[0], rng.normal(size=(40, dim)) - 2 * e[0]
    means = {}
    for nx, ny in ((20, 20), (8, 32), (32, 8)):
        ds = [concepts_test(Xp[rng.choice(pool, nx)], Yp[rng.choice(pool, ny)], A, B).d for _ in range(300)]
        means[(nx, ny)] = float(np.nanmean(ds))
    spread = max(means.values()) - min(means.values())
    assert spread < 0.08, means


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_p_and_interval_answer_one_question_whatever_the_alternative(alternative):
    for seed in range(25):
        X, Y, A, B = _mats(seed, shift=0.15 * (seed % 5 - 2))
        r = eatlas.weat(X, Y, A, B, n_samples=500, alternative=alternative, ci=0.95)
        excludes = not (r.concepts_low <= 0 <= r.concepts_high) if r.concepts_estimable else \
            (r.concepts_low > 0 or r.concepts_high < 0)
        assert excludes == (r.p_concepts < 0.05), (seed, r)
        two = concepts_test(X, Y, A, B, alternative="two-sided").p
        one = concepts_test(X, Y, A, B, alternative=alternative).p
        assert r.p_concepts == pytest.approx(two) and r.p_concepts_one_sided == pytest.approx(one)


def test_sentences_nested_in_words_are_calibrated_with_words_as_units():
    model = Nested("sent", m=5, rho=0.6, shift=0.0, seed=3)
    rng = np.random.default_rng(7)
    rej = {"words": 0, "rows": 0}
    reps = 120
    for _ in range(reps):
        (X, Y, A, B), labels = model.draw(rng, 8)
        rej["words"] += eatlas.weat(X, Y, A, B, words=labels, n_samples=100).p_concepts < 0.05
        rej["rows"] += eatlas.weat(X, Y, A, B, n_samples=100).p_concepts < 0.05
    assert rej["words"] / reps <= 0.10, rej
    assert rej["rows"] / reps >= 0.15, rej        # every sentence a unit: the words' variation counted five times


def test_the_runner_passes_the_words_at_sentence_level():
    from eatlas.methods.base import Matrices

    class T:
        level = "sent"
    rng = np.random.default_rng(0)
    m = Matrices(*(rng.normal(size=(4, 5)) for _ in range(4)), texts={}, test=T(),
                 stimuli={r: ["w1", "w1", "w2", "w2"] for r in "xyab"})
    assert m.words == tuple([(r, "w1"), (r, "w1"), (r, "w2"), (r, "w2")] for r in "xyab")
    T.level = "word"
    assert m.words is None
