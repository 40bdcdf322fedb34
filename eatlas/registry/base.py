"""Loading the curated registry: catalog.yaml, stimulus sets, tests, templates.

The registry knows nothing of models. Files are safe-loaded YAML (bounded: no tags that name code, no
alias bombs, no absurd nesting, no duplicate keys), their fields checked by the declared models of
:mod:`eatlas.registry.models`; every problem is raised as an :class:`EatlasError` naming the file, the
object and the field. A registry loaded before is read back from the cache (:mod:`eatlas.registry.cache`,
plain JSON: :meth:`Registry.to_plain`, :meth:`Registry.from_view`).
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from ..errors import EatlasError
from ..levels import EXPANSIONS
from ..levels import NAMES as LEVELS  # noqa: F401 - kept for importers
from . import reads
from .terms import (  # noqa: F401 - the registry's vocabulary, kept here for importers
    CATALOG_KEYS,
    DEFAULT_LANGUAGE,
    ID_RE,
    ITEM_KEYS,
    KINDS,
    LANGUAGE_RE,
    OVERLAP_PAIRS,
    REF_RE,
    ROLES,
    SEMVER_RE,
    SET_KEYS,
    TEMPLATE_KEYS,
    TEST_KEYS,
    semver_key,
    typename,
)

MAX_FILE_BYTES = 2_000_000
# catalog.yaml indexes every file of the registry (about 250 bytes an entry): its own limit, so that the registry may
# grow (1.2 MB at 4,800 entries would pass MAX_FILE_BYTES at about 8,000)
CATALOG_MAX_BYTES = 50_000_000


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


def read_yaml(path: Path, *, root: Path | None = None, shown: str | None = None,
              max_bytes: int = MAX_FILE_BYTES) -> Any:
    """Safe-load one YAML file with size, encoding and structure checks (a leading BOM is fine)."""
    shown = shown or _shown(path, root)
    raw = _read_regular(path, shown, max_bytes)

    def parse() -> Any:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise EatlasError(f"not valid UTF-8 (byte {e.start})", file=shown, hint="save the file as UTF-8") from None
        return parse_yaml(text, shown)
    from .parsecache import parsed  # parsed once per content (the bytes' hash): eatlas.registry.parsecache
    return parsed(raw, parse)


def _not_regular(mode: int) -> str | None:
    """What a path of this ``st_mode`` is, when it is not a regular file."""
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _read_regular(path: Path, shown: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES: a folder, a FIFO or a device is named as such and
    never read (opened without blocking, checked on the open file, so nothing swapped in meanwhile is read)."""
    try:
        what = _not_regular(os.stat(path).st_mode)
    except FileNotFoundError:
        raise EatlasError("file not found", file=shown, hint="check the path, or run 'eatlas catalog --sync'") from None
    except OSError as e:
        raise EatlasError(f"cannot read the file: {e.strerror or e}", file=shown) from None
    if what:
        raise EatlasError(f"is {what}, not a regular file: not read", file=shown, hint="give the path of a YAML file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as e:
        raise EatlasError(f"cannot read the file: {e.strerror or e}", file=shown) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        what = _not_regular(st.st_mode)
        if what:
            raise EatlasError(f"is {what}, not a regular file: not read", file=shown,
                              hint="give the path of a YAML file")
        if st.st_size > max_bytes:
            raise EatlasError(f"file is {st.st_size} bytes, over the {max_bytes}-byte limit for a registry "
                              "file", file=shown, hint="split it into smaller sets")
        data = f.read(max_bytes + 1)
        reads.note(path, st, reads.digest(data) if reads.active() else None)
        return data


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
    nfc = unicodedata.normalize

    def norm(v):
        # the common cases inline (exact types; a subclass takes the general path): 4,800 sets, 380,000 values
        t = type(v)
        if t is str:
            return nfc("NFC", v).strip()
        if t is dict:       # in any order: json.dumps sorts the keys below
            return {k: nfc("NFC", x).strip() if type(x) is str else norm(x) for k, x in v.items() if x is not None}
        if t is list:
            return [nfc("NFC", x).strip() if type(x) is str else norm(x) for x in v]
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
class CriterionItem:
    text: str
    kind: str
    value: float
    rows: list[int]
    weight: float | None = None
    note: str | None = None


@dataclass
class Criterion:
    """A validity criterion (eatlas.registry.criteria): items with a value about the world each, the data file
    and rows the values come from, and the attribute sets (a, b) the items' associations are measured against."""
    id: str
    version: str
    title: str
    concept: str
    items: list[CriterionItem]
    license: str
    source: dict
    criterion: dict
    a: str
    b: str
    expected_sign: str
    file: str
    notes: str | None = None
    language: str = DEFAULT_LANGUAGE
    changelog: list = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def hash(self) -> str:
        return content_hash({"items": [{k: getattr(i, k) for k in ("text", "kind", "value", "rows", "weight")}
                                       for i in self.items],
                             "criterion": {k: v for k, v in self.criterion.items()
                                           if k not in ("derivation", "reliability", "meaning", "table")},
                             "a": self.a, "b": self.b, "expected_sign": self.expected_sign,
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
    # paired forms (a gendered language): {"x": form, "y": form, "a": {form: ref}, "b": {form: ref}}; a and b
    # (``sets``) are then x's forms, and y's attributes are forms["a"][forms["y"]], forms["b"][forms["y"]]
    forms: dict | None = None

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
        content = {"sets": self.sets, "level": self.level,
                   "expansions": {k: vars(v) for k, v in self.expansions.items()},
                   "language": None if self.language == DEFAULT_LANGUAGE else self.language,
                   "methods": list(self.methods) if self.methods is not None else None}
        if self.forms:          # counted only when declared (a test without forms keeps its old hash)
            content["forms"] = self.forms
        return content_hash(content)

    @property
    def form_sets(self) -> dict[str, str]:
        """Target y's attribute sets where they differ from x's ({"a": ref, "b": ref}; empty without forms)."""
        if not self.forms or self.forms["x"] == self.forms["y"]:
            return {}
        return {r: self.forms[r][self.forms["y"]] for r in ("a", "b")}


def _typename(v: Any) -> str:
    return typename(v)


def _check_keys(doc: dict, allowed: set, file: str, obj: str, prefix: str = ""):
    """Unknown keys of a mapping (the model loader entries' check, eatlas.encoders.loaders; the registry's own
    files are checked by their models, eatlas.registry.models)."""
    unknown = sorted({str(k) for k in doc if k not in allowed})
    if unknown:
        raise EatlasError(f"unknown key(s) {', '.join(unknown)}", file=file, obj=obj, field=prefix + unknown[0],
                          hint=f"allowed: {', '.join(sorted(allowed))}")


def _form(form: str, value: Any, file: str | None, obj: str | None, fld: str):
    from .models import value_problem  # pydantic is imported when a file is read, never on a warm run
    problem = value_problem(form, value, file, obj, fld)
    if problem is not None:
        raise problem
    return value


def check_id(value: Any, file: str, obj: str, fld: str = "id") -> str:
    """``value`` if it is an id (lower case letters, digits, '_', '+', '-'), else the models' error."""
    return _form("id", value, file, obj, fld)


def check_version(value: Any, file: str, obj: str, fld: str = "version") -> str:
    """``value`` if it is a semantic version MAJOR.MINOR.PATCH, else the models' error."""
    return _form("version", value, file, obj, fld)


def parse_ref(value: Any, file: str, obj: str, fld: str) -> tuple[str, str]:
    """(id, version) of a reference ``id@version``, else the models' error."""
    _form("ref", value, file, obj, fld)
    m = REF_RE.match(value)
    return m["id"], m["version"]


def check_language(doc: dict, file: str, obj: str) -> str:
    """A BCP-47 tag in canonical case (``en``, ``hi``, ``zh-Hans``, ``pt-BR``); default ``en``."""
    v = doc.get("language")
    return DEFAULT_LANGUAGE if v is None else _form("language", v, file, obj, "language")


def _not_mapping(what: str, doc: Any, file: str) -> EatlasError:
    if doc is None:
        return EatlasError(f"the file is empty; expected {what}", file=file, hint="start it with id: and version:")
    return EatlasError(f"{what} must be a mapping (id: ..., version: ...), got {typename(doc)}", file=file,
                       hint="the file's top level is key: value lines, not a list or a single value")


# ---------------------------------------------------------------------------- reading a file into its entry
# Each field is checked by the file's declared model (eatlas.registry.models: every problem at once, in
# EATlas's words); what no single field says (a test's level among its expansions, a variant's label) is
# checked here; then the entry is built from what checked. Without a list of problems (loading the registry)
# the first problem is raised; with one (``eatlas add``, which lists every problem of a new file) each is
# added to it, and the entry is built from what could be read, so its content can be checked too: a faulty
# id reads as '?', a faulty version as None, a faulty item or expansion is left out.
_FIELD = re.compile(r"^(?P<top>[A-Za-z_]+)(\[(?P<n>\d+)\]|\.(?P<key>[^.]+))?")


class _Faults:
    """The fields (and items, expansions) a file's problems name."""

    def __init__(self, found: list[EatlasError], *, keep_unknown_in: tuple[str, ...] = ()):
        self.top: set[str] = set()
        self.at: dict[str, set] = {}
        for p in found:
            m = _FIELD.match(str(p.field or ""))
            if m is None:
                continue
            inner = m["n"] if m["n"] is not None else m["key"]
            if inner is None:
                self.top.add(m["top"])
            elif not (m["top"] in keep_unknown_in and p.message.startswith("unknown key(s)")):
                self.at.setdefault(m["top"], set()).add(int(inner) if m["n"] is not None else inner)

    def ok(self, doc: dict, key: str, typ=object):
        """doc[key] when that field has no problem and is of ``typ``, else None."""
        v = doc.get(key)
        return v if key not in self.top and isinstance(v, typ) else None


def _report(found: list[EatlasError], problems: list | None) -> None:
    if found and problems is None:
        raise found[0]
    if problems is not None:
        problems.extend(found)


def _fields(kind: str, doc: dict, file: str, obj) -> list[EatlasError]:
    from .models import check  # pydantic is imported when a file is read, never on a warm run
    return check(kind, doc, file, obj)


def _the_id(doc: dict) -> str | None:
    v = doc.get("id")
    return v if isinstance(v, str) and ID_RE.match(v) else None


def _variant_problems(doc: dict, faults: _Faults, file: str, obj: str) -> list[EatlasError]:
    """``variant`` (a label) and ``variant_of`` (the canonical entry's id): a variant names both."""
    of = faults.ok(doc, "variant_of", str)
    if of is None:
        return []
    if of == doc.get("id"):
        return [EatlasError("an entry cannot be a variant of itself", file=file, obj=obj, field="variant_of",
                            hint="name the canonical entry's id, or remove variant_of")]
    if not faults.ok(doc, "variant", str) and "variant" not in faults.top:
        return [EatlasError("variant_of needs a variant label", file=file, obj=obj, field="variant",
                            hint="say what this variant is, e.g. variant: machine_translation")]
    return []


def _with_set_kind(doc: dict) -> dict:
    """The set's items as mappings: a bare string is an item of the set's ``kind:``, and an item without a
    kind has the set's (a bare string in a set without one is reported as such); ``source_kind`` as a list."""
    set_kind = doc.get("kind") if isinstance(doc.get("kind"), str) else None
    items = doc.get("items")
    out = dict(doc)
    if isinstance(doc.get("source_kind"), str):
        out["source_kind"] = [doc["source_kind"]]
    if set_kind is not None and isinstance(items, list):
        out["items"] = [{"text": it, "kind": set_kind} if isinstance(it, str) else
                        {**it, "kind": set_kind} if isinstance(it, dict) and it.get("kind") is None else it
                        for it in items]
    return out


def parse_set(doc: Any, file: str, problems: list | None = None) -> StimulusSet | None:
    """The set a file holds. With ``problems`` (a list), every problem is added to it instead of the
    first being raised, and the set is built from what could be read, so that its content can be checked
    too (a faulty id reads as '?', a faulty version as None, a faulty item is left out); None when it
    has no list of items."""
    if not isinstance(doc, dict):
        raise _not_mapping("a stimulus set", doc, file)
    obj = f"set {_the_id(doc) or '?'}"
    full = _with_set_kind(doc)
    found = _fields("set", full, file, obj)
    faults = _Faults(found)
    found += _variant_problems(doc, faults, file, obj)
    _report(found, problems)
    raw_items = faults.ok(full, "items", list)
    if raw_items is None:
        return None
    bad = faults.at.get("items", set())
    items = [Item(**{k: (normalize_text(v) if k == "text" else v) for k, v in it.items() if v is not None})
             for n, it in enumerate(raw_items) if n not in bad]
    variant_ok = not any(p.field in ("variant", "variant_of") for p in found)
    return StimulusSet(id=faults.ok(doc, "id") or "?", version=faults.ok(doc, "version"),
                       concept=faults.ok(doc, "concept") or "", items=items, license=faults.ok(doc, "license") or "",
                       source=(faults.ok(doc, "source", dict) if "source" not in faults.at else None) or {}, file=file,
                       notes=faults.ok(doc, "notes"), changelog=faults.ok(doc, "changelog") or [],
                       template_vars=faults.ok(doc, "template_vars") or {}, group=faults.ok(doc, "group"),
                       language=faults.ok(doc, "language") or DEFAULT_LANGUAGE,
                       source_kind=list(faults.ok(full, "source_kind") or []),
                       variant=faults.ok(doc, "variant") if variant_ok else None,
                       variant_of=faults.ok(doc, "variant_of") if variant_ok else None, raw=doc)


def parse_test(doc: Any, file: str, problems: list | None = None) -> TestSpec | None:
    """The test a file holds; ``problems`` as for :func:`parse_set` (a faulty expansion is left out;
    None when one of its four sets could not be read)."""
    if not isinstance(doc, dict):
        raise _not_mapping("a test", doc, file)
    obj = f"test {_the_id(doc) or '?'}"
    found = _fields("test", doc, file, obj)
    faults = _Faults(found, keep_unknown_in=("expansions",))
    raw_exps = faults.ok(doc, "expansions", dict) or {}
    bad = faults.at.get("expansions", set())
    exps = {lvl: Expansion(template=spec["template"], families=dict(spec.get("families") or {}),
                           vars=dict(spec.get("vars") or {}))
            for lvl, spec in raw_exps.items() if lvl in EXPANSIONS and lvl not in bad}
    level = doc.get("level", "word")
    if "level" in faults.top:
        level = "word"
    elif level in raw_exps and level not in exps:
        pass                    # its expansion is faulty, and said so
    elif level != "word" and level not in exps:
        found.append(EatlasError(f"level {level!r:.40} is neither 'word' nor one of the test's expansions",
                                 file=file, obj=obj, field="level",
                                 hint=f"one of: word{''.join(', ' + k for k in exps)}"))
        level = "word"
    found += _variant_problems(doc, faults, file, obj)
    _report(found, problems)
    if any(faults.ok(doc, r) is None for r in ROLES):
        return None
    variant_ok = not any(p.field in ("variant", "variant_of") for p in found)
    forms = faults.ok(doc, "forms", dict) if "forms" not in faults.at else None
    if forms:
        forms = {"x": forms["x"], "y": forms["y"], "a": dict(forms["a"]), "b": dict(forms["b"])}
        wrong = [r for r in ("a", "b") if forms[r][forms["x"]] != doc[r]]
        if wrong:
            _report([EatlasError(f"{r} is {doc[r]!r:.60} but forms.{r}.{forms['x']} (the form of target x) is "
                                 f"{forms[r][forms['x']]!r:.60}", file=file, obj=obj, field=f"forms.{r}",
                                 hint=f"a and b name target x's forms: write {r}: {forms[r][forms['x']]}")
                     for r in wrong], problems)
            forms = None
    methods = faults.ok(doc, "methods")
    overlap = faults.ok(doc, "overlap", dict)
    eq_t, eq_a = faults.ok(doc, "equal_targets", bool), faults.ok(doc, "equal_attributes", bool)
    return TestSpec(id=faults.ok(doc, "id") or "?", version=faults.ok(doc, "version"),
                    title=faults.ok(doc, "title") or "", level=level, sets={r: doc[r] for r in ROLES},
                    expansions=exps, license=faults.ok(doc, "license") or "",
                    source=(faults.ok(doc, "source", dict) if "source" not in faults.at else None) or {}, file=file,
                    bias_type=faults.ok(doc, "bias_type"), aliases=faults.ok(doc, "aliases") or [],
                    notes=faults.ok(doc, "notes"), equal_targets=True if eq_t is None else eq_t,
                    equal_attributes=False if eq_a is None else eq_a,
                    language=faults.ok(doc, "language") or DEFAULT_LANGUAGE,
                    variant=faults.ok(doc, "variant") if variant_ok else None,
                    variant_of=faults.ok(doc, "variant_of") if variant_ok else None,
                    methods=tuple(methods) if methods is not None else None,
                    overlap={k: list(overlap[k]) for k in OVERLAP_PAIRS if k in overlap} if overlap else None, raw=doc,
                    forms=forms or None)


def parse_template(doc: Any, file: str) -> Template:
    if not isinstance(doc, dict):
        raise _not_mapping("a template file", doc, file)
    found = _fields("template", doc, file, f"template {_the_id(doc) or '?'}")
    _report(found, None)
    return Template(id=doc["id"], version=doc["version"], families=doc["families"], parts=doc.get("parts") or {},
                    file=file, source=doc.get("source"), license=doc.get("license"),
                    language=doc.get("language") or DEFAULT_LANGUAGE, raw=doc)


def parse_criterion(doc: Any, file: str, problems: list | None = None) -> Criterion | None:
    """The validity criterion a file holds; ``problems`` as for :func:`parse_set` (a faulty item is left out;
    None when its items or its criterion block could not be read)."""
    if not isinstance(doc, dict):
        raise _not_mapping("a criterion", doc, file)
    obj = f"criterion {_the_id(doc) or '?'}"
    found = _fields("criterion", doc, file, obj)
    faults = _Faults(found)
    _report(found, problems)
    raw_items, spec = faults.ok(doc, "items", list), faults.ok(doc, "criterion", dict)
    if raw_items is None or spec is None or "criterion" in faults.at:
        return None
    bad = faults.at.get("items", set())
    items = [CriterionItem(text=normalize_text(it["text"]), kind=it["kind"], value=float(it["value"]),
                           rows=[int(r) for r in it["rows"]],
                           weight=float(it["weight"]) if it.get("weight") is not None else None, note=it.get("note"))
             for n, it in enumerate(raw_items) if n not in bad]
    return Criterion(id=faults.ok(doc, "id") or "?", version=faults.ok(doc, "version"),
                     title=faults.ok(doc, "title") or "", concept=faults.ok(doc, "concept") or "", items=items,
                     license=faults.ok(doc, "license") or "",
                     source=(faults.ok(doc, "source", dict) if "source" not in faults.at else None) or {},
                     criterion=dict(spec), a=faults.ok(doc, "a") or "", b=faults.ok(doc, "b") or "",
                     expected_sign=faults.ok(doc, "expected_sign") or "positive", file=file,
                     notes=faults.ok(doc, "notes"), language=faults.ok(doc, "language") or DEFAULT_LANGUAGE,
                     changelog=faults.ok(doc, "changelog") or [], raw=doc)


class Registry:
    """A registry folder: catalog.yaml, registry/, templates/."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        self._top = self.root.resolve()
        self.catalog = cat = self._read_catalog()
        self._seen: dict = {}       # each file read, as it was when read (eatlas.registry.reads; load_registry)
        self.sets: dict[str, StimulusSet] = {}
        self.tests: dict[str, TestSpec] = {}
        self.templates: dict[str, Template] = {}
        self.criteria: dict[str, Criterion] = {}
        self.recorded_hash: dict[tuple[str, str], str] = {}
        for kind, store in (("sets", self.sets), ("tests", self.tests), ("templates", self.templates),
                            ("criteria", self.criteria)):
            for entry in cat.get(kind) or []:          # each a mapping with an id and a version (the catalog's model)
                eid, ever = entry["id"], entry["version"]
                obj = f"catalog {_singular(kind)} {eid}"
                parsed = self._parse_entry(kind, eid, ever, self.resolve(entry.get("file"), "catalog.yaml", obj))
                if eid in store:
                    raise EatlasError(f"duplicate {_singular(kind)} id {eid!r}", file="catalog.yaml", obj=obj,
                                      field="id",
                                      hint="each id is listed once; run 'eatlas catalog --sync'")
                store[eid] = parsed
                if entry.get("sha256"):
                    self.recorded_hash[(kind, eid)] = entry["sha256"]
        for entry in cat.get("published") or []:
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
            p = self._resolved(rel)
        except (OSError, ValueError, RuntimeError):
            raise EatlasError(f"unusable path {rel!r:.80}", file=file, obj=obj, field="file",
                              hint="give the file's path relative to the registry folder") from None
        if Path(rel).is_absolute() or not p.is_relative_to(self._top):
            raise EatlasError(f"path {rel!r:.80} leaves the registry folder", file=file, obj=obj, field="file",
                              hint="paths are relative to the registry folder and stay inside it "
                                   "(no absolute paths, no '..', no symlinks pointing outside)")
        return p

    def _resolved(self, rel: str) -> Path:
        """``(root / rel).resolve()``, each folder resolved once (the registry's 4,800 files are in a few hundred
        folders): the file itself is resolved in full only when it is a link."""
        head, _, base = rel.rpartition("/")
        if os.sep != "/" or os.altsep or base in ("", ".", ".."):
            return (self.root / rel).resolve()
        dirs = self.__dict__.setdefault("_dirs", {})
        if head not in dirs:
            dirs[head] = str((self.root / head).resolve()) if head else str(self._top)
        p = os.path.join(dirs[head], base)
        try:
            if not stat.S_ISLNK(os.lstat(p).st_mode):
                return Path(p)
        except FileNotFoundError:
            return Path(p)          # as resolve() gives a path that does not exist
        return Path(p).resolve()

    def _read_catalog(self) -> dict:
        """catalog.yaml, read and its fields checked."""
        cat_path = self.root / "catalog.yaml"
        if not cat_path.is_file():
            raise EatlasError("no catalog.yaml here; is this a registry folder?", file=str(cat_path),
                              hint="pass --registry DIR or set EATLAS_REGISTRY")
        cat_path = self.resolve("catalog.yaml", "catalog.yaml", "catalog")   # a link out of the folder is refused
        cat = read_yaml(cat_path, root=self.root, max_bytes=CATALOG_MAX_BYTES) or {}
        if not isinstance(cat, dict):
            raise EatlasError(f"the catalog must be a mapping with sets, tests, templates, got {typename(cat)}",
                              file="catalog.yaml", obj="catalog", hint="run 'eatlas catalog --sync' to rebuild it")
        _report(_fields("catalog", cat, "catalog.yaml", lambda fld: _catalog_entry(cat, fld)), None)
        return cat

    def _parse_entry(self, kind: str, eid: str, version: str, path: Path):
        """The entry ``eid`` of ``kind`` read from its file (resolved, inside the folder), which must hold the id and
        version the catalog gives it."""
        obj = f"catalog {_singular(kind)} {eid}"
        rel = str(path.relative_to(self._top))      # resolve() returned it resolved, inside the root
        try:
            parsed = _PLAIN[kind][1](read_yaml(path, shown=rel), rel)
        except EatlasError as e:     # name the catalog entry when the file itself could not say
            if e.obj is not None:
                raise
            raise EatlasError(e.message, file=e.file, obj=f"{_singular(kind)} {eid}", field=e.field,
                              hint=e.hint) from None
        if parsed.id != eid or parsed.version != version:
            raise EatlasError(f"catalog says {eid}@{version} but the file holds {parsed.id}@{parsed.version}",
                              file=rel, obj=obj, field="id/version",
                              hint=f"run 'eatlas bump {eid} --follow' (catalog.yaml and every test naming an "
                                   "older version follow), or 'eatlas catalog --sync'")
        return parsed

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

    def versions(self, kind: str) -> dict[str, str]:
        """id -> version of every entry of ``kind`` (sets, tests, templates), without reading the entries a
        registry from the cache has not decoded yet."""
        entries = getattr(self, kind)
        return entries.versions() if isinstance(entries, LazyEntries) else {k: v.version for k, v in entries.items()}

    # ---------------------------------------------------------------- plain data (eatlas.registry.cache)
    def to_plain(self) -> tuple[dict, list]:
        """The registry as plain data (mappings, lists, text, numbers, dates; no objects): a head (the folder,
        the catalog, each kind's entries as [id, version, file, file as the catalog names it, recorded sha256] and
        the other recorded hashes) and the entries, in the order the head lists them. :meth:`from_view` makes the
        registry again from the cache file (eatlas.registry.cache)."""
        catalog = dict(self.catalog)
        head = {"root": str(self.root), "catalog": catalog, "entries": {},
                "recorded_other": [[k, i, h] for (k, i), h in self.recorded_hash.items() if k not in _PLAIN]}
        entries = []
        for kind in _PLAIN:
            store = getattr(self, kind)
            named = {e.get("id"): e.get("file") for e in catalog.get(kind) or [] if isinstance(e, dict)}
            # an entry of a registry from the cache that was never decoded is written back as the cache's own
            # bytes (checked), not decoded and encoded again: 'eatlas add' keeps the registry with one entry more
            d = store.everything() if isinstance(store, LazyEntries) else store
            head["entries"][kind] = [[eid, obj.version, obj.file, named.get(eid, obj.file),
                                      self.recorded_hash.get((kind, eid))] for eid, obj in d.items()]
            entries += [(store.raw(eid) if isinstance(store, LazyEntries) else None) or _plain_entry(store[eid])
                        for eid in d]
        return head, entries

    @classmethod
    def from_view(cls, view) -> Registry:
        """The registry of a cache file (``view``: eatlas.registry.cache.View), read as it is used: the catalog by
        its top-level keys, an entry when it is first asked for (a run of one test reads its own few entries of the
        index, not the registry's thousands). An entry that cannot be decoded, or whose file the catalog now
        names elsewhere, is read from its YAML file instead, checked as any file is."""
        reg = cls.__new__(cls)
        reg.root = Path(view.root)
        reg._top = reg.root.resolve()
        reg.catalog = _LazyCatalog(view)
        reg.recorded_hash = _LazyRecorded(view)
        reg._seen = {}
        for kind, (make, _) in _PLAIN.items():
            def decode(eid, p, make=make, kind=kind):
                with reads.recording(reg._seen):        # its file as read, for what a run's checks find
                    path = reg.resolve(p.named, "catalog.yaml", f"catalog {_singular(kind)} {eid}")
                    if str(path.relative_to(reg._top)) == p.file:
                        try:
                            obj = make(view.entry(p))
                            if obj.id == eid and obj.version == p.version and obj.file == p.file:
                                return obj
                        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                            pass
                    return reg._parse_entry(kind, eid, p.version, path)
            setattr(reg, kind, LazyEntries({}, decode, view.raw, index=_Index(view, kind)))
        return reg

    @cached_property
    def sources(self) -> dict:
        from .cite import check_sources  # the bibliography's schema lives with the citation code

        p = self.root / "registry" / "sources.yaml"
        if p.is_symlink() or p.exists():        # like every file the registry reads: inside the folder
            p = self.resolve("registry/sources.yaml", "registry/sources.yaml", "sources")
        return check_sources((read_yaml(p, root=self.root) or {}) if p.is_file() else {})


class _Pending(tuple):
    """An entry of a registry from the cache not decoded yet: its row of the cache file's index (version, file,
    file as the catalog names it, then where its line is, its seal and its source file's digest)."""
    __slots__ = ()

    version = property(lambda self: self[0])
    file = property(lambda self: self[1])
    named = property(lambda self: self[2])


class _Index:
    """One kind's entries in a cache file's index, looked up one by one (``view.lookup``) or all at once."""

    def __init__(self, view, kind: str):
        self.view, self.kind = view, kind

    def get(self, eid) -> _Pending | None:
        row = self.view.lookup(self.kind, eid)
        return None if row is None else _Pending(row)

    def every(self) -> dict:
        return {eid: _Pending(row) for eid, row in self.view.rows(self.kind)}


class _LazyCatalog(Mapping):
    """catalog.yaml as parsed, from a cache file: each top-level key decoded when first read."""

    def __init__(self, view):
        self._view, self._got = view, {}

    def __getitem__(self, key):
        if key not in self._got:
            if key not in self._view.catalog_keys:
                raise KeyError(key)
            self._got[key] = self._view.catalog(key)
        return self._got[key]

    def __iter__(self):
        return iter(self._view.catalog_keys)

    def __len__(self) -> int:
        return len(self._view.catalog_keys)

    def __repr__(self) -> str:
        return f"_LazyCatalog({list(self._view.catalog_keys)})"


class _LazyRecorded(Mapping):
    """(kind, id) -> the sha256 catalog.yaml records, from a cache file's index: one entry looked up alone."""

    def __init__(self, view):
        self._view, self._all, self._other = view, None, None

    def __getitem__(self, key):
        if self._all is None and isinstance(key, tuple) and len(key) == 2:
            if key[0] in _PLAIN:
                row = self._view.lookup(key[0], key[1])
                if row is None or row[7] is None:
                    raise KeyError(key)
                return row[7]
            return self._others()[key]
        return self.everything()[key]

    def _others(self) -> dict:
        """The published tables' hashes: a short list of their own."""
        if self._other is None:
            self._other = {(k, i): h for k, i, h in self._view.recorded_other()}
        return self._other

    def everything(self) -> dict:
        if self._all is None:
            out = {}
            for kind in _PLAIN:
                out.update({(kind, eid): row[7] for eid, row in self._view.rows(kind) if row[7] is not None})
            self._all = {**out, **self._others()}
        return self._all

    def __iter__(self):
        return iter(self.everything())

    def __len__(self) -> int:
        return len(self.everything())


class LazyEntries(MutableMapping):
    """id -> set, test or template of a registry from the cache (:meth:`Registry.from_view`), each decoded
    when first read: a run of one test decodes its own four sets, not the registry's thousands. With an ``index``,
    an id is looked up there when first asked for; the whole index is read only to list or change the entries.
    Iterating over the values decodes them all. Pickled (e.g. for a Ray worker), it is a plain dict."""

    def __init__(self, pending: dict, decode, raw=None, cached: dict | None = None, index: _Index | None = None):
        self._d, self._decode, self._raw, self._index = pending, decode, raw, index
        # id -> its row in the cache file, while the entry is the one read from there (decoded or not)
        self._cached = dict(cached) if cached is not None else {k: v for k, v in pending.items()
                                                               if isinstance(v, _Pending)}

    def _find(self, key) -> bool:
        """Whether ``key`` is an entry (looked up in the index the first time)."""
        if key in self._d:
            return True
        if self._index is None:
            return False
        p = self._index.get(key)
        if p is None:
            return False
        self._d[key] = self._cached[key] = p
        return True

    def everything(self) -> dict:
        """id -> entry (or its row, not decoded yet) of every entry, in the index's order."""
        if self._index is not None:
            every = self._index.every()
            self._cached.update((k, p) for k, p in every.items() if k not in self._d)
            every.update(self._d)
            self._d, self._index = every, None
        return self._d

    def raw(self, key) -> bytes | None:
        """The cache's bytes of an entry still as read from the cache (its line, checked), or None."""
        self._find(key)
        p = self._cached.get(key)
        if self._raw is None or p is None:
            return None
        try:
            return self._raw(p)
        except ValueError:
            return None

    def copy(self) -> LazyEntries:
        """Another mapping of the same entries, the pending ones still pending."""
        return LazyEntries(dict(self.everything()), self._decode, self._raw, self._cached)

    def with_entries(self, d: dict) -> LazyEntries:
        """A mapping of ``d`` (this mapping's entries, pending or read, and new ones), kept as lazy as this."""
        mine = self.everything()
        return LazyEntries(d, self._decode, self._raw, {k: p for k, p in self._cached.items()
                                                        if k in d and d[k] is mine.get(k)})

    def __getitem__(self, key):
        if not self._find(key):
            raise KeyError(key)
        v = self._d[key]
        if isinstance(v, _Pending):
            v = self._d[key] = self._decode(key, v)
        return v

    def __setitem__(self, key, value):
        self.everything()[key] = value
        self._cached.pop(key, None)

    def __delitem__(self, key):
        del self.everything()[key]
        self._cached.pop(key, None)

    def __contains__(self, key) -> bool:
        return self._find(key)

    def __iter__(self):
        return iter(self.everything())

    def __len__(self) -> int:
        return len(self.everything())

    def __repr__(self) -> str:
        return f"LazyEntries({len(self)} entries)"

    def __reduce__(self):
        return dict, (dict(self.items()),)

    def versions(self) -> dict[str, str]:
        return {k: v.version for k, v in self.everything().items()}


_ITEM_FIELDS = tuple(f.name for f in fields(Item))


def _plain_entry(obj) -> dict:
    """A set, test or template as plain data (its fields; items as lists, expansions as mappings)."""
    out = {f.name: getattr(obj, f.name) for f in fields(obj)}
    if isinstance(obj, StimulusSet):
        out["items"] = [[getattr(i, k) for k in _ITEM_FIELDS] for i in obj.items]
    elif isinstance(obj, TestSpec):
        out["expansions"] = {lvl: vars(e) for lvl, e in obj.expansions.items()}
    elif isinstance(obj, Criterion):
        out["items"] = [[getattr(i, k) for k in _CRITERION_ITEM_FIELDS] for i in obj.items]
    return out


def _set_from_plain(d: dict) -> StimulusSet:
    return StimulusSet(**{**d, "items": [Item(*i) for i in d["items"]]})


def _test_from_plain(d: dict) -> TestSpec:
    return TestSpec(**{**d, "expansions": {lvl: Expansion(**e) for lvl, e in d["expansions"].items()}})


def _template_from_plain(d: dict) -> Template:
    return Template(**d)


def _criterion_from_plain(d: dict) -> Criterion:
    return Criterion(**{**d, "items": [CriterionItem(*i) for i in d["items"]]})


_CRITERION_ITEM_FIELDS = tuple(f.name for f in fields(CriterionItem))


def _singular(kind: str) -> str:
    """sets -> set, criteria -> criterion."""
    return "criterion" if kind == "criteria" else kind[:-1]


# kind -> (from plain data, from a parsed YAML document): the registry's entries in the cache, in this order
_PLAIN = {"sets": (_set_from_plain, lambda doc, file: parse_set(doc, file)),
          "tests": (_test_from_plain, lambda doc, file: parse_test(doc, file)),
          "templates": (_template_from_plain, lambda doc, file: parse_template(doc, file)),
          "criteria": (_criterion_from_plain, lambda doc, file: parse_criterion(doc, file))}


def _catalog_entry(cat: dict, field: str) -> str:
    """The object a problem of catalog.yaml's ``field`` is in: 'catalog set roses' (an entry with a good id),
    'catalog sets[3]', or 'catalog'."""
    m = re.match(r"^(sets|tests|templates|published|criteria)\[(\d+)\]", field)
    if m is None:
        return "catalog"
    entry = (cat.get(m[1]) or [])[int(m[2])]
    eid = entry.get("id") if isinstance(entry, dict) else None
    if isinstance(eid, str) and ID_RE.match(eid) and not field.endswith("].id"):
        return f"catalog {_singular(m[1]) if m[1] != 'published' else m[1]} {eid}"
    return f"catalog {m[1]}[{m[2]}]"


def _suggest(name: str, known, where: str) -> str:
    close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    return (f"did you mean {', '.join(close)}? " if close else "") + f"see {where}"


_DEFAULT: dict[str, Registry] = {}


class _CatalogView:
    """The catalog alone, in the form of a cache file's view (eatlas.registry.cache.View) that holds no entry: each
    entry is read from its file when first used (:meth:`Registry.from_view`)."""

    def __init__(self, root: str, catalog: dict):
        self.root, self._cat = root, catalog
        self.catalog_keys = list(catalog)
        self._rows = {}
        for kind in _PLAIN:
            rows = self._rows[kind] = {}
            for e in catalog.get(kind) or []:
                if e["id"] in rows:
                    raise EatlasError(f"duplicate {_singular(kind)} id {e['id']!r}", file="catalog.yaml",
                                      obj=f"catalog {_singular(kind)} {e['id']}", field="id",
                                      hint="each id is listed once; run 'eatlas catalog --sync'")
                rows[e["id"]] = (e["version"], None, e.get("file"), 0, 0, "", None, e.get("sha256") or None)

    def catalog(self, key: str):
        return self._cat[key]

    def recorded_other(self) -> list:
        return [["published", e.get("id"), e["sha256"]] for e in self._cat.get("published") or [] if e.get("sha256")]

    def lookup(self, kind: str, eid):
        return self._rows[kind].get(eid)

    def rows(self, kind: str):
        return list(self._rows[kind].items())

    def raw(self, row) -> bytes:
        raise ValueError("not in a cache file")

    entry = raw


def _build(root: str) -> Registry:
    """The registry of ``root``, every file parsed (then kept in the cache); when an entry's file cannot be read,
    the registry of the catalog alone, each entry read when first used (not kept): a command that uses that entry
    (``validate``, ``list``, a run of a test naming it) says what is wrong with it, one that does not is not
    stopped by it, as with a registry from the cache, whose entries are read only when used."""
    try:
        with reads.recording() as seen:     # each file as it was read, for what a run's checks find (12 ms of hashing)
            reg = Registry(root)
        reg._seen = seen
        return reg
    except EatlasError as e:
        if e.file in (None, "catalog.yaml"):
            raise
    reg = Registry.from_view(_CatalogView(root, _catalog_of(root)))
    reg._partial = True
    return reg


def _catalog_of(root: str) -> dict:
    """catalog.yaml, read and checked as :class:`Registry` reads it."""
    reg = Registry.__new__(Registry)
    reg.root = Path(root)
    reg._top = reg.root.resolve()
    return reg._read_catalog()


def load_registry(root: str | Path | None = None) -> Registry:
    key = str(Path(root).resolve()) if root is not None else str(default_root().resolve())
    if key not in _DEFAULT:
        from . import cache as registry_cache
        _DEFAULT[key] = registry_cache.load(Path(key), lambda: _build(key), Registry.from_view)
    return _DEFAULT[key]
