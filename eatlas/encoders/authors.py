"""The papers' encoders as their code really ran (``eatlas run --encoding NAME``; default ``standard``).

A printed number is what the authors' code computed, and the code can differ from the paper's words. Where
it does in a way that changes numbers, the authors' encoding is offered here, so that a run can compute what
they computed; ``registry/<paper>/published/models.yaml`` says which encoding each printed model needs (field
``encoding``), and the view ``reproduction`` pairs a run with those numbers only when it used it
(eatlas.encoders.identity). docs/methods.md, "How the papers' encoders ran", says what each paper's code did.

* ``standard``: EATlas's own encoding (eatlas.encoders.hf): the tokenizer as the model ships it, special
  tokens added as the tokenizer adds them, ``--pooling`` / ``--subword``.
* ``sent-bias``: May et al.'s BERT encoder, ``sentbias/encoders/bert.py`` in W4ngatang/sent-bias (commit
  e3559fb669ca): ``BertTokenizer.from_pretrained(version)`` of pytorch-pretrained-bert 0.6.1 (the version its
  environment.yml pins), which lower-cases and strips accents even for ``bert-large-cased``; no ``[CLS]`` or
  ``[SEP]``; the last layer's vector of the first wordpiece (``enc[:, 0, :]``). Whole texts only (sent-bias has
  no contextual-word level).
* ``tan2019``: Tan & Celis's contextual-word encoder for GPT and GPT-2, ``encode_c_word`` in ``gpt1.py`` /
  ``gpt2.py`` of yichern/social-biases-contextualized (commit 4299c44335b1): the sentence without its last
  character (``text[:-1].split()``), each whitespace word tokenised on its own (for GPT-2: without the
  leading-space marker a word inside a sentence gets), no special tokens, and the last layer's vector at the
  word's first subword position *plus one* (``token_start_idxs = 1 + np.cumsum(...)``, written for BERT's
  ``[CLS]``, which GPT has not), i.e. the next token's, or the padding (id 0) after the last word. At word and
  sentence levels their code pools as the paper says (the last token), which is the standard encoding with
  ``--pooling last``, so ``tan2019`` sets that pooling unless ``--pooling`` is given.
"""
from __future__ import annotations

import numpy as np

from ..errors import EatlasError
from ..levels import LEVELS

ENCODINGS = ("standard", "sent-bias", "tan2019")
UNKNOWN = "unknown"     # models.yaml: the authors' encoding could not be read, so no run is theirs

# What each encoding accepts and fixes.
_MODEL_TYPES = {"sent-bias": ("bert",), "tan2019": ("openai-gpt", "gpt2")}
_WHAT = {"sent-bias": "sent-bias's BERT encoder (sentbias/encoders/bert.py, W4ngatang/sent-bias)",
         "tan2019": "Tan & Celis's GPT and GPT-2 contextual-word encoder (gpt1.py, gpt2.py, "
                    "yichern/social-biases-contextualized)"}


def effective(encoding: str | None, level: str) -> str:
    """The encoding a result at ``level`` was really computed with: ``tan2019`` changes only the contextual-word
    levels (at word and sentence levels it is the standard encoding with the last token's vector)."""
    encoding = encoding or "standard"
    if encoding == "tan2019" and not (LEVELS[level].span if level in LEVELS else False):
        return "standard"
    return encoding


def check_options(encoding: str, levels, *, pooling=None, subword=None, layer=None, method_inputs="matrices") -> None:
    """Refuse, before anything is loaded, an encoding this run cannot use with these levels and options."""
    if encoding not in ENCODINGS:
        raise EatlasError(f"unknown encoding {encoding!r}", field="--encoding", hint=f"one of {', '.join(ENCODINGS)}")
    if encoding == "standard":
        return
    span = [lv for lv in levels if lv in LEVELS and LEVELS[lv].span]
    if encoding == "sent-bias":
        if span or method_inputs == "corpus":
            what = f"level(s) {', '.join(span)}" if span else "contextual words of a corpus"
            raise EatlasError(f"the sent-bias encoding encodes whole texts (sent-bias has no contextual-word level), "
                              f"not {what}", field="--encoding",
                              hint="run those levels with --encoding standard, or leave them out of --levels")
        for flag, value in (("--pooling", pooling), ("--subword", subword)):
            if value is not None:
                raise EatlasError(f"{flag} does not apply to the sent-bias encoding, which takes the first "
                                  "wordpiece's vector of the last layer", field=flag, hint=f"leave {flag} out")
    if encoding == "tan2019" and method_inputs == "corpus":
        raise EatlasError("the tan2019 encoding reads Tan & Celis's template sentences (it drops each text's last "
                          "character, their period), not a corpus's contexts", field="--encoding",
                          hint="run CEAT with --encoding standard")
    if encoding == "tan2019" and subword is not None:
        raise EatlasError("--subword does not apply to the tan2019 encoding, which takes the position its authors' "
                          "code takes", field="--subword", hint="leave --subword out")
    if layer is not None and str(layer) != "-1":
        raise EatlasError(f"the {encoding} encoding reads the last layer, as its authors' code did, not layer {layer}",
                          field="--layer", hint="leave --layer out")


def apply(enc, encoding: str, *, pooling_given: bool = False) -> None:
    """Make the loaded encoder ``enc`` encode as ``encoding`` (one error line where its model cannot)."""
    if encoding == "standard":
        return
    # a transformers model (eatlas.encoders.hf) says its config's model_type; static vectors have none
    model_type = (enc.info or {}).get("model_type") if hasattr(enc, "tokenizer") else None
    allowed = _MODEL_TYPES[encoding]
    if model_type not in allowed:
        kind = f"model_type {model_type!r}" if model_type else "not a transformers model"
        raise EatlasError(f"the {encoding} encoding is {_WHAT[encoding]}; {enc.model_id} is {kind}",
                          field="--encoding", hint=f"it runs models of type {', '.join(allowed)}; "
                          "use --encoding standard for this one")
    if str(enc.layer) != "-1":        # a loader entry's own layer: their code read the last one
        raise EatlasError(f"the {encoding} encoding reads the last layer, as its authors' code did; {enc.model_id} "
                          f"is set to layer {enc.layer}", field="--layer", hint="run it with --layer -1")
    enc.encoding = encoding
    enc.info["encoding"] = encoding
    if encoding == "sent-bias":
        enc.pooling, enc.subword = "first", None    # the first input token: a wordpiece, as no [CLS] is added
    elif encoding == "tan2019":
        enc.subword = "next"                         # the position after the word's first subword
        if not pooling_given:
            enc.pooling = "last"


def encode(enc, texts: list[str], spans: list) -> object:
    """``enc.encode_items`` for a non-standard encoding: returns an EncodeResult."""
    if enc.encoding == "sent-bias":
        if any(s is not None for s in spans):
            raise EatlasError("the sent-bias encoding encodes whole texts, not contextual words", field="--encoding",
                              hint="run contextual-word levels with --encoding standard")
        return _first_token(enc, texts, [sent_bias_ids(enc.tokenizer, t)[: enc.max_length] for t in texts])
    if enc.encoding == "tan2019":
        plain = [i for i, s in enumerate(spans) if s is None]
        spanned = [i for i, s in enumerate(spans) if s is not None]
        from .base import EncodeResult

        out = EncodeResult(np.full((len(texts), enc.dim), np.nan, np.float32), np.zeros(len(texts), bool))
        if plain:      # word and sentence levels: the standard encoding (their code pools as the paper says)
            r = enc._encode_standard([texts[i] for i in plain], [None] * len(plain))
            out.vectors[plain], out.missing[plain] = r.vectors, r.missing
        if spanned:
            r = _tan2019_cword(enc, [texts[i] for i in spanned], [spans[i] for i in spanned])
            out.vectors[spanned], out.missing[spanned] = r.vectors, r.missing
        return out
    raise EatlasError(f"unknown encoding {enc.encoding!r}", field="--encoding", hint=f"one of {', '.join(ENCODINGS)}")


# ---------------------------------------------------------------------------------------------------- sent-bias
def sent_bias_ids(tokenizer, text: str) -> list[int]:
    """The ids sent-bias's ``tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))`` gives: pytorch-pretrained-
    bert 0.6.1's BertTokenizer has ``do_lower_case=True`` unless told otherwise (its BasicTokenizer lower-cases and
    strips accents, then splits on whitespace and punctuation), then WordPiece over the model's own vocabulary; no
    special tokens. The model's tokenizer does the splitting and WordPiece after its input was normalised so."""
    from tokenizers.normalizers import BertNormalizer

    norm = BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True)
    return list(tokenizer(norm.normalize_str(text), add_special_tokens=False)["input_ids"])


def _forward(enc, ids: list[list[int]]):
    """Last-layer hidden states of id sequences (right-padded, masked), as float tensors (n, T, d)."""
    import torch

    width = max(len(x) for x in ids)
    batch = {"input_ids": torch.tensor([x + [enc.pad_id] * (width - len(x)) for x in ids]),
             "attention_mask": torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])}
    if enc.token_types:
        batch["token_type_ids"] = torch.zeros_like(batch["input_ids"])
    batch = {k: v.to(enc.device) for k, v in batch.items()}
    return enc._hidden(batch).float()


def _first_token(enc, texts: list[str], ids: list[list[int]]):
    """Each text's vector at position 0 of its ids (no [CLS] before it): batched by length."""
    from .base import EncodeResult

    enc.tokenizer    # noqa: B018 - loads the model (pad id, token types) on first use
    out = np.full((len(texts), enc.dim), np.nan, np.float32)
    missing = np.array([not x for x in ids], dtype=bool)        # nothing left to encode
    order = sorted((i for i in range(len(texts)) if ids[i]), key=lambda i: len(ids[i]))
    for b in range(0, len(order), enc.batch_size):
        rows = order[b:b + enc.batch_size]
        h = _forward(enc, [ids[i] for i in rows])
        out[rows] = h[:, 0].cpu().numpy()
    return EncodeResult(out, missing)


# ------------------------------------------------------------------------------------------------------ tan2019
def tan2019_positions(tokenizer, text: str, span: tuple[int, int]) -> tuple[list[int], int] | None:
    """The ids Tan & Celis's GPT/GPT-2 ``encode_c_word`` runs and the position whose vector it keeps, or None
    where their code finds no word of the stimulus (it would stop at ``assert(idx is not None)``).

    ``tokens = text[:-1].split()``; the word is the last of those tokens that is (a piece of) the stimulus (we
    take the last token overlapping the stimulus's span); each token is tokenised on its own; the model reads
    the ids padded with 0 (no attention mask; a causal model's states before the padding do not depend on it);
    the kept position is ``1 + sum(lengths of the tokens before the word)``."""
    body = text[:-1]
    pieces, at = [], 0
    for tok in body.split():
        start = body.index(tok, at)
        at = start + len(tok)
        pieces.append((tok, start, at))
    idx = None
    for i, (_, s, e) in enumerate(pieces):
        if s < span[1] and e > span[0]:
            idx = i
    if idx is None:
        return None
    lengths, ids = [], []
    for tok, _, _ in pieces:
        sub = list(tokenizer(tok, add_special_tokens=False)["input_ids"])
        lengths.append(len(sub))
        ids += sub
    if not lengths[idx]:
        return None
    return ids + [0], 1 + sum(lengths[:idx])        # one padding id after the text: the last word's 'next' position


def _tan2019_cword(enc, texts: list[str], spans: list[tuple[int, int]]):
    from .base import EncodeResult

    enc.tokenizer    # noqa: B018 - loads the model on first use
    out = np.full((len(texts), enc.dim), np.nan, np.float32)
    found = [tan2019_positions(enc.tokenizer, t, s) for t, s in zip(texts, spans)]
    missing = np.array([f is None or len(f[0]) > enc.max_length for f in found], dtype=bool)
    order = sorted((i for i in range(len(texts)) if not missing[i]), key=lambda i: len(found[i][0]))
    for b in range(0, len(order), enc.batch_size):
        rows = order[b:b + enc.batch_size]
        h = _forward(enc, [found[i][0] for i in rows])
        pos = [found[i][1] for i in rows]
        out[rows] = h[np.arange(len(rows)), pos].cpu().numpy()
    return EncodeResult(out, missing)
