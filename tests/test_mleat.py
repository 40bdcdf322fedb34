"""ML-EAT and SC-EAT on constructed embeddings whose answers are known."""
from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eatlas.methods.mleat import _draw_map, _figure, draw_eat_map, draw_eat_map_grid
from eatlas.stats.mleat import PATTERNS, MlEatResult, classify_pattern, level2, level3, mleat
from eatlas.stats.sceat import direction, effect_sizes, sc_eat
from eatlas.stats.weat import weat

DIM = 40
N_ATTR = 8          # C(16, 8) = 12870 partitions: Level-2 p-values are exact


def _attributes(rng):
    """A_i = e0 + noise_i, B_i = e1 + noise_i: B mirrors A, so a target with equal e0 and e1
    components is equally similar to both."""
    noise = np.zeros((N_ATTR, DIM))
    noise[:, 2:] = 0.3 * rng.normal(size=(N_ATTR, DIM - 2))
    A, B = noise.copy(), noise.copy()
    A[:, 0] += 1.0
    B[:, 1] += 1.0
    return A, B


def _targets(assoc, rng, n=8):
    """Targets associated with A (along e0), B (along e1) or neither (about equally along both)."""
    T = np.zeros((n, DIM))
    T[:, 2:] = 0.3 * rng.normal(size=(n, DIM - 2))
    if assoc == "A":
        T[:, 0] += 1.0
    elif assoc == "B":
        T[:, 1] += 1.0
    else:   # tiny alternating asymmetry so that s(w, A, B) is not identically zero
        eps = 0.02 * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        T[:, 0] += 1.0 + eps
        T[:, 1] += 1.0 - eps
    return T


def _case(x_assoc, y_assoc, seed=0):
    rng = np.random.default_rng(seed)
    A, B = _attributes(rng)
    return _targets(x_assoc, rng), _targets(y_assoc, rng), A, B


CASES = {
    "AB-Divergent": ("A", "B"), "BA-Divergent": ("B", "A"), "A-Uniform": ("A", "A"),
    "B-Uniform": ("B", "B"), "AX-Singular": ("A", None), "BX-Singular": ("B", None),
    "AY-Singular": (None, "A"), "BY-Singular": (None, "B"), "Non-Directional": (None, None),
}


@pytest.fixture(scope="module")
def results() -> dict[str, MlEatResult]:
    return {name: mleat(*_case(*assoc)) for name, assoc in CASES.items()}


def test_cases_cover_the_nine_patterns():
    assert set(CASES) == set(PATTERNS) and len(PATTERNS) == 9


@pytest.mark.parametrize("name", list(CASES))
def test_each_pattern_is_produced_and_classified(results, name):
    r = results[name]
    x_assoc, y_assoc = CASES[name]
    assert r.pattern == name
    assert (r.x.association, r.y.association) == (x_assoc, y_assoc)
    for res, assoc in ((r.x, x_assoc), (r.y, y_assoc)):
        assert res.exact and res.n_partitions == math.comb(2 * N_ATTR, N_ATTR)
        if assoc == "A":
            assert res.effect_size > 0.2 and res.p_upper < 0.05 and res.p_value == res.p_upper
        elif assoc == "B":
            assert res.effect_size < -0.2 and res.p_lower < 0.05 and res.p_value == res.p_lower
        else:
            assert abs(res.effect_size) <= 0.2 or res.p_value >= 0.05


def test_classify_pattern_table_and_errors():
    got = {classify_pattern(x, y) for x in ("A", "B", None) for y in ("A", "B", None)}
    assert got == set(PATTERNS)
    assert classify_pattern("A", "B") == "AB-Divergent" and classify_pattern(None, "B") == "BY-Singular"
    with pytest.raises(ValueError):
        classify_pattern("X", None)


def test_association_rule_is_strict_and_uses_the_right_tail():
    rule = dict(alpha=0.05, effect_threshold=0.2)
    assert direction(0.21, 0.049, 0.99, **rule) == "A"
    assert direction(0.20, 0.001, 0.99, **rule) is None          # |d| must exceed the threshold
    assert direction(0.50, 0.05, 0.99, **rule) is None           # p must be below alpha
    assert direction(-0.50, 0.99, 0.01, **rule) == "B"
    assert direction(-0.50, 0.01, 0.20, **rule) is None          # B needs the lower tail
    assert direction(0.50, 0.01, 0.99, alpha=0.005, effect_threshold=0.2) is None


def test_alpha_and_threshold_are_parameters_stored_in_the_result():
    X, Y, A, B = _case("A", "B")
    strict = mleat(X, Y, A, B, effect_threshold=100.0, alpha=0.01)
    assert strict.pattern == "Non-Directional"
    assert strict.alpha == 0.01 and strict.effect_threshold == 100.0
    assert strict.x.alpha == 0.01 and strict.to_dict()["effect_threshold"] == 100.0


def test_level1_is_the_weat(results):
    X, Y, A, B = _case("A", None)
    r = mleat(X, Y, A, B, n_samples=5000, seed=3)
    w = weat(X, Y, A, B, n_samples=5000, seed=3)
    assert r.level1 == w


def _brute_level2(T, A, B):
    """ML-EAT eq. 5-8 written out with loops and the statistics module."""
    def cos(u, v):
        return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))
    u = [statistics.fmean(cos(t, x) for t in T) for x in list(A) + list(B)]
    na = len(A)
    d = (statistics.fmean(u[:na]) - statistics.fmean(u[na:])) / statistics.stdev(u)
    obs = sum(u[:na]) - sum(u[na:])
    stats_ = []
    for part in itertools.combinations(range(len(u)), na):
        inside = sum(u[i] for i in part)
        stats_.append(inside - (sum(u) - inside))
    p_up = sum(s >= obs - 1e-12 for s in stats_) / len(stats_)
    p_low = sum(s <= obs + 1e-12 for s in stats_) / len(stats_)
    return d, p_up, p_low, obs


def test_level2_matches_the_papers_equations_by_brute_force():
    rng = np.random.default_rng(7)
    T, A, B = rng.normal(size=(3, 10)), rng.normal(size=(5, 10)), rng.normal(size=(4, 10))
    T[:, 0] += 2.0
    A[:, 0] += 1.0
    r = level2(T, A, B)
    d, p_up, p_low, obs = _brute_level2(T, A, B)
    assert r.exact and r.n_partitions == math.comb(9, 5)
    assert r.effect_size == pytest.approx(d, rel=1e-10)
    assert r.statistic == pytest.approx(obs, rel=1e-10)
    assert r.p_upper == pytest.approx(p_up) and r.p_lower == pytest.approx(p_low)
    assert r.n_target == 3 and (r.n_a, r.n_b) == (5, 4)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_a=st.integers(2, 9), n_b=st.integers(2, 9))
def test_level2_with_one_target_word_equals_sc_eat(seed, n_a, n_b):
    rng = np.random.default_rng(seed)
    w, A, B = rng.normal(size=12), rng.normal(size=(n_a, 12)), rng.normal(size=(n_b, 12))
    a = level2(w[None, :], A, B, n_samples=300, seed=seed % 1000)
    b = sc_eat(w, A, B, n_samples=300, seed=seed % 1000)
    assert a.effect_size == pytest.approx(b.effect_size, rel=1e-12, abs=1e-12)
    assert (a.p_upper, a.p_lower, a.exact, a.n_partitions) == (b.p_upper, b.p_lower, b.exact, b.n_partitions)
    assert a.association == b.association


def test_sc_eat_is_eq_9_and_vectorised_effect_sizes_agree():
    rng = np.random.default_rng(11)
    W, A, B = rng.normal(size=(6, 15)), rng.normal(size=(8, 15)), rng.normal(size=(8, 15))
    got = effect_sizes(W, A, B)
    for i, w in enumerate(W):
        ca = [float(w @ a / np.linalg.norm(w) / np.linalg.norm(a)) for a in A]
        cb = [float(w @ b / np.linalg.norm(w) / np.linalg.norm(b)) for b in B]
        expect = (statistics.fmean(ca) - statistics.fmean(cb)) / statistics.stdev(ca + cb)
        assert got[i] == pytest.approx(expect, rel=1e-10)
        assert sc_eat(w, A, B).effect_size == pytest.approx(expect, rel=1e-10)


def test_sampled_level2_is_seeded_and_not_exact():
    rng = np.random.default_rng(5)
    T, A, B = rng.normal(size=(4, 20)), rng.normal(size=(25, 20)), rng.normal(size=(25, 20))
    r1 = level2(T, A, B, n_samples=2000, seed=1)
    r2 = level2(T, A, B, n_samples=2000, seed=1)
    assert not r1.exact and r1.n_partitions == 2000
    assert r1 == r2


def test_level3_means_and_sample_std():
    X, Y, A, B = _case("A", "B", seed=2)
    r = level3(X, Y, A, B)

    def cosines(P, T):
        return [float(p @ t / np.linalg.norm(p) / np.linalg.norm(t)) for p in P for t in T]

    for key, (P, T) in {"ax": (A, X), "bx": (B, X), "ay": (A, Y), "by": (B, Y)}.items():
        c = cosines(P, T)
        assert getattr(r, f"{key}_mean") == pytest.approx(statistics.fmean(c), rel=1e-10)
        assert getattr(r, f"{key}_std") == pytest.approx(statistics.stdev(c), rel=1e-10)   # ddof=1
    assert r.ax_mean > r.bx_mean and r.by_mean > r.ay_mean


def test_to_dict_is_one_flat_record(results):
    r = results["AX-Singular"]
    row = r.to_dict()
    assert r.to_rows() == [row]
    assert all(isinstance(v, (int, float, str, bool, type(None))) for v in row.values())
    assert row["pattern"] == "AX-Singular" and row["x_association"] == "A" and row["y_association"] is None
    assert row["level1_effect_size"] == r.level1.effect_size and row["ax_mean"] == r.level3.ax_mean


def test_eat_map_cells_follow_level2(results):
    r = results["AX-Singular"]
    fig, ax = _figure()
    _draw_map(ax, r)
    cells = {(round(p.get_x()), round(p.get_y())): p.get_facecolor() for p in ax.patches}
    # (column, row-bottom): X is column 0, A is the top row (y = 1)
    assert cells[(0, 1)][0] > 0.7 and cells[(0, 1)][1] < 0.3        # X-A red
    gray = cells[(0, 0)]
    assert gray[0] == gray[1] == gray[2]                             # X-B, Y-A, Y-B gray
    assert cells[(1, 1)][:3] == gray[:3] and cells[(1, 0)][:3] == gray[:3]
    assert "AX-Singular" in ax.get_title()


def test_draw_eat_map_writes_png_and_svg(results, tmp_path):
    r = results["BY-Singular"]
    png, svg = draw_eat_map(r, tmp_path / "maps" / "weat_test.png")
    assert png.name == "weat_test.png" and svg.name == "weat_test.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "BY-Singular" in text


def test_draw_eat_map_grid_has_every_panel(results, tmp_path):
    png, svg = draw_eat_map_grid(results, tmp_path / "grid")
    assert png.stat().st_size > 10_000
    text = svg.read_text()
    for name in PATTERNS:
        assert name in text
    with pytest.raises(ValueError):
        draw_eat_map_grid([], tmp_path / "empty")
