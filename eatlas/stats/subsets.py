"""Fast uniform random k-subsets for the sampled permutation test, as bit masks.

A row of n fair random bits is a uniformly random subset of range(n) of random size; kept only when
exactly k bits are set, it is a uniformly random k-subset (every k-subset has the same probability
2^-n of being drawn, so rejection leaves the uniform distribution exact). Random bits are the
cheapest random numbers there are (one 64-bit draw covers 64 stimuli), and a chance of acceptance
of C(n, k) / 2^n, about sqrt(2 / (pi n)) for k = n/2 (11% at n = 50, 3% at n = 700), costs far less
than drawing n float keys and partitioning them. The sum of s over a subset is read from byte tables:
for each 8 stimuli, a table of the 256 sums of their s values, so a row of n bits costs n/8 look-ups.

Used by :func:`eatlas.stats.weat.null_distribution` when the acceptance is at least ``MIN_ACCEPT`` (balanced
or nearly balanced sets); otherwise the caller falls back to float keys. Reproducible from the seed:
one seeded stream, drawn in chunks whose size depends only on n.
"""
from __future__ import annotations

import math

import numpy as np

MIN_ACCEPT = 0.015           # below (very unequal sets, or n above ~2,800) float keys are faster: linear in n
_WORDS_PER_CHUNK = 1 << 20   # 8 MiB of random bits per draw, whatever n
_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)     # (256, 8)


def acceptance(n: int, k: int) -> float:
    """Chance that n fair bits have exactly k set: C(n, k) / 2^n."""
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2))


def usable(n: int, k: int) -> bool:
    return 0 < k < n and acceptance(n, k) >= MIN_ACCEPT


def _stream(seed: int) -> np.random.PCG64:
    return np.random.default_rng([int(seed), 0x5B175]).bit_generator


def _accepted(bits: np.ndarray, k: int, last: np.uint64) -> np.ndarray:
    """The rows of raw words ``bits`` (tries, words) with exactly k bits set among the first n."""
    bits[:, -1] &= last
    counts = np.bitwise_count(bits)
    if bits.shape[1] == 1:
        ones = counts[:, 0]
    else:       # column by column: a reduction along a short axis costs several times more
        ones = counts[:, 0].astype(np.uint16)
        for j in range(1, bits.shape[1]):
            ones += counts[:, j]
    return bits[ones == k]


def _chunk_bits(state: dict, first_row: int, rows: int, words: int) -> np.ndarray:
    """Rows ``first_row .. first_row + rows`` of the stream of raw words (rows of ``words`` words)
    whose generator started in ``state``: PCG64 jumps ahead, so any chunk can be drawn on its own."""
    bitgen = np.random.PCG64()
    bitgen.state = state
    bitgen.advance(first_row * words)
    return bitgen.random_raw(rows * words).reshape(rows, words)


def _mask_chunks(n: int, k: int, count: int, seed: int, work=None):
    """Accepted masks in chunks (each at most ~8 MiB of raw words), ``count`` rows in all, in stream
    order: the first ``count`` rows of the seeded stream of n-bit rows that hold exactly k ones.
    ``work(chunk_masks)``, if given, is applied to each chunk (on the worker threads when the draw
    takes more than one chunk) and its results are yielded instead, in the same order."""
    if not 0 < k < n:
        raise ValueError(f"need 0 < k < n, got k={k}, n={n}")
    words = (n + 63) // 64
    last = np.uint64((1 << (n - 64 * (words - 1))) - 1) if n % 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    tries = max(1, _WORDS_PER_CHUNK // words)
    # The rows needed, with a margin of many standard deviations; one chunk each for the worker threads
    # when that is fewer, so that a word-size draw neither draws far more than it needs nor runs alone
    expected = math.ceil(count / acceptance(n, k) * 1.02) + 64
    pool, workers = _pool() if expected > _MIN_PARALLEL_WORDS // words else (None, 1)
    if expected < tries * workers:
        tries = math.ceil(expected / workers)
    state = _stream(seed).state

    def one(c):
        keep = _accepted(_chunk_bits(state, c * tries, tries, words), k, last)
        return work(keep) if work is not None else keep

    got, c = 0, 0
    if pool is None:
        while got < count:
            out = one(c)[:count - got]
            c += 1
            got += len(out)
            if len(out):
                yield out
        return
    planned = math.ceil(expected / tries)     # beyond it, a chunk at a time (rarely needed)
    ahead = []
    try:
        while got < count:
            while len(ahead) < _AHEAD and (c < planned or not ahead):
                ahead.append(pool.submit(one, c))
                c += 1
            out = ahead.pop(0).result()
            take = min(len(out), count - got)
            got += take
            if take:
                yield out[:take]
    finally:
        for f in ahead:
            f.cancel()


_MIN_PARALLEL_WORDS = 1 << 16      # below (some 7,000 masks at n = 50), one thread draws them all
_AHEAD = 3          # chunks drawn ahead of the one being used: memory stays bounded (~3 x 8 MiB raw words)


def _pool():
    """(worker threads, their number) for the chunks of a long draw (numpy releases the GIL while drawing,
    counting bits and summing); (None, 1) on a single core."""
    from .blas import workers
    return workers()


def random_masks(n: int, k: int, count: int, seed: int) -> np.ndarray:
    """``count`` uniform random k-subsets of range(n) as bit masks: (count, ceil(n / 64)) uint64, element
    i is bit i % 64 of word i // 64."""
    chunks = list(_mask_chunks(n, k, count, seed))
    return np.concatenate(chunks) if chunks else np.empty((0, (n + 63) // 64), dtype=np.uint64)


def byte_tables(s: np.ndarray) -> np.ndarray:
    """(ceil(n / 8), 256) table: entry [b, v] is the sum of s[8b + j] over the bits j set in v."""
    s = np.asarray(s, dtype=np.float64)
    nb = (len(s) + 7) // 8
    padded = np.zeros(nb * 8)
    padded[:len(s)] = s
    return padded.reshape(nb, 8) @ _BITS.T


def masked_sums(masks: np.ndarray, s: np.ndarray, rows_per_chunk: int | None = None) -> np.ndarray:
    """Sum of s over the subset of each mask row (see :func:`random_masks`)."""
    table = byte_tables(s)
    nb = table.shape[0]
    flat = table.ravel()
    offsets = (np.arange(nb, dtype=np.intp) * 256)[None, :]
    as_bytes = masks.view(np.uint8).reshape(len(masks), -1)[:, :nb]
    if np.little_endian is False:        # pragma: no cover - bit i of a word is byte i // 8 only little-endian
        as_bytes = masks.byteswap().view(np.uint8).reshape(len(masks), -1)[:, :nb]
    out = np.empty(len(masks))
    step = rows_per_chunk or max(1, (1 << 18) // nb)
    for r0 in range(0, len(masks), step):
        idx = as_bytes[r0:r0 + step].astype(np.intp) + offsets
        out[r0:r0 + step] = flat[idx].sum(axis=1)
    return out


def sampled_sums(s: np.ndarray, k: int, count: int, seed: int) -> np.ndarray:
    """Sums of s over ``count`` uniform random k-subsets (the rows of :func:`random_masks`), drawn and
    summed chunk by chunk: memory stays bounded whatever n."""
    s = np.asarray(s, dtype=np.float64)
    out = np.empty(count)
    at = 0
    for sums in _mask_chunks(len(s), k, count, seed, work=lambda masks: masked_sums(masks, s)):
        out[at:at + len(sums)] = sums
        at += len(sums)
    return out
