"""Citations: the registry's bibliography (registry/sources.yaml) and what to cite for a test.

``check_sources`` validates the bibliography when the registry loads it; ``citations`` gives, for a
test at a level, the BibTeX of every source it draws on (the test's paper, its sets' papers, the
template's paper at sentence levels, the works they name as secondary sources) and of EATlas
itself, de-duplicated in a stable order. ``eatlas cite``, the dataset card and the HTML report all
call it.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import EatlasError

SOURCES_FILE = "registry/sources.yaml"
REQUIRED = {"type": str, "authors": list, "year": int, "title": str, "venue": str, "bibtex": str}
OPTIONAL = {"volume": str, "number": str, "pages": str, "publisher": str, "doi": str, "url": str,
            "authors_repository": dict, "checked": str, "citation": str, "preprint": str}
REPOSITORY_KEYS = {"url", "license", "kind", "by", "lists", "note"}
# whose the repository is: the paper's authors' own, or a reproduction by others (then ``by`` says whose)
REPOSITORY_KINDS = ("authors", "reproduction")
BIBTEX_TYPES = {"article", "inproceedings", "book", "incollection", "misc", "techreport", "phdthesis", "software"}
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_REF = re.compile(r"\b[a-z][a-z_]*\d{4}[a-z]?\b")      # a source key inside free text ("ghavami2013 (via ...)")

# EATlas itself (CITATION.cff at the top of the source tree says the same; a test keeps them equal).
EATLAS_TITLE = "EATlas: a curated, versioned registry of Embedding Association Tests"
EATLAS_AUTHORS = "EATlas contributors"
EATLAS_LICENSE = "Apache-2.0"
EATLAS_YEAR = 2026


def _fail(key: str, field: str | None, message: str, hint: str) -> EatlasError:
    return EatlasError(message, file=SOURCES_FILE, obj=f"source {key}", field=field, hint=hint)


def format_citation(src: dict) -> str:
    """One line: 'Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Title. Venue, 356(6334), 183-186.'"""
    names = [_initials(a) for a in src["authors"]]
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]
    where = src["venue"]
    if src.get("volume"):
        where += f", {src['volume']}" + (f"({src['number']})" if src.get("number") else "")
    if src.get("pages"):
        where += f", {src['pages']}"
    title = src["title"].rstrip(".")
    return f"{who} ({src['year']}). {title}. {where}."


def _initials(author: str) -> str:
    last, _, first = author.partition(",")
    parts = [p for p in re.split(r"[\s]+", first.strip()) if p]
    inits = " ".join(p if p.endswith(".") and len(p) <= 3 else
                     "-".join(f"{q[0]}." for q in p.split("-") if q) for p in parts)
    return f"{last.strip()}, {inits}" if inits else last.strip()


def _bibtex_fields(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"(\w+)\s*=\s*\{(.*)\},?\s*$", text, re.M)}


def check_sources(doc: Any) -> dict[str, dict]:
    """The bibliography, checked: known fields only, the required ones present and well-typed, the
    BibTeX entry keyed by the source key and agreeing with the fields. Adds ``citation`` (one line) where
    the file gives none, for the readers that print it."""
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise EatlasError(f"expected a mapping paper key -> entry, got {type(doc).__name__}", file=SOURCES_FILE,
                          obj="sources", hint="write caliskan2017: {authors: [...], year: ..., title: ..., ...}")
    out: dict[str, dict] = {}
    for key, src in doc.items():
        key = str(key)
        if not _KEY.match(key):
            raise _fail(key, None, "source keys are lower case letters, digits and '_'", "e.g. caliskan2017")
        if not isinstance(src, dict):
            raise _fail(key, None, f"expected a mapping, got {type(src).__name__}",
                        "give authors, year, title, venue, type and bibtex")
        unknown = sorted(str(k) for k in src if k not in REQUIRED and k not in OPTIONAL)
        if unknown:
            raise _fail(key, unknown[0], f"unknown key(s) {', '.join(unknown)}",
                        f"allowed: {', '.join(sorted({*REQUIRED, *OPTIONAL}))}")
        missing = [f for f in REQUIRED if src.get(f) is None]
        if missing:
            raise _fail(key, missing[0], f"missing required field(s) {', '.join(missing)}",
                        "every source needs type, authors, year, title, venue and bibtex; "
                        "see docs/registry-format.md, 'Sources'")
        for f, typ in {**REQUIRED, **OPTIONAL}.items():
            v = src.get(f)
            if v is None:
                continue
            if not isinstance(v, typ) or isinstance(v, bool):
                raise _fail(key, f, f"expected {typ.__name__}, got {type(v).__name__} {v!r:.40}",
                            "quote numbers such as volume: \"356\"" if typ is str else f"write {f} as {typ.__name__}")
        if not src["authors"] or not all(isinstance(a, str) and "," in a for a in src["authors"]):
            raise _fail(key, "authors", "each author must be text 'Last, First'", 'authors: ["Caliskan, Aylin", ...]')
        if src["type"] not in BIBTEX_TYPES:
            raise _fail(key, "type", f"unknown BibTeX entry type {src['type']!r}",
                        f"one of {', '.join(sorted(BIBTEX_TYPES))}")
        if src.get("doi") and not re.match(r"^10\.\d{4,9}/\S+$", src["doi"]):
            raise _fail(key, "doi", f"{src['doi']!r} is not a DOI", "write the bare DOI, e.g. 10.1126/science.aal4230")
        repo = src.get("authors_repository")
        if repo is not None:
            bad = sorted(set(repo) - REPOSITORY_KEYS)
            if bad or not isinstance(repo.get("url"), str) or not isinstance(repo.get("license"), str):
                raise _fail(key, "authors_repository",
                            "needs url and license (text), and nothing but url, license, kind, by, lists, note",
                            "write license: unspecified where the repository states none")
            if repo.get("kind") not in REPOSITORY_KINDS:
                raise _fail(key, "authors_repository.kind",
                            f"kind is {repo.get('kind')!r}: say whose the repository is",
                            "kind: authors (the paper's authors' own) or kind: reproduction (with by: who made it)")
            if repo["kind"] == "reproduction" and not isinstance(repo.get("by"), str):
                raise _fail(key, "authors_repository.by", "a reproduction names who made it (by:)",
                            "e.g. by: Anjishnu Mukherjee and Chahat Raj, 2023 (the repository's CITATION.cff)")
            for k in ("by", "lists"):
                if k in repo and not isinstance(repo[k], str):
                    raise _fail(key, f"authors_repository.{k}", f"{k} must be text", f"write {k}: as one line")
            from .spdx import license_problem, note_gives_licence
            bad = license_problem(repo["license"], note_gives_licence(repo.get("note")))
            if bad:
                raise _fail(key, "authors_repository.license", *bad)
        bib = src["bibtex"].strip()
        m = re.match(r"^@(\w+)\{([^,\s]+),", bib)
        if not m or not bib.endswith("}"):
            raise _fail(key, "bibtex", "not a BibTeX entry", f"start with @{src['type']}{{{key}, and end with }}")
        if m.group(1).lower() != src["type"] or m.group(2) != key:
            raise _fail(key, "bibtex", f"entry is @{m.group(1)}{{{m.group(2)}, but the source is {src['type']} {key}",
                        f"begin the entry with @{src['type']}{{{key},")
        fields = _bibtex_fields(bib)
        want = {"year": str(src["year"]), "title": src["title"], "doi": src.get("doi"), "url": src.get("url")}
        for f, v in want.items():
            got = fields.get(f)
            if v is None and got is None:
                continue
            if got is None or (v is not None and got.replace("{", "").replace("}", "") != v):
                raise _fail(key, "bibtex", f"BibTeX {f} {got!r} differs from the entry's {f} {v!r}",
                            "keep the BibTeX entry and the fields the same")
        out[key] = {**src, "citation": src.get("citation") or format_citation(src)}
    return out


def eatlas_bibtex(version: str | None = None) -> str:
    from .. import __version__

    return "\n".join([
        "@software{eatlas,",
        f"  author = {{{{{EATLAS_AUTHORS}}}}},",
        f"  title = {{{EATLAS_TITLE}}},",
        f"  version = {{{version or __version__}}},",
        f"  year = {{{EATLAS_YEAR}}},",
        f"  license = {{{EATLAS_LICENSE}}}",
        "}"])


def _keys_in(value: Any, known) -> list[str]:
    """Source keys named in a source field (``paper``, ``based_on``, ``secondary``), in order."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [k for v in value for k in _keys_in(v, known)]
    return [k for k in _REF.findall(str(value)) if k in known]


def _source_keys(source: dict | None, known) -> list[str]:
    """Keys named by a file's source: paper, based_on, secondary, and the paper whose authors' repository
    the ``authors_file`` comes from (sent-bias -> may2019): its licence asks for that attribution."""
    source = source or {}
    keys = [k for f in ("paper", "based_on", "secondary") for k in _keys_in(source.get(f), known)]
    afile = str(source.get("authors_file") or "")
    for k, src in known.items():
        repo = (src.get("authors_repository") or {}).get("url", "").rstrip("/").split("/")[-1]
        if repo and re.search(rf"(?<![\w-]){re.escape(repo)}(?![\w-])", afile):
            keys.append(k)
    return keys


def source_keys(reg, test_id: str, level: str | None = None) -> list[str]:
    """The registry's source keys a test at a level draws on: its own, its sets', its template's."""
    from ..levels import LEVELS

    spec = reg.get_test_spec(test_id)
    level = level or spec.level
    lv = LEVELS.get(level)
    if lv is None or lv.why_not(spec) is not None:
        raise EatlasError(f"test {spec.id} has no level {level!r}", obj=f"test {spec.id}", field="level",
                          hint=f"levels: {', '.join(spec.levels)}")
    known = reg.sources
    keys = _source_keys(spec.source, known)
    for role in ("x", "y", "a", "b"):
        keys += _source_keys(reg.get_set(spec.sets[role]).source, known)
    exp = spec.expansions.get(lv.expansion or "")
    if exp is not None:
        keys += _source_keys(reg.get_template(exp.template).source, known)
    return list(dict.fromkeys(keys))


def citations(reg, test_id: str, level: str | None = None, *, include_eatlas: bool = True) -> list[tuple[str, str]]:
    """[(key, BibTeX)] for a test at a level (default: its own level), EATlas last; no key twice."""
    out = [(k, reg.sources[k]["bibtex"].strip()) for k in source_keys(reg, test_id, level)]
    if include_eatlas:
        out.append(("eatlas", eatlas_bibtex()))
    return out


def bibtex_for_tests(reg, test_ids, *, include_eatlas: bool = True) -> list[tuple[str, str]]:
    """[(key, BibTeX)] for several tests (every level each has), de-duplicated, EATlas last."""
    seen: dict[str, str] = {}
    for tid in test_ids:
        spec = reg.get_test_spec(tid)
        for lv in spec.levels:
            for k, b in citations(reg, tid, lv, include_eatlas=False):
                seen.setdefault(k, b)
    out = list(seen.items())
    if include_eatlas:
        out.append(("eatlas", eatlas_bibtex()))
    return out


def repository_line(entry: dict | None) -> str:
    """A source's repository in one sentence: whose it is (the authors' own, or a reproduction by whom), its
    licence, and how its lists were made; "" when the entry names none."""
    r = (entry or {}).get("authors_repository") or {}
    if not r:
        return ""
    if r.get("kind") == "reproduction":
        line = f"Files: {r.get('url')}, a reproduction by {r.get('by')}, not the authors' own"
    else:
        line = f"Authors' files: {r.get('url')}"
    line += f" (licence: {r.get('license')})."
    return line + (f" How its lists were made: {r['lists']}" if r.get("lists") else "")


def source_lines(reg, source: dict | None) -> list[str]:
    """Where a set or test comes from, in words: the paper (its authors and year), where in it, the authors' file(s)
    and commit, then any other field of ``source`` on a line of its own."""
    src = {k: v for k, v in (source or {}).items() if v not in (None, "", [], {})}
    if not src:
        return ["source: not recorded"]
    paper = src.pop("paper", None)
    entry = reg.sources.get(paper) if paper and reg.sources else None
    who = paper or "an unnamed source"
    if isinstance(entry, dict) and entry.get("authors"):
        names = [str(a).split(",")[0].strip() for a in entry["authors"]]
        lead = names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2 \
            else f"{names[0]} et al."
        who = f"{lead} ({entry.get('year', 'n.d.')}), {entry.get('title', paper)} [{paper}]"
    where = [str(src.pop(k)) if k != "page" else f"p. {src.pop(k)}" for k in ("table", "section", "page") if k in src]
    lines = [f"source: {who}" + (f", {', '.join(where)}" if where else "")]
    files = src.pop("authors_files", None) or src.pop("authors_file", None)
    commit = src.pop("commit", None) or src.pop("authors_commit", None)
    if files:
        files = files if isinstance(files, list) else [files]
        shown = "; ".join(map(str, files[:3])) + (f"; and {len(files) - 3} more" if len(files) > 3 else "")
        repo = (entry or {}).get("authors_repository") or {} if isinstance(entry, dict) else {}
        label = f"authors' file{'s' if len(files) > 1 else ''}"
        if repo.get("kind") == "reproduction":      # not the authors' own: say whose, and how its lists were made
            label = f"file{'s' if len(files) > 1 else ''} of a reproduction by {repo.get('by')}"
        lines.append(f"{label}: {shown}" + (f" (commit {commit})" if commit else ""))
        if repo.get("kind") == "reproduction" and repo.get("lists"):
            lines.append(f"how its lists were made: {repo['lists']}")
    elif commit:
        lines.append(f"commit: {commit}")
    diffs = src.pop("differences", None)
    if isinstance(diffs, list) and diffs:
        shown = "; ".join(", ".join(f"{v}" if k == "text" else f"{k} {v}" for k, v in d.items())
                          if isinstance(d, dict) else str(d) for d in diffs[:3])
        lines.append(f"differences from the authors' file ({len(diffs)}): {shown}"
                     + ("; ..." if len(diffs) > 3 else ""))
    for k, v in src.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a}: {b}" for a, b in v.items())
        elif isinstance(v, list):
            v = "; ".join(map(str, v))
        lines.append(f"{k.replace('_', ' ')}: {v}")
    return lines
