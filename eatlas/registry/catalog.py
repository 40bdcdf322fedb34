"""Keeping catalog.yaml in step with the registry files, and adding new sets and tests.

``sync`` indexes every set, test and template file and records its content hash; it refuses to
record a new hash under an unchanged version (the content changed without a version bump).
"""
from __future__ import annotations

import difflib
from pathlib import Path

import yaml

from ..errors import EatlasError
from ..files import write_text
from .base import Registry, check_id, parse_set, parse_template, parse_test, read_yaml, semver_key

KINDS = {"sets": parse_set, "tests": parse_test, "templates": parse_template}


def _files(root: Path) -> dict[str, list[Path]]:
    return {
        "sets": _inside(root, (root / "registry").glob("*/sets/*.yaml")),
        "tests": _inside(root, (root / "registry").glob("*/tests/*.yaml")),
        "templates": _inside(root, (root / "templates").glob("*.yaml")),
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
    old = (read_yaml(cat_path, root=root) or {}) if cat_path.is_file() else {}
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
                                  "catalog.yaml", file=rel, obj=f"{kind[:-1]} {obj.id}", field="version",
                                  hint=f"give a version above {prev['version']} and add a changelog entry")
            if prev and prev.get("version") == obj.version and prev.get("sha256") not in (None, h):
                raise EatlasError(f"content changed but version {obj.version} did not", file=rel,
                                  obj=f"{kind[:-1]} {obj.id}", field="version",
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
# the bibliography (eatlas.registry.cite) and the models of the papers' tables (eatlas.encoders.identity).
NOT_INDEXED = ("registry/sources.yaml", "registry/*/published/models.yaml")
INDEXED_GLOBS = ("registry/*/sets/*.yaml", "registry/*/tests/*.yaml", "registry/*/published/*.csv", "templates/*.yaml")


def unindexed(root: Path, cat: dict) -> list[EatlasError]:
    """Every YAML or CSV file under registry/ and templates/ that catalog.yaml does not index, as one
    problem each with its fix: a dropped-in file is never silently ignored."""
    listed = {str(e.get("file")).replace("\\", "/") for kind in ("sets", "tests", "templates", "published")
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
    for kind in ("sets", "tests", "templates", "published"):
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
        text += "items:\n" + "".join(
            "  - " + yaml.safe_dump(i, default_flow_style=True, sort_keys=False, allow_unicode=True,
                                    width=10_000).strip() + "\n" for i in items)
    return text


def add(root: Path, file: Path) -> tuple[str, str, Path]:
    """Validate a new set or test file, refuse an existing id, write it into the registry and catalog."""
    from ..paths import refuse_bundled
    from .schemas import check_registry

    refuse_bundled(root)
    _clean_stale_temps(root)
    doc = read_yaml(file)
    shown = str(file)
    if not isinstance(doc, dict):
        raise EatlasError("expected a mapping (a set or a test)", file=shown)
    kind = "tests" if all(k in doc for k in ("x", "y", "a", "b")) else "sets"
    obj = KINDS[kind](doc, shown)
    paper = obj.source.get("paper")
    if not isinstance(paper, str) or not paper:
        raise EatlasError("source has no paper", file=shown, obj=f"{kind[:-1]} {obj.id}", field="source.paper")
    check_id(paper, shown, f"{kind[:-1]} {obj.id}", "source.paper")
    reg = Registry(root)
    store = reg.sets if kind == "sets" else reg.tests
    if obj.id in store:
        raise EatlasError(f"{kind[:-1]} {obj.id!r} already exists (version {store[obj.id].version})", file=shown,
                          field="id", hint="choose a new id, or edit the existing file and bump its version")
    dest = root / "registry" / paper / kind / f"{obj.id}.yaml"
    text = dump_entry(doc)
    if dest.exists() and not _leftover(dest, text):
        raise EatlasError(f"{dest.relative_to(root)} already exists", file=shown, field="id")
    made = [d for d in (dest.parent.parent, dest.parent) if not d.exists()]   # removed again on failure
    dest.parent.mkdir(parents=True, exist_ok=True)
    cat_path = root / "catalog.yaml"
    old_cat = cat_path.read_bytes()
    _write_atomic(dest, text)
    try:
        sync(root)
        problems = check_registry(Registry(root))
        if problems:
            from ..errors import ValidationFailed
            raise ValidationFailed(problems)
    except BaseException:       # an error or an interrupt (Ctrl-C)
        dest.unlink(missing_ok=True)   # leave the registry as it was
        for d in reversed(made):
            d.rmdir()
        cat_path.write_bytes(old_cat)
        raise
    return kind[:-1], obj.id, dest


_TEMP_PREFIX = ".eatlas-add-"


def _write_atomic(dest: Path, text: str) -> None:
    """Write to a temporary name in the same folder (``.eatlas-add-<pid>-*.tmp``, never read as a registry
    file) and rename it into place: a process killed mid-write leaves no partial set or test file."""
    import os

    write_text(dest, text, prefix=f"{_TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", fsync=True)


def _clean_stale_temps(root: Path) -> None:
    """Remove the temporary files of an ``add`` whose process is gone (killed mid-write)."""
    import os

    for p in (root / "registry").glob(f"*/*/{_TEMP_PREFIX}*.tmp"):
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
