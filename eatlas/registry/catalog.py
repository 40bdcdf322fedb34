"""Keeping catalog.yaml in step with the registry files, and adding new sets and tests.

``sync`` indexes every set, test and template file and records its content hash; it refuses to
record a new hash under an unchanged version (the content changed without a version bump).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import EatlasError, ValidationFailed
from ..files import write_text
from .base import (
    CATALOG_MAX_BYTES,
    LazyEntries,
    Registry,
    _singular,
    check_id,
    parse_criterion,
    parse_set,
    parse_template,
    parse_test,
    read_yaml,
    semver_key,
)

KINDS = {"sets": parse_set, "tests": parse_test, "templates": parse_template, "criteria": parse_criterion}


def _files(root: Path) -> dict[str, list[Path]]:
    return {
        "sets": _inside(root, (root / "registry").glob("*/sets/*.yaml")),
        "tests": _inside(root, (root / "registry").glob("*/tests/*.yaml")),
        "templates": _inside(root, (root / "templates").glob("*.yaml")),
        "criteria": _inside(root, (root / "registry").glob("*/criteria/*.yaml")),
    }


def _inside(root: Path, paths) -> list[Path]:
    """The paths, refusing any that resolves outside the registry folder (a symlink pointing out)."""
    top = root.resolve()
    out = sorted(paths)
    for p in out:
        if not p.resolve().is_relative_to(top):
            raise EatlasError("the file is a link to a place outside the registry folder",
                              file=str(p.relative_to(root)),
                              hint="copy the file into the registry instead of linking it")
    return out


def sync(root: Path, *, write: bool = True) -> dict:
    """Rebuild catalog.yaml from the files; returns the new catalog."""
    cat_path = root / "catalog.yaml"
    old = (read_yaml(cat_path, root=root, max_bytes=CATALOG_MAX_BYTES) or {}) if cat_path.is_file() else {}
    if not isinstance(old, dict):
        old = {}          # an unreadable catalog is rebuilt from the files
    new: dict = {}
    for kind, parser in KINDS.items():
        prev_entries = old.get(kind) if isinstance(old.get(kind), list) else []
        previous = {e["id"]: e for e in prev_entries if isinstance(e, dict) and isinstance(e.get("id"), str)}
        entries, seen = [], {}
        for path in _files(root)[kind]:
            rel = str(path.relative_to(root))
            obj = parser(read_yaml(path, root=root), rel)
            if obj.id in seen:
                raise EatlasError(f"id {obj.id!r} also defined in {seen[obj.id]}", file=rel, field="id")
            seen[obj.id] = rel
            h = obj.hash()
            prev = previous.get(obj.id)
            was = semver_key(prev.get("version")) if prev else None
            if was is not None and semver_key(obj.version) < was:
                # Versions only go up: otherwise an old version number could come back with other content.
                raise EatlasError(f"version {obj.version} is lower than {prev['version']}, the version in "
                                  "catalog.yaml", file=rel, obj=f"{_singular(kind)} {obj.id}", field="version",
                                  hint=f"give a version above {prev['version']} and add a changelog entry")
            if prev and prev.get("version") == obj.version and prev.get("sha256") not in (None, h):
                raise EatlasError(f"content changed but version {obj.version} did not", file=rel,
                                  obj=f"{_singular(kind)} {obj.id}", field="version",
                                  hint="bump the version and add a changelog entry")
            entry = {"id": obj.id, "version": obj.version}
            if kind != "templates":
                entry["source"] = obj.source.get("paper")
            entry["license"] = obj.license
            entry["language"] = obj.language
            entry["file"] = rel
            entry["sha256"] = h
            entries.append(entry)
        new[kind] = entries
    pub = _inside(root, (root / "registry").glob("*/published/*.csv"))
    new["published"] = _published_entries(root, pub, old.get("published"))
    if write:
        write_catalog(cat_path, new)
    return new


def _published_entries(root: Path, paths: list[Path], previous) -> list[dict]:
    """Catalog entries of the published tables with their content hash and version. A table has no
    version field of its own: the version is kept while the content is unchanged and its minor number
    goes up when the content changed (1.0.0 -> 1.1.0), so one version always names one content."""
    from .published import file_hash

    prev = {e["id"]: e for e in previous if isinstance(e, dict) and isinstance(e.get("id"), str)} \
        if isinstance(previous, list) else {}
    out = []
    for p in paths:
        pid = f"{p.parent.parent.name}_{p.stem}"
        h = file_hash(p)
        e = prev.get(pid) or {}
        was = semver_key(e.get("version"))
        if was is None:
            version = "1.0.0"
        elif e.get("sha256") in (None, h):
            version = e["version"]
        else:
            version = f"{was[0]}.{was[1] + 1}.0"
        out.append({"id": pid, "version": version, "paper": p.parent.parent.name, "file": str(p.relative_to(root)),
                    "sha256": h})
    return out


# Files under registry/ that are not entries and so are not in the catalog, with the code that reads them:
# the bibliography (eatlas.registry.cite), the models of the papers' tables (eatlas.encoders.identity) and the
# conventions their numbers follow (eatlas.registry.published.read_conventions).
NOT_INDEXED = ("registry/sources.yaml", "registry/*/published/models.yaml", "registry/*/published/conventions.yaml")
INDEXED_GLOBS = ("registry/*/sets/*.yaml", "registry/*/tests/*.yaml", "registry/*/published/*.csv", "templates/*.yaml",
                 "registry/*/criteria/*.yaml")


def unindexed(root: Path, cat: dict) -> list[EatlasError]:
    """Every YAML or CSV file under registry/ and templates/ that catalog.yaml does not index, as one
    problem each with its fix: a dropped-in file is never silently ignored."""
    listed = {str(e.get("file")).replace("\\", "/") for kind in ("sets", "tests", "templates", "published", "criteria")
              for e in (cat.get(kind) or []) if isinstance(e, dict)}
    problems, described = _data_folders(root)
    for top in ("registry", "templates"):
        for p in sorted((root / top).rglob("*")):
            if p.suffix.lower() not in (".yaml", ".yml", ".csv") or not p.is_file():
                continue
            rel = p.relative_to(root).as_posix()
            if rel in listed or rel in described or any(
                    len(p.relative_to(root).parts) == len(Path(g).parts) and p.relative_to(root).match(g)
                    for g in NOT_INDEXED):
                continue
            if any(len(p.relative_to(root).parts) == len(Path(g).parts) and p.relative_to(root).match(g)
                   for g in INDEXED_GLOBS):
                hint = "run 'eatlas catalog --sync' to index it, or remove it"
            else:
                hint = ("the catalog indexes only " + ", ".join(INDEXED_GLOBS) + ": move or rename it there and "
                        "run 'eatlas catalog --sync', or remove it")
            problems.append(EatlasError("not in catalog.yaml, so no command reads it", file=rel, hint=hint))
    return problems


def _data_folders(root: Path) -> tuple[list[EatlasError], set[str]]:
    """A source's validation data (``registry/<source>/data/``) is not a catalog entry: its
    ``provenance.yaml`` lists every file with the sha256 of its bytes. Returns the problems (a file the
    provenance does not list, a listed file that is missing or whose bytes changed) and the files it
    accounts for."""
    from ..guard import sha256_of
    from .base import read_yaml

    problems, described = [], set()
    for prov in sorted((root / "registry").glob("*/data/provenance.yaml")):
        rel_prov = prov.relative_to(root).as_posix()
        described.add(rel_prov)
        doc = read_yaml(prov, root=root) or {}
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, list):
            problems.append(EatlasError("expected a list of {file, sha256, ...}", file=rel_prov, field="files"))
            continue
        listed = {}
        for n, f in enumerate(files):
            if not isinstance(f, dict) or not isinstance(f.get("file"), str) or not isinstance(f.get("sha256"), str):
                problems.append(EatlasError("each entry needs file and sha256", file=rel_prov, field=f"files[{n}]"))
                continue
            listed[f["file"]] = f["sha256"]
        folder = prov.parent
        for name, digest in listed.items():
            path = folder / name
            rel = path.relative_to(root).as_posix() if path.resolve().is_relative_to(folder.resolve()) else None
            if rel is None or not path.is_file():
                problems.append(EatlasError(f"lists {name!r}, which is not in {folder.relative_to(root).as_posix()}/",
                                            file=rel_prov, field="files", hint="remove the entry or restore the file"))
                continue
            described.add(rel)
            if sha256_of(path) != digest:
                problems.append(EatlasError("the file's bytes differ from the sha256 its provenance records", file=rel,
                                            field="sha256", hint=f"restore the authors' file, or update {rel_prov}"))
        for p in sorted(folder.rglob("*")):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and rel not in described:
                problems.append(EatlasError(f"not described in {rel_prov}, so nothing says where it comes from",
                                            file=rel, hint="add it to the provenance's files with its sha256, "
                                                           "or remove it"))
    return problems, described


def render_catalog(cat: dict) -> str:
    """The text of catalog.yaml for a catalog (one entry a line)."""
    lines = ["# Index of every stimulus set, test, template and published-results table.",
             "# Generated by 'eatlas catalog --sync'; sha256 is the hash of each entry's normalised content.", ""]
    for kind in ("sets", "tests", "templates", "published", "criteria"):
        if kind == "criteria" and not cat.get(kind):
            continue            # a registry without criteria keeps the catalog it had
        lines.append(f"{kind}:")
        for e in cat.get(kind, []):
            lines.append("  - " + yaml.safe_dump(e, default_flow_style=True, sort_keys=False, width=10_000).strip())
        if not cat.get(kind):
            lines[-1] = f"{kind}: []"
    return "\n".join(lines) + "\n"


def write_catalog(path: Path, cat: dict) -> None:
    write_text(path, render_catalog(cat), prefix=".catalog-", suffix=".yaml.tmp")    # temp + rename, umask mode


def catalog_diff(root: Path, cat: dict) -> list[str]:
    """The unified diff from catalog.yaml as it is to ``cat`` (empty when they agree)."""
    path = root / "catalog.yaml"
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    return list(difflib.unified_diff(old.splitlines(), render_catalog(cat).splitlines(), "catalog.yaml",
                                     "catalog.yaml (from the files)", n=0, lineterm=""))


def dump_entry(doc: dict) -> str:
    """YAML for a set or test file, items one per line in flow style."""
    items = doc.get("items")
    head = {k: v for k, v in doc.items() if k != "items"}
    text = yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=100)
    if items is not None:
        # each item dumped as a one-element flow list, brackets cut: a bare string item ("nurse", in a set that
        # declares its kind) is dumped as a document of its own otherwise, with an end marker ('...')
        text += "items:\n" + "".join(
            "  - " + yaml.safe_dump([i], default_flow_style=True, sort_keys=False, allow_unicode=True,
                                    width=10_000).strip()[1:-1] + "\n" for i in items)
    return text


class AddRefused(ValidationFailed):
    """``eatlas add`` found errors: every problem of the new file (and any the registry already had),
    with the warnings, which do not block."""

    def __init__(self, problems: list[EatlasError], warnings: list[EatlasError], new_file: str):
        super().__init__(problems)
        self.warnings, self.new_file = warnings, new_file


@dataclass
class Added:
    kind: str                   # "source", "set" or "test"
    id: str
    dest: Path
    warnings: list              # the new file's warnings and those the registry already had
    checked_whole: bool         # the registry was validated whole (no outcome recorded for its files)


def add(root: Path, file: Path) -> Added:
    """Validate a new set or test file on the registry as it would be with it, then write it into the
    registry and catalog.yaml. Nothing is written before every check has passed.

    The new file's problems are all listed (every field, every item; :class:`AddRefused`, exit 1).
    Only the new entry and what it touches are checked (its fields and items, the sets and templates a
    test names and its sentence expansions, the tests and variants that name a set, colliding ids); the
    rest is what ``validate`` found for the registry's files as they are, kept in the registry cache
    (``eatlas.registry.cache``), or found now, once, when nothing is kept. Errors there refuse the add
    too; warnings, the new file's or the registry's, are returned and do not block."""
    import copy

    from ..paths import refuse_bundled
    from . import cache as registry_cache
    from .base import parse_yaml
    from .checks import from_rows, problem_rows, split_warnings
    from .schemas import check_entry, check_registry, tests_naming

    refuse_bundled(root)
    _clean_stale_temps(root)
    doc = read_yaml(file)
    shown = str(file)
    from .sources_add import add_source, is_source_file
    if is_source_file(doc):         # a work's bibliographic entry, for registry/sources.yaml
        try:
            key, path = add_source(root, doc, shown)
        except ValidationFailed as e:
            raise AddRefused(e.problems, [], shown) from None
        return Added("source", key, path, [], False)
    if not isinstance(doc, dict):
        raise EatlasError("expected a mapping (a source, a set or a test)", file=shown,
                          hint="a source has id, type, authors, year, title, venue and doi or url; a set has id, "
                               "version, concept, items, ...; a test has x, y, a and b")
    kind = "tests" if all(k in doc for k in ("x", "y", "a", "b")) else "sets"
    what = kind[:-1]
    own: list[EatlasError] = []                 # the new file's problems, every one
    obj = KINDS[kind](doc, shown, own)
    eid = obj.id if obj is not None and obj.id != "?" else None       # '?': a faulty id, listed in 'own'
    where = {"file": shown, "obj": f"{what} {eid or '?'}"}
    source = doc.get("source")
    paper = source.get("paper") if isinstance(source, dict) else None
    if isinstance(paper, str) and paper and not any(p.field == "source.paper" for p in own):
        try:
            check_id(paper, shown, where["obj"], "source.paper")      # it names the folder the file goes to
        except EatlasError as e:
            own.append(e)
            paper = None
    elif not any(p.field in ("source", "source.paper") for p in own):
        own.append(EatlasError("source has no paper", field="source.paper", **where,
                               hint="name the paper key from registry/sources.yaml"))
    top = root.resolve()      # the registry cache's key names the folder by its full path
    checked = registry_cache.state(top)     # the files as they were checked
    reg = registry_cache.load(top, lambda: Registry(top), Registry.from_view)
    store = reg.sets if kind == "sets" else reg.tests
    collides = eid is not None and eid in store
    if collides:
        own.append(EatlasError(f"{what} {eid!r} already exists (version {store[eid].version})", field="id",
                               hint=f"choose a new id, or edit the existing file and run 'eatlas bump {eid} -m "
                                    "\"what changed\"'", **where))
    other = reg.tests if kind == "sets" else reg.sets      # sets and tests share one space of ids
    if eid is not None and eid in other:
        collides = True
        own.append(EatlasError(f"{what} id {eid!r} is the id of a {'test' if kind == 'sets' else 'set'} "
                               f"({other[eid].file})", field="id", **where,
                               hint="sets and tests share one space of ids ('eatlas show ID' reaches one): choose "
                                    "a new id"))
    dest = root / "registry" / paper / kind / f"{eid}.yaml" if isinstance(paper, str) and paper and eid else None
    rel = dest.relative_to(root).as_posix() if dest is not None else None
    text = dump_entry(doc)
    if dest is not None and not collides and dest.exists() and not _leftover(dest, text):
        collides = True
        own.append(EatlasError(f"{rel} already exists", field="id", **where,
                               hint="choose a new id; the registry has a file of that name"))

    # validate's outcome for the registry as it is (kept, or found now), less what the entry touches
    kept = registry_cache.validation(checked)
    before = from_rows(kept) if kept is not None else None
    checked_whole = before is None
    if before is None:
        before = check_registry(reg) + unindexed(root, reg.catalog)
        if not any(p.file == rel for p in before):      # a leftover of an interrupted add is no state to keep
            registry_cache.record_validation(checked, problem_rows(before))
    # what the entry touches, among the entries 'before' found a problem in (the others' outcome it cannot change;
    # looking only there leaves the registry's thousands of entries unread)
    named = {p.obj for p in before if p.obj}      # a problem of a file no entry holds names no object
    touched = {f"{what} {eid}"} | {o for o in named if o.startswith(f"{what} ") and o[len(what) + 1:] in store
                                   and store[o[len(what) + 1:]].variant_of == eid} | (
        {f"test {t}" for t in tests_naming(reg, eid, named)} if kind == "sets" else set())
    rest = [p for p in before if p.obj not in touched and p.file != rel]

    if obj is not None and eid is not None:
        # the registry with the entry, in memory; nothing is written. An id that collides is checked in the
        # existing entry's place, so the file's other problems are listed too (every problem at once), and only
        # the file's own count (what the others would say of an entry that will not be added is no problem)
        new = copy.copy(reg)
        new.__dict__.pop("_validation_expansions", None)
        new.sets, new.tests, new.recorded_hash = _copied(reg.sets), _copied(reg.tests), dict(reg.recorded_hash)
        (new.sets if kind == "sets" else new.tests)[obj.id] = obj
        new.recorded_hash[(kind, obj.id)] = obj.hash()
        found = check_entry(new, kind, obj.id, among=named)
        if collides:
            found = [p for p in found if p.obj == where["obj"]]
        if kind == "sets":          # the items read without fault, by their place in the file
            faulty = {int(m[1]) for p in own if (m := _ITEM.match(str(p.field)))}
            found = _renumbered(found, obj, [n for n in range(len(doc["items"])) if n not in faulty])
        reported = {(p.obj, p.field) for p in own}      # a field the file's reading already faulted, once
        own += [p for p in found if not {(p.obj, p.field), (p.obj, str(p.field).split(".")[0]),
                                         (p.obj, str(p.field).split(".")[-1])} & reported]
    own_errors, own_warnings = split_warnings(own)
    errors, warnings = split_warnings(rest)
    errors, warnings = own_errors + errors, warnings + own_warnings     # the new file's warnings last
    if errors:
        raise AddRefused(errors, warnings, shown)
    assert obj is not None and dest is not None and rel is not None
    entry = KINDS[kind](parse_yaml(text, rel), rel)       # the file as written, as the catalog will read it

    if registry_cache.state(top) != checked:      # e.g. another add, whose catalog line this one would drop
        raise EatlasError("the registry changed while add was checking the file; nothing was written",
                          file=shown, hint="run the same 'eatlas add' again")
    made = [d for d in (dest.parent.parent, dest.parent) if not d.exists()]   # removed again on failure
    dest.parent.mkdir(parents=True, exist_ok=True)
    cat_path = root / "catalog.yaml"
    old_text = cat_path.read_text(encoding="utf-8")
    line = _catalog_entry(kind, entry)
    _write_atomic(dest, text)
    try:
        _write_atomic(cat_path, _with_entry(old_text, kind, line, reg.catalog) or
                      render_catalog(_catalog_with(reg.catalog, kind, line)))
    except BaseException:       # an error or an interrupt (Ctrl-C) before the catalog was replaced
        if cat_path.read_text(encoding="utf-8") == old_text:
            dest.unlink(missing_ok=True)   # leave the registry as it was
            for d in reversed(made):
                d.rmdir()
        raise
    # The files as they are now: their registry is the one checked, with the entry as written; they validate
    # as 'before' did, less what the entry touched, with what checking the entry found (warnings only here).
    # Both are kept for the next command.
    if registry_cache.enabled():
        key = registry_cache.state(top)
        registry_cache.keep(_registry_with(reg, kind, entry, _catalog_with(reg.catalog, kind, line)))
        registry_cache.record_validation(key, problem_rows(rest + [_renamed(p, shown, rel) for p in own_warnings]))
    return Added(what, entry.id, dest, [_renamed(p, shown, rel) for p in warnings], checked_whole)


def _copied(entries):
    """A copy of a registry's mapping of entries; one from the cache stays lazy (nothing decoded)."""
    return entries.copy() if isinstance(entries, LazyEntries) else dict(entries)


def _registry_with(reg: Registry, kind: str, entry, cat: dict) -> Registry:
    """``reg`` with one more entry, as :class:`Registry` reads the folder once the entry's file and its
    catalog line are written (the entries in the catalog's order)."""
    import copy

    new = copy.copy(reg)
    new.__dict__.pop("_validation_expansions", None)
    new.__dict__.pop("_key", None)
    new.catalog = cat
    old = getattr(reg, kind)
    if isinstance(old, LazyEntries):        # the entries not read stay unread (kept as the cache's bytes)
        setattr(new, kind, old.with_entries({e["id"]: entry if e["id"] == entry.id else old.everything()[e["id"]]
                                             for e in cat[kind]}))
    else:
        setattr(new, kind, {e["id"]: entry if e["id"] == entry.id else old[e["id"]] for e in cat[kind]})
    new.recorded_hash = {**reg.recorded_hash, (kind, entry.id): entry.hash()}       # its catalog line's sha256
    return new


_ITEM = re.compile(r"^items\[(\d+)\]")


def _renumbered(problems: list[EatlasError], s, kept: list[int]) -> list[EatlasError]:
    """The set's problems with its items numbered as in the file (an item with a fault of its own is not
    in the set that was checked)."""
    if kept == list(range(len(kept))):
        return problems
    at = re.compile(r"items\[(\d+)\]")

    def fix(text):
        return at.sub(lambda m: f"items[{kept[int(m[1])]}]" if int(m[1]) < len(kept) else m[0], text) \
            if isinstance(text, str) else text
    return [type(p)(fix(p.message), file=p.file, obj=p.obj, field=fix(p.field), hint=p.hint)
            if p.obj == f"set {s.id}" else p for p in problems]


def _renamed(p: EatlasError, old: str, new: str) -> EatlasError:
    """The same problem, naming the file where the entry now is."""
    if p.file != old:
        return p
    return type(p)(p.message, file=new, obj=p.obj, field=p.field, hint=p.hint)


def _catalog_entry(kind: str, obj) -> dict:
    """The catalog entry of one set, test or template, as :func:`sync` writes it."""
    entry = {"id": obj.id, "version": obj.version}
    if kind != "templates":
        entry["source"] = obj.source.get("paper")
    entry["license"] = obj.license
    entry["language"] = obj.language
    entry["file"] = obj.file
    entry["sha256"] = obj.hash()
    return entry


def _catalog_with(cat: dict, kind: str, entry: dict) -> dict:
    """The catalog with one more entry, where :func:`sync` puts it (entries in the order of their files)."""
    entries = list(cat.get(kind) or [])
    key = Path(entry["file"])
    at = next((n for n, e in enumerate(entries) if isinstance(e, dict) and Path(str(e.get("file"))) > key),
              len(entries))
    entries.insert(at, entry)
    return {**{k: cat.get(k) or [] for k in ("sets", "tests", "templates", "published", "criteria")}, kind: entries}


def _with_entry(text: str, kind: str, entry: dict, cat: dict) -> str | None:
    """catalog.yaml's text with one line more for the new entry, every other line as it was; None when the
    text is not one entry a line as :func:`render_catalog` writes it (then the catalog is rendered whole)."""
    lines = text.splitlines(keepends=True)
    entries = cat.get(kind) or []
    head = next((n for n, ln in enumerate(lines) if ln.rstrip("\r\n") in (f"{kind}:", f"{kind}: []")), None)
    if head is None:
        return None
    n = head + 1
    while n < len(lines) and lines[n].startswith("  - "):
        n += 1
    if n - head - 1 != len(entries) or (not entries and lines[head].rstrip("\r\n") != f"{kind}: []"):
        return None
    new_entries = _catalog_with(cat, kind, entry)[kind]
    at = new_entries.index(entry)
    rendered = "  - " + yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=10_000).strip() + "\n"
    if not entries:
        lines[head] = f"{kind}:\n"
    lines.insert(head + 1 + at, rendered)
    return "".join(lines)


_TEMP_PREFIX = ".eatlas-add-"


def _write_atomic(dest: Path, text: str) -> None:
    """Write to a temporary name in the same folder (``.eatlas-add-<pid>-*.tmp``, never read as a registry
    file) and rename it into place: a process killed mid-write leaves no partial set or test file."""
    import os

    write_text(dest, text, prefix=f"{_TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", fsync=True)


def _clean_stale_temps(root: Path) -> None:
    """Remove the temporary files of an ``add`` whose process is gone (killed mid-write)."""
    import os

    for p in [*root.glob(f"{_TEMP_PREFIX}*.tmp"), *(root / "registry").glob(f"*/*/{_TEMP_PREFIX}*.tmp")]:
        try:
            pid = int(p.name[len(_TEMP_PREFIX):].split("-")[0])
            if pid != os.getpid():
                os.kill(pid, 0)
            continue                # its process still runs (or is this one)
        except (ValueError, ProcessLookupError):
            pass
        except PermissionError:
            continue                # alive, another user's
        p.unlink(missing_ok=True)


def _leftover(dest: Path, text: str) -> bool:
    """``dest`` is what an interrupted ``add`` of the same file wrote (same text), and the catalog does not
    list it yet: the retry goes on over it instead of refusing."""
    try:
        return dest.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
