"""A run stores CIs, the alternative and the leave-one-out influence; show-influence prints it; bad values exit 2."""
from __future__ import annotations

import duckdb
import numpy as np
import pytest

from eatlas.cli import main
from eatlas.stats.robust import leave_one_out

WORDS = {"x": ["rose", "tulip", "daisy", "lily"], "y": ["ant", "moth", "wasp", "flea"],
         "a": ["happy", "gentle", "lucky", "honest"], "b": ["ugly", "rotten", "sick", "evil"]}


@pytest.fixture
def vectors(tmp_path):
    rng = np.random.default_rng(0)
    lines, mats = [], {}
    for role, words in WORDS.items():
        m = rng.normal(size=(len(words), 6))
        m[:, 0] += 1.5 if role in "xa" else 0.0
        m[:, 1] += 1.5 if role in "yb" else 0.0
        mats[role] = m
        lines += [w + " " + " ".join(f"{v:.6f}" for v in row) for w, row in zip(words, m)]
    path = tmp_path / "vecs.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the matrices as the file holds them (6 decimals)
    mats = {r: np.array([[float(v) for v in ln.split()[1:]] for ln in lines if ln.split()[0] in WORDS[r]])
            for r in WORDS}
    return path, mats


def _run(mini, db, vec, *extra):
    # --no-ci refuses --ci-method and --n-boot beside it
    boot = [] if "--no-ci" in extra else ["--ci-method", "percentile", "--n-boot", "500"]
    return main(["--registry", str(mini.root), "--db", str(db), "run", "--model", str(vec), "--levels", "word",
                 "--quiet", *boot, *extra])


def test_run_stores_ci_alternative_and_influence(mini, vectors, tmp_path, capsys):
    vec, mats = vectors
    db = tmp_path / "r.duckdb"
    assert _run(mini, db, vec, "--alternative", "two-sided", "--ci", "0.9") == 0
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute("SELECT run_id, effect_size, ci_low, ci_high, ci_level, n_boot, alternative, d_loo_min, "
                      "d_loo_max, sign_stable FROM results").fetchone()
    run_id, d, lo, hi, level, n_boot, alt, dmin, dmax, stable = row
    assert lo < d < hi and (level, n_boot, alt) == (0.9, 500, "two-sided")
    inf = con.execute("SELECT role, item, d_without, delta FROM influence WHERE run_id = ? ORDER BY role, item",
                      [run_id]).fetchall()
    con.close()
    assert len(inf) == 16 and {r[1] for r in inf} == {w for ws in WORDS.values() for w in ws}
    ref = leave_one_out(mats["x"], mats["y"], mats["a"], mats["b"])
    expect = {(str(r), WORDS[str(r)][int(i)]): float(v) for r, i, v in zip(ref.role, ref.index, ref.d_without)}
    for role, item, d_without, delta in inf:
        assert d_without == pytest.approx(expect[(role, item)], abs=1e-6)    # vectors held as float32
        assert delta == pytest.approx(d_without - d, abs=1e-12)
    assert dmin == pytest.approx(min(expect.values()), abs=1e-6)
    assert dmax == pytest.approx(max(expect.values()), abs=1e-6)
    assert stable == ref.sign_stable
    # show-influence with a run-id prefix: the largest |delta| first, --top rows
    capsys.readouterr()
    assert main(["--db", str(db), "show-influence", run_id[:8], "t1", "--top", "3"]) == 0
    out = capsys.readouterr().out
    top = sorted(inf, key=lambda r: -abs(r[3]))[:3]
    pos = [out.index(item) for _, item, _, _ in top]
    assert pos == sorted(pos)
    rest = [r[1] for r in inf if r[1] not in {t[1] for t in top}]
    assert not any(f" {w} " in out for w in rest)


def test_no_ci_stores_no_interval(mini, vectors, tmp_path):
    vec, _ = vectors
    db = tmp_path / "r.duckdb"
    assert _run(mini, db, vec, "--no-ci") == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT ci_low, ci_high, ci_level, n_boot, alternative FROM results").fetchone() == \
        (None, None, None, None, "greater")
    con.close()


def test_a_database_written_before_gains_the_new_columns(mini, vectors, tmp_path):
    vec, _ = vectors
    db = tmp_path / "old.duckdb"
    assert _run(mini, db, vec) == 0
    con = duckdb.connect(str(db))
    for col in ("alternative", "ci_low", "ci_high", "ci_level", "n_boot", "d_loo_min", "d_loo_max", "sign_stable"):
        con.execute(f"ALTER TABLE results DROP COLUMN {col}")
    con.close()
    assert _run(mini, db, vec) == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT ci_low IS NULL FROM results ORDER BY ci_low NULLS FIRST").fetchall()
    con.close()
    assert rows == [(True,), (False,)]


@pytest.mark.parametrize("args, says", [(["--ci", "1"], "--ci"), (["--ci", "0"], "--ci"), (["--ci", "nan"], "--ci"),
                                        (["--ci", "95"], "--ci"), (["--n-boot", "99"], "--n-boot"),
                                        (["--alternative", "both"], "--alternative")])
def test_bad_statistics_options_exit_2_and_write_nothing(mini, vectors, tmp_path, capsys, args, says):
    vec, _ = vectors
    db = tmp_path / "r.duckdb"
    assert _run(mini, db, vec, *args) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not db.exists()


def test_show_influence_names_what_is_missing(mini, vectors, tmp_path, capsys):
    vec, _ = vectors
    db = tmp_path / "r.duckdb"
    assert _run(mini, db, vec) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "show-influence", "zzzz", "t1"]) == 2
    assert "no run matches" in capsys.readouterr().err
    rid = duckdb.connect(str(db), read_only=True).execute("SELECT run_id FROM runs").fetchone()[0]
    assert main(["--db", str(db), "show-influence", rid, "nope"]) == 2
    err = capsys.readouterr().err
    assert "no result for test 'nope'" in err and "t1 [word]" in err


@pytest.mark.parametrize("opt", [["--alternative", "less"], ["--no-ci"], ["--n-boot", "500"]])
def test_ci_and_alternative_options_are_refused_for_ceat(tmp_path, capsys, opt):
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "ceat", "--corpus", str(tmp_path / "c.txt"), *opt]) == 2
    err = capsys.readouterr().err
    assert f"{opt[0]} applies to weat, mleat" in err and "not ceat" in err and not db.exists()


def test_n_boot_beside_the_inversion_interval_is_refused(mini, vectors, tmp_path, capsys):
    """--n-boot sets the bootstrap's resamples: beside the default interval (inversion), which resamples nothing,
    it would be recorded and ignored, so it is refused, and nothing is written."""
    vec, _ = vectors
    db = tmp_path / "r.duckdb"
    assert main(["--registry", str(mini.root), "--db", str(db), "run", "--model", str(vec), "--levels", "word",
                 "--quiet", "--n-boot", "500"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--n-boot" in err and "resamples nothing" in err and "--ci-method percentile" in err
    assert not db.exists()
