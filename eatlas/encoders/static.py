"""Static word vectors: a text is the mean of its in-vocabulary words' vectors (CBoW, May et al. 2019).

Read from a registered package (gensim KeyedVectors, or a vocabulary and a .npy matrix) or from a
word2vec/GloVe file given as --model.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import EatlasError
from .base import ENCODER_VERSION, Backend, Encoder, EncodeResult, _file_fingerprint, register_backend

_WORD_RE = re.compile(r"[\w'-]+", re.UNICODE)


class StaticEncoder(Encoder):
    """Word vectors; a text is the mean of its in-vocabulary words' vectors (CBoW, May et al.).

    A stimulus itself must be fully in the vocabulary (``covers``): the runner drops a stimulus whose
    own words are missing, at every level, so a sentence is never represented by its template alone.
    """

    def __init__(self, words: list[str] | Callable[[], list[str]], vectors: np.ndarray, *, model_id: str,
                 family: str, fingerprint: str, lowercase: bool, coverage_cached: bool = False):
        """``words``: the vocabulary, or a function that reads it (a registered package's, read on first use: a
        warm run, whose vectors and coverage the cache holds, never reads it). ``coverage_cached``: the
        fingerprint names this vocabulary (a registered package's), so which stimuli it covers may be cached."""
        self._words = words
        self._index: dict[str, int] | None = None
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.lowercase = lowercase
        self.coverage_cached = coverage_cached
        super().__init__(model_id=model_id, fingerprint=fingerprint, family=family, pooling="cbow",
                         info={"lowercase": lowercase, "vocab_size": int(self.vectors.shape[0])})

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            words = self._words() if callable(self._words) else self._words
            if len(words) != self.vectors.shape[0]:
                raise EatlasError(f"the vocabulary has {len(words)} words, the vectors {self.vectors.shape[0]} rows",
                                  obj=self.model_id, hint="reinstall the model's package")
            self._index = {w: i for i, w in enumerate(words)}
        return self._index

    def cache_key(self, mode: str) -> dict:
        return {"encoder": "static", "code": ENCODER_VERSION, "fingerprint": self.fingerprint, "mode": mode,
                "lowercase": self.lowercase}

    def coverage_key(self) -> dict | None:
        return ({"encoder": "static", "code": ENCODER_VERSION, "fingerprint": self.fingerprint,
                 "lowercase": self.lowercase} if self.coverage_cached else None)

    def _lookup(self, w: str) -> int | None:
        for cand in ((w.lower(),) if self.lowercase else (w, w.lower())):
            i = self.index.get(cand)
            if i is not None:
                return i
        return None

    def _ids(self, text: str) -> tuple[list[int], list[str]]:
        """Vocabulary rows of a text and its out-of-vocabulary words."""
        whole = self._lookup(text)    # a stimulus listed as one entry (e.g. "short-term") first
        if whole is not None:
            return [whole], []
        ids, oov = [], []
        for w in _WORD_RE.findall(text):
            i = self._lookup(w)
            (oov.append(w) if i is None else ids.append(i))
        return ids, oov

    def encode_items(self, texts: list[str], spans: list[tuple[int, int] | None]) -> EncodeResult:
        self.calls += 1
        out = np.full((len(texts), self.vectors.shape[1]), np.nan, dtype=np.float32)
        missing = np.zeros(len(texts), dtype=bool)
        for n, (t, sp) in enumerate(zip(texts, spans)):
            ids, _ = self._ids(t if sp is None else t[sp[0]:sp[1]])
            if ids:
                out[n] = self.vectors[ids].mean(0)
            else:
                missing[n] = True
        return EncodeResult(out, missing)

    def encode(self, texts: list[str]) -> EncodeResult:
        return self.encode_items(texts, [None] * len(texts))

    def encode_spans(self, texts, spans):
        return self.encode_items(texts, list(spans))

    def covers(self, stimuli: list[str]) -> np.ndarray:
        return np.array([bool(ids) and not oov for ids, oov in map(self._ids, stimuli)], dtype=bool)


def _read_keyed_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors
    kv = KeyedVectors.load(str(path))
    return list(kv.index_to_key), np.asarray(kv.vectors)


def read_vectors(p: Path) -> tuple[list[str], np.ndarray]:
    """word2vec binary (.bin), word2vec text (header line) or GloVe text (no header)."""
    from gensim.models import KeyedVectors
    try:
        if p.name.endswith((".bin", ".bin.gz")):
            kv = KeyedVectors.load_word2vec_format(str(p), binary=True)
        else:
            with p.open(encoding="utf-8") as f:
                first = f.readline().split()
            no_header = not (len(first) == 2 and all(x.isdigit() for x in first))
            kv = KeyedVectors.load_word2vec_format(str(p), binary=False, no_header=no_header)
    except (ValueError, UnicodeDecodeError, EOFError, TypeError, IndexError) as e:   # gensim on empty/odd files
        raise EatlasError(f"not a readable word2vec/GloVe vector file: {type(e).__name__}: {e}", file=str(p),
                          hint="one word and its numbers per line (word2vec text may start with 'COUNT DIM'), "
                               "or a word2vec .bin") from None
    if not len(kv.index_to_key):
        raise EatlasError("the vector file holds no vectors", file=str(p))
    return list(kv.index_to_key), np.asarray(kv.vectors)


@register_backend
class StaticBackend(Backend):
    """Word vectors: a registered package's (gensim KeyedVectors, a vocabulary parquet and a .npy matrix, or a
    word2vec file), or a word2vec/GloVe file given as --model."""
    name = "static"
    rank = 90
    weights = (("keyed_vectors",), ("vectors", "vocab"), ("word2vec",))

    def accepts(self, path: Path) -> bool:
        return path.is_file()

    @staticmethod
    def refuse_options(model: str, opts: dict) -> None:
        """Options a static model has no use for are refused, not recorded and ignored: a word or sentence is
        the (mean of its words') vector, whatever --pooling, --layer or --subword say."""
        for name, flag in (("pooling", "--pooling"), ("layer", "--layer"), ("subword", "--subword")):
            if opts.get(name) is not None:
                raise EatlasError(f"{flag} applies to transformers models; {model} is a static vector model, which "
                                  f"has no {name} (a sentence is the mean of its words' vectors)", field=flag,
                                  hint=f"leave out {flag}")

    def from_entry(self, entry: dict, base: Path, fingerprint: str, **opts) -> Encoder:
        self.refuse_options(entry["id"], opts)
        w = entry["weights"]
        if "keyed_vectors" in w:
            words, vecs = _read_keyed_vectors(base / w["keyed_vectors"])
        elif "word2vec" in w:           # a word2vec file inside the package (.bin: binary; else text)
            words, vecs = read_vectors(base / w["word2vec"])
        else:           # a vocabulary (parquet) and a matrix (.npy, mapped): the vocabulary read on first use
            def words() -> list[str]:
                import pyarrow.parquet as pq
                return pq.read_table(base / w["vocab"]).column("index").to_pylist()
            vecs = np.load(base / w["vectors"], mmap_mode="r")
        return StaticEncoder(words, vecs, model_id=entry["id"], family=entry.get("family", "static"),
                             fingerprint=fingerprint, lowercase=bool(entry.get("lowercase", False)),
                             coverage_cached=True)

    def from_path(self, path: Path, **opts) -> Encoder:
        self.refuse_options(str(path), opts)
        words, vecs = read_vectors(path)
        return StaticEncoder(words, vecs, model_id=str(path), family="static", fingerprint=_file_fingerprint(path),
                             lowercase=False)
