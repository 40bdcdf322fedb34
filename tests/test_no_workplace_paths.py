"""No shipped file names a path on a developer's machine: the registry, templates, docs and package
cite papers and the authors' repository files, never ../shared, shared/seeds, shared/reference or
an absolute /work, /home, /root or /Users path. Tests (tests/) and CI scripts (.ci/) may."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXEMPT = ("tests/", ".ci/")
WORKPLACE = re.compile(r"\.\./shared\b|\bshared/(?:seeds|reference)\b|(?<![\w.~-])/(?:work|home|root|Users)/")


def shipped_files() -> list[str]:
    """The git-tracked files outside tests/ and .ci/ (every file, if this is not a git checkout)."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        files = [f for f in out.decode("utf-8").split("\0") if f]
    else:
        files = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()
                 and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(ROOT).parts)]
    return [f for f in files if not f.startswith(EXEMPT)]


def workplace_paths(text: str) -> list[str]:
    return [m.group(0) for m in WORKPLACE.finditer(text)]


@pytest.mark.parametrize("text, found", [
    ("seed: ../shared/seeds/000_3e2c8b47936a874c.txt", ["../shared"]),
    ("restated in shared/reference.md", ["shared/reference"]),
    ("see `/work/shared/seeds/README.md`", ["/work/", "shared/seeds"]),
    ("cache in /home/ada/.cache or /root/x or /Users/ada", ["/home/", "/root/", "/Users/"]),
    ("a shared, versioned registry; words shared with WEAT 5", []),
    ("W4ngatang/sent-bias tests/weat3.jsonl; https://example.org/home/page; ~/work/x", []),
])
def test_the_detector(text, found):
    assert workplace_paths(text) == found


def test_no_shipped_file_names_a_workplace_path():
    files = shipped_files()
    assert "registry/sources.yaml" in files and "eatlas/cli/main.py" in files
    hits = []
    for rel in files:
        path = ROOT / rel
        if not path.is_file():          # deleted in the work tree, not yet committed
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:      # binary
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if workplace_paths(line):
                hits.append(f"{rel}:{n}: {line.strip()[:120]}")
    assert not hits, "cite the paper and the authors' repository file instead:\n" + "\n".join(hits)
