"""A registry N times the size of this one, for benchmarks of costs that must not grow with the registry.

``registry_copies(dest, n)`` copies the registry's folders (catalog.yaml, registry/, templates/, schemas/,
loaders/) into ``dest`` and adds n - 1 renamed copies of every source's sets, tests and published tables:
each set and test beside its original as ``<file>_copy<k>.yaml`` under the id ``<id>_copy<k>`` (a test naming the
copied sets, its paper aliases left out, as two tests may not claim one printed name), each published table as
``<table>_copy<k>.csv`` with its test ids renamed; ``eatlas catalog --sync`` then indexes them. Copy 1 is the
registry as it is.
"""
from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("registry", "templates", "schemas", "loaders")
_ID = re.compile(r"^id: *(\S+)", re.M)


def _rename(text: str, ids: set[str], k: int) -> str:
    """``text`` with every id of ``ids`` (as ``id: X``, or a reference ``X@version``) renamed ``X_copy<k>``."""
    text = _ID.sub(lambda m: f"id: {m[1]}_copy{k}" if m[1] in ids else m[0], text)
    text = re.sub(r"\b([a-z0-9_]+)@", lambda m: f"{m[1]}_copy{k}@" if m[1] in ids else m[0], text)
    return re.sub(r"^(variant_of: *)(\S+)", lambda m: f"{m[1]}{m[2]}_copy{k}" if m[2] in ids else m[0], text,
                  flags=re.M)


def _drop_aliases(text: str) -> str:
    """A test file without its ``aliases:`` block (a top-level key and its indented or listed lines)."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("aliases:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "-", "\t")) or not line.strip()):
            continue
        skipping = False
        out.append(line)
    return "".join(out)


def registry_copies(dest: Path, n: int) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "catalog.yaml", dest / "catalog.yaml")
    for f in FOLDERS:
        shutil.copytree(ROOT / f, dest / f)
    if n <= 1:
        return dest
    sets = sorted((dest / "registry").glob("*/sets/*.yaml"))
    tests = sorted((dest / "registry").glob("*/tests/*.yaml"))
    ids = set()
    for p in sets + tests:
        m = _ID.search(p.read_text(encoding="utf-8"))
        if m:
            ids.add(m[1])
    tables = sorted((dest / "registry").glob("*/published/*.csv"))
    for k in range(2, n + 1):
        for p in sets + tests:
            text = _rename(p.read_text(encoding="utf-8"), ids, k)
            if p.parent.name == "tests":
                text = _drop_aliases(text)
            (p.parent / f"{p.stem}_copy{k}.yaml").write_text(text, encoding="utf-8")
        for p in tables:
            rows = list(csv.reader(io.StringIO(p.read_text(encoding="utf-8-sig"))))
            col = rows[0].index("test_id")
            for r in rows[1:]:
                if len(r) > col and r[col] in ids:
                    r[col] = f"{r[col]}_copy{k}"
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows(rows)
            (p.parent / f"{p.stem}_copy{k}.csv").write_text(buf.getvalue(), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "eatlas", "catalog", "--sync", "--registry", str(dest)],
                          capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"catalog --sync of the {n}x registry failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return dest


if __name__ == "__main__":
    print(registry_copies(Path(sys.argv[1]), int(sys.argv[2])))
