"""Loading the curated registry: catalog.yaml, stimulus sets, tests, templates.

The registry knows nothing of models. Files are safe-loaded YAML; every problem is raised as an
:class:`EatlasError` naming the file, the object and the field.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from ..errors import EatlasError
from ..levels import EXPANSIONS
from ..levels import NAMES as LEVELS  # noqa: F401 - kept for importers

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_+\-]*$")
SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def semver_key(version) -> tuple[int, ...] | None:
    """(major, minor, patch) for ordering versions; None for anything that is not MAJOR.MINOR.PATCH."""
    return tuple(int(x) for x in str(version).split(".")) if SEMVER_RE.match(str(version)) else None
REF_RE = re.compile(r"^(?P<id>[^@\s]+)@(?P<version>[^@\s]+)$")
KINDS = ("name", "noun", "group_term", "mass_noun", "adjective", "verb", "pronoun", "sentence", "word")
ROLES = ("x", "y", "a", "b")
MAX_FILE_BYTES = 2_000_000
DEFAULT_LANGUAGE = "en"
# BCP-47 (RFC 5646) language tag in its canonical case: language (2-3 letters; no 5-8 letter subtag is
# registered), optional extlang, Script (Title case), REGION (upper case or 3 digits), variants; -x- private use.
LANGUAGE_RE = re.compile(r"^(?P<lang>[a-z]{2,3}(-[a-z]{3}){0,3})(-(?P<script>[A-Z][a-z]{3}))?"
                         r"(-(?P<region>[A-Z]{2}|[0-9]{3}))?(-([a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*(-x(-[a-z0-9]{1,8})+)?$")

SET_KEYS = {"id", "version", "concept", "license", "source", "notes", "changelog", "items",
            "template_vars", "group", "case_sensitive", "tags",
            "language", "kind", "source_kind", "variant", "variant_of", "license_note"}
ITEM_KEYS = {"text", "kind", "case", "number", "plural", "singular", "article", "note"}
TEST_KEYS = {"id", "version", "title", "bias_type", "level", "license", "source", "x", "y", "a", "b",
             "expansions", "aliases", "notes", "changelog", "equal_targets", "equal_attributes",
             "methods", "tags", "language", "variant", "variant_of", "license_note", "overlap"}
TEMPLATE_KEYS = {"id", "version", "license", "source", "description", "parts", "families", "changelog",
                 "language", "variables"}
CATALOG_KEYS = {"sets", "tests", "templates", "published"}
# A variant (e.g. the list an author's code ran, beside the paper's) is a separate id linked to its
# canonical entry of the same kind: `variant: <short label>`, `variant_of: <id>` (docs/registry-format.md).


def default_root() -> Path:
    env = os.environ.get("EATLAS_REGISTRY")
    if env:
        return Path(env)
    from ..paths import data_root
    return data_root()


MAX_YAML_NODES = 250_000     # nodes after expanding aliases (a "billion laughs" file stops here)
MAX_YAML_DEPTH = 64
_SAFE_TAGS = frozenset(k for k in yaml.SafeLoader.yaml_constructors if k) | {"tag:yaml.org,2002:merge"}


def _vet_yaml(root: yaml.Node, shown: str) -> None:
    """Refuse what safe_load would accept but a registry file must not hold, before constructing:
    tags that name code (``!!python/...``) or are unknown, recursive or exploding aliases,
    absurd nesting, and duplicate keys (YAML keeps the last one silently)."""
    def where(node) -> str:
        m = node.start_mark
        return f" at line {m.line + 1}, column {m.column + 1}"

    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            kids = node.value if isinstance(node, yaml.SequenceNode) else \
                [n for kv in node.value for n in kv] if isinstance(node, yaml.MappingNode) else []
            size[nid] = 1 + sum(size[id(k)] for k in kids)
            if size[nid] > MAX_YAML_NODES:
                raise EatlasError(f"the document expands to more than {MAX_YAML_NODES:,} values through aliases"
                                  f"{where(node)}", file=shown,
                                  hint="write the values out; registry files need no anchors (&) or aliases (*)")
            continue
        if nid in size:
            continue
        if nid in on_path:
            raise EatlasError(f"recursive alias{where(node)}", file=shown,
                              hint="registry files need no anchors (&) or aliases (*)")
        if node.tag not in _SAFE_TAGS:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            code = "python" in tag
            raise EatlasError(f"tag {tag} is not allowed{where(node)}" + (
                "; registry files are data and are safe-loaded, nothing in them is run" if code else ""),
                file=shown, hint="remove the tag and write plain YAML values")
        if len(on_path) >= MAX_YAML_DEPTH:
            raise _too_deep(node.start_mark, shown)
        on_path.add(nid)
        stack.append((node, True))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((k, False) for k in node.value)
        elif isinstance(node, yaml.MappingNode):
            seen = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    key = (k.tag, k.value)
                    if key in seen:
                        raise EatlasError(f"duplicate key {k.value!r}{where(k)} (first at line {seen[key]})",
                                          file=shown, field=k.value,
                                          hint="YAML would silently keep only the last one; merge or remove one")
                    seen[key] = k.start_mark.line + 1
                stack.extend(((k, False), (v, False)))


_MAY_ALIAS = re.compile(r"[&*!]|<<")
_STR_TAG = "tag:yaml.org,2002:str"


class _NotPlain(Exception):
    """The document needs the full path (:func:`_vet_yaml`, then PyYAML's constructor)."""


def _build_plain(root: yaml.Node, loader, shown: str) -> Any:
    """Construct a document that has no anchors, aliases, tags or merge keys (the text has none of
    ``& * ! <<``), making :func:`_vet_yaml`'s checks on the way: depth, size and duplicate keys.
    About three times faster than vetting and then constructing; the result is the same."""
    count = 0

    def build(node, depth):
        nonlocal count
        count += 1
        if depth >= MAX_YAML_DEPTH or count > MAX_YAML_NODES:
            raise _NotPlain
        if isinstance(node, yaml.ScalarNode):
            return node.value if node.tag == _STR_TAG else loader.construct_object(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return [build(k, depth + 1) for k in node.value]
        out, seen = {}, set()
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or (k.tag, k.value) in seen:
                raise _NotPlain     # complex or duplicate key: the full path explains it
            seen.add((k.tag, k.value))
            out[build(k, depth + 1)] = build(v, depth + 1)
        return out
    return build(root, 0)


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)    # libyaml when built with it: ~10x faster


def _too_deep(mark, shown: str) -> EatlasError:
    return EatlasError(f"nested more than {MAX_YAML_DEPTH} levels deep at line {mark.line + 1}, "
                       f"column {mark.column + 1}", file=shown,
                       hint="registry files are a few levels deep; check the brackets and indentation")


def _event_depth(text: str, shown: str) -> None:
    """Raise EATlas's depth error when the document nests more than MAX_YAML_DEPTH levels before any
    syntax error; return otherwise. It reads the event stream of PyYAML's pure-Python parser, which has
    no nesting limit of its own and does not recurse, and stops at the first level too deep. So the
    message is the same whether the installed parser stops deep nesting itself (libyaml 0.2.6, in
    PyYAML 6.0.4's wheels: at 1,000 levels, in its own words), runs out of Python stack (the
    pure-Python composer, at a few hundred), or has no limit. Called only when parsing failed: normal
    files pay nothing for it."""
    parser = yaml.SafeLoader(text)
    depth = 0
    try:
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, (yaml.CollectionStartEvent, yaml.ScalarEvent, yaml.AliasEvent)) \
                    and depth >= MAX_YAML_DEPTH:        # depth: the node's open ancestors, as in _vet_yaml
                raise _too_deep(event.start_mark, shown)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except (yaml.YAMLError, RecursionError):
        return                  # a syntax error before any level too deep: the caller reports its own
    finally:
        parser.dispose()


def parse_yaml(text: str, shown: str) -> Any:
    """Safe-load one YAML document, bounded (see :func:`_vet_yaml`); None for an empty document."""
    loader = None
    try:
        loader = _Loader(text)      # the pure-Python reader refuses control characters here already
        try:
            node = loader.get_node() if loader.check_node() else None
            second = loader.check_node()
        except (yaml.YAMLError, RecursionError) as e:
            if not isinstance(e, yaml.reader.ReaderError):
                _event_depth(text, shown)       # too deep is said in EATlas's words, whatever the parser
            raise
        if second:
            raise EatlasError("the file holds more than one YAML document", file=shown,
                              hint="one document per file: a line '---' after the first document starts another; "
                                   "remove it and what follows, or move that part to a file of its own")
        if node is None:
            return None
        if not _MAY_ALIAS.search(text):     # no anchor, alias, tag or merge key: one checking pass builds it
            try:
                return _build_plain(node, loader, shown)
            except _NotPlain:
                pass
        _vet_yaml(node, shown)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as e:
        raise EatlasError(f"malformed YAML: character U+{e.character:04X} at position {e.position} is not allowed",
                          file=shown, hint="remove the control character; registry files are plain text") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        lines = text.splitlines()
        line = lines[mark.line] if mark is not None and 0 <= mark.line < len(lines) else ""
        tab = mark is not None and "\t" in line[:mark.column + 1]
        hint = "indent with spaces: YAML does not allow tabs" if tab else \
            "check the indentation, the colons and the quoting near that line"
        raise EatlasError(f"malformed YAML{where}: {problem}", file=shown, hint=hint) from None
    except UnicodeEncodeError:      # lone surrogates (not from a file: read_yaml decodes strict UTF-8)
        raise EatlasError("malformed YAML: text that is not valid Unicode", file=shown,
                          hint="save the file as UTF-8") from None
    except RecursionError:
        raise EatlasError("malformed YAML: nested too deeply", file=shown,
                          hint="registry files are a few levels deep; check the brackets") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml(path: Path, *, root: Path | None = None, shown: str | None = None) -> Any:
    """Safe-load one YAML file with size, encoding and structure checks (a leading BOM is fine)."""
    shown = shown or _shown(path, root)
    if not path.is_file():
        raise EatlasError("file not found", file=shown, hint="check the path, or run 'eatlas catalog --sync'")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise EatlasError(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for a registry file",
                          file=shown, hint="split it into smaller sets")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise EatlasError(f"not valid UTF-8 (byte {e.start})", file=shown, hint="save the file as UTF-8") from None
    return parse_yaml(text, shown)


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)


def normalize_text(s: str) -> str:
    return unicodedata.normalize("NFC", s).strip()


def content_hash(payload: Any) -> str:
    """sha256 of a canonical JSON rendering (NFC strings, sorted keys)."""
    def norm(v):
        if isinstance(v, str):
            return normalize_text(v)
        if isinstance(v, dict):
            return {k: norm(v[k]) for k in sorted(v) if v[k] is not None}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        return v
    blob = json.dumps(norm(payload), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Item:
    text: str
    kind: str
    case: str | None = None
    number: str = "singular"
    plural: str | None = None
    singular: str | None = None
    article: str | None = None
    note: str | None = None

    def lexical(self) -> dict:
        return {k: getattr(self, k) for k in ("text", "kind", "case", "number", "plural", "singular", "article")}


@dataclass
class StimulusSet:
    id: str
    version: str
    concept: str
    items: list[Item]
    license: str
    source: dict
    file: str
    notes: str | None = None
    changelog: list = field(default_factory=list)
    template_vars: dict = field(default_factory=dict)
    group: dict | None = None
    language: str = DEFAULT_LANGUAGE
    source_kind: list[str] = field(default_factory=list)
    variant: str | None = None
    variant_of: str | None = None
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def hash(self) -> str:
        # the language counts as content, but English (the default) leaves old hashes as they were
        return content_hash({"items": [i.lexical() for i in self.items], "template_vars": self.template_vars,
                             "language": None if self.language == DEFAULT_LANGUAGE else self.language})


@dataclass
class Template:
    id: str
    version: str
    families: dict[str, list[str]]
    parts: dict[str, str]
    file: str
    source: dict | None = None
    license: str | None = None
    language: str = DEFAULT_LANGUAGE
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def hash(self) -> str:
        return content_hash({"families": self.families, "parts": self.parts,
                             "language": None if self.language == DEFAULT_LANGUAGE else self.language})


@dataclass
class Expansion:
    template: str               # "id@version"
    families: dict[str, str]    # role -> family; empty: by kind
    vars: dict[str, str]


@dataclass
class TestSpec:
    id: str
    version: str
    title: str
    level: str
    sets: dict[str, str]        # role -> "set@version"
    expansions: dict[str, Expansion]
    license: str
    source: dict
    file: str
    bias_type: str | None = None
    aliases: list = field(default_factory=list)
    notes: str | None = None
    equal_targets: bool = True
    equal_attributes: bool = False
    language: str = DEFAULT_LANGUAGE
    variant: str | None = None
    variant_of: str | None = None
    methods: tuple[str, ...] | None = None     # the methods that run it (None: every method over embeddings)
    overlap: dict[str, list[str]] | None = None   # "x/y" or "a/b" -> the items the authors' lists put in both
    raw: dict = field(default_factory=dict, repr=False)

    __test__ = False  # not a pytest class

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def levels(self) -> list[str]:
        out = ["word"] if self.level == "word" else []
        return out + list(self.expansions)

    def hash(self) -> str:
        # `methods` counts as content when declared (a test without it keeps its old hash)
        return content_hash({"sets": self.sets, "level": self.level,
                             "expansions": {k: vars(v) for k, v in self.expansions.items()},
                             "language": None if self.language == DEFAULT_LANGUAGE else self.language,
                             "methods": list(self.methods) if self.methods is not None else None})


_TYPE_WORDS = {str: "text", dict: "a mapping", list: "a list", bool: "true or false"}


def _typename(v: Any) -> str:
    return {str: "text", dict: "a mapping", list: "a list", bool: "true/false", type(None): "nothing (null)"}.get(
        type(v), type(v).__name__)


def _need(doc: dict, key: str, typ, file: str, obj: str, prefix: str = ""):
    want = _TYPE_WORDS.get(typ, getattr(typ, "__name__", str(typ)))
    if key not in doc or doc[key] is None:
        raise EatlasError("missing required field", file=file, obj=obj, field=prefix + key,
                          hint=f"add {key}: with {want}")
    v = doc[key]
    if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool)):
        raise EatlasError(f"expected {typ.__name__}, got {type(v).__name__} {v!r:.60}", file=file, obj=obj,
                          field=prefix + key,
                          hint="quote values such as yes/no/numbers/dates" if typ is str else f"write {key} as {want}")
    return v


def _optional(doc: dict, key: str, typ, file: str, obj: str, prefix: str = ""):
    if doc.get(key) is None:
        return None
    return _need(doc, key, typ, file, obj, prefix)


def _check_keys(doc: dict, allowed: set, file: str, obj: str, prefix: str = ""):
    unknown = sorted({str(k) for k in doc if k not in allowed})
    if unknown:
        raise EatlasError(f"unknown key(s) {', '.join(unknown)}", file=file, obj=obj, field=prefix + unknown[0],
                          hint=f"allowed: {', '.join(sorted(allowed))}")


def check_id(value: Any, file: str, obj: str, fld: str = "id") -> str:
    if value is None:
        raise EatlasError("missing required field", file=file, obj=obj, field=fld,
                          hint=f"add {fld}: with a lower-case id")
    if not isinstance(value, str) or not ID_RE.match(value) or ".." in value:
        raise EatlasError(f"invalid id {value!r:.80}", file=file, obj=obj, field=fld,
                          hint="ids are lower case letters, digits, '_', '+', '-' (no '/', no '..')")
    return value


def check_version(value: Any, file: str, obj: str, fld: str = "version") -> str:
    if not isinstance(value, str) or not SEMVER_RE.match(value):
        raise EatlasError(f"version {value!r:.80} is not semantic (MAJOR.MINOR.PATCH)", file=file, obj=obj, field=fld,
                          hint="write it quoted, e.g. version: \"1.0.0\"" if not isinstance(value, str)
                          else "write three numbers, e.g. 1.0.0")
    return value


def parse_ref(value: Any, file: str, obj: str, fld: str) -> tuple[str, str]:
    if not isinstance(value, str) or not REF_RE.match(value):
        raise EatlasError(f"expected 'id@version', got {value!r:.80}", file=file, obj=obj, field=fld,
                          hint="e.g. flowers@1.0.0")
    m = REF_RE.match(value)
    check_id(m["id"], file, obj, fld)
    check_version(m["version"], file, obj, fld)
    return m["id"], m["version"]


def _not_mapping(what: str, doc: Any, file: str) -> EatlasError:
    if doc is None:
        return EatlasError(f"the file is empty; expected {what}", file=file, hint="start it with id: and version:")
    return EatlasError(f"{what} must be a mapping (id: ..., version: ...), got {_typename(doc)}", file=file,
                       hint="the file's top level is key: value lines, not a list or a single value")


def _check_source(doc: dict, file: str, obj: str) -> dict:
    source = _need(doc, "source", dict, file, obj)
    paper = source.get("paper")
    if not isinstance(paper, str) or not paper:
        raise EatlasError("source has no paper" if not paper else f"expected text, got {_typename(paper)}",
                          file=file, obj=obj, field="source.paper",
                          hint="name the paper key from registry/sources.yaml")
    return source


def _check_changelog(doc: dict, file: str, obj: str) -> list:
    log = doc.get("changelog")
    if log is None:
        return []
    if not isinstance(log, list) or not all(isinstance(e, dict) for e in log):
        raise EatlasError("changelog must be a list of {version, date, change}", file=file, obj=obj,
                          field="changelog", hint="write - {version: 1.0.0, date: 2026-01-01, change: ...}")
    return log


def _check_bool(doc: dict, key: str, default: bool, file: str, obj: str) -> bool:
    v = doc.get(key)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise EatlasError(f"expected true or false, got {v!r:.40}", file=file, obj=obj, field=key,
                          hint=f"write {key}: true or {key}: false (unquoted)")
    return v


def check_language(doc: dict, file: str, obj: str) -> str:
    """A BCP-47 tag in canonical case (``en``, ``hi``, ``zh-Hans``, ``pt-BR``); default ``en``."""
    v = doc.get("language")
    if v is None:
        return DEFAULT_LANGUAGE
    if not isinstance(v, str) or not LANGUAGE_RE.match(v):
        fixed = _canonical_language(v) if isinstance(v, str) else None
        raise EatlasError(f"language {v!r:.40} is not a BCP-47 tag", file=file, obj=obj, field="language",
                          hint=f"write {fixed}" if fixed and fixed != v else
                          "e.g. en, hi, ckb, zh-Hans, pt-BR (language lower case, Script title case, REGION upper)")
    return v


def _canonical_language(tag: str) -> str | None:
    """The tag in canonical case (``EN_us`` -> ``en-US``) when that makes it valid, else None."""
    parts = tag.replace("_", "-").split("-")
    out = [parts[0].lower()]
    for p in parts[1:]:
        out.append(p.title() if len(p) == 4 and p.isalpha() else p.upper() if len(p) == 2 else p.lower())
    fixed = "-".join(out)
    return fixed if LANGUAGE_RE.match(fixed) else None


def _check_variant(doc: dict, file: str, obj: str) -> tuple[str | None, str | None]:
    """``variant`` (a label) and ``variant_of`` (the canonical entry's id): a variant names both."""
    label = _optional(doc, "variant", str, file, obj)
    of = doc.get("variant_of")
    if of is not None:
        check_id(of, file, obj, "variant_of")
        if of == doc.get("id"):
            raise EatlasError("an entry cannot be a variant of itself", file=file, obj=obj, field="variant_of",
                              hint="name the canonical entry's id, or remove variant_of")
        if not label:
            raise EatlasError("variant_of needs a variant label", file=file, obj=obj, field="variant",
                              hint="say what this variant is, e.g. variant: machine_translation")
    return label, of


class _Checks:
    """Runs the independent checks of one file. Without a list (loading the registry) the first problem
    is raised; with one (``eatlas add``, which lists every problem of a new file) each problem is added
    to it, the check gives ``default`` and the next check runs."""

    def __init__(self, problems: list | None):
        self.problems = problems
        self.failed = False

    def __call__(self, fn, *args, default=None, **kw):
        if self.problems is None:
            return fn(*args, **kw)
        try:
            return fn(*args, **kw)
        except EatlasError as e:
            self.problems.append(e)
            self.failed = True
            return default


def _fail(error: EatlasError):
    raise error


def _source_kind(doc: dict, file: str, obj: str) -> list:
    source_kind = doc.get("source_kind")
    if source_kind is None:
        return []
    if isinstance(source_kind, str):
        source_kind = [source_kind]
    if not isinstance(source_kind, list) or not all(isinstance(k, str) for k in source_kind):
        raise EatlasError("source_kind must be a list of tags", file=file, obj=obj, field="source_kind",
                          hint="e.g. source_kind: [social_science]; the tags are in schemas/stimuli.yaml")
    return list(source_kind)


def _parse_item(it: Any, n: int, set_kind: str | None, file: str, obj: str, check: _Checks) -> Item | None:
    """One item of a set; None when it has a problem (raised, or added to the list)."""
    fld = f"items[{n}]"
    if isinstance(it, str):
        if set_kind is None:
            return check(_fail, EatlasError(f"item {it!r:.60} is a bare string; give its kind", file=file, obj=obj,
                                            field=fld, hint="write - {text: ..., kind: noun}, or declare the set's "
                                                            "kind: (e.g. kind: name) so its items may be bare strings"))
        it = {"text": it}
    if not isinstance(it, dict):
        return check(_fail, EatlasError(f"expected a mapping, got {_typename(it)}", file=file, obj=obj, field=fld,
                                        hint="write - {text: ..., kind: noun}"))
    failed = check.failed
    check.failed = False
    check(_check_keys, it, ITEM_KEYS, file, obj, prefix=f"{fld}.")
    for k, v in it.items():
        if v is not None and not isinstance(v, str):
            check(_fail, EatlasError(f"expected text, got {_typename(v)} {v!r:.40}", file=file, obj=obj,
                                     field=f"{fld}.{k}", hint="quote values such as yes/no/numbers"))
    if it.get("kind") is None and set_kind is not None:
        it = {**it, "kind": set_kind}
    for k in ("text", "kind"):
        if it.get(k) is None:
            check(_fail, EatlasError(f"the item has no {k}", file=file, obj=obj, field=f"{fld}.{k}",
                                     hint="every item needs text and kind: - {text: ..., kind: noun}"))
    bad, check.failed = check.failed, failed or check.failed
    if bad:
        return None
    return Item(**{k: (normalize_text(v) if k == "text" else v) for k, v in it.items() if v is not None})


def parse_set(doc: Any, file: str, problems: list | None = None) -> StimulusSet | None:
    """The set a file holds. With ``problems`` (a list), every problem is added to it instead of the
    first being raised, and the set is built from what could be read, so that its content can be checked
    too (a faulty id reads as '?', a faulty version as None, a faulty item is left out); None when it
    has no list of items."""
    if not isinstance(doc, dict):
        raise _not_mapping("a stimulus set", doc, file)
    check = _Checks(problems)
    sid = check(check_id, doc.get("id"), file, "set ?")
    obj = f"set {sid or '?'}"
    check(_check_keys, doc, SET_KEYS, file, obj)
    version = check(check_version, doc.get("version"), file, obj)
    concept = check(_need, doc, "concept", str, file, obj, default="")
    lic = check(_need, doc, "license", str, file, obj, default="")
    source = check(_check_source, doc, file, obj, default={})
    check(_optional, doc, "notes", str, file, obj)
    changelog = check(_check_changelog, doc, file, obj, default=[])
    check(_check_bool, doc, "case_sensitive", True, file, obj)
    language = check(check_language, doc, file, obj, default=DEFAULT_LANGUAGE)
    set_kind = check(_optional, doc, "kind", str, file, obj)
    check(_optional, doc, "license_note", str, file, obj)
    source_kind = check(_source_kind, doc, file, obj, default=[])
    variant, variant_of = check(_check_variant, doc, file, obj, default=(None, None))
    raw_items = check(_need, doc, "items", list, file, obj)
    items = [i for i in (_parse_item(it, n, set_kind, file, obj, check) for n, it in enumerate(raw_items or []))
             if i is not None]
    tv = doc.get("template_vars") or {}
    if not isinstance(tv, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tv.items()):
        check(_fail, EatlasError("template_vars must map names to text", file=file, obj=obj, field="template_vars",
                                 hint="e.g. template_vars: {subject: he, possessive: his}"))
        tv = {}
    if raw_items is None:
        return None
    return StimulusSet(id=sid or "?", version=version, concept=concept, items=items, license=lic, source=source,
                       file=file, notes=doc.get("notes"), changelog=changelog,
                       template_vars=tv, group=doc.get("group"), language=language,
                       source_kind=source_kind, variant=variant, variant_of=variant_of, raw=doc)


def _parse_expansion(lvl: Any, spec: Any, file: str, obj: str, check: _Checks) -> Expansion | None:
    fld = f"expansions.{lvl}"
    if lvl not in EXPANSIONS:
        return check(_fail, EatlasError(f"unknown expansion level {lvl!r}", file=file, obj=obj, field=fld,
                                        hint="sent or sent(u); c-word levels reuse these sentences"))
    if not isinstance(spec, dict):
        return check(_fail, EatlasError("expected a mapping with 'template'", file=file, obj=obj, field=fld,
                                        hint=f"write {lvl}: {{template: may2019_bleached@1.0.0}}"))
    check(_check_keys, spec, {"template", "families", "vars"}, file, obj, prefix=f"{fld}.")   # does not stop it
    failed = check.failed
    check.failed = False
    check(parse_ref, spec.get("template"), file, obj, f"{fld}.template")
    fams = spec.get("families") or {}
    if not isinstance(fams, dict) or set(fams) - set(ROLES) or not all(isinstance(v, str) for v in fams.values()):
        check(_fail, EatlasError("families must map roles x, y, a, b to a family name", file=file, obj=obj,
                                 field=f"{fld}.families", hint="e.g. families: {x: name, y: name}"))
    vs = spec.get("vars") or {}
    if not isinstance(vs, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in vs.items()):
        check(_fail, EatlasError("vars must map names to text", file=file, obj=obj, field=f"{fld}.vars",
                                 hint="e.g. vars: {occupation: engineer}"))
    bad, check.failed = check.failed, failed or check.failed
    return None if bad else Expansion(template=spec["template"], families=dict(fams), vars=dict(vs))


def parse_test(doc: Any, file: str, problems: list | None = None) -> TestSpec | None:
    """The test a file holds; ``problems`` as for :func:`parse_set` (a faulty expansion is left out;
    None when one of its four sets could not be read)."""
    if not isinstance(doc, dict):
        raise _not_mapping("a test", doc, file)
    check = _Checks(problems)
    tid = check(check_id, doc.get("id"), file, "test ?")
    obj = f"test {tid or '?'}"
    check(_check_keys, doc, TEST_KEYS, file, obj)
    version = check(check_version, doc.get("version"), file, obj)
    title = check(_need, doc, "title", str, file, obj, default="")
    lic = check(_need, doc, "license", str, file, obj, default="")
    source = check(_check_source, doc, file, obj, default={})
    check(_optional, doc, "notes", str, file, obj)
    check(_optional, doc, "bias_type", str, file, obj)
    check(_optional, doc, "license_note", str, file, obj)
    check(_check_changelog, doc, file, obj)
    language = check(check_language, doc, file, obj, default=DEFAULT_LANGUAGE)
    variant, variant_of = check(_check_variant, doc, file, obj, default=(None, None))
    sets = {}
    for role in ROLES:
        if check(parse_ref, doc.get(role), file, obj, role) is not None:
            sets[role] = doc[role]
    level = doc.get("level", "word")
    exps = {}
    raw_exps = doc.get("expansions") or {}
    if not isinstance(raw_exps, dict):
        check(_fail, EatlasError("expansions must be a mapping level -> {template: id@version}", file=file,
                                 obj=obj, field="expansions",
                                 hint="e.g. expansions: {sent: {template: may2019_bleached@1.0.0}}"))
        raw_exps = {}
    for lvl, spec in raw_exps.items():
        exp = _parse_expansion(lvl, spec, file, obj, check)
        if exp is not None:
            exps[lvl] = exp
    if isinstance(level, str) and level in raw_exps and level not in exps:
        pass                    # its expansion is faulty, and said so
    elif not isinstance(level, str) or (level != "word" and level not in exps):
        check(_fail, EatlasError(f"level {level!r:.40} is neither 'word' nor one of the test's expansions",
                                 file=file, obj=obj, field="level",
                                 hint=f"one of: word{''.join(', ' + k for k in exps)}"))
        level = "word"
    aliases = doc.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, dict) for a in aliases):
        check(_fail, EatlasError("aliases must be a list of {paper, name}", file=file, obj=obj, field="aliases",
                                 hint="write - {paper: may2019, name: sent-weat1}"))
        aliases = []
    equal_targets = check(_check_bool, doc, "equal_targets", True, file, obj, default=True)
    equal_attributes = check(_check_bool, doc, "equal_attributes", False, file, obj, default=False)
    methods = check(_check_methods, doc, file, obj)
    overlap = check(_check_overlap, doc, file, obj)
    if len(sets) < len(ROLES):
        return None
    return TestSpec(id=tid or "?", version=version, title=title, level=level, sets=sets, expansions=exps,
                    license=lic, source=source, file=file,
                    bias_type=doc.get("bias_type"), aliases=aliases, notes=doc.get("notes"),
                    equal_targets=equal_targets, equal_attributes=equal_attributes, language=language,
                    variant=variant, variant_of=variant_of, methods=methods, overlap=overlap, raw=doc)


OVERLAP_PAIRS = ("x/y", "a/b")


def _check_overlap(doc: dict, file: str, obj: str) -> dict[str, list[str]] | None:
    """A test's `overlap:`: the items its authors' lists put in both targets (``x/y``) or both attributes
    (``a/b``), declared so that the test is kept as the authors ran it (a variant, docs/registry-format.md);
    validate checks the declaration against the sets."""
    v = doc.get("overlap")
    if v is None:
        return None
    if not isinstance(v, dict) or not v or set(v) - set(OVERLAP_PAIRS) or not all(
            isinstance(items, list) and items and all(isinstance(i, str) and i for i in items) for items in v.values()):
        raise EatlasError("overlap must map x/y or a/b to the list of items in both sets", file=file, obj=obj,
                          field="overlap", hint="e.g. overlap: {a/b: [su]}")
    return {k: list(v[k]) for k in OVERLAP_PAIRS if k in v}


def _check_methods(doc: dict, file: str, obj: str) -> tuple[str, ...] | None:
    """A test's `methods:`: the names of the methods that run it, e.g. [llm-iat]. A name need not be installed
    (a plug-in method may come later); absent: every method over embeddings (docs/registry-format.md)."""
    if "methods" not in doc:
        return None
    names = doc["methods"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and ID_RE.match(n) for n in names):
        raise EatlasError(f"methods must be a non-empty list of method names, got {names!r:.60}", file=file, obj=obj,
                          field="methods", hint="e.g. methods: [weat, mleat]; leave it out for every method")
    if len(set(names)) < len(names):
        raise EatlasError("methods names a method twice", file=file, obj=obj, field="methods",
                          hint="list each method once")
    return tuple(names)


def parse_template(doc: Any, file: str) -> Template:
    if not isinstance(doc, dict):
        raise _not_mapping("a template file", doc, file)
    tid = check_id(doc.get("id"), file, "template ?")
    obj = f"template {tid}"
    _check_keys(doc, TEMPLATE_KEYS, file, obj)
    version = check_version(doc.get("version"), file, obj)
    _check_changelog(doc, file, obj)
    fams = _need(doc, "families", dict, file, obj)
    for name, lst in fams.items():
        if not isinstance(name, str):
            raise EatlasError(f"family name {name!r:.40} is not text", file=file, obj=obj, field="families",
                              hint="quote the family name")
        if not isinstance(lst, list) or not lst or not all(isinstance(s, str) for s in lst):
            raise EatlasError("a family must be a non-empty list of template strings", file=file, obj=obj,
                              field=f"families.{name}", hint='e.g. name: ["This is {{ term }}."]')
    parts = doc.get("parts") or {}
    if not isinstance(parts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in parts.items()):
        raise EatlasError("parts must map names to template strings", file=file, obj=obj, field="parts",
                          hint='e.g. parts: {s1: "{{ term }} is here."}')
    variables = doc.get("variables") or []      # fields the caller fills (e.g. a prompt's), beyond term/article
    if not isinstance(variables, list) or not all(isinstance(v, str) and v.isidentifier() for v in variables):
        raise EatlasError("variables must be a list of variable names", file=file, obj=obj, field="variables",
                          hint="e.g. variables: [group0, group1, attributes]")
    return Template(id=tid, version=version, families=fams, parts=parts, file=file, source=doc.get("source"),
                    license=doc.get("license"), language=check_language(doc, file, obj), raw=doc)


class Registry:
    """A registry folder: catalog.yaml, registry/, templates/."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        self._top = self.root.resolve()
        cat_path = self.root / "catalog.yaml"
        if not cat_path.is_file():
            raise EatlasError("no catalog.yaml here; is this a registry folder?", file=str(cat_path),
                              hint="pass --registry DIR or set EATLAS_REGISTRY")
        cat_path = self.resolve("catalog.yaml", "catalog.yaml", "catalog")   # a link out of the folder is refused
        cat = read_yaml(cat_path, root=self.root) or {}
        if not isinstance(cat, dict):
            raise EatlasError(f"the catalog must be a mapping with sets, tests, templates, got {_typename(cat)}",
                              file="catalog.yaml", obj="catalog", hint="run 'eatlas catalog --sync' to rebuild it")
        _check_keys(cat, CATALOG_KEYS, "catalog.yaml", "catalog")
        self.catalog = cat
        self.sets: dict[str, StimulusSet] = {}
        self.tests: dict[str, TestSpec] = {}
        self.templates: dict[str, Template] = {}
        self.recorded_hash: dict[tuple[str, str], str] = {}
        for kind, parser, store in (("sets", parse_set, self.sets), ("tests", parse_test, self.tests),
                                    ("templates", parse_template, self.templates)):
            entries = cat.get(kind) or []
            if not isinstance(entries, list):
                raise EatlasError("expected a list of entries", file="catalog.yaml", obj="catalog", field=kind,
                                  hint="run 'eatlas catalog --sync' to rebuild it")
            for n, entry in enumerate(entries):
                obj = f"catalog {kind}[{n}]"
                if not isinstance(entry, dict):
                    raise EatlasError(f"expected a mapping, got {_typename(entry)}", file="catalog.yaml", obj=obj,
                                      hint="run 'eatlas catalog --sync' to rebuild it")
                eid = check_id(entry.get("id"), "catalog.yaml", obj)
                obj = f"catalog {kind[:-1]} {eid}"
                ever = check_version(entry.get("version"), "catalog.yaml", obj)
                path = self.resolve(entry.get("file"), "catalog.yaml", obj)
                rel = str(path.relative_to(self._top))      # resolve() returned it resolved, inside the root
                try:
                    parsed = parser(read_yaml(path, shown=rel), rel)
                except EatlasError as e:     # name the catalog entry when the file itself could not say
                    if e.obj is not None:
                        raise
                    raise EatlasError(e.message, file=e.file, obj=f"{kind[:-1]} {eid}", field=e.field,
                                      hint=e.hint) from None
                if parsed.id != eid or parsed.version != ever:
                    raise EatlasError(f"catalog says {eid}@{ever} but the file holds {parsed.id}@{parsed.version}",
                                      file=rel, obj=obj, field="id/version",
                                      hint="bump the version in both, or run 'eatlas catalog --sync'")
                if eid in store:
                    raise EatlasError(f"duplicate {kind[:-1]} id {eid!r}", file="catalog.yaml", obj=obj, field="id",
                                      hint="each id is listed once; run 'eatlas catalog --sync'")
                store[eid] = parsed
                if entry.get("sha256"):
                    self.recorded_hash[(kind, eid)] = entry["sha256"]
        published = cat.get("published") or []
        if not isinstance(published, list):
            raise EatlasError("expected a list of entries", file="catalog.yaml", obj="catalog", field="published",
                              hint="run 'eatlas catalog --sync' to rebuild it")
        for n, entry in enumerate(published):
            if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
                raise EatlasError("expected a mapping with id and file", file="catalog.yaml",
                                  obj=f"catalog published[{n}]", field="file",
                                  hint="run 'eatlas catalog --sync' to rebuild it")
            if entry.get("version") is not None:
                check_version(entry["version"], "catalog.yaml", f"catalog published {entry.get('id')}")
            if entry.get("sha256"):
                self.recorded_hash[("published", entry.get("id"))] = entry["sha256"]

    def resolve(self, rel: Any, file: str, obj: str) -> Path:
        """A path named in a registry file, refused if it leaves the registry folder."""
        if not isinstance(rel, str) or not rel:
            raise EatlasError("missing file path", file=file, obj=obj, field="file",
                              hint="give the file's path relative to the registry folder")
        try:
            if "\x00" in rel:
                raise ValueError
            p = (self.root / rel).resolve()
        except (OSError, ValueError, RuntimeError):
            raise EatlasError(f"unusable path {rel!r:.80}", file=file, obj=obj, field="file",
                              hint="give the file's path relative to the registry folder") from None
        if Path(rel).is_absolute() or not p.is_relative_to(self._top):
            raise EatlasError(f"path {rel!r:.80} leaves the registry folder", file=file, obj=obj, field="file",
                              hint="paths are relative to the registry folder and stay inside it "
                                   "(no absolute paths, no '..', no symlinks pointing outside)")
        return p

    def get_set(self, ref: str) -> StimulusSet:
        sid, ver = ref.split("@") if "@" in ref else (ref, None)
        if sid not in self.sets:
            raise EatlasError(f"unknown stimulus set {sid!r}", hint=_suggest(sid, self.sets, "the catalog's sets"))
        s = self.sets[sid]
        if ver is not None and s.version != ver:
            raise EatlasError(f"set {sid} is at version {s.version}, not {ver}",
                              hint=f"refer to {sid}@{s.version}, or restore version {ver}")
        return s

    def get_template(self, ref: str) -> Template:
        tid, _, ver = ref.partition("@")
        if tid not in self.templates:
            raise EatlasError(f"unknown template {tid!r}", hint=_suggest(tid, self.templates, "templates/"))
        t = self.templates[tid]
        if t.version != ver:
            raise EatlasError(f"template {tid} is at version {t.version}, not {ver}",
                              hint=f"refer to {tid}@{t.version}")
        return t

    def get_test_spec(self, test_id: str) -> TestSpec:
        if test_id in self.tests:
            return self.tests[test_id]
        for t in self.tests.values():  # aliases (e.g. sent-weat1, ML-EAT names)
            if any(isinstance(a, dict) and a.get("name") == test_id for a in t.aliases):
                return t
        raise EatlasError(f"unknown test {test_id!r}", hint=_suggest(test_id, self.tests, "'eatlas list'"))

    @cached_property
    def sources(self) -> dict:
        from .cite import check_sources  # the bibliography's schema lives with the citation code

        p = self.root / "registry" / "sources.yaml"
        if p.is_symlink() or p.exists():        # like every file the registry reads: inside the folder
            p = self.resolve("registry/sources.yaml", "registry/sources.yaml", "sources")
        return check_sources((read_yaml(p, root=self.root) or {}) if p.is_file() else {})


def _suggest(name: str, known, where: str) -> str:
    close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    return (f"did you mean {', '.join(close)}? " if close else "") + f"see {where}"


_DEFAULT: dict[str, Registry] = {}


def load_registry(root: str | Path | None = None) -> Registry:
    key = str(Path(root).resolve()) if root is not None else str(default_root().resolve())
    if key not in _DEFAULT:
        from . import cache as registry_cache
        _DEFAULT[key] = registry_cache.load(Path(key), lambda: Registry(key))
    return _DEFAULT[key]
