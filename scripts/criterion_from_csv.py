"""Kept for old instructions: ``eatlas criterion add`` does this (eatlas.registry.criterion_add); this script passes
its arguments on unchanged.

    python scripts/criterion_from_csv.py --registry MYREG --source mylab --file Bellezza_Lexicon.csv ...
    # is
    eatlas criterion add --registry MYREG --source mylab --file Bellezza_Lexicon.csv ...
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from eatlas.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["criterion", "add", *sys.argv[1:]]))
