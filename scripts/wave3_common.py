"""Shared helpers of scripts/curate_wave3.py: reading the authors' snapshots, curating a list, writing YAML.

Not part of the package: curation tooling only. Every list comes from an authors' file read out of a bare git
snapshot of their repository (``<SNAPSHOTS>/<owner>+<name>/repo``, the folder given on the command line) at the
commit the snapshot holds; nothing is typed in by hand.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from item_cleaning import CONTROL, STRIP_FORMAT, curate_list, difference_note, rebuild  # noqa: E402,F401

from eatlas.registry.textcheck import item_key  # noqa: E402,F401  (curate_wave3 imports it from here)

DATE = "2026-11-27"
DIGESTS_FILE = ROOT / "tests" / "data" / "authors" / "wave3" / "digests.json"
class Snapshot:
    """One repository's bare git snapshot: its commit, and its files at that commit."""

    def __init__(self, base: str | Path, repo: str):
        self.repo = repo
        d = Path(base) / repo.replace("/", "+") / "repo"
        self.git_dir = d / ".git" if (d / ".git").is_dir() else d
        if not self.git_dir.exists():
            raise SystemExit(f"{repo}: no snapshot at {d} (fetch github:{repo} first)")
        self.commit = self._git("rev-parse", "HEAD").decode().strip()

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(self.git_dir), *args], check=True,
                              capture_output=True).stdout

    def read(self, path: str) -> bytes:
        return self._git("show", f"{self.commit}:{path}")

    def text(self, path: str) -> str:
        return self.read(path).decode("utf-8")

    def files(self, prefix: str = "") -> list[str]:
        return self._git("ls-tree", "-r", "--name-only", self.commit, "--", prefix or ".").decode().split("\n")[:-1]

    def sha256(self, path: str) -> str:
        return hashlib.sha256(self.read(path)).hexdigest()

    def where(self, path: str, detail: str = "") -> str:
        return f"{self.repo} {path}" + (f" {detail}" if detail else "")


def list_digest(items: list[str]) -> str:
    return hashlib.sha256(json.dumps(list(items), ensure_ascii=False).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------------------ YAML out
class Flow(dict):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))


def dump(doc: dict) -> str:
    doc = dict(doc)
    items = doc.pop("items", None)
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    if items is not None:
        text += "items:\n" + "".join(
            "- " + yaml.dump(i if isinstance(i, str) else Flow(i), Dumper=_Dumper, allow_unicode=True, width=10_000,
                             sort_keys=False,
                             default_flow_style=None).removesuffix("...\n").strip() + "\n" for i in items)
    return text


def declared_languages() -> dict[str, list[str]]:
    """loader id -> the languages its entry declares (loaders/*.yaml): which offline models cover a language."""
    out = {}
    for p in sorted((ROOT / "loaders").glob("*.yaml")):
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        out[doc["id"]] = [str(x) for x in doc.get("languages") or []]
    return out


def coverage_note(language: str) -> str:
    """The sentence a non-English test carries about the offline models that declare its language."""
    primary = language.split("-")[0].lower()
    models = [m for m, langs in declared_languages().items() if primary in {x.split("-")[0].lower() for x in langs}]
    if not models:
        return (f"No registered offline model declares {language}: a run on the multilingual default "
                "(multilingual-e5-small) or any other registered model warns that the language is not among the "
                "model's (results.language_warning).")
    return f"Registered offline models that declare {primary}: {', '.join(models)}."


def write_files(files: dict[str, str], owned_globs: list[str]) -> None:
    """Writes ``files`` (path relative to the repository root -> text) after removing what an earlier run of the
    same step wrote (``owned_globs``)."""
    for pattern in owned_globs:
        for p in ROOT.glob(pattern):
            if p.is_file():
                p.unlink()
    for rel, text in files.items():
        p = ROOT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def update_digests(section: str, entry: dict) -> None:
    """Records one source's digests (the authors' files and lists) in tests/data/authors/wave3/digests.json."""
    doc = json.loads(DIGESTS_FILE.read_text(encoding="utf-8")) if DIGESTS_FILE.exists() else {}
    doc[section] = entry
    DIGESTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    DIGESTS_FILE.write_text(json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
