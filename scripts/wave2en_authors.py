"""Reading the authors' files of the wave-2 English sources, shared by the curation script.

Every list comes out of an authors' file exactly as they wrote it: JSON/JSONL lists as parsed, text
files line by line (trailing newline and carriage returns stripped, empty lines skipped), CSV columns as
parsed, and Python lists from the authors' code through ``ast`` (list literals, ``+`` of lists and
``[a:b]`` slices; nothing is executed).

Where the files come from: ``tests/data/authors/<owner>+<name>/<path>`` (committed copies, for the
repositories whose licence allows it), else a bare git snapshot of the repository at
``$EATLAS_AUTHORS_GIT/<owner>+<name>/repo`` read with ``git show <commit>:<path>``.
Not part of the package: curation tooling only.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIES = ROOT / "tests" / "data" / "authors"

# The snapshot of each repository the registry was curated from (repo -> commit, licence as stated).
REPOS = {
    "W4ngatang/sent-bias": ("e3559fb669ca4832743b42fee715994c15c7f1af", "CC-BY-NC-4.0"),
    "McGill-NLP/bias-bench": ("291426aab926f78ecfc7bd040b531429ee8123e0", "unspecified"),
    "weiguowilliam/CEAT": ("497e2958a152ad70004ef6f3b613b98efdd26389", "unspecified"),
    "nikhgarg/EmbeddingDynamicStereotypes": ("b4382df6c9373868c2e1fc6f36f5f4606e0d47d9", "unspecified"),
    "tolga-b/debiaswe": ("6bb03ee2a0d7214339e513ca71cd0a99069dc29c", "MIT"),
    "TManzini/DebiasMulticlassWordEmbedding": ("755664a38542c2d195ecc20aef43f31d392ee77c", "unspecified"),
    "uclanlp/gn_glove": ("7e0c7cabb67875bef76b0d3026846e1c2029c860", "Apache-2.0"),
    "maria-antoniak/bad-seeds": ("aa5f2c72b2482881a0ee1a99e6df2598a4136aa1", "unspecified"),
    "baixuechunzi/llm-implicit-bias": ("0d2772e8eb21186b6db1fab7551633ffda16c06f", "MIT"),
}
# Licences that allow a copy of the file in this repository's tests (attribution kept alongside).
COPY_ALLOWED = {"MIT", "Apache-2.0", "CC-BY-NC-4.0"}


def _git_dir(repo: str) -> Path | None:
    base = os.environ.get("EATLAS_AUTHORS_GIT")
    if not base:
        return None
    d = Path(base) / repo.replace("/", "+") / "repo"
    return d / ".git" if (d / ".git").is_dir() else d


def read_bytes(repo: str, path: str) -> bytes:
    copy = COPIES / repo.replace("/", "+") / path
    if copy.is_file():
        return copy.read_bytes()
    d = _git_dir(repo)
    if d is None or not d.exists():
        raise FileNotFoundError(f"{repo}:{path}: no committed copy and EATLAS_AUTHORS_GIT is not set")
    commit = REPOS[repo][0]
    return subprocess.run(["git", "--git-dir", str(d), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def sha256(repo: str, path: str) -> str:
    return hashlib.sha256(read_bytes(repo, path)).hexdigest()


def text(repo: str, path: str) -> str:
    return read_bytes(repo, path).decode("utf-8")


def json_file(repo: str, path: str):
    return json.loads(text(repo, path))


def lines(repo: str, path: str) -> list[str]:
    return [ln.rstrip("\r") for ln in text(repo, path).split("\n") if ln.rstrip("\r").strip()]


def csv_rows(repo: str, path: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text(repo, path))))


def python_lists(repo: str, path: str) -> dict[str, tuple[list[str], int, int]]:
    """name -> (list, first line, last line) for every module-level ``name = <list expression>``."""
    tree = ast.parse(text(repo, path))
    env: dict[str, list[str]] = {}
    out: dict[str, tuple[list[str], int, int]] = {}

    def ev(node):
        if isinstance(node, ast.List):
            vals = [ev(e) for e in node.elts]
            if all(isinstance(v, str) for v in vals):
                return vals
            raise ValueError("not a list of strings")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return ev(node.left) + ev(node.right)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            s = node.slice
            lo = s.lower.value if s.lower is not None else None
            hi = s.upper.value if s.upper is not None else None
            return ev(node.value)[lo:hi]
        raise ValueError(f"unsupported expression {ast.dump(node)[:60]}")

    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                v = ev(node.value)
            except (ValueError, TypeError, AttributeError):
                continue
            if isinstance(v, list):
                env[node.targets[0].id] = v
                out[node.targets[0].id] = (v, node.lineno, node.end_lineno)
    return out
