"""Long work loses nothing and is not mislabelled (issue 24, "Long work" and the sweep's options), a catalogue
in the style of tests/test_bad_input.py: each case gives the right behaviour or a one-line error, and nothing
computed is lost (the database as it was, the run kept in ``eatlas-unsaved/`` and importable).

- a sweep whose database a reader holds past --wait: every model computed, each run kept in
  eatlas-unsaved/<run id>/, the failures kept too, all importable later into the same numbers;
- a sweep whose database a reader holds briefly: it waits (saying so) and writes every model;
- ``eatlas run`` on a database in use: the run kept, the one command that imports it said;
- a model whose write fails for another reason (disk full at commit): kept, the next model written;
- a sweep into a truncated file: refused before any model is computed;
- ``--resume``: a test bumped (1.0.0 -> 1.0.1, other stimuli) and a vector file rewritten run again; a run that
  ``eatlas run`` stored with the same settings is skipped; the key of a planned run is the key of the stored one;
- the sweep takes run's statistics options and the methods' own (same rows as ``eatlas run``);
- ``--models 'a,b/v.txt'`` keeps an existing path whole;
- a local Ray instance: no dashboard, and nothing left after ``kill -9`` of its driver.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from eatlas.cli import main
from tests.cli_helpers import cli
from tests.conftest import make_set, make_test

WORDS = ["rose", "tulip", "daisy", "lily", "iris", "ant", "moth", "wasp", "flea", "happy", "gentle", "lucky", "honest",
         "ugly", "rotten", "sick", "evil"]
SWEEP = ("--tests", "t1", "--levels", "word", "--n-samples", "200", "--no-cache")


def vectors(path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    path.write_text("".join(w + " " + " ".join(f"{x:.6f}" for x in rng.normal(size=8)) + "\n" for w in WORDS),
                    encoding="utf-8")
    return path


@pytest.fixture
def models(tmp_path) -> list[str]:
    return [str(vectors(tmp_path / f"m{seed}.txt", seed)) for seed in (1, 2)]


def sweep(capsys, mini, db, *models, extra=()):
    return cli(capsys, "--registry", mini.root, "sweep", "--db", db, "--models", *models, *SWEEP, *extra)


def rows(db: Path, sql: str) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


NUMBERS = ("SELECT ru.model, r.test_id, r.level, r.effect_size, r.p_value, r.ci_low, r.ci_high FROM results r "
           "JOIN runs ru USING (run_id) ORDER BY ALL")


def snapshot(db: Path) -> bytes:
    return db.read_bytes()


READER = r'''
import duckdb, sys, time
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SELECT count(*) FROM runs").fetchall()
print("reading", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
'''


def hold_reader(tmp_path: Path, db: Path, seconds: float) -> subprocess.Popen:
    """Another process holding the database open read-only (as `eatlas sql` does while it runs)."""
    script = tmp_path / "reader.py"
    script.write_text(READER)
    p = subprocess.Popen([sys.executable, str(script), str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "reading"
    return p


def unsaved(db: Path) -> list[Path]:
    d = db.parent / "eatlas-unsaved"
    return sorted(p for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


@pytest.fixture
def stored(mini, models, tmp_path, capsys) -> Path:
    """A results file holding one run (so that it exists when a reader opens it)."""
    db = tmp_path / "r.duckdb"
    assert sweep(capsys, mini, db, models[0], extra=["--seed", "9"])[0] == 0
    return db


# ----------------------------------------------------------------------------- the database held by another
def test_a_sweep_whose_database_a_reader_holds_keeps_every_run_and_failure(mini, models, stored, tmp_path, capsys):
    db, before = stored, snapshot(stored)
    reader = hold_reader(tmp_path, db, 300)
    try:
        rc, out, err = sweep(capsys, mini, db, models[0], str(tmp_path / "missing.txt"), models[1],
                             extra=["--wait", "1"])
        assert snapshot(db) == before                       # nothing half-written while it was held
    finally:
        reader.kill()
        reader.wait()
    assert rc == 1
    assert "in use by another process" in err and "waiting up to 1 s" in err
    assert err.count("NOT WRITTEN") == 2 and "missing.txt: FAILED" in err     # every model was computed or tried
    kept = unsaved(db)
    assert len(kept) == 3 and sum(p.name.startswith("sweep-") for p in kept) == 1
    for p in kept:
        assert f"eatlas results import {p} --db {db}" in out
        assert main(["results", "import", str(p), "--db", str(db)]) == 0
    capsys.readouterr()
    fresh = tmp_path / "fresh.duckdb"
    assert sweep(capsys, mini, fresh, *models)[0] == 0
    swept = NUMBERS.replace("ORDER BY", "WHERE ru.seed = 0 ORDER BY")
    assert rows(db, swept) == rows(fresh, swept) and len(rows(fresh, swept)) == 2        # the same numbers
    fails = rows(db, "SELECT model, error FROM sweep_failures ORDER BY model")
    assert [m for m, _ in fails] == sorted([models[0], str(tmp_path / "missing.txt"), models[1]])
    assert all("kept in" in e for m, e in fails if m in models)


def test_a_sweep_waits_for_a_reader_that_lets_go(mini, models, stored, tmp_path, capsys):
    reader = hold_reader(tmp_path, stored, 4)
    try:
        rc, out, err = sweep(capsys, mini, stored, *models)       # the default --wait
    finally:
        reader.kill()
        reader.wait()
    assert rc == 0, err
    assert "waiting up to 60 s" in err and "free again after" in err
    assert len(rows(stored, "SELECT run_id FROM runs")) == 3 and unsaved(stored) == []


def test_a_run_on_a_database_in_use_is_kept_and_the_import_command_said(mini, models, stored, tmp_path, capsys):
    before = snapshot(stored)
    reader = hold_reader(tmp_path, stored, 300)
    try:
        rc, _, err = cli(capsys, "--registry", mini.root, "--db", stored, "run", "--model", models[1], *SWEEP,
                         "--quiet")
    finally:
        reader.kill()
        reader.wait()
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: ")
    (kept,) = unsaved(stored)
    assert "database is in use by another process" in err and f"kept in {kept}" in err
    assert f"eatlas results import {kept} --db {stored}" in err and "--wait" in err
    assert snapshot(stored) == before
    assert main(["results", "import", str(kept), "--db", str(stored)]) == 0
    assert [r[0] for r in rows(stored, "SELECT model FROM runs ORDER BY model")] == [models[0], models[1]]


def test_a_model_whose_write_fails_is_kept_and_the_next_is_written(mini, models, tmp_path, capsys, monkeypatch):
    import eatlas.store.db as store_db

    db = tmp_path / "r.duckdb"
    real, calls = store_db.write_run, []

    def disk_full_once(path, run, *a, **k):            # the first model's commit into the results file fails
        if Path(path) == db and not calls:
            calls.append(run["run_id"])
            raise store_db.EatlasError("the run could not be written, and nothing of it was: No space left on "
                                       "device", file=str(path), hint="check the free space and permissions")
        return real(path, run, *a, **k)
    monkeypatch.setattr(store_db, "write_run", disk_full_once)
    monkeypatch.setattr("eatlas.run.sweep.write_run", disk_full_once)
    rc, out, err = sweep(capsys, mini, db, *models)
    assert rc == 1 and "No space left on device" in err and f"kept in {db.parent / 'eatlas-unsaved' / calls[0]}" in err
    assert [r[0] for r in rows(db, "SELECT model FROM runs")] == [models[1]]       # the next model went on
    assert [r[0] for r in rows(db, "SELECT model FROM sweep_failures")] == [models[0]]
    assert [p.name for p in unsaved(db)] == calls


def test_a_sweep_into_a_truncated_file_is_refused_before_any_model(mini, models, stored, tmp_path, capsys):
    data = stored.read_bytes()
    stored.write_bytes(data[: len(data) // 2])
    before = snapshot(stored)
    t = time.perf_counter()
    rc, _, err = sweep(capsys, mini, stored, *models)
    assert rc == 2 and "cannot open database" in err and err.count("\n") == 1
    assert "[1/2]" not in err and time.perf_counter() - t < 30      # no model was computed
    assert snapshot(stored) == before and unsaved(stored) == []


# ----------------------------------------------------------------------------- --resume
def bump_roses(mini):
    """roses 1.0.0 -> 1.0.1 (lily replaced by iris) and t1 1.0.0 -> 1.0.1 naming it."""
    change = [{"version": "1.0.0", "date": "2026-11-22", "change": "test"},
              {"version": "1.0.1", "date": "2026-11-25", "change": "lily replaced by iris"}]
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "iris"], version="1.0.1", changelog=change))
    mini.add_test(make_test("t1", "roses@1.0.1", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", version="1.0.1",
                            changelog=change))
    mini.sync()


def test_resume_runs_again_after_a_bumped_test_and_a_rewritten_vector_file(mini, models, tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    assert sweep(capsys, mini, db, models[0])[0] == 0
    rc, _, err = sweep(capsys, mini, db, models[0], extra=["--resume"])
    assert rc == 0 and "skipped, already stored" in err and len(rows(db, "SELECT 1 FROM runs")) == 1
    bump_roses(mini)
    rc, _, err = sweep(capsys, mini, db, models[0], extra=["--resume"])
    assert rc == 0 and "skipped" not in err
    d = rows(db, "SELECT r.test_version, r.effect_size FROM results r ORDER BY r.test_version")
    assert [v for v, _ in d] == ["1.0.0", "1.0.1"] and d[0][1] != d[1][1]
    vectors(Path(models[0]), 7)                       # the same file, other vectors
    rc, _, err = sweep(capsys, mini, db, models[0], extra=["--resume"])
    assert rc == 0 and "skipped" not in err and len(rows(db, "SELECT 1 FROM runs")) == 3
    assert len(rows(db, "SELECT DISTINCT model_fingerprint FROM runs")) == 2


def test_resume_skips_what_eatlas_run_stored_with_the_same_settings(mini, models, tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    same = ("--ci", "0.9", "--alternative", "two-sided")
    assert cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", models[0], *SWEEP, *same,
               "--quiet")[0] == 0
    rc, _, err = sweep(capsys, mini, db, *models, extra=[*same, "--resume"])
    assert rc == 0 and f"{models[0]}: skipped, already stored" in err
    assert sorted(r[0] for r in rows(db, "SELECT model FROM runs")) == sorted(models)
    rc, _, err = sweep(capsys, mini, db, models[0], extra=["--ci", "0.8", "--resume"])      # another option value
    assert rc == 0 and "skipped" not in err and len(rows(db, "SELECT 1 FROM runs")) == 3


def test_the_key_of_a_planned_run_is_the_key_of_the_stored_run(mini, models, tmp_path, capsys):
    from eatlas.encoders import load_encoder
    from eatlas.run.resume import planned_record, resume_key, stored_keys
    from eatlas.run.runner import RunConfig
    from eatlas.run.sweep import _plan

    db = tmp_path / "r.duckdb"
    assert sweep(capsys, mini, db, models[0], extra=["--method", "mleat", "--mleat-alpha", "0.1", "--no-maps"])[0] == 0
    cfg = RunConfig(model=models[0], tests=["t1"], levels=("word",), n_samples=200, use_cache=False,
                    method="mleat", options={"mleat_alpha": 0.1, "no_maps": True})
    tests, levels = _plan(cfg, mini.root)
    planned = resume_key(planned_record(cfg, load_encoder(models[0]), mini.load(), tests, levels))
    assert stored_keys(db) == {planned}
    other = RunConfig(**{**cfg.__dict__, "options": {"mleat_alpha": 0.2, "no_maps": True}})
    assert resume_key(planned_record(other, load_encoder(models[0]), mini.load(), tests, levels)) != planned
    older = planned_record(cfg, load_encoder(models[0]), mini.load(), tests, levels)
    del older["settings"]["ci_method"]              # a run stored before the option existed: run again
    assert resume_key(older) != planned


# ----------------------------------------------------------------------------- options
def test_a_sweep_takes_run_s_statistics_and_method_options(mini, models, tmp_path, capsys):
    opts = ("--ci", "0.9", "--alternative", "two-sided", "--ci-method", "BCa", "--n-boot", "200", "--seed", "3")
    a, b = tmp_path / "run.duckdb", tmp_path / "sweep.duckdb"
    assert cli(capsys, "--registry", mini.root, "--db", a, "run", "--model", models[0], *SWEEP, *opts,
               "--quiet")[0] == 0
    assert sweep(capsys, mini, b, models[0], extra=opts)[0] == 0
    cols = NUMBERS.replace("r.ci_high", "r.ci_high, r.ci_level, r.n_boot, r.alternative, r.ci_method")
    assert rows(a, cols) == rows(b, cols) and rows(b, cols)[0][7:] == (0.9, 200, "two-sided", "BCa")
    ml = "SELECT test_id, level, level1_effect_size, x_effect_size, pattern FROM mleat_results ORDER BY ALL"
    for db, cmd in ((a, ["run", "--model", models[0]]), (b, ["sweep", "--models", models[0]])):
        assert cli(capsys, "--registry", mini.root, "--db", db, *cmd, *SWEEP, "--method", "mleat",
                   "--effect-threshold", "0.5", "--no-maps", *(["--quiet"] if cmd[0] == "run" else []))[0] == 0
    assert rows(a, ml) == rows(b, ml) and len(rows(a, ml)) == 1
    rc, _, err = sweep(capsys, mini, b, *models, extra=["--method", "mleat", "--maps", str(tmp_path / "maps")])
    assert rc == 2 and "--maps names one output" in err and err.count("\n") == 1


def test_models_with_a_comma_in_an_existing_path_stay_whole(mini, tmp_path, capsys):
    from eatlas.cli import build_parser

    folder = tmp_path / "a,b"
    folder.mkdir()
    model = str(vectors(folder / "v.txt", 1))
    assert build_parser().parse_args(["sweep", "--models", model, "x,y"]).models == [model, "x", "y"]
    db = tmp_path / "r.duckdb"
    assert sweep(capsys, mini, db, model)[0] == 0
    assert rows(db, "SELECT model FROM runs") == [(model,)]


# ----------------------------------------------------------------------------- Ray
DRIVER = r'''
import os, sys, time
from eatlas.distributed.cluster import joined
with joined(None) as ray:
    @ray.remote
    def pid():
        return os.getpid()
    ray.get(pid.remote())
    print("ready", flush=True)
    time.sleep(600)
'''


def _session(sid: int) -> dict[int, str]:
    """pid -> command line of every live process of session ``sid`` (zombies are gone)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                out[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_kill_9_of_a_ray_driver_leaves_no_ray_process(tmp_path):
    """Over 10 s: a local Ray instance starts (about 10 s on 2 cores). The driver runs in a session of its own,
    so the processes of this Ray instance, and no other, are those of that session."""
    pytest.importorskip("ray")
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         start_new_session=True, env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        procs = _session(p.pid)
        assert any("raylet" in c for c in procs.values()) and any("ray::" in c for c in procs.values()), procs
        assert not [c for c in procs.values() if "dashboard/dashboard.py" in c]      # include_dashboard=False holds
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 30
    while (left := _session(p.pid)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in left:            # never leave them to the next test, whatever the outcome
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"left after kill -9 of the driver: {sorted(left.values())}"
