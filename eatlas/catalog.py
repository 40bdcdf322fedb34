"""Keeping catalog.yaml in step with the registry files, and adding new sets and tests.

``sync`` indexes every set, test and template file and records its content hash; it refuses to
record a new hash under an unchanged version (the content changed without a version bump).
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .errors import EatlasError
from .registry import (Registry, check_id, parse_set, parse_template, parse_test, read_yaml, semver_key)

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
                              file=str(p.relative_to(root)), hint="copy the file into the registry instead of linking it")
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


def write_catalog(path: Path, cat: dict) -> None:
    lines = ["# Index of every stimulus set, test, template and published-results table.",
             "# Generated by 'eatlas catalog --sync'; sha256 is the hash of each entry's normalised content.", ""]
    for kind in ("sets", "tests", "templates", "published"):
        lines.append(f"{kind}:")
        for e in cat.get(kind, []):
            lines.append("  - " + yaml.safe_dump(e, default_flow_style=True, sort_keys=False, width=10_000).strip())
        if not cat.get(kind):
            lines[-1] = f"{kind}: []"
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)


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
    from .schemas import check_registry

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
    if dest.exists():
        raise EatlasError(f"{dest.relative_to(root)} already exists", file=shown, field="id")
    made = [d for d in (dest.parent.parent, dest.parent) if not d.exists()]   # removed again on failure
    dest.parent.mkdir(parents=True, exist_ok=True)
    cat_path = root / "catalog.yaml"
    old_cat = cat_path.read_bytes()
    dest.write_text(dump_entry(doc), encoding="utf-8")
    try:
        sync(root)
        problems = check_registry(Registry(root))
        if problems:
            from .errors import ValidationFailed
            raise ValidationFailed(problems)
    except EatlasError:
        dest.unlink(missing_ok=True)   # leave the registry as it was
        for d in reversed(made):
            d.rmdir()
        cat_path.write_bytes(old_cat)
        raise
    return kind[:-1], obj.id, dest
