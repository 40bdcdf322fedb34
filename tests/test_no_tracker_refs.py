"""Shipped files say what changed or why, never "issue N" of this project's tracker, which a reader cannot open.

An issue of another repository is a citation and stays, written with its repository on the line
("github.com/W4ngatang/sent-bias ... open issue #1"). The dataset card ``eatlas publish`` writes is checked
in tests/test_publish.py with the same rule (``tracker_refs``).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ["eatlas", "registry", "templates", "loaders", "schemas", "docs", "benchmarks", "scripts",
           "README.md", "CHANGELOG.md", "CONTRIBUTING.md", "pyproject.toml", "mkdocs.yml"]
TEXT = {".py", ".md", ".yaml", ".yml", ".json", ".toml", ".csv", ".txt", ".cff", ".html", ".js", ".css", ".j2",
        ".jinja", ".bib", ".cfg"}
TRACKER = re.compile(r"\b(?:issues?|PRs?|pull requests?)\s+#?\d+", re.IGNORECASE)
# another repository named on the same line: "github.com/owner/name", "owner/name issue #1"
OTHER_REPO = re.compile(r"github\.com/[\w.-]+/[\w.-]+|\b[\w.-]+/[\w.-]+(?:'s)? (?:open )?(?:issue|PR) #\d+")


def tracker_refs(text: str, where: str) -> list[str]:
    """The lines of ``text`` that cite an issue or pull request without naming another repository."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if TRACKER.search(line) and not OTHER_REPO.search(line):
            out.append(f"{where}:{n}: {line.strip()[:160]}")
    return out


def _files():
    for name in SHIPPED:
        p = ROOT / name
        if p.is_file():
            yield p
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix.lower() in TEXT and "__pycache__" not in f.parts:
                    yield f


def test_no_shipped_file_cites_this_projects_tracker():
    found = []
    for f in _files():
        found += tracker_refs(f.read_text(encoding="utf-8", errors="replace"), str(f.relative_to(ROOT)))
    assert not found, "cite what changed or why, not a tracker number:\n" + "\n".join(found[:40])


def test_the_rule_flags_a_tracker_number_and_keeps_another_repositorys_issue():
    assert tracker_refs("Imported again (issue 22; before, the test was left out).", "x")
    assert tracker_refs("see Issue #14 for the plan", "x")
    assert tracker_refs("fixed in PR 31", "x")
    assert not tracker_refs("The repository's open issue #1 and unmerged PR #2 (github.com/W4ngatang/sent-bias)",
                            "x")
    assert not tracker_refs("as W4ngatang/sent-bias issue #1 reports", "x")
    assert not tracker_refs("the issues a reviewer raises; 12 tests", "x")
