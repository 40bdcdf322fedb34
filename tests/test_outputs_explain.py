"""Outputs a newcomer reads: `eatlas --version`, `eatlas models` (copyable install commands, whole ids), `eatlas sql`
on wide results, `eatlas show` in prose, `eatlas report --help`."""
from __future__ import annotations

import pytest

from eatlas import __version__
from eatlas.cli import main


def test_version_prints_the_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"eatlas {__version__}"


@pytest.mark.parametrize("columns", ["120", "80"])
def test_models_prints_every_install_command_whole_on_one_line(columns, capsys, monkeypatch):
    """Each install command of a model that is not installed stands whole on one line (to copy), and no model id
    is cut ('…') or broken, at 120 columns and on a narrow terminal."""
    import eatlas.encoders as enc

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(enc, "entry_installed", lambda e: False)     # every model shows its install command
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "…" not in out
    for mid, e in enc.model_entries().items():
        cmd = " ".join(str(e["install"]).split())
        assert any(line.split() == [mid, *cmd.split()] for line in lines), (mid, cmd)
        shown = lines[:next(n for n, line in enumerate(lines) if line.startswith("Not installed"))]
        assert any(mid in line.split() for line in shown), mid      # whole in the tables (or blocks)


def test_the_ml_eat_suggestion_is_for_english_runs_only():
    """A run that pairs with no printed number ends with README's ML-EAT command only where it applies: a run of
    English tests by another model (a Hindi or French run is told nothing about English word2vec)."""
    from eatlas.cli.run_summary import REPRODUCE_COMMAND, REPRODUCE_MODEL, pairing_line

    counts = {"results": 3, "same_model": 0, "loose_only": 0}
    assert REPRODUCE_COMMAND in pairing_line(counts, "m", {"caliskan"}, {"en"})
    assert REPRODUCE_COMMAND in pairing_line(counts, "m", {"caliskan"}, {"en", "hi"})
    assert REPRODUCE_COMMAND not in pairing_line(counts, "m", {"caliskan"}, {"hi"})
    assert REPRODUCE_COMMAND not in pairing_line(counts, "m", {"caliskan"}, {"fr"})
    assert REPRODUCE_COMMAND not in pairing_line(counts, REPRODUCE_MODEL, {"caliskan"}, {"en"})


def test_a_french_run_ends_without_the_english_suggestion(tmp_path, capsys):
    from conftest import MiniRegistry, make_set, make_test

    from eatlas.cli.run_summary import REPRODUCE_COMMAND

    r = MiniRegistry(tmp_path / "reg")
    words = {"fleurs": ["rose", "tulipe", "lys", "iris"], "insectes": ["fourmi", "mouche", "guepe", "puce"],
             "bon": ["heureux", "doux", "juste", "sain"], "mauvais": ["laid", "pourri", "malade", "mal"]}
    for sid, ws in words.items():
        r.add_set(make_set(sid, [{"text": w, "kind": "adjective"} for w in ws], language="fr"))
    r.add_test(make_test("fr1", "fleurs@1.0.0", "insectes@1.0.0", "bon@1.0.0", "mauvais@1.0.0", language="fr",
                         expansions={}))
    r.sync()
    vec = tmp_path / "v.txt"
    vec.write_text("\n".join(f"{w} {n % 3}.0 {n % 5}.0 1.0" for n, w in
                             enumerate(w for ws in words.values() for w in ws)) + "\n", encoding="utf-8")
    assert main(["--registry", str(r.root), "--db", str(tmp_path / "r.duckdb"), "run", "--model", str(vec),
                 "--tests", "fr1", "--levels", "word", "--n-samples", "100", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "reproduction: none of this run's" in out and REPRODUCE_COMMAND not in " ".join(out.split())


def test_sql_shows_a_wide_result_one_block_per_row_and_says_so(tmp_path, capsys, monkeypatch):
    """23 columns at 120 characters: no header broken into fragments; each row a block of 'column  value' lines,
    and a note naming --format vertical and csv; a narrow result stays a table."""
    monkeypatch.setenv("COLUMNS", "120")
    cols = ", ".join(f"'value {i}' AS a_rather_long_column_name_{i}" for i in range(23))
    db = str(tmp_path / "none.duckdb")
    assert main(["--db", db, "sql", f"SELECT {cols} FROM range(2)"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.splitlines()
    assert "--format vertical" in cap.err and "--format csv" in cap.err
    assert [line.split() for line in lines if line.startswith("a_rather_long_column_name_22")] == \
        [["a_rather_long_column_name_22", "value", "22"]] * 2
    assert lines[-1] == "2 row(s)"
    assert main(["--db", db, "sql", "SELECT 1 AS one, 'x' AS two", "--format", "vertical"]) == 0
    assert [line.split() for line in capsys.readouterr().out.splitlines()[1:3]] == [["one", "1"], ["two", "x"]]
    assert main(["--db", db, "sql", "SELECT 1 AS one, 'x' AS two"]) == 0
    cap = capsys.readouterr()
    assert "┃ one ┃ two ┃" in cap.out and "vertical" not in cap.err


def test_show_says_source_and_truncation_in_words(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", "weat7", "--level", "sent", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "{'" not in out and "('" not in out          # no Python dict or tuple
    assert "source: Caliskan et al. (2017), Semantics derived automatically" in out
    assert "authors' file: sent-bias tests/weat7.jsonl" in out
    assert "truncated to 72 of 82 sentences of set Y with seed 0" in out
    assert main(["show", "weathub_ru_gt_weapons"]) == 0
    out = capsys.readouterr().out
    assert "{'" not in out and "differences from the authors' file (2): position 8" in out
    assert "(commit 878d6cea7aabc0ce4233bcf48e7ed1759ef41538)" in out


def test_report_help_says_what_it_writes_and_alpha_is_refused_with_the_reason(capsys, tmp_path):
    assert main(["report", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Write one HTML file, OUT, that needs nothing else to open" in text
    assert "--alpha" not in text.split("options:")[1] and "ignored" not in text
    assert main(["--db", str(tmp_path / "r.duckdb"), "report", str(tmp_path / "r.html"), "--alpha", "0.05"]) == 2
    err = capsys.readouterr().err
    assert "report takes no --alpha" in err and "eatlas run --alpha" in err
    assert not (tmp_path / "r.html").exists()


def test_a_model_not_installed_is_the_users_problem_with_its_command(tmp_path, capsys, monkeypatch):
    import eatlas.encoders as enc

    monkeypatch.setattr(enc, "entry_installed", lambda e: False)
    assert main(["--db", str(tmp_path / "r.duckdb"), "run", "--model", "word2vec-googlenews-wefe-subset",
                 "--tests", "weat1", "--levels", "word"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: model 'word2vec-googlenews-wefe-subset' is not installed: "
                          "pip install --no-deps wefe==1.0.1")
    assert "loaders/" not in err and "field" not in err
    assert not (tmp_path / "r.duckdb").exists()


# ------------------------------------------------------------------ an item in a target and an attribute set

def test_the_shipped_weathub_tests_declare_their_shared_item_and_validate_quietly():
    """WEATHub's Arabic weat14 and Korean weat15 lists share an item between X and A: kept as the authors' lists
    hold it, declared in overlap (x/a), so `validate` and `add` no longer print a warning about other people's
    files."""
    from eatlas.registry import load_registry
    from eatlas.registry.checks import split_warnings
    from eatlas.registry.schemas import check_test

    reg = load_registry()
    for tid, item in (("weathub_ar_weat14", "مثقف"), ("weathub_ko_weat15", "불법의")):
        assert reg.tests[tid].overlap == {"x/a": [item]}
        assert item in [i.text for i in reg.get_set(reg.tests[tid].sets["x"]).items]
        assert item in [i.text for i in reg.get_set(reg.tests[tid].sets["a"]).items]
        problems, warnings = split_warnings(check_test(reg, tid))
        assert problems == [] and warnings == [], [p.render() for p in problems + warnings]


def test_a_shared_target_attribute_item_warns_until_declared_and_a_wrong_declaration_is_an_error(mini, capsys):
    from conftest import make_set, make_test

    mini.add_set(make_set("roses2", ["rose", "tulip", "happy", "daisy"]))
    mini.add_test(make_test("t9", "roses2@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "item(s) in both target X and attribute A: 'happy'" in err
    assert "overlap: {x/a: [...]}" in " ".join(err.split())
    mini.add_test(make_test("t9", "roses2@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", overlap={"x/a": ["happy"]}))
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) == 0
    assert "warning" not in capsys.readouterr().err
    mini.add_test(make_test("t9", "roses2@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", overlap={"x/a": ["tulip"]}))
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) == 1
    assert "overlap declares 'tulip' in both x and a, but the sets share 'happy'" in capsys.readouterr().err


def test_ids_sort_naturally_and_a_misspelt_id_gets_the_close_ones():
    from eatlas.ids import did_you_mean, natural_sorted
    assert natural_sorted(["weat10", "weat2", "weat1", "weat10b", "weat3"]) == ["weat1", "weat2", "weat3", "weat10",
                                                                               "weat10b"]
    assert did_you_mean("glove6b50d", ["glove-6b-50d", "all-minilm-l6-v2"]) == "did you mean glove-6b-50d? "
    assert did_you_mean("zzz", ["glove-6b-50d"]) == ""


def test_a_p_at_its_floor_prints_as_a_bound():
    from eatlas.legend import at_floor, fmt_p, p_floor
    assert p_floor(100_000) == 1e-5 and p_floor(100_000, "two-sided") == 2e-5 and p_floor(None) is None
    assert at_floor(1e-5, 100_000) is True and at_floor(2e-5, 100_000) is False
    assert at_floor(2e-5, 100_000, "two-sided") is True and at_floor(1e-5, None) is None
    assert fmt_p(1e-5, True) == "< 1e-05" and fmt_p(1e-5, False) == "1e-05" and fmt_p(None) == "-"


def _outcome():
    from types import SimpleNamespace
    base = {"test_version": "1.0.0", "level": "word", "status": "ok", "reason": None, "n_x": 8, "n_y": 8, "n_a": 8,
            "n_b": 8, "n_dropped": 0, "exact": False, "ci_method": "concepts", "holm_family_size": 3,
            "convention": None, "notes": None}
    rows = [{**base, "test_id": "weat10", "effect_size": 0.9, "p_value": 0.003, "p_at_floor": False,
             "p_concepts": 0.02, "d_concepts": 1.1, "ci_low": 0.2, "ci_high": 1.8, "concepts_estimable": True,
             "papers_low": 0.4, "papers_high": 1.3, "holm_significant": False},
            {**base, "test_id": "weat2", "effect_size": 1.5, "p_value": 1e-5, "p_at_floor": True, "p_concepts": 1e-4,
             "d_concepts": 1.6, "ci_low": 1.2, "ci_high": 1.9, "concepts_estimable": True, "papers_low": 1.3,
             "papers_high": 1.7, "holm_significant": True},
            {**base, "test_id": "weat8", "effect_size": 1.2, "p_value": 4e-4, "p_at_floor": False, "p_concepts": 0.03,
             "d_concepts": None, "ci_low": None, "ci_high": None, "concepts_estimable": False, "papers_low": 0.9,
             "papers_high": 1.4, "holm_significant": False,
             "notes": ["the concepts' d is not estimable: the attribute words' noise swamps the targets' spread (x)"]}]
    run = {"run_id": "abcdef12-0000", "model": "glove-6b-50d", "pooling": "cbow", "layer": None}
    cfg = SimpleNamespace(method="weat", alpha=0.01, ci=0.95, ci_method="concepts", p_rule="concepts",
                          alternative="greater")
    return SimpleNamespace(results=rows, run=run), cfg


def _printed(width: int) -> str:
    import io

    from rich.console import Console

    from eatlas.cli.run_summary import results_table
    from eatlas.methods import get
    outcome, cfg = _outcome()
    con = Console(width=width, file=io.StringIO(), record=True)
    con.print(results_table(outcome, cfg, get("weat"), con))
    return " ".join(con.export_text().split())


def test_the_run_table_shows_each_d_with_its_interval_the_p_floor_and_the_holm_family():
    wide = _printed(220)
    assert "sample d [papers' CI]" in wide and "+1.50 [+1.30, +1.70]" in wide and "+1.60 [+1.20, +1.90]" in wide
    assert "< 1e-05" in wide and "report it as a bound" in wide
    assert "over the run's 3 test result(s)" in wide and "layer None" not in wide and "None" not in wide
    assert "not estimable: attribute noise swamps the targets' spread" in wide
    assert wide.index("weat2") < wide.index("weat8") < wide.index("weat10")       # natural order
    assert "hides" not in wide


def test_a_narrow_terminal_says_which_columns_it_hides_and_how_to_see_them():
    narrow = _printed(100)
    assert "this terminal (100 columns) hides version, n (X,Y,A,B), the papers' CI of the sample d" in narrow
    assert "widen it to" in narrow and "COLUMNS=" in narrow and "eatlas sql" in narrow
    lines = _printed(50)
    assert "hides version, n (X,Y,A,B):" in lines and "+1.50 [+1.30, +1.70]" in lines


def test_list_refuses_an_unknown_source_naming_the_known_ones(capsys):
    assert main(["list", "--source", "caliskan2071"]) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "unknown source 'caliskan2071'" in err and "did you mean caliskan2017" in err and "may2019" in err


def test_show_prints_a_criterions_source_as_prose(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", "caliskan2017_wefat_names", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "{'" not in out and "source: Caliskan et al. (2017), Semantics derived automatically" in out


def test_a_misspelt_model_gets_did_you_mean(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["run", "--model", "glove-6b-5d", "--tests", "weat1", "--db", str(tmp_path / "x.duckdb")]) != 0
    assert "did you mean glove-6b-50d?" in " ".join(capsys.readouterr().err.split())
