"""Shared helpers of scripts/curate_wave3.py: reading the authors' snapshots, curating a list, writing YAML.

Not part of the package: curation tooling only. Every list comes from an authors' file read out of a bare git
snapshot of their repository (``<SNAPSHOTS>/<owner>+<name>/repo``, the folder given on the command line) at the
commit the snapshot holds; nothing is typed in by hand.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from eatlas.registry.textcheck import item_key, mixed_scripts  # noqa: E402

DATE = "2026-11-27"
DIGESTS_FILE = ROOT / "tests" / "data" / "authors" / "wave3" / "digests.json"
# Invisible format characters an authors' cell may carry around a word (bidi marks, a BOM, a zero-width space):
# the registry refuses them in a stimulus (docs/registry-format.md, "Characters in stimuli"); each one removed is
# recorded as a difference. Joiners (U+200C, U+200D) are part of some spellings and are left to the validator.
STRIP_FORMAT = {"\u200e": "LEFT-TO-RIGHT MARK", "\u200f": "RIGHT-TO-LEFT MARK", "\ufeff": "BYTE ORDER MARK",
                "\u200b": "ZERO WIDTH SPACE", "\u202a": "LEFT-TO-RIGHT EMBEDDING", "\u202c": "POP DIRECTIONAL FORMATTING",
                "\u00ad": "SOFT HYPHEN"}


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


CONTROL = {"\b": "U+0008 BACKSPACE removed", "\t": "U+0009 TAB made a space", "\n": "U+000A LINE FEED made a space",
           "\r": "U+000D CARRIAGE RETURN made a space"}


def curate_list(raw: list[str], *, case_sensitive: bool = True, custom: dict[str, tuple[str, str]] | None = None,
                drop_mixed: bool = False) -> tuple[list[str], list[dict]]:
    """The authors' list (as their own code splits it) -> (our items, the differences).

    Each item is stripped of surrounding spaces and NFC-normalised (the registry's text form); an invisible format
    character (STRIP_FORMAT) is removed; an empty item (a trailing comma) is left out; an item that repeats an
    earlier one (same text after NFKC, as the validator compares) is kept once, at its first position. Every
    change is returned, with the position in the authors' list, so that list can be rebuilt exactly
    (:func:`rebuild`)."""
    kept, diffs, seen = [], [], {}
    for pos, text in enumerate(raw):
        t = text
        extra = []
        if custom and text in custom:
            t, why = custom[text]
            extra.append(why)
        for ch, why in CONTROL.items():
            if ch in t:
                t = t.replace(ch, "" if ch == "\b" else " ")
                extra.append(why)
        removed = [name for ch, name in STRIP_FORMAT.items() if ch in t]
        for ch in STRIP_FORMAT:
            t = t.replace(ch, "")
        t = unicodedata.normalize("NFC", t.strip())
        t = re.sub(" {2,}", " ", t)
        for j in ("\u200c", "\u200d"):            # a joiner at a word's edge joins nothing: removed
            if re.search(f"(^|\\s){j}|{j}(\\s|$)", t):
                t = re.sub(f"(^|(?<=\\s)){j}+|{j}+((?=\\s)|$)", "", t)
                extra.append(f"U+{ord(j):04X} {'ZERO WIDTH NON-JOINER' if j == chr(0x200c) else 'ZERO WIDTH JOINER'}"
                             " at a word's edge removed")
        mixed = mixed_scripts(t) if drop_mixed and t else None
        if mixed:
            diffs.append({"position": pos, "text": text, "reason": "left out: the item mixes scripts ("
                          + ", ".join(f"{k} U+{ord(v):04X}" for k, v in mixed.items())
                          + "), which the registry refuses in one stimulus"})
            continue
        if not t:
            diffs.append({"position": pos, "text": text, "reason": "empty item (nothing between two commas)"})
            continue
        k = item_key(t, case_sensitive)
        if k in seen:
            diffs.append({"position": pos, "text": text, "reason": f"repeats position {seen[k]}"})
            continue
        seen[k] = pos
        if t != text:
            why = list(extra)
            if removed:
                why.append("removed " + ", ".join(f"U+{ord(ch):04X} {n}" for ch, n in STRIP_FORMAT.items()
                                                   if n in removed))
            if text.strip() != text and not extra:
                why.append("surrounding spaces stripped")
            if unicodedata.normalize("NFC", text) != text:
                why.append("NFC-normalised")
            if "  " in text.strip():
                why.append("repeated spaces made one")
            diffs.append({"position": pos, "text": text, "stored": t, "reason": "; ".join(why) or "normalised"})
        kept.append(t)
    return kept, diffs


def rebuild(items: list[str], diffs: list[dict]) -> list[str]:
    """The authors' list from our items and the recorded differences (inverse of :func:`curate_list`)."""
    out = list(items)
    changed = {d["stored"]: d["text"] for d in diffs if "stored" in d}
    out = [changed.get(t, t) for t in out]
    for d in sorted((d for d in diffs if "stored" not in d), key=lambda d: d["position"]):
        out.insert(d["position"], d["text"])
    return out


def difference_note(diffs: list[dict]) -> str:
    """The DIFFERENCE sentence of a set's notes (empty when the list is the authors' exactly)."""
    if not diffs:
        return ""
    reps = sum(d["reason"].startswith("repeats") for d in diffs)
    empty = sum(d["reason"].startswith("empty") for d in diffs)
    mixed = sum(d["reason"].startswith("left out: the item mixes") for d in diffs)
    norm = sum("stored" in d for d in diffs)
    only_spaces = all(d["reason"] == "surrounding spaces stripped" for d in diffs if "stored" in d)
    parts = []
    if reps:
        parts.append(f"{reps} repeated item(s) kept once (a set holds each stimulus once; the authors' list, used "
                     "by their code as is, counts a repeat twice)")
    if empty:
        parts.append(f"{empty} empty item(s) (two commas with nothing between) left out")
    if mixed:
        parts.append(f"{mixed} item(s) that mix two scripts in one word (e.g. Bengali letters inside a Tamil word) left "
                     "out, since the registry refuses such a stimulus")
    if norm:
        parts.append(f"{norm} item(s) stored " + ("without the spaces around them" if only_spaces else
                                                   "normalised (spaces, invisible marks or Unicode form)"))
    return "DIFFERENCE: " + "; ".join(parts) + "; each change, with its position in the authors' list, is in " \
        "source.differences."


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
