"""Models a researcher holds in memory, as encoders (eatlas.encoders.base.Encoder) the run path takes.

Accepted: a sentence-transformers ``SentenceTransformer``; a transformers model with its tokenizer (a pair, or a
``pipeline``); a gensim ``KeyedVectors``; a mapping from word to vector; a callable from a list of texts to a 2-d
array (a row of NaN for a text it cannot encode: dropped and reported like a word out of vocabulary).

Each is recorded honestly (``runs.settings`` -> ``encoder``): its kind, the name the user gave (``model_name``), a
sha256 of its vectors or weights where one can be computed (then the run's ``model_fingerprint``), and
``not reproducible from this record`` where none can (a callable). Its family is ``unknown``, so its results
never pair with a paper's model in the reproduction views, unless the user names a registered model's identity
(``identity="glove-6b-50d"``): the identity is taken only when the vectors or weights are that model's (their
hash is compared with the registered model's), or, where nothing can be compared (a callable), recorded as the
user's word (``family_source`` ``user``).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..encoders.base import Encoder, EncodeResult
from ..errors import EatlasError

ACCEPTED = ("a registered model id, hub id or path (as --model)", "a sentence-transformers SentenceTransformer",
            "a transformers (model, tokenizer) pair or pipeline", "a gensim KeyedVectors",
            "a mapping word -> vector", "a callable list[str] -> 2-d array")
NOT_REPRODUCIBLE = "not reproducible from this record"
HASH_LIMIT = 4 << 30        # weights larger than this (bytes) are not hashed: the record says so


def _classes(obj) -> list[tuple[str, str]]:
    return [(c.__module__ or "", c.__name__) for c in type(obj).__mro__]


def _is(obj, module: str, name: str) -> bool:
    return any(m.split(".")[0] == module and n == name for m, n in _classes(obj))


def _typename(obj) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def kind_of(model: Any) -> str:
    """``path``, ``sentence-transformers``, ``transformers``, ``pipeline``, ``keyed-vectors``, ``mapping`` or
    ``callable``; anything else is refused with one line naming its type and the kinds accepted."""
    if model is None or isinstance(model, (str, os.PathLike)):
        return "path"
    if _is(model, "sentence_transformers", "SentenceTransformer"):
        return "sentence-transformers"
    if _is(model, "transformers", "Pipeline"):
        return "pipeline"
    if isinstance(model, (tuple, list)) and len(model) == 2 and any(_is(x, "transformers", "PreTrainedModel")
                                                                   for x in model):
        return "transformers"
    if _is(model, "gensim", "KeyedVectors"):
        return "keyed-vectors"
    if isinstance(model, Mapping):
        return "mapping"
    hint = "accepted: " + "; ".join(ACCEPTED)
    if _is(model, "transformers", "PreTrainedModel"):
        raise EatlasError(f"a transformers {type(model).__name__} alone is not a model EATlas can use: it needs its "
                          "tokenizer", field="model", hint="pass (model, tokenizer), or a pipeline")
    if callable(model) and not isinstance(model, type):
        return "callable"
    raise EatlasError(f"cannot use a {_typename(model)} as a model", field="model", hint=hint)


# ------------------------------------------------------------------------------------------------ hashes
def vectors_hash(words: list[str], vectors: np.ndarray) -> str:
    """sha256 of a vocabulary and its vectors (as float32), in the order of the words: the same for a dict, a
    KeyedVectors and the registered files of one model, whatever order they list the words in."""
    order = np.argsort(np.asarray(words, dtype=object), kind="stable")
    h = hashlib.sha256()
    h.update(f"{len(words)}x{vectors.shape[1]}\n".encode())
    h.update("\n".join(words[i] for i in order).encode("utf-8", "surrogatepass"))
    h.update(np.ascontiguousarray(np.asarray(vectors, dtype=np.float32)[order]).tobytes())
    return "sha256:" + h.hexdigest()


def weights_hash(module) -> str | None:
    """sha256 of a torch module's state dict (names, dtypes, shapes, bytes); None above HASH_LIMIT bytes."""
    import torch

    state = module.state_dict()
    if sum(t.numel() * t.element_size() for t in state.values() if isinstance(t, torch.Tensor)) > HASH_LIMIT:
        return None
    h = hashlib.sha256()
    for name in sorted(state):
        t = state[name]
        if not isinstance(t, torch.Tensor):
            continue
        t = t.detach().to("cpu").contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return "sha256:" + h.hexdigest()


# ------------------------------------------------------------------------------------------------ static
def mapping_vectors(model: Mapping) -> tuple[list[str], np.ndarray]:
    """The words and a (n, d) matrix of a mapping word -> vector; a vector of another length than the first
    word's is refused, naming the first word that differs."""
    words = list(model.keys())
    if not words:
        raise EatlasError("the mapping holds no vectors", field="model")
    bad = next((w for w in words if not isinstance(w, str)), None)
    if bad is not None:
        raise EatlasError(f"the mapping's keys must be words (str); {bad!r} is a {_typename(bad)}", field="model")
    try:
        mat = np.asarray([np.asarray(model[w]) for w in words])
    except (ValueError, TypeError):
        mat = None
    if mat is None or mat.dtype == object or mat.ndim != 2:
        first = np.asarray(model[words[0]])
        if first.ndim != 1:
            raise EatlasError(f"the vector of {words[0]!r} has shape {first.shape}, not one row of numbers",
                              field="model", hint="map each word to a 1-d array")
        for w in words[1:]:
            v = np.asarray(model[w])
            if v.shape != first.shape:
                raise EatlasError(f"the vector of {w!r} has shape {v.shape}, the first word's ({words[0]!r}) "
                                  f"{first.shape}: the vectors' dimensions differ", field="model",
                                  hint="every vector needs the same number of values")
        raise EatlasError("the mapping's vectors are not numbers", field="model")
    _check_numbers(mat, "the mapping's vectors")
    return words, mat


def _check_numbers(mat: np.ndarray, what: str) -> None:
    if not (np.issubdtype(mat.dtype, np.floating) or np.issubdtype(mat.dtype, np.integer)) \
            or np.issubdtype(mat.dtype, np.bool_):
        raise EatlasError(f"{what} are of dtype {mat.dtype}, not real numbers", field="model")
    if mat.shape[1] == 0:
        raise EatlasError(f"{what} have no values (dimension 0)", field="model")


class CallableEncoder(Encoder):
    """A function from a list of texts to a (len(texts), d) array of real numbers; a row of NaN: a text it cannot
    encode (dropped, and listed with the result, like a word out of vocabulary). Whole texts only (no spans)."""

    spans = False

    def __init__(self, fn, *, model_id: str):
        self.fn = fn
        self.dim: int | None = None
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
        super().__init__(model_id=model_id, fingerprint=f"callable:{name}", family="unknown",
                         info={"callable": name})

    def encode(self, texts: list[str]) -> EncodeResult:
        self.calls += 1
        got = self.fn(list(texts))
        try:
            arr = np.asarray(got.detach().cpu() if hasattr(got, "detach") else got)
        except (ValueError, TypeError):
            arr = np.asarray(None)
        shown = f"a {_typename(got)}" + (f" of shape {arr.shape} and dtype {arr.dtype}" if arr.ndim else "")
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise EatlasError(f"the model callable returned {shown} for {len(texts)} texts", field="model",
                              hint=f"return a 2-d array of shape ({len(texts)}, d): one row per text, NaN for a "
                                   "text it cannot encode")
        if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)) \
                or np.issubdtype(arr.dtype, np.bool_) or arr.shape[1] == 0:
            raise EatlasError(f"the model callable returned {shown}, not real numbers", field="model",
                              hint="return float vectors, NaN for a text it cannot encode")
        if self.dim is not None and arr.shape[1] != self.dim:
            raise EatlasError(f"the model callable returned vectors of dimension {arr.shape[1]}, earlier "
                              f"{self.dim}", field="model", hint="every vector needs the same dimension")
        self.dim = int(arr.shape[1])
        arr = arr.astype(np.float64)
        return EncodeResult(arr, np.all(np.isnan(arr), axis=1))

    def encode_spans(self, texts, spans):
        raise EatlasError("a callable encodes whole texts, not a word inside a sentence", field="levels",
                          hint="run word or sentence levels")

    def encode_items(self, texts, spans):
        if any(s is not None for s in spans):
            return super().encode_items(texts, spans)
        return self.encode(texts)


# ------------------------------------------------------------------------------------------ transformers
def _in_memory_transformers(model, tokenizer, *, model_id: str, pooling: str, normalize: bool,
                            max_length: int | None, layer, subword, batch_size: int):
    from ..encoders.hf import NO_LIMIT, POOLINGS, SUBWORDS, TransformersEncoder, _first

    class InMemoryTransformers(TransformersEncoder):
        """A transformers model and its tokenizer in memory, encoded as the transformers backend encodes a folder
        (the same pooling, spans and batching); put in eval mode while it encodes, and back after."""

        def __init__(self):     # noqa: D401 - the folder reading of TransformersEncoder is left out
            if pooling not in POOLINGS:
                raise EatlasError(f"unknown pooling {pooling!r}", field="pooling", hint=", ".join(POOLINGS))
            if subword not in SUBWORDS:
                raise EatlasError(f"unknown subword choice {subword!r}", field="subword", hint=", ".join(SUBWORDS))
            if not getattr(tokenizer, "is_fast", False):
                raise EatlasError(f"the tokenizer {_typename(tokenizer)} is not a fast tokenizer", field="model",
                                  hint="EATlas reads character spans from a fast tokenizer (use_fast=True)")
            config = model.config.to_dict()
            self.path, self.trust_remote_code = Path(model_id), False
            self._tokenizer, self._model = tokenizer, model
            self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
            self.token_types = "token_type_ids" in tokenizer.model_input_names
            positions = _first(config, "max_position_embeddings", "n_positions", "n_ctx", "max_seq_len")
            limits = [n for n in (max_length, getattr(tokenizer, "model_max_length", None), positions)
                      if isinstance(n, int) and not isinstance(n, bool) and 0 < n < NO_LIMIT]
            self.max_length = min(limits) if limits else 512
            self.device = str(next(model.parameters()).device)
            self.batch_size, self.normalize = batch_size, normalize
            self.hidden_size = _first(config, "hidden_size", "n_embd", "d_model", "dim")
            Encoder.__init__(self, model_id=model_id, fingerprint="", family="unknown", pooling=pooling,
                             layer=str(layer), subword=subword,
                             info={"model_type": config.get("model_type"), "normalize": normalize,
                                   "max_length": self.max_length, "device": self.device})
            self._layer = str(layer)
            facts = {k: config.get(k) for k in ("model_type", "architectures", "num_hidden_layers", "hidden_size",
                                                "vocab_size") if config.get(k) is not None}
            if isinstance(getattr(tokenizer, "do_lower_case", None), bool):
                facts["do_lower_case"] = tokenizer.do_lower_case
            self.model_config = facts or None

        def encode_items(self, texts, spans, *, windows: bool = True):
            inner: Any = self._model
            was = bool(getattr(inner, "training", False))
            inner.eval()
            try:
                return super().encode_items(texts, spans, windows=windows)
            finally:
                if was:
                    inner.train()

        def cache_key(self, mode):
            return super().cache_key(mode) if self.fingerprint.startswith("sha256:") else None

        def coverage_key(self):
            return super().coverage_key() if self.fingerprint.startswith("sha256:") else None

    return InMemoryTransformers()


def _sentence_transformers_parts(st) -> tuple[Any, Any, str, bool, int | None]:
    """(model, tokenizer, pooling, normalize, max length) of a SentenceTransformer made of a Transformer, a
    Pooling and optionally a Normalize module; anything else is refused (its vectors are not these)."""
    from ..encoders.hf import POOLINGS
    mods = list(st)
    names = [type(m).__name__ for m in mods]
    if not names or names[0] != "Transformer" or len(names) < 2 or names[1] != "Pooling" \
            or any(n != "Normalize" for n in names[2:]):
        raise EatlasError(f"a SentenceTransformer of modules {', '.join(names)}: EATlas encodes Transformer, Pooling "
                          "and Normalize", field="model",
                          hint="pass a callable instead, e.g. lambda texts: model.encode(texts)")
    tr, pool = mods[0], mods[1]
    inner = getattr(tr, "auto_model", None) or getattr(tr, "model", None)
    tok = getattr(tr, "tokenizer", None) or getattr(tr, "processor", None)
    conf = pool.get_config_dict() if hasattr(pool, "get_config_dict") else {}
    mode = conf.get("pooling_mode")
    if not isinstance(mode, str):
        on = [k for k, v in conf.items() if k.startswith("pooling_mode") and v is True]
        mode = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean", "pooling_mode_max_tokens": "max",
                "pooling_mode_lasttoken": "last"}.get(on[0], "?") if len(on) == 1 else "?"
    mode = {"lasttoken": "last", "mean_tokens": "mean", "cls_token": "cls"}.get(mode, mode)
    if mode not in POOLINGS or inner is None or tok is None:
        raise EatlasError(f"a SentenceTransformer pooled by {mode!r}: not a pooling EATlas computes", field="model",
                          hint="pass a callable instead, e.g. lambda texts: model.encode(texts)")
    max_len = getattr(tr, "max_seq_length", None)
    return inner, tok, mode, len(names) > 2, max_len if isinstance(max_len, int) else None


# ------------------------------------------------------------------------------------------------- entry
def as_encoder(model: Any, *, model_name: str | None = None, identity: str | None = None, pooling: str | None = None,
               layer: str | int | None = None, subword: str | None = None, batch_size: int = 64,
               family: str | None = None) -> Encoder | None:
    """The encoder of an in-memory ``model`` (None: ``model`` is an id or path, which the run loads as --model)."""
    kind = kind_of(model)
    if kind == "path":
        if model_name is not None or identity is not None:
            raise EatlasError("model_name= and identity= name a model held in memory; a registered id, hub id or "
                              "path names itself", field="model_name" if model_name is not None else "identity",
                              hint="leave them out")
        return None
    if model_name is not None and (not isinstance(model_name, str) or not model_name.strip()):
        raise EatlasError(f"model_name must be a non-empty text, got {model_name!r:.60}", field="model_name")
    shown = model_name or f"in-memory {kind}"
    digest: str | None
    if kind in ("mapping", "keyed-vectors"):
        from ..encoders.static import StaticBackend, StaticEncoder
        StaticBackend.refuse_options(shown, {"pooling": pooling, "layer": layer, "subword": subword})
        if kind == "mapping":
            words, vecs = mapping_vectors(model)
        else:
            words, vecs = list(model.index_to_key), np.asarray(model.vectors)
            if vecs.ndim != 2 or len(words) != len(vecs):
                raise EatlasError(f"the KeyedVectors holds {len(words)} words and vectors of shape {vecs.shape}",
                                  field="model")
            _check_numbers(vecs, "the KeyedVectors' vectors")
        digest = vectors_hash(words, vecs)
        enc: Encoder = StaticEncoder(words, vecs, model_id=shown, family="unknown", fingerprint=digest,
                                     lowercase=False)
    elif kind == "callable":
        if pooling or layer is not None or subword:
            raise EatlasError("pooling, layer and subword apply to transformers models; a callable encodes as it does",
                              field="pooling" if pooling else "layer" if layer is not None else "subword")
        enc, digest = CallableEncoder(model, model_id=shown), None
    else:
        if kind == "sentence-transformers":
            inner, tok, st_pool, normalize, max_len = _sentence_transformers_parts(model)
        elif kind == "pipeline":
            inner, tok, st_pool, normalize, max_len = model.model, model.tokenizer, "mean", False, None
            if tok is None:
                raise EatlasError("the pipeline has no tokenizer", field="model")
        else:
            inner = next(x for x in model if _is(x, "transformers", "PreTrainedModel"))
            tok = next(x for x in model if x is not inner)
            st_pool, normalize, max_len = "mean", False, None
        digest = weights_hash(inner)
        enc = _in_memory_transformers(inner, tok, model_id=shown, pooling=pooling or st_pool, normalize=normalize,
                                      max_length=max_len, layer=-1 if layer is None else layer,
                                      subword=subword or "last", batch_size=batch_size)
        enc.fingerprint = digest or f"unhashed:{kind}"
    enc.family, enc.entry, enc.identity = family or "unknown", None, {}
    enc.family_source = "user" if family else "unknown"
    enc.info.update({"in_memory": kind, "model_name": model_name, "weights_sha256": digest,
                     "record": "the weights' sha256 identifies the model; the object itself is not stored"
                     if digest else f"{NOT_REPRODUCIBLE}: " + ("a callable's vectors cannot be hashed before it runs"
                                                              if kind == "callable" else "the weights were too large "
                                                              "to hash")})
    if identity is not None:
        _named_identity(enc, identity, digest, kind, family)
    enc.info["family_source"] = enc.family_source
    return enc


def _named_identity(enc: Encoder, identity: str, digest: str | None, kind: str, family: str | None) -> None:
    """Give ``enc`` the registered model ``identity``'s family and identity (so that its results pair with a paper's
    model of that identity): only when its vectors or weights hash as that model's; where nothing can be hashed,
    as the user's word (family_source ``user``, said in the record)."""
    from ..encoders import load_encoder, model_entries
    from ..encoders.identity import entry_identity

    entries = model_entries()
    if identity not in entries:
        from difflib import get_close_matches
        near = get_close_matches(identity, list(entries), n=1)
        raise EatlasError(f"unknown registered model {identity!r}", field="identity",
                          hint=(f"did you mean {near[0]}? " if near else "") + "'eatlas models' lists them")
    e = entries[identity]
    if family is not None and family != e.get("family"):
        raise EatlasError(f"identity {identity} is of family {e.get('family')!r}, not {family!r}", field="family",
                          hint="leave out family=")
    checked = False
    if digest is not None:
        ref: Any = load_encoder(identity)
        if kind in ("mapping", "keyed-vectors"):
            if not hasattr(ref, "index"):
                raise EatlasError(f"{identity} is not a static vector model; the model is {kind}", field="identity")
            words = [""] * len(ref.index)
            for w, i in ref.index.items():
                words[i] = w
            theirs = vectors_hash(words, np.asarray(ref.vectors))
        else:
            inner = getattr(ref, "model", None)
            if inner is None or not hasattr(inner, "state_dict"):
                raise EatlasError(f"{identity} is not a transformers model; the model is {kind}", field="identity")
            theirs = weights_hash(inner) or "?"
        if theirs != digest:
            raise EatlasError(f"the model's {'vectors' if kind in ('mapping', 'keyed-vectors') else 'weights'} are not "
                              f"those of {identity} (sha256 {digest[7:19]}... vs {(theirs or '?')[7:19]}...)",
                              field="identity", hint="leave out identity=: a changed model is not the registered one, "
                                                     "and its results must not stand beside the paper's")
        checked = True
        if hasattr(enc, "lowercase"):
            enc.lowercase = bool(e.get("lowercase", False))
            enc.info["lowercase"] = enc.lowercase
    enc.family, enc.entry, enc.identity = e.get("family") or "unknown", identity, entry_identity(e)
    enc.family_source = "fingerprint" if checked else "user"
    if e.get("languages"):
        enc.languages = [str(x).lower() for x in e["languages"]]
    enc.info["identity"] = {"named": identity, "checked": bool(checked),
                            "how": "its sha256 equals the registered model's" if checked
                            else "named by the user; nothing could be compared"}
