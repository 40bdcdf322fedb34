"""What makes two runs the same computation: the key ``eatlas sweep --resume`` skips a model by.

A run is computed again unless one with the same key is stored. The key is built by one function,
:func:`resume_key`, from a run record (``runs`` row), whichever command wrote it (``eatlas run`` or a
sweep), and from the record a planned run would get (:func:`planned_record`), so the two always agree:

* the model's weights: ``model_fingerprint`` (a vector file rewritten with other vectors is another model),
  and the pooling, layer and subword the encoder resolved (a loader entry's defaults included);
* the method, the tests run and the levels;
* what the tests read: every test, set and template with its version and content hash (``registry.inputs``,
  table ``run_inputs``), so a test bumped from 1.0.0 to 1.0.2, or edited without a bump, is run again;
* every field of :class:`~eatlas.run.runner.RunConfig`, generically (a field added later counts without
  being named here; a run stored before it existed matches no planned run, so it is run again), except
  those that change nothing computed (:data:`NOT_IN_KEY`), and the method's own options, each at its
  declared default when a run did not record it (``eatlas run`` records every method's options, a sweep
  only its method's: the same settings give the same key).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

# RunConfig fields that do not change what is computed, or that the key holds in resolved form: the model
# as named (its fingerprint is in the key), the tests and levels as asked (the resolved ones are), the
# language of the default tests (the tests are), the batch size and the embedding cache (same vectors),
# whether the model's own code may run, pooling/layer/subword as asked (the resolved ones are in the key),
# whether a hub model may be downloaded (its commit and weights are in the fingerprint).
NOT_IN_KEY = ("model", "tests", "levels", "language", "batch_size", "use_cache", "trust_remote_code", "pooling",
              "layer", "subword", "options", "offline")


ABSENT = "<not recorded>"


def _options(method_name: str, options: dict | None) -> dict:
    """The method's own options, each recorded value or its declared default (other methods' are dropped)."""
    from .. import methods

    options = options or {}
    try:
        declared = methods.get(method_name).options
    except Exception:           # a method this EATlas does not have: its options as recorded
        return dict(options)
    return {o.dest: options.get(o.dest, o.default) for o in declared}


def resume_key(run: dict) -> str:
    """The key of a run record (a ``runs`` row as stored, or :func:`planned_record`'s), a sha256 hex digest."""
    from .runner import RunConfig

    settings = run.get("settings") or {}
    if isinstance(settings, str):
        settings = json.loads(settings)
    registry = run.get("registry") or {}
    if isinstance(registry, str):
        registry = json.loads(registry)
    inputs = sorted((str(i.get("kind")), str(i.get("id")), str(i.get("version")), str(i.get("sha256")))
                    for i in registry.get("inputs") or [])
    # a field the record lacks (a run stored before the field existed) matches no planned run: run again
    fields = {f.name: settings.get(f.name, ABSENT) for f in dataclasses.fields(RunConfig) if f.name not in NOT_IN_KEY}
    method = run.get("method") or settings.get("method")
    doc = {"method": method, "fingerprint": run.get("model_fingerprint"), "pooling": run.get("pooling"),
           "layer": None if run.get("layer") is None else str(run.get("layer")), "subword": run.get("subword"),
           "tests": sorted(run.get("tests") or []), "levels": sorted(run.get("levels") or []), "inputs": inputs,
           "config": fields, "options": _options(method, settings.get("options"))}
    text = json.dumps(doc, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def planned_record(cfg, encoder, reg, test_ids: list[str], levels: list[str]) -> dict:
    """The parts of the run record ``cfg`` would get on ``encoder`` (eatlas.run.runner.run_record), enough for
    :func:`resume_key`, computed without encoding anything."""
    from ..registry.provenance import run_inputs

    s = encoder.settings()
    return {"method": cfg.method, "model_fingerprint": s["fingerprint"], "pooling": s["pooling"],
            "layer": s["layer"], "subword": s["subword"], "tests": list(test_ids), "levels": list(levels),
            "registry": {"inputs": run_inputs(reg, list(test_ids))}, "settings": dataclasses.asdict(cfg)}


def stored_keys(db, *, wait_s: float = 0.0) -> set[str]:
    """The keys of the runs stored in ``db`` (none when it does not exist or holds no run yet); a database in
    use is waited for ``wait_s`` seconds."""
    from pathlib import Path

    from ..store.db import connect

    if not Path(db).exists() or Path(db).stat().st_size == 0:
        return set()
    con = connect(db, read_only=True, wait_s=wait_s)
    try:
        if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'"
                           ).fetchall()[0][0]:
            return set()
        rows = con.execute("SELECT method, model_fingerprint, pooling, layer, subword, tests, levels, registry, "
                           "settings FROM runs").fetchall()
    finally:
        con.close()
    names = ("method", "model_fingerprint", "pooling", "layer", "subword", "tests", "levels", "registry", "settings")
    return {resume_key(dict(zip(names, r))) for r in rows}
