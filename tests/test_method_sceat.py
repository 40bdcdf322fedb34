"""SC-EAT as a run method (eatlas/methods/sceat.py): every target stimulus of X and Y against A and B,
checked against the formula by hand (effect size and the exact permutation p), its options and
degenerate input."""
from __future__ import annotations

import itertools
import math
import statistics
from types import SimpleNamespace

import numpy as np
import pytest

from eatlas import methods
from eatlas.errors import EatlasError
from eatlas.methods.base import Matrices


def matrices(x, y, a, b) -> Matrices:
    mats = {r: np.asarray(v, dtype=np.float64) for r, v in zip("xyab", (x, y, a, b))}
    texts = {r: [f"{r}{i}" for i in range(len(mats[r]))] for r in mats}
    test = SimpleNamespace(id="t1", version="1", level="word",
                           concepts={r: SimpleNamespace(name=r.upper()) for r in "xyab"})
    return Matrices(texts=texts, test=test, **mats)


def cfg(**options):
    return SimpleNamespace(options=options, seed=0, n_samples=100_000, parametric=False)


SCEAT = methods.get("sceat")
A = [[1.0, 0.0], [3.0, 3.0]]          # cos with w = (1, 0): 1, 1/sqrt 2
B = [[0.0, 2.0], [-5.0, 0.0]]         # 0, -1


def by_hand(w, A, B):
    """d and both exact permutation tails of one target, from the written formula."""
    def cos(u, v):
        return sum(p * q for p, q in zip(u, v)) / math.sqrt(sum(p * p for p in u) * sum(q * q for q in v))
    ua, ub = [cos(w, a) for a in A], [cos(w, b) for b in B]
    d = (statistics.mean(ua) - statistics.mean(ub)) / statistics.stdev(ua + ub)
    u = ua + ub
    obs = sum(ua) - sum(ub)
    stats = [sum(u[i] for i in s) - sum(u[i] for i in range(len(u)) if i not in s)
             for s in itertools.combinations(range(len(u)), len(ua))]
    tol = 1e-12
    p_up = sum(s >= obs - tol for s in stats) / len(stats)
    p_low = sum(s <= obs + tol for s in stats) / len(stats)
    return d, p_up, p_low, len(stats)


def test_every_target_by_hand():
    X, Y = [[1.0, 0.0], [2.0, 1.0]], [[0.0, -1.0]]
    out = SCEAT.compute(matrices(X, Y, A, B), cfg())
    assert out.not_run is None
    rows = {(r.role, r.item): r for r in out.rows["sceat_results"]}
    assert set(rows) == {("x", "x0"), ("x", "x1"), ("y", "y0")}       # X and Y only, one row each
    for (role, item), w in zip([("x", "x0"), ("x", "x1"), ("y", "y0")], X + Y):
        d, p_up, p_low, n = by_hand(w, A, B)
        r = rows[role, item]
        assert r.effect_size == pytest.approx(d, abs=1e-12)
        assert (r.p_upper, r.p_lower) == pytest.approx((p_up, p_low), abs=1e-12)
        assert r.p_value == pytest.approx(p_up if d >= 0 else p_low, abs=1e-12)
        assert r.exact is True and r.n_partitions == n == 6
        assert (r.n_a, r.n_b, r.reason) == (2, 2, None)
    # w = (1, 0): u = (1, 0.707 | 0, -1); the observed partition is the largest of 6: p_upper = 1/6
    assert rows["x", "x0"].p_upper == pytest.approx(1 / 6)


def test_association_rule_and_its_options():
    m = matrices([[1.0, 0.0]], [[-1.0, 0.2]], A, B)
    default = SCEAT.compute(m, cfg()).rows["sceat_results"]
    assert [r.association for r in default] == [None, None]       # p = 1/6 is not < 0.05 (ML-EAT's default)
    assert default[0].alpha == 0.05 and default[0].effect_threshold == 0.2
    loose = {r.role: r for r in SCEAT.compute(m, cfg(sceat_alpha=0.2)).rows["sceat_results"]}
    assert loose["x"].association == "A" and loose["x"].alpha == 0.2
    assert loose["y"].effect_size < -0.2 and loose["y"].association == "B"
    high = SCEAT.compute(m, cfg(sceat_alpha=0.2, sceat_threshold=50.0)).rows["sceat_results"]
    assert [r.association for r in high] == [None, None]


def test_a_target_equally_similar_to_every_attribute_has_no_effect_size():
    a, b = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]
    out = SCEAT.compute(matrices([[0.0, 0.0, 1.0]], [[1.0, 0.5, 0.0]], a, b), cfg())
    rows = {r.role: r for r in out.rows["sceat_results"]}
    assert rows["x"].effect_size is None and rows["x"].p_value is None and "equal" in rows["x"].reason
    assert rows["y"].effect_size is not None and rows["y"].reason is None
    # No target with an effect size: the test is not run, with the reason.
    none = SCEAT.compute(matrices([[0.0, 0.0, 1.0]], [[0.0, 0.0, -2.0]], a, b), cfg())
    assert none.not_run and "equal" in none.not_run and not none.rows


@pytest.mark.parametrize("opt, value, flag", [("sceat_alpha", 0.0, "--sceat-alpha"),
                                              ("sceat_alpha", 1.5, "--sceat-alpha"),
                                              ("sceat_threshold", -0.1, "--sceat-threshold"),
                                              ("sceat_threshold", float("nan"), "--sceat-threshold")])
def test_bad_option_values_are_refused_naming_the_option(opt, value, flag):
    with pytest.raises(EatlasError) as e:
        SCEAT.check(cfg(**{opt: value}))
    assert flag in str(e.value) and "\n" not in str(e.value)


def test_declaration():
    assert "sceat" in methods.names()
    assert SCEAT.effect_size is False and SCEAT.stats == ("n_samples", "parametric")
    assert [o.flag for o in SCEAT.options] == ["--sceat-alpha", "--sceat-threshold"]
    assert [o.default for o in SCEAT.options] == [0.05, 0.2]
    (t,) = SCEAT.tables
    assert t.name == "sceat_results" and t.primary_key()[-2:] == ("role", "item")
    SCEAT.check(cfg())          # the defaults pass


# ---------------------------------------------------------------------------- through the run path and the CLI
def test_cli_sceat_run_writes_one_row_per_target_stimulus(tiny_bert, tmp_path, capsys):
    import duckdb

    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", str(tiny_bert), "--method", "sceat", "--tests", "weat6",
                 "--levels", "word", "--n-samples", "2000", "--sceat-alpha", "0.2", "--quiet", "--no-cache"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT method FROM runs").fetchall() == [("sceat",)]
    rows = con.execute("SELECT role, item, effect_size, p_value, p_upper, p_lower, exact, n_partitions, n_a, n_b, "
                       "association, alpha, effect_threshold FROM sceat_results").fetchall()
    assert sorted(r[0] for r in rows) == ["x"] * 8 + ["y"] * 8 and len({r[1] for r in rows}) == 16
    for _role, _item, d, p, p_up, p_low, exact, n_part, n_a, n_b, assoc, alpha, thr in rows:
        assert (n_a, n_b, alpha, thr) == (8, 8, 0.2, 0.2)
        assert exact is False and n_part == 2000        # C(16, 8) = 12,870 partitions > --n-samples: sampled
        assert p == (p_up if d >= 0 else p_low) and 0 < p <= 1
        want = "A" if d > thr and p_up < alpha else "B" if d < -thr and p_low < alpha else None
        assert assoc == want


def test_sceat_options_with_another_method_are_a_one_line_error(tmp_path, capsys):
    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "weat", "--tests", "weat6", "--sceat-threshold", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--sceat-threshold" in err and len(err.splitlines()) == 1
    assert not db.exists()


def test_cli_summary_columns_count_the_associations():
    m = matrices([[1.0, 0.0]], [[-1.0, 0.2]], A, B)
    out = SCEAT.compute(m, cfg(sceat_alpha=0.2))
    heads, cells = SCEAT.summary_columns(SimpleNamespace(details={("t1", "word"): out.detail}))
    assert heads == ["X associated", "Y associated"]
    assert cells({"test_id": "t1", "level": "word"}) == ["1A 0B", "0A 1B"]
