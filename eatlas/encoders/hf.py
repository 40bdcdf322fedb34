"""Transformers and sentence-transformers models (local folders, including the hub cache's snapshots, which
``eatlas.encoders.hub`` resolves and downloads; this module never downloads).

``TransformersEncoder``: any local transformers folder (BERT-like, GPT-like, AutoModel); pooling
``mean`` (mask-aware, special tokens included, as sentence-transformers), ``mean_nospecial``,
``cls``, ``last`` (last non-padding token), ``max``; layer ``-1`` (top), an index into the hidden
states, or ``sum`` (sum over the layers after the embeddings); contextual-word vectors from the
tokens that overlap a character span, subword ``first``/``last``/``mean``. ``encode_items`` sends
each distinct text through the model once (batches of similar token length, padded by us and
masked, so no pad token is needed) and reads both its pooled vector and its span vectors off that
one pass. The tokenizer and the weights are loaded when the first text is encoded: a run whose
texts are all in the embedding cache never loads them (its cache key needs only the folder's
files and configuration).

The ``sentence-transformers`` backend is a folder with ``modules.json``: it pools as its Pooling
module says (unless --pooling overrides), normalises when it has a Normalize module, and truncates
at its ``max_seq_length``.

Weights load from safetensors where the folder has them; PyTorch ``.bin`` weights load only through
torch's ``weights_only`` unpickler (transformers' ``from_pretrained(weights_only=True)``), never as an
arbitrary pickle. A folder whose config names its own code (``auto_map``) is refused unless
--trust-remote-code names it.

Tokenizer coverage (``covers``): a stimulus more than ``UNKNOWN_SHARE`` of whose tokens are the
tokenizer's unknown token (e.g. a Hindi word in an English WordPiece vocabulary: ``[UNK]``), or that
gives no token at all, is not encodable, and the run drops it with the reason "unknown to the
tokenizer", as a static model's out-of-vocabulary word. A word split into many known pieces (a small
vocabulary's characters) is covered. Only the tokenizer is loaded for this, never the weights.
"""
from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
from pathlib import Path

import numpy as np

from ..errors import EatlasError
from .base import (
    ENCODER_VERSION,
    UNKNOWN_SHARE,
    UNKNOWN_TO_TOKENIZER,
    Backend,
    Encoder,
    EncodeResult,
    _folder_fingerprint,
    register_backend,
)

POOLINGS = ("mean", "mean_nospecial", "cls", "last", "max")
SUBWORDS = ("first", "last", "mean")


def _torch():
    import torch
    return torch


@functools.lru_cache(maxsize=64)
def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _default_device() -> str:
    """cuda where torch sees a GPU, else cpu; a CPU-only torch build (version '+cpu') says so without being
    imported, so that a run whose texts are all cached never imports torch."""
    if (_version("torch") or "").endswith("+cpu"):
        return "cpu"
    return "cuda" if _torch().cuda.is_available() else "cpu"


NO_LIMIT = 10**18     # tokenizers without a length limit say model_max_length = int(1e30) (VERY_LARGE_INTEGER)


def _first(config: dict, *names: str):
    """The first of ``names`` that config.json sets to a positive integer (None: none does)."""
    for n in names:
        v = config.get(n)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def _json(path: Path, *, required: bool = False) -> dict:
    """A model folder's JSON file (config.json, tokenizer_config.json) as a dict."""
    if not path.is_file():
        if required:
            raise EatlasError("not a transformers model folder (no config.json)", file=str(path.parent))
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise EatlasError(f"could not load the model: unreadable {path.name}: {e}", file=str(path.parent),
                          hint="is the folder a complete transformers model (config.json, weights, tokenizer.json)?"
                          ) from None
    if not isinstance(doc, dict):
        raise EatlasError(f"could not load the model: {path.name} is not a JSON object", file=str(path.parent))
    return doc


def _lowercases(path: Path, tok_config: dict) -> bool | None:
    """Whether the tokenizer lower-cases: tokenizer_config.json's do_lower_case, else the normalizer of
    tokenizer.json (BertNormalizer lowercase, a Lowercase step); None when neither says."""
    v = tok_config.get("do_lower_case")
    if isinstance(v, bool):
        return v
    p = path / "tokenizer.json"
    if not p.is_file():
        return None
    try:                # the normalizer sits near the top of tokenizer.json: decode only that object
        with p.open(encoding="utf-8") as f:
            head = f.read(1 << 16)
        at = head.find('"normalizer"')
        if at < 0:
            return None
        at = head.index(":", at) + 1
        norm, _ = json.JSONDecoder().raw_decode(head[at:].lstrip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None

    def lower(n) -> bool:
        if not isinstance(n, dict):
            return False
        if n.get("type") == "Lowercase" or (n.get("type") == "BertNormalizer" and n.get("lowercase")):
            return True
        return any(lower(m) for m in n.get("normalizers") or [])
    return lower(norm)


def config_facts(path: Path, config: dict, tok_config: dict) -> dict:
    """The facts of config.json a paper can state (runs.model_config): model_type, architectures, the number of
    layers and the hidden size under transformers' common names (num_hidden_layers, hidden_size, whatever the
    config calls them: GPT-2's n_layer and n_embd, DistilBERT's n_layers and dim), vocab_size, and whether the
    tokenizer lower-cases (do_lower_case). A fact the files do not hold is left out."""
    arch = config.get("architectures")
    facts = {"model_type": config.get("model_type") if isinstance(config.get("model_type"), str) else None,
             "architectures": [str(a) for a in arch] if isinstance(arch, list) else None,
             "num_hidden_layers": _first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers"),
             "hidden_size": _first(config, "hidden_size", "n_embd", "d_model", "dim"),
             "vocab_size": _first(config, "vocab_size"),
             "do_lower_case": _lowercases(path, tok_config)}
    return {k: v for k, v in facts.items() if v is not None}


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
        if pooling not in POOLINGS:
            raise EatlasError(f"unknown pooling {pooling!r}", field="pooling", hint=f"one of {', '.join(POOLINGS)}")
        if subword not in SUBWORDS:
            raise EatlasError(f"unknown subword choice {subword!r}", field="subword",
                              hint=f"one of {', '.join(SUBWORDS)}")
        if not (str(layer) in ("-1", "sum") or re.fullmatch(r"-?\d+", str(layer))):
            raise EatlasError(f"unknown layer {layer!r}", field="layer", hint="-1 (top), a hidden-state index, or sum")
        path = Path(path)
        config = _json(path / "config.json", required=True)
        tok_config = _json(path / "tokenizer_config.json")
        if not trust_remote_code:
            from .hub import refuse_custom_code
            refuse_custom_code(model_id or str(path), config, tok_config)
        self.path, self.trust_remote_code = path, trust_remote_code
        self._tokenizer = self._model = None
        # transformers' own aliases of these config fields (PretrainedConfig.attribute_map), e.g. GPT-2's n_positions
        positions = _first(config, "max_position_embeddings", "n_positions", "n_ctx", "max_seq_len")
        limits = [n for n in (max_length, tok_config.get("model_max_length"), positions)
                  if isinstance(n, int) and not isinstance(n, bool) and 0 < n < NO_LIMIT]
        self.max_length = min(limits) if limits else 512
        self.device = device or _default_device()
        self.batch_size = batch_size
        self.normalize = normalize
        self.hidden_size = _first(config, "hidden_size", "n_embd", "d_model", "dim")
        fam = family or config.get("model_type") or "transformers"
        fp = fingerprint or _folder_fingerprint(path)
        super().__init__(model_id=model_id or str(path), fingerprint=fp, family=fam, pooling=pooling,
                         layer=str(layer), subword=subword,
                         info={"path": str(path), "model_type": config.get("model_type"),
                               "normalize": normalize, "max_length": self.max_length, "device": self.device})
        self.model_config = config_facts(path, config, tok_config)
        self._layer = str(layer)
        n_states = _first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
        if isinstance(n_states, int) and self._layer not in ("-1", "sum") and \
                not -(n_states + 1) <= int(self._layer) <= n_states:
            raise EatlasError(f"layer {layer} is out of range: the model has {n_states + 1} hidden states "
                              f"(0 = embeddings .. {n_states} = top)", file=str(path), field="layer",
                              hint=f"an index from {-(n_states + 1)} to {n_states}, -1 (top) or sum")

    @property
    def loaded(self) -> bool:
        """Whether the weights have been loaded (they are, when the first text is encoded)."""
        return self._model is not None

    @property
    def tokenizer(self):
        """The tokenizer, loaded on first use without the weights (coverage needs only the tokenizer)."""
        if self._tokenizer is None:
            self._load_tokenizer()
        return self._tokenizer

    @property
    def model(self):
        if self._model is None:
            self._load()
        return self._model

    def _failed(self, e: Exception) -> EatlasError:
        """Whatever the loaders raise (OSError, safetensors' SafetensorError, pickle's UnpicklingError, RuntimeError
        on mismatched shapes, ...), as one line naming the folder and the reason, not a traceback."""
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        custom = "custom code" in str(e) or "trust_remote_code" in str(e)
        name = self.model_id if self.model_hub_id else str(self.path)
        return EatlasError(f"could not load the model: {type(e).__name__}: {first[:300]}", file=str(self.path),
                           hint=f"the model's own code runs only with --trust-remote-code {name}" if custom and
                           not self.trust_remote_code else "is the folder a complete transformers model (config.json, "
                           "weights, tokenizer.json) of matching shapes?")

    def _load_tokenizer(self) -> None:
        from transformers import AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True,
                                                      trust_remote_code=self.trust_remote_code)
        except Exception as e:   # noqa: BLE001 - see _failed
            raise self._failed(e) from None
        if not getattr(tokenizer, "is_fast", False):
            raise EatlasError("a fast tokenizer (tokenizer.json) is needed for character spans", file=str(self.path))
        # We pad batches ourselves (masked out), so a tokenizer without a pad token (GPT-2) needs none.
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.token_types = "token_type_ids" in tokenizer.model_input_names
        self._tokenizer = tokenizer

    def _weights_options(self) -> dict:
        """safetensors where the folder has them; otherwise PyTorch .bin weights through torch's weights_only
        unpickler, refused when this transformers cannot be told to use it."""
        import inspect

        from transformers import PreTrainedModel
        if any(self.path.glob("*.safetensors")):
            return {"use_safetensors": True}
        if "weights_only" not in inspect.signature(PreTrainedModel.from_pretrained).parameters:
            raise EatlasError("the folder holds pickled PyTorch weights (.bin) and no .safetensors, and this "
                              "transformers cannot load them with torch's weights_only loader", file=str(self.path),
                              hint="upgrade transformers, or convert the weights to safetensors")
        return {"use_safetensors": False, "weights_only": True}

    def _load(self) -> None:
        """The weights (and the tokenizer, if not loaded yet), on first use."""
        torch = _torch()
        from transformers import AutoConfig, AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        path, trust = self.path, self.trust_remote_code
        tokenizer = self.tokenizer
        try:
            AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=trust)   # custom code: asks
            model = AutoModel.from_pretrained(path, local_files_only=True, trust_remote_code=trust,
                                              **self._weights_options())
        except EatlasError:
            raise
        except Exception as e:   # noqa: BLE001 - see _failed
            raise self._failed(e) from None
        if self.device == "cpu":
            torch.set_num_threads(_cpu_threads())
        model.to(self.device).eval()
        self._tokenizer, self._model = tokenizer, model
        if self.hidden_size is None:
            self.hidden_size = int(model.config.hidden_size)

    uncovered_reason = UNKNOWN_TO_TOKENIZER

    def covers(self, stimuli: list[str]) -> np.ndarray:
        """Whether each stimulus is known to the tokenizer: at most UNKNOWN_SHARE of its tokens (special tokens
        aside) the unknown token, and at least one token."""
        if not stimuli:
            return np.zeros(0, dtype=bool)
        tok = self.tokenizer
        unk = tok.unk_token_id
        if self.encoding == "sent-bias":      # the tokens sent-bias's tokenizer reads (lower-cased; authors.py)
            from .authors import sent_bias_ids
            ids = [sent_bias_ids(tok, s) for s in stimuli]
        else:
            ids = tok(list(stimuli), add_special_tokens=False)["input_ids"]
        return np.array([bool(i) and (unk is None or sum(t == unk for t in i) <= UNKNOWN_SHARE * len(i))
                         for i in ids], dtype=bool)

    def same_input(self, a: str, b: str) -> str | None:
        """'the tokenizer turns both into [UNK]' when two stimuli give the same tokens (None: they do not)."""
        tok = self.tokenizer
        ta, tb = (tok(x, add_special_tokens=False)["input_ids"] for x in (a, b))
        if ta != tb:
            return None
        pieces = " ".join(tok.convert_ids_to_tokens(ta)) or "no token"
        unknown = tok.unk_token_id is not None and tok.unk_token_id in ta
        return f"the tokenizer turns both into {pieces}" + (f" ({UNKNOWN_TO_TOKENIZER})" if unknown else "")

    def coverage_key(self) -> dict:
        """What decides covers(): the tokenizer (the model's files), the rule, the libraries' versions."""
        key = {"encoder": "transformers", "code": ENCODER_VERSION, "fingerprint": self.fingerprint,
               "mode": "coverage", "unknown_share": UNKNOWN_SHARE, "transformers": _version("transformers"),
               "tokenizers": _version("tokenizers")}
        return {**key, "encoding": self.encoding} if self.encoding == "sent-bias" else key

    def cache_key(self, mode: str) -> dict:
        key = {"encoder": "transformers", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode,
               "layer": self.layer, "max_length": self.max_length, "device": self.device,
               "torch": _version("torch"), "transformers": _version("transformers"),
               "tokenizers": _version("tokenizers")}
        if self.encoding != "standard":      # a paper's own encoding (eatlas.encoders.authors): its own vectors
            key["encoding"] = self.encoding
        if mode == "plain":
            return {**key, "pooling": self.pooling, "normalize": self.normalize}
        return {**key, "subword": self.subword, "long_text": "window"}     # see _window

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

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None], *,
                     windows: bool = True) -> EncodeResult:
        """One forward pass per distinct text, batched by token length (little padding), pooled vectors
        and span vectors read off the same pass. A span in a text longer than the model's maximum length is
        read off a window of the text around it that fits (:meth:`_window`), never lost to truncation; a
        pooled text is truncated, as sentence-transformers does. A paper's own encoding (--encoding,
        eatlas.encoders.authors) where one was chosen."""
        if self.encoding != "standard":
            from .authors import encode
            return encode(self, texts, spans)
        return self._encode_standard(texts, spans, windows=windows)

    def _encode_standard(self, texts: list[str], spans: list[tuple[int, int] | None], *,
                         windows: bool = True) -> EncodeResult:
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
        if windows:     # spans in texts far longer than the model reads: windowed before any tokenizing
            self._long_spans([i for i, u in enumerate(uniq) if len(u) > 4 * self.max_length], asks, texts, spans,
                             out, missing)
        # a text left with no request (every one windowed) is not tokenized: a 4 MB line would take seconds
        enc = self.tokenizer([u if asks[i] else "" for i, u in enumerate(uniq)], truncation=True,
                             max_length=self.max_length, return_offsets_mapping=True, return_special_tokens_mask=True)
        if windows:     # and those the tokenizer truncated
            self._long_spans([i for i, e in enumerate(getattr(enc, "encodings", None) or [])
                              if getattr(e, "overflowing", None)], asks, texts, spans, out, missing)
        lengths = [len(x) for x in enc["input_ids"]]
        order = sorted((i for i in range(len(uniq)) if lengths[i] and asks[i]), key=lengths.__getitem__)
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

    def _long_spans(self, cut, asks, texts, spans, out, missing) -> None:
        """The span requests on the texts ``cut`` (indices into ``asks``: texts too long for the model): each
        encoded in its own window (:meth:`_window`) and taken out of ``asks``, so the main pass reads the rest."""
        rows = [n for i in cut for n in asks[i] if spans[n] is not None]
        if not rows:
            return
        win = {n: self._window(texts[n], *spans[n]) for n in rows}
        fits = [n for n in rows if win[n] is not None]
        for n in rows:
            if win[n] is None:          # the stimulus alone is longer than the model reads
                missing[n] = True
        if fits:
            r = self.encode_items([win[n][0] for n in fits], [win[n][1] for n in fits], windows=False)
            out[fits], missing[fits] = r.vectors, r.missing
        taken = set(rows)
        for i in cut:
            asks[i] = [n for n in asks[i] if n not in taken]

    def _window(self, text: str, start: int, end: int) -> tuple[str, tuple[int, int]] | None:
        """A part of ``text`` around the span [start, end) that fits the model's maximum length: the span's
        tokens with as many tokens on each side as fit (half each, the rest to the side that has more), cut
        at word boundaries; the span shifted into it. None: the span alone does not fit."""
        budget = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=False) - 8    # re-tokenizing
        reach = 32 * self.max_length            # characters each side that surely hold the tokens wanted
        a0, b0 = max(0, start - reach), min(len(text), end + reach)
        offs = [(a0 + a, a0 + b) for a, b in self.tokenizer(text[a0:b0], add_special_tokens=False,
                                                            return_offsets_mapping=True)["offset_mapping"]]
        if a0 == 0 and b0 == len(text) and len(offs) <= self.max_length - self.tokenizer.num_special_tokens_to_add():
            return text, (start, end)           # it fits whole: read as it is
        inside = [i for i, (a, b) in enumerate(offs) if b > a and a < end and b > start]
        if not inside or inside[-1] - inside[0] + 1 > budget:
            return None
        t0, t1 = inside[0], inside[-1]
        free = budget - (t1 - t0 + 1)
        lo, hi = max(0, t0 - free // 2), min(len(offs) - 1, t1 + (free - free // 2))
        lo = max(0, lo - (free - (t0 - lo) - (hi - t1)))           # what one side lacks goes to the other
        hi = min(len(offs) - 1, hi + (free - (t0 - lo) - (hi - t1)))

        def starts_word(i):
            a = offs[i][0]
            return a == 0 or not (text[a - 1].isalnum() and text[a].isalnum())

        def ends_word(i):
            b = offs[i][1]
            return b >= len(text) or not (text[b - 1].isalnum() and text[b].isalnum())
        while lo < t0 and not starts_word(lo):
            lo += 1
        while hi > t1 and not ends_word(hi):
            hi -= 1
        a, b = min(offs[lo][0], start), max(offs[hi][1], end)
        return text[a:b], (start - a, end - a)

    @property
    def dim(self) -> int:
        if self.hidden_size is None:
            self._load()
        return int(self.hidden_size)


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
        rel = Path(str(pool.get("path", "")))
        cfg_file = path / rel / "config.json"
        # Inside the folder, by name and after links: a hub cache snapshot links its files to the repository's
        # blobs (snapshots/<commit>/x -> ../../blobs/<hash>), which is inside the repository's cache folder.
        home = path.parent.parent if path.parent.name == "snapshots" else path
        if rel.is_absolute() or ".." in rel.parts or not cfg_file.resolve().is_relative_to(home.resolve()):
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




@register_backend
class TransformersBackend(Backend):
    """A local transformers folder (config.json, weights, tokenizer.json)."""
    name = "transformers"
    rank = 20

    def accepts(self, path: Path) -> bool:
        return path.is_dir() and (path / "config.json").is_file()

    def from_entry(self, entry: dict, base: Path, fingerprint: str, *, pooling=None, layer=None, subword=None,
                   batch_size=64, trust_remote_code=False) -> Encoder:
        folder = base / entry["weights"].get("path", "")       # a hub entry: the repository's root by default
        return TransformersEncoder(folder, model_id=entry["id"], family=entry.get("family"),
                                   pooling=pooling or entry.get("pooling", "mean"),
                                   layer=layer if layer is not None else entry.get("layer", -1),
                                   subword=subword or "last", batch_size=batch_size,
                                   normalize=bool(entry.get("normalize", False)), fingerprint=fingerprint,
                                   trust_remote_code=trust_remote_code,
                                   max_length=entry.get("max_length") or _st_max_length(folder))

    def from_path(self, path: Path, *, pooling=None, layer=None, subword=None, batch_size=64,
                  trust_remote_code=False, model_id=None, fingerprint=None) -> Encoder:
        return TransformersEncoder(path, pooling=pooling or "mean", layer=-1 if layer is None else layer,
                                   subword=subword or "last", batch_size=batch_size, normalize=False,
                                   trust_remote_code=trust_remote_code, model_id=model_id, fingerprint=fingerprint)


@register_backend
class SentenceTransformersBackend(TransformersBackend):
    """A sentence-transformers folder (modules.json): pooled as its Pooling module says unless --pooling
    overrides, normalised when it has a Normalize module, truncated at its max_seq_length."""
    name = "sentence-transformers"
    rank = 10

    def accepts(self, path: Path) -> bool:
        return super().accepts(path) and (path / "modules.json").is_file()

    def from_entry(self, entry: dict, base: Path, fingerprint: str, **opts) -> Encoder:
        folder = base / entry["weights"].get("path", "")
        return super().from_entry({**entry, "normalize": entry.get("normalize", _st_normalize(folder))}, base,
                                  fingerprint, **opts)

    def from_path(self, path: Path, *, pooling=None, layer=None, subword=None, batch_size=64,
                  trust_remote_code=False, model_id=None, fingerprint=None) -> Encoder:
        return TransformersEncoder(path, pooling=pooling or _st_pooling(path) or "mean",
                                   layer=-1 if layer is None else layer, subword=subword or "last",
                                   batch_size=batch_size, normalize=_st_normalize(path),
                                   trust_remote_code=trust_remote_code, max_length=_st_max_length(path),
                                   model_id=model_id, fingerprint=fingerprint)
