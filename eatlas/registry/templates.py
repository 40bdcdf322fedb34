"""Sandboxed Jinja expansion of word stimuli into sentences, keeping each stimulus's span.

Templates may only print variables, optionally through the filters ``lower``, ``upper`` and
``capitalize``: attribute access, calls, statements and literals are refused before rendering.
The stimulus is rendered between two private marker characters so its character span in the final
sentence is known exactly, through nested ``parts`` and capitalisation alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..errors import EatlasError
from .base import Item, Template

if TYPE_CHECKING:
    from jinja2 import nodes

ALLOWED_FILTERS = frozenset({"lower", "upper", "capitalize"})
_OPEN, _CLOSE = "\x02", "\x03"


@lru_cache(maxsize=1)
def _environment():
    """The sandbox, made when a template is first compiled (Jinja is not imported by a run at word level)."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.globals.clear()     # no range, lipsum, cycler, joiner, namespace, dict: a name is a variable we pass
    return env


_RESERVED = frozenset({"self"})   # Jinja binds {{ self }} to the template itself whatever the context


@dataclass(frozen=True)
class Expanded:
    """One stimulus as it enters the encoder: the text, where the stimulus sits in it, and why."""
    text: str
    stimulus: str            # the item as curated (e.g. "woman")
    surface: str             # the form in the sentence (e.g. "women", "He")
    span: tuple[int, int] | None
    item_index: int
    template: str | None = None     # "id@version"
    family: str | None = None
    template_index: int | None = None


def _check_node(node: nodes.Node, source: str, where: dict):
    from jinja2 import nodes

    allowed = (nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Filter)
    if not isinstance(node, allowed):
        raise EatlasError(f"template {source!r:.120} uses {type(node).__name__}; only {{{{ variable }}}} and the "
                          f"filters {', '.join(sorted(ALLOWED_FILTERS))} are allowed", **where,
                          hint="templates print variables; attribute access, calls, statements, literals are refused")
    if isinstance(node, nodes.Name) and (node.name in _RESERVED or node.ctx != "load"):
        raise EatlasError(f"template {source!r:.120} uses the reserved name {node.name!r}", **where,
                          hint="only {{ variable }} of term, article, the parts and the set's or test's vars")
    if isinstance(node, nodes.Filter):
        if node.name not in ALLOWED_FILTERS or node.args or node.kwargs or node.dyn_args or node.dyn_kwargs:
            raise EatlasError(f"template {source!r:.120} uses filter {node.name!r}; allowed: "
                              f"{', '.join(sorted(ALLOWED_FILTERS))} (no arguments)", **where,
                              hint="use {{ term }}, {{ term|capitalize }}, {{ term|lower }} or {{ term|upper }}")
    for child in node.iter_child_nodes():
        _check_node(child, source, where)


@lru_cache(maxsize=4096)
def compile_checked(source: str, file: str | None = None, obj: str | None = None, field: str | None = None):
    """Parse, vet and compile one template string; returns (compiled, variable names)."""
    from jinja2 import TemplateSyntaxError, nodes

    where = {"file": file, "obj": obj, "field": field}
    _env = _environment()
    try:
        ast = _env.parse(source)
    except TemplateSyntaxError as e:
        raise EatlasError(f"Jinja syntax error: {e.message}", **where,
                          hint="write variables as {{ name }}; braces must balance") from None
    except RecursionError:
        raise EatlasError("Jinja syntax error: nested too deeply", **where,
                          hint="templates print variables: {{ term }}") from None
    _check_node(ast, source, where)
    names = frozenset(n.name for n in ast.find_all(nodes.Name))
    return _env.from_string(source), names


def article_for(term: str) -> str:
    """May et al.'s rule: 'an' before a vowel letter or 'honor', except European/Ukrainian."""
    w = term.lower()
    if w.startswith(("european", "ukrainian")):
        return "a"
    return "an" if w[:1] in "aeiou" or w.startswith("honor") else "a"


def plural_of(term: str) -> str:
    """May et al.'s plural rule, applied to the last word of a multi-word noun."""
    head, _, last = term.rpartition(" ")
    low = last.lower()
    if low in ("woman", "man"):
        p = last[:-2] + "en"
    elif len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        p = last[:-1] + "ies"
    elif low.endswith(("ch", "sh", "s")):
        p = last + "es"
    else:
        p = last + "s"
    return f"{head} {p}" if head else p


def singular_of(term: str) -> str:
    head, _, last = term.rpartition(" ")
    s = "child" if last.lower() == "children" else (last[:-1] if last.endswith("s") else last)
    return f"{head} {s}" if head else s


def forms(item: Item) -> tuple[str, str]:
    """(singular, plural) surface forms of a countable noun."""
    if item.number == "plural":
        return item.singular or singular_of(item.text), item.text
    return item.text, item.plural or plural_of(item.text)


def families_for(item: Item) -> list[tuple[str, str]]:
    """[(family, surface form)] for an item, chosen from its stated kind."""
    k = item.kind
    if k in ("name", "adjective", "mass_noun", "verb"):
        return [(k, item.text)]
    if k == "pronoun":
        return [(f"pronoun_{item.case}", item.text)]
    if k in ("noun", "group_term"):
        who = "person" if k == "group_term" else "thing"
        sing, plur = forms(item)
        return [(f"noun_singular_{who}", sing), (f"noun_plural_{who}", plur)]
    raise EatlasError(f"items of kind {k!r} are not expanded by templates", obj=item.text, field="kind")


def _capitalize_first(s: str) -> str:
    for i, ch in enumerate(s):
        if ch in (_OPEN, _CLOSE):
            continue
        return s[:i] + ch.upper() + s[i + 1:]
    return s


def _strip_markers(s: str) -> tuple[str, tuple[int, int] | None]:
    out, span, start = [], None, None
    for ch in s:
        if ch == _OPEN:
            start = len(out)
        elif ch == _CLOSE:
            if span is None and start is not None:
                span = (start, len(out))
        else:
            out.append(ch)
    return "".join(out), span


def render(source: str, context: dict, *, where: dict) -> str:
    from jinja2 import UndefinedError

    compiled, _ = compile_checked(source, where.get("file"), where.get("obj"), where.get("field"))
    try:
        return compiled.render(**context)
    except UndefinedError as e:
        raise EatlasError(f"template refers to an undefined variable: {e.message}", **where,
                          hint="variables: term, article, the template's parts, the set's template_vars and "
                               "the test's vars for this expansion") from None


def expand_item(item: Item, index: int, template: Template, *, family: str | None = None,
                variables: dict | None = None) -> list[Expanded]:
    """All sentences for one stimulus (one family per role if given, else by kind)."""
    if item.kind == "sentence":
        return [Expanded(text=item.text, stimulus=item.text, surface=item.text, span=None, item_index=index)]
    pairs = [(family, item.text)] if family else families_for(item)
    out = []
    for fam, surface in pairs:
        where = {"file": template.file, "obj": f"template {template.id}", "field": f"families.{fam}"}
        if fam not in template.families:
            raise EatlasError(f"template has no family {fam!r} for stimulus {item.text!r} ({item.kind})", **where,
                              hint=f"families: {', '.join(sorted(map(str, template.families)))}")
        ctx = dict(variables or {})
        ctx["term"] = f"{_OPEN}{surface}{_CLOSE}"
        ctx["article"] = item.article or article_for(surface)
        for pname in _parts_needed(template, fam):
            ctx[pname] = render(template.parts[pname], ctx, where={**where, "field": f"parts.{pname}"})
        for n, src in enumerate(template.families[fam]):
            text, span = _strip_markers(_capitalize_first(render(src, ctx, where=where)))
            out.append(Expanded(text=text, stimulus=item.text, surface=text[span[0]:span[1]] if span else surface,
                                span=span, item_index=index, template=template.ref, family=fam, template_index=n))
    return out


def _parts_needed(template: Template, family: str) -> list[str]:
    """The parts a family uses, directly or through other parts, in dependency order."""
    order: list[str] = []

    def visit(src: str, seen: tuple):
        for name in sorted(compile_checked(src, template.file, f"template {template.id}")[1] & set(template.parts)):
            if name in seen:
                raise EatlasError(f"part {name!r} refers to itself", file=template.file, obj=f"template {template.id}",
                                  field=f"parts.{name}", hint="a part may use other parts, not itself")
            if name not in order:
                visit(template.parts[name], seen + (name,))
                order.append(name)
    for src in template.families[family]:
        visit(src, ())
    return order


def vet_template(template: Template, extra_vars: set[str] = frozenset()) -> None:
    """Static check of every string of a template file (syntax, allowed nodes, known variables)."""
    known = {"term", "article"} | set(template.parts) | set(extra_vars) | set(template.raw.get("variables") or [])
    for where_field, src in ([(f"parts.{k}", v) for k, v in template.parts.items()]
                             + [(f"families.{f}[{i}]", s) for f, lst in template.families.items()
                                for i, s in enumerate(lst)]):
        _, names = compile_checked(src, template.file, f"template {template.id}", where_field)
        unknown = sorted(names - known)
        if unknown:
            raise EatlasError(f"template refers to unknown variable(s) {', '.join(unknown)}", file=template.file,
                              obj=f"template {template.id}", field=where_field,
                              hint=f"known: {', '.join(sorted(known))}")
