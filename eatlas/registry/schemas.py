"""Validation of a whole registry.

Per-item rules live in ``schemas/stimuli.yaml`` (a pandera schema, data reviewed apart from code)
and run lazily over the long table of stimuli; the failure-case table is turned into one message
per problem naming file, set, field and value. Rules across a test (sets exist, non-empty, no
overlap, balance, templates that expand) and across versions (content hash) follow in code.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd
import pandera.pandas as pa
from pandera import extensions

from ..errors import EatlasError, ValidationFailed
from ..paths import schema_file
from .base import ROLES, Registry, StimulusSet, semver_key
from .templates import vet_template
from .textcheck import item_key

SCHEMA_FILE = schema_file()


def _register_checks():
    # pandera's registration imports its data-synthesis strategies, hence hypothesis, whose import loads every
    # installed hypothesis plug-in (trio's alone takes a second). EATlas synthesises no data: unless hypothesis is
    # imported already (a test session), it is imported here without its plug-ins.
    import os
    import sys

    quiet = "hypothesis" not in sys.modules and "HYPOTHESIS_NO_PLUGINS" not in os.environ
    if quiet:
        os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
    try:
        _register()
    finally:
        if quiet:
            os.environ.pop("HYPOTHESIS_NO_PLUGINS", None)


def _register():
    def reg(fn, **kw):
        try:
            extensions.register_check_method(**kw)(fn)
        except (ValueError, KeyError):  # already registered in this interpreter
            pass

    def no_outer_whitespace(series):
        return series == series.str.strip()
    reg(no_outer_whitespace, supported_types=pd.Series)

    def pronoun_has_case(df):
        return ~((df["kind"] == "pronoun") & df["case"].isna())
    reg(pronoun_has_case, supported_types=pd.DataFrame)

    def case_only_on_pronouns(df):
        return ~((df["kind"] != "pronoun") & df["case"].notna())
    reg(case_only_on_pronouns, supported_types=pd.DataFrame)

    def unique_item_per_set(df):
        return ~df.duplicated(subset=["set_id", "item_key"], keep="first")
    reg(unique_item_per_set, supported_types=pd.DataFrame)


MESSAGES = {
    "pronoun_has_case": ("case", "a pronoun needs its case", "add case: subject, object or possessive"),
    "case_only_on_pronouns": ("case", "only pronouns take a case", "remove case or set kind: pronoun"),
    "unique_item_per_set": ("text", "duplicate item in the set (after Unicode normalisation"
                                    "{casefold})", "remove the repeated item"),
}


@lru_cache(maxsize=1)
def stimulus_schema(path: str = str(SCHEMA_FILE)) -> pa.DataFrameSchema:
    _register_checks()
    return pa.DataFrameSchema.from_yaml(Path(path))


def stimulus_table(sets: list[StimulusSet]) -> pd.DataFrame:
    rows = []
    for s in sets:
        cs = s.raw.get("case_sensitive", True) is not False
        for n, it in enumerate(s.items):
            rows.append({"file": s.file, "set_id": s.id, "version": s.version, "position": n, "item": it.text,
                         "kind": it.kind, "case": it.case, "number": it.number, "article": it.article,
                         "item_key": item_key(it.text, cs), "case_sensitive": cs})
    df = pd.DataFrame(rows, columns=["file", "set_id", "version", "position", "item", "kind", "case", "number",
                                     "article", "item_key", "case_sensitive"])
    return df.astype({"file": object, "set_id": object, "version": object, "item": object, "kind": object,
                      "case": object, "number": object, "article": object, "item_key": object,
                      "position": "int64"})


def check_stimuli(sets: list[StimulusSet]) -> list[EatlasError]:
    out = check_source_kinds(sets)
    df = stimulus_table(sets)
    if df.empty:
        return out
    try:
        stimulus_schema().validate(df, lazy=True)
    except pa.errors.SchemaErrors as err:
        return _messages(err.failure_cases, df) + out
    return out


def check_source_kinds(sets: list[StimulusSet]) -> list[EatlasError]:
    """Each set's ``source_kind`` tags against the vocabulary of schemas/stimuli.yaml."""
    rows = [{"file": s.file, "set_id": s.id, "position": n, "source_kind": tag}
            for s in sets for n, tag in enumerate(s.source_kind)]
    if not rows:
        return []
    col = stimulus_schema().columns["source_kind"]
    df = pd.DataFrame(rows).astype({"source_kind": object})
    try:
        pa.DataFrameSchema({"source_kind": col}).validate(df, lazy=True)
    except pa.errors.SchemaErrors as err:
        out = []
        for _, f in err.failure_cases.iterrows():
            idx = f.get("index")
            if idx is None or pd.isna(idx):
                continue
            row = df.loc[int(idx)]
            out.append(EatlasError(f"unknown source kind {row['source_kind']!r}", file=row["file"],
                                   obj=f"set {row['set_id']}", field=f"source_kind[{row['position']}]",
                                   hint=_check_hint("isin", "source_kind") + " (schemas/stimuli.yaml)"))
        return out
    return []


def _messages(fc: pd.DataFrame, df: pd.DataFrame) -> list[EatlasError]:
    out, seen = [], set()
    for _, f in fc.iterrows():
        check = str(f["check"])
        idx = f.get("index")
        row = df.loc[int(idx)] if idx is not None and not pd.isna(idx) and int(idx) in df.index else None
        where = {}
        if row is not None:
            where = {"file": row["file"], "obj": f"set {row['set_id']}"}
        name = check.split("(")[0]
        if name in MESSAGES:
            fld, msg, hint = MESSAGES[name]
            case_note = "" if row is None or row["case_sensitive"] else ", case folded"
            msg = msg.format(casefold=case_note)
            pos = f"items[{row['position']}]" if row is not None else "items"
            value = row["item"] if row is not None else None
            out.append(EatlasError(f"{msg}: {value!r}", field=f"{pos}.{fld}", hint=hint, **where))
        else:
            col = f.get("column")
            pos = f"items[{row['position']}]." if row is not None else ""
            fld = {"item": "text", "set_id": "id"}.get(col, col)
            msg, hint = _column_message(name, col, fld, f["failure_case"])
            out.append(EatlasError(msg, field=f"{pos}{fld}", hint=hint, **where))
        if out and out[-1].render() in seen:   # a frame-wide check reports once per column
            out.pop()
        elif out:
            seen.add(out[-1].render())
    return out


def _column_message(name: str, col, fld: str, value) -> tuple[str, str | None]:
    """EATlas's words for a failed column check of schemas/stimuli.yaml (never pandera's rendering of
    the check): the message and what to do."""
    what = "the item's text" if col == "item" else fld
    if name == "str_length" and isinstance(value, str):
        if not value.strip():
            return "the item's text is empty", "give the stimulus as the source prints it, or remove the item"
        stats = _check_statistics(col, "str_length")
        most, least = stats.get("max_value"), stats.get("min_value")
        if most is not None and len(value) > most:
            return (f"{what} is {len(value):,} characters long, over the limit of {most:,}",
                    f"a stimulus is a word, a phrase or a sentence of at most {most:,} characters")
        return (f"{what} is {len(value):,} characters long, under the minimum of {least}",
                "give the stimulus as the source prints it")
    if name == "isin":
        return f"unknown {fld} {value!r}", _check_hint(name, col)
    if name == "no_outer_whitespace":
        return f"{what} {value!r} begins or ends with white space", "remove leading/trailing spaces"
    if name == "str_matches":
        return f"{fld} {value!r} is not in the form the registry uses", _check_hint(name, col)
    if name == "not_nullable":
        return f"the item has no {fld}", f"give {fld}"
    if name.startswith("dtype"):
        return f"{fld} {value!r} is not text", "quote values such as yes/no/numbers"
    return (f"{fld} {value!r} breaks the rule {name!r} of schemas/stimuli.yaml",
            "see docs/registry-format.md for the values each field takes")


def _check_statistics(col, name: str) -> dict:
    schema = stimulus_schema()
    if col in schema.columns:
        for c in schema.columns[col].checks:
            if c.name == name:
                return dict(c.statistics or {})
    return {}


def _check_hint(name: str, col) -> str | None:
    """What to do about a failed column check of the stimulus schema."""
    schema = stimulus_schema()
    if name == "isin" and col in schema.columns:
        for c in schema.columns[col].checks:
            allowed = c.statistics.get("allowed_values") if c.name == "isin" else None
            if allowed:
                return f"one of: {', '.join(map(str, allowed))}"
    return {"str_length": "text of 1 to 4000 characters", "no_outer_whitespace": "remove leading/trailing spaces",
            "str_matches": "see docs/registry-format.md for the form of ids and versions"}.get(name)


def _forms_problems(reg: Registry, spec, where: dict) -> list[EatlasError]:
    """A test's paired forms (``forms``): every form's set is in the registry at that version, and the forms of
    one attribute are aligned (as many items each: item i of every form is the same word)."""
    out: list[EatlasError] = []
    for role in ("a", "b"):
        sizes = {}
        for form, ref in (spec.forms or {}).get(role, {}).items():
            sid, _, ver = ref.partition("@")
            fld = f"forms.{role}.{form}"
            if sid not in reg.sets:
                out.append(EatlasError(f"names stimulus set {sid!r}, which is not in the catalog", field=fld,
                                       hint="add the set, or fix the id", **where))
            elif reg.sets[sid].version != ver:
                out.append(EatlasError(f"names {sid}@{ver} but the registry holds {sid}@{reg.sets[sid].version}",
                                       field=fld, hint="update the reference (and the test's version)", **where))
            else:
                sizes[form] = len(reg.sets[sid].items)
        if len(set(sizes.values())) > 1:
            out.append(EatlasError(f"the forms of {role} are not aligned: " + ", ".join(
                f"{f} has {n} items" for f, n in sizes.items()), field=f"forms.{role}",
                hint="item i of every form is the same word in that form: give each form the same items in order",
                **where))
    return out


def check_test(reg: Registry, tid: str) -> list[EatlasError]:
    from .checks import (
        empty_sentence_problems,
        expanded_test,
        role_problems,
        sentence_count_problem,
        template_problems,
    )
    from .stimuli import build_test

    spec = reg.tests[tid]
    problems: list[EatlasError] = []
    where = {"file": spec.file, "obj": f"test {tid}"}
    sets = {}
    for role in ROLES:
        sid, ver = spec.sets[role].split("@")
        if sid not in reg.sets:
            problems.append(EatlasError(f"names stimulus set {sid!r}, which is not in the catalog", field=role,
                                        hint="add the set, or fix the id", **where))
            continue
        if reg.sets[sid].version != ver:
            problems.append(EatlasError(f"names {sid}@{ver} but the registry holds {sid}@{reg.sets[sid].version}",
                                        field=role, hint=_follow_hint(sid, ver, reg.sets[sid].version), **where))
            continue
        sets[role] = reg.sets[sid]
        if not sets[role].items:
            problems.append(EatlasError(f"set {sid} is empty", field=role, hint="add items to the set", **where))
    problems += _forms_problems(reg, spec, where)
    for level, exp in spec.expansions.items():
        fld = f"expansions.{level}"
        tid_, _, tver = exp.template.partition("@")
        tmpl = reg.templates.get(tid_)
        if tmpl is None:
            problems.append(EatlasError(f"names template {tid_!r}, which is not in the catalog",
                                        field=f"{fld}.template", hint=f"one of: {', '.join(sorted(reg.templates))}",
                                        **where))
        elif tmpl.version != tver:
            problems.append(EatlasError(f"names {exp.template} but the registry holds {tmpl.ref}",
                                        field=f"{fld}.template", hint=_follow_hint(tid_, tver, tmpl.version), **where))
        else:
            for role, fam in exp.families.items():
                if fam not in tmpl.families:
                    problems.append(EatlasError(f"names family {fam!r}, which template {tmpl.ref} does not have",
                                                field=f"{fld}.families.{role}",
                                                hint=f"one of: {', '.join(sorted(map(str, tmpl.families)))}",
                                                **where))
    unresolved = bool(problems)         # a set or template it names is not there: the rest needs them
    for p, q in (("x", "y"), ("a", "b")):
        if spec.sets[p] == spec.sets[q]:
            problems.append(EatlasError(f"{p} and {q} are the same set", field=q,
                                        hint="the two concepts of a pair need different sets", **where))
    if reg.sources and spec.source.get("paper") not in reg.sources:
        problems.append(EatlasError(f"unknown paper {spec.source.get('paper')!r}", field="source.paper",
                                    hint="add it to registry/sources.yaml", **where))
    if unresolved:
        return problems
    for p, q in (("x", "y"), ("a", "b")):
        if spec.sets[p] == spec.sets[q]:
            continue
        cs = lambda s: s.raw.get("case_sensitive", True) is not False  # noqa: E731
        kp = {item_key(i.text, cs(sets[p])): i.text for i in sets[p].items}
        both = [kp[k] for k in (item_key(i.text, cs(sets[q])) for i in sets[q].items) if k in kp]
        declared = (spec.overlap or {}).get(f"{p}/{q}")
        if declared is not None and sorted({item_key(t, cs(sets[p])) for t in declared}) == sorted(
                item_key(t, cs(sets[p])) for t in both):
            pass        # declared exactly: kept as the authors' lists hold them, and recorded with each result
        elif declared is not None:
            problems.append(EatlasError(f"overlap declares {', '.join(map(repr, declared))} in both {p} and {q}, "
                                        f"but the sets share {', '.join(map(repr, both)) or 'none'}",
                                        field=f"overlap.{p}/{q}", hint="list exactly the items both sets hold",
                                        **where))
        elif both:
            problems.append(EatlasError(f"item(s) in both {p} and {q}: {', '.join(map(repr, both))}",
                                        field=f"{p}/{q}", hint="an item may stand for one concept only, unless the "
                                        "test is a variant keeping the authors' lists (overlap:, "
                                        "docs/registry-format.md)", **where))
    problems += role_problems(spec, sets)
    if spec.level == "word" and spec.equal_targets and len(sets["x"].items) != len(sets["y"].items):
        problems.append(EatlasError(f"|X|={len(sets['x'].items)} and |Y|={len(sets['y'].items)} differ",
                                    field="x/y", hint="balance the targets or set equal_targets: false", **where))
    too_many = sentence_count_problem(reg, spec)
    if too_many is not None:
        return problems + [too_many]
    for level in spec.levels:
        if level != "word" and template_problems(reg.templates[spec.expansions[level].template.partition("@")[0]]):
            continue        # reported with the template; expanding it could allocate without bound
        try:
            # each role's sentences, expanded once per (set, template, family, vars) for all tests sharing them
            t = build_test(reg, spec, level) if level == "word" else expanded_test(reg, spec, level)
        except EatlasError as e:
            problems.append(e if e.file else EatlasError(e.message, field=f"expansions ({level})",
                                                         hint=e.hint, **where))
            continue
        problems += empty_sentence_problems(t, spec)
        for role, c in t.concepts.items():
            if len(c) == 0:
                problems.append(EatlasError(f"{role} has no stimuli at level {level}", field=role,
                                            hint="add items to the set", **where))
    return problems


def _follow_hint(eid: str, named: str, held: str) -> str:
    """What fixes a reference to another version than the registry's: ``eatlas bump --follow`` for an older one."""
    from .base import semver_key

    old, new = semver_key(named), semver_key(held)
    if old is not None and new is not None and old < new:
        return (f"run 'eatlas bump {eid} --follow': every test naming an older {eid} follows, each with its "
                "version and changelog")
    return "update the reference (and the test's version)"


def check_registry(reg: Registry) -> list[EatlasError]:
    """Every problem of the registry's sets, tests, templates and published tables (``eatlas validate`` adds
    those of the model loader entries, eatlas.encoders.loaders)."""
    return _check(reg, list(reg.sets.values()), list(reg.tests), list(reg.templates.values())) + id_collisions(reg)


def id_collisions(reg: Registry) -> list[EatlasError]:
    """A set and a test of one id: ``eatlas show ID`` (and every command taking an id) would reach only one."""
    return [EatlasError(f"set {i!r} has the id of a test ({reg.tests[i].file})", file=reg.sets[i].file,
                        obj=f"set {i}", field="id", hint="sets and tests share one space of ids: rename one")
            for i in sorted(set(reg.sets) & set(reg.tests))]


def check_tests(reg: Registry, test_ids: list[str], *, published: bool = True) -> list[EatlasError]:
    """Every check of ``validate`` that bears on these tests: their own fields, sets, templates, hashes and the
    variants they are (each entry's file read, not the rest of the registry's), and, with ``published``, the
    published tables a run stores. ``run`` refuses what this returns, before loading a model.

    What only the whole registry decides is ``validate``'s: the warnings about item kinds (they compare a set with
    every other set), the variants naming these entries, the criteria (a validity run checks its own). A template is
    vetted against the variables these tests' sets and expansions give it, the ones it is rendered with here."""
    specs = [reg.tests[t] for t in test_ids]
    set_ids = list(dict.fromkeys(ref.split("@")[0] for s in specs for ref in [*s.sets.values(),
                                                                             *s.form_sets.values()]))
    tmpl_ids = list(dict.fromkeys(e.template.partition("@")[0] for s in specs for e in s.expansions.values()))
    problems = _check(reg, [reg.sets[i] for i in set_ids if i in reg.sets], list(test_ids),
                      [reg.templates[i] for i in tmpl_ids if i in reg.templates], scope="run")
    return problems + check_published(reg) if published else problems


def check_inputs(reg: Registry, test_ids: list[str]) -> list[Path]:
    """The files :func:`check_tests` depends on: the tests', their sets' and templates' (the entries it reads),
    the bibliography and the stimulus schema."""
    from .provenance import run_inputs
    root = Path(reg.root)
    return [*(root / r["file"] for r in run_inputs(reg, test_ids)), root / "registry" / "sources.yaml", SCHEMA_FILE]


def tests_naming(reg: Registry, set_id: str, among: set[str] | None = None) -> list[str]:
    """The tests that name a set (in any role); with ``among`` ("test ID", ...), only those of them."""
    ids = reg.tests if among is None else [t for t in reg.tests if f"test {t}" in among]
    return [t for t in ids if any(ref.split("@")[0] == set_id for ref in reg.tests[t].sets.values())]


def check_entry(reg: Registry, kind: str, eid: str, among: set[str] | None = None) -> list[EatlasError]:
    """Every check of ``validate`` whose outcome an entry new to the registry can change, on a registry
    that holds it (``eatlas add``): the entry's own fields and items; for a set, every test that names it
    and the variants that name it; for a test, its sets, templates and sentence expansions as it uses them.
    The rest of the registry is as ``validate`` found it before the entry came.

    ``among`` ("set ID", "test ID"): the entries other than the new one that may name it, where the caller knows
    them: an entry can name an id new to the registry only where ``validate`` found that name missing, so these are
    the entries of its problems; the others are then not read (a registry from the cache decodes none of them)."""
    if kind == "sets":
        s = reg.sets[eid]
        tests = tests_naming(reg, eid, among)
        return _check(reg, [s], tests, [], only={("set", eid)}, among=among)
    return _check(reg, [], [eid], [], only={("test", eid)}, among=among)


def _check(reg: Registry, sets: list, test_ids: list[str], templates: list,
           only: set | None = None, among: set[str] | None = None, scope: str = "registry") -> list[EatlasError]:
    """``scope``: "registry" (validate, add: the checks these entries take part in, the registry's published
    tables and criteria when ``only`` is None) or "run" (:func:`check_tests`: these entries' own checks)."""
    from .checks import kind_problems, tag_problems, template_problems, text_problems

    run = scope == "run"
    problems = check_stimuli(sets)
    problems += text_problems(sets)
    if not run:                 # warnings only, from every set of the registry
        problems += kind_problems(reg, sets)
    problems += tag_problems([*sets, *(reg.tests[t] for t in test_ids)])
    for s in sets:
        if not s.items:
            problems.append(EatlasError("the set has no items", file=s.file, obj=f"set {s.id}", field="items",
                                        hint="add items, or remove the set and its catalog entry"))
        if reg.sources and s.source.get("paper") not in reg.sources:
            problems.append(EatlasError(f"unknown paper {s.source.get('paper')!r}", file=s.file, obj=f"set {s.id}",
                                        field="source.paper", hint="add it to registry/sources.yaml"))
    for obj in [*sets, *(reg.tests[t] for t in test_ids), *templates]:
        log = obj.raw.get("changelog") or []
        kind = type(obj).__name__.replace("StimulusSet", "set").replace("TestSpec", "test").lower()
        if semver_key(obj.version) is None:
            continue            # a new file's faulty version (eatlas add), reported as such
        if not any(isinstance(e, dict) and str(e.get("version")) == obj.version for e in log):
            problems.append(EatlasError(f"changelog has no entry for version {obj.version}", file=obj.file,
                                        obj=f"{kind} {obj.id}", field="changelog",
                                        hint="add - {version: ..., date: ..., change: ...}"))
        logged = [str(e.get("version")) for e in log if isinstance(e, dict) and semver_key(e.get("version"))]
        newest = max(logged, key=semver_key, default=None)
        if newest and semver_key(obj.version) and semver_key(newest) > semver_key(obj.version):
            problems.append(EatlasError(f"version {obj.version} is below {newest}, the newest in the changelog",
                                        file=obj.file, obj=f"{kind} {obj.id}", field="version",
                                        hint=f"versions only go up: give a version above {newest}"))
    for t in templates:
        extra = set()
        for s in (sets if run else reg.sets.values()):
            extra |= set(s.template_vars)
        for spec in ((reg.tests[i] for i in test_ids) if run else reg.tests.values()):
            for e in spec.expansions.values():
                extra |= set(e.vars)
        try:
            vet_template(t, extra)
        except EatlasError as e:
            problems.append(e)
            continue
        problems += template_problems(t)
    if run:                 # the variants these entries are; those naming them are the registry's to check
        mine = {("set", s.id) for s in sets} | {("test", t) for t in test_ids}
        problems += check_variants(reg, mine, among={f"{k} {i}" for k, i in mine})
    else:
        problems += check_variants(reg, only, among=None if among is None else among | {f"{k} {i}" for k, i in only})
    for tid in test_ids:
        problems += check_test(reg, tid)
    problems += check_hashes(reg, {"sets": {s.id for s in sets}, "tests": set(test_ids),
                                   "templates": {t.id for t in templates}})
    if only is None and not run:    # a new set or test changes no published table's checks (they only name tests)
        problems += check_published(reg)
        from .criteria import check_criteria
        problems += check_criteria(reg)
    return problems


def check_variants(reg: Registry, only: set | None = None, among: set[str] | None = None) -> list[EatlasError]:
    """``variant_of`` names a canonical entry of the same kind, which is not itself a variant; a test's
    language is the language of its sets and of the templates of its levels. With ``only`` ({(kind, id)}),
    the checks those entries bear on: theirs, those of the variants naming them, of the tests using them;
    ``among`` ("set ID", "test ID"): only these entries are looked at (see :func:`check_entry`)."""
    def entries(kind, store):
        if among is None:
            return store.values()
        named = {a.partition(" ")[2] for a in among if a.startswith(f"{kind} ")}
        return [store[i] for i in sorted(named) if i in store]      # the others not read (nor listed)

    def wanted(kind, obj) -> bool:
        return only is None or (kind, obj.id) in only or (kind, obj.variant_of) in only or (
            kind == "test" and any(("set", ref.split("@")[0]) in only for ref in obj.sets.values()))

    out = []
    for kind, store in (("set", reg.sets), ("test", reg.tests)):
        for obj in entries(kind, store):
            if obj.variant_of is None or not wanted(kind, obj):
                continue
            where = {"file": obj.file, "obj": f"{kind} {obj.id}", "field": "variant_of"}
            canon = store.get(obj.variant_of)
            if canon is None:
                out.append(EatlasError(f"names {obj.variant_of!r}, which is not a {kind} in the catalog",
                                       hint=f"variant_of is the id of the canonical {kind}", **where))
            elif canon.variant_of is not None:
                out.append(EatlasError(f"names {canon.id}, which is itself a variant of {canon.variant_of}",
                                       hint=f"link every variant to the canonical {kind}: "
                                            f"variant_of: {canon.variant_of}", **where))
    for spec in entries("test", reg.tests):
        if not wanted("test", spec):
            continue
        where = {"file": spec.file, "obj": f"test {spec.id}"}
        for role in ROLES:
            s = reg.sets.get(spec.sets[role].split("@")[0])
            if s is not None and s.language != spec.language:
                out.append(EatlasError(f"the test's language is {spec.language} but set {s.id} ({role}) is "
                                       f"{s.language}", field="language",
                                       hint="a test's sets are in the test's language; set language: on the test",
                                       **where))
        for lv, exp in spec.expansions.items():
            t = reg.templates.get(exp.template.partition("@")[0])
            if t is not None and t.language != spec.language:
                out.append(EatlasError(f"level {lv} uses template {t.id}, which is {t.language}, for a "
                                       f"{spec.language} test", field=f"expansions.{lv}.template",
                                       hint="use a template in the test's language, or leave the level out "
                                            "(a non-English test needs only the word level)", **where))
    return out


def check_published(reg: Registry) -> list[EatlasError]:
    """Every published-results CSV in the catalog reads, with the columns the store needs, and
    follows schemas/published.yaml (eatlas.registry.published)."""
    from .published import check_conventions, check_table, read_published

    out = []
    for e in reg.catalog.get("published") or []:
        try:
            read_published(reg, [e])
            out += check_table(reg, e)
        except EatlasError as err:
            out.append(err)
    return out + check_conventions(reg)


def check_hashes(reg: Registry, only: dict | None = None) -> list[EatlasError]:
    out = []
    for kind, store in (("sets", reg.sets), ("tests", reg.tests), ("templates", reg.templates)):
        for eid in (store if only is None else [i for i in only[kind] if i in store]):
            obj = store[eid]
            recorded = reg.recorded_hash.get((kind, eid))
            if recorded is None:
                out.append(EatlasError("no sha256 recorded in catalog.yaml", file="catalog.yaml",
                                       obj=f"{kind[:-1]} {eid}", field="sha256", hint="run 'eatlas catalog --sync'"))
            elif recorded != obj.hash():
                out.append(EatlasError(f"content changed but version {obj.version} did not", file=obj.file,
                                       obj=f"{kind[:-1]} {eid}", field="version",
                                       hint="bump the version, add a changelog entry, then 'eatlas catalog --sync'"))
    return out


def validate(reg: Registry) -> None:
    problems = check_registry(reg)
    if problems:
        raise ValidationFailed(problems)
