"""A sweep's failed models travel with its results: ``results export`` writes sweep_failures, ``results import``
merges them by (sweep_id, model, config_key), so importing twice adds nothing (issue 14)."""
from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from eatlas.cli import main
from tests.static_models import write_static_model
from tests.test_results_io import rows

FAILS = "SELECT sweep_id, model, config_key, error, engine, failed_at, settings FROM sweep_failures ORDER BY ALL"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A results file of two sweeps, each with one model stored and one that failed to load."""
    d = tmp_path_factory.mktemp("swept")
    db, good, broken = d / "a.duckdb", write_static_model(d / "m1.txt", 1), d / "broken.txt"
    broken.write_text("not a vector file\n", encoding="utf-8")
    for seed in ("0", "1"):
        assert main(["sweep", "--models", str(good), str(broken), "--tests", "weat1", "--levels", "word",
                     "--n-samples", "100", "--no-cache", "--seed", seed, "--quiet", "--db", str(db)]) == 1
    assert len(rows(db, FAILS)) == 2
    return db


def test_sweep_failures_are_exported_and_imported_once(swept, tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["results", "export", str(out), "--db", str(swept)]) == 0
    entry = json.loads((out / "manifest.json").read_text())["tables"]["sweep_failures"]
    assert entry["rows"] == 2 and entry["partition_by"] == ["model"] and entry["files"]
    fresh = tmp_path / "b.duckdb"
    assert main(["results", "import", str(out), "--db", str(fresh)]) == 0
    assert "sweep_failures 2" in capsys.readouterr().out
    assert rows(fresh, FAILS) == rows(swept, FAILS)
    # again, and into the store it came from: nothing added
    assert main(["results", "import", str(out), "--db", str(fresh)]) == 0
    assert main(["results", "import", str(out), "--db", str(swept)]) == 0
    assert "sweep_failures 0" in capsys.readouterr().out
    assert len(rows(fresh, FAILS)) == 2 and len(rows(swept, FAILS)) == 2


def test_sweep_failures_are_imported_from_a_results_file_by_sweep_model_and_configuration(swept, tmp_path):
    swept = shutil.copy(swept, tmp_path / "a.duckdb")
    fresh = tmp_path / "b.duckdb"
    assert main(["results", "import", str(swept), "--db", str(fresh)]) == 0
    assert main(["results", "import", str(swept), "--db", str(fresh)]) == 0
    assert rows(fresh, FAILS) == rows(swept, FAILS)
    # a failure of another sweep of the same model is another row
    con = duckdb.connect(str(swept))
    try:
        con.execute("UPDATE sweep_failures SET sweep_id = 'another' WHERE config_key LIKE '%\"seed\": 1%'")
    finally:
        con.close()
    assert main(["results", "import", str(swept), "--db", str(fresh)]) == 0
    assert len(rows(fresh, FAILS)) == 3
