"""One BLAS thread for the statistics' matrix products, and worker threads for their long loops.

The products of a WEAT (cosine blocks of a few hundred rows, the bootstrap's count matrices times
them) are small for a multi-threaded BLAS: OpenBLAS splits them across every core and its threads then
wait on each other. On a machine whose cores are busy with other work, that made a 34 MFLOP product
16x slower than on one thread (31 ms against 2 ms, 2 cores, load average 7), and the products of a
whole run several times slower in all. :func:`single_thread` limits the BLAS of numpy (through
threadpoolctl, as scikit-learn does around its own parallel loops) for the duration of a computation
and restores the previous setting afterwards. How a BLAS splits a product across threads can move its
last bit, so an effect size can differ by about 1e-16 from one computed with a multi-threaded BLAS (as
between machines with different numbers of cores); p-values judge ties within a tolerance far above
that (docs/methods.md). The worker threads of :func:`workers` change no result at all.
"""
from __future__ import annotations

import contextlib
import functools

_controller = None


def single_thread():
    """A context manager in which numpy's BLAS uses one thread (a no-op without threadpoolctl). It limits
    the BLAS libraries loaded when it was first used (numpy's, by then): one loaded later, e.g. scipy's
    own OpenBLAS, keeps its threads, and no statistic's product goes through it."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:         # pragma: no cover - a declared dependency; the statistics still run
            _controller = False
        else:
            _controller = ThreadpoolController()
    if not _controller:
        return contextlib.nullcontext()
    return _controller.limit(limits=1, user_api="blas")


def single_threaded(fn):
    """Decorator: ``fn`` runs inside :func:`single_thread`."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with single_thread():
            return fn(*args, **kwargs)
    return wrapped


_POOL = (None, 1, None)             # (executor or None, workers, pid that made it)


def workers():
    """(executor, number of workers): threads for the chunks of a long computation (a sampled permutation
    test, a bootstrap), one per core up to 4; (None, 1) on a single core. numpy releases the GIL in the
    work of a chunk (drawing, counting, products, sums), so chunks run side by side. Made again in a
    forked child process, whose copy of the parent's threads would not run. ``EATLAS_THREADS=N`` sets
    the number (1: none), e.g. for many runs side by side. Results do not depend on it."""
    global _POOL
    import os
    if _POOL[2] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor
        cores = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4)
        env = os.environ.get("EATLAS_THREADS", "").strip()
        if env.isdigit() and int(env) > 0:
            cores = int(env)
        _POOL = (ThreadPoolExecutor(cores, thread_name_prefix="eatlas-stats") if cores > 1 else None, cores,
                 os.getpid())
    return (_POOL[0], _POOL[1]) if _POOL[0] is not None else (None, 1)


class _Now:
    """A call made when its ``result()`` is asked for, in the caller's thread (where no side thread is used)."""

    def __init__(self, fn, args, kwargs):
        self._fn, self._args, self._kwargs = fn, args, kwargs

    def result(self):
        return self._fn(*self._args, **self._kwargs)


_SIDE = (None, None)                # (executor, pid that made it)


def beside(fn, *args, **kwargs):
    """Start ``fn(*args, **kwargs)`` on a side thread and return its Future, so the caller's own work runs
    meanwhile (e.g. a test's bootstrap beside its permutation test: both hand their chunks to the
    :func:`workers`, which the two then keep busy). Without worker threads (one core, ``EATLAS_THREADS=1``)
    ``fn`` runs when ``result()`` is asked for. The side thread only waits on its chunks, never on the
    caller, so nothing can deadlock; results do not depend on it. Start it inside the caller's
    :func:`single_thread` and take the result before leaving it: the limit is process-wide, and OpenBLAS
    may ignore one set from another thread than the main one."""
    global _SIDE
    import os
    if workers()[0] is None:
        return _Now(fn, args, kwargs)
    if _SIDE[1] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor
        _SIDE = (ThreadPoolExecutor(1, thread_name_prefix="eatlas-side"), os.getpid())
    return _SIDE[0].submit(fn, *args, **kwargs)
