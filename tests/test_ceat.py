"""CEAT on constructed contextual vectors, the random-effects pooling, draws and find_contexts."""
from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from eatlas.errors import EatlasError
from eatlas.stats.ceat import ceat, draw_indices, find_contexts, random_effects
from eatlas.stats.weat import weat


def _contexts(rng, n_stim=4, n_ctx=6, dim=16, shift=None):
    out = []
    for _ in range(n_stim):
        m = rng.normal(size=(n_ctx, dim))
        if shift is not None:
            m += shift
        out.append(m)
    return out


def _sets(seed=0, n_ctx=6, dim=16):
    rng = np.random.default_rng(seed)
    e0, e1 = np.eye(dim)[0], np.eye(dim)[1]
    return (_contexts(rng, n_ctx=n_ctx, dim=dim, shift=0.8 * e0), _contexts(rng, n_ctx=n_ctx, dim=dim, shift=0.8 * e1),
            _contexts(rng, n_ctx=n_ctx, dim=dim, shift=e0), _contexts(rng, n_ctx=n_ctx, dim=dim, shift=e1))


def _loop_reference(X, Y, A, B, idx):
    """The authors' per-draw computation (effect size and in-sample variance), written as loops."""
    sets = [X, Y, A, B]
    sizes = [len(s) for s in sets]
    es, var = [], []
    for row in idx:
        pos = 0
        picked = []
        for s, n in zip(sets, sizes):
            picked.append([s[j][row[pos + j]] for j in range(n)])
            pos += n
        x, y, a, b = picked

        def cos(u, v):
            return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

        def assoc(w, a=a, b=b):
            return statistics.fmean(cos(w, ai) for ai in a) - statistics.fmean(cos(w, bi) for bi in b)

        sx, sy = [assoc(w) for w in x], [assoc(w) for w in y]
        sd = statistics.stdev(sx + sy)
        es.append((statistics.fmean(sx) - statistics.fmean(sy)) / sd)
        var.append(sd ** 2)
    return np.array(es), np.array(var)


def _paper_formula(es, v):
    """The paper's appendix, written directly."""
    W = 1.0 / v
    Q = np.sum(W * es**2) - np.sum(W * es) ** 2 / np.sum(W)
    df = len(es) - 1
    c = np.sum(W) - np.sum(W**2) / np.sum(W)
    tau2 = (Q - df) / c if Q >= df else 0.0
    w = 1.0 / (v + tau2)
    ces = np.sum(w * es) / np.sum(w)
    se = math.sqrt(1.0 / np.sum(w))
    p2 = 2.0 * stats.norm.sf(abs(ces) / se)      # 2 (1 - Phi(|z|)), without the cancellation
    p1 = stats.norm.sf(ces / se)                 # the authors' code: norm.sf(z)
    return dict(tau2=tau2, ces=ces, se=se, p2=p2, p1=p1, q=Q)


@pytest.mark.parametrize("method", ["gram", "gather"])
def test_vectorised_draws_equal_the_per_draw_loop(method):
    X, Y, A, B = _sets(seed=1)
    counts = [len(m) for s in (X, Y, A, B) for m in s]
    idx = draw_indices(counts, 150, sampling="authors_code", seed=4)
    r = ceat(X, Y, A, B, indices=idx, method=method)
    es, var = _loop_reference(X, Y, A, B, idx)
    assert r.method == method and r.n_draws == 150 and r.sampling == "given"
    np.testing.assert_allclose(r.effect_sizes, es, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.variances, var, rtol=1e-10)


def test_methods_agree_and_memory_chunks_do_not_change_the_answer():
    X, Y, A, B = _sets(seed=2)
    a = ceat(X, Y, A, B, n_draws=3000, method="gram")
    b = ceat(X, Y, A, B, n_draws=3000, method="gather", max_chunk_bytes=50_000)
    c = ceat(X, Y, A, B, n_draws=3000, method="gram", max_chunk_bytes=10_000)
    np.testing.assert_allclose(a.effect_sizes, b.effect_sizes, rtol=1e-10)
    np.testing.assert_array_equal(a.effect_sizes, c.effect_sizes)
    assert a.ces == pytest.approx(b.ces, rel=1e-9)


def test_identical_contexts_give_zero_between_sample_variance_and_the_fixed_effect():
    rng = np.random.default_rng(3)
    base = [rng.normal(size=(4, 12)) for _ in range(4)]
    base[0][:, 0] += 1.0
    base[2][:, 0] += 1.0
    # every stimulus has five identical copies of one vector: every draw is the same WEAT
    X, Y, A, B = ([np.repeat(v[None, :], 5, axis=0) for v in b] for b in base)
    n = 500
    r = ceat(X, Y, A, B, n_draws=n, seed=9)
    w = weat(*base, n_samples=10)
    assert r.tau2 == 0.0 and r.tau2_untruncated < 0          # statsmodels does not truncate; we do
    assert r.q == pytest.approx(0.0, abs=1e-6)
    assert r.ces == pytest.approx(w.effect_size, rel=1e-10)
    assert r.ces == pytest.approx(r.ces_fixed, rel=1e-12) and r.se == pytest.approx(r.se_fixed, rel=1e-12)
    assert r.se == pytest.approx(math.sqrt(r.variances[0] / n), rel=1e-10)
    assert np.ptp(r.effect_sizes) < 1e-12


@pytest.mark.parametrize("spread", [1.0, 1e-4])     # tau^2 > 0, and Q < df (truncated at 0)
def test_dl_estimate_equals_the_papers_appendix_formula(spread):
    rng = np.random.default_rng(5)
    es = 0.4 + spread * rng.normal(size=400)
    v = rng.uniform(0.01, 0.05, size=400)
    got = random_effects(es, v)
    want = _paper_formula(es, v)
    assert (got.tau2 > 0) == (spread == 1.0)
    assert got.tau2 == pytest.approx(want["tau2"], rel=1e-10, abs=1e-15)
    assert got.ces == pytest.approx(want["ces"], rel=1e-10)
    assert got.se == pytest.approx(want["se"], rel=1e-10)
    assert got.q == pytest.approx(want["q"], rel=1e-8)
    assert got.p_two_tailed == pytest.approx(want["p2"], rel=1e-8, abs=1e-300)
    assert got.p_one_tailed == pytest.approx(want["p1"], rel=1e-8, abs=1e-300)
    assert got.df == 399


def test_ceat_result_equals_the_formula_on_its_own_draws():
    X, Y, A, B = _sets(seed=6)
    r = ceat(X, Y, A, B, n_draws=2000, seed=1)
    want = _paper_formula(np.asarray(r.effect_sizes), np.asarray(r.variances))
    assert r.ces == pytest.approx(want["ces"], rel=1e-10) and r.tau2 == pytest.approx(want["tau2"], rel=1e-10)
    assert r.p_two_tailed == pytest.approx(want["p2"], rel=1e-8, abs=1e-300)
    assert r.ces > 0     # X is built nearer A, Y nearer B


def test_two_tailed_p_sees_negative_effects_one_tailed_does_not():
    es = -0.3 + 0.1 * np.random.default_rng(0).normal(size=50)
    r = random_effects(es, np.full(50, 0.04))
    assert r.ces < 0 and r.p_two_tailed < 0.001 and r.p_one_tailed > 0.999


def test_draws_are_reproducible_with_the_seed():
    X, Y, A, B = _sets(seed=7)
    a = ceat(X, Y, A, B, n_draws=500, seed=42)
    b = ceat(X, Y, A, B, n_draws=500, seed=42)
    c = ceat(X, Y, A, B, n_draws=500, seed=43)
    np.testing.assert_array_equal(a.effect_sizes, b.effect_sizes)
    assert a == b
    assert not np.array_equal(a.effect_sizes, c.effect_sizes)


def test_paper_sampling_is_without_replacement_where_contexts_suffice():
    idx = draw_indices([100, 5, 100], 60, sampling="paper", seed=0)
    assert len(set(idx[:, 0])) == 60 and len(set(idx[:, 2])) == 60     # no context reused
    assert len(set(idx[:, 1])) <= 5 and idx[:, 1].max() < 5             # fewer than N: with replacement
    auth = draw_indices([100, 5, 100], 60, sampling="authors_code", seed=0)
    assert len(set(auth[:, 0])) < 60                                    # with replacement (birthday: ~certain)
    with pytest.raises(ValueError):
        draw_indices([3], 10, sampling="bootstrap")


def test_sampling_is_recorded():
    X, Y, A, B = _sets(seed=8, n_ctx=30)
    p = ceat(X, Y, A, B, n_draws=20, sampling="paper")
    a = ceat(X, Y, A, B, n_draws=20, sampling="authors_code")
    assert p.sampling == "paper" and p.n_with_replacement == 0          # 30 contexts >= 20 draws
    assert a.sampling == "authors_code" and a.n_with_replacement == 16
    assert p.to_dict()["sampling"] == "paper"


def test_missing_stimuli_are_reported_never_silently_skipped():
    X, Y, A, B = _sets(seed=9)
    Xd = {f"x{i}": m for i, m in enumerate(X)}
    Xd["x_absent"] = np.empty((0, 16))
    Ad = {f"a{i}": m for i, m in enumerate(A)}
    Ad["a_none"] = None
    with pytest.warns(UserWarning, match="x_absent"):
        r = ceat(Xd, Y, Ad, B, n_draws=50)
    assert r.missing == ("X:x_absent", "A:a_none") and r.n_x == 4 and r.n_a == 4
    assert r.to_dict()["n_missing"] == 2 and "X:x_absent" in r.to_dict()["missing"]
    with pytest.raises(EatlasError, match="x_absent"):
        ceat(Xd, Y, Ad, B, n_draws=50, on_missing="raise")
    with pytest.raises(EatlasError, match="B"):
        ceat(X, Y, A, [np.empty((0, 16))], n_draws=50)


def test_bad_inputs_are_refused():
    X, Y, A, B = _sets(seed=10)
    with pytest.raises(ValueError):
        ceat(np.ones((4, 16)), Y, A, B)                  # one matrix instead of one per stimulus
    with pytest.raises(ValueError):
        ceat(X, Y, A, B, indices=np.zeros((10, 3), dtype=int))
    with pytest.raises(ValueError):
        ceat(X, Y, A, B, indices=np.full((10, 16), 99))
    with pytest.raises(ValueError):
        ceat(X, Y, A, [np.ones((3, 8))] * 4)             # dimension mismatch


def test_result_records():
    X, Y, A, B = _sets(seed=11)
    r = ceat(X, Y, A, B, n_draws=400)
    row = r.to_dict()
    assert r.to_rows() == [row]
    assert all(isinstance(v, (int, float, str, bool, type(None))) for v in row.values())
    assert row["es_q025"] <= row["es_median"] <= row["es_q975"]
    draws = r.draw_rows()
    assert len(draws) == 400 and draws[3]["effect_size"] == r.effect_sizes[3]
    with pytest.raises(ValueError):
        r.effect_sizes[0] = 1.0                          # read-only


# --- find_contexts ------------------------------------------------------------------------

CORPUS = [
    "She is loud, and the cloud is loudly grey.",
    "A loud-mouthed man; loud's echo. LOUD noise.",
    "Fried-chicken and fried chicken at the all  American diner.",
    "Rich said the rich are rich.",
    "Love is all. love",
]


def test_find_contexts_whole_words_and_spans():
    got = find_contexts(CORPUS, ["loud", "fried-chicken", "all American", "rich", "Rich", "absent"])
    assert [(i, CORPUS[i][s:e]) for i, (s, e) in got["loud"]] == [(0, "loud"), (1, "loud")]
    assert got["loud"][1][1][0] == CORPUS[1].index("loud's")
    assert got["fried-chicken"] == []                 # case-sensitive by default; "fried chicken" is not it
    assert [CORPUS[i][s:e] for i, (s, e) in got["all American"]] == ["all  American"]
    assert [CORPUS[i][s:e] for i, (s, e) in got["rich"]] == ["rich", "rich"]
    assert [CORPUS[i][s:e] for i, (s, e) in got["Rich"]] == ["Rich"]
    assert got["absent"] == []


def test_find_contexts_case_rule():
    sens = find_contexts(CORPUS, ["fried-chicken", "love"], case_sensitive=True)
    assert sens["fried-chicken"] == [] and len(sens["love"]) == 1
    ins = find_contexts(CORPUS, ["fried-chicken", "love", "loud"], case_sensitive=False)
    assert [CORPUS[i][s:e] for i, (s, e) in ins["fried-chicken"]] == ["Fried-chicken"]
    assert len(ins["love"]) == 2
    assert [CORPUS[i][s:e] for i, (s, e) in ins["loud"]] == ["loud", "loud", "LOUD"]


def test_find_contexts_sampling_is_bounded_and_seeded():
    lines = [f"word {i} and word again" for i in range(200)]
    full = find_contexts(lines, ["word"])
    assert len(full["word"]) == 400
    a = find_contexts(lines, ["word"], max_per_stimulus=25, seed=3)
    b = find_contexts(lines, ["word"], max_per_stimulus=25, seed=3)
    c = find_contexts(lines, ["word"], max_per_stimulus=25, seed=4)
    assert len(a["word"]) == 25 and a == b and a != c
    assert a["word"] == sorted(a["word"]) and set(a["word"]) <= set(full["word"])
    assert max(i for i, _ in a["word"]) > 100        # a sample of the whole corpus, not its start
