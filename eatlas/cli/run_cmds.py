"""Running: ``eatlas run`` (one model, with progress bars and the results table) and ``eatlas sweep`` (many
models, here or on Ray)."""
from __future__ import annotations

from pathlib import Path

from ..console import esc
from ..errors import EatlasError
from .common import _console


def _progress(err, quiet: bool):
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True, disable=quiet)


def _phases(prog, model, lines: bool = False):
    """A runner progress callback: one bar per phase (loading, expanding, encoding N texts, testing M tests, a
    method's own, e.g. generating N responses). Where the console is no terminal (a pipe, a log file) no bar is
    drawn; with ``lines`` (a method that says ``progress_lines``) each phase prints plain lines instead, its start
    and every tenth of the way."""
    import time

    tasks = {}
    plain = lines and not prog.disable and not prog.console.is_terminal
    said: dict[str, tuple[int, float]] = {}          # phase -> (tenths printed, start time)

    def tick(ev):
        if ev.name == "loading":
            desc = f"loading {model or 'the default model'}"
        elif ev.name == "encoding":
            desc = f"encoding {ev.total} texts and spans" + (f" ({ev.cached} from the cache)" if ev.cached else "")
        elif ev.unit:
            desc = f"{ev.name} {ev.total} {ev.unit}" + (f": {ev.item}" if ev.item else "")
        else:
            desc = f"{ev.name} {ev.total} {'test/level pairs' if ev.name == 'expanding' else 'tests'}" + \
                (f": {ev.item}" if ev.item else "")
        if plain:
            _plain_line(prog.console, ev, desc, said, time.monotonic())
            return
        if ev.name not in tasks:
            for t in tasks.values():            # the previous phase is over
                prog.update(t, visible=False)
            tasks[ev.name] = prog.add_task(esc(desc), total=ev.total)
        prog.update(tasks[ev.name], description=esc(desc), completed=ev.done, total=ev.total)
    return tick


def _plain_line(console, ev, desc: str, said: dict, now: float) -> None:
    """A phase's progress as plain lines: its first report, then each tenth done, or what is done every
    PLAIN_EVERY seconds when a tenth takes longer (and the last), with the time so far and, while work remains,
    the time left at the rate so far."""
    tenths = 10 * ev.done // ev.total if ev.total else 0
    if ev.name not in said:
        said[ev.name] = (tenths, now, now, ev.done)
        console.print(esc(desc) + (f": {ev.done}/{ev.total}" if ev.total else " ..."), highlight=False,
                      soft_wrap=True)
        return
    last, start, printed, done0 = said[ev.name]
    if ev.total and (tenths > last or (now - printed >= PLAIN_EVERY and ev.done > done0)):
        said[ev.name] = (tenths, start, now, ev.done)
        left = ""
        if 0 < ev.done < ev.total:
            left = f", about {(now - start) * (ev.total - ev.done) / ev.done:.0f} s left"
        console.print(esc(desc) + f": {ev.done}/{ev.total} ({now - start:.0f} s{left})", highlight=False,
                      soft_wrap=True)


PLAIN_EVERY = 10.0      # seconds: a pipe or a log hears from a long phase at least this often while it advances


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
    from ..run.runner import RunConfig

    method = methods.get(args.method)
    options = {o.dest: getattr(args, o.dest) for m in methods.all_methods().values() for o in m.options
               if hasattr(args, o.dest) and (inputs is None or m.inputs == inputs)}
    cfg = RunConfig(model=getattr(args, "model", None), tests=args.tests or None,
                    levels=tuple(args.levels) if args.levels else None, seed=args.seed, n_samples=args.n_samples,
                    alpha=args.alpha, parametric=args.parametric, pooling=args.pooling, layer=args.layer,
                    subword=args.subword, min_coverage=args.min_coverage, batch_size=args.batch_size,
                    trust_remote_code=_trusted(args) if hasattr(args, "trust_remote_code") else False,
                    offline=args.offline,
                    use_cache=not args.no_cache, method=args.method, language=args.language,
                    family=getattr(args, "family", None), ci=None if args.no_ci else args.ci, n_boot=args.n_boot,
                    alternative=args.alternative, ci_method=args.ci_method,
                    p_rule=getattr(args, "p_rule", "concepts"),
                    encoding=getattr(args, "encoding", None) or "standard", options=options)
    if args.no_ci and "ci" not in method.stats:
        users = ", ".join(m.name for m in methods.all_methods().values() if "ci" in m.stats)
        raise EatlasError(f"--no-ci applies to {users} runs, not {method.name}", field="--no-ci",
                          hint="leave the option out")
    return cfg


def cmd_run(args) -> int:
    from .. import methods
    from ..registry import load_registry
    from ..run.runner import evaluate
    from ..run.unsaved import NotWritten, write_or_keep
    from ..store import check_writable, default_db

    method = methods.get(args.method)
    cfg = run_config(args)
    out, err = _console()
    from ..run.runner import check_config
    check_config(cfg, method)           # bad options: one line, before anything is loaded or written
    db = Path(args.db) if args.db else default_db()
    check_writable(db)                  # before any work: a finished run is never lost at write time
    from ..encoders.identity import published_model_rows
    published_model_rows(load_registry(args.registry))     # the write reads the papers' models: a broken one now
    before = getattr(method, "before_run", None)
    if before:
        before(cfg, db=db, registry=args.registry)
    with _progress(err, args.quiet) as prog:
        outcome = evaluate(cfg, registry=args.registry,
                           progress=_phases(prog, cfg.model, getattr(method, "progress_lines", False)))
    undo = method.stage(outcome, cfg, db=db, registry=args.registry)
    try:
        write_or_keep(db, outcome.run, outcome.results, load_registry(args.registry), wait_s=args.wait,
                      tables=outcome.tables)
    except BaseException as e:
        if undo and not (isinstance(e, NotWritten) and e.folder):
            undo()              # the run is not stored nor kept: neither are the files that belong with it
        raise
    after = method.after_run(outcome, cfg, db=db, registry=args.registry)
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
