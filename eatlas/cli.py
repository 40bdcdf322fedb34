"""The ``eatlas`` command line."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .argtypes import INT64_MAX, POSITIVE, PROBABILITY, SEED, at_least, between  # noqa: F401
from .console import esc, plain_line
from .errors import EatlasError, ValidationFailed
from .levels import NAMES as LEVEL_NAMES
from .levels import TEXT_LEVELS as EXPORT_LEVELS


def _console():
    from rich.console import Console
    out = Console()
    # a pipe or file gets 160 columns, unless COLUMNS asks for a width (rich reads it when width is None)
    width = None if out.is_terminal or os.environ.get("COLUMNS", "").isdigit() else 160
    return Console(width=width), Console(stderr=True, width=width)


def cmd_validate(args) -> int:
    from . import registry_cache
    from .catalog import unindexed
    from .checks import problem_rows, split_warnings
    from .registry import Registry, default_root
    from .schemas import check_registry

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()
    top = root.resolve()
    state = registry_cache.state(top) if registry_cache.enabled() else None
    reg = Registry(top)             # always parsed afresh: validate trusts no cache
    found = check_registry(reg) + unindexed(reg.root, reg.catalog)
    if state is not None and registry_cache.state(top) == state:
        # kept for 'eatlas add', which checks only what it adds and takes the rest from here
        registry_cache.keep(state, reg)
        registry_cache.record_validation(state, problem_rows(found))
    problems, warnings = split_warnings(found)
    for w in warnings:
        err.print(f"warning: {esc(w.render())}", highlight=False, markup=True, soft_wrap=True)
    if problems:
        for p in problems:
            err.print(f"[red]error[/red]: {esc(p.render())}", highlight=False, markup=True, soft_wrap=True)
        err.print(f"{len(problems)} problem(s) in {esc(root)}")
        return 1
    out.print(f"ok: {len(reg.sets)} sets, {len(reg.tests)} tests, {len(reg.templates)} templates valid "
              f"({esc(root)})")
    return 0


def cmd_list(args) -> int:
    from rich.table import Table

    from .levels import levels_of
    from .registry import load_registry

    out, _ = _console()
    reg = load_registry(args.registry)
    table = Table("id", "version", "source", "language", "bias type", "levels", "title")
    n = 0
    if args.source_kind:
        from .schemas import stimulus_schema
        known = stimulus_schema().columns["source_kind"].checks[0].statistics.get("allowed_values") or []
        if args.source_kind not in known:
            raise EatlasError(f"unknown source kind {args.source_kind!r}", field="--source-kind",
                              hint=f"one of: {', '.join(known)}")
    for t in reg.tests.values():
        if args.source and t.source.get("paper") != args.source:
            continue
        if args.language and t.language != args.language:
            continue
        if args.source_kind and not any(args.source_kind in reg.get_set(ref).source_kind for ref in t.sets.values()):
            continue
        if args.bias_type and t.bias_type != args.bias_type:
            continue
        if args.level and args.level not in levels_of(t):
            continue
        table.add_row(*map(esc, (t.id, t.version, t.source.get("paper", ""), t.language, t.bias_type or "",
                                  ",".join(t.levels), t.title)))
        n += 1
    out.print(table)
    out.print(f"{n} test(s)")
    return 0


def cmd_show(args) -> int:
    from .registry import load_registry
    from .stimuli import build_test

    out, _ = _console()
    reg = load_registry(args.registry)
    if args.id in reg.sets:
        s = reg.sets[args.id]
        out.print(f"[bold]set {esc(s.ref)}[/bold]  {esc(s.concept)}  ({esc(s.file)})")
        out.print(f"source: {esc(s.source)}  license: {esc(s.license)}")
        if s.notes:
            out.print(f"notes: {esc(s.notes)}")
        for i in s.items:
            extra = "".join(f" {k}={v}" for k, v in (("case", i.case), ("plural", i.plural),
                                                      ("singular", i.singular)) if v)
            out.print(f"  {esc(i.text)}  [dim]{esc(i.kind)}{esc(extra)}[/dim]", highlight=False)
        return 0
    spec = reg.get_test_spec(args.id)
    t = build_test(reg, spec, args.level, seed=args.seed)
    out.print(f"[bold]test {esc(spec.ref)}[/bold]  {esc(spec.title)}  ({esc(spec.file)})")
    out.print(f"source: {esc(spec.source)}  license: {esc(spec.license)}  levels: {esc(', '.join(spec.levels))}")
    if spec.methods is not None:
        out.print(f"methods: {esc(', '.join(spec.methods))} (only these run it)")
    if spec.notes:
        out.print(f"notes: {esc(spec.notes)}")
    out.print(f"level {esc(t.level)}" + (f", template {esc(t.template)}" if t.template else "") +
              (f", truncated {t.truncated} with seed {t.truncation_seed}" if t.truncated else ""))
    for role, c in t.concepts.items():
        out.print(f"[bold]{role.upper()}[/bold] {esc(c.name)} ({esc(c.set_ref)}, {len(c)} items)")
        shown = c.items if args.all else c.items[:args.limit]
        for it in shown:
            out.print(f"  {esc(it)}", highlight=False)
        if len(shown) < len(c):
            out.print(f"  ... {len(c) - len(shown)} more (--all)")
    return 0


def cmd_models(args) -> int:
    from rich.table import Table

    from .encoders import entry_installed, model_entries
    from .identity import entry_identity

    out, _ = _console()
    table = Table("id", "installed", "backend", "family", "identity (name, size, corpus)", "dim", "pooling", "layer",
                  "licence", "install", caption="identity: what a paper's model must match for the reproduction view")
    for mid, e in model_entries().items():
        static = e.get("backend") == "static"
        ident = ", ".join(v for v in entry_identity(e).values() if v) or "-"
        table.add_row(*map(esc, (mid + (" (default)" if e.get("default") else ""),
                                 "yes" if entry_installed(e) else "no", e.get("backend", ""), e.get("family", ""),
                                 ident,
                                 str(e.get("dimension", "")), "cbow" if static else str(e.get("pooling", "") or ""),
                                 "-" if static else str(e.get("layer", -1)), e.get("license", ""),
                                 e.get("install", ""))))
    out.print(table)
    return 0


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


def _phases(prog, model):
    """A runner progress callback: one bar per phase (loading, expanding, encoding N texts, testing M tests)."""
    tasks = {}

    def tick(ev):
        if ev.name == "loading":
            desc = f"loading {model or 'the default model'}"
        elif ev.name == "encoding":
            desc = f"encoding {ev.total} texts and spans" + (f" ({ev.cached} from the cache)" if ev.cached else "")
        else:
            desc = f"{ev.name} {ev.total} {'test/level pairs' if ev.name == 'expanding' else 'tests'}" + \
                (f": {ev.item}" if ev.item else "")
        if ev.name not in tasks:
            for t in tasks.values():            # the previous phase is over
                prog.update(t, visible=False)
            tasks[ev.name] = prog.add_task(esc(desc), total=ev.total)
        prog.update(tasks[ev.name], description=esc(desc), completed=ev.done)
    return tick


def _trusted(args) -> bool:
    """--trust-remote-code MODEL holds only for the model it names."""
    if not args.trust_remote_code:
        return False
    named, model = args.trust_remote_code, args.model or ""
    if named != model and not (Path(named).exists() and Path(model).exists()
                               and Path(named).resolve() == Path(model).resolve()):
        raise EatlasError(f"--trust-remote-code names {named!r}, but the model is {model or 'the default model'!r}",
                          field="--trust-remote-code", hint="name the same model as --model, or leave the flag out")
    return True


def cmd_run(args) -> int:
    from . import methods
    from .registry import load_registry
    from .runner import RunConfig, evaluate
    from .store import check_writable, default_db, write_run

    method = methods.get(args.method)
    options = {o.dest: getattr(args, o.dest) for m in methods.all_methods().values() for o in m.options
               if hasattr(args, o.dest)}
    cfg = RunConfig(model=args.model, tests=args.tests or None, levels=tuple(args.levels) if args.levels else None,
                    seed=args.seed, n_samples=args.n_samples, alpha=args.alpha, parametric=args.parametric,
                    pooling=args.pooling, layer=args.layer, subword=args.subword, min_coverage=args.min_coverage,
                    batch_size=args.batch_size, trust_remote_code=_trusted(args),
                    use_cache=not args.no_cache, method=args.method, language=args.language,
                    family=args.family, ci=None if args.no_ci else args.ci, n_boot=args.n_boot,
                    alternative=args.alternative, ci_method=args.ci_method, options=options)
    if args.no_ci and "ci" not in method.stats:
        users = ", ".join(m.name for m in methods.all_methods().values() if "ci" in m.stats)
        raise EatlasError(f"--no-ci applies to {users} runs, not {method.name}", field="--no-ci",
                          hint="leave the option out")
    out, err = _console()
    from .runner import check_config
    check_config(cfg, method)           # bad options: one line, before anything is loaded or written
    db = Path(args.db) if args.db else default_db()
    check_writable(db)                  # before any work: a finished run is never lost at write time
    before = getattr(method, "before_run", None)
    if before:
        before(cfg, db=db, registry=args.registry)
    with _progress(err, args.quiet) as prog:
        outcome = evaluate(cfg, registry=args.registry, progress=_phases(prog, cfg.model))
    undo = method.stage(outcome, cfg, db=db, registry=args.registry)
    try:
        write_run(db, outcome.run, outcome.results, load_registry(args.registry), wait_s=args.wait,
                  extra_tables=outcome.tables)
    except BaseException:
        if undo:
            undo()              # the run is not stored: neither are the files that belong with it
        raise
    after = method.after_run(outcome, cfg, db=db, registry=args.registry)
    if not args.quiet:
        from .run_summary import results_table
        out.print(method.summary(outcome) or results_table(outcome, cfg, method, out))
        if outcome.left_out:
            out.print(f"[dim]{len(outcome.left_out)} test(s) of the catalog left out, which {esc(method.name)} does "
                      "not run, e.g. " + esc(outcome.left_out[0][1]) + "[/dim]")
        if outcome.skipped:
            out.print(f"[dim]{len(outcome.skipped)} test/level pair(s) not applicable, e.g. "
                      + esc(f"{outcome.skipped[0][0]} [{outcome.skipped[0][1]}]: {outcome.skipped[0][2]}") + "[/dim]")
    own = ", ".join(t.name for t in method.tables if t.name in outcome.tables)
    out.print(f"run {outcome.run['run_id']} written to {esc(db)}: " + (
        f"{len(outcome.results)} result(s)" + (f"; {method.name} in table(s) {own}" if own else "")
        if method.inputs == "matrices" else f"tables {', '.join(sorted(outcome.tables))}"), highlight=False)
    if after:
        out.print(esc(after), highlight=False)
    if method.inputs == "matrices" and method.effect_size and not args.quiet:
        from .run_summary import pairing_line
        from .store import reproduction_counts
        out.print(esc(pairing_line(reproduction_counts(db, outcome.run["run_id"]), outcome.run["model"])),
                  highlight=False, soft_wrap=True)
    return 0


def cmd_sql(args) -> int:
    from .store import default_db, query

    out, err = _console()
    db = Path(args.db) if args.db else default_db()
    reg = None
    if not db.exists() and not args.write:
        from .registry import load_registry
        reg = load_registry(args.registry)
        err.print(f"note: no results file {db} (yet): runs and results are empty; published_results and the "
                  "views read the registry's published tables", highlight=False)
    df = query(db, args.query, write=args.write, reg=reg)
    if args.format == "csv":
        from .outputs import neutralise_csv
        sys.stdout.write(neutralise_csv(df).to_csv(index=False))
    elif args.format == "json":
        sys.stdout.write(_json_records(df) + "\n")
    else:
        import pandas as pd
        from rich.table import Table
        t = Table()                 # every value whole: a long one folds onto the next line, never cut with '…'
        for c in df.columns:
            t.add_column(esc(c), overflow="fold")
        # SQL NULL (None, NaN or NA in the frame) shows as blank
        for row in df.itertuples(index=False):
            t.add_row(*(_sql_cell(v, pd) for v in row))
        out.print(t)
        out.print(f"{len(df)} row(s)")
    return 0


def _json_records(df) -> str:
    """`eatlas sql --format json`: one object per row, every float with all its digits (Python's shortest
    exact form; pandas' to_json keeps 15 at most), SQL NULL as null, timestamps as epoch milliseconds (as
    pandas writes them)."""
    import datetime as dt
    import decimal
    import json

    import numpy as np
    import pandas as pd

    def plain(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, (pd.Timestamp, dt.datetime)):
            ts = pd.Timestamp(v)
            return int((ts.tz_convert(None) if ts.tzinfo else ts).value // 1_000_000)
        if isinstance(v, dt.date):
            return v.isoformat()
        if isinstance(v, decimal.Decimal):
            return float(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v).decode("utf-8", "backslashreplace")
        return str(v)

    rows = df.astype(object).where(df.notna(), None).to_dict(orient="records")
    return json.dumps(rows, indent=1, default=plain, ensure_ascii=False, allow_nan=False)


SQL_DIGITS = 6     # significant digits of a float in `eatlas sql`'s table format (csv and json keep every digit)


def _sql_cell(v, pd) -> str:
    """A cell of `eatlas sql`'s table: NULL (None, NaN, NA) blank, a float to SQL_DIGITS significant digits."""
    import numpy as np
    if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and v != v):
        return ""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.{SQL_DIGITS}g}"
    return esc(v)


def cmd_catalog(args) -> int:
    from .catalog import catalog_diff, sync, write_catalog
    from .registry import default_root

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()
    cat = sync(root, write=False)
    diff = catalog_diff(root, cat)
    counts = (f"{len(cat['sets'])} sets, {len(cat['tests'])} tests, {len(cat['templates'])} templates, "
              f"{len(cat['published'])} published tables")
    if args.sync:
        if diff:
            from .paths import refuse_bundled
            refuse_bundled(root)
            write_catalog(root / "catalog.yaml", cat)
        out.print(f"catalog.yaml {'rewritten' if diff else 'already up to date'}: {counts}", highlight=False)
        return 0
    if diff:
        for line in diff:
            out.print(line, highlight=False, markup=False, soft_wrap=True)
        changed = sum(1 for line in diff[2:] if line[:1] in "+-")
        err.print(f"catalog.yaml is stale: {changed} line(s) differ from the files; run 'eatlas catalog --sync' "
                  "to rewrite it", highlight=False)
        return 1
    out.print(f"catalog.yaml is up to date: {counts}", highlight=False)
    return 0


def cmd_add(args) -> int:
    from .catalog import AddRefused, add
    from .registry import default_root

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()

    def say(kind: str, problems) -> None:
        for p in problems:
            err.print(f"{kind}: {esc(p.render())}", highlight=False, markup=True, soft_wrap=True)

    try:
        done = add(root, Path(args.file))
    except AddRefused as e:
        say("[red]error[/red]", e.problems)
        say("warning", e.warnings)
        mine = sum(p.file == e.new_file for p in e.problems)
        other = len(e.problems) - mine
        err.print(f"{mine} problem(s) in {esc(e.new_file)}" + (f", {other} elsewhere in the registry" if other
                                                                  else "") + "; nothing was written",
                  highlight=False, soft_wrap=True)
        return 1
    say("warning", done.warnings)
    out.print(f"added {done.kind} {esc(done.id)} as {esc(done.dest.relative_to(root))}; catalog.yaml updated",
              highlight=False)
    return 0


def cmd_cache(args) -> int:
    from .cache import EmbeddingCache

    out, _ = _console()
    cache = EmbeddingCache()
    if args.action == "clear":
        n = cache.clear()
        out.print(f"removed {n} cached encoder setting(s) from {esc(cache.root)}")
        return 0
    rows = cache.info()
    for r in rows:
        k = r["key"]
        what = ", ".join(f"{n}={k[n]}" for n in ("mode", "pooling", "layer", "subword", "normalize", "lowercase")
                         if n in k)
        out.print(esc(f"{r['id']}  {k.get('fingerprint', '?')}  {what}: {r['entries']} vector(s), "
                      f"{r['shards']} shard(s), {r['bytes'] / 1e6:.1f} MB"), highlight=False)
    out.print(f"{len(rows)} encoder setting(s), {sum(r['entries'] for r in rows)} vector(s), "
              f"{sum(r['bytes'] for r in rows) / 1e6:.1f} MB in {esc(cache.root)} (env EATLAS_CACHE)")
    return 0


def cmd_publish(args) -> int:
    from .publish import hub_token, publish, push
    from .registry import load_registry
    from .store import default_db

    out, _ = _console()
    token = hub_token() if args.push else None      # fail before writing anything
    summary = publish(load_registry(args.registry), args.out_dir, seed=args.seed, repo_id=args.push,
                      db=Path(args.db) if args.db else default_db())
    cfgs = summary["configs"]
    out.print(f"wrote {len(cfgs)} config(s), {sum(c['rows'] for c in cfgs)} row(s), registry version "
              f"{summary['version']} to {esc(summary['out'])}", highlight=False)
    if args.push:
        url = push(summary["out"], args.push, summary["version"], token=token)
        out.print(f"pushed to {esc(url)}", highlight=False)
    return 0


def cmd_export(args) -> int:
    from .export import export
    from .registry import load_registry
    from .store import default_db

    out, err = _console()
    written, skipped = export(load_registry(args.registry), args.format, args.out_dir, test_ids=args.tests,
                              level=args.level, seed=args.seed, db=Path(args.db) if args.db else default_db())
    for tid, why in skipped:
        err.print(f"skipped {esc(tid)}: {esc(why)}", highlight=False)
    out.print(f"wrote {len(written)} {args.format} file(s) to {esc(args.out_dir)}", highlight=False)
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    from .store import default_db

    out, _ = _console()
    db = Path(args.db) if args.db else default_db()
    runs = [r for v in (args.runs or []) for r in v.split(",") if r]
    path = write_report(db, args.out, run_id=args.run, registry=args.registry, runs=runs, model=args.model,
                        all_runs=args.all)
    out.print(f"report written to {esc(path)}", highlight=False)
    return 0


def cmd_cite(args) -> int:
    from .cite import citations
    from .registry import load_registry

    print("\n\n".join(b for _, b in citations(load_registry(args.registry), args.test_id, args.level)))
    return 0


def cmd_show_influence(args) -> int:
    from .influence_view import show_influence
    from .store import default_db

    out, _ = _console()
    for table in show_influence(Path(args.db) if args.db else default_db(), args.run, args.test,
                                level=args.level, top=args.top):
        out.print(table)
    return 0


_at_least, _between = at_least, between


class _DefaultsHelp(argparse.HelpFormatter):
    """Every option's default in its help: '(default: X)' is added to an option that has a value by default
    (not None, not a flag's False) unless its help already gives it; an option without one says in its help
    what happens when it is left out (tests/test_cli_options.py checks both)."""

    def _get_help_string(self, action):
        h = action.help or ""
        d = action.default
        if not action.option_strings or d is None or d is False or d is argparse.SUPPRESS or "%(default)" in h:
            return h
        return f"{h} (default: %(default)s)"


class _DefaultModel:
    """The default model's id, read from the loaders when the help is printed (never when parsing)."""

    def __str__(self) -> str:
        try:
            from .encoders import default_model_id
            return default_model_id()
        except Exception:           # a broken loader entry says so at 'eatlas run'; the help still prints
            return "the loader entry marked default: true"


class _ListOption(argparse.Action):
    """A list option that takes ``--tests a b``, ``--tests a,b`` and mixtures; repeating it adds to the list."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = [v.strip() for value in values for v in value.split(",") if v.strip()]
        if not items:
            parser.error(f"argument {option_string}: expected at least one value")
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, (list(before) if before and before is not self.default else []) + items)


def _global_options(parser: argparse.ArgumentParser, *, sub_level: bool) -> None:
    """--registry and --db, accepted before and after the subcommand. At the subcommand's level they have
    no default (argparse.SUPPRESS), so leaving them out there keeps what was given before it."""
    kw = {"default": argparse.SUPPRESS} if sub_level else {}
    parser.add_argument("--registry", help="registry folder (catalog.yaml, registry/, templates/); "
                                           "env EATLAS_REGISTRY", **kw)
    parser.add_argument("--db", help="DuckDB results file (default eatlas.duckdb; env EATLAS_DB)", **kw)


def _method_options(r: argparse.ArgumentParser) -> None:
    """--method and every method's own options, from the plug-ins' declarations (eatlas.methods)."""
    from . import methods

    found = methods.all_methods()
    r.add_argument("--method", choices=list(found), default="weat",
                   help="; ".join(f"{name}: {m.help}" for name, m in found.items()))
    for name, m in found.items():
        if m.options:
            g = r.add_argument_group(f"{name} ({m.help.split(':')[0]})")
            for o in m.options:
                g.add_argument(o.flag, **o.kwargs)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eatlas", description="Embedding Association Tests: registry, runs, results.")
    _global_options(p, sub_level=False)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run tests on a model and store the results", formatter_class=_DefaultsHelp)
    model = r.add_argument("--model", help="registered model id ('eatlas models'), a local model folder, or a vector "
                           "file (default: %(default_model)s)")
    model.default_model = _DefaultModel()
    r.add_argument("--family", help="model family of a model folder or vector file that is not registered (e.g. "
                   "bert, glove); recorded with family_source 'user' (default: the registered model's family, else "
                   "'unknown', which is set beside no published number)")
    r.add_argument("--tests", nargs="+", action=_ListOption, help="test ids, space- or comma-separated "
                   "(default: every canonical test in the catalog in --language that --method runs)")
    r.add_argument("--language", default="en",
                   help="BCP-47 tag of the tests run when --tests is not given ('all': every language)")
    r.add_argument("--levels", nargs="+", action=_ListOption,
                   help=f"space- or comma-separated: {','.join(LEVEL_NAMES)} (default: word,sent, or the levels "
                        "the method runs)")
    r.add_argument("--seed", type=SEED, default=0, help="seed of the permutation samples, the bootstrap and the "
                   "truncation of unequal expanded sets")
    r.add_argument("--n-samples", type=_at_least(2), default=100_000,
                   help="permutation samples (exact when fewer partitions)")
    r.add_argument("--alpha", type=PROBABILITY, default=0.01, help="Holm-Bonferroni family-wise level")
    r.add_argument("--parametric", action="store_true", help="normal-approximation p-value (Caliskan et al.)")
    r.add_argument("--alternative", choices=("greater", "less", "two-sided"), default="greater",
                   help="permutation-test alternative (greater as Caliskan et al. and May et al.; "
                        "two-sided: twice the smaller one-sided p, capped at 1)")
    r.add_argument("--ci", type=_between(0.0, 1.0, open_low=True, open_high=True), default=0.95,
                   help="level of the stimulus-bootstrap confidence interval of each effect size")
    r.add_argument("--n-boot", type=_at_least(100), default=10_000, help="bootstrap resamples")
    r.add_argument("--no-ci", action="store_true", help="compute no confidence interval")
    from .robust import CI_METHODS
    r.add_argument("--ci-method", choices=CI_METHODS, default="percentile",
                   help="bootstrap interval: percentile (as WEATHub) or BCa (bias-corrected and accelerated, "
                        "scipy.stats.bootstrap; one more leave-one-out pass per result)")
    r.add_argument("--pooling", help="mean, mean_nospecial, cls, last, max (default: the model's)")
    r.add_argument("--layer", help="-1 (top), a hidden-state index, or 'sum' (default: the model's loader entry's, "
                   "else -1)")
    r.add_argument("--subword", help="c-word subword choice: first, last, mean (default: last)")
    r.add_argument("--min-coverage", type=_between(0.0, 1.0), default=0.8,
                   help="share of a set's stimuli that must be encodable")
    r.add_argument("--batch-size", type=POSITIVE, default=64, help="texts per forward pass of the model")
    r.add_argument("--trust-remote-code", metavar="MODEL",
                   help="let the model folder's own Python code run; must name the --model, so the trust is "
                        "given to one model, never by habit (default: no model's code runs)")
    r.add_argument("--wait", type=_between(0.0, 86_400.0), default=0.0, help="seconds to wait for a database in use")
    r.add_argument("--no-cache", action="store_true", help="encode everything afresh; read and write no cache")
    r.add_argument("--quiet", action="store_true", help="print only the line saying where the run was written")
    _method_options(r)
    r.set_defaults(fn=cmd_run)

    s = sub.add_parser("sql", help="query the results database (read-only unless --write)",
                       formatter_class=_DefaultsHelp)
    s.add_argument("query", help="one SQL statement (DuckDB)")
    s.add_argument("--write", action="store_true", help="open the database for writing, and let the statement "
                   "read or write other files (default: read-only, this database only)")
    s.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="table: for reading, floats rounded to 6 significant digits (1.88987 for "
                        "1.8898680441288913); csv and json: every digit, for other programs")
    s.set_defaults(fn=cmd_sql)

    ls = sub.add_parser("list", help="list tests")
    ls.add_argument("--source")
    ls.add_argument("--bias-type")
    ls.add_argument("--level")
    ls.add_argument("--language", help="BCP-47 tag, e.g. en, hi")
    ls.add_argument("--source-kind", help="tests with a set of this source kind, e.g. social_science "
                                          "(the tags are in schemas/stimuli.yaml)")
    ls.set_defaults(fn=cmd_list)

    sh = sub.add_parser("show", help="show a set or test with provenance and expanded items")
    sh.add_argument("id")
    sh.add_argument("--level")
    sh.add_argument("--seed", type=SEED, default=0)
    sh.add_argument("--limit", type=_at_least(0), default=10)
    sh.add_argument("--all", action="store_true")
    sh.set_defaults(fn=cmd_show)

    v = sub.add_parser("validate", help="validate the whole registry")
    v.set_defaults(fn=cmd_validate)

    m = sub.add_parser("models", help="list registered models and whether they are installed")
    m.set_defaults(fn=cmd_models)

    c = sub.add_parser("catalog", help="check catalog.yaml against the registry files, or rewrite it (--sync)")
    cg = c.add_mutually_exclusive_group()
    cg.add_argument("--check", action="store_true", help="(default) compare catalog.yaml with the files, write "
                    "nothing; exit 1 with the differences when it is stale")
    cg.add_argument("--sync", action="store_true", help="rewrite catalog.yaml from the files (refuses content "
                    "changed without a version bump)")
    c.set_defaults(fn=cmd_catalog)

    ca = sub.add_parser("cache", help="the on-disk embedding cache ($EATLAS_CACHE or ~/.cache/eatlas)")
    ca.add_argument("action", choices=("info", "clear"))
    ca.set_defaults(fn=cmd_cache)

    a = sub.add_parser("add", help="validate a new set or test file and add it to the registry",
                       description="Validate one new stimulus set or test file, copy it into the registry as "
                       "registry/<source.paper>/sets/<id>.yaml (a file with x, y, a and b is a test: tests/<id>.yaml) "
                       "and add its line to catalog.yaml. Add the sets before the test that names them (id@version), "
                       "and the paper to registry/sources.yaml first. An existing id is refused; nothing is written "
                       "when the file, or the registry with it, does not validate: every problem of the file is "
                       "listed (exit 1). Warnings, the registry's or the file's, are printed and do not block. Only "
                       "the new file and what it touches are checked; the rest is what 'eatlas validate' found for "
                       "these files (kept in the registry cache). To change an existing set, edit its file, bump "
                       "its version, add a changelog entry and run 'eatlas catalog --sync'.")
    a.add_argument("file", help="YAML file of one set or one test (format: docs/registry-format.md)")
    a.set_defaults(fn=cmd_add)

    pu = sub.add_parser("publish", help="write the registry as a Hugging Face dataset folder (and push it)")
    pu.add_argument("out_dir", help="folder to write: README.md dataset card, LICENSE.md, data/<config>/")
    pu.add_argument("--push", metavar="REPO_ID", help="upload to this Hub dataset repo, tagged with the registry "
                    "version (needs HF_TOKEN or a cached login)")
    pu.add_argument("--seed", type=SEED, default=0, help="seed of the truncation of unequal expanded sets")
    pu.set_defaults(fn=cmd_publish)

    ex = sub.add_parser("export", help="export tests as sent-bias JSON files or stimulus tables")
    ex.add_argument("out_dir")
    ex.add_argument("--format", choices=("sent-bias", "csv", "jsonl", "parquet"), default="sent-bias")
    ex.add_argument("--tests", nargs="+", action=_ListOption, help="test ids, space- or comma-separated "
                    "(default: every test)")
    ex.add_argument("--level", choices=EXPORT_LEVELS,
                    help="default: sent-bias at the test's own level, tables at every level it has")
    ex.add_argument("--seed", type=SEED, default=0, help="seed of the truncation of unequal expanded sets")
    ex.set_defaults(fn=cmd_export)

    rp = sub.add_parser("report", help="write a self-contained HTML report of the results database")
    rp.add_argument("out", help="the HTML file to write")
    rp.add_argument("--run", help="one run id (or a unique prefix)")
    rp.add_argument("--runs", nargs="+", help="run ids or unique prefixes (space- or comma-separated)")
    rp.add_argument("--model", help="only the runs of this model")
    rp.add_argument("--all", action="store_true", help="every run, not only the newest result per model, test and "
                    "level (the default)")
    rp.add_argument("--alpha", type=PROBABILITY, default=0.01, help="ignored: '*' marks what each run found "
                    "Holm-significant at its own alpha")
    rp.set_defaults(fn=cmd_report)

    si = sub.add_parser("show-influence", help="the stimuli that move a result's effect size most when left out")
    si.add_argument("run", help="run id (or a unique prefix)")
    si.add_argument("test", help="test id")
    si.add_argument("--level", help="one level (default: every level of the test in the run)")
    si.add_argument("--top", type=POSITIVE, default=10, help="how many stimuli per level (default 10)")
    si.set_defaults(fn=cmd_show_influence)

    ci = sub.add_parser("cite", help="print the BibTeX for a test: its papers, its sets', its template's, EATlas")
    ci.add_argument("test_id")
    ci.add_argument("--level", choices=LEVEL_NAMES,
                    help="default: the test's own level")
    ci.set_defaults(fn=cmd_cite)
    from .cli_dist import add_parsers  # results export/import, sweep (issue 14)
    add_parsers(sub)
    for subparser in sub.choices.values():
        _global_options(subparser, sub_level=True)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:          # argparse has printed the usage and the problem
        return e.code if isinstance(e.code, int) else 2
    try:
        return args.fn(args)
    except ValidationFailed as e:
        for prob in e.problems:
            print(f"error: {plain_line(prob.render())}", file=sys.stderr)
        return 1
    except EatlasError as e:
        print(f"error: {plain_line(e.render())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:          # eatlas sql ... | head: the reader has what it wanted
        try:
            import os
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except OSError as e:             # disk full, permission denied, a folder where a file should be
        where = f"file {e.filename}: " if e.filename else ""
        print(plain_line(f"error: {where}{e.strerror or e} (check the path and its permissions)"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
