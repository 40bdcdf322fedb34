"""eatlas sweep (issue 14): one task per model, the driver alone writing; local and Ray give the same rows."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from eatlas.cli import main
from tests.static_models import write_static_model

ROWS = ("SELECT test_id, test_version, level, model, status, effect_size, p_value, exact, n_partitions, "
        "n_x, n_y, n_a, n_b, holm_significant, n_dropped FROM results ORDER BY model, test_id, level")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("models")
    return [str(write_static_model(d / f"m{seed}.txt", seed)) for seed in (1, 2)]


def rows(db: Path, sql: str = ROWS):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def sweep(db, *models, extra=()):
    return main(["sweep", "--models", *models, "--tests", "weat1", "weat2", "--levels", "word", "--n-samples", "300",
                 "--no-cache", "--db", str(db), *extra])


def test_ray_engine_gives_the_rows_of_the_local_engine_and_records_a_failed_model(models, tmp_path, ray_local,
                                                                                    capsys):
    bad = str(tmp_path / "no-such-model.txt")
    assert sweep(tmp_path / "local.duckdb", *models) == 0
    assert sweep(tmp_path / "ray.duckdb", models[0], bad, models[1], extra=["--engine", "ray"]) == 1
    local, distributed = rows(tmp_path / "local.duckdb"), rows(tmp_path / "ray.duckdb")
    assert len(local) == 4 and local == distributed
    fail = rows(tmp_path / "ray.duckdb", "SELECT model, error, engine FROM sweep_failures")
    assert len(fail) == 1 and fail[0][0] == bad and "unknown model" in fail[0][1] and fail[0][2] == "ray"
    assert "no-such-model.txt: FAILED" in capsys.readouterr().err


def test_a_failed_model_is_recorded_and_the_others_are_stored(models, tmp_path, capsys):
    db = tmp_path / "a.duckdb"
    broken = tmp_path / "broken.txt"
    broken.write_text("this is not\na vector file\n")
    assert sweep(db, models[0], str(broken), models[1]) == 1
    assert {r[0] for r in rows(db, "SELECT model FROM runs")} == set(models)
    fail = rows(db, "SELECT model, error FROM sweep_failures")
    assert [f[0] for f in fail] == [str(broken)] and "broken.txt" in fail[0][1]
    err = capsys.readouterr().err
    assert "[1/3]" in err and "[3/3]" in err and "broken.txt: FAILED" in err


def test_resume_skips_a_model_already_stored_with_this_configuration(models, tmp_path, capsys):
    db = tmp_path / "a.duckdb"
    assert sweep(db, models[0]) == 0
    first = rows(db, "SELECT run_id FROM runs")
    assert sweep(db, *models, extra=["--resume"]) == 0
    assert "m1.txt: skipped, already stored" in capsys.readouterr().err
    runs = rows(db, "SELECT run_id, model FROM runs")
    assert len(runs) == 2 and first[0] in [(r[0],) for r in runs]
    # another configuration (seed) of the same model is not skipped
    assert sweep(db, models[0], extra=["--resume", "--seed", "7"]) == 0
    assert len(rows(db, "SELECT run_id FROM runs")) == 3
    # without --resume, the same configuration runs again
    assert sweep(db, models[0]) == 0
    assert len(rows(db, "SELECT run_id FROM runs")) == 4


def test_models_file(models, tmp_path):
    f = tmp_path / "models.txt"
    f.write_text(f"# my models\n{models[0]}\n\n{models[1]}\n")
    db = tmp_path / "a.duckdb"
    assert main(["sweep", "--models-file", str(f), "--tests", "weat1", "--levels", "word", "--n-samples", "100",
                 "--no-cache", "--db", str(db)]) == 0
    assert {r[0] for r in rows(db, "SELECT model FROM runs")} == set(models)


def test_unreachable_ray_address_is_a_one_line_error(models, tmp_path, capsys):
    pytest.importorskip("ray")
    db = tmp_path / "a.duckdb"
    assert sweep(db, models[0], extra=["--engine", "ray", "--ray-address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the Ray cluster at 127.0.0.1:1" in err
    assert not db.exists()
