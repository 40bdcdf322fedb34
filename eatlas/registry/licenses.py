"""DATA-LICENSES.md: each source of the registry and the licence its files record, from the catalog.

The code is Apache-2.0 (LICENSE); every stimulus set, test and template keeps the licence of its
source exactly as its file's ``license:`` field records it, and so does the validation data of each
``registry/<source>/data/`` folder (its ``provenance.yaml``). Regenerate the file after adding a set
with ``python -m eatlas.registry.licenses > DATA-LICENSES.md``; tests/test_package_files.py checks it is current.
"""
from __future__ import annotations

import sys
from collections import Counter

from .base import Registry, load_registry

KINDS = ("sets", "tests", "templates")


def data_licenses(reg: Registry) -> str:
    counts: Counter = Counter()
    for kind in KINDS:
        for e in reg.catalog.get(kind) or []:
            obj = getattr(reg, kind)[e["id"]]
            counts[(obj.source.get("paper") or "(none)", obj.license, kind)] += 1
    rows = sorted({(paper, lic) for paper, lic, _ in counts})
    lines = [
        "# Data licences",
        "",
        "Generated from `catalog.yaml` by `python -m eatlas.registry.licenses`; do not edit by hand.",
        "",
        "The EATlas code is licensed under Apache-2.0 (`LICENSE`). The stimulus sets, tests and templates",
        "under `registry/` and `templates/` are not: each keeps the licence of its source, exactly as the",
        "`license:` field of its file records it. `unspecified` means the source states no licence: ask its",
        "authors before redistributing those lists. `eatlas show ID` prints the licence of one set or test,",
        "and `eatlas publish` writes the licence of every part of a test into the dataset's LICENSE.md.",
        "",
        "| source (`source.paper`) | licence | sets | tests | templates |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for paper, lic in rows:
        lines.append(f"| {paper} | {lic} | " + " | ".join(str(counts[(paper, lic, k)]) for k in KINDS) + " |")
    data = _data_folders(reg)
    if data:
        lines += [
            "",
            "The validation data under `registry/<source>/data/` (lists with scores, e.g. occupations with their",
            "gender scores) keep their source's licence too, as each folder's `provenance.yaml` records it:",
            "",
            "| folder | licence | files | authors' repository |",
            "| --- | --- | ---: | --- |",
        ]
        lines += [f"| {folder} | {lic} | {n} | {repo} |" for folder, lic, n, repo in data]
    crit = getattr(reg, "criteria", {})
    if crit:
        lines += [
            "",
            "The validity criteria under `registry/<source>/criteria/` (a value about the world per word or name,",
            "derived from a file of the source's `data/` folder) record their licence as the sets do:",
            "",
            "| criterion | source (`source.paper`) | licence | items |",
            "| --- | --- | --- | ---: |",
        ]
        lines += [f"| {c.id} | {c.source.get('paper')} | {c.license} | {len(c.items)} |" for c in crit.values()]
    lines += [
        "",
        "The published-results tables (`registry/<paper>/published/*.csv`) transcribe the numbers the papers",
        "print, for comparison with new runs; the catalog records no licence for them.",
    ]
    return "\n".join(lines) + "\n"


def _data_folders(reg: Registry) -> list[tuple[str, str, int, str]]:
    """(folder, licence, number of files, authors' repository) of every ``registry/*/data/provenance.yaml``."""
    import yaml

    out = []
    for prov in sorted((reg.root / "registry").glob("*/data/provenance.yaml")):
        doc = yaml.safe_load(prov.read_text(encoding="utf-8")) or {}
        out.append((prov.parent.relative_to(reg.root).as_posix(), str(doc.get("license", "unspecified")),
                    len(doc.get("files") or []), doc.get("authors_repository", "")))
    return out


if __name__ == "__main__":
    sys.stdout.write(data_licenses(load_registry(sys.argv[1] if len(sys.argv) > 1 else None)))
