"""eatlas results export / import (issue 14): hive-partitioned parquet with a manifest, merged back by run id."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from eatlas.cli import main
from eatlas.run.runner import RunConfig, run
from tests.cli_helpers import rows
from tests.static_models import write_static_model


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A results file with two runs of two tiny static models (weat1, weat2 at word level)."""
    d = tmp_path_factory.mktemp("store")
    db = d / "a.duckdb"
    for seed in (1, 2):
        model = write_static_model(d / f"m{seed}.txt", seed)
        run(RunConfig(model=str(model), tests=["weat1", "weat2"], levels=("word",), n_samples=200,
                      use_cache=False), db=db)
    run(RunConfig(model=str(d / "m1.txt"), tests=["weat1"], levels=("word",), n_samples=200, use_cache=False,
                  method="mleat"), db=db)
    return db


def test_export_is_hive_partitioned_parquet_with_manifest(store, tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["results", "export", str(out), "--db", str(store)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["format"] == "eatlas-results" and m["schema_version"] == 1 and m["eatlas_version"]
    filled = {t for t, e in m["tables"].items() if e["rows"]}
    assert filled == {"runs", "results", "mleat_results", "run_inputs", "influence"}     # keyed by run_id
    assert {"ceat_results", "ibd_results"} <= set(m["tables"])      # every method's table, empty ones with no file
    assert not m["tables"]["ceat_results"]["files"]
    assert m["tables"]["results"]["partition_by"] == ["model", "test_id"]
    assert dict(m["tables"]["results"]["columns"])["effect_size"] == "DOUBLE"
    assert set(m["registry"]["test_versions"]) == {"weat1", "weat2"}
    # readable by plain DuckDB, partitions restored as columns; same rows as the store
    con = duckdb.connect()
    got = sorted(con.execute("SELECT run_id, test_id, level, effect_size FROM "
                             f"read_parquet('{out}/results/**/*.parquet', hive_partitioning=true)").fetchall())
    assert got == sorted(rows(store, "SELECT run_id, test_id, level, effect_size FROM results"))
    dirs = {p.name for p in (out / "results").iterdir()}
    assert all(d.startswith("model=") for d in dirs) and len(dirs) == 2
    assert any(p.name.startswith("test_id=weat2") for p in (out / "results").rglob("*"))


def test_export_refuses_a_folder_it_did_not_write(store, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["results", "export", str(out), "--db", str(store)]) == 2
    assert (out / "notes.txt").read_text() == "keep me" and [p.name for p in out.iterdir()] == ["notes.txt"]
    # an earlier export is replaced, but not when a foreign file was added to it
    exp = tmp_path / "exp"
    assert main(["results", "export", str(exp), "--db", str(store)]) == 0
    assert main(["results", "export", str(exp), "--db", str(store)]) == 0
    (exp / "results" / "mine.parquet").write_bytes(b"x")
    assert main(["results", "export", str(exp), "--db", str(store)]) == 2
    assert (exp / "results" / "mine.parquet").read_bytes() == b"x"


@pytest.mark.parametrize("via", ["folder", "duckdb"])
def test_import_merges_and_is_idempotent(store, tmp_path, via, capsys):
    src = store
    if via == "folder":
        src = tmp_path / "exp"
        assert main(["results", "export", str(src), "--db", str(store)]) == 0
    target = tmp_path / "b.duckdb"
    assert main(["results", "import", str(src), "--db", str(target)]) == 0
    q = "SELECT * EXCLUDE (package_versions, registry, settings) FROM runs ORDER BY run_id"
    assert rows(target, q) == rows(store, q)
    for t in ("results", "mleat_results"):
        q = f"SELECT * FROM {t} ORDER BY run_id, test_id, level"
        assert rows(target, q) == rows(store, q)
    q = "SELECT registry FROM runs ORDER BY run_id"
    assert rows(target, q) == rows(store, q)
    # the views work on imported runs (published results loaded)
    assert rows(target, "SELECT count(*) FROM published_results")[0][0] > 0
    assert main(["results", "import", str(src), "--db", str(target)]) == 0
    assert "3 run(s) already present" in " ".join(capsys.readouterr().out.split())   # as printed, wrapped or not
    assert rows(target, "SELECT count(*) FROM results") == rows(store, "SELECT count(*) FROM results")


def _export(store, tmp_path) -> Path:
    out = tmp_path / "exp"
    assert main(["results", "export", str(out), "--db", str(store)]) == 0
    return out


def _untouched(target: Path):
    return not target.exists() or rows(target, "SELECT count(*) FROM runs")[0][0] == 0


def test_import_refuses_a_newer_schema_before_writing(store, tmp_path, capsys):
    out = _export(store, tmp_path)
    m = json.loads((out / "manifest.json").read_text())
    m["schema_version"] = 2
    (out / "manifest.json").write_text(json.dumps(m))
    target = tmp_path / "b.duckdb"
    assert main(["results", "import", str(out), "--db", str(target)]) == 2
    err = capsys.readouterr().err
    assert "schema version 2" in err and "upgrade" in err and err.count("\n") == 1
    assert _untouched(target)


def test_import_refuses_an_unknown_column(store, tmp_path, capsys):
    out = _export(store, tmp_path)
    m = json.loads((out / "manifest.json").read_text())
    m["tables"]["results"]["columns"].append(["new_stat", "DOUBLE"])
    (out / "manifest.json").write_text(json.dumps(m))
    target = tmp_path / "b.duckdb"
    assert main(["results", "import", str(out), "--db", str(target)]) == 2
    assert "new_stat" in capsys.readouterr().err
    assert _untouched(target)


def test_import_refuses_a_corrupt_parquet_and_writes_nothing(store, tmp_path, capsys):
    out = _export(store, tmp_path)
    target = tmp_path / "b.duckdb"
    # an existing store keeps exactly what it held
    assert main(["results", "import", str(store), "--db", str(target)]) == 0
    before = rows(target, "SELECT count(*) FROM results")
    victim = sorted((out / "results").rglob("*.parquet"))[-1]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    other = tmp_path / "c.duckdb"
    assert main(["results", "import", str(out), "--db", str(other)]) == 2
    assert "checksum" in capsys.readouterr().err
    assert _untouched(other)
    assert rows(target, "SELECT count(*) FROM results") == before


def _old_style_run(db: Path, rid: str) -> None:
    """A run written as earlier versions wrote a not-estimable result: the hull of the concepts' confidence set in
    concepts_low/high and ci_low/high, and no record of the partitions sampled beside a p at its floor."""
    import datetime as dt

    from eatlas.registry import load_registry
    from eatlas.store import write_run
    t = dt.datetime(2026, 11, 22, 10, 0)
    write_run(db, {"run_id": rid, "method": "weat", "model": "m", "model_fingerprint": "fp", "seed": 0,
                   "alpha": 0.01, "started_at": t, "finished_at": t, "tests": ["weat8"], "levels": ["word"]},
              [{"run_id": rid, "test_id": "weat8", "test_version": "1.0.0", "level": "word", "model": "m",
                "status": "ok", "effect_size": 1.2, "p_value": 1e-5, "exact": False, "n_partitions": 100_000,
                "parametric": False, "alternative": "greater", "n_x": 8, "n_y": 8, "n_a": 8, "n_b": 8,
                "ci_method": "concepts", "ci_level": 0.95, "ci_low": 0.81, "ci_high": 2.0, "concepts_low": 0.81,
                "concepts_high": 2.0, "concepts_estimable": False, "p_concepts": 0.03, "papers_low": 0.9,
                "papers_high": 1.4}], load_registry())


# the row as earlier versions stored it (write_run itself moves the hull of rows given so)
OLD_BOUNDS = "UPDATE results SET concepts_low = 0.81, concepts_high = 2.0, ci_low = 0.81, ci_high = 2.0"
HULL_Q = ("SELECT concepts_low, concepts_high, ci_low, ci_high, concepts_hull_low, concepts_hull_high, p_n_samples, "
          "p_at_floor FROM results WHERE test_id = 'weat8'")


def test_an_older_store_keeps_no_hull_as_bounds_and_records_the_partitions_beside_p(tmp_path):
    """A store written before the hull and the floor had columns: at the next write its not-estimable result's
    bounds become NULL (the hull moves to concepts_hull_low/high) and its sampled p gets p_n_samples and
    p_at_floor, so a query of concepts_low/ci_low never reads a hull as an interval."""
    db = tmp_path / "old.duckdb"
    _old_style_run(db, "old-0000-0000-0000-0000-000000000000")
    con = duckdb.connect(str(db))
    for c in ("concepts_hull_low", "concepts_hull_high", "p_n_samples", "p_at_floor"):
        con.execute(f"ALTER TABLE results DROP COLUMN {c}")
    con.execute(OLD_BOUNDS)
    con.close()
    _old_style_run(db, "new-0000-0000-0000-0000-000000000000")   # any write brings the store to this version
    assert rows(db, HULL_Q) == [(None, None, None, None, 0.81, 2.0, 100_000, True)] * 2


def test_import_of_an_older_export_moves_the_hull_out_of_the_bounds(tmp_path):
    db = tmp_path / "a.duckdb"
    _old_style_run(db, "old-0000-0000-0000-0000-000000000000")
    assert rows(db, HULL_Q) == [(None, None, None, None, 0.81, 2.0, 100_000, True)]    # rows given old-style
    con = duckdb.connect(str(db))
    con.execute(OLD_BOUNDS + ", concepts_hull_low = NULL, concepts_hull_high = NULL, p_n_samples = NULL, "
                "p_at_floor = NULL")
    con.close()
    out = tmp_path / "exp"
    assert main(["results", "export", str(out), "--db", str(db)]) == 0
    target = tmp_path / "b.duckdb"
    assert main(["results", "import", str(out), "--db", str(target)]) == 0
    assert rows(target, HULL_Q) == [(None, None, None, None, 0.81, 2.0, 100_000, True)]
