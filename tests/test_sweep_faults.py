"""A sweep on Ray whose worker is killed mid-task (issue 14, bad input and faults).

The killed model is a transformers folder whose own Python code (config.json's auto_map, run because the
sweep trusts remote code) SIGKILLs the process importing it: on Ray that is the worker running the
model's task, exactly as the OOM killer or a pre-empted node would end it. No hook in shipped code."""
from __future__ import annotations

import json
import shutil
import uuid

import duckdb

from tests.static_models import write_static_model


def killer_model(folder, attempts):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "eatlaskiller", "auto_map": {
        "AutoConfig": "killer.KillerConfig", "AutoModel": "killer.KillerModel"}}), encoding="utf-8")
    (folder / "killer.py").write_text(
        "import os\nimport signal\n\n"
        f"with open({str(attempts)!r}, 'a') as f:\n    f.write(str(os.getpid()) + '\\n')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n", encoding="utf-8")
    return folder


def test_a_ray_worker_killed_mid_task_is_recorded_and_the_other_models_are_stored(tmp_path, ray_local):
    from transformers.utils import HF_MODULES_CACHE

    from eatlas.run.runner import RunConfig
    from eatlas.run.sweep import MAX_RETRIES, sweep

    models = [str(write_static_model(tmp_path / f"m{seed}.txt", seed)) for seed in (1, 2)]
    attempts = tmp_path / "attempts.txt"
    name = f"killer_{uuid.uuid4().hex[:8]}"
    killer = str(killer_model(tmp_path / name, attempts))
    db = tmp_path / "a.duckdb"
    said = []
    try:
        out = sweep([models[0], killer, models[1]], RunConfig(tests=["weat1"], levels=("word",), n_samples=200,
                                                              use_cache=False, trust_remote_code=True),
                    db=db, engine="ray", progress=said.append)
    finally:       # transformers copied the folder's code into its modules cache: take it out again
        shutil.rmtree(f"{HF_MODULES_CACHE}/transformers_modules/{name}", ignore_errors=True)
    assert sorted(out["done"]) == sorted(models) and [m for m, _ in out["failed"]] == [killer]
    # tried MAX_RETRIES + 1 times (each attempt killed its worker), never forever
    assert len(attempts.read_text().split()) == MAX_RETRIES + 1
    con = duckdb.connect(str(db), read_only=True)
    try:
        fail = con.execute("SELECT model, error, engine, sweep_id FROM sweep_failures").fetchall()
        runs = con.execute("SELECT run_id, model FROM runs").fetchall()
        orphans = con.execute("SELECT count(*) FROM results WHERE run_id NOT IN (SELECT run_id FROM runs)").fetchone()
        per_run = con.execute("SELECT run_id, count(*) FROM results GROUP BY run_id").fetchall()
    finally:
        con.close()
    assert len(fail) == 1 and fail[0][0] == killer and fail[0][2] == "ray" and fail[0][3] == out["sweep_id"]
    assert "worker running this model died mid-task" in fail[0][1] and "\n" not in fail[0][1]
    # the other models' runs are whole, the killed one left nothing
    assert sorted(m for _, m in runs) == sorted(models) and orphans == (0,)
    assert sorted(n for _, n in per_run) == [1, 1]
    assert any(f"{name}: FAILED: the Ray worker running this model died" in m for m in said)
