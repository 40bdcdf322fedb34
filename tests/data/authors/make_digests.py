"""Write tests/data/authors/tan-celis/digests.json from a checkout of yichern/social-biases-contextualized.

The repository has no licence file, so EATlas does not redistribute its lists: the curation tests
compare our sets with these digests instead. Usage (a curator, with the authors' repository at hand):

    python tests/data/authors/make_digests.py PATH/TO/social-biases-contextualized COMMIT \
        > tests/data/authors/tan-celis/digests.json

A digest is the sha256 of the list as compact JSON (UTF-8, no ASCII escaping, separators "," and ":"):
``list_digest`` below, which the tests import.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

KEYS = ("targ1", "targ2", "attr1", "attr2")


def list_digest(items: list[str]) -> str:
    blob = json.dumps(list(items), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def file_digests(repo: Path) -> dict:
    out: dict = {"iats": {}, "winobias": {}}
    for p in sorted((repo / "data" / "iats").glob("*.jsonl")):
        doc = json.loads(p.read_text(encoding="utf-8"))          # one JSON object per file
        out["iats"][p.stem] = {k: {"n": len(doc[k]["examples"]), "sha256": list_digest(doc[k]["examples"])}
                               for k in KEYS}
    for p in sorted((repo / "data" / "winobias").glob("*.txt")):
        lines = [ln.strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
        out["winobias"][p.stem] = {"n": len(lines), "sha256": list_digest(lines)}
    return out


if __name__ == "__main__":
    repo, commit = Path(sys.argv[1]), sys.argv[2]
    doc = {"source": "https://github.com/yichern/social-biases-contextualized", "commit": commit,
           "license": "unspecified (the repository has no licence file)",
           "digest": "sha256 of the list as compact JSON (tests/data/authors/make_digests.py list_digest)",
           **file_digests(repo)}
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
