"""Holm's step-down correction for multiple tests (Holm, S. 1979. A simple sequentially rejective multiple test
procedure. Scandinavian Journal of Statistics 6(2): 65-70), in numpy.

The rejections and adjusted p-values are those of statsmodels' ``multipletests(p, alpha, method="holm")``
(tests/test_holm.py compares them on random p-value vectors, ties and p = 1 included): the same sort, the
same comparisons ``p_(i) > alpha / (m - i + 1)`` and the same products, so the same floating-point numbers.
Written here because importing statsmodels' module loads scipy.stats (1.5 s or more at start-up), which a
re-run of a few tests would otherwise spend on a correction that takes microseconds.
"""
from __future__ import annotations

import numpy as np


def _sorted(p_values) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(list(p_values) if not isinstance(p_values, np.ndarray) else p_values, dtype=float).ravel()
    order = np.argsort(p)
    return p, order


def holm(p_values, alpha: float = 0.01) -> np.ndarray:
    """Holm-Bonferroni rejections (bool array, in the order given) at family-wise level ``alpha``: the
    p-values are taken smallest first, and each is rejected while ``p_(i) <= alpha / (m - i + 1)``; from the
    first that is not, none is."""
    p, order = _sorted(p_values)
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool)
    keep = p[order] > alpha / np.arange(m, 0, -1)
    first = int(np.argmax(keep)) if keep.any() else m
    reject = np.zeros(m, dtype=bool)
    reject[order[:first]] = True
    return reject


def holm_adjusted(p_values) -> np.ndarray:
    """Holm-adjusted p-values (in the order given): ``max_{j <= i} (m - j + 1) p_(j)``, capped at 1. A p-value
    is rejected at level alpha by :func:`holm` exactly when its adjusted value is at most alpha, up to the
    rounding of the products."""
    p, order = _sorted(p_values)
    m = p.size
    out = np.empty(m, dtype=float)
    if m:
        adjusted = np.maximum.accumulate(p[order] * np.arange(m, 0, -1))
        adjusted[adjusted > 1] = 1
        out[order] = adjusted
    return out
