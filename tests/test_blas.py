"""eatlas.stats.blas.beside: work started beside the caller gives the result (or the error) of the call, on a
side thread only where there are worker threads."""
import numpy as np
import pytest

from eatlas.stats import blas


@pytest.mark.parametrize("threads", ["1", "2"])
def test_beside_gives_the_result_of_the_call(threads, monkeypatch):
    monkeypatch.setattr(blas, "_POOL", (None, 1, None))
    monkeypatch.setenv("EATLAS_THREADS", threads)
    fut = blas.beside(np.add, np.arange(3), 1)
    assert isinstance(fut, blas._Now) == (threads == "1")      # no side thread without worker threads
    assert fut.result().tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="boom"):
        blas.beside(_boom).result()


def _boom():
    raise ValueError("boom")
