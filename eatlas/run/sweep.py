"""``eatlas sweep``: the registry over many models, one task per model, locally or on Ray (issue 14).

Each task loads one model, encodes and computes every test (``runner.evaluate``) and returns its run
record and result rows; it writes nothing. The driver alone writes the results file, one transaction per
model run as each task finishes, so the store stays single-writer and a crash keeps the models done.
A model that fails (cannot load, a worker dies) is recorded in ``sweep_failures`` with its error, and the
others go on. ``resume`` skips a model whose run with the same configuration (tests, levels, method,
seed, permutations, ...) is already stored, whether a sweep or ``eatlas run`` stored it.

The engines compute the same thing: the same seeds give the same rows with ``local`` and ``ray``. Ray
is used as it is (``ray.remote`` tasks, ``ray.wait``); an embedding cache stays per worker, keyed as in a
plain run.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..distributed.cluster import joined
from ..errors import EatlasError
from ..store.db import SWEEP_FAILURES as FAILURES
from ..store.db import check_schema, connect, init_schema, rollback, write_run
from .runner import DEFAULT_LEVELS, RunConfig, default_tests, evaluate

ENGINES = ("local", "ray")
# A Ray task whose worker dies (killed, out of memory, node lost) is tried once more, then recorded as failed;
# an exception raised by the model's own code is not retried (it would fail again).
MAX_RETRIES = 1
# The settings that make two runs of one model the same computation (runs.settings holds them all).
CONFIG_FIELDS = ("method", "seed", "n_samples", "alpha", "parametric", "pooling", "layer", "subword",
                 "min_coverage", "options")        # options: the method's own (eatlas.methods), e.g. mleat_p


def read_models_file(path: str | Path) -> list[str]:
    """One model a line; blank lines and lines starting with # are skipped."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EatlasError("no such file", file=str(p), field="--models-file") from None
    except UnicodeDecodeError as e:
        raise EatlasError(f"not valid UTF-8 (byte {e.start})", file=str(p), field="--models-file") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def config_key(model: str, tests: list[str], levels: list[str], settings: dict) -> str:
    """What identifies a (model, configuration): the model as named, the tests and levels, CONFIG_FIELDS."""
    return json.dumps({"model": model, "tests": list(tests), "levels": list(levels),
                       **{k: settings.get(k) for k in CONFIG_FIELDS}}, sort_keys=True, default=str)


def stored_keys(db: str | Path) -> set[str]:
    """The configuration keys of the runs already in ``db`` (none when it does not exist yet)."""
    if not Path(db).exists():
        return set()
    con = connect(db, read_only=True)
    try:
        if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'"
                           ).fetchall()[0][0]:
            return set()
        out = set()
        for tests, levels, settings in con.execute("SELECT tests, levels, settings FROM runs").fetchall():
            s = json.loads(settings) if isinstance(settings, str) else (settings or {})
            if s.get("model") is not None:
                out.add(config_key(s["model"], tests or [], levels or [], s))
        return out
    finally:
        con.close()


def _task(model: str, cfg: dict, registry: str | None) -> dict:
    """One model's run, computed and returned (never written): the worker side of the sweep."""
    started = time.monotonic()
    try:
        outcome = evaluate(RunConfig(**{**cfg, "model": model}), registry=registry)
    except EatlasError as e:
        return {"model": model, "ok": False, "error": e.render(), "seconds": time.monotonic() - started}
    except Exception as e:            # a model's own code failing: recorded, the sweep goes on
        last = traceback.extract_tb(e.__traceback__)[-1:]
        where = f" (at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        return {"model": model, "ok": False, "error": f"{type(e).__name__}: {e}{where}".splitlines()[0],
                "seconds": time.monotonic() - started}
    return {"model": model, "ok": True, "run": outcome.run, "results": outcome.results, "tables": outcome.tables,
            "skipped": outcome.skipped, "seconds": time.monotonic() - started}


def _run_ray(models: list[str], cfg: dict, registry, address: str | None, on_done: Callable[[dict], None]) -> None:
    with joined(address) as ray:
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_task)
        pending = {task.remote(m, cfg, registry): m for m in models}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            model = pending.pop(done[0])
            try:
                out = ray.get(done[0])
            except Exception as e:  # the worker died (OOM, killed), the task cannot be retried
                out = {"model": model, "ok": False, "seconds": None, "error": _ray_failure(ray, e)}
            on_done(out)


def _ray_failure(ray, e: Exception) -> str:
    """One line saying why a model's Ray task returned nothing."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    died = tuple(getattr(ray.exceptions, n) for n in ("WorkerCrashedError", "OutOfMemoryError", "NodeDiedError",
                                                       "ActorDiedError") if hasattr(ray.exceptions, n))
    if isinstance(e, died):
        return (f"the Ray worker running this model died mid-task (killed, out of memory or crashed), "
                f"{MAX_RETRIES + 1} attempt(s): {type(e).__name__}: {first}")
    return f"Ray task failed: {type(e).__name__}: {first}"


def sweep(models: list[str], cfg: RunConfig, *, db: str | Path, engine: str = "local",
          ray_address: str | None = None, resume: bool = False, registry: str | Path | None = None,
          progress: Callable[[str], None] | None = None, wait_s: float = 0.0) -> dict:
    """Run ``cfg`` over ``models``; returns {"done": [...], "failed": [(model, error)], "skipped": [...]}."""
    from ..registry.base import load_registry

    if engine not in ENGINES:
        raise EatlasError(f"unknown engine {engine!r}", field="--engine", hint=" or ".join(ENGINES))
    models = list(dict.fromkeys(models))
    if not models:
        raise EatlasError("no models to sweep", field="--models", hint="name them with --models or --models-file")
    check_schema(db)            # a store that drifted is refused, with its repair, before the first model
    reg = load_registry(registry)
    tests = list(dict.fromkeys(reg.get_test_spec(t).id for t in cfg.tests)) if cfg.tests else \
        default_tests(reg, cfg.language)
    levels = list(dict.fromkeys(cfg.levels or DEFAULT_LEVELS))
    cfg = dataclasses.replace(cfg, tests=tests, levels=tuple(levels))
    fields = dataclasses.asdict(cfg)
    keys = {m: config_key(m, tests, levels, fields) for m in models}
    say = progress or (lambda _msg: None)
    skipped = []
    if resume:
        have = stored_keys(db)
        skipped = [m for m in models if keys[m] in have]
        for m in skipped:
            say(f"{m}: skipped, already stored with this configuration")
    todo = [m for m in models if m not in skipped]
    sweep_id = str(uuid.uuid4())
    done, failed = [], []
    total = len(todo)

    def on_done(out: dict) -> None:
        m = out["model"]
        n = len(done) + len(failed) + 1
        secs = f" in {out['seconds']:.1f} s" if out.get("seconds") is not None else ""
        if out["ok"]:
            run = out["run"]
            run["settings"] = {**run["settings"], "sweep": {"id": sweep_id, "engine": engine}}
            write_run(db, run, out["results"], reg, wait_s=wait_s, extra_tables=out["tables"])
            done.append(m)
            ok = sum(r["status"] == "ok" for r in out["results"])
            say(f"[{n}/{total}] {m}: {ok} test result(s){secs}, run {run['run_id']}")
        else:
            _record_failure(db, sweep_id, m, keys[m], out["error"], engine, fields, wait_s=wait_s)
            failed.append((m, out["error"]))
            say(f"[{n}/{total}] {m}: FAILED{secs}: {out['error']}")

    if todo:
        reg_arg = str(registry) if registry else None
        if engine == "ray":
            _run_ray(todo, fields, reg_arg, ray_address, on_done)
        else:
            for m in todo:
                on_done(_task(m, fields, reg_arg))
    return {"sweep_id": sweep_id, "done": done, "failed": failed, "skipped": skipped}


def _record_failure(db, sweep_id: str, model: str, key: str, error: str, engine: str, fields: dict, *,
                    wait_s: float) -> None:
    con = connect(db, wait_s=wait_s)
    try:
        con.execute("BEGIN TRANSACTION")
        init_schema(con)
        con.execute(FAILURES)
        row = pd.DataFrame([{"sweep_id": sweep_id, "model": model, "config_key": key, "error": error,
                             "failed_at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None), "engine": engine,
                             "settings": json.dumps(fields, sort_keys=True, default=str)}])
        con.register("_fail", row)
        con.execute("INSERT INTO sweep_failures BY NAME SELECT * FROM _fail")
        con.unregister("_fail")
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    finally:
        con.close()
