"""Running: ``eatlas run`` (one model, with progress bars and the results table) and ``eatlas sweep`` (many
models, here or on Ray)."""
from __future__ import annotations

from pathlib import Path

from ..console import esc
from ..errors import EatlasError
from ..progress import bars as _progress  # noqa: F401 - the CLI's names of them
from ..progress import phases as _phases
from .common import _console


def _trusted(args) -> bool:
    """--trust-remote-code MODEL holds only for the model it names (a hub id: with or without its @REVISION)."""
    if not args.trust_remote_code:
        return False
    named, model = args.trust_remote_code, args.model or ""
    hub_id = model.rpartition("@")[0] if "@" in model and not Path(model).exists() else None
    if named != model and named != hub_id and not (Path(named).exists() and Path(model).exists()
                                                   and Path(named).resolve() == Path(model).resolve()):
        raise EatlasError(f"--trust-remote-code names {named!r}, but the model is {model or 'the default model'!r}",
                          field="--trust-remote-code", hint="name the same model as --model, or leave the flag out")
    return True


def run_config(args, inputs: str | None = None):
    """The RunConfig of ``eatlas run`` or (per model) ``eatlas sweep``, from the options they share (eatlas.cli.main,
    ``_run_options``), so that a sweep repeats a run's settings. ``inputs``: the kind of method whose options the
    parser declared (a sweep: "matrices"; its own --engine is not CEAT's)."""
    from .. import methods
    from ..api.core import make_config

    options = {o.dest: getattr(args, o.dest) for m in methods.all_methods().values() for o in m.options
               if hasattr(args, o.dest) and (inputs is None or m.inputs == inputs)}
    options.update(seed=args.seed, n_samples=args.n_samples, alpha=args.alpha, parametric=args.parametric,
                   pooling=args.pooling, layer=args.layer, subword=args.subword, min_coverage=args.min_coverage,
                   batch_size=args.batch_size, offline=args.offline, no_cache=args.no_cache, language=args.language,
                   family=getattr(args, "family", None), ci=args.ci, no_ci=args.no_ci, n_boot=args.n_boot,
                   alternative=args.alternative, ci_method=args.ci_method, p_rule=getattr(args, "p_rule", "concepts"),
                   encoding=getattr(args, "encoding", None) or "standard",
                   trust_remote_code=_trusted(args) if hasattr(args, "trust_remote_code") else False)
    return make_config(model=getattr(args, "model", None), tests=args.tests or None, levels=args.levels or None,
                       method=args.method, options=options, inputs=inputs)


def cmd_run(args) -> int:
    from .. import methods
    from ..api import core
    from ..store import default_db

    method = methods.get(args.method)
    cfg = run_config(args)
    out, err = _console()
    core.check(cfg)                     # bad options: one line, before anything is loaded or written
    db = Path(args.db) if args.db else default_db()
    core.before_saving(cfg, db, args.registry)
    with _progress(err, args.quiet) as prog:
        outcome = core.compute(cfg, registry=args.registry,
                               progress=_phases(prog, cfg.model, getattr(method, "progress_lines", False)))
    after = core.save(outcome, cfg, db, registry=args.registry, wait_s=args.wait)
    for note in outcome.notes:          # e.g. which default model ran, and why (one line each)
        out.print(esc(note), highlight=False, soft_wrap=True)
    if not args.quiet:
        from .run_summary import results_table
        out.print(method.summary(outcome) or results_table(outcome, cfg, method, out))
        if method.effect_size and any(r["status"] == "ok" for r in outcome.results):
            from ..legend import meanings
            for line in meanings(cfg.ci_method if cfg.ci is not None else None, alternative=None):
                out.print(f"[dim]{esc(line)}[/dim]")        # prose: wrapped at the terminal's width
        if outcome.left_out:
            out.print(f"[dim]{len(outcome.left_out)} test(s) of the catalog left out, which {esc(method.name)} does "
                      "not run, e.g. " + esc(outcome.left_out[0][1]) + "[/dim]")
        if outcome.skipped:
            out.print(f"[dim]{len(outcome.skipped)} test/level pair(s) not applicable, e.g. "
                      + esc(f"{outcome.skipped[0][0]} [{outcome.skipped[0][1]}]: {outcome.skipped[0][2]}") + "[/dim]")
    from .run_summary import language_line
    line = language_line(outcome)
    if line:
        err.print(esc(line), highlight=False, soft_wrap=True)
    own = ", ".join(t.name for t in method.tables if t.name in outcome.tables)
    out.print(f"run {outcome.run['run_id']} written to {esc(db)}: " + (
        f"{len(outcome.results)} result(s)" + (f"; {method.name} in table(s) {own}" if own else "")
        if method.inputs == "matrices" else f"tables {', '.join(sorted(outcome.tables))}"), highlight=False)
    if after:
        out.print(esc(after), highlight=False)
    if method.inputs == "matrices" and method.effect_size and not args.quiet:
        from ..store import reproduction_counts
        from .run_summary import pairing_line
        try:
            from ..registry import load_registry
            reg = load_registry(getattr(args, "registry", None))
            languages = {reg.tests[r["test_id"]].language for r in outcome.results if r.get("test_id") in reg.tests}
        except Exception:           # the hint is only a hint: without the registry, it is given
            languages = None
        out.print(esc(pairing_line(reproduction_counts(db, outcome.run["run_id"]), outcome.run["model"],
                                   {r.get("convention") for r in outcome.results}, languages)),
                  highlight=False, soft_wrap=True)
    if (outcome.run.get("settings") or {}).get("interrupted"):
        return 130          # Ctrl-C: what finished is stored (said above), the command did not complete
    return 0



def cmd_sweep(args) -> int:
    from ..run.sweep import read_models_file, sweep
    from ..run.unsaved import import_command
    from ..store import default_db

    out, err = _console()
    db = Path(args.db) if getattr(args, "db", None) else default_db()
    models = list(args.models or []) + (read_models_file(args.models_file) if args.models_file else [])
    cfg = run_config(args, inputs="matrices")
    r = sweep(models, cfg, db=db, engine=args.engine, ray_address=args.ray_address, resume=args.resume,
              registry=getattr(args, "registry", None), wait_s=args.wait,
              progress=None if args.quiet else (lambda msg: err.print(msg, highlight=False, markup=False,
                                                                    soft_wrap=True)))
    out.print(esc(f"sweep {r['sweep_id']}: {len(r['done'])} model(s) run, {len(r['failed'])} failed, "
                  + (f"{len(r['unwritten'])} computed but not written, " if r["unwritten"] else "")
                  + f"{len(r['skipped'])} skipped (already stored); results in {db}")
              + (" (failures: SELECT * FROM sweep_failures)" if r["failed"] or r["unwritten"] else ""),
              highlight=False, soft_wrap=True)
    for folder in r["kept"]:
        out.print(esc(f"kept in {folder}, not in {db}: import it with {import_command(folder, db)}"),
                  highlight=False, soft_wrap=True)
    return 1 if r["failed"] or r["unwritten"] or r["kept"] else 0
