"""Shared by the benchmarks: wrap a function so its calls add their seconds to a dict."""
from __future__ import annotations

import time


def timed(spent: dict, name: str, fn):
    """``fn`` wrapped: each call adds its wall time to ``spent[name]``."""
    def wrapped(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
    return wrapped
