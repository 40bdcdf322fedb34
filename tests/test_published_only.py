"""The papers' published tables are readable before any run: no results file is needed, none is created."""
from __future__ import annotations

import io

import pandas as pd

from eatlas.cli import main
from eatlas.registry import load_registry
from eatlas.store import read_published


def _csv(capsys, *args):
    rc = main([str(a) for a in args] + ["--format", "csv"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    return pd.read_csv(io.StringIO(cap.out)), cap.err


def test_published_results_without_a_database(tmp_path, capsys):
    db = tmp_path / "eatlas.duckdb"
    df, err = _csv(capsys, "--db", db, "sql", "SELECT paper, count(*) AS n FROM published_results GROUP BY paper")
    expected = read_published(load_registry()).groupby("paper").size().to_dict()
    assert expected and dict(zip(df["paper"], df["n"], strict=True)) == expected
    assert "no results file" in err
    assert not db.exists() and list(tmp_path.iterdir()) == []     # the file is created only by a run


def test_reproduction_and_run_tables_without_a_database(tmp_path, capsys):
    db = tmp_path / "eatlas.duckdb"
    df, _ = _csv(capsys, "--db", db, "sql", "SELECT * FROM reproduction")
    assert len(df) == 0 and {"test_id", "published_effect_size", "our_effect_size"} <= set(df.columns)
    df, _ = _csv(capsys, "--db", db, "sql", "SELECT count(*) AS n FROM runs")
    assert df["n"].tolist() == [0]
    assert not db.exists()


def test_a_lab_registry_gives_its_own_published_tables(mini, tmp_path, capsys):
    df, _ = _csv(capsys, "--registry", mini.root, "--db", tmp_path / "r.duckdb", "sql",
                 "SELECT count(*) AS n FROM published_results")
    assert df["n"].tolist() == [0]


def test_without_a_database_sql_is_still_sandboxed(tmp_path, capsys):
    out = tmp_path / "out.csv"
    rc = main(["--db", str(tmp_path / "eatlas.duckdb"), "sql", f"COPY published_results TO '{out}'"])
    assert rc == 2 and "--write" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_write_needs_a_results_file(tmp_path, capsys):
    rc = main(["--db", str(tmp_path / "eatlas.duckdb"), "sql", "--write", "CREATE TABLE t (x INT)"])
    err = capsys.readouterr().err
    assert rc == 2 and "no such database" in err and "eatlas run" in err
    assert list(tmp_path.iterdir()) == []
