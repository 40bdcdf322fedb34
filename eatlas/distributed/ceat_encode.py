"""CEAT's contexts encoded, locally or in a Ray Data actor pool, and stored as parquet.

The contexts sampled by ``ceat_corpus`` (from shards, or from one local file) become one table, a
row per (stimulus, context): stimulus, case_sensitive, rank (its place in the stimulus's sample, the
order CEAT draws from), priority (the bottom-k hash), line_hash, text, start, end. Their contextual-word
vectors are computed

* locally (``engine="local"``): by the encoder already loaded, one ``encode_spans`` call over every
  context, so a line holding several stimuli is encoded once;
* on Ray (``engine="ray"``): ``Dataset.map_batches`` with the callable class :class:`ContextEncoder`
  on an actor pool (``ray.data.ActorPoolStrategy``); each actor loads the model once from an
  :class:`EncoderSpec` (a registered model id or a folder every worker can read), one GPU per actor
  where the cluster has GPUs, else one CPU each. Rows are sorted by text first, so a line holding
  several stimuli mostly falls in one batch and is encoded once there too.

Either way the vectors come back to the driver as ``encoded``: (stimulus, case_sensitive) -> (n, d)
float32 matrix in sample order (NaN rows: the model could not encode that span), which
``eatlas.methods.ceat.run_ceat(..., encoded=...)`` uses instead of encoding. The table and its vectors
(``list<float32>``, null where not encodable) are written as ``contexts.parquet`` into a folder (default
``ceat-contexts/<run id>`` beside the database) through :mod:`eatlas.guard`, so no file eatlas did
not write is ever replaced, before the run is stored; a failed store removes it again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import EatlasError
from .cluster import ray_session

FILE = "contexts.parquet"
ROWS_PER_BATCH = 512        # contexts per Ray Data batch (the encoder batches again by --batch-size inside)


@dataclasses.dataclass(frozen=True)
class EncoderSpec:
    """What a worker needs to load the run's encoder itself (picklable; the model must be readable there)."""
    model: str | None
    pooling: str | None = None
    layer: str | int | None = None
    subword: str | None = None
    batch_size: int = 64
    trust_remote_code: bool = False
    family: str | None = None
    offline: bool = False           # a hub model: from the worker's Hugging Face cache only (--offline)

    def load(self):
        from ..encoders import load_encoder
        return load_encoder(self.model, pooling=self.pooling, layer=self.layer, subword=self.subword,
                            batch_size=self.batch_size, trust_remote_code=self.trust_remote_code, family=self.family,
                            offline=self.offline)


def line_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def context_table(contexts: dict) -> pa.Table:
    """One row per sampled context, keys in sorted order and each key's hits in sample (rank) order."""
    cols = {c: [] for c in ("stimulus", "case_sensitive", "rank", "priority", "line_hash", "text", "start", "end")}
    for (stim, cs) in sorted(contexts, key=lambda k: (k[0], k[1])):
        for rank, (prio, text, start, end) in enumerate(contexts[(stim, cs)]):
            for c, v in zip(cols, (stim, bool(cs), rank, int(prio), line_hash(text), text, int(start), int(end))):
                cols[c].append(v)
    return pa.table({"stimulus": pa.array(cols["stimulus"], pa.string()),
                     "case_sensitive": pa.array(cols["case_sensitive"], pa.bool_()),
                     "rank": pa.array(cols["rank"], pa.int32()),
                     "priority": pa.array(cols["priority"], pa.uint64()),
                     "line_hash": pa.array(cols["line_hash"], pa.string()),
                     "text": pa.array(cols["text"], pa.string()),
                     "start": pa.array(cols["start"], pa.int32()),
                     "end": pa.array(cols["end"], pa.int32())})


def _vectors_column(vectors: np.ndarray, missing: np.ndarray) -> pa.Array:
    """(n, d) float32 -> list<float32>, null where the span could not be encoded."""
    n, d = vectors.shape
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), pa.float32())
    offsets = pa.array(np.arange(0, (n + 1) * d, d, dtype=np.int32)) if d else pa.array(np.zeros(n + 1, np.int32))
    return pa.ListArray.from_arrays(offsets, flat, mask=pa.array(np.asarray(missing, bool)))


def _encode(encoder, texts: list[str], starts, ends) -> tuple[np.ndarray, np.ndarray]:
    r = encoder.encode_spans(texts, [(int(a), int(b)) for a, b in zip(starts, ends)])
    vec = np.asarray(r.vectors, dtype=np.float32)
    return vec, np.asarray(r.missing, bool) | ~np.isfinite(vec).all(axis=1)


class ContextEncoder:
    """The Ray Data callable class: one model per actor, a batch of contexts in, their vectors out.

    A model that cannot load or encode here is reported in the rows' ``error`` column (with this worker's
    host) rather than raised, so the driver stops with that one line instead of Ray's actor traceback."""

    def __init__(self, spec: EncoderSpec):
        self.encoder, self.error = None, None
        try:
            self.encoder = spec.load()
        except Exception as e:      # noqa: BLE001 - reported to the driver, which raises it
            self.error = _one_line(e)
            return
        threads = _assigned_cpus()
        if threads and getattr(self.encoder, "device", "cpu") == "cpu":
            import torch
            torch.set_num_threads(threads)    # the CPUs Ray gave this actor, not the whole machine's

    def __call__(self, batch: pa.Table) -> pa.Table:
        n, error = batch.num_rows, self.error
        if error is None:
            try:
                vec, missing = _encode(self.encoder, batch.column("text").to_pylist(),
                                       batch.column("start").to_pylist(), batch.column("end").to_pylist())
                return pa.table({"i": batch.column("i"), "vector": _vectors_column(vec, missing),
                                 "fingerprint": pa.array([self.encoder.fingerprint] * n, pa.string()),
                                 "error": pa.nulls(n, pa.string())})
            except Exception as e:  # noqa: BLE001 - e.g. out of GPU memory: reported to the driver
                error = _one_line(e)
        import socket
        return pa.table({"i": batch.column("i"), "vector": pa.nulls(n, pa.list_(pa.float32())),
                         "fingerprint": pa.nulls(n, pa.string()),
                         "error": pa.array([f"on {socket.gethostname()}: {error}"] * n, pa.string())})


def _one_line(e: BaseException) -> str:
    if isinstance(e, EatlasError):
        return e.render()
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def _assigned_cpus() -> int | None:
    try:
        import ray
        n = ray.get_runtime_context().get_assigned_resources().get("CPU")
        return max(1, int(n)) if n else None
    except Exception:       # not inside a Ray worker
        return None


def _ray_vectors(table: pa.Table, spec: EncoderSpec, address: str | None, fingerprint: str) -> pa.Array:
    """The vectors of ``table``'s contexts, computed by an actor pool, in ``table``'s row order."""
    n = table.num_rows
    work = table.select(["text", "start", "end"]).append_column("i", pa.array(np.arange(n, dtype=np.int64)))
    work = work.sort_by([("text", "ascending"), ("i", "ascending")])
    with ray_session(address) as ray:
        import ray.data

        res = ray.cluster_resources()
        gpus, cpus = int(res.get("GPU", 0)), max(1, int(res.get("CPU", 1)))
        size = max(1, min(gpus if gpus else cpus, -(-n // ROWS_PER_BATCH)))
        blocks = [work.slice(a, ROWS_PER_BATCH) for a in range(0, n, ROWS_PER_BATCH)]
        ds = ray.data.from_arrow(blocks).map_batches(
            ContextEncoder, fn_constructor_kwargs={"spec": spec}, batch_size=ROWS_PER_BATCH, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=size), num_gpus=1 if gpus else 0,
            num_cpus=0 if gpus else 1, udf_modifying_row_count=False)
        try:
            parts = list(ds.iter_batches(batch_size=None, batch_format="pyarrow"))
        except Exception as e:          # an actor that died (killed, out of memory), a lost node, ...
            raise EatlasError(f"encoding the contexts on Ray failed: {_one_line(e)}", field="--engine",
                              hint="nothing was written") from None
    hint = f"every Ray worker must be able to load {spec.model!r}; nothing was written"
    if not parts:
        raise EatlasError(f"Ray returned no vectors for {n} contexts", hint="nothing was written")
    out = pa.concat_tables(parts)
    errors = [x for x in out.column("error").to_pylist() if x is not None]
    if errors:
        raise EatlasError(f"encoding the contexts on Ray failed {errors[0]}", field="--model", hint=hint)
    prints = set(out.column("fingerprint").to_pylist())
    if prints - {fingerprint}:
        raise EatlasError(f"a Ray worker loaded other weights for {spec.model!r} ({', '.join(sorted(prints))}; "
                          f"here {fingerprint})", field="--model", hint=hint)
    out = out.sort_by("i")
    if out.num_rows != n or out.column("i").to_pylist() != list(range(n)):
        raise EatlasError(f"Ray returned {out.num_rows} vectors for {n} contexts", hint="nothing was written")
    return out.column("vector").combine_chunks()


def encode_contexts(contexts: dict, encoder, *, engine: str = "local", spec: EncoderSpec | None = None,
                    ray_address: str | None = None) -> tuple[dict, pa.Table]:
    """Every sampled context's vector: (encoded for ``run_ceat``, the context table with its vector column)."""
    table = context_table(contexts)
    if engine == "ray" and table.num_rows:
        vectors = _ray_vectors(table, spec, ray_address, encoder.fingerprint)
    else:
        vec, missing = _encode(encoder, table.column("text").to_pylist(), table.column("start").to_pylist(),
                               table.column("end").to_pylist()) if table.num_rows else \
            (np.zeros((0, 0), np.float32), np.zeros(0, bool))
        vectors = _vectors_column(vec, missing)
    table = table.append_column("vector", vectors)
    return matrices(table), table


def matrices(table: pa.Table) -> dict:
    """(stimulus, case_sensitive) -> (n, d) float32 in rank order; NaN rows where the vector is null."""
    vec = table.column("vector").combine_chunks() if table.num_rows else None
    dims = {len(v) for v in (vec.to_pylist() if vec is not None else []) if v is not None}
    d = max(dims or {1})
    if len(dims) > 1:
        raise EatlasError(f"contexts were encoded with different dimensions ({sorted(dims)})")
    full = np.full((table.num_rows, d), np.nan, np.float32)
    if table.num_rows:
        valid = np.asarray(vec.is_valid())
        if valid.any():
            full[valid] = np.asarray(vec.filter(pa.array(valid)).flatten(), np.float32).reshape(-1, d)
    out: dict = {}
    stim, cs = table.column("stimulus").to_pylist(), table.column("case_sensitive").to_pylist()
    rank = np.asarray(table.column("rank"))
    for i, key in enumerate(zip(stim, cs)):
        out.setdefault(key, []).append(i)
    return {k: full[np.asarray(rows)[np.argsort(rank[rows], kind="stable")]] for k, rows in out.items()}


# ------------------------------------------------------------------------------------------ the run
class ContextsFile:
    """The parquet written for one run; ``discard`` removes it when the run could not be stored."""

    def __init__(self, outputs, path: Path):
        self.outputs, self.path = outputs, path

    def discard(self) -> None:
        self.outputs.forget(FILE)
        self.outputs.save()


def contexts_folder(out: str | Path | None, db: str | Path, run_id: str) -> Path:
    return Path(out) if out else Path(db).parent / "ceat-contexts" / run_id[:8]


def check_output(out: str | Path | None, db: str | Path) -> None:
    """Refuse at once (before any work) a --contexts-out whose contexts.parquet eatlas may not write."""
    if out:
        from ..guard import Outputs
        Outputs(out, db=db, what="CEAT contexts").check(FILE)


def sample_and_encode(encoder, reg, test_ids: list[str], corpus: list[str] | None, *, contexts: dict | None = None,
                      corpus_lines: int | None = None, engine: str = "local", spec: EncoderSpec | None = None,
                      ray_address: str | None = None, max_contexts: int = 1000, seed: int = 0,
                      case_sensitive: bool | None = None) -> tuple[dict, dict, pa.Table, int]:
    """The contexts (``contexts``, the sample already taken by ``ceat_corpus.corpus_contexts``, or else
    ``corpus``'s lines sampled here with the same sampler) and their vectors, encoded here or on Ray:
    (contexts, encoded, the context table with its vector column, lines read)."""
    from .ceat_corpus import ceat_keys, scan_lines

    if contexts is None:
        keys = ceat_keys(reg, test_ids, case_sensitive, seed=seed)
        contexts = scan_lines(corpus or [], keys, max_contexts, seed)[0]
        corpus_lines = len(corpus or [])
    encoded, table = encode_contexts(contexts, encoder, engine=engine, spec=spec, ray_address=ray_address)
    return contexts, encoded, table, corpus_lines


def write_contexts(table: pa.Table, run: dict, *, out: str | Path | None, db: str | Path, engine: str) -> ContextsFile:
    """``contexts.parquet`` of a run (its contexts and vectors) in ``out`` or ``ceat-contexts/<run id>`` beside
    the database, through eatlas.guard; ``run['settings']`` records where."""
    import pyarrow.parquet as pq

    from ..guard import Outputs

    folder = contexts_folder(out, db, run["run_id"])
    table = table.add_column(0, "run_id", pa.array([run["run_id"]] * table.num_rows, pa.string()))
    st = run["settings"]
    table = table.replace_schema_metadata({
        "eatlas.run_id": run["run_id"], "eatlas.model": str(run["model"]),
        "eatlas.fingerprint": str(run["model_fingerprint"]), "eatlas.pooling": str(run["pooling"]),
        "eatlas.layer": str(run["layer"]), "eatlas.subword": str(run["subword"]), "eatlas.seed": str(run["seed"]),
        "eatlas.max_contexts": str(st.get("max_contexts")), "eatlas.encoded_on": engine})
    outputs = Outputs(folder, db=db, what="CEAT contexts")
    path = outputs.write(FILE, lambda tmp: pq.write_table(table, tmp))
    run["settings"] = {**st, "contexts_parquet": str(path), "contexts_encoded_on": engine}
    return ContextsFile(outputs, path)
