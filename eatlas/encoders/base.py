"""The encoder interface every backend implements, and what identifies a model's weights.

``Encoder.cache_key(mode)`` names everything that decides a vector, for ``eatlas.encoders.cache``.
``Backend``: a kind of model (transformers, sentence-transformers, static vectors) that EATlas can
load, from a loader entry (``loaders/*.yaml``, field ``backend``) or from a local path it
recognises; backends register with ``@register_backend`` (eatlas.encoders.hf, eatlas.encoders.static).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def entry_installed(entry: dict) -> bool:
    w = entry.get("weights", {})
    if "hub" in w:                      # a hub model: installed when its revision is in the Hugging Face cache
        from .hub import cached
        return cached(w["hub"], w.get("revision")) is not None
    base = _package_dir(w["module"]) if "module" in w else None
    if base is None:
        return False
    rel = w.get("path") or w.get("vectors") or w.get("keyed_vectors") or w.get("word2vec")
    return (base / rel).exists() if rel else True


def _pkg_version(pypi: str | None) -> str | None:
    if not pypi:
        return None
    name = pypi.split("==")[0]
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None




ENCODER_VERSION = 2   # bump when a change to this file changes any vector (invalidates the cache)


# A stimulus is unknown to the tokenizer when more than this share of its tokens is the unknown token
# (docs/methods.md, "Tokenizer coverage"): all of them for a WordPiece vocabulary, which maps a word with
# one character it lacks to a single [UNK]; most of them for a SentencePiece one. Every subword backend
# drops such a stimulus with this reason, as a static model drops an out-of-vocabulary word.
UNKNOWN_SHARE = 0.5
UNKNOWN_TO_TOKENIZER = "unknown to the tokenizer"

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
    family_source: str | None = None    # loader | fingerprint | user | unknown (eatlas.encoders.identity)
    entry: str | None = None            # the registered model id it is (by id or by its weights)
    identity: dict = field(default_factory=dict)   # name, size, corpus of that entry
    languages: list[str] | None = None  # the languages the model declares (loader entry, model card); None: unstated
    model_config: dict | None = None    # a transformers model's config facts a paper can state (runs.model_config)
    # a Hugging Face hub model (eatlas.encoders.hub): the id as given, the revision asked for (None: the default
    # branch), the commit it resolved to, weight file -> sha256 (runs.model_hub_id .. model_weights_sha256)
    model_hub_id: str | None = None
    model_revision: str | None = None
    model_commit: str | None = None
    model_weights_sha256: dict | None = None
    encoding: str = "standard"          # standard, or a paper's own encoding (eatlas.encoders.authors; --encoding)
    uncovered_reason: ClassVar[str | None] = None   # why covers() says no, recorded with the dropped stimulus

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

    def coverage_key(self) -> dict | None:
        """Everything that decides ``covers``, for the embedding cache (None: never cached, e.g. a static
        vocabulary, which is in memory anyway): a run whose vectors are all cached then loads nothing."""
        return None

    def same_input(self, a: str, b: str) -> str | None:
        """Why the model cannot tell stimuli ``a`` and ``b`` apart, when it can say (None: it cannot say)."""
        return None


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


def _file_fingerprint(p: Path) -> str:
    h = hashlib.sha256()
    _digest(h, p)
    return "sha256:" + h.hexdigest()[:16]



class Backend:
    """A kind of model. ``from_entry``: a registered model (its loader entry, the folder its package
    installed, the fingerprint of that package); ``accepts`` / ``from_path``: a local folder or file
    given as --model. Options: pooling, layer, subword, batch_size, trust_remote_code (a backend
    refuses one it has no use for only where it would change nothing silently)."""
    name: ClassVar[str]
    rank: ClassVar[int] = 50           # the order in which backends are asked about a path (lower first)
    weights: ClassVar[tuple[tuple[str, ...], ...]] = (("path",),)   # the loader entry's weights.* keys it needs

    def accepts(self, path: Path) -> bool:
        return False

    def from_entry(self, entry: dict, base: Path, fingerprint: str, **opts) -> Encoder:
        raise NotImplementedError

    def from_path(self, path: Path, **opts) -> Encoder:
        raise NotImplementedError


BACKENDS: dict[str, Backend] = {}


def register_backend(cls: type[Backend]) -> type[Backend]:
    """Class decorator: make ``cls`` a backend of loader entries (``backend: <name>``) and --model paths."""
    BACKENDS[cls.name] = cls()
    return cls


def backends() -> dict[str, Backend]:
    """name -> backend, in the order they are asked about a --model path."""
    return dict(sorted(BACKENDS.items(), key=lambda kv: (kv[1].rank, kv[0])))
