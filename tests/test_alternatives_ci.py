"""eatlas.stats.weat's alternatives (greater, less, two-sided) and its bootstrap confidence interval."""
import numpy as np
import pytest
from scipy import stats

from eatlas.stats.weat import association, permutation_p, weat


def _mats(seed=0, n=(6, 6, 5, 5), dim=10, shift=0.4):
    rng = np.random.default_rng(seed)
    X, Y, A, B = (rng.normal(size=(k, dim)) for k in n)
    X[:, 0] += shift
    A[:, 0] += shift
    return X, Y, A, B


def test_less_is_greater_with_the_targets_swapped_and_two_sided_is_scipys():
    X, Y, A, B = _mats()
    s_x, s_y = association(X, A, B), association(Y, A, B)
    greater, exact, n_part, _ = permutation_p(s_x, s_y, alternative="greater")
    less, *_ = permutation_p(s_x, s_y, alternative="less")
    assert exact and n_part == 924
    assert less == permutation_p(s_y, s_x, alternative="greater")[0]
    assert greater + less == pytest.approx(1 + 1 / 924)      # the observed partition counts in both tails
    two, *_ = permutation_p(s_x, s_y, alternative="two-sided")
    assert two == min(1.0, 2 * min(greater, less))
    for alt, ours in (("greater", greater), ("less", less), ("two-sided", two)):
        ref = stats.permutation_test((s_x, s_y), lambda x, y, axis: x.sum(axis) - y.sum(axis), vectorized=True,
                                     permutation_type="independent", alternative=alt, n_resamples=np.inf)
        assert ours == pytest.approx(ref.pvalue, abs=1e-12), alt


def test_two_sided_of_a_tie_is_one_and_parametric_has_all_three_tails():
    X, Y, A, B = _mats(1)
    assert weat(X, X.copy(), A, B, alternative="two-sided", ci=None).p_value == 1.0
    g = weat(X, Y, A, B, parametric=True, alternative="greater", ci=None).p_value
    lo = weat(X, Y, A, B, parametric=True, alternative="less", ci=None).p_value
    two = weat(X, Y, A, B, parametric=True, alternative="two-sided", ci=None).p_value
    assert g + lo == pytest.approx(1.0) and two == pytest.approx(2 * min(g, lo))


def test_sampled_alternatives_use_the_same_partitions():
    rng = np.random.default_rng(2)
    s_x, s_y = rng.normal(0.05, 0.1, 40), rng.normal(0.0, 0.1, 40)
    g, exact, n, _ = permutation_p(s_x, s_y, n_samples=20_000, seed=4, alternative="greater")
    lo, *_ = permutation_p(s_x, s_y, n_samples=20_000, seed=4, alternative="less")
    assert not exact and n == 20_000
    assert g + lo == pytest.approx(1 + 1 / n, abs=1e-12)     # continuous data: only the observed one is tied


def test_unknown_alternative_is_refused():
    X, Y, A, B = _mats()
    with pytest.raises(ValueError, match="alternative must be one of"):
        weat(X, Y, A, B, alternative="both")


def test_weat_carries_a_seeded_ci_around_its_effect_size_and_none_when_off():
    X, Y, A, B = _mats(3, n=(8, 8, 8, 8), shift=0.8)
    pct = dict(n_boot=2000, seed=5, ci_method="percentile")
    r = weat(X, Y, A, B, **pct)
    assert r.ci_level == 0.95 and r.n_boot == 2000 and r.alternative == "greater" and r.ci_method == "percentile"
    assert r.ci_low < r.effect_size < r.ci_high
    assert (r.ci_low, r.ci_high) == (weat(X, Y, A, B, **pct).ci_low, weat(X, Y, A, B, **pct).ci_high)
    wider = weat(X, Y, A, B, **pct, ci=0.99)
    assert wider.ci_low < r.ci_low and wider.ci_high > r.ci_high
    off = weat(X, Y, A, B, ci=None)
    assert (off.ci_low, off.ci_high, off.ci_level, off.n_boot) == (None, None, None, None)
    assert off.effect_size == r.effect_size and off.p_value == r.p_value
    for bad in (dict(ci=1.0), dict(ci=0.0), dict(n_boot=99)):
        with pytest.raises(ValueError):
            weat(X, Y, A, B, **bad)


def test_a_set_of_one_stimulus_still_gets_an_interval():
    X, Y, A, B = _mats(4, n=(5, 5, 1, 4), shift=0.8)
    r = weat(X, Y, A, B, n_boot=500, seed=0, ci_method="percentile")
    assert np.isfinite(r.ci_low) and r.ci_low <= r.effect_size <= r.ci_high
    r = weat(X, Y, A, B)                    # the default interval: A's single stimulus adds no attribute noise
    assert np.isfinite(r.ci_low) and r.ci_low < r.ci_high and r.ci_method == "concepts"


def test_ci_method_bca_from_the_cli_is_stored_and_differs_from_percentile(tmp_path, capsys):
    """--ci-method BCa reaches scipy's BCa interval and is recorded with the result, as percentile is; a bad value
    is refused."""
    import duckdb

    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    common = ["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat6", "--levels", "word",
              "--n-boot", "500", "--quiet", "--no-cache"]
    assert main([*common, "--ci-method", "percentile"]) == 0
    assert main([*common, "--ci-method", "BCa"]) == 0
    rows = duckdb.connect(str(db), read_only=True).execute(
        "SELECT ci_method, ci_low, ci_high, effect_size FROM results ORDER BY ci_method").fetchall()
    assert [r[0] for r in rows] == ["BCa", "percentile"]
    assert rows[0][3] == rows[1][3] and (rows[0][1], rows[0][2]) != (rows[1][1], rows[1][2])
    capsys.readouterr()
    assert main([*common, "--ci-method", "normal"]) == 2
    assert "--ci-method" in capsys.readouterr().err
