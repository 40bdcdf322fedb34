"""Embedding matrices as the statistics use them: each row (one stimulus) scaled to length 1, so that a
cosine similarity is a dot product. Shared by the WEAT (``weat``), the bootstrap and leave-one-out
(``robust``), ML-EAT and SC-EAT; it imports nothing, so importing one statistic loads no other."""
from __future__ import annotations

import numpy as np


def unit_rows(m: np.ndarray, name: str) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D matrix (one row per stimulus), got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        raise ValueError(f"{name} has a zero or non-finite row; cosine similarity is undefined")
    return m / norms
