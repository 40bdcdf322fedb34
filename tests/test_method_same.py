"""SAME as a run method (eatlas/methods/same.py): the formula on hand-computed vectors, the role mapping
(A, B are the groups; X, Y the targets), degenerate input, and its declaration."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from eatlas import methods
from eatlas.methods.base import Matrices

NAMES = {"x": "Flowers", "y": "Insects", "a": "Pleasant", "b": "Unpleasant"}


def matrices(x, y, a, b, texts=None) -> Matrices:
    mats = {r: np.asarray(v, dtype=np.float64) for r, v in zip("xyab", (x, y, a, b))}
    texts = texts or {r: [f"{r}{i}" for i in range(len(mats[r]))] for r in mats}
    test = SimpleNamespace(id="t1", version="1", level="word",
                           concepts={r: SimpleNamespace(name=NAMES[r]) for r in "xyab"})
    return Matrices(texts=texts, test=test, **mats)


CFG = SimpleNamespace(options={}, seed=0, n_samples=1000, parametric=False)


def run(m):
    return methods.get("same").compute(m, CFG)


# A's vectors are not unit length: SAME averages the *normalised* attribute vectors, so a_hat = (0.5, 0.5)
# (the raw mean (1, 1.5) would give another direction). b_hat = (-1, 0). c = a_hat - b_hat = (1.5, 0.5).
A = [[2.0, 0.0], [0.0, 3.0]]
B = [[-4.0, 0.0]]
X = [[1.0, 0.0], [0.0, 2.0]]          # b = 1.5/|c|, 0.5/|c|
Y = [[-3.0, 0.0], [0.0, -1.0]]        # b = -1.5/|c|, -0.5/|c|
NORM_C = math.sqrt(1.5 ** 2 + 0.5 ** 2)


def test_same_skew_stereotype_by_hand():
    out = run(matrices(X, Y, A, B))
    assert out.not_run is None
    (r,) = out.rows["same_results"]
    bx = [1.5 / NORM_C, 0.5 / NORM_C]
    by = [-1.5 / NORM_C, -0.5 / NORM_C]
    allb = bx + by
    assert r.same == pytest.approx(sum(abs(v) for v in allb) / 4, abs=1e-15)
    assert r.skew == pytest.approx(0.0, abs=1e-15)
    # stereotype: the population standard deviation (ddof=0) of the signed biases, as the authors' np.std
    assert r.stereotype == pytest.approx(math.sqrt(sum(v * v for v in allb) / 4), abs=1e-15)
    assert r.same_x == pytest.approx(1.0 / NORM_C, abs=1e-15)
    assert r.skew_x == pytest.approx(1.0 / NORM_C, abs=1e-15)
    assert r.stereotype_x == pytest.approx(0.5 / NORM_C, abs=1e-15)      # ddof=1 would give 0.707/|c|
    assert r.same_y == pytest.approx(1.0 / NORM_C, abs=1e-15)
    assert r.skew_y == pytest.approx(-1.0 / NORM_C, abs=1e-15)
    assert (r.n_x, r.n_y, r.n_a, r.n_b) == (2, 2, 2, 1)
    assert (r.x_name, r.y_name, r.a_name, r.b_name) == ("Flowers", "Insects", "Pleasant", "Unpleasant")
    per = {(t.role, t.item): t for t in out.rows["same_targets"]}
    assert set(per) == {("x", "x0"), ("x", "x1"), ("y", "y0"), ("y", "y1")}     # targets only, no A or B rows
    assert per["x", "x0"].bias == pytest.approx(1.5 / NORM_C, abs=1e-15)
    assert per["y", "y1"].bias == pytest.approx(-0.5 / NORM_C, abs=1e-15)
    assert per["y", "y1"].abs_bias == pytest.approx(0.5 / NORM_C, abs=1e-15)


def test_same_matches_the_written_formula_on_random_vectors():
    rng = np.random.default_rng(7)
    x, y, a, b = (rng.normal(size=(n, 5)) * rng.uniform(0.5, 3, size=(n, 1)) for n in (4, 3, 5, 6))
    out = run(matrices(x, y, a, b))
    (r,) = out.rows["same_results"]

    def cos(u, v):
        return sum(p * q for p, q in zip(u, v)) / math.sqrt(sum(p * p for p in u) * sum(q * q for q in v))

    def unit_mean(S):
        return [sum(s[k] / math.sqrt(sum(e * e for e in s)) for s in S) / len(S) for k in range(5)]

    a_hat, b_hat = unit_mean(a.tolist()), unit_mean(b.tolist())
    c = [p - q for p, q in zip(a_hat, b_hat)]
    bias = [cos(t, c) for t in x.tolist() + y.tolist()]
    mean = sum(bias) / len(bias)
    assert r.same == pytest.approx(sum(abs(v) for v in bias) / len(bias), abs=1e-13)
    assert r.skew == pytest.approx(mean, abs=1e-13)
    assert r.stereotype == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in bias) / len(bias)), abs=1e-13)
    assert [t.bias for t in out.rows["same_targets"]] == pytest.approx(bias, abs=1e-13)


def test_roles_groups_are_a_and_b_targets_are_x_and_y():
    m = matrices(X, Y, A, B)
    r = run(m).rows["same_results"][0]
    # Swapping the groups A and B turns every signed bias (and so skew) around and leaves SAME as it is.
    sw = run(matrices(X, Y, B, A)).rows["same_results"][0]
    assert sw.same == pytest.approx(r.same) and sw.same_x == pytest.approx(r.same_x)
    assert sw.skew_x == pytest.approx(-r.skew_x) and sw.skew_y == pytest.approx(-r.skew_y)
    assert sw.stereotype == pytest.approx(r.stereotype)
    # Swapping the target sets X and Y swaps the per-set scores; the score over X u Y stays.
    st = run(matrices(Y, X, A, B)).rows["same_results"][0]
    assert (st.same_x, st.skew_x, st.same_y, st.skew_y) == pytest.approx((r.same_y, r.skew_y, r.same_x, r.skew_x))
    assert st.same == pytest.approx(r.same)
    # The targets do not define the direction: another X changes only X's scores.
    other = run(matrices([[5.0, 1.0]], Y, A, B)).rows["same_results"][0]
    assert other.skew_y == pytest.approx(r.skew_y) and other.same_x != pytest.approx(r.same_x)


def test_identical_groups_are_not_run_with_a_reason():
    # A and B hold the same vectors in another order: a_hat - b_hat is zero up to rounding.
    a = [[0.3, 0.7, 0.1], [0.9, 0.2, 0.4], [0.5, 0.5, 0.5]]
    out = run(matrices([[1.0, 0, 0]], [[0, 1.0, 0]], a, a[::-1]))
    assert out.not_run and "same mean direction" in out.not_run
    assert not out.rows


def test_a_zero_target_vector_is_not_run_with_a_reason():
    out = run(matrices([[0.0, 0.0], [1.0, 0.0]], Y, A, B))
    assert out.not_run and "zero" in out.not_run and "X" in out.not_run


def test_declaration():
    meth = methods.get("same")
    assert "same" in methods.names()
    assert meth.inputs == "matrices" and meth.effect_size is False and meth.options == () and meth.stats == ()
    tables = {t.name: t for t in meth.tables}
    assert set(tables) == {"same_results", "same_targets"}
    cols = {c: (typ, nn) for c, typ, nn in tables["same_results"].columns()}
    assert cols["same"] == ("DOUBLE", True) and cols["n_x"] == ("BIGINT", True) and cols["level"][1]
    assert "p_value" not in cols            # the paper defines no test
    assert tables["same_targets"].primary_key() == ("run_id", "test_id", "test_version", "level", "role", "item")
    assert "arXiv:2111.07864" in meth.cite and "geometrical_bias/same.py" in meth.cite


# ---------------------------------------------------------------------------- through the run path and the CLI
def test_cli_same_run_on_the_default_model_writes_rows_sql_reads(tmp_path, capsys):
    import duckdb

    from eatlas.cli import main
    from eatlas.registry import load_registry
    from eatlas.registry.stimuli import build_test

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "same", "--tests", "weat6", "--levels", "word", "--quiet",
                 "--no-cache"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "sql", "SELECT test_id, level, n_x, n_y, n_a, n_b, same, skew_x, skew_y "
                 "FROM same_results", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "test_id,level,n_x,n_y,n_a,n_b,same,skew_x,skew_y" and len(lines) == 2
    test_id, level, *counts = lines[1].split(",")[:6]
    assert (test_id, level, counts) == ("weat6", "word", ["8", "8", "8", "8"])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT method FROM runs").fetchall() == [("same",)]
    # results: one row per test and level, ok, with no WEAT effect size (SAME is not a d)
    assert con.execute("SELECT status, effect_size, p_value FROM results").fetchall() == [("ok", None, None)]
    r = con.execute("SELECT same, skew, stereotype, same_x, skew_x, same_y, skew_y FROM same_results").fetchone()
    per = con.execute("SELECT role, item, bias, abs_bias FROM same_targets ORDER BY role, item").fetchall()
    # same_targets holds every stimulus of X and Y by its text, and the aggregates are its mean |b| and mean b
    t = build_test(load_registry(), load_registry().get_test_spec("weat6"), "word")
    assert sorted((role, item) for role, item, _, _ in per) == sorted(
        [("x", s.text) for s in t.concepts["x"].stimuli] + [("y", s.text) for s in t.concepts["y"].stimuli])
    b = {role: [v for rl, _, v, _ in per if rl == role] for role in ("x", "y")}
    assert r[0] == pytest.approx(float(np.mean(np.abs(b["x"] + b["y"]))), abs=1e-12)
    assert r[1] == pytest.approx(float(np.mean(b["x"] + b["y"])), abs=1e-12)
    assert r[2] == pytest.approx(float(np.std(b["x"] + b["y"])), abs=1e-12)
    assert (r[3], r[4]) == pytest.approx((float(np.mean(np.abs(b["x"]))), float(np.mean(b["x"]))), abs=1e-12)
    assert all(-1 <= v <= 1 and a == pytest.approx(abs(v)) for _, _, v, a in per)


@pytest.mark.parametrize("extra, flag", [(["--sceat-alpha", "0.1"], "--sceat-alpha"),
                                         (["--mleat-alpha", "0.1"], "--mleat-alpha"),
                                         (["--n-samples", "1000"], "--n-samples")])
def test_an_option_of_another_method_is_a_one_line_error(tmp_path, capsys, extra, flag):
    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "same", "--tests", "weat6", "--levels", "word", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert flag in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not db.exists()


def test_cli_summary_columns_show_same_and_the_skews():
    out = run(matrices(X, Y, A, B))
    heads, cells = methods.get("same").summary_columns(SimpleNamespace(details={("t1", "word"): out.detail}))
    assert heads == ["SAME (X u Y)", "skew (X, Y)"]
    assert cells({"test_id": "t1", "level": "word"}) == [f"{1 / NORM_C:.3f}", f"{1 / NORM_C:+.3f}, {-1 / NORM_C:+.3f}"]
    assert cells({"test_id": "t1", "level": "sent"}) == ["-", "-"]


def test_same_results_never_enter_the_reproduction_views(tmp_path):
    """SAME gives no WEAT d: its results rows (NULL effect size) are not set beside the papers' d."""
    import duckdb

    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    args = ["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat6", "--levels", "word", "--quiet"]
    assert main([*args, "--method", "same"]) == 0
    assert main([*args, "--no-ci", "--n-samples", "1000"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    methods = {r[0] for r in con.execute("SELECT ru.method FROM reproduction_loose v JOIN runs ru USING (run_id)"
                                         ).fetchall()}
    assert methods == {"weat"}      # the WEAT run of the same model is there (Caliskan et al. printed weat6)
