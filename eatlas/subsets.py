"""Fast uniform random k-subsets for the sampled permutation test, as bit masks.

A row of n fair random bits is a uniformly random subset of range(n) of random size; kept only when
exactly k bits are set, it is a uniformly random k-subset (every k-subset has the same probability
2^-n of being drawn, so rejection leaves the uniform distribution exact). Random bits are the
cheapest random numbers there are (one 64-bit draw covers 64 stimuli), and a chance of acceptance
of C(n, k) / 2^n, about sqrt(2 / (pi n)) for k = n/2 (11% at n = 50, 3% at n = 700), costs far less
than drawing n float keys and partitioning them. The sum of s over a subset is read from byte tables:
for each 8 stimuli, a table of the 256 sums of their s values, so a row of n bits costs n/8 look-ups.

Used by :func:`eatlas.weat.null_distribution` when the acceptance is at least ``MIN_ACCEPT`` (balanced
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


def _mask_chunks(n: int, k: int, count: int, seed: int):
    """Accepted masks in chunks (each at most ~8 MiB), ``count`` rows in all, in stream order."""
    if not 0 < k < n:
        raise ValueError(f"need 0 < k < n, got k={k}, n={n}")
    words = (n + 63) // 64
    last = np.uint64((1 << (n - 64 * (words - 1))) - 1) if n % 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    bitgen = np.random.default_rng([int(seed), 0x5B175]).bit_generator
    tries = max(1, _WORDS_PER_CHUNK // words)
    got = 0
    while got < count:
        bits = bitgen.random_raw(tries * words).reshape(tries, words)     # uniform 64-bit words
        bits[:, -1] &= last
        ones = np.bitwise_count(bits).sum(axis=1, dtype=np.int64) if words > 1 else np.bitwise_count(bits[:, 0])
        keep = bits[ones == k][:count - got]
        got += len(keep)
        if len(keep):
            yield keep


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
    for masks in _mask_chunks(len(s), k, count, seed):
        out[at:at + len(masks)] = masked_sums(masks, s)
        at += len(masks)
    return out
