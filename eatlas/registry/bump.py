"""``eatlas bump``: a new version of a set, template, test or criterion, and every reference to it with it.

A set is named by version (``insects@1.0.0``) in every test and criterion that uses it, and a template in every
test that expands with it. A one-word fix to a shared set (Caliskan's insects are named by WEAT 1, every WEATHub
and X-WEAT variant of it and every CA-WEAT WEAT 1: 188 tests) is one version more of the set, and then of each of
those: each test's reference, version and changelog change with it. :func:`plan` works out every edit from the
files as they are; :func:`apply` writes them all or none, and updates their lines of catalog.yaml.

Each file is edited as text, line by line (the version line, the reference lines, one changelog line more), so the
rest of the file stays byte for byte as its curator wrote it; every edited file is then read back and must be the
same document with only those values changed, or nothing is written.

Two forms (``eatlas bump --help``):

- ``eatlas bump insects -m "..."``: the entry's version goes up (patch by default; ``--part``, ``--to``), with a
  changelog entry; every test and criterion naming another version of it follows, each one version more of the
  same part with a changelog line that says why.
- ``eatlas bump insects --follow``: the entry's version was raised by hand; only the references follow (what
  ``validate`` asks for when a test names an older version).
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import EatlasError
from .terms import SEMVER_RE, semver_key

PARTS = ("patch", "minor", "major")
_ROLES_OF = ("sets", "templates")     # the kinds named by version elsewhere


@dataclass
class Edit:
    """One file's change: its entry, the versions, why, and the text before and after."""
    kind: str                   # sets, tests, templates, criteria
    id: str
    rel: str                    # path from the registry folder
    old_version: str
    new_version: str
    why: str
    old_text: str
    new_text: str = ""
    refs: list[tuple[str, str, str]] = field(default_factory=list)   # (field, old ref, new ref)


@dataclass
class Plan:
    root: Path
    target: Edit | None                 # None with --follow: the entry keeps its version
    followers: list[Edit]
    catalog_text: str
    new_catalog_text: str = ""

    @property
    def edits(self) -> list[Edit]:
        return ([self.target] if self.target else []) + self.followers


def next_version(version: str, part: str) -> str:
    major, minor, patch = (int(n) for n in version.split("."))
    return {"patch": f"{major}.{minor}.{patch + 1}", "minor": f"{major}.{minor + 1}.0",
            "major": f"{major + 1}.0.0"}[part]


def _load(text: str):
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)       # noqa: S506 -- a safe loader


def _catalog_entries(root: Path) -> tuple[str, dict]:
    path = root / "catalog.yaml"
    if not path.is_file():
        raise EatlasError("no catalog.yaml in the registry folder", file=str(path),
                          hint="run it in a registry (or give --registry)")
    text = path.read_text(encoding="utf-8")
    cat = _load(text) or {}
    return text, {kind: {e["id"]: e for e in (cat.get(kind) or []) if isinstance(e, dict) and "id" in e}
                  for kind in ("sets", "tests", "templates", "criteria")}


def _find(entries: dict, ident: str) -> tuple[str, dict]:
    found = [(kind, entries[kind][ident]) for kind in entries if ident in entries[kind]]
    if not found:
        import difflib
        known = [i for kind in entries.values() for i in kind]
        near = difflib.get_close_matches(ident, known, n=3)
        raise EatlasError(f"no set, test, template or criterion {ident!r} in catalog.yaml",
                          hint=f"did you mean {', '.join(near)}?" if near else "'eatlas list --sets' lists the sets")
    return found[0]


def plan(root: Path, ident: str, *, part: str = "patch", to: str | None = None, change: str | None = None,
         follow: bool = False, today: str | None = None) -> Plan:
    """Every edit ``eatlas bump`` would make, computed from the files; nothing is written."""
    root = Path(root)
    today = today or _dt.date.today().isoformat()
    if part not in PARTS:
        raise EatlasError(f"--part {part!r} is not one of {', '.join(PARTS)}")
    cat_text, entries = _catalog_entries(root)
    kind, entry = _find(entries, ident)
    rel = str(entry.get("file") or "")
    path = _inside(root, rel, ident)
    text = path.read_text(encoding="utf-8")
    doc = _load(text)
    current = str(doc.get("version")) if isinstance(doc, dict) else ""
    if not SEMVER_RE.match(current):
        raise EatlasError(f"version {current!r} is not MAJOR.MINOR.PATCH", file=rel, field="version")

    target = None
    if follow:
        if to or change:
            raise EatlasError("--follow keeps the entry's version: it takes neither --to nor --change",
                              hint=f"'eatlas bump {ident} --follow' points the references at {ident}@{current}")
        new = current
        why = _latest_change(doc, current)
    else:
        if not change or not change.strip():
            raise EatlasError("a new version needs its changelog line", field="--change",
                              hint=f"eatlas bump {ident} -m \"what changed\"")
        if to is not None:
            if not SEMVER_RE.match(to):
                raise EatlasError(f"--to {to!r} is not MAJOR.MINOR.PATCH", hint="e.g. --to 1.0.1")
            if semver_key(to) <= semver_key(current):
                raise EatlasError(f"--to {to} does not increase the version: {ident} is at {current}", file=rel,
                                  field="version", hint=f"give a version above {current}")
            new = to
            part = _part_of(current, to)
        else:
            new = next_version(current, part)
        why = change.strip()
        target = Edit(kind, ident, rel, current, new, why, text)
        target.new_text = _edited(text, rel, version=new, changelog={"version": new, "date": today, "change": why})

    followers = []
    if kind in _ROLES_OF:
        pattern = _reference_pattern(kind, ident)
        for fkind in ("tests", "criteria"):
            for fid, fentry in entries[fkind].items():
                frel = str(fentry.get("file") or "")
                fpath = _inside(root, frel, fid)
                ftext = fpath.read_text(encoding="utf-8")
                if f"{ident}@" not in ftext:
                    continue
                refs = [(m["field"], f"{ident}@{m['version']}", f"{ident}@{new}")
                        for m in pattern.finditer(ftext) if semver_key(m["version"]) < semver_key(new)]
                if not refs:
                    continue
                fdoc = _load(ftext)
                fcur = str(fdoc.get("version"))
                if not SEMVER_RE.match(fcur):
                    raise EatlasError(f"version {fcur!r} is not MAJOR.MINOR.PATCH", file=frel, field="version")
                fnew = next_version(fcur, part if not follow else "patch")
                olds = sorted({o for _, o, _ in refs})
                fwhy = (f"{', '.join(sorted({f for f, _, _ in refs}))}: {ident}@{new} (was "
                        f"{', '.join(o.split('@')[1] for o in olds)}): {why}")
                e = Edit(fkind, fid, frel, fcur, fnew, fwhy, ftext, refs=refs)
                e.new_text = _edited(ftext, frel, version=fnew, changelog={"version": fnew, "date": today,
                                                                          "change": fwhy},
                                     refs=(pattern, ident, new))
                followers.append(e)
    if follow and not followers:
        raise EatlasError(f"every test and criterion already names {ident}@{new}: nothing to follow",
                          hint=f"to make a new version of {ident}: eatlas bump {ident} -m \"what changed\"")
    p = Plan(root, target, followers, cat_text)
    # with --follow the entry's file was changed by hand: its catalog line is brought up to date with the rest
    own = [] if target else [Edit(kind, ident, rel, current, current, why, text, text)]
    p.new_catalog_text = _catalog_with(root, cat_text, own + p.edits)
    return p


def _part_of(old: str, new: str) -> str:
    o, n = semver_key(old), semver_key(new)
    return "major" if n[0] != o[0] else "minor" if n[1] != o[1] else "patch"


def _latest_change(doc: dict, version: str) -> str:
    for e in reversed(doc.get("changelog") or []):
        if isinstance(e, dict) and str(e.get("version")) == version and e.get("change"):
            return " ".join(str(e["change"]).split())
    return "new version"


def _inside(root: Path, rel: str, ident: str) -> Path:
    path = (root / rel)
    if not rel or not path.resolve().is_relative_to(root.resolve()) or not path.is_file():
        raise EatlasError(f"catalog.yaml names file {rel!r} for {ident}, which is not a file in the registry",
                          file="catalog.yaml", field="file", hint="run 'eatlas catalog --sync'")
    return path


def _reference_pattern(kind: str, ident: str) -> re.Pattern:
    """A reference to ``ident`` at any version, in block or flow style: a set as the value of any key of a test or
    criterion (x, y, a, b, and a paired-forms test's forms, e.g. ``feminine: career_f@1.0.0``); a template as an
    expansion's ``template:``. Groups: field, quote, version. (Every edited file is read back and compared, so a
    match in prose could only refuse the bump, never change a note.)"""
    ref = re.escape(ident) + r"@(?P<version>\d+\.\d+\.\d+)(?P=q)(?=[ \t]*[,}#\n]|[ \t]*$)"
    key = "template" if kind == "templates" else r"[A-Za-z_][\w-]*"
    return re.compile(r"(?<![\w-])(?P<field>" + key + r"):[ \t]*(?P<q>['\"]?)" + ref, re.M)


_VERSION_LINE = re.compile(r"^version:(\s*)(['\"]?)(\d+\.\d+\.\d+)\2(\s*(?:#.*)?)$", re.M)


def _edited(text: str, rel: str, *, version: str, changelog: dict, refs=None) -> str:
    """``text`` with its top-level version, the references and one changelog entry more; checked by reading
    the result back: the same document but for those values, or an error and nothing written."""
    before = _load(text)
    new = text
    lines = _VERSION_LINE.findall(new)
    if len(lines) != 1:
        raise EatlasError("cannot find the file's one top-level 'version:' line to edit", file=rel, field="version",
                          hint="edit the file by hand")
    new = _VERSION_LINE.sub(lambda m: f"version:{m[1]}{m[2]}{version}{m[2]}{m[4]}", new, count=1)
    if refs is not None:
        pattern, ident, target = refs
        new = pattern.sub(lambda m: m[0][:m.start("version") - m.start()] + target + m["q"], new)
    new = _with_changelog(new, changelog, rel)
    expected = dict(before)
    expected["version"] = version
    expected["changelog"] = list(before.get("changelog") or []) + [changelog]
    if refs is not None:
        expected = _replaced(expected, refs[1], refs[2])
    if _load(new) != expected:
        raise EatlasError("the file could not be edited line by line (an unusual layout)", file=rel,
                          hint="make this file's change by hand: version, changelog and the references")
    return new


def _replaced(value, ident: str, target: str):
    if isinstance(value, dict):
        return {k: (_replaced(v, ident, target) if k != "changelog" else v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, ident, target) for v in value]
    if isinstance(value, str) and re.fullmatch(re.escape(ident) + r"@\d+\.\d+\.\d+", value):
        return f"{ident}@{target}"
    return value


def _with_changelog(text: str, entry: dict, rel: str) -> str:
    """One changelog entry more, in the style of the file's entries (flow, one line), at the end of the list."""
    line = yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, allow_unicode=True,
                          width=10_000).strip()
    lines = text.splitlines(keepends=True)
    head = next((n for n, ln in enumerate(lines) if re.match(r"^changelog:\s*(\[\]\s*)?(#.*)?$", ln)), None)
    if head is None:                # no changelog yet: before the items (or at the end)
        at = next((n for n, ln in enumerate(lines) if ln.startswith("items:")), len(lines))
        if at == len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines[at:at] = ["changelog:\n", f"- {line}\n"]
        return "".join(lines)
    if lines[head].rstrip().endswith("[]"):
        lines[head] = "changelog:\n"
        lines.insert(head + 1, f"- {line}\n")
        return "".join(lines)
    n, indent = head + 1, None
    while n < len(lines) and (lines[n].startswith((" ", "-", "\t")) or not lines[n].strip()):
        if indent is None and lines[n].lstrip().startswith("- "):
            indent = lines[n][:len(lines[n]) - len(lines[n].lstrip())]
        n += 1
    while n > head + 1 and not lines[n - 1].strip():      # blank lines after the list stay after it
        n -= 1
    if n > 0 and not lines[n - 1].endswith("\n"):
        lines[n - 1] += "\n"
    lines.insert(n, f"{indent or ''}- {line}\n")
    return "".join(lines)


def _catalog_with(root: Path, cat_text: str, edits: list[Edit]) -> str:
    """catalog.yaml's text with the edited entries' lines as ``eatlas catalog --sync`` writes them."""
    from .base import parse_yaml
    from .catalog import KINDS, _catalog_entry

    lines = cat_text.splitlines(keepends=True)
    section = None
    where: dict[tuple[str, str], int] = {}
    for n, ln in enumerate(lines):
        m = re.match(r"^(\w+):", ln)
        if m:
            section = m[1]
        elif ln.startswith("  - ") and section:
            mid = re.match(r"^  - \{id: ([^,]+),", ln)
            if mid:
                where[(section, mid[1].strip("'\""))] = n
    for e in edits:
        obj = KINDS[e.kind](parse_yaml(e.new_text, e.rel), e.rel)
        entry = _catalog_entry(e.kind, obj)
        at = where.get((e.kind, e.id))
        if at is None:
            raise EatlasError(f"catalog.yaml has no line for {e.kind[:-1]} {e.id} to update", file="catalog.yaml",
                              hint="run 'eatlas catalog --sync' first")
        old = _load(lines[at][4:])
        entry = {k: entry.get(k, old.get(k)) for k in old} | {k: v for k, v in entry.items() if k not in old}
        lines[at] = "  - " + yaml.safe_dump(entry, default_flow_style=True, sort_keys=False,
                                            width=10_000).strip() + "\n"
    return "".join(lines)


def apply(p: Plan) -> None:
    """Write every edit and catalog.yaml, or none: each file is checked unchanged since :func:`plan` read it,
    written to a temporary file beside it, and only then are all renamed into place; an error part way (or
    Ctrl-C) puts back the files already renamed."""
    from ..files import new_temp

    todo = [(p.root / e.rel, e.old_text, e.new_text) for e in p.edits]
    todo.append((p.root / "catalog.yaml", p.catalog_text, p.new_catalog_text))
    for path, old, _ in todo:
        if path.read_text(encoding="utf-8") != old:
            raise EatlasError("the file changed while bump was planning; nothing was written",
                              file=str(path.relative_to(p.root)), hint="run the same 'eatlas bump' again")
    temps: list[tuple[Path, Path, str]] = []
    done: list[tuple[Path, str]] = []
    try:
        for path, old, new in todo:
            tmp = new_temp(path.parent, ".eatlas-bump-", ".tmp")
            temps.append((tmp, path, old))
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(new)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path, old in temps:
            os.replace(tmp, path)
            done.append((path, old))
    except BaseException:
        for path, old in reversed(done):           # put back what was already renamed
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(old)
        for tmp, _, _ in temps:
            tmp.unlink(missing_ok=True)
        raise
