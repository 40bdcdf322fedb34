"""The registry's commands: validate, list, show, models, catalog, add, bump, criterion add, cite."""
from __future__ import annotations

from pathlib import Path

from ..console import esc
from ..errors import EatlasError
from .common import _console


def cmd_validate(args) -> int:
    from ..encoders import LOADERS_DIR
    from ..encoders.loaders import loader_problems
    from ..registry import Registry, default_root
    from ..registry import cache as registry_cache
    from ..registry.catalog import unindexed
    from ..registry.checks import problem_rows, split_warnings
    from ..registry.schemas import check_registry

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()
    top = root.resolve()
    state = registry_cache.state(top) if registry_cache.enabled() else None
    reg = Registry(top)             # always parsed afresh: validate trusts no cache
    found = check_registry(reg) + unindexed(reg.root, reg.catalog)
    if state is not None and registry_cache.state(top) == state:
        # kept for 'eatlas add', which checks only what it adds and takes the rest from here
        registry_cache.keep(reg, unless_kept=True)
        registry_cache.record_validation(state, problem_rows(found))
    own = reg.root / "loaders"              # the model loader entries: checked with the encoders' backends
    found += loader_problems(own if own.is_dir() else LOADERS_DIR)
    from ..methods import all_methods
    for m in all_methods().values():        # the registry as each method would read it (e.g. the LLM IAT's prompt)
        found += m.registry_problems(reg)
    from ..encoders.identity import published_model_problems
    found += published_model_problems(reg)  # the papers' models (published/models.yaml), read at every write
    problems, warnings = split_warnings(found)
    for w in warnings:
        err.print(f"warning: {esc(w.render())}", highlight=False, markup=True, soft_wrap=True)
    if problems:
        for p in problems:
            err.print(f"[red]error[/red]: {esc(p.render())}", highlight=False, markup=True, soft_wrap=True)
        err.print(f"{len(problems)} problem(s) in {esc(root)}")
        return 1
    n_crit = len(getattr(reg, "criteria", {}))
    out.print(f"ok: {len(reg.sets)} sets, {len(reg.tests)} tests, {len(reg.templates)} templates"
              + (f", {n_crit} criteria" if n_crit else "") + f" valid ({esc(root)})")
    return 0


def cmd_list(args) -> int:
    from rich.table import Table

    from ..levels import levels_of
    from ..registry import load_registry

    out, _ = _console()
    reg = load_registry(args.registry)
    if args.source:
        _check_source(reg, args.source)
    if getattr(args, "criteria", False):
        return _list_criteria(out, reg, args)
    table = Table("id", "version", "source", "language", "bias type", "levels", "title")
    n = 0
    if args.source_kind:
        from ..registry.schemas import stimulus_schema
        known = stimulus_schema().columns["source_kind"].checks[0].statistics.get("allowed_values") or []
        if args.source_kind not in known:
            raise EatlasError(f"unknown source kind {args.source_kind!r}", field="--source-kind",
                              hint=f"one of: {', '.join(known)}")
    if getattr(args, "sets", False):
        return _list_sets(args, reg, out)
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
    if not n and args.source and any(s.source.get("paper") == args.source for s in reg.sets.values()):
        out.print(f"source {esc(args.source)} has sets but no tests: eatlas list --sets --source {esc(args.source)}")
    return 0


def _check_source(reg, source: str) -> None:
    """Refuse a --source that no test, set or criterion of the registry names (an empty table would say nothing),
    naming the known source keys."""
    from ..ids import did_you_mean, natural_sorted

    known = {str(x.source.get("paper")) for group in (reg.tests, reg.sets, getattr(reg, "criteria", {}))
             for x in group.values() if (x.source or {}).get("paper")}
    if source not in known:
        raise EatlasError(f"unknown source {source!r}: no test, set or criterion of the registry comes from it",
                          field="--source", hint=did_you_mean(source, known) + "known source keys: "
                          + ", ".join(natural_sorted(known)))


def _list_sets(args, reg, out) -> int:
    """``eatlas list --sets``: the stimulus sets, with the filters that apply to a set."""
    from rich.table import Table

    if args.bias_type or args.level:
        raise EatlasError("--bias-type and --level select tests, not sets", field="--sets",
                          hint="leave them out with --sets, or list tests without --sets")
    table = Table("id", "version", "source", "language", "items", "license", "concept")
    n = 0
    for s in reg.sets.values():
        if args.source and s.source.get("paper") != args.source:
            continue
        if args.language and s.language != args.language:
            continue
        if args.source_kind and args.source_kind not in s.source_kind:
            continue
        table.add_row(*map(esc, (s.id, s.version, s.source.get("paper", ""), s.language, str(len(s.items)),
                                  s.license, s.concept)))
        n += 1
    out.print(table)
    out.print(f"{n} set(s)")
    return 0


def _list_criteria(out, reg, args) -> int:
    from rich.table import Table

    table = Table("id", "version", "source", "items", "measure (unit, year)", "attributes a / b", "licence")
    n = 0
    for c in getattr(reg, "criteria", {}).values():
        if args.source and c.source.get("paper") != args.source:
            continue
        spec = c.criterion
        table.add_row(*map(esc, (c.id, c.version, c.source.get("paper", ""), str(len(c.items)),
                                  f"{spec.get('measure')} ({spec.get('unit')}, {spec.get('year')})", f"{c.a} / {c.b}",
                                  c.license)))
        n += 1
    out.print(table)
    out.print(f"{n} criteria (eatlas run --method validity --criteria ID)")
    return 0


def _show_criterion(out, c, args, reg=None) -> int:
    from ..registry.cite import source_lines

    spec = c.criterion
    out.print(f"[bold]criterion {esc(c.ref)}[/bold]  {esc(c.title)}  ({esc(c.file)})")
    for line in source_lines(reg, c.source) if reg is not None else [f"source: {c.source}"]:
        out.print(esc(line), highlight=False)     # where it comes from, in words (as for a set or test)
    out.print(f"license: {esc(c.license)}")
    if c.raw.get("license_note"):
        out.print(f"license note: {esc(c.raw['license_note'])}")
    out.print(f"measure: {esc(spec.get('measure'))} ({esc(spec.get('unit'))}): {esc(spec.get('meaning'))}")
    out.print(f"data: {esc(spec.get('agency'))}, {esc(spec.get('year'))}, {esc(spec.get('table'))}")
    out.print(f"values from: {esc(spec.get('data_file'))} column {esc(spec.get('value_column'))} "
              f"({esc(spec.get('aggregate'))}); {esc(spec.get('derivation'))}")
    out.print(f"reliability: {esc(spec.get('reliability'))}")
    out.print(f"association: WEFAT s(w, A, B), A = {esc(c.a)}, B = {esc(c.b)}; expected correlation "
              f"{esc(c.expected_sign)}")
    if c.notes:
        out.print(f"notes: {esc(c.notes)}")
    shown = c.items if args.all else c.items[:args.limit]
    for i in shown:
        out.print(f"  {esc(i.text)}  {i.value:g}  [dim]rows {esc(','.join(map(str, i.rows)))}"
                  + (f" weight {i.weight:g}" if i.weight is not None else "") + "[/dim]", highlight=False)
    if len(shown) < len(c.items):
        out.print(f"  ... {len(c.items) - len(shown)} more (--all)")
    return 0


def cmd_show(args) -> int:
    from ..registry import load_registry
    from ..registry.cite import source_lines
    from ..registry.stimuli import build_test

    out, _ = _console()
    reg = load_registry(args.registry)
    if args.id in getattr(reg, "criteria", {}) and args.id not in reg.sets and args.id not in reg.tests:
        return _show_criterion(out, reg.criteria[args.id], args, reg)
    if args.id in reg.sets:
        s = reg.sets[args.id]
        out.print(f"[bold]set {esc(s.ref)}[/bold]  {esc(s.concept)}  ({esc(s.file)})")
        for line in source_lines(reg, s.source):
            out.print(esc(line), highlight=False)
        out.print(f"licence: {esc(s.license)}", highlight=False)
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
    for line in source_lines(reg, spec.source):
        out.print(esc(line), highlight=False)
    out.print(f"licence: {esc(spec.license)}; levels: {esc(', '.join(spec.levels))}", highlight=False)
    if spec.methods is not None:
        out.print(f"methods: {esc(', '.join(spec.methods))} (only these run it)")
    if spec.notes:
        out.print(f"notes: {esc(spec.notes)}")
    if spec.forms:
        out.print(esc(f"forms: X with the {spec.forms['x']} forms of A and B, Y with the {spec.forms['y']} forms "
                      "(A@Y, B@Y below); the WEAT computes Lewis and Lupyan's measure"), highlight=False)
    out.print(f"level {esc(t.level)}" + (f", template {esc(t.template)}" if t.template else ""), highlight=False)
    for role, (before, after) in sorted(t.truncated.items()):
        other = {"x": "y", "y": "x", "a": "b", "b": "a"}[role]
        what = "items" if t.level == "word" else "sentences"
        out.print(esc(f"truncated to {after} of {before} {what} of set {role.upper()} with seed {t.truncation_seed} "
                      f"(as many as {other.upper()} has; --seed draws another subset)"), highlight=False)
    for role, c in t.all_concepts.items():
        out.print(f"[bold]{role.upper()}[/bold] {esc(c.name)} ({esc(c.set_ref)}, {len(c)} items)")
        shown = c.items if args.all else c.items[:args.limit]
        for it in shown:
            out.print(f"  {esc(it)}", highlight=False)
        if len(shown) < len(c):
            out.print(f"  ... {len(c) - len(shown)} more (--all)")
    return 0


def cmd_models(args) -> int:
    from ..encoders import entry_installed, model_entries
    from ..encoders.identity import entry_identity

    out, _ = _console()
    entries = model_entries()
    main, about, missing = [], [], []
    for mid, e in entries.items():
        static = e.get("backend") in ("static", "spacy-vectors")       # word vectors: a text is their mean
        ident = ", ".join(v for v in entry_identity(e).values() if v) or "-"
        default = "yes" if e.get("default") else "other languages" if e.get("multilingual_default") else ""
        pooling = "cbow" if static else f"{e.get('pooling') or '-'}, {e.get('layer', -1)}"
        installed = entry_installed(e)
        if not installed:
            missing.append((mid, " ".join(str(e.get("install") or "").split())))
        main.append((mid, default, e.get("family", ""), str(e.get("dimension", "")), pooling,
                     "yes" if installed else "no (below)"))
        about.append((mid, e.get("backend", ""), e.get("license", ""), ident))
    # Nothing is cut with '…' and nothing breaks inside a word: the short columns never wrap, the identity wraps at
    # spaces, a terminal too narrow for that gets one block per model; install commands come last, one a line,
    # never wrapped, so that each copies whole.
    _table_or_records(out, "registered models", ("id", "default", "family", "dim", "pooling, layer", "installed"),
                      main, caption="default: the model a run takes without --model (in English; 'other languages':"
                                    " in every other language)")
    _table_or_records(out, "what each model is", ("id", "backend", "licence", "identity (name, size, corpus)"),
                      about, caption="identity: what a paper's model must match for the reproduction view",
                      flexible=1)
    if missing:
        out.print("Not installed here; each installs with the command after its id:", highlight=False)
        width = max(len(m) for m, _ in missing)
        for mid, cmd in missing:
            out.print(esc(f"  {mid:<{width}}  {cmd or '(no install command recorded: see its loader entry)'}"),
                      highlight=False, soft_wrap=True)
    _hub_models(out)
    return 0


def _table_or_records(out, title: str, columns, rows, *, caption: str = "", flexible: int = 0) -> None:
    """A table whose cells never break inside a word (the last ``flexible`` columns wrap at spaces), or, where the
    terminal is too narrow for it, one block per row."""
    from rich import box
    from rich.table import Table

    from .common import fits, print_records

    if not fits(out, list(columns), rows, flexible=flexible):
        print_records(out, list(columns), rows, title=title, label=lambda n, r: str(r[0]))
        if caption:
            out.print(esc(caption), highlight=False)
        return
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, caption=caption or None)
    for i, head in enumerate(columns):
        flex = i >= len(columns) - flexible
        table.add_column(head, no_wrap=not flex, overflow="fold", ratio=1 if flex else None)
    for r in rows:
        table.add_row(*map(esc, r))
    out.print(table)


def _hub_models(out) -> None:
    """The second table of 'eatlas models': the Hugging Face hub models in the user's cache, each revision with its
    commit, size and whether a run can use it (eatlas.encoders.hub)."""
    from rich.table import Table

    from ..encoders.hub import cached_models
    root, rows = cached_models()
    if not rows:
        out.print(esc(f"hub models in your cache: none in {root} (HF_HUB_CACHE / HF_HOME); a run downloads a hub "
                      "model there unless --offline, e.g. eatlas run --model google-bert/bert-base-uncased"),
                  highlight=False, soft_wrap=True)
        return
    table = Table("id", "refs", "commit", "size", "a run can use it", title="hub models in your cache",
                  caption=esc(f"{root}; run one with --model ID or --model ID@REVISION (a ref or a commit)"))
    last = None
    for r in rows:
        table.add_row(*map(esc, ("" if r["id"] == last else r["id"], r["refs"], r["commit"][:12],
                                 _size(r["size"]), r["usable"])))
        last = r["id"]
    out.print(table)


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"     # pragma: no cover


def cmd_catalog(args) -> int:
    from ..registry import default_root
    from ..registry.catalog import catalog_diff, sync, write_catalog

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()
    cat = sync(root, write=False)
    diff = catalog_diff(root, cat)
    counts = (f"{len(cat['sets'])} sets, {len(cat['tests'])} tests, {len(cat['templates'])} templates, "
              f"{len(cat['published'])} published tables" +
              (f", {len(cat['criteria'])} criteria" if cat.get("criteria") else ""))
    if args.sync:
        if diff:
            from ..paths import refuse_bundled
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
    from ..registry import default_root
    from ..registry.catalog import AddRefused, add

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
    if done.kind == "source":
        out.print(f"added source {esc(done.id)} to {esc(done.dest.relative_to(root))}, its BibTeX written from the "
                  f"fields ('eatlas cite' prints it); name it as source.paper: {esc(done.id)} in your sets and tests",
                  highlight=False)
        return 0
    out.print(f"added {done.kind} {esc(done.id)} as {esc(done.dest.relative_to(root))}; catalog.yaml updated",
              highlight=False)
    return 0


def cmd_criterion(args) -> int:
    from ..registry import default_root
    from ..registry.criterion_add import CriterionSpec, add_criterion

    out, _ = _console()
    root = Path(args.registry) if getattr(args, "registry", None) else default_root()
    spec = CriterionSpec(**{k: getattr(args, k) for k in (
        "source", "file", "id", "key", "value", "a", "b", "measure", "unit", "agency", "year", "table", "license",
        "kind", "expected_sign", "meaning", "reliability")})
    done = add_criterion(root, spec)
    out.print(f"wrote {esc(done['criterion'])} ({done['items']} items) and {esc(done['data'])}; now run "
              f"'eatlas catalog --sync --registry {esc(root)}'", highlight=False, soft_wrap=True)
    return 0


def cmd_bump(args) -> int:
    import sys

    from rich.table import Table

    from ..registry import default_root
    from ..registry.bump import apply, plan

    out, err = _console()
    root = Path(args.registry) if args.registry else default_root()
    from ..paths import refuse_bundled
    refuse_bundled(root)
    p = plan(root, args.id, part=args.part, to=args.to, change=args.change, follow=args.follow)
    table = Table(title=f"eatlas bump {args.id}: {len(p.edits)} file(s) and catalog.yaml", title_justify="left")
    for head in ("file", "entry", "version", "change"):
        table.add_column(head, no_wrap=head != "change", overflow="fold")
    for e in p.edits:
        table.add_row(esc(e.rel), esc(f"{e.kind[:-1]} {e.id}"), f"{e.old_version} -> {e.new_version}", esc(e.why))
    out.print(table)
    if args.dry_run:
        out.print("dry run: nothing was written", highlight=False)
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            err.print("nothing was written: add --yes to write these files (or --dry-run to only list them)",
                      highlight=False)
            return 1
        answer = input(f"write these {len(p.edits)} file(s) and catalog.yaml? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            out.print("nothing was written", highlight=False)
            return 1
    apply(p)
    out.print(f"bumped {len(p.edits)} file(s) and catalog.yaml"
              + (f": {p.target.kind[:-1]} {esc(p.target.id)} {p.target.new_version}" if p.target else "")
              + (f", {len(p.followers)} following" if p.followers else ""), highlight=False)
    return 0


def cmd_cite(args) -> int:
    from ..registry import load_registry
    from ..registry.cite import citations

    print("\n\n".join(b for _, b in citations(load_registry(args.registry), args.test_id, args.level)))
    return 0
