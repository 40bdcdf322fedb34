"""The intervals of a WEAT result (the default, the concepts': eatlas.stats.concepts; the papers': the permutation
test inverted, eatlas.stats.interval), d_corrected, and the notes a result carries where its p-value and interval
disagree, its sets are small or its concepts' d is not estimable (docs/methods.md)."""
import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from eatlas.stats.interval import (
    RELIABILITY_FLOOR,
    attenuation,
    d_bound,
    disagreement,
    inverted_shifts,
    papers_interval,
    shift_interval,
)
from eatlas.stats.weat import association, null_distribution, null_pair, tie_tolerance, weat


def _unit(m):
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _mats(seed=0, n=(6, 6, 6, 6), dim=12, shift=0.5):
    rng = np.random.default_rng(seed)
    X, Y, A, B = (rng.normal(size=(k, dim)) for k in n)
    X[:, 0] += shift
    A[:, 0] += 1.0
    B[:, 0] -= 1.0
    return X, Y, A, B


def _shift_p(s, n_x, theta, tol_of):
    """Reference: the one-sided permutation p-values (greater, less) of X's s(w) shifted by -theta, every
    partition enumerated with itertools."""
    s2 = s.copy()
    s2[:n_x] -= theta
    n = len(s)
    stats = np.array([2 * s2[list(c)].sum() - s2.sum() for c in itertools.combinations(range(n), n_x)])
    obs = 2 * s2[:n_x].sum() - s2.sum()
    tol = tol_of(s2)
    return np.mean(stats >= obs - tol), np.mean(stats <= obs + tol)


def test_the_shift_interval_is_the_set_of_shifts_neither_test_rejects():
    """Against a slow reference: at every candidate shift (and between them), the interval holds exactly the
    shifts at which both one-sided tests, recomputed from scratch on the shifted data, give p > 0.025."""
    X, Y, A, B = _mats(1, n=(5, 5, 6, 6))
    s = np.concatenate([association(X, A, B), association(Y, A, B)])
    dist, exact = null_distribution(s, 5, n_samples=10_000, seed=0)
    ind = np.r_[np.ones(5), np.zeros(5)]
    in_x = (null_distribution(ind, 5, n_samples=10_000, seed=0)[0] + 5) / 2
    assert exact and len(dist) == math.comb(10, 5)
    theta, n_same = inverted_shifts(dist, in_x, s, 5, tie_tolerance(s))
    lo, hi = shift_interval(theta, n_same, 0.95)
    assert lo < hi
    eps = 1e-9 * (hi - lo)
    for t in (lo - eps, hi + eps):
        assert min(_shift_p(s, 5, t, tie_tolerance)) <= 0.025, t
    for t in (lo + eps, (lo + hi) / 2, hi - eps):
        assert min(_shift_p(s, 5, t, tie_tolerance)) > 0.025, t


@pytest.mark.parametrize("n, n_samples", [((6, 6), 100_000), ((7, 9), 100_000), ((30, 30), 4_000),
                                          ((40, 70), 3_000)])
def test_the_interval_never_contradicts_the_p_value(n, n_samples):
    """Exact and sampled partitions, equal and unequal sizes: each question's interval agrees with its own p.
    The default interval (the concepts') lies above 0 exactly when the one-sided p of the concepts' test is at most
    0.025, below 0 exactly when the other tail's is, and excludes 0 exactly when p_concepts (two-sided) is below
    0.05 (so never contains 0 beside p_concepts < 0.01); the papers'
    interval does the same with the permutation p (p_value)."""
    for seed in range(12):
        X, Y, A, B = _mats(seed, n=(n[0], n[1], 8, 8), shift=0.25 * (seed % 4 - 1))
        g = weat(X, Y, A, B, n_samples=n_samples, seed=seed)
        less = weat(X, Y, A, B, n_samples=n_samples, seed=seed, alternative="less", ci=None)
        assert g.ci_method == "concepts" and g.n_boot is None
        assert (g.ci_low, g.ci_high) == (g.concepts_low, g.concepts_high)
        # where the concepts' d is not estimable the interval is the hull of the confidence set, which may end at 0
        above, below = (g.ci_low > 0, g.ci_high < 0) if g.concepts_estimable else (g.ci_low >= 0, g.ci_high <= 0)
        assert above == (g.p_concepts_one_sided <= 0.025), (seed, g)
        assert below == (less.p_concepts_one_sided <= 0.025), (seed, g)
        assert (above or below) == (g.p_concepts < 0.05), (seed, g)       # p_concepts: two-sided, as the interval
        assert disagreement(g.p_concepts, "two-sided", g.ci_low, g.ci_high, alpha=0.01, level=0.95) is None
        assert (g.papers_low > 0) == (g.p_value <= 0.025) and (g.papers_high < 0) == (less.p_value <= 0.025)


@pytest.mark.parametrize("n, n_samples", [((6, 6), 100_000), ((7, 9), 100_000), ((30, 30), 3_000)])
def test_the_papers_interval_is_the_inverted_permutation_test_on_the_sample_d_scale(n, n_samples):
    """Step 1 alone, mapped by the sample's own d: it holds the sample d, lies above 0 exactly when the one-sided
    permutation p (the same partitions) is at most 0.025, below 0 exactly when the other tail's is, and never
    leaves the range a sample d can take."""
    for seed in range(10):
        X, Y, A, B = _mats(seed, n=(n[0], n[1], 8, 8), shift=0.3 * (seed % 4 - 1))
        g = weat(X, Y, A, B, n_samples=n_samples, seed=seed)
        less = weat(X, Y, A, B, n_samples=n_samples, seed=seed, alternative="less", ci=None).p_value
        lo, hi = papers_interval(X, Y, A, B, ci=0.95, tolerance=tie_tolerance,
                                 null_pair=lambda v, o, k=seed: null_pair(v, o, n[0], n_samples=n_samples, seed=k))
        assert lo <= g.effect_size <= hi, (seed, lo, g.effect_size, hi)
        assert (lo > 0) == (g.p_value <= 0.025) and (hi < 0) == (less <= 0.025), (seed, lo, hi, g.p_value, less)
        top = math.sqrt(sum(n) * (sum(n) - 1) / (n[0] * n[1]))
        assert -top <= lo < hi <= top


def test_the_interval_is_seeded_and_the_same_on_one_thread():
    X, Y, A, B = _mats(3, n=(30, 30, 10, 10))
    r = weat(X, Y, A, B, n_samples=5_000, seed=7)
    assert (r.ci_low, r.ci_high) == (weat(X, Y, A, B, n_samples=5_000, seed=7).ci_low,
                                     weat(X, Y, A, B, n_samples=5_000, seed=7).ci_high)
    code = ("import numpy as np, sys; from eatlas.stats.weat import weat; rng = np.random.default_rng(3)\n"
            "X, Y, A, B = (rng.normal(size=(k, 12)) for k in (30, 30, 10, 10))\n"
            "X[:, 0] += 0.5; A[:, 0] += 1.0; B[:, 0] -= 1.0\n"
            "r = weat(X, Y, A, B, n_samples=5_000, seed=7); print(repr(r.ci_low), repr(r.ci_high))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "EATLAS_THREADS": "1"}).stdout.split()
    assert (float(out[0]), float(out[1])) == (r.ci_low, r.ci_high)


def test_attenuation_against_covariance_matrices():
    """The noise is tr(S_W S_A) / |A| + tr(S_W S_B) / |B| with the covariances of the unit rows (numpy.cov),
    the reliability 1 - noise / var s(w), and d_corrected = d / sqrt(reliability)."""
    X, Y, A, B = _mats(5, n=(7, 9, 6, 8), dim=5)
    Xu, Yu, Au, Bu = map(_unit, (X, Y, A, B))
    W = np.vstack([Xu, Yu])
    S_W = np.cov(W.T)
    noise = np.trace(S_W @ np.cov(Au.T)) / 6 + np.trace(S_W @ np.cov(Bu.T)) / 8
    s = np.concatenate([association(X, A, B), association(Y, A, B)])
    att = attenuation(X, Y, A, B)
    assert att.noise == pytest.approx(noise, rel=1e-10)
    assert att.reliability == pytest.approx(1 - noise / s.var(ddof=1), rel=1e-10)
    d = (s[:7].mean() - s[7:].mean()) / s.std(ddof=1)
    r = weat(X, Y, A, B, ci=None)
    assert att.d == pytest.approx(d) and r.effect_size == pytest.approx(d)
    assert r.d_corrected == pytest.approx(d / math.sqrt(max(att.reliability, RELIABILITY_FLOOR)))
    assert r.reliability == att.reliability


def test_identical_attribute_stimuli_add_no_noise_and_d_corrected_is_d():
    X, Y, A, B = _mats(6)
    A[:] = A[0]
    B[:] = B[0]
    r = weat(X, Y, A, B, ci=None)
    assert r.reliability == pytest.approx(1.0) and r.d_corrected == pytest.approx(r.effect_size)


def test_the_bound_keeps_the_interval_within_the_possible():
    assert d_bound(8, 8) == 2.0 and d_bound(4, 16) == pytest.approx(20 / 8)
    X, Y, A, B = _mats(7, n=(8, 8, 8, 8), shift=4.0)
    r = weat(X, Y, A, B)
    # the targets' spread is all attribute noise here: the concepts' d is not estimable, and its interval is the
    # hull of the confidence set, within the bound; the papers' interval stays within a sample d's range
    assert not r.concepts_estimable and r.d_concepts is None and r.concepts_reason
    assert 0 <= r.ci_low <= r.ci_high <= 2.0
    assert 0 < r.papers_low <= r.effect_size <= r.papers_high <= math.sqrt(16 * 15 / 64)


def test_disagreement_names_both_directions():
    assert disagreement(0.004, "greater", -0.1, 1.2, alpha=0.01, level=0.95) == "contains 0"
    assert disagreement(0.04, "greater", 0.1, 1.2, alpha=0.01, level=0.95) == "excludes 0"
    assert disagreement(0.02, "greater", 0.1, 1.2, alpha=0.01, level=0.95) is None
    assert disagreement(0.04, "less", 0.1, 1.2, alpha=0.01, level=0.95) is None      # the other side
    assert disagreement(0.06, "two-sided", -1.2, -0.1, alpha=0.01, level=0.95) == "excludes 0"
    assert disagreement(0.5, "greater", float("nan"), float("nan"), alpha=0.01, level=0.95) is None


def _pools(rng, dim, attr_signal, shift, size=2000):
    e = np.linalg.qr(rng.standard_normal((dim, 2)))[0].T
    z = [rng.standard_normal((size, dim)) / math.sqrt(dim) for _ in range(4)]
    toward = (e[0] - e[1]) / math.sqrt(2)
    return (_unit(shift * toward + z[0]), _unit(-shift * toward + z[1]), _unit(attr_signal * e[0] + z[2]),
            _unit(attr_signal * e[1] + z[3]))


@pytest.mark.parametrize("attr_signal", [1.0, 0.2])
def test_a_small_simulation_is_calibrated(attr_signal):
    """A coarse version of benchmarks/calibration_study.py (pools of 2,000 vectors; a little and a lot of noise
    per attribute stimulus): under the null, p < 0.05 in 1-10% of 150 replicates; at a moderate population d the
    default interval covers it at least 80% of the time, and never contains 0 beside p < 0.01."""
    rng = np.random.default_rng(11)
    for shift, check in ((0.0, "null"), (0.12, "cover")):
        X, Y, A, B = _pools(rng, 40, attr_signal, shift)
        v = A.mean(0) - B.mean(0)
        d_pop = ((X @ v).mean() - (Y @ v).mean()) / np.concatenate([X @ v, Y @ v]).std(ddof=1)
        p, cov, contra = [], [], []
        for r in range(150):
            idx = [rng.choice(len(P), 10, replace=False) for P in (X, Y, A, B)]
            res = weat(X[idx[0]], Y[idx[1]], A[idx[2]], B[idx[3]], n_samples=2_000, seed=r)
            p.append(res.p_value)
            cov.append(res.ci_low <= d_pop <= res.ci_high)
            # the default interval answers the concepts' question: it agrees with p_concepts (the papers' p may
            # be small beside it: another question)
            # (two-sided, as the interval): an interval that holds 0 never stands beside p_concepts < 0.01
            contra.append(res.p_concepts < 0.01 and res.concepts_estimable and res.ci_low <= 0 <= res.ci_high)
        if check == "null":
            assert 0.01 <= np.mean(np.array(p) < 0.05) <= 0.10, np.mean(np.array(p) < 0.05)
        else:
            assert 0.3 < d_pop < 1.6 and np.mean(cov) >= 0.80, (d_pop, np.mean(cov))
        assert not any(contra)


def test_result_notes_say_where_p_and_ci_disagree_and_which_sets_are_small():
    from eatlas.run.runner import RunConfig, result_notes

    row = dict(p_value=0.004, p_concepts=0.004, alternative="greater", ci_low=-0.2, ci_high=1.1,
               ci_method="percentile", n_x=8, n_y=8, n_a=5, n_b=8, reliability=0.05, effect_size=0.8,
               concepts_estimable=False, concepts_reason="only 3% of the spread ...")
    notes = result_notes(row, RunConfig())
    assert notes[0].startswith("p < α = 0.01 but the CI contains 0")
    assert "the p answers the concepts' question" in notes[0] and "resamples the stimuli" in notes[0]
    assert notes[1].startswith("small set (A 5)") and "from 8 stimuli per set" in notes[1]
    # no bare reliability: where the concepts' d cannot be estimated, the note says so in words
    assert notes[2] == ("the concepts' d is not estimable: the attribute words' noise swamps the targets' spread "
                        "(only 3% of the spread ...)")
    assert not any(n.startswith("reliability") for n in notes)
    # the papers' p under --p-rule papers, beside the concepts' interval: the note names both questions
    papers = result_notes({**row, "ci_method": "concepts", "concepts_estimable": True, "n_a": 8},
                          RunConfig(p_rule="papers"))
    assert papers[0].startswith("p < α = 0.01 but the CI contains 0") and "the papers' question" in papers[0]
    row.update(p_value=0.2, p_concepts=0.2, ci_low=-0.5, n_a=8, reliability=0.9, concepts_estimable=True)
    assert result_notes(row, RunConfig()) == []


def test_a_default_run_stores_the_concepts_interval_and_says_what_the_numbers_answer(tmp_path, capsys):
    import duckdb

    from eatlas.cli import main
    from eatlas.legend import ATTENUATION, CI_MEANS, P_CONCEPTS_MEANS, P_MEANS

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat6", "--levels", "word",
                 "--no-cache"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert P_CONCEPTS_MEANS in out and P_MEANS in out and ATTENUATION in out and CI_MEANS["concepts"] in out
    row = duckdb.connect(str(db), read_only=True).execute(
        "SELECT ci_method, n_boot, ci_low, ci_high, effect_size, d_concepts, p_concepts, papers_low, papers_high, "
        "p_value FROM results").fetchone()
    assert row[0] == "concepts" and row[1] is None
    assert row[2] <= row[5] <= row[3] and (row[2] > 0) == (row[6] <= 0.025)
    assert row[7] <= row[4] <= row[8] and (row[7] > 0) == (row[9] <= 0.025)
