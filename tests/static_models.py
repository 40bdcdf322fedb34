"""Tiny static-vector models (GloVe text files) covering the words of a few registry tests, for the tests of
sweeps and results export/import: loading one takes milliseconds, and two files with other seeds are two models."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from eatlas.registry import load_registry
from eatlas.registry.stimuli import build_test


def test_words(tests=("weat1", "weat2")) -> list[str]:
    reg = load_registry()
    words = []
    for tid in tests:
        t = build_test(reg, reg.tests[tid], "word", seed=0)
        words += [s.text for c in t.concepts.values() for s in c.stimuli]
    return sorted(set(words))


def write_static_model(path: Path, seed: int, tests=("weat1", "weat2"), dim: int = 8) -> Path:
    rng = np.random.default_rng(seed)
    words = [w for w in test_words(tests) if " " not in w]       # a vector file holds single tokens only
    lines = [w + " " + " ".join(f"{x:.6f}" for x in rng.normal(size=dim)) for w in words]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
