"""Give Bai et al.'s LLM IAT tests and their attribute sets titles that say what is compared, in the authors' words.

The authors' analysis notebook (baixuechunzi/llm-implicit-bias, analysis/clean.ipynb, commit
0d2772e8eb21186b6db1fab7551633ffda16c06f) names column A of stimuli/iat_stimuli.csv the "default" group, column B
the "stigma" group, the first half of column C "pos" and the second "neg", and labels the pairs it counts with
``group_label`` 'default' / 'stigma' and ``valence_label`` 'positive' / 'negative'. This script reads those words
from the notebook (refusing to run if they are not there), and rewrites

* each test's ``title``: "LLM IAT '<dataset>' (<category>): default group (..) vs stigma group (..); words labelled
  positive (..) vs negative (..)", with the first terms of each list;
* each attribute set's ``concept``: "<dataset>: words labelled positive (first half of the attributes)" (or
  negative, second half),

bumping each changed file's version (a patch: the lists are unchanged) with a changelog entry, and the tests'
references to the sets it bumped. Run ``eatlas catalog --sync`` afterwards.

    python scripts/bai2024_titles.py GIT_DIR_OF_THE_AUTHORS_REPOSITORY [--date YYYY-MM-DD]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import yaml

COMMIT = "0d2772e8eb21186b6db1fab7551633ffda16c06f"
ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "registry" / "bai2024"


def authors_words(git_dir: str) -> dict[str, str]:
    """The notebook's own names: default, stigma (columns A, B) and positive, negative (the halves of C)."""
    nb = json.loads(subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:analysis/clean.ipynb"],
                                   capture_output=True, text=True, check=True).stdout)
    src = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    words = {}
    for key, pattern in (("x", r"A = label_df\['A'\].*#\s*(\w+)"), ("y", r"B = label_df\['B'\].*#\s*(\w+)"),
                         ("a_short", r"E = \[\]\s*#\s*(\w+)"), ("b_short", r"F = \[\]\s*#\s*(\w+)"),
                         ("a", r"if name in E:\s*\n\s*mapped_valence\.append\('(\w+)'\)"),
                         ("b", r"elif name in F:\s*\n\s*mapped_valence\.append\('(\w+)'\)")):
        m = re.search(pattern, src)
        if not m:
            raise SystemExit(f"analysis/clean.ipynb at {COMMIT[:12]} has no {pattern!r}: the words are not the ones "
                             "this script was written for")
        words[key] = m.group(1)
    assert words["a"].startswith(words["a_short"]) and words["b"].startswith(words["b_short"]), words
    assert (words["x"], words["y"]) == ("default", "stigma"), words
    return words


def _examples(items, n=2) -> str:
    texts = [i if isinstance(i, str) else i["text"] for i in items]
    return ", ".join(texts[:n]) + (", ..." if len(texts) > n else "")


def _bump(version: str) -> str:
    major, minor, patch = version.split(".")
    return f"{major}.{minor}.{int(patch) + 1}"


def _rewrite(path: Path, field: str, value: str, date: str, change: str, refs: dict[str, str] | None = None) -> str:
    """Set ``field`` to ``value`` (and ``refs``: role -> new set reference), bump the version, add the changelog
    entry; the file's other lines are kept as they are. Returns the new version."""
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    new = _bump(doc["version"])
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        key = line.split(":", 1)[0] if line and not line.startswith((" ", "-")) else None
        if key == field or key == "version" or (refs and key in refs):
            val = value if key == field else new if key == "version" else refs[key]
            out.append(f"{key}: {yaml.safe_dump(val, default_style=None, width=10_000).strip()}"
                       .replace("\n...", ""))
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and not lines[i].lstrip().startswith("- "):
                i += 1          # the old value's continuation lines
            continue
        out.append(line)
        if key == "changelog":
            i += 1
            while i < len(lines) and (lines[i].startswith("- ") or lines[i].startswith("  ")):
                out.append(lines[i])
                i += 1
            entry = yaml.safe_dump([{"version": new, "date": date, "change": change}], default_flow_style=None, sort_keys=False,
                                   width=110).strip()
            out.extend(entry.splitlines())
            continue
        i += 1
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    check = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert check[field] == value and check["version"] == new and check["changelog"][-1]["version"] == new, path
    return new


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("git_dir")
    ap.add_argument("--date", default="2026-11-27")
    args = ap.parse_args(argv)
    w = authors_words(args.git_dir)
    source = f"analysis/clean.ipynb at {COMMIT[:12]}"
    bumped: dict[str, str] = {}
    for path in sorted((DIR / "sets").glob("*_attr_[ab].yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        half = path.stem[-1]
        dataset = doc["concept"].split(":")[0]
        concept = (f"{dataset}: words labelled {w[half]} ({'first' if half == 'a' else 'second'} half of the "
                   "attributes)")
        if doc["concept"] != concept:
            bumped[doc["id"]] = _rewrite(path, "concept", concept, args.date,
                                         f"Concept in the authors' words: the {'first' if half == 'a' else 'second'} "
                                         f"half of column C is labelled {w[half]} ({source}).")
    for path in sorted((DIR / "tests").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        sets = {r: yaml.safe_load((DIR / "sets" / f"{doc[r].split('@')[0]}.yaml").read_text(encoding="utf-8"))
                for r in "xyab"}
        dataset, category = re.match(r"LLM IAT '(.+)' \((.+?)\)", doc["title"]).groups() if \
            doc["title"].startswith("LLM IAT '") else (None, None)
        if dataset is None:
            raise SystemExit(f"{path}: title {doc['title']!r} is not one this script knows")
        title = (f"LLM IAT '{dataset}' ({category}): {w['x']} group ({_examples(sets['x']['items'])}) vs {w['y']} "
                 f"group ({_examples(sets['y']['items'])}); words labelled {w['a']} "
                 f"({_examples(sets['a']['items'])}) vs {w['b']} ({_examples(sets['b']['items'])})")
        refs = {r: f"{doc[r].split('@')[0]}@{bumped[doc[r].split('@')[0]]}" for r in "ab"
                if doc[r].split("@")[0] in bumped}
        if doc["title"] != title or refs:
            _rewrite(path, "title", title, args.date,
                     f"Title says what is compared, in the authors' words (the {w['x']} and {w['y']} groups, the "
                     f"{w['a']} and {w['b']} halves of the attributes: {source})"
                     + (f"; attribute sets {', '.join(sorted(refs.values()))}." if refs else "."), refs=refs)
    print(f"{len(bumped)} attribute sets and the tests that use them retitled; now run: eatlas catalog --sync")


if __name__ == "__main__":
    main()
