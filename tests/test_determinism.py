"""Determinism: the same inputs and seed give bit-identical effect sizes and p-values, run after
run and model load after model load; across batch sizes they agree within a stated tolerance
(padding changes the order of float32 sums inside the model). Every run records what it takes
to repeat it."""
from __future__ import annotations

import json
import re

import duckdb
import pytest

from eatlas.cli import main
from eatlas.encoders import load_encoder
from eatlas.run.runner import RunConfig, evaluate

TESTS = ["weat6", "weat8", "weat9"]
N = 5000
# Across batch sizes: effect sizes within EFFECT_TOL (observed: <= 3e-8 on the tiny BERT), p-values
# within 2 / n_samples (observed: identical; a partition statistic would have to sit within
# float rounding of the observed one to move a count).
EFFECT_TOL = 1e-6
P_TOL = 2 / N


def numbers(outcome):
    return [(r["test_id"], r["level"], r["status"], r["effect_size"], r["p_value"], r["exact"], r["n_partitions"])
            for r in outcome.results]


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """Each evaluate encodes afresh (the embedding cache would hand back the first batch size's vectors)."""
    n = iter(range(1000))

    def new():
        monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / f"cache{next(n)}"))
    new()
    return new


def test_same_seed_bit_identical_across_runs_and_model_loads(tiny_bert, fresh_cache):
    cfg = RunConfig(model=str(tiny_bert), tests=TESTS, levels=("word", "sent", "c-word"), n_samples=N, seed=11)
    a = evaluate(cfg)
    fresh_cache()
    b = evaluate(cfg)                                     # a new encoder, loaded again from disk
    c = evaluate(cfg, encoder=load_encoder(str(tiny_bert)))
    assert numbers(a) == numbers(b) == numbers(c)
    assert all(r["status"] == "ok" for r in a.results) and len(a.results) == 9
    other = evaluate(RunConfig(model=str(tiny_bert), tests=TESTS, levels=("word",), n_samples=N, seed=12))
    assert [r["p_value"] for r in other.results] != [r["p_value"] for r in a.results if r["level"] == "word"]


@pytest.mark.parametrize("batch_size", [1, 5, 256])
def test_batch_size_changes_numbers_only_within_tolerance(tiny_bert, fresh_cache, batch_size):
    cfg = dict(model=str(tiny_bert), tests=["weat6", "weat8"], levels=("word", "sent", "c-word"), n_samples=N)
    base = evaluate(RunConfig(**cfg, batch_size=64))
    fresh_cache()
    other = evaluate(RunConfig(**cfg, batch_size=batch_size))
    assert len(other.results) == 6
    for x, y in zip(numbers(base), numbers(other)):
        assert x[:3] == y[:3] and x[5:] == y[5:]
        assert abs(x[3] - y[3]) <= EFFECT_TOL, (x, y)
        assert abs(x[4] - y[4]) <= P_TOL, (x, y)


def test_every_run_records_how_to_repeat_it(tiny_bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat6", "weat8", "--levels",
                 "word,sent", "--n-samples", "1000", "--seed", "5", "--pooling", "cls", "--batch-size", "8",
                 "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    cols = [d[0] for d in con.execute("SELECT * FROM runs").description]
    (row,) = con.execute("SELECT * FROM runs").fetchall()
    con.close()
    run = dict(zip(cols, row))
    assert run["seed"] == 5 and run["n_samples"] == 1000 and run["alpha"] == 0.01
    assert run["levels"] == ["word", "sent"] and run["tests"] == ["weat6", "weat8"]
    assert run["pooling"] == "cls" and run["layer"] == "-1" and run["model"] == str(tiny_bert)
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", run["model_fingerprint"]) and run["model_family"] == "unknown"
    assert run["family_source"] == "unknown"      # an unregistered folder: no family unless --family says one
    assert run["eatlas_version"] and run["started_at"] <= run["finished_at"]
    pkgs = json.loads(run["package_versions"])
    for name in ("python", "numpy", "scipy", "torch", "transformers", "tokenizers", "duckdb", "jinja2", "pandera"):
        assert pkgs.get(name), name
    reg = json.loads(run["registry"])
    assert re.fullmatch(r"[0-9a-f]{40}", reg["commit"] or ""), reg.get("commit")
    assert reg["tests"] == {"weat6": "1.0.0", "weat8": "1.0.0"}
    assert reg["sets"] == {r["id"]: r["version"] for r in reg["inputs"] if r["kind"] == "set"}    # the sets it read
    assert reg["sets"]["career"] == "1.0.0" and "flowers" not in reg["sets"]
    assert reg["templates"] == {"may2019_bleached": "1.0.0"}
    settings = json.loads(run["settings"])
    assert settings["batch_size"] == 8 and settings["seed"] == 5 and settings["trust_remote_code"] is False


def test_same_run_twice_through_the_cli_stores_identical_numbers(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "r.duckdb"
    args = ["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat6", "weat8", "weat9", "--levels",
            "word,sent",
            "--n-samples", "3000", "--seed", "2", "--quiet"]
    assert main(args) == 0
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache2"))
    assert main(args) == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT r.run_id, test_id, level, effect_size, p_value, holm_significant FROM results r "
                       "JOIN runs USING (run_id) ORDER BY started_at, test_id, level").fetchall()
    con.close()
    first, second = rows[:len(rows) // 2], rows[len(rows) // 2:]
    assert [r[1:] for r in first] == [r[1:] for r in second] and len(first) == 6
