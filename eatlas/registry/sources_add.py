"""``eatlas add`` of a source: a paper's entry in registry/sources.yaml, its BibTeX written from its fields.

A curator adding their own words first adds the work they come from. The file names the work as a citation does
(docs/guides/curating.md has the example)::

    id: doe2026                       # the key sets and tests name as source.paper
    type: article                     # a BibTeX entry type: article, inproceedings, book, ...
    authors: ["Doe, Jane", "Roe, Richard"]
    year: 2026
    title: Word lists for measuring occupational stereotypes
    venue: Journal of Examples        # the journal, proceedings or publisher
    volume: "12"                      # optional: volume, number, pages, publisher
    doi: 10.1234/example.5678         # a DOI, or url: where the text is
    authors_repository: {url: https://github.com/doe/lists, license: CC-BY-4.0, kind: authors}    # optional
    checked: Read from the paper's first page.                                     # optional: where you read it

Every problem of the file is listed at once; nothing is written unless the bibliography with the entry passes the
same checks as when the registry loads it (:func:`eatlas.registry.cite.check_sources`). The entry is appended to
registry/sources.yaml, every other line of which stays as it was.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..errors import EatlasError
from .cite import BIBTEX_TYPES, OPTIONAL, REPOSITORY_KEYS, REPOSITORY_KINDS, REQUIRED, SOURCES_FILE, check_sources

# where a type's venue goes in BibTeX
VENUE_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle",
               "book": "series", "techreport": "institution", "phdthesis": "school", "misc": "howpublished",
               "software": "howpublished"}
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")


def is_source_file(doc) -> bool:
    """A file of a source (a work's bibliographic entry), not of a set or test: it names authors."""
    return isinstance(doc, dict) and "authors" in doc


def bibtex(key: str, src: dict) -> str:
    """The BibTeX entry of a source, from its fields (pages as a range with '--')."""
    fields = [("author", " and ".join(src["authors"])), ("title", src["title"]),
              (VENUE_FIELD.get(src["type"], "howpublished"), src["venue"])]
    for f in ("volume", "number", "pages", "publisher"):
        if src.get(f):
            fields.append((f, str(src[f]).replace("-", "--") if f == "pages" and "--" not in str(src[f])
                           else str(src[f])))
    fields.append(("year", str(src["year"])))
    for f in ("doi", "url"):
        if src.get(f):
            fields.append((f, src[f]))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{src['type']}{{{key},\n{body}\n}}"


def problems(doc, shown: str, known: dict) -> list[EatlasError]:
    """Every problem of a source file (empty when it can be added)."""
    if not isinstance(doc, dict):
        return [EatlasError("expected a mapping (a source)", file=shown)]
    key = doc.get("id")
    where = {"file": shown, "obj": f"source {key if isinstance(key, str) else '?'}"}
    out = []
    if not isinstance(key, str) or not _KEY.match(key):
        out.append(EatlasError(f"id {key!r} is not a source key", field="id", **where,
                               hint="lower-case letters, digits and '_', e.g. doe2026"))
    elif key in known:
        out.append(EatlasError(f"source {key!r} is already in {SOURCES_FILE}", field="id", **where,
                               hint="name it as source.paper in your sets and tests, or choose a new key"))
    allowed = {"id", *REQUIRED, *OPTIONAL} - {"bibtex", "citation"}
    unknown = sorted(str(k) for k in doc if k not in allowed)
    if unknown:
        out.append(EatlasError(f"unknown key(s) {', '.join(unknown)}", field=unknown[0], **where,
                               hint=f"allowed: {', '.join(sorted(allowed))}; the BibTeX is written from the fields"))
    for f, typ in REQUIRED.items():
        if f == "bibtex":
            continue
        v = doc.get(f)
        if v is None:
            out.append(EatlasError("missing required field", field=f, **where,
                                   hint="a source needs type, authors, year, title and venue"))
        elif not isinstance(v, typ) or isinstance(v, bool):
            out.append(EatlasError(f"expected {'a number' if typ is int else typ.__name__}, got "
                                   f"{type(v).__name__} {v!r:.40}", field=f, **where,
                                   hint='e.g. authors: ["Doe, Jane"]' if typ is list
                                   else f"write {f} as {typ.__name__}"))
    for f in ("volume", "number", "pages", "publisher", "doi", "url", "checked"):
        if doc.get(f) is not None and not isinstance(doc[f], str):
            out.append(EatlasError(f"expected text, got {type(doc[f]).__name__}", field=f, **where,
                                   hint=f'quote it: {f}: "{doc[f]}"'))
    if isinstance(doc.get("authors"), list) and not all(isinstance(a, str) and "," in a for a in doc["authors"]) \
            or doc.get("authors") == []:
        out.append(EatlasError("each author must be text 'Last, First'", field="authors", **where,
                               hint='authors: ["Doe, Jane", "Roe, Richard"]'))
    if isinstance(doc.get("type"), str) and doc["type"] not in BIBTEX_TYPES:
        out.append(EatlasError(f"unknown BibTeX entry type {doc['type']!r}", field="type", **where,
                               hint=f"one of {', '.join(sorted(BIBTEX_TYPES))}"))
    if not doc.get("doi") and not doc.get("url"):
        out.append(EatlasError("neither doi nor url: a reader cannot find the work", field="doi", **where,
                               hint="give the DOI (doi: 10.xxxx/...) or the URL of the text (url: https://...)"))
    if isinstance(doc.get("doi"), str) and not _DOI.match(doc["doi"]):
        out.append(EatlasError(f"{doc['doi']!r} is not a DOI", field="doi", **where,
                               hint="write the bare DOI, e.g. 10.1126/science.aal4230"))
    if isinstance(doc.get("url"), str) and not re.match(r"^https?://\S+$", doc["url"]):
        out.append(EatlasError(f"{doc['url']!r} is not a URL", field="url", **where, hint="write https://..."))
    repo = doc.get("authors_repository")
    if repo is not None:
        if not isinstance(repo, dict) or set(repo) - REPOSITORY_KEYS or not isinstance(repo.get("url"), str) \
                or not isinstance(repo.get("license"), str):
            out.append(EatlasError("authors_repository needs url, license and kind", field="authors_repository",
                                   **where, hint=f"allowed keys: {', '.join(sorted(REPOSITORY_KEYS))}; write "
                                                 "license: unspecified where the repository states none"))
        else:
            from .spdx import license_problem, note_gives_licence
            bad = license_problem(repo["license"], note_gives_licence(repo.get("note")))
            if bad:
                out.append(EatlasError(bad[0], field="authors_repository.license", hint=bad[1], **where))
            if repo.get("kind") not in REPOSITORY_KINDS:
                out.append(EatlasError(f"kind is {repo.get('kind')!r}: say whose the repository is",
                                       field="authors_repository.kind", **where,
                                       hint="kind: authors (the paper's authors' own) or kind: reproduction (with "
                                            "by: who made it)"))
            elif repo["kind"] == "reproduction" and not isinstance(repo.get("by"), str):
                out.append(EatlasError("a reproduction names who made it (by:)", field="authors_repository.by",
                                       **where, hint="e.g. by: the authors of the reproduction, year"))
    return out


class _Literal(yaml.SafeDumper):
    pass


_Literal.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s
                                                              else None))


def entry_text(key: str, src: dict) -> str:
    """The YAML block of one source as sources.yaml holds them (the BibTeX as a literal block)."""
    return yaml.dump({key: src}, Dumper=_Literal, sort_keys=False, allow_unicode=True, width=100)


def add_source(root: Path, doc: dict, shown: str) -> tuple[str, Path]:
    """Append the source ``doc`` to registry/sources.yaml and return (its key, the file); or raise
    :class:`~eatlas.errors.ValidationFailed` with every problem, nothing written."""
    from ..errors import ValidationFailed
    from ..files import write_text

    path = root / SOURCES_FILE
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    known = yaml.safe_load(old) or {}
    found = problems(doc, shown, known if isinstance(known, dict) else {})
    if found:
        raise ValidationFailed(found)
    key = doc["id"]
    src = {k: v for k, v in doc.items() if k != "id"}
    src["bibtex"] = bibtex(key, src)
    new = old + ("" if not old or old.endswith("\n") else "\n") + entry_text(key, src)
    try:
        check_sources(yaml.safe_load(new))     # the whole bibliography, as the registry will load it
    except EatlasError as e:
        raise ValidationFailed([EatlasError(e.message, file=shown, obj=e.obj, field=e.field, hint=e.hint)]) from None
    if path.read_text(encoding="utf-8") != old:
        raise EatlasError("registry/sources.yaml changed while add was checking the file; nothing was written",
                          file=shown, hint="run the same 'eatlas add' again")
    write_text(path, new, prefix=".eatlas-add-", suffix=".tmp", fsync=True)
    return key, path
