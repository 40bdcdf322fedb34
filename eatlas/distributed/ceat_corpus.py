"""CEAT contexts at corpus scale (issue 14): one multi-pattern pass per shard and a mergeable sample.

``scan_lines`` finds every stimulus's whole-word occurrences in a shard's lines in one pass: one regular
expression of every stimulus's first word (tried at every position, so overlapping needles are all
seen) names the candidate stimuli of a line, and only their own patterns (``ceat._pattern``: the
matching rules of ``ceat.find_contexts``) run on it.

Sampling is a bottom-k sample: each occurrence gets a priority, a 64-bit BLAKE2b hash of (seed, stimulus,
context text, offset), and a stimulus keeps the k occurrences of smallest priority. A uniform sample
without replacement, it merges exactly (the k smallest of the union of two shards' samples are the k
smallest of the whole), and since a priority depends on what the context is and not on where it lies,
the N contexts per stimulus are the same whatever the sharding, the order of the shards, or the number
of Ray tasks. (Seeding by the shard would make the sample change when a corpus is split differently.)
The local path (``eatlas.methods.ceat.run_ceat``) uses the same sampler, so both give the same CES.
"""
from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import EatlasError
from ..stats.ceat import _pattern
from .cluster import ray_session

Key = tuple[str, bool]          # (stimulus, case_sensitive)
Hit = tuple[int, str, int, int]  # (priority, context text, start, end)


def priority(seed: int, stimulus: str, text: str, start: int) -> int:
    h = hashlib.blake2b(f"{seed}\x1f{stimulus}\x1f{start}\x1f{text}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big")


class Matcher:
    """Every (stimulus, case_sensitive) key's occurrences in a line, with one prefilter pass."""

    def __init__(self, keys: Iterable[Key]):
        self.keys = list(dict.fromkeys(keys))
        self.pats = {k: _pattern(k[0], k[1]) for k in self.keys}
        by_needle: dict[str, list[Key]] = {}
        for k in self.keys:
            by_needle.setdefault(k[0].split()[0].casefold(), []).append(k)
        needles = sorted(by_needle, key=len, reverse=True)
        # A longer needle found at a position hides the shorter ones starting there: keep them all.
        self.at = {n: [k for m in needles if n.startswith(m) for k in by_needle[m]] for n in needles}
        # Tried only where a stimulus may start (the lookbehind of ceat._pattern), as a trie of alternatives.
        self.pre = re.compile(r"(?<![\w-])(?=(" + _trie(needles) + "))", re.IGNORECASE) if needles else None

    def find(self, line: str) -> Iterator[tuple[Key, int, int]]:
        if self.pre is None:
            return
        cands = {}
        for m in self.pre.finditer(line):
            for k in self.at.get(m.group(1).casefold(), ()):
                cands[k] = None
        for k in cands:
            for m in self.pats[k].finditer(line):
                yield k, m.start(), m.end()


def _trie(words: list[str]) -> str:
    """A regular expression matching any of ``words``, factored by common prefixes (the longest first)."""
    tree: dict = {}
    for w in words:
        node = tree
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def walk(node: dict) -> str:
        alts = [re.escape(ch) + walk(child) for ch, child in sorted(node.items(), key=lambda kv: kv[0]) if ch]
        end = "" in node
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if end else body
    return walk(tree)


def scan_lines(lines: Iterable[str], keys: Iterable[Key], k: int | None, seed: int,
               matcher: Matcher | None = None) -> tuple[dict[Key, list[Hit]], int]:
    """One shard: each key's sample (at most ``k`` hits, smallest priorities; None: every hit) and the
    number of lines read."""
    matcher = matcher or Matcher(keys)
    heaps: dict[Key, list] = {key: [] for key in matcher.keys}
    n = 0
    for line in lines:
        n += 1
        for key, s, e in matcher.find(line):
            item = (-priority(seed, key[0], line, s), line, s, e)
            h = heaps[key]
            if k is None or len(h) < k:
                heapq.heappush(h, item)
            elif item > h[0]:
                heapq.heapreplace(h, item)
    return {key: sorted((-p, t, s, e) for p, t, s, e in h) for key, h in heaps.items()}, n


def merge(parts: Iterable[dict[Key, list[Hit]]], k: int | None) -> dict[Key, list[Hit]]:
    """The sample of the union of shards from each shard's sample (associative and commutative)."""
    out: dict[Key, list[Hit]] = {}
    for part in parts:
        for key, hits in part.items():
            both = out.get(key, []) + list(hits)
            out[key] = sorted(both) if k is None else heapq.nsmallest(k, both)
    return out


# ------------------------------------------------------------------------------------------ a run's stimuli
def _case_sensitive(reg, concept, case_sensitive: bool | None) -> bool:
    if case_sensitive is not None:
        return case_sensitive
    return reg.get_set(concept.set_ref).raw.get("case_sensitive", True) is not False


def ceat_keys(reg, test_ids: list[str], case_sensitive: bool | None = None, seed: int = 0
              ) -> list[tuple[str, bool]]:
    """The (stimulus, case_sensitive) pairs whose contexts a CEAT run of ``test_ids`` looks for."""
    from ..registry.stimuli import build_test

    keys = []
    for tid in test_ids:
        t = build_test(reg, reg.get_test_spec(tid), "word", seed=seed)
        for c in t.concepts.values():
            cs = _case_sensitive(reg, c, case_sensitive)
            keys += [(s, cs) for s in c.items]
    return list(dict.fromkeys(keys))


# ------------------------------------------------------------------------------------------ shards
def shard_lines(path: str, column: str | None = None) -> Iterator[str]:
    """The text lines of one shard: a text file (one line each), JSON Lines (``column`` or "text") or parquet
    (``column`` or "text"); a local path or any fsspec URL; .gz/.bz2/.zst text decompressed by suffix."""
    import fsspec

    name = path.rsplit("/", 1)[-1]
    base = re.sub(r"\.(gz|bz2|xz|zst)$", "", name)
    if base.endswith(".parquet"):
        import pyarrow.parquet as pq
        with fsspec.open(path, "rb") as f:
            pf = pq.ParquetFile(f)
            names = pf.schema_arrow.names
            col = column or "text"
            if col not in names:
                raise EatlasError(f"no column {col!r} in the shard", file=path, field="--corpus-column",
                                  hint=f"columns: {', '.join(names)}")
            for batch in pf.iter_batches(columns=[col], batch_size=65536):
                yield from (x for x in batch.column(0).to_pylist() if x is not None)
        return
    with fsspec.open(path, "rt", encoding="utf-8", compression="infer") as f:
        if base.endswith((".jsonl", ".ndjson")):
            import json
            col = column or "text"
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    v = json.loads(line).get(col)
                except (ValueError, AttributeError):
                    raise EatlasError(f"line {i} is not a JSON object", file=path) from None
                if v is not None:
                    yield str(v)
        else:
            for line in f:
                yield line.rstrip("\n").rstrip("\r")


def scan_shard(path: str, keys: list[Key], k: int | None, seed: int, column: str | None = None):
    """``scan_lines`` over one shard; an unreadable shard is an EatlasError naming it."""
    try:
        return scan_lines(shard_lines(path, column), keys, k, seed)
    except EatlasError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise EatlasError(f"cannot read corpus shard: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                          file=path) from None


def corpus_contexts(paths: list[str], keys: list[Key], k: int | None, seed: int, *, column: str | None = None,
                    engine: str = "local", ray_address: str | None = None) -> tuple[dict[Key, list[Hit]], int]:
    """Every shard scanned (locally, or one Ray Data task per shard) and merged: key -> hits, lines read."""
    paths = [str(p) for p in paths]
    for p in paths:
        if "://" not in p and not Path(p).is_file():
            raise EatlasError("corpus shard not found", file=p, field="--corpus")
    if engine == "local":
        parts = [scan_shard(p, keys, k, seed, column) for p in paths]
        return merge((s for s, _ in parts), k), sum(n for _, n in parts)
    return _ray_contexts(paths, keys, k, seed, column, ray_address)


def _ray_contexts(paths, keys, k, seed, column, address):
    with ray_session(address) as ray:

        def scan(row: dict) -> list[dict]:
            try:
                sample, n = scan_shard(row["shard"], keys, k, seed, column)
            except EatlasError as e:
                return [{"shard": row["shard"], "error": e.render(), "stimulus": None, "case_sensitive": None,
                         "priority": None, "text": None, "start": None, "end": None, "lines": None}]
            rows = [{"shard": row["shard"], "error": None, "stimulus": None, "case_sensitive": None,
                     "priority": None, "text": None, "start": None, "end": None, "lines": n}]
            for (stim, cs), hits in sample.items():
                rows += [{"shard": row["shard"], "error": None, "stimulus": stim, "case_sensitive": cs,
                          "priority": str(p), "text": t, "start": s, "end": e, "lines": None}
                         for p, t, s, e in hits]
            return rows

        ds = ray.data.from_items([{"shard": p} for p in paths], override_num_blocks=len(paths))
        rows = ds.flat_map(scan, num_cpus=1).take_all()
    errors = [r for r in rows if r["error"]]
    if errors:
        raise EatlasError(errors[0]["error"].split(": ", 1)[-1], file=errors[0]["shard"],
                          hint="nothing was written")
    parts: dict[str, dict] = {}
    for r in rows:
        if r["stimulus"] is not None:
            parts.setdefault(r["shard"], {}).setdefault((r["stimulus"], bool(r["case_sensitive"])), []).append(
                (int(r["priority"]), r["text"], int(r["start"]), int(r["end"])))
    return merge(parts.values(), k), sum(r["lines"] or 0 for r in rows)
