"""How much a WEAT effect size depends on the chosen stimuli.

* :func:`bootstrap_ci`: a confidence interval for the effect size by resampling X, Y, A and B
  independently with replacement (the stimulus bootstrap of WEATHub, Mukherjee et al. 2023,
  src/weat.py): the percentile interval of :func:`scipy.stats.bootstrap`, computed here on seeded
  chunks of resamples drawn in parallel (:func:`resample_chunks`), or BCa by scipy itself on request.
* :func:`leave_one_out`: the effect size with each stimulus left out in turn, the "Bad Seeds"
  question of Antoniak & Mimno (2021): does one word carry the result?

Both work on the cosine-similarity blocks of the four matrices, so a resample costs two small
matrix products instead of re-encoding anything.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .blas import single_threaded
from .cosine import unit_rows as _unit_rows

CI_METHODS = ("percentile", "BCa")
# Memory one bootstrap resample keeps: its effect size (a float64; the resamples' indices are drawn chunk by chunk,
# scipy's BCa in batches). `--n-boot` is bounded by the machine's memory at this rate.
BYTES_PER_RESAMPLE = 8
# Indices of the largest block in one chunk of bootstrap resamples: small enough that a chunk's working
# arrays come back from the allocator rather than as fresh pages from the system (2**21 spent a fifth of
# the bootstraps' time in page faults), large enough that the per-chunk overhead does not show.
CHUNK_INDICES = 1 << 18


@dataclass(frozen=True)
class BootstrapCI:
    low: float
    high: float
    level: float
    n_boot: int
    method: str


def _blocks(X, Y, A, B):
    X, Y, A, B = (_unit_rows(m, n) for m, n in ((X, "X"), (Y, "Y"), (A, "A"), (B, "B")))
    W = np.vstack([X, Y])
    return W @ A.T, W @ B.T, len(X)


def _weights(idx: np.ndarray, n: int, dtype=np.float64) -> np.ndarray:
    """Resample indices (..., k) -> the weight of each of the n stimuli in its resample's mean (..., n)."""
    lead = idx.shape[:-1]
    flat = idx.reshape(-1, idx.shape[-1])
    offsets = (np.arange(flat.shape[0]) * n)[:, None]
    counts = np.bincount((flat + offsets).ravel(), minlength=flat.shape[0] * n).reshape(flat.shape[0], n)
    return (counts.astype(dtype) * dtype(1.0 / idx.shape[-1])).reshape(*lead, n)


def _effect_sizes(s_x: np.ndarray, s_y: np.ndarray) -> np.ndarray:
    """Caliskan et al.'s d along the last axis (sample standard deviation), NaN where it is 0."""
    s_all = np.concatenate([s_x, s_y], axis=-1)
    sd = s_all.std(axis=-1, ddof=1)
    diff = s_x.mean(axis=-1) - s_y.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.nan)


def resample_statistic(X, Y, A, B, dtype=np.float64):
    """``(statistic, sizes)``: statistic(ix, iy, ia, ib) is the effect size of the test on the rows
    X[ix], Y[iy], A[ia], B[ib], vectorised over any leading axes of the index arrays. ``dtype``: of the
    products (float32 halves the time of a bootstrap, whose percentiles need no more digits)."""
    sa, sb, n_x = _blocks(X, Y, A, B)
    n_y, n_a, n_b = sa.shape[0] - n_x, sa.shape[1], sb.shape[1]
    sa_t, sb_t = np.ascontiguousarray(sa.T, dtype=dtype), np.ascontiguousarray(sb.T, dtype=dtype)

    def statistic(ix, iy, ia, ib, axis=-1):
        # s(w) of every target row under the resampled A and B, then the resampled X and Y rows of it
        s_all = _weights(ia, n_a, dtype) @ sa_t - _weights(ib, n_b, dtype) @ sb_t   # (..., n_x + n_y)
        lead = np.broadcast_shapes(s_all.shape[:-1], ix.shape[:-1], iy.shape[:-1])
        s_all = np.broadcast_to(s_all, (*lead, s_all.shape[-1]))
        s_x = np.take_along_axis(s_all, np.broadcast_to(ix, (*lead, ix.shape[-1])), axis=-1)
        s_y = np.take_along_axis(s_all, np.broadcast_to(iy + n_x, (*lead, iy.shape[-1])), axis=-1)
        return _effect_sizes(s_x, s_y)

    return statistic, (n_x, n_y, n_a, n_b)


@single_threaded
def bootstrap_ci(X, Y, A, B, *, ci: float = 0.95, n_boot: int = 10_000, seed: int = 0,
                 method: str = "percentile", batch: int = 2500) -> BootstrapCI:
    """Bootstrap confidence interval of the WEAT effect size over the stimuli.

    X, Y, A and B (one row per stimulus) are resampled independently with replacement ``n_boot``
    times; each resample's effect size uses the same formula as :func:`eatlas.stats.weat.weat`. Seeded:
    the same inputs and seed give the same interval. An interval is NaN when resamples make the
    standard deviation vanish (e.g. identical vectors).
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if n_boot < 100:
        raise ValueError(f"n_boot must be at least 100, got {n_boot}")
    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {CI_METHODS}, got {method!r}")
    if method == "percentile":
        sa, sb, n_x = _blocks(X, Y, A, B)
        sizes = (n_x, sa.shape[0] - n_x, sa.shape[1], sb.shape[1])
        low, high = _percentile_interval(count_statistic(sa, sb, n_x), sizes, ci=ci, n_boot=int(n_boot), seed=seed)
        return BootstrapCI(low=low, high=high, level=float(ci), n_boot=int(n_boot), method=method)
    statistic, sizes = resample_statistic(X, Y, A, B, dtype=np.float32)
    # A set of one stimulus is the same in every resample (and scipy resamples only samples of two or more)
    varying = [i for i, n in enumerate(sizes) if n > 1]
    data = tuple(np.arange(sizes[i]) for i in varying)

    def stat(*idx, axis=-1):
        full = [np.zeros(1, dtype=np.int64)] * 4
        for i, ix in zip(varying, idx):
            full[i] = ix
        return statistic(*full).astype(np.float64)

    import warnings

    from scipy.stats import bootstrap

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=getattr(__import__("scipy.stats", fromlist=["x"]),
                                                         "DegenerateDataWarning", RuntimeWarning))
        res = bootstrap(data, stat, n_resamples=int(n_boot), vectorized=True, paired=False,
                        confidence_level=ci, method=method, rng=np.random.default_rng(seed), batch=batch)
    low, high = (float(v) for v in (res.confidence_interval.low, res.confidence_interval.high))
    return BootstrapCI(low=low, high=high, level=float(ci), n_boot=int(n_boot), method=method)


def resample_chunks(sizes, n_boot: int, seed: int) -> list[tuple[int, int, np.random.SeedSequence]]:
    """How :func:`bootstrap_ci`'s percentile interval splits its ``n_boot`` resamples: ``(first, count,
    stream)`` per chunk, each chunk with its own random stream spawned from ``seed`` (numpy's
    ``SeedSequence.spawn``), so chunks are drawn side by side and the resamples do not depend on the
    number of threads. The split depends only on the set sizes and ``n_boot``: chunks of at most
    :data:`CHUNK_INDICES` indices of the largest block, and at least four chunks of 1,000 or more
    resamples each where ``n_boot`` allows it (so two to four cores share the work evenly)."""
    step = max(1, CHUNK_INDICES // max(sizes[0] + sizes[1], sizes[2], sizes[3]))
    n_chunks = max(-(-n_boot // step), min(4, n_boot // 1000), 1)
    bounds = np.linspace(0, n_boot, n_chunks + 1).round().astype(int)
    streams = np.random.SeedSequence(seed).spawn(n_chunks)
    return [(int(a), int(b - a), ss) for a, b, ss in zip(bounds[:-1], bounds[1:], streams)]


def draw_resamples(sizes, count: int, stream: np.random.SeedSequence) -> list[np.ndarray]:
    """One chunk's resamples: for X, Y, A and B in turn, ``count`` rows of indices drawn uniformly with
    replacement, ``Generator(PCG64(stream)).integers(0, n, (count, n))``, as 16-bit integers where
    n < 65,536 (numpy draws those exactly uniformly, as it does 64-bit ones, at half the cost); a set
    of one stimulus is the same in every resample (a (1,) array of zeros)."""
    rng = np.random.Generator(np.random.PCG64(stream))
    return [rng.integers(0, n, size=(count, n), dtype=np.uint16 if n < 1 << 16 else np.int64) if n > 1
            else np.zeros(1, dtype=np.intp) for n in sizes]


def _percentile_interval(statistic, sizes, *, ci: float, n_boot: int, seed: int) -> tuple[float, float]:
    """The percentile interval as scipy.stats.bootstrap computes it (every set of two or more resampled
    independently; np.percentile of the statistics; NaN if any resample's statistic is NaN), without its
    per-call overhead (at word size several times the statistic's own cost), on the resamples of
    :func:`resample_chunks` and :func:`draw_resamples`, drawn and computed chunk by chunk on the
    worker threads (numpy releases the GIL in both)."""
    from .blas import workers

    dist = np.empty(n_boot)
    chunks = resample_chunks(sizes, n_boot, seed)

    def one(r0, m, stream):
        idx = draw_resamples(sizes, m, stream)
        with np.errstate(invalid="ignore", divide="ignore"):
            dist[r0:r0 + m] = statistic(*idx)

    pool, _ = workers() if len(chunks) > 1 else (None, 1)
    if pool is None:
        for chunk in chunks:
            one(*chunk)
    else:
        for f in [pool.submit(one, *chunk) for chunk in chunks]:
            f.result()
    if np.isnan(dist).any():
        return float("nan"), float("nan")
    tail = (1 - ci) / 2 * 100
    low, high = np.percentile(dist, [tail, 100 - tail])
    return float(low), float(high)


def count_statistic(sa: np.ndarray, sb: np.ndarray, n_x: int, dtype=np.float32):
    """The bootstrap's statistic on the cosine blocks ``sa`` = cos(W, A), ``sb`` = cos(W, B) (W: the X
    rows, then the Y rows): ``statistic(ix, iy, ia, ib)`` is the effect size of the resample X[ix],
    Y[iy], A[ia], B[ib] for (m, k) index arrays (a (1,) array of zeros for a set of one), as
    :func:`resample_statistic`, computed with less memory traffic: the resampled A and B of every
    resample as one count matrix (m, |A| + |B|) times the precomputed (|A| + |B|, |W|) matrix of
    cosines divided by +|A| and -|B| (one product gives s(w) of every target under every resample),
    then X's and Y's resampled s(w) read by flat indices, and their means and standard deviation in
    two passes. ``dtype``: of the product and the passes (float32: the interval's endpoints move by
    about 1e-7, far below the digits reported)."""
    n_all, n_a = sa.shape
    n_b = sb.shape[1]
    n_y = n_all - n_x
    n_ab = n_a + n_b
    M = np.empty((n_ab, n_all), dtype=dtype)
    M[:n_a] = sa.T / n_a
    M[n_a:] = sb.T / -n_b

    offsets = {}
    local = threading.local()       # each worker thread's buffers, reused from chunk to chunk

    def buffers(m, kx, ky):
        key = (m, kx, ky)
        if getattr(local, "key", None) != key:
            local.key = key
            local.bufs = (np.empty((m, n_ab), dtype=np.intp), np.empty((m, n_ab), dtype=dtype),
                          np.empty((m, n_all), dtype=dtype), np.empty((m, kx), dtype=np.intp),
                          np.empty((m, ky), dtype=np.intp), np.empty((m, kx), dtype=dtype),
                          np.empty((m, ky), dtype=dtype))
        return local.bufs

    def statistic(ix, iy, ia, ib):
        m = max(i.shape[0] if i.ndim == 2 else 1 for i in (ix, iy, ia, ib))
        if m not in offsets:        # flat positions: resample r's count of A[j] at r (|A| + |B|) + j, ...
            rows = np.arange(m, dtype=np.intp)[:, None]
            offsets[m] = (rows * n_ab, rows * n_ab + n_a, rows * n_all, rows * n_all + n_x)
        a_off, b_off, x_off, y_off = offsets[m]
        # Fresh arrays of this size would each be new pages from the system (a fifth of the time went to
        # page faults): the working arrays are this thread's, reused.
        ab, c, S, xi, yi, s_x, s_y = buffers(m, ix.shape[-1], iy.shape[-1])
        np.add(ia, a_off, out=ab[:, :n_a])
        np.add(ib, b_off, out=ab[:, n_a:])
        np.copyto(c, np.bincount(ab.ravel(), minlength=m * n_ab).reshape(m, n_ab), casting="unsafe")
        flat = np.matmul(c, M, out=S).ravel()             # s(w) of every target under every resample
        flat.take(np.add(ix, x_off, out=xi), out=s_x, mode="clip")     # (indices are in range by construction)
        flat.take(np.add(iy, y_off, out=yi), out=s_y, mode="clip")
        sum_x, sum_y = s_x.sum(axis=1), s_y.sum(axis=1)
        mean = ((sum_x + sum_y) / dtype(n_x + n_y))[:, None]
        np.subtract(s_x, mean, out=s_x)
        np.subtract(s_y, mean, out=s_y)
        ss = np.square(s_x, out=s_x).sum(axis=1, dtype=np.float64) + \
            np.square(s_y, out=s_y).sum(axis=1, dtype=np.float64)
        sd = np.sqrt(ss / (n_x + n_y - 1))
        diff = sum_x.astype(np.float64) / n_x - sum_y.astype(np.float64) / n_y
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.nan)

    return statistic


@dataclass(frozen=True)
class Influence:
    """The effect size with each stimulus left out: ``role[i]``, ``index[i]`` and ``d_without[i]``."""
    effect_size: float
    role: np.ndarray
    index: np.ndarray
    d_without: np.ndarray

    @property
    def delta(self) -> np.ndarray:
        return self.d_without - self.effect_size

    @property
    def d_min(self) -> float:
        return float(np.nanmin(self.d_without))

    @property
    def d_max(self) -> float:
        return float(np.nanmax(self.d_without))

    @property
    def sign_stable(self) -> bool:
        """True when no single stimulus left out changes the sign of the effect size (or zeroes it)."""
        sign = np.sign(self.effect_size)
        return bool(sign != 0 and np.all(np.sign(self.d_without) == sign))


def _drop_each(s_x: np.ndarray, s_y: np.ndarray, role: str) -> np.ndarray:
    """d with each element of X (role 'x') or Y (role 'y') left out, one row per left-out element."""
    own = s_x if role == "x" else s_y
    k = len(own)
    keep = ~np.eye(k, dtype=bool)
    reduced = np.broadcast_to(own, (k, k))[keep].reshape(k, k - 1)
    other = np.broadcast_to(s_y if role == "x" else s_x, (k, len(s_y if role == "x" else s_x)))
    return _effect_sizes(reduced, other) if role == "x" else _effect_sizes(other, reduced)


@single_threaded
def leave_one_out(X, Y, A, B) -> Influence:
    """Effect size of the test with each of its stimuli left out in turn (targets and attributes)."""
    sa, sb, n_x = _blocks(X, Y, A, B)
    mean_a, mean_b = sa.mean(axis=1), sb.mean(axis=1)
    s = mean_a - mean_b
    d = float(_effect_sizes(s[:n_x], s[n_x:]))
    parts, roles, index = [], [], []
    for role, k in (("x", n_x), ("y", sa.shape[0] - n_x)):
        if k > 1:
            parts.append(_drop_each(s[:n_x], s[n_x:], role))
            roles += [role] * k
            index += list(range(k))
    for role, block, other_mean in (("a", sa, mean_b), ("b", sb, mean_a)):
        m = block.shape[1]
        if m < 2:
            continue
        # mean over the attribute set without column j, for every target row: (m, n_x + n_y)
        without = (block.sum(axis=1)[None, :] - block.T) / (m - 1)
        s_j = without - other_mean[None, :] if role == "a" else other_mean[None, :] - without
        parts.append(_effect_sizes(s_j[:, :n_x], s_j[:, n_x:]))
        roles += [role] * m
        index += list(range(m))
    return Influence(effect_size=d, role=np.array(roles), index=np.array(index, dtype=np.int64),
                     d_without=np.concatenate(parts) if parts else np.zeros(0))
