"""Checks of registry content beyond the per-file parsers, shared by ``validate`` and ``run``.

* stimulus text: refused characters, mixed scripts, look-alike items (:mod:`eatlas.registry.textcheck`);
* test structure: a set in two roles, an item (or a look-alike of it) in two roles;
* templates: every family sentence carries the stimulus, and the expansion is bounded (part depth,
  sentence length, sentence count) before anything is expanded;
* tags: a list of ids, matched as whole values.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import combinations

from ..errors import EatlasError
from .base import ID_RE, ROLES, Registry, StimulusSet, Template, TestSpec
from .textcheck import bad_chars, char_name, differing, item_key, mixed_scripts, skeleton

# Bounds on template expansion. The project's templates use parts one level deep, sentences of at
# most ~700 characters of template text and 8 sentences per family; the bounds leave wide room.
MAX_PART_DEPTH = 8              # parts using parts using parts ...
MAX_TEMPLATE_CHARS = 20_000     # one sentence's template text after every part is substituted
MAX_VARIABLE_USES = 200         # variables printed in one sentence after substitution
MAX_FAMILY_SENTENCES = 1_000    # template strings in one family
MAX_TEST_SENTENCES = 500_000    # sentences of one test at one level (items x family sentences, all roles)

ROLE_NAMES = {"x": "target X", "y": "target Y", "a": "attribute A", "b": "attribute B"}


class ValidationWarning(EatlasError):
    """A problem validate prints as a warning and that does not fail validate, add or run.

    * An item shared by a target and an attribute set. Caliskan et al. (2017) define the four concepts
      as distinct, but authors' lists sometimes share an item (WEATHub: weathub_ko_weat15,
      weathub_ar_weat14), and a list is never altered; the effect size then includes the item's
      similarity with itself.
    * A set about people whose items are of a kind templates read as things (:func:`kind_problems`)."""


_FIELDS = ("message", "file", "obj", "field", "hint")


def problem_rows(problems: list[EatlasError]) -> list[dict]:
    """Problems as plain rows (kept by the registry cache)."""
    return [{"warning": isinstance(p, ValidationWarning), **{k: getattr(p, k) for k in _FIELDS}} for p in problems]


def from_rows(rows: list[dict]) -> list[EatlasError] | None:
    """The problems of :func:`problem_rows`; None when the rows are not such rows."""
    try:
        return [(ValidationWarning if r["warning"] else EatlasError)(r["message"], **{k: r[k] for k in _FIELDS[1:]})
                for r in rows]
    except (KeyError, TypeError):
        return None


def split_warnings(problems: list) -> tuple[list, list]:
    """(errors, warnings)."""
    return ([p for p in problems if not isinstance(p, ValidationWarning)],
            [p for p in problems if isinstance(p, ValidationWarning)])


def _show(text: str) -> str:
    """An item as printed in a message: repr, so invisible characters show as escapes."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _case_sensitive(s: StimulusSet) -> bool:
    return s.raw.get("case_sensitive", True) is not False


# --------------------------------------------------------------------------------- stimulus text
def text_problems(sets: list[StimulusSet]) -> list[EatlasError]:
    """Refused characters, mixed scripts and look-alike items within each set."""
    out = []
    for s in sets:
        where = {"file": s.file, "obj": f"set {s.id}"}
        seen: dict[str, tuple[int, str, str]] = {}
        for n, it in enumerate(s.items):
            for fld in ("text", "plural", "singular"):
                value = getattr(it, fld)
                if not value:
                    continue
                for ch, what in bad_chars(value):
                    out.append(EatlasError(f"{what} {char_name(ch)} in {_show(value)}", field=f"items[{n}].{fld}",
                                           hint="remove it; stimuli are plain visible text (a space is U+0020)",
                                           **where))
                mixed = mixed_scripts(value)
                if mixed:
                    parts = ", ".join(f"{sc.title()} ({char_name(ch)})" for sc, ch in mixed.items())
                    out.append(EatlasError(f"{_show(value)} mixes scripts: {parts}", field=f"items[{n}].{fld}",
                                           hint="write each item in one script; a look-alike letter from another "
                                                "script is a different word to a model", **where))
            key = item_key(it.text, _case_sensitive(s))
            sk = skeleton(key)
            if sk in seen and seen[sk][1] != key:
                m, other, _ = seen[sk]
                out.append(EatlasError(
                    f"{_show(it.text)} looks like {_show(other)} (items[{m}]): "
                    f"{', '.join(differing(it.text, other)) or 'look-alike characters'}",
                    field=f"items[{n}].text", hint="a look-alike is a duplicate to a reader; keep one of them",
                    **where))
            seen.setdefault(sk, (n, it.text, key))
        for k, v in (s.template_vars or {}).items():
            for ch, what in bad_chars(v):
                out.append(EatlasError(f"{what} {char_name(ch)} in {_show(v)}", field=f"template_vars.{k}",
                                       hint="remove it", **where))
    return out


# --------------------------------------------------------------------------------- kind and items
THING_KINDS = ("noun", "mass_noun")          # the kinds sentence templates read as things
PERSON_KINDS = ("group_term", "name")        # the kinds they read as people
# Words of a set's concept, id or tags that say its items are people (not guessed from the items).
_PEOPLE = re.compile(r"(?<![a-z])(occupations?|professions?|professionals?|workers?|people|persons?)(?![a-z])")


def _people_words(s: StimulusSet) -> str | None:
    tags = s.raw.get("tags") if isinstance(s.raw.get("tags"), list) else []
    text = " ".join([s.concept, s.id.replace("_", " "), *(t for t in tags if isinstance(t, str))])
    m = _PEOPLE.search(re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())
    return m.group(1) if m else None


def _thing_sentence(it) -> str:
    """How May et al.'s bleached templates read a noun or mass noun (their families noun_*_thing, mass_noun)."""
    from .templates import article_for, forms

    if it.kind == "mass_noun":
        return f"This is {it.text}."
    sing, plur = forms(it)
    return f"{plur[:1].upper()}{plur[1:]} are things." if it.number == "plural" else \
        f"{article_for(sing).capitalize()} {sing} is a thing."


def person_items(reg: Registry) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(language, case-folded item) -> {person kind: the sets that give the item that kind}."""
    out: dict = {}
    for s in reg.sets.values():
        for it in s.items:
            if it.kind in PERSON_KINDS:
                out.setdefault((s.language, item_key(it.text, False)), {}).setdefault(it.kind, set()).add(s.id)
    return out


def kind_problems(reg: Registry, sets: list[StimulusSet]) -> list[EatlasError]:
    """A warning for each set whose items are of a kind that templates read as things (noun, mass_noun)
    while the set is plainly about people: "A carpenter is a thing." It is about people when its concept,
    id or tags say occupations, professions, workers, people or persons (the majority of its items are
    then things to the templates), or when most of those items are people (group_term, name) in the
    registry's own sets of the same language. Nothing is guessed from capital letters."""
    if not any(it.kind in THING_KINDS for s in sets for it in s.items):
        return []                   # nothing to warn about: the registry's sets are not read (eatlas add of a set)
    index = person_items(reg)
    occupation_sets = sorted(o.id for o in reg.sets.values() if _people_words(o) and o.items
                             and sum(i.kind == "group_term" for i in o.items) * 2 > len(o.items))
    out = []
    for s in sets:
        things = [(n, it) for n, it in enumerate(s.items) if it.kind in THING_KINDS]
        if not things:
            continue
        word = _people_words(s)
        known = {}
        for n, it in things:
            elsewhere = {k: ids - {s.id} for k, ids in index.get((s.language, item_key(it.text, False)), {}).items()}
            elsewhere = {k: ids for k, ids in elsewhere.items() if ids}
            if elsewhere:
                known[n] = elsewhere
        if word and len(things) * 2 >= len(s.items):
            suggest, why = "group_term", f"the set's concept says {word}"
            seen_in = occupation_sets
        elif len(known) >= 2 and len(known) * 2 >= len(things):
            kinds = Counter(k for e in known.values() for k in e)
            suggest = kinds.most_common(1)[0][0]
            seen_in = sorted({i for e in known.values() for i in e.get(suggest, ())})
            shown = ", ".join(_show(s.items[n].text) for n in list(known)[:3])
            more = ", ..." if len(known) > 3 else ""
            why = f"{len(known)} of them ({shown}{more}) are {suggest} in the registry's own sets"
        else:
            continue
        n0, first = things[0]
        kinds = sorted({it.kind for _, it in things})
        declared = s.raw.get("kind") in THING_KINDS and "kind" not in (
            s.raw["items"][n0] if isinstance(s.raw.get("items"), list) and isinstance(s.raw["items"][n0], dict)
            else {})
        where = f" ({', '.join(seen_in[:3])}{', ...' if len(seen_in) > 3 else ''})" if seen_in else ""
        out.append(ValidationWarning(
            f"{len(things)} of {len(s.items)} items are kind {' or '.join(kinds)}, which sentence templates read "
            f"as things ({_show(_thing_sentence(first))}), but {why}",
            file=s.file, obj=f"set {s.id}", field="kind" if declared else f"items[{n0}].kind",
            hint=f"if the items denote people, write kind: {suggest}, as the registry's sets of "
                 f"{'occupations' if suggest == 'group_term' and word else 'such items'} do{where}"))
    return out


# --------------------------------------------------------------------------------- test structure
def role_problems(spec: TestSpec, sets: dict[str, StimulusSet]) -> list[EatlasError]:
    """A set named in two roles, and items shared (exactly, after normalisation, or as look-alikes)
    by two roles. Targets and attributes are distinct concepts (Caliskan et al. 2017): an item in a
    target and an attribute set is compared with itself (cosine 1) and inflates the effect size, so
    it is an error like an item in both targets."""
    where = {"file": spec.file, "obj": f"test {spec.id}"}
    out = []
    for p, q in combinations(ROLES, 2):
        if p not in sets or q not in sets:
            continue
        if spec.sets[p] == spec.sets[q]:
            if (p, q) not in (("x", "y"), ("a", "b")):     # those two already have their own message
                out.append(EatlasError(f"set {spec.sets[p]} is both {ROLE_NAMES[p]} and {ROLE_NAMES[q]}",
                                       field=f"{p}/{q}", hint="each role needs its own set; targets and "
                                       "attributes are different concepts", **where))
            continue
        kp = {}
        for i in sets[p].items:
            kp.setdefault(item_key(i.text, _case_sensitive(sets[p])), i.text)
        sp = {skeleton(k): v for k, v in kp.items()}
        exact, alike = [], []
        for i in sets[q].items:
            k = item_key(i.text, _case_sensitive(sets[q]))
            if k in kp:
                exact.append(kp[k])
            elif skeleton(k) in sp:
                alike.append((i.text, sp[skeleton(k)]))
        declared = (spec.overlap or {}).get(f"{p}/{q}")
        if (p, q) in (("x", "y"), ("a", "b")):
            pass                    # x/y and a/b: reported (or their declaration checked) by schemas.check_test
        elif declared is not None:
            keys = {item_key(t, _case_sensitive(sets[p])) for t in declared}
            if keys != {item_key(t, _case_sensitive(sets[p])) for t in exact}:
                out.append(EatlasError(f"overlap declares {', '.join(map(repr, declared))} in both {p} and {q}, "
                                       f"but the sets share {', '.join(map(repr, exact)) or 'none'}",
                                       field=f"overlap.{p}/{q}", hint="list exactly the items both sets hold",
                                       **where))
        elif exact:
            out.append(ValidationWarning(f"item(s) in both {ROLE_NAMES[p]} and {ROLE_NAMES[q]}: "
                                         f"{', '.join(map(_show, exact))}", field=f"{p}/{q}",
                                         hint=f"the item is compared with itself (cosine 1); where the authors' lists "
                                              f"hold it, declare it (overlap: {{{p}/{q}: [...]}}) and say so in the "
                                              "test's notes", **where))
        for mine, theirs in alike:
            out.append(EatlasError(f"{_show(mine)} in {q} looks like {_show(theirs)} in {p}: "
                                   f"{', '.join(differing(mine, theirs)) or 'look-alike characters'}",
                                   field=f"{p}/{q}", hint="a look-alike item stands for the same word to a reader; "
                                   "an item may stand for one concept only", **where))
    return out


# --------------------------------------------------------------------------------- templates
@lru_cache(maxsize=4096)
def _shape(source: str) -> tuple[int, tuple[tuple[str, int], ...]]:
    """(characters of literal text, ((variable, times printed), ...)) of one template string."""
    from jinja2 import nodes

    from .templates import _environment

    ast = _environment().parse(source)
    literal = sum(len(n.data) for n in ast.find_all(nodes.TemplateData))
    return literal, tuple(sorted(Counter(n.name for n in ast.find_all(nodes.Name)).items()))


def template_problems(t: Template) -> list[EatlasError]:
    """Static bounds and the stimulus in every family sentence, without expanding anything.

    Each family sentence's size is computed from the template text: literal characters plus, for
    each part it prints, that part's size times the number of times it is printed (recursively).
    A template whose parts nest too deep or whose sentences would be too long is refused, naming
    it, before a single sentence is rendered."""
    from .templates import compile_checked

    where = {"file": t.file, "obj": f"template {t.id}"}
    memo: dict[str, tuple[int, int, int, Counter]] = {}
    declared = t.raw.get("variables")
    needed = [v for v in declared if isinstance(v, str)] if isinstance(declared, list) and declared else ["term"]

    class Bomb(Exception):
        pass

    def size(src: str, fld: str, path: tuple) -> tuple[int, int, int, Counter]:
        """(depth, template chars, variables printed, times each needed variable is printed)"""
        compile_checked(src, t.file, where["obj"], fld)          # syntax and allowed nodes first
        literal, uses = _shape(src)
        depth, chars, nvars, terms = 0, literal, 0, Counter()
        for name, k in uses:
            if name in t.parts:
                if name in path:
                    raise EatlasError(f"part {name!r} refers to itself", field=f"parts.{name}",
                                      hint="a part may use other parts, not itself", **where)
                if len(path) >= MAX_PART_DEPTH:
                    raise Bomb(f"parts nest more than {MAX_PART_DEPTH} deep ({' -> '.join(path + (name,))})")
                if name not in memo:
                    memo[name] = size(t.parts[name], f"parts.{name}", path + (name,))
                d, c, v, tm = memo[name]
                depth, chars, nvars = max(depth, d + 1), chars + k * c, nvars + k * v
                terms.update({x: k * m for x, m in tm.items()})
            else:
                nvars += k
                terms[name] += k if name in needed else 0
            if chars > MAX_TEMPLATE_CHARS or nvars > MAX_VARIABLE_USES:
                raise Bomb(f"a sentence expands to more than {MAX_TEMPLATE_CHARS:,} characters of template "
                           f"text or prints more than {MAX_VARIABLE_USES} variables")
        return depth, chars, nvars, terms

    out = []
    for fam, sentences in t.families.items():
        if len(sentences) > MAX_FAMILY_SENTENCES:
            out.append(EatlasError(f"family has {len(sentences):,} sentences, over the limit of "
                                   f"{MAX_FAMILY_SENTENCES:,}", field=f"families.{fam}",
                                   hint="split the template", **where))
            continue
        for i, src in enumerate(sentences):
            fld = f"families.{fam}[{i}]"
            try:
                _, _, _, terms = size(src, fld, ())
            except Bomb as b:
                out.append(EatlasError(f"expansion refused: {b}", field=fld,
                                       hint="templates are sentences; write the parts out instead of nesting "
                                            "repeated parts", **where))
                return out
            except EatlasError as e:
                out.append(e if e.file else EatlasError(e.message, field=e.field or fld, hint=e.hint, **where))
                return out
            for var in needed:
                if terms[var]:
                    continue
                what = "the stimulus" if var == "term" else f"{{{{ {var} }}}}, a variable the template declares"
                out.append(EatlasError(f"the sentence {_show(src)} never prints {what}", field=fld,
                                       hint="print it with {{ term }} (directly or through a part); a sentence "
                                            "without the stimulus measures nothing about it", **where))
                break
    return out


def template_ok(t: Template) -> None:
    """Raise the first template problem (used before expanding at run time); cached per object."""
    cached = t.__dict__.get("_bounds_checked")
    if cached == t.hash():
        return
    problems = template_problems(t)
    if problems:
        raise problems[0]
    t.__dict__["_bounds_checked"] = t.hash()


def sentence_count_problem(reg: Registry, spec: TestSpec) -> EatlasError | None:
    """The number of sentences a test's expansions would make, refused over the bound (counted, not made)."""
    from .templates import families_for

    for level, exp in spec.expansions.items():
        t = reg.templates.get(exp.template.partition("@")[0])
        if t is None:
            continue
        total = 0
        for role in ROLES:
            s = reg.sets.get(spec.sets[role].split("@")[0])
            for it in (s.items if s else []):
                if it.kind == "sentence":
                    total += 1
                    continue
                fams = [exp.families[role]] if role in exp.families else \
                    [f for f, _ in _safe_families(it, families_for)]
                total += sum(len(t.families.get(f, ())) for f in fams)
        if total > MAX_TEST_SENTENCES:
            return EatlasError(f"expansion {level} would make {total:,} sentences, over the limit of "
                               f"{MAX_TEST_SENTENCES:,}", file=spec.file, obj=f"test {spec.id}",
                               field=f"expansions.{level}", hint="use fewer items or fewer template sentences")
    return None


def _safe_families(item, families_for):
    try:
        return families_for(item)
    except EatlasError:
        return []


def expanded_test(reg: Registry, spec: TestSpec, level: str):
    """The test's roles expanded at a sentence level, for validation: like stimuli.build_test without
    the truncation, each role's expansion computed once per registry for every test that shares it."""
    from types import SimpleNamespace

    from ..levels import level as get_level
    from .templates import expand_item

    exp = spec.expansions[get_level(level).expansion]
    tmpl = reg.get_template(exp.template)
    cache = reg.__dict__.setdefault("_validation_expansions", {})
    concepts = {}
    for r in ROLES:
        s = reg.get_set(spec.sets[r])
        variables = {**s.template_vars, **exp.vars}
        key = (s.ref, tmpl.ref, exp.families.get(r), tuple(sorted(variables.items())))
        if key not in cache:
            try:
                cache[key] = [e for n, it in enumerate(s.items)
                              for e in expand_item(it, n, tmpl, family=exp.families.get(r), variables=variables)]
            except EatlasError as e:
                cache[key] = e
        if isinstance(cache[key], EatlasError):
            raise cache[key]
        concepts[r] = _Role(cache[key])
    return SimpleNamespace(level=level, concepts=concepts)


class _Role:
    def __init__(self, stimuli):
        self.stimuli = stimuli

    def __len__(self):
        return len(self.stimuli)


def empty_sentence_problems(test, spec: TestSpec) -> list[EatlasError]:
    """Sentences that rendered to nothing but whitespace."""
    out = []
    for role, c in test.concepts.items():
        for st in c.stimuli:
            if not st.text.strip():
                out.append(EatlasError(f"{st.template} family {st.family} sentence {st.template_index} renders "
                                       f"{_show(st.stimulus)} as an empty sentence", file=spec.file,
                                       obj=f"test {spec.id}", field=f"{role} ({test.level})",
                                       hint="every sentence must hold the stimulus"))
                break
    return out


# --------------------------------------------------------------------------------- tags
def tag_problems(objs) -> list[EatlasError]:
    out = []
    for o in objs:
        tags = o.raw.get("tags")
        if tags is None:
            continue
        kind = "set" if isinstance(o, StimulusSet) else "test"
        if not isinstance(tags, list) or not all(isinstance(x, str) and ID_RE.match(x) for x in tags):
            out.append(EatlasError(f"tags must be a list of ids, got {tags!r:.60}", file=o.file, obj=f"{kind} {o.id}",
                                   field="tags", hint="write tags: [ibd_validation]"))
    return out


def has_tag(obj, tag: str) -> bool:
    """Whether ``obj`` (a set or test) carries ``tag`` as one whole value of its ``tags`` list."""
    tags = obj.raw.get("tags")
    return isinstance(tags, list) and any(isinstance(x, str) and x == tag for x in tags)
