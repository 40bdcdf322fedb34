"""The one run of ``eatlas run`` and of ``eatlas.run``: its configuration from options named as the command line
names them, the run computed in memory, and its writing to the store (the method's files first, then the run in
one transaction, then the method's work after it). The CLI (eatlas.cli.run_cmds) and the library
(eatlas.api.run) both call these functions."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EatlasError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..encoders.base import Encoder
    from ..run.runner import Phase, RunConfig, RunOutcome

# RunConfig fields that are not options of their own (model, tests, levels and method are arguments; options:
# the method's own, by their names)
_NOT_OPTIONS = ("model", "tests", "levels", "method", "options")
# the command line's switches, as keyword arguments: --no-ci is ci=None, --no-cache is use_cache=False
SWITCHES = {"no_ci": ("ci", None), "no_cache": ("use_cache", False)}


def option_names(method_name: str | None = None) -> list[str]:
    """The keyword options of a run: RunConfig's (seed, n_samples, alpha, ci, ...), the switches (no_ci,
    no_cache) and every method's own (by their dests: convention, mleat_alpha, corpus, ...)."""
    from ..methods import all_methods
    from ..run.runner import RunConfig

    own = [o.dest for m in all_methods().values() for o in m.options
           if method_name is None or m.name == method_name]
    return [f.name for f in fields(RunConfig) if f.name not in _NOT_OPTIONS] + list(SWITCHES) + own


def make_config(*, model: str | None, tests: list[str] | str | None, levels: list[str] | tuple[str, ...] | str | None,
                method: str, options: dict[str, Any], inputs: str | None = None) -> RunConfig:
    """A RunConfig from keyword options named as the command line's (``n_samples`` for --n-samples, ``no_ci`` for
    --no-ci, a method's own by its dest, e.g. ``convention``); an unknown name is refused, naming it. Every
    method's own options start at their defaults, as the command line's parser sets them. ``inputs``: only the
    options of methods of this kind (a sweep: "matrices")."""
    from ..methods import all_methods
    from ..methods import get as get_method
    from ..run.runner import RunConfig

    m = get_method(method)
    if isinstance(tests, str):
        tests = [tests]
    if isinstance(levels, str):
        levels = [levels]
    base = {f.name for f in fields(RunConfig)} - set(_NOT_OPTIONS)
    own = {o.dest: o.default for mm in all_methods().values() for o in mm.options
           if inputs is None or mm.inputs == inputs}
    kw: dict[str, Any] = {}
    chosen = dict(own)
    unknown = [k for k in options if k not in base and k not in own and k not in SWITCHES]
    if unknown:
        from difflib import get_close_matches
        near = get_close_matches(unknown[0], option_names(), n=1)
        raise EatlasError(f"unknown option {unknown[0]!r}", field=unknown[0],
                          hint=(f"did you mean {near[0]}? " if near else "") + "options are named as eatlas run's, "
                          "with _ for - (n_samples for --n-samples); eatlas.api.option_names() lists them")
    for k, v in options.items():
        if k in base:
            kw[k] = v
        elif k in own:
            chosen[k] = v
    for k, (dest, value) in SWITCHES.items():       # a switch overrides the option it turns off
        if options.get(k):
            kw[dest] = value
    if options.get("no_ci") and "ci" not in m.stats:
        users = ", ".join(x.name for x in all_methods().values() if "ci" in x.stats)
        raise EatlasError(f"--no-ci applies to {users} runs, not {m.name}", field="--no-ci",
                          hint="leave the option out")
    return RunConfig(model=model, tests=list(tests) if tests else None,
                     levels=tuple(levels) if levels else None, method=method, options=chosen, **kw)


def check(cfg: RunConfig) -> tuple[str, ...]:
    """Refuse a configuration the method cannot run (one line, before anything is loaded); the levels it runs."""
    from ..methods import get as get_method
    from ..run.runner import check_config
    return check_config(cfg, get_method(cfg.method))


def before_saving(cfg: RunConfig, db: str | Path, registry: str | Path | None) -> None:
    """What must hold before a run is computed that will be written to ``db``: the file writable, the papers'
    models readable, the method's own checks (e.g. where CEAT writes its contexts)."""
    from ..encoders.identity import published_model_rows
    from ..methods import get as get_method
    from ..registry import load_registry
    from ..store import check_writable

    check_writable(db)          # before any work: a finished run is never lost at write time
    published_model_rows(load_registry(registry))     # the write reads the papers' models: a broken one now
    before = getattr(get_method(cfg.method), "before_run", None)
    if before:
        before(cfg, db=db, registry=registry)


def compute(cfg: RunConfig, *, registry: str | Path | None = None, encoder: Encoder | None = None,
            progress: Callable[[Phase], None] | None = None) -> RunOutcome:
    """The run in memory (nothing written): eatlas.run.runner.evaluate."""
    from ..run.runner import evaluate
    return evaluate(cfg, registry=registry, encoder=encoder, progress=progress)


def save(outcome: RunOutcome, cfg: RunConfig, db: str | Path, *, registry: str | Path | None = None,
         wait_s: float = 0.0) -> str | None:
    """Write a computed run to ``db`` as ``eatlas run`` does: the method's files (staged), the run and its rows
    in one transaction (a run the database does not take is kept in eatlas-unsaved/ beside it, and the staged
    files are removed again), then the method's work after it. Returns the method's line about that work."""
    from ..methods import get as get_method
    from ..registry import load_registry
    from ..run.unsaved import NotWritten, write_or_keep

    method = get_method(cfg.method)
    undo = method.stage(outcome, cfg, db=db, registry=registry)
    try:
        write_or_keep(db, outcome.run, outcome.results, load_registry(registry), wait_s=wait_s,
                      tables=outcome.tables)
    except BaseException as e:
        if undo and not (isinstance(e, NotWritten) and e.folder):
            undo()              # the run is not stored nor kept: neither are the files that belong with it
        raise
    return method.after_run(outcome, cfg, db=db, registry=registry)
