"""DATA-LICENSES.md: each source of the registry and the licence its files record, from the catalog.

The code is Apache-2.0 (LICENSE); every stimulus set, test and template keeps the licence of its
source exactly as its file's ``license:`` field records it. Regenerate the file after adding a set
with ``python -m eatlas.licenses > DATA-LICENSES.md``; tests/test_package_files.py checks it is current.
"""
from __future__ import annotations

import sys
from collections import Counter

from .registry import Registry, load_registry

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
        "Generated from `catalog.yaml` by `python -m eatlas.licenses`; do not edit by hand.",
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
    lines += [
        "",
        "The published-results tables (`registry/<paper>/published/*.csv`) transcribe the numbers the papers",
        "print, for comparison with new runs; the catalog records no licence for them.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(data_licenses(load_registry(sys.argv[1] if len(sys.argv) > 1 else None)))
