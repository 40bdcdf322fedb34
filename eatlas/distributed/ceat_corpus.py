"""CEAT contexts at corpus scale: one multi-pattern pass per shard and a mergeable sample.

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

import contextlib
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
# One reader for a shard, whether a corpus is one file or many, local or on Ray. A shard is what it
# holds: plain text (a line a context), JSON Lines (every line an object with a string "text", or
# --corpus-column), parquet (a string "text" column, or --corpus-column); text and JSON Lines may be
# compressed (gzip by its magic bytes or .gz; .bz2, .xz, .zst by suffix). Anything else is one line naming the
# shard and the line or the column.
COMPRESSED = (".gz", ".bz2", ".xz", ".zst")
JSONL = (".jsonl", ".ndjson", ".json")
GZIP_MAGIC, PARQUET_MAGIC = b"\x1f\x8b", b"PAR1"


def shard_kind(path: str) -> tuple[str, str | None]:
    """(kind, compression) of a shard: kind 'parquet', 'jsonl' or 'text', by its name (after a compression
    suffix) and, for a local file, its first bytes (gzip or parquet whatever its name says)."""
    name = path.rsplit("/", 1)[-1].lower()
    comp = next((c for c in COMPRESSED if name.endswith(c)), None)
    base = name[: -len(comp)] if comp else name
    if comp is None and "://" not in path:
        try:
            with open(path, "rb") as f:
                head = f.read(4)
        except OSError:
            head = b""
        if head.startswith(GZIP_MAGIC):
            comp = ".gz"
        elif head == PARQUET_MAGIC:
            return "parquet", None
    codec = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}.get(comp) if comp else None
    if base.endswith(".parquet"):
        if comp:
            raise EatlasError(f"a parquet file compressed as a whole ({comp})", file=path, field="--corpus",
                              hint="decompress it: parquet compresses its own columns")
        return "parquet", None
    return ("jsonl" if base.endswith(JSONL) else "text"), codec


def shard_lines(path: str, column: str | None = None) -> Iterator[str]:
    """The texts of one shard (see above): a local path or any fsspec URL. An unreadable shard, a line or a
    column that is not what its kind needs, is an EatlasError naming the shard and where."""
    import fsspec

    kind, codec = shard_kind(path)
    if kind == "parquet":
        yield from _parquet_texts(path, column)
        return
    with fsspec.open(path, "rb", compression=codec) as f:
        lines = _text_lines(f, path)
        if kind == "text":
            yield from (text for _, text in lines)
        else:
            yield from _jsonl_texts(lines, path, column or "text")


def _text_lines(f, path: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of a binary stream: UTF-8 (a leading BOM dropped), lines ended by LF, CRLF or CR."""
    for n, raw in enumerate(f, 1):
        try:
            text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise EatlasError(f"line {n} is not UTF-8 (byte {e.start + 1} of the line)", file=path,
                              field="--corpus", hint="save the corpus as UTF-8") from None
        text = text[:-1] if text.endswith("\n") else text
        text = text[:-1] if text.endswith("\r") else text         # CRLF
        # a lone CR ends a line too (old Mac files), as Python's text mode reads them
        yield from ((n, piece) for piece in text.split("\r")) if "\r" in text else ((n, text),)


def _jsonl_texts(lines: Iterable[tuple[int, str]], path: str, col: str) -> Iterator[str]:
    import json

    for n, line in lines:
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except RecursionError:
            raise EatlasError(f"line {n} is JSON nested too deeply", file=path, field="--corpus",
                              hint=f"every line must be a JSON object with a string {col!r}") from None
        except ValueError:
            raise EatlasError(f"line {n} is not valid JSON", file=path, field="--corpus",
                              hint=f"every line must be a JSON object with a string {col!r}") from None
        if not isinstance(doc, dict):
            raise EatlasError(f"line {n} is a JSON {_json_type(doc)}, not an object", file=path, field="--corpus",
                              hint=f"every line must be a JSON object with a string {col!r}")
        if col not in doc:
            keys = ", ".join(map(str, list(doc)[:8])) or "none"
            raise EatlasError(f"line {n} has no key {col!r}", file=path, field="--corpus-column",
                              hint=f"its keys: {keys}; name the text's key with --corpus-column")
        v = doc[col]
        if v is None:
            continue            # null: no text on this line (as a null in a parquet column)
        if not isinstance(v, str):
            raise EatlasError(f"line {n}: {col!r} is a JSON {_json_type(v)}, not a string", file=path,
                              field="--corpus-column", hint=f"every line's {col!r} must be a string")
        yield v


def _json_type(v) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"
            }.get(type(v), type(v).__name__)


def _parquet_texts(path: str, column: str | None) -> Iterator[str]:
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    col = column or "text"
    with fsspec.open(path, "rb") as f:
        try:
            pf = pq.ParquetFile(f)
            schema = pf.schema_arrow
        except (pa.ArrowException, OSError, ValueError):
            raise EatlasError("not a readable parquet file (cut short or damaged)", file=path, field="--corpus",
                              hint="write the shard again") from None
        if col not in schema.names:
            raise EatlasError(f"no column {col!r} in the shard", file=path, field="--corpus-column",
                              hint=f"columns: {', '.join(schema.names)}")
        typ = schema.field(col).type
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
            raise EatlasError(f"column {col!r} holds {typ}, not text", file=path, field="--corpus-column",
                              hint="name a column of strings with --corpus-column")
        try:
            for batch in pf.iter_batches(columns=[col], batch_size=65536):
                yield from (x for x in batch.column(0).to_pylist() if x is not None)
        except (pa.ArrowException, OSError, ValueError):
            raise EatlasError("not a readable parquet file (cut short or damaged)", file=path, field="--corpus",
                              hint="write the shard again") from None


SAY = "cannot read corpus shard: "


@contextlib.contextmanager
def shard_errors(path: str):
    """Whatever reading a shard raises becomes one EatlasError naming the shard."""
    import zlib

    try:
        yield
    except EatlasError as e:
        if e.message.startswith(SAY):
            raise
        raise EatlasError(SAY + e.message, file=e.file, obj=e.obj, field=e.field, hint=e.hint) from None
    except (EOFError, zlib.error) as e:
        raise EatlasError(f"{SAY}the compressed shard is cut short or damaged ({type(e).__name__})", file=path,
                          field="--corpus", hint="compress it again") from None
    except (OSError, UnicodeDecodeError, ValueError, TypeError, RecursionError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise EatlasError(f"{SAY}{type(e).__name__}: {first[:200]}", file=path,
                          field="--corpus") from None


def read_shard(path: str, column: str | None = None) -> list[str]:
    """Every text of one shard (:func:`shard_lines`), errors as :func:`shard_errors` says them."""
    with shard_errors(path):
        return list(shard_lines(path, column))


def scan_shard(path: str, keys: list[Key], k: int | None, seed: int, column: str | None = None):
    """``scan_lines`` over one shard; an unreadable shard is an EatlasError naming it (and the line or column)."""
    with shard_errors(path):
        return scan_lines(shard_lines(path, column), keys, k, seed)


def corpus_contexts(paths: list[str], keys: list[Key], k: int | None, seed: int, *, column: str | None = None,
                    engine: str = "local", ray_address: str | None = None) -> tuple[dict[Key, list[Hit]], int]:
    """Every shard scanned (locally, or one Ray Data task per shard) and merged: key -> hits, lines read."""
    paths = [str(p) for p in paths]
    for p in paths:
        if "://" not in p and Path(p).is_dir():
            raise EatlasError("a folder among corpus shards", file=p, field="--corpus",
                              hint="a dataset saved with save_to_disk is read alone, with --engine local; "
                                   "else name the shard files")
        if "://" not in p and not Path(p).is_file():
            raise EatlasError("corpus shard not found", file=p, field="--corpus")
    if engine == "local":
        parts = [scan_shard(p, keys, k, seed, column) for p in paths]
        return merge((s for s, _ in parts), k), sum(n for _, n in parts)
    return _ray_contexts(paths, keys, k, seed, column, ray_address)


def _ray_contexts(paths, keys, k, seed, column, address):
    with ray_session(address) as ray:

        def scan(row: dict) -> list[dict]:
            import json

            try:
                sample, n = scan_shard(row["shard"], keys, k, seed, column)
            except Exception as e:      # noqa: BLE001 - every failure goes back to the driver as one line
                err = e if isinstance(e, EatlasError) else EatlasError(f"{SAY}{type(e).__name__}: {e}"[:300])
                said = json.dumps({"message": err.message, "field": err.field, "hint": err.hint})
                return [{"shard": row["shard"], "error": said, "stimulus": None, "case_sensitive": None,
                         "priority": None, "text": None, "start": None, "end": None, "lines": None}]
            rows = [{"shard": row["shard"], "error": None, "stimulus": None, "case_sensitive": None,
                     "priority": None, "text": None, "start": None, "end": None, "lines": n}]
            for (stim, cs), hits in sample.items():
                rows += [{"shard": row["shard"], "error": None, "stimulus": stim, "case_sensitive": cs,
                          "priority": str(p), "text": t, "start": s, "end": e, "lines": None}
                         for p, t, s, e in hits]
            return rows

        ds = ray.data.from_items([{"shard": p} for p in paths], override_num_blocks=len(paths))
        try:
            rows = ds.flat_map(scan, num_cpus=1).take_all()
        except Exception as e:      # a worker that died, a lost node: one line, not Ray's traceback
            first = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
            raise EatlasError(f"scanning the corpus shards on Ray failed: {type(e).__name__}: "
                              f"{first[0][:200] if first else ''}", field="--engine",
                              hint="nothing was written") from None
    errors = [r for r in rows if r["error"]]
    if errors:
        import json
        said = json.loads(errors[0]["error"])
        raise EatlasError(said["message"], file=errors[0]["shard"], field=said["field"],
                          hint="; ".join(h for h in (said["hint"], "nothing was written") if h))
    parts: dict[str, dict] = {}
    for r in rows:
        if r["stimulus"] is not None:
            parts.setdefault(r["shard"], {}).setdefault((r["stimulus"], bool(r["case_sensitive"])), []).append(
                (int(r["priority"]), r["text"], int(r["start"]), int(r["end"])))
    return merge(parts.values(), k), sum(r["lines"] or 0 for r in rows)
