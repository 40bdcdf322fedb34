"""``eatlas sweep``: the registry over many models, one task per model, locally or on Ray.

Each task loads one model, encodes and computes every test (``runner.evaluate``) and returns its run
record and result rows; it writes nothing. The driver alone writes the results file, one transaction per
model run as each task finishes, so the store stays single-writer and a crash keeps the models done.

Nothing computed is lost:

* the database is checked before the first model (``check_writable``: a truncated, foreign or read-only
  file is refused before any work, as ``eatlas run`` refuses it);
* a database another process holds (a reader such as ``eatlas sql`` too) is waited for, ``wait_s``
  seconds (``--wait``, 60 by default), saying so; once a wait ran out, the next models do not wait again
  until a write succeeds;
* a model's run that still cannot be written (in use, disk full, a schema that drifted) is kept as an
  export folder ``eatlas-unsaved/<run id>/`` beside the database (eatlas.run.unsaved), recorded as a
  failure that names it, and the sweep goes on with the next model;
* every failure is recorded in ``sweep_failures``; failures the database cannot take either are tried
  again after each model, and those still unwritten at the end are kept in ``eatlas-unsaved/sweep-<id>/``.

``resume`` skips a model whose run with the same key (eatlas.run.resume: model fingerprint, method, tests
with their versions and content hashes, levels and every option) is stored, whether a sweep or ``eatlas
run`` stored it. A sweep takes every option ``eatlas run`` takes (the statistics, the encoding choices,
the method's own options), so it can repeat any run's settings.

The engines compute the same thing: the same seeds give the same rows with ``local`` and ``ray``. Ray
is used as it is (``ray.remote`` tasks, ``ray.wait``); an embedding cache stays per worker, keyed as in a
plain run.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..distributed.cluster import joined
from ..errors import EatlasError
from ..methods import rows_checked_at_write
from ..store.db import SWEEP_FAILURES as FAILURES
from ..store.db import check_writable, connect, init_schema, rollback, write_run
from .runner import RunConfig, RunOutcome, check_config, evaluate, refuse_invalid
from .unsaved import NotWritten, import_command, keep, kept

ENGINES = ("local", "ray")
# A Ray task whose worker dies (killed, out of memory, node lost) is tried once more, then recorded as failed;
# an exception raised by the model's own code is not retried (it would fail again).
MAX_RETRIES = 1


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
    """A failed model's configuration as recorded in ``sweep_failures.config_key`` (with sweep_id and model, a
    failure's identity on import): the model as named, the tests and levels, every option (the method's own
    at their defaults where not given). A model that failed has no fingerprint; :mod:`eatlas.run.resume`
    keys the runs that were stored."""
    from .resume import NOT_IN_KEY, _options

    cfg = {k: v for k, v in settings.items() if k not in NOT_IN_KEY}
    return json.dumps({"model": model, "tests": list(tests), "levels": list(levels), **cfg,
                       "pooling": settings.get("pooling"), "layer": settings.get("layer"),
                       "subword": settings.get("subword"),
                       "options": _options(settings.get("method"), settings.get("options"))},
                      sort_keys=True, default=str)


def _plan(cfg: RunConfig, registry) -> tuple[list[str], list[str]]:
    """The tests and levels a run of ``cfg`` runs (as ``evaluate`` resolves them)."""
    from .. import methods
    from ..registry.base import load_registry
    from .runner import _test_ids

    reg = load_registry(registry)
    method = methods.get(cfg.method)
    levels = list(check_config(cfg, method))
    return _test_ids(reg, cfg, method, levels)[0], levels


def _task(model: str, cfg: dict, registry: str | None, have: set[str] | None = None, details: bool = False) -> dict:
    """One model's run, computed and returned (never written): the worker side of the sweep. ``have``: the keys
    of the stored runs (resume), checked as soon as the model's fingerprint is known, before any encoding."""
    from ..registry.base import load_registry
    from .resume import planned_record, resume_key
    from .runner import _load

    started = time.monotonic()
    try:
        config = RunConfig(**{**cfg, "model": model})
        encoder = None
        if have is not None:
            tests, levels = _plan(config, registry)
            encoder = _load(config, None)
            key = resume_key(planned_record(config, encoder, load_registry(registry), tests, levels))
            if key in have:
                return {"model": model, "ok": True, "skipped": True, "seconds": time.monotonic() - started}
        outcome = evaluate(config, registry=registry, encoder=encoder)
    except EatlasError as e:
        return {"model": model, "ok": False, "error": e.render(), "seconds": time.monotonic() - started}
    except Exception as e:            # a model's own code failing: recorded, the sweep goes on
        last = traceback.extract_tb(e.__traceback__)[-1:]
        where = f" (at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        return {"model": model, "ok": False, "error": f"{type(e).__name__}: {e}{where}".splitlines()[0],
                "seconds": time.monotonic() - started}
    return {"model": model, "ok": True, "run": outcome.run, "results": outcome.results, "tables": outcome.tables,
            "skipped_tests": outcome.skipped, "details": outcome.details if details else {},
            "seconds": time.monotonic() - started}


def _run_ray(models: list[str], cfg: dict, registry, address: str | None, on_done: Callable[[dict], None],
             have: set[str] | None, details: bool) -> None:
    with joined(address) as ray:
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_task)
        pending = {task.remote(m, cfg, registry, have, details): m for m in models}
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


def _names_one_output(o) -> bool:
    """A method option whose value is a free string with no default, a path (e.g. ML-EAT's --maps FOLDER)."""
    kw = o.kwargs
    return o.default is None and not any(k in kw for k in ("type", "choices", "action", "nargs"))


def _in_use(e: EatlasError) -> bool:
    return "in use by another process" in e.message


class _Writer:
    """The driver's writes into the database, waiting for a database in use (``wait_s``) and saying so. Once a
    wait ran out, the following writes do not wait again until one succeeds (a reader holding the database
    for the whole sweep costs one wait, not one per model)."""

    def __init__(self, db: Path, wait_s: float, say: Callable[[str], None]):
        self.db, self.wait_s, self.say, self.blocked = db, wait_s, say, False

    def __call__(self, write: Callable[[float], object]):
        try:
            out = write(0.0)
        except EatlasError as e:
            if not _in_use(e) or self.blocked or self.wait_s <= 0:
                self.blocked = self.blocked or _in_use(e)
                raise
            pid = re.search(r"\(PID \d+\)", e.message)
            self.say(f"{self.db}: in use by another process{' ' + pid[0] if pid else ''}; waiting up to "
                     f"{self.wait_s:g} s for it (--wait)")
            started = time.monotonic()
            try:
                out = write(self.wait_s)
            except EatlasError as e2:
                self.blocked = self.blocked or _in_use(e2)
                raise
            self.say(f"{self.db}: free again after {time.monotonic() - started:.0f} s")
        self.blocked = False
        return out


def sweep(models: list[str], cfg: RunConfig, *, db: str | Path, engine: str = "local",
          ray_address: str | None = None, resume: bool = False, registry: str | Path | None = None,
          progress: Callable[[str], None] | None = None, wait_s: float = 0.0) -> dict:
    """Run ``cfg`` over ``models``. Returns {"sweep_id", "done": [...], "failed": [(model, error)] (not computed),
    "unwritten": [(model, error)] (computed, not written), "skipped": [...], "kept": [each folder of
    eatlas-unsaved/ written: a run, or the failures the database could not take]}."""
    from .. import methods
    from ..methods.base import Method
    from ..registry.base import load_registry

    if engine not in ENGINES:
        raise EatlasError(f"unknown engine {engine!r}", field="--engine", hint=" or ".join(ENGINES))
    models = list(dict.fromkeys(models))
    if not models:
        raise EatlasError("no models to sweep", field="--models", hint="name them with --models or --models-file")
    db = Path(db)
    reg = load_registry(registry)
    method = methods.get(cfg.method)
    if method.inputs != "matrices":
        raise EatlasError(f"a sweep runs the methods over a test's four matrices, not {method.name}",
                          field="--method", hint=f"run {method.name} with 'eatlas run --method {method.name}'")
    tests, levels = _plan(cfg, registry)          # bad options and tests: one line, before any work
    refuse_invalid(reg, tests)
    if len(models) > 1:
        for o in method.options:
            if _names_one_output(o) and cfg.options.get(o.dest):
                raise EatlasError(f"{o.flag} names one output, and a sweep of {len(models)} models would write "
                                  "each model's over the last one's", field=o.flag,
                                  hint="leave it out: each model's files go beside the database, by run id")
    check_writable(db)      # before any work: a truncated, foreign or drifted file is refused now, as by run
    if getattr(method, "before_run", None):
        method.before_run(cfg, db=db, registry=registry)
    say = progress or (lambda _msg: None)
    writer = _Writer(db, wait_s, say)
    fields = dataclasses.asdict(cfg)
    have = writer(lambda w: _stored_keys(db, w)) if resume else None
    sweep_id = str(uuid.uuid4())
    done, failed, skipped, kept_folders, pending = [], [], [], [], []
    unwritten = []          # models computed but not written (kept in eatlas-unsaved/, or lost if that failed too)
    told = []
    total = len(models)
    after = type(method).after_run is not Method.after_run

    def record(model: str, error: str, *, computed: bool = False) -> None:
        (unwritten if computed else failed).append((model, error))
        pending.append({"sweep_id": sweep_id, "model": model, "config_key": config_key(model, tests, levels, fields),
                        "error": error, "failed_at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
                        "engine": engine, "settings": json.dumps(fields, sort_keys=True, default=str)})

    def flush() -> None:
        """Write the failures not written yet (they wait in memory while the database cannot take them)."""
        if not pending:
            return
        try:
            writer(lambda w: _write_failures(db, pending, w))
        except EatlasError as e:
            if not told:
                told.append(e)
                say(f"failures not recorded yet ({e.message}): tried again after each model")
            return
        pending.clear()

    def on_done(out: dict) -> None:
        m = out["model"]
        if out.get("skipped"):
            skipped.append(m)
            say(f"{m}: skipped, already stored with this configuration")
            return
        n = len(done) + len(failed) + len(unwritten) + len(skipped) + 1
        secs = f" in {out['seconds']:.1f} s" if out.get("seconds") is not None else ""
        if not out["ok"]:
            record(m, out["error"])
            say(f"[{n}/{total}] {m}: FAILED{secs}: {out['error']}")
            flush()
            return
        run = out["run"]
        run["settings"] = {**run["settings"], "sweep": {"id": sweep_id, "engine": engine}}
        outcome = RunOutcome(run=run, results=out["results"], tables=out["tables"], details=out.get("details") or {})
        undo = method.stage(outcome, cfg, db=db, registry=registry)
        try:
            writer(lambda w: write_run(db, run, outcome.results, reg, wait_s=w, extra_tables=outcome.tables,
                                       check=rows_checked_at_write(run.get("method"))))
        except EatlasError as e:
            lost = kept(e, db, run, outcome.results, reg, tables=outcome.tables)
            if undo and lost.folder is None:
                undo()
            if lost.folder:
                kept_folders.append(lost.folder)
            record(m, lost.render(), computed=True)
            say(f"[{n}/{total}] {m}: NOT WRITTEN{secs}: {lost.render()}")
            flush()
            return
        except BaseException:
            if undo:
                undo()
            raise
        done.append(m)
        ok = sum(r["status"] == "ok" for r in outcome.results)
        say(f"[{n}/{total}] {m}: {ok} test result(s){secs}, run {run['run_id']}")
        if after:
            line = method.after_run(outcome, cfg, db=db, registry=registry)
            if line:
                say(f"{m}: {line}")
        flush()
        if run["settings"].get("interrupted"):      # Ctrl-C inside this model's tests: the sweep stops here
            say(f"interrupted (Ctrl-C) in {m}: {len(done)} model(s) stored, {m} with its finished tests only; "
                f"resume with the same command and --resume ({m} runs again in full)")
            raise KeyboardInterrupt

    reg_arg = str(registry) if registry else None
    if engine == "ray":
        _run_ray(models, fields, reg_arg, ray_address, on_done, have, after)
    else:
        for m in models:
            on_done(_task(m, fields, reg_arg, have, after))
    flush()
    if pending:
        try:
            folder = keep(db, reg, f"sweep-{sweep_id}", failures=list(pending))
        except EatlasError as e:
            say(f"{len(pending)} failure(s) could be neither recorded nor kept: {e.render()}")
        else:
            kept_folders.append(folder)
            say(f"{len(pending)} failure(s) could not be recorded in {db}; they are kept in {folder} "
                f"({import_command(folder, db)})")
    return {"sweep_id": sweep_id, "done": done, "failed": failed, "skipped": skipped, "unwritten": unwritten,
            "kept": kept_folders}


def _stored_keys(db: Path, wait_s: float) -> set[str]:
    from .resume import stored_keys
    return stored_keys(db, wait_s=wait_s)


def _write_failures(db, rows: list[dict], wait_s: float) -> None:
    con = connect(db, wait_s=wait_s)
    try:
        con.execute("BEGIN TRANSACTION")
        init_schema(con)
        con.execute(FAILURES)
        con.register("_fail", pd.DataFrame(rows))
        con.execute("INSERT INTO sweep_failures BY NAME SELECT * FROM _fail")
        con.unregister("_fail")
        con.execute("COMMIT")
    except BaseException as e:
        rollback(con)
        if isinstance(e, EatlasError):
            raise
        if isinstance(e, Exception):
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise EatlasError(f"the failures could not be written: {first}", file=str(db)) from None
        raise
    finally:
        con.close()


__all__ = ["ENGINES", "MAX_RETRIES", "NotWritten", "config_key", "read_models_file", "sweep"]
