"""Crashes and concurrency: a killed run leaves the database as it was (or with one complete new
run), two runs on one database both finish or the second says the database is in use, and a model
that cannot load fails the run before anything is written.

The kill test runs ``eatlas run`` in a subprocess (tiny random BERT, weat1 and weat2 at word level,
2,000 permutation samples) and SIGKILLs it at 20 random points spread over an uninterrupted run's
duration; most land in start-up (python + torch + transformers imports dominate), so a second test
kills a process that does nothing but write runs, to land inside DuckDB transactions.
"""
from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from eatlas.cli import main
from tests.conftest import ROOT

TESTS = ["weat1", "weat2"]
N_KILLS = 6         # kill points stratified over one run's duration (each kill also re-runs in process)


def run_args(db: Path, model: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "run", "--model", str(model), "--tests", *TESTS, "--levels", "word",
            "--n-samples", "2000", "--seed", "0", "--quiet", *extra]


def start(db: Path, model: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "eatlas.cli", *run_args(db, model, *extra)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["EATLAS_CACHE"] = str(tmp_path / "cache")     # shared by every process of a test: a kill must not spoil it
    e.pop("EATLAS_DB", None)
    e.pop("EATLAS_REGISTRY", None)
    return e


def snapshot(db: Path) -> dict:
    """Runs and their results; fails on a partial run or orphan results."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        runs = {r[0]: r[1] for r in con.execute("SELECT run_id, tests FROM runs").fetchall()}
        rows = con.execute("SELECT run_id, test_id, level, effect_size, p_value FROM results "
                           "ORDER BY run_id, test_id, level").fetchall()
        n_pub = con.execute("SELECT count(*) FROM published_results").fetchone()[0]
    finally:
        con.close()
    numbers: dict[str, list] = {}
    for run_id, *rest in rows:
        numbers.setdefault(run_id, []).append(tuple(rest))
    assert set(numbers) <= set(runs), "results without their run"
    for run_id, tests in runs.items():
        assert len(numbers.get(run_id, [])) == len(tests), f"run {run_id} is partial: {numbers.get(run_id)}"
    return {"runs": numbers, "published": n_pub}


def test_killed_run_leaves_no_partial_run_and_a_rerun_gives_the_same_numbers(tiny_bert, tmp_path, env, monkeypatch,
                                                                             capsys):
    monkeypatch.setenv("EATLAS_CACHE", env["EATLAS_CACHE"])
    db = tmp_path / "crash.duckdb"
    t0 = time.perf_counter()
    p = start(db, tiny_bert, env)
    out, err = p.communicate(timeout=300)
    duration = time.perf_counter() - t0
    assert p.returncode == 0, err
    first = snapshot(db)
    assert len(first["runs"]) == 1 and first["published"] > 0
    reference = next(iter(first["runs"].values()))     # [(test, level, effect size, p)] of an uninterrupted run
    assert [r[0] for r in reference] == TESTS

    rng = random.Random(7)
    state, landed, reruns = first, [], []
    for k in range(N_KILLS):
        delay = (k + rng.random()) / N_KILLS * duration          # stratified over [0, duration]
        p = start(db, tiny_bert, env)
        time.sleep(delay)
        finished = p.poll() is not None
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        after = snapshot(db)                                      # opens, no partial run
        new = set(after["runs"]) - set(state["runs"])
        assert set(state["runs"]) <= set(after["runs"]), "a kill lost a run that was already there"
        assert len(new) <= 1 and after["published"] == first["published"]
        for run_id in new:
            assert after["runs"][run_id] == reference
        landed.append((round(delay, 2), finished, len(new)))
        # a plain re-run on the same database completes with the same numbers
        t1 = time.perf_counter()
        assert main(run_args(db, tiny_bert)) == 0
        reruns.append(time.perf_counter() - t1)
        state = snapshot(db)
        (rerun,) = set(state["runs"]) - set(after["runs"])
        assert state["runs"][rerun] == reference
    capsys.readouterr()
    assert len(landed) == N_KILLS
    print(f"\nuninterrupted run {duration:.1f} s; kills at (s, finished, new runs): {landed}; "
          f"in-process re-runs {sum(reruns):.1f} s; {len(state['runs'])} runs in the end")


WRITER = r'''
import datetime, sys, uuid
from eatlas import store
from eatlas.registry import load_registry
reg, db, n = load_registry(), sys.argv[1], int(sys.argv[2])
now = datetime.datetime(2026, 1, 1)
while True:
    rid = str(uuid.uuid4())
    run = {"run_id": rid, "method": "weat", "model": "m", "model_fingerprint": "f", "seed": 0, "levels": ["word"],
           "tests": [f"t{i}" for i in range(n)], "started_at": now, "finished_at": now}
    results = [{"run_id": rid, "test_id": f"t{i}", "test_version": "1.0.0", "level": "word", "model": "m",
                "status": "ok", "effect_size": i / n, "p_value": 0.5, "dropped": {}} for i in range(n)]
    store.write_run(db, run, results, reg)
    print(rid, flush=True)
'''


KILLS_IN_WRITES = 6


def test_kill_inside_database_writes(tmp_path):
    """SIGKILL a process that only writes runs (5,000 results each): every committed run is there,
    complete, and no run is partial."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    db = tmp_path / "w.duckdb"
    rng = random.Random(3)
    there: set[str] = set()
    unreported = 0
    for _ in range(KILLS_IN_WRITES):
        p = subprocess.Popen([sys.executable, str(script), str(db), "5000"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # its first two commits (so every process commits and then is killed while writing more,
        # however slow the machine); then kill at a random point
        committed = {p.stdout.readline().strip(), p.stdout.readline().strip()}
        time.sleep(rng.uniform(0, 0.8))
        p.send_signal(signal.SIGKILL)
        out, err = p.communicate(timeout=60)
        committed |= set(out.split())
        snap = snapshot(db)                              # no partial run
        assert there | committed <= set(snap["runs"]), "a committed run was lost"
        extra = set(snap["runs"]) - there - committed
        assert len(extra) <= 1       # at most the run whose commit the kill beat the report of
        unreported += len(extra)
        there = set(snap["runs"])
    assert len(there) >= 2 * KILLS_IN_WRITES
    print(f"\n{len(there)} runs after {KILLS_IN_WRITES} kills, {unreported} of them committed but killed before "
          "reporting it")


LOCKER = r'''
import duckdb, sys, time
con = duckdb.connect(sys.argv[1])
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
'''


def hold_lock(tmp_path: Path, db: Path, seconds: float) -> subprocess.Popen:
    script = tmp_path / "locker.py"
    script.write_text(LOCKER)
    p = subprocess.Popen([sys.executable, str(script), str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_run_on_a_database_in_use_says_so_and_writes_nothing(tiny_bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "r.duckdb"
    assert main(run_args(db, tiny_bert)) == 0
    before = snapshot(db)
    locker = hold_lock(tmp_path, db, 30)
    try:
        capsys.readouterr()
        rc = main(run_args(db, tiny_bert))
        err = capsys.readouterr().err
        assert rc == 2 and "database is in use by another process" in err and f"PID {locker.pid}" in err
        assert "--wait" in err and "Traceback" not in err
        rc = main(["--db", str(db), "sql", "SELECT count(*) FROM runs"])    # readers too are shut out meanwhile
        assert rc == 2 and "in use" in capsys.readouterr().err
    finally:
        locker.kill()
        locker.wait()
    assert snapshot(db) == before


def test_run_with_wait_waits_for_the_database(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "r.duckdb"
    assert main(run_args(db, tiny_bert)) == 0
    locker = hold_lock(tmp_path, db, 4)
    t = time.perf_counter()
    assert main(run_args(db, tiny_bert, "--wait", "60")) == 0
    assert locker.wait() == 0
    assert time.perf_counter() - t >= 2          # it waited for the lock to go
    assert len(snapshot(db)["runs"]) == 2


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(procs: list[subprocess.Popen], timeout: float = 240) -> None:
    """Until every process has used (almost) no CPU for a second: all are waiting for the lock."""
    deadline = time.monotonic() + timeout
    last = [_cpu_seconds(p.pid) for p in procs]
    while time.monotonic() < deadline:
        time.sleep(1.0)
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs if p.poll() is not None]
        now = [_cpu_seconds(p.pid) for p in procs]
        if all(b - a < 0.1 for a, b in zip(last, now)):
            return
        last = now
    raise AssertionError("the runs never went idle waiting for the database")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_two_runs_at_once_both_finish_with_wait(tiny_bert, tmp_path, env):
    """Two `eatlas run` processes on one database: both reach the write while a third process holds
    the file, then contend for it; with --wait both finish and both runs are complete."""
    db = tmp_path / "r.duckdb"
    duckdb.connect(str(db)).close()
    locker = hold_lock(tmp_path, db, 300)
    procs = [start(db, tiny_bert, env, "--wait", "300") for _ in range(2)]
    try:
        wait_until_idle(procs)
    finally:
        locker.kill()
        locker.wait()
    released = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    snap = snapshot(db)
    assert len(snap["runs"]) == 2
    first, second = snap["runs"].values()
    assert first == second                       # same seed, same numbers
    con = duckdb.connect(str(db), read_only=True)
    waited = con.execute("SELECT count(*) FROM runs WHERE finished_at < ?", [released]).fetchone()[0]
    con.close()
    assert waited == 2, "both runs were computed before the database was free, and both waited for it"


def test_two_runs_at_once_without_wait_second_says_in_use(tiny_bert, tmp_path, env):
    db = tmp_path / "r.duckdb"
    duckdb.connect(str(db)).close()
    locker = hold_lock(tmp_path, db, 900)   # killed below; long enough for a loaded machine
    procs = [start(db, tiny_bert, env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    locker.kill()
    locker.wait()
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode == 2 and "database is in use by another process" in err and "Traceback" not in err
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == 0   # nothing half-written
    con.close()


# ----------------------------------------------------------------------------- failed encoder
def _broken_models(tiny_bert: Path, tmp_path: Path) -> dict[str, Path]:
    import json
    import shutil
    out = {}
    d = tmp_path / "config-only"
    d.mkdir()
    (d / "config.json").write_text('{"model_type": "bert"}')
    out["no weights"] = d
    d = tmp_path / "garbage-weights"
    shutil.copytree(tiny_bert, d)
    (d / "model.safetensors").write_bytes(os.urandom(4096))
    out["garbage weights"] = d
    d = tmp_path / "wrong-shapes"
    shutil.copytree(tiny_bert, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["hidden_size"] = 64
    (d / "config.json").write_text(json.dumps(cfg))
    out["weights of another shape"] = d
    return out


def test_a_model_that_cannot_load_fails_before_anything_is_written(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "r.duckdb"
    assert main(run_args(db, tiny_bert)) == 0
    before = snapshot(db)
    for why, folder in _broken_models(tiny_bert, tmp_path).items():
        rc = main(run_args(db, folder))
        assert rc != 0, why
        assert snapshot(db) == before, why


def test_a_model_that_cannot_load_is_reported_with_the_reason(tiny_bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    for why, folder in _broken_models(tiny_bert, tmp_path).items():
        rc = main(run_args(tmp_path / "r.duckdb", folder))
        err = capsys.readouterr().err
        assert rc == 2 and "could not load the model" in err and str(folder) in err, (why, err)
        assert not (tmp_path / "r.duckdb").exists()


def test_empty_file_left_by_a_kill_during_creation_is_replaced(tmp_path):
    """A process killed while DuckDB created the file can leave 0 bytes, which DuckDB refuses to open."""
    from eatlas import store
    from eatlas.registry import load_registry
    db = tmp_path / "new.duckdb"
    db.touch()
    now = dt.datetime(2026, 1, 1)
    run = {"run_id": "r1", "method": "weat", "model": "m", "model_fingerprint": "f", "seed": 0, "levels": ["word"],
           "tests": ["t"], "started_at": now, "finished_at": now}
    res = [{"run_id": "r1", "test_id": "t", "test_version": "1.0.0", "level": "word", "model": "m", "status": "ok",
            "effect_size": 0.1, "p_value": 0.5, "dropped": {}}]
    store.write_run(db, run, res, load_registry())
    assert snapshot(db)["runs"] == {"r1": [("t", "word", 0.1, 0.5)]}
    (tmp_path / "text.duckdb").write_text("not empty")       # anything else is never removed
    with pytest.raises(Exception, match="cannot open database"):
        store.write_run(tmp_path / "text.duckdb", run, res, load_registry())
    assert (tmp_path / "text.duckdb").read_text() == "not empty"
