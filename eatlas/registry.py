"""Loading the curated registry: catalog.yaml, stimulus sets, tests, templates.

The registry knows nothing of models. Files are safe-loaded YAML; every problem is raised as an
:class:`EatlasError` naming the file, the object and the field.
"""
from __future__ import annotations

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

from .errors import EatlasError

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_+\-]*$")
SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
REF_RE = re.compile(r"^(?P<id>[^@\s]+)@(?P<version>[^@\s]+)$")
KINDS = ("name", "noun", "group_term", "mass_noun", "adjective", "verb", "pronoun", "sentence")
CASES = ("subject", "object", "possessive")
ROLES = ("x", "y", "a", "b")
LEVELS = ("word", "sent", "sent(u)", "c-word", "c-word(u)")
MAX_FILE_BYTES = 2_000_000

SET_KEYS = {"id", "version", "concept", "license", "source", "notes", "changelog", "items",
            "template_vars", "group", "case_sensitive", "tags"}
ITEM_KEYS = {"text", "kind", "case", "number", "plural", "singular", "article", "note"}
TEST_KEYS = {"id", "version", "title", "bias_type", "level", "license", "source", "x", "y", "a", "b",
             "expansions", "aliases", "notes", "changelog", "equal_targets", "equal_attributes",
             "methods", "tags"}
TEMPLATE_KEYS = {"id", "version", "license", "source", "description", "parts", "families", "changelog"}
CATALOG_KEYS = {"sets", "tests", "templates", "published"}


def default_root() -> Path:
    env = os.environ.get("EATLAS_REGISTRY")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent


def read_yaml(path: Path, *, root: Path | None = None) -> Any:
    """Safe-load one YAML file with size and encoding checks."""
    shown = _shown(path, root)
    if not path.is_file():
        raise EatlasError("file not found", file=shown)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise EatlasError(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for a registry file",
                          file=shown, hint="split it into smaller sets")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise EatlasError(f"not valid UTF-8 (byte {e.start})", file=shown, hint="save the file as UTF-8") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise EatlasError(f"malformed YAML{where}: {problem}", file=shown) from None


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
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def hash(self) -> str:
        return content_hash({"items": [i.lexical() for i in self.items], "template_vars": self.template_vars})


@dataclass
class Template:
    id: str
    version: str
    families: dict[str, list[str]]
    parts: dict[str, str]
    file: str
    source: dict | None = None
    license: str | None = None
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    def hash(self) -> str:
        return content_hash({"families": self.families, "parts": self.parts})


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
        return content_hash({"sets": self.sets, "level": self.level,
                             "expansions": {k: vars(v) for k, v in self.expansions.items()}})


def _need(doc: dict, key: str, typ, file: str, obj: str):
    if key not in doc or doc[key] is None:
        raise EatlasError("missing required field", file=file, obj=obj, field=key)
    v = doc[key]
    if not isinstance(v, typ):
        names = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise EatlasError(f"expected {names}, got {type(v).__name__} {v!r:.60}", file=file, obj=obj, field=key)
    return v


def _check_keys(doc: dict, allowed: set, file: str, obj: str):
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise EatlasError(f"unknown key(s) {', '.join(map(str, unknown))}", file=file, obj=obj, field=str(unknown[0]),
                          hint=f"allowed: {', '.join(sorted(allowed))}")


def check_id(value: Any, file: str, obj: str, fld: str = "id") -> str:
    if not isinstance(value, str) or not ID_RE.match(value) or ".." in value:
        raise EatlasError(f"invalid id {value!r}", file=file, obj=obj, field=fld,
                          hint="ids are lower case letters, digits, '_', '+', '-' (no '/', no '..')")
    return value


def check_version(value: Any, file: str, obj: str, fld: str = "version") -> str:
    if not isinstance(value, str) or not SEMVER_RE.match(value):
        raise EatlasError(f"version {value!r} is not semantic (MAJOR.MINOR.PATCH)", file=file, obj=obj, field=fld,
                          hint="write it quoted, e.g. version: \"1.0.0\"" if not isinstance(value, str) else None)
    return value


def parse_ref(value: Any, file: str, obj: str, fld: str) -> tuple[str, str]:
    if not isinstance(value, str) or not REF_RE.match(value):
        raise EatlasError(f"expected 'id@version', got {value!r}", file=file, obj=obj, field=fld)
    m = REF_RE.match(value)
    check_id(m["id"], file, obj, fld)
    check_version(m["version"], file, obj, fld)
    return m["id"], m["version"]


def parse_set(doc: Any, file: str) -> StimulusSet:
    if not isinstance(doc, dict):
        raise EatlasError(f"a stimulus set must be a mapping, got {type(doc).__name__}", file=file)
    sid = check_id(doc.get("id"), file, "set ?")
    obj = f"set {sid}"
    _check_keys(doc, SET_KEYS, file, obj)
    version = check_version(doc.get("version"), file, obj)
    concept = _need(doc, "concept", str, file, obj)
    lic = _need(doc, "license", str, file, obj)
    source = _need(doc, "source", dict, file, obj)
    if not source.get("paper"):
        raise EatlasError("source has no paper", file=file, obj=obj, field="source.paper",
                          hint="name the paper key from registry/sources.yaml")
    raw_items = _need(doc, "items", list, file, obj)
    items = []
    for n, it in enumerate(raw_items):
        fld = f"items[{n}]"
        if isinstance(it, str):
            raise EatlasError(f"item {it!r} is a bare string; give its kind", file=file, obj=obj, field=fld,
                              hint="write - {text: ..., kind: noun}")
        if not isinstance(it, dict):
            raise EatlasError(f"expected a mapping, got {type(it).__name__}", file=file, obj=obj, field=fld)
        _check_keys(it, ITEM_KEYS, file, obj)
        for k, v in it.items():
            if v is not None and not isinstance(v, str):
                raise EatlasError(f"expected text, got {type(v).__name__} {v!r:.40}", file=file, obj=obj,
                                  field=f"{fld}.{k}", hint="quote values such as yes/no/numbers")
        items.append(Item(**{k: (normalize_text(v) if k == "text" and isinstance(v, str) else v)
                             for k, v in it.items() if v is not None}))
    tv = doc.get("template_vars") or {}
    if not isinstance(tv, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tv.items()):
        raise EatlasError("template_vars must map names to text", file=file, obj=obj, field="template_vars")
    return StimulusSet(id=sid, version=version, concept=concept, items=items, license=lic, source=source,
                       file=file, notes=doc.get("notes"), changelog=doc.get("changelog") or [],
                       template_vars=tv, group=doc.get("group"), raw=doc)


def parse_test(doc: Any, file: str) -> TestSpec:
    if not isinstance(doc, dict):
        raise EatlasError(f"a test must be a mapping, got {type(doc).__name__}", file=file)
    tid = check_id(doc.get("id"), file, "test ?")
    obj = f"test {tid}"
    _check_keys(doc, TEST_KEYS, file, obj)
    version = check_version(doc.get("version"), file, obj)
    sets = {}
    for role in ROLES:
        parse_ref(doc.get(role), file, obj, role)
        sets[role] = doc[role]
    level = doc.get("level", "word")
    exps = {}
    raw_exps = doc.get("expansions") or {}
    if not isinstance(raw_exps, dict):
        raise EatlasError("expansions must be a mapping level -> {template: id@version}", file=file, obj=obj,
                          field="expansions")
    for lvl, spec in raw_exps.items():
        fld = f"expansions.{lvl}"
        if lvl not in ("sent", "sent(u)"):
            raise EatlasError(f"unknown expansion level {lvl!r}", file=file, obj=obj, field=fld,
                              hint="sent or sent(u); c-word levels reuse these sentences")
        if not isinstance(spec, dict):
            raise EatlasError("expected a mapping with 'template'", file=file, obj=obj, field=fld)
        _check_keys(spec, {"template", "families", "vars"}, file, obj)
        parse_ref(spec.get("template"), file, obj, f"{fld}.template")
        fams = spec.get("families") or {}
        if not isinstance(fams, dict) or set(fams) - set(ROLES):
            raise EatlasError("families must map roles x, y, a, b to a family name", file=file, obj=obj,
                              field=f"{fld}.families")
        vs = spec.get("vars") or {}
        if not isinstance(vs, dict):
            raise EatlasError("vars must be a mapping", file=file, obj=obj, field=f"{fld}.vars")
        exps[lvl] = Expansion(template=spec["template"], families=dict(fams), vars=dict(vs))
    if level != "word" and level not in exps:
        raise EatlasError(f"level {level!r} is neither 'word' nor one of the test's expansions", file=file, obj=obj,
                          field="level")
    return TestSpec(id=tid, version=version, title=_need(doc, "title", str, file, obj), level=level, sets=sets,
                    expansions=exps, license=_need(doc, "license", str, file, obj),
                    source=_need(doc, "source", dict, file, obj), file=file, bias_type=doc.get("bias_type"),
                    aliases=doc.get("aliases") or [], notes=doc.get("notes"),
                    equal_targets=bool(doc.get("equal_targets", True)),
                    equal_attributes=bool(doc.get("equal_attributes", False)), raw=doc)


def parse_template(doc: Any, file: str) -> Template:
    if not isinstance(doc, dict):
        raise EatlasError(f"a template file must be a mapping, got {type(doc).__name__}", file=file)
    tid = check_id(doc.get("id"), file, "template ?")
    obj = f"template {tid}"
    _check_keys(doc, TEMPLATE_KEYS, file, obj)
    version = check_version(doc.get("version"), file, obj)
    fams = _need(doc, "families", dict, file, obj)
    for name, lst in fams.items():
        if not isinstance(lst, list) or not lst or not all(isinstance(s, str) for s in lst):
            raise EatlasError("a family must be a non-empty list of template strings", file=file, obj=obj,
                              field=f"families.{name}")
    parts = doc.get("parts") or {}
    if not isinstance(parts, dict) or not all(isinstance(v, str) for v in parts.values()):
        raise EatlasError("parts must map names to template strings", file=file, obj=obj, field="parts")
    return Template(id=tid, version=version, families=fams, parts=parts, file=file, source=doc.get("source"),
                    license=doc.get("license"), raw=doc)


class Registry:
    """A registry folder: catalog.yaml, registry/, templates/."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        cat_path = self.root / "catalog.yaml"
        if not cat_path.is_file():
            raise EatlasError("no catalog.yaml here; is this a registry folder?", file=str(cat_path),
                              hint="pass --registry DIR or set EATLAS_REGISTRY")
        self.catalog_file = "catalog.yaml"
        cat = read_yaml(cat_path, root=self.root) or {}
        if not isinstance(cat, dict):
            raise EatlasError("catalog must be a mapping with sets, tests, templates", file="catalog.yaml")
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
                raise EatlasError("expected a list of entries", file="catalog.yaml", field=kind)
            for n, entry in enumerate(entries):
                obj = f"catalog {kind}[{n}]"
                if not isinstance(entry, dict):
                    raise EatlasError("expected a mapping", file="catalog.yaml", obj=obj)
                eid = check_id(entry.get("id"), "catalog.yaml", obj)
                obj = f"catalog {kind[:-1]} {eid}"
                ever = check_version(entry.get("version"), "catalog.yaml", obj)
                path = self.resolve(entry.get("file"), "catalog.yaml", obj)
                rel = _shown(path, self.root)
                parsed = parser(read_yaml(path, root=self.root), rel)
                if parsed.id != eid or parsed.version != ever:
                    raise EatlasError(f"catalog says {eid}@{ever} but the file holds {parsed.id}@{parsed.version}",
                                      file=rel, obj=obj, field="id/version",
                                      hint="bump the version in both, or run 'eatlas catalog --sync'")
                if eid in store:
                    raise EatlasError(f"duplicate {kind[:-1]} id {eid!r}", file="catalog.yaml", obj=obj, field="id")
                store[eid] = parsed
                if entry.get("sha256"):
                    self.recorded_hash[(kind, eid)] = entry["sha256"]

    def resolve(self, rel: Any, file: str, obj: str) -> Path:
        """A path named in a registry file, refused if it leaves the registry folder."""
        if not isinstance(rel, str) or not rel:
            raise EatlasError("missing file path", file=file, obj=obj, field="file")
        p = (self.root / rel).resolve()
        if Path(rel).is_absolute() or not p.is_relative_to(self.root.resolve()):
            raise EatlasError(f"path {rel!r} leaves the registry folder", file=file, obj=obj, field="file")
        return p

    def get_set(self, ref: str) -> StimulusSet:
        sid, ver = ref.split("@") if "@" in ref else (ref, None)
        if sid not in self.sets:
            raise EatlasError(f"unknown stimulus set {sid!r}")
        s = self.sets[sid]
        if ver is not None and s.version != ver:
            raise EatlasError(f"set {sid} is at version {s.version}, not {ver}")
        return s

    def get_template(self, ref: str) -> Template:
        tid, ver = ref.split("@")
        if tid not in self.templates:
            raise EatlasError(f"unknown template {tid!r}")
        t = self.templates[tid]
        if t.version != ver:
            raise EatlasError(f"template {tid} is at version {t.version}, not {ver}")
        return t

    def get_test_spec(self, test_id: str) -> TestSpec:
        if test_id in self.tests:
            return self.tests[test_id]
        for t in self.tests.values():  # aliases (e.g. sent-weat1, ML-EAT names)
            if any(isinstance(a, dict) and a.get("name") == test_id for a in t.aliases):
                return t
        raise EatlasError(f"unknown test {test_id!r}", hint="'eatlas list' shows the tests")

    @cached_property
    def sources(self) -> dict:
        p = self.root / "registry" / "sources.yaml"
        return (read_yaml(p, root=self.root) or {}) if p.is_file() else {}


_DEFAULT: dict[str, Registry] = {}


def load_registry(root: str | Path | None = None) -> Registry:
    key = str(Path(root).resolve()) if root is not None else str(default_root().resolve())
    if key not in _DEFAULT:
        _DEFAULT[key] = Registry(key)
    return _DEFAULT[key]
