"""The papers' models recognised by hub id and configuration, and the authors' encoders as their code ran.

``registry/<paper>/published/models.yaml`` says which hub ids (and configuration facts) are the model a paper
printed, and which encoding its authors' code really used; eatlas.encoders.identity.match is the one rule
that pairs a run with a printed number (view ``reproduction``) or only loosely (``reproduction_loose``, with
``differs``). The rule is checked on configurations alone (a config.json of bert-large-cased's shape, no
weights), through the store's views with runs written directly, and end to end: ``eatlas run --model ORG/NAME``
of tiny random-weight models in a Hugging Face cache, whose entry a test registry's models.yaml holds.

Nothing here reaches the network: HF_HUB_OFFLINE is set and every socket connection raises (conftest.py's
``no_network``); the hub models are tiny random-weight ones laid into a Hugging Face cache of the test's own
(tests/hub_cache.py).
"""
from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import pytest

from eatlas.cli import main
from eatlas.encoders import load_encoder
from eatlas.encoders.authors import sent_bias_ids, tan2019_positions
from eatlas.encoders.hf import config_facts
from eatlas.encoders.identity import hub_key, match, read_published_models
from eatlas.registry import load_registry

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EATLAS_SHARED", ROOT.parent / "shared"))
SEEDS = Path(os.environ.get("EATLAS_SEEDS", SHARED / "seeds"))
SEED_OF = {"may2019": "003_99cd53c0bb98bfb1.txt", "tan2019": "002_ed51d556fba8b59e.txt",
           "wolfe2024": "004_1bef118f359bb038.txt"}


@pytest.fixture(autouse=True)
def _offline(no_network, monkeypatch, tmp_path):
    """No test here can download (tests/conftest.py, fixture no_network); each has its own embedding cache."""
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))


# ------------------------------------------------------------------------------------------------ tiny models
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "This", "this", "is", "Katie", "katie", "Kat", "##ie", ".",
         "a", "rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea", "happy", "gentle", "lucky", "honest",
         "ugly", "rotten", "sick", "evil", "That", "that", "here"]


def _cased_bert(out: Path, layers: int = 2, seed: int = 0) -> Path:
    """A random-weight BERT with a cased WordPiece vocabulary that holds 'Katie' and 'katie' as two tokens."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}, do_lower_case=False).save_pretrained(out)
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=64)).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def cased_bert(tmp_path_factory) -> Path:
    return _cased_bert(tmp_path_factory.mktemp("cased-bert"))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> Path:
    """A random-weight GPT-2 with a byte-level BPE trained on a few sentences."""
    from tests.hub_cache import tiny_gpt2

    return tiny_gpt2(tmp_path_factory.mktemp("gpt2"),
                     sentences=("This is a rose.", "That is Katie here.", "Katie is a person."))


# ---------------------------------------------------------------------------------- the rule, on configs alone
def _pubs() -> dict:
    """(paper, printed model) -> what models.yaml states, missing fields as None."""
    import pandas as pd

    df = read_published_models(load_registry(None))
    return {(r["paper"], r["model"]): {k: (None if not isinstance(v, list) and pd.isna(v) else v) for k, v in r.items()}
            for r in df.to_dict("records")}


PUBS = _pubs()


def _configured(tmp_path: Path, name: str, config: dict, tokenizer_config: dict | None = None) -> dict:
    """The configuration facts of a folder holding only config.json (and tokenizer_config.json): no weights."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if tokenizer_config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    return _facts(folder)


def _facts(folder: Path) -> dict:
    """What a run records as model_config for a folder (eatlas.encoders.hf.config_facts)."""
    tok = folder / "tokenizer_config.json"
    return config_facts(folder, json.loads((folder / "config.json").read_text()),
                        json.loads(tok.read_text()) if tok.is_file() else {})


BERT_LARGE_CASED = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 1024,
                    "num_hidden_layers": 24, "num_attention_heads": 16, "vocab_size": 28996}
GPT2_BASE = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_layer": 12,
             "n_head": 12, "vocab_size": 50257}


def _run(hub_id, config, *, family="unknown", encoding="standard", pooling="mean", subword="last", layer="-1"):
    return {"model_family": family, "model_hub_id": hub_id, "model_config": json.dumps(config),
            "encoding": encoding, "pooling": pooling, "subword": subword, "layer": layer,
            "model_dimension": config.get("hidden_size")}


def test_hub_ids_compare_without_the_hubs_legacy_organisation():
    assert hub_key("google-bert/bert-large-cased") == hub_key("bert-large-cased") == "bert-large-cased"
    assert hub_key("Bert-Large-Cased@main") == "bert-large-cased"
    assert hub_key("openai-community/gpt2") == hub_key("gpt2")
    assert hub_key("FacebookAI/xlm-roberta-base") == "xlm-roberta-base"
    assert hub_key("someone/gpt2") != hub_key("gpt2")            # another organisation's copy is another model
    assert hub_key(None) is None and hub_key("") is None


def test_a_papers_hub_id_with_the_papers_configuration_pairs_and_a_mismatch_does_not(tmp_path):
    may_bert = PUBS[("may2019", "BERT")]
    facts = _configured(tmp_path, "blc", BERT_LARGE_CASED, {"do_lower_case": False})
    ours = _run("google-bert/bert-large-cased", facts, encoding="sent-bias", pooling="first")
    for level in ("word", "sent", "sent(u)"):
        m = match(ours, may_bert, level)
        assert m.same_model and m.differs is None and m.match == "same_model"
    # the hub's legacy id is the same model
    assert match({**ours, "model_hub_id": "bert-large-cased"}, may_bert, "word").same_model
    # bert-base's configuration under the paper's id: not the paper's model
    base = _configured(tmp_path, "bbc", {**BERT_LARGE_CASED, "hidden_size": 768, "num_hidden_layers": 12},
                       {"do_lower_case": False})
    m = match({**ours, "model_config": json.dumps(base)}, may_bert, "word")
    assert not m.same_model and m.differs == "num_hidden_layers 12 vs 24; hidden_size 768 vs 1024"
    # an uncased tokenizer is not the cased model
    uncased = _configured(tmp_path, "blu", BERT_LARGE_CASED, {"do_lower_case": True})
    assert match({**ours, "model_config": json.dumps(uncased)}, may_bert, "word").differs == \
        "do_lower_case true vs false"
    # the paper's model, encoded the standard way, is not what sent-bias's encoder computed
    m = match({**ours, "encoding": "standard", "pooling": "cls"}, may_bert, "sent")
    assert not m.same_model and m.differs == "encoding standard vs sent-bias"
    # a fine-tuned copy under another name (a hub model of the paper's model_type, whatever its family): loose
    # only, saying why
    for family in ("bert", "unknown"):
        m = match({**ours, "model_hub_id": "someone/bert-large-cased-finetuned-sst2", "model_family": family},
                  may_bert, "word")
        assert m.match == "same_family" and m.differs == "hub id someone/bert-large-cased-finetuned-sst2 vs " \
                                                        "bert-large-cased"
    # nothing in common: no family, another hub id of another model_type
    gpt = _configured(tmp_path, "gpt", {"model_type": "openai-gpt", "n_layer": 12, "n_embd": 768})
    assert match({**ours, "model_hub_id": "someone/other", "model_config": json.dumps(gpt)}, may_bert, "word") is None


def test_gpt2_and_gpt_pair_by_pooling_and_encoding(tmp_path):
    facts = _configured(tmp_path, "gpt2", GPT2_BASE)
    last = _run("openai-community/gpt2", facts, family="gpt2", pooling="last")
    # ML-EAT: the last token of the top layer
    assert match(last, PUBS[("wolfe2024", "GPT-2 Base")], "sent").same_model
    assert match({**last, "pooling": "mean"}, PUBS[("wolfe2024", "GPT-2 Base")], "sent").differs == \
        "pooling mean vs last"
    assert match(last, PUBS[("wolfe2024", "GPT-2 XL")], "sent").differs == \
        "hub id openai-community/gpt2 vs gpt2-xl; num_hidden_layers 12 vs 48; hidden_size 768 vs 1600"
    # Tan & Celis: word and sentence levels as the paper says; c-word only with their own encoder
    tan = PUBS[("tan2019", "GPT-2 (117M)")]
    assert match(last, tan, "sent").same_model and match(last, tan, "word").same_model
    assert match(last, tan, "c-word").differs == "encoding standard vs tan2019"
    theirs = {**last, "encoding": "tan2019", "subword": "next"}
    assert all(match(theirs, tan, lv).same_model for lv in ("word", "sent", "c-word", "c-word(u)"))
    medium = _configured(tmp_path, "gpt2-medium", {**GPT2_BASE, "n_layer": 24, "n_embd": 1024})
    assert match({**theirs, "model_hub_id": "gpt2-medium", "model_config": json.dumps(medium)},
                 PUBS[("tan2019", "GPT-2 (345M)")], "c-word").same_model
    # openai-gpt: Tan & Celis's sentence level pairs; May et al.'s GPT encoder cannot be read, so nothing does
    gpt = _run("openai-gpt", _configured(tmp_path, "gpt", {"model_type": "openai-gpt", "n_layer": 12, "n_embd": 768}),
               family="openai-gpt", pooling="last")
    assert match(gpt, PUBS[("tan2019", "GPT")], "sent").same_model
    assert match(gpt, PUBS[("may2019", "GPT")], "sent").differs == "encoding standard vs unknown"
    # Tan & Celis's BERT tokenizer casing cannot be told from their repository: no run is theirs
    bbc = _configured(tmp_path, "bbc", {**BERT_LARGE_CASED, "hidden_size": 768, "num_hidden_layers": 12},
                      {"do_lower_case": False})
    m = match(_run("bert-base-cased", bbc, family="bert", pooling="cls"), PUBS[("tan2019", "BERT (bbc)")], "sent")
    assert not m.same_model and m.differs == "encoding standard vs unknown"


def test_static_models_still_pair_by_their_registered_identity():
    glove840 = {"model_family": "glove", "model_name": "GloVe", "model_corpus": "Common Crawl (840B tokens)",
                "model_dimension": 300, "encoding": "standard"}
    for paper, model in (("may2019", "CBoW"), ("tan2019", "CBoW"), ("wolfe2024", "GloVe")):
        assert match(glove840, PUBS[(paper, model)], "word").same_model, (paper, model)
    six = {**glove840, "model_corpus": "Wikipedia 2014 + Gigaword 5 (6B tokens)", "model_dimension": 50}
    assert match(six, PUBS[("wolfe2024", "GloVe")], "word").differs == \
        "corpus Wikipedia 2014 + Gigaword 5 (6B tokens) vs Common Crawl (840B tokens); dimension 50 vs 300"


# --------------------------------------------------------------------------------------- the papers' files
HUB_IDS = {("may2019", "GPT"): ["openai-gpt"], ("may2019", "BERT"): ["bert-large-cased"],
           ("tan2019", "BERT (bbc)"): ["bert-base-cased"], ("tan2019", "BERT (blc)"): ["bert-large-cased"],
           ("tan2019", "GPT"): ["openai-gpt"], ("tan2019", "GPT-2 (117M)"): ["gpt2"],
           ("tan2019", "GPT-2 (345M)"): ["gpt2-medium"], ("wolfe2024", "GPT-2 Base"): ["gpt2"],
           ("wolfe2024", "GPT-2 Medium"): ["gpt2-medium"], ("wolfe2024", "GPT-2 Large"): ["gpt2-large"],
           ("wolfe2024", "GPT-2 XL"): ["gpt2-xl"], ("wolfe2024", "CLIP-ViT-B32"): ["openai/clip-vit-base-patch32"],
           ("wolfe2024", "CLIP-ViT-B16"): ["openai/clip-vit-base-patch16"],
           ("wolfe2024", "CLIP-ViT-L14"): ["openai/clip-vit-large-patch14"],
           ("wolfe2024", "CLIP-ViT-L14-336"): ["openai/clip-vit-large-patch14-336"]}


def test_every_printed_model_names_its_hub_ids_or_says_why_it_has_none():
    from eatlas.store import read_published

    printed = {tuple(r) for r in read_published(load_registry(None))[["paper", "model"]].drop_duplicates().to_numpy()
               if r[0] in SEED_OF and r[1]}
    assert printed == {k for k in PUBS if k[0] in SEED_OF}, "every printed model of the three papers is described"
    for key in printed:
        pub = PUBS[key]
        assert list(pub["hub_ids"] or []) == HUB_IDS.get(key, []), key
        if not pub["hub_ids"]:
            assert pub["no_hub_id"], key
        else:
            assert pub["config"] and pub["config_from"] and pub["code"], key
        for d in json.loads(pub["departures"] or "[]"):
            assert d.get("what") and (d.get("code") or d.get("reported")), (key, d)
    assert PUBS[("may2019", "BERT")]["encoding"] == "sent-bias"
    reported = json.loads(PUBS[("may2019", "BERT")]["departures"])[-1]["reported"]
    assert "issues/1" in reported and "pull/2" in reported and "not re-run here" in reported


def _flat(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"').split())


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' text extractions (EATLAS_SEEDS) are not here")
def test_every_quote_of_a_paper_is_in_its_text():
    """What models.yaml says a paper states (between double quotes in stated_in) is the paper's own words."""
    for (paper, model), pub in PUBS.items():
        if paper not in SEED_OF:
            continue
        text = _flat((SEEDS / SEED_OF[paper]).read_text(encoding="utf-8"))
        for quote in re.findall(r'"([^"]+)"', pub["stated_in"]):
            for piece in quote.split(" ... "):
                assert _flat(piece) in text, f"{paper} {model}: {piece!r} is not in the paper's text"


# ------------------------------------------------------------------------------------ the store's views
def _write(db, reg, rid, *, hub_id, config, encoding, pooling, cells, family="bert"):
    import datetime as dt

    from eatlas.store import write_run
    t = dt.datetime(2026, 11, 22, 10, 0)
    write_run(db, {"run_id": rid, "method": "weat", "model": hub_id, "model_fingerprint": "fp", "model_family": family,
                   "seed": 0, "alpha": 0.01, "started_at": t, "finished_at": t,
                   "levels": sorted({lv for _, lv in cells}), "pooling": pooling, "layer": "-1",
                   "model_hub_id": hub_id, "model_config": json.dumps(config), "encoding": encoding,
                   "model_dimension": config.get("hidden_size")},
              [{"run_id": rid, "test_id": tid, "test_version": "1.0.0", "level": lv, "model": hub_id, "status": "ok",
                "effect_size": d, "p_value": 0.5, "holm_significant": False, "dropped": {}}
               for (tid, lv), d in cells.items()], reg)


def test_the_views_pair_may_et_al_s_bert_only_with_the_sent_bias_encoding(tmp_path, capsys):
    reg = load_registry()
    db = tmp_path / "r.duckdb"
    facts = _configured(tmp_path, "blc", BERT_LARGE_CASED, {"do_lower_case": False})
    cells = {("weat1", "word"): 0.30, ("weat1", "sent"): 0.50}
    _write(db, reg, "sentbias-run", hub_id="bert-large-cased", config=facts, encoding="sent-bias", pooling="first",
           cells=cells)
    _write(db, reg, "standard-run", hub_id="google-bert/bert-large-cased", config=facts, encoding="standard",
           pooling="cls", cells=cells)
    con = duckdb.connect(str(db), read_only=True)
    paired = con.execute("SELECT run_id, level, published_effect_size, our_effect_size FROM reproduction "
                         "WHERE paper = 'may2019' ORDER BY level").fetchall()
    assert paired == [("sentbias-run", "sent", 0.62, 0.50), ("sentbias-run", "word", 0.22, 0.30)]
    loose = con.execute("SELECT DISTINCT run_id, match, differs FROM reproduction_loose WHERE paper = 'may2019' "
                        "AND run_id = 'standard-run'").fetchall()
    assert loose == [("standard-run", "same_family", "encoding standard vs sent-bias")]
    con.close()
    # a store imported elsewhere pairs the same (the import matches the runs it adds)
    other = tmp_path / "other.duckdb"
    assert main(["--db", str(other), "results", "import", str(db)]) == 0
    con = duckdb.connect(str(other), read_only=True)
    assert con.execute("SELECT run_id, level, published_effect_size, our_effect_size FROM reproduction "
                       "WHERE paper = 'may2019' ORDER BY level").fetchall() == paired
    con.close()


# ----------------------------------------------------------------------------------- end to end, tiny models
def _published_registry(mini, facts: dict):
    """The mini registry with a paper printing one number for its test t1 at word level, of model 'TinyBERT',
    whose models.yaml entry names a hub id, the tiny model's configuration and sent-bias's encoding."""
    pub = mini.root / "registry" / "testpaper" / "published"
    pub.mkdir(parents=True)
    with (pub / "table1.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["paper", "table_id", "row_label", "column_label", "statistic", "value", "significance",
                    "missing", "test_id", "level", "model", "model_family", "note"])
        w.writerow(["testpaper", "Table 1", "T1 | word", "TinyBERT", "effect_size", "0.50", "", "false", "t1",
                    "word", "TinyBERT", "bert", "a number printed for the test"])
    (pub / "models.yaml").write_text(json.dumps({"paper": "testpaper", "models": [{
        "model": "TinyBERT", "model_family": "bert", "name": "TinyBERT", "stated_in": 'Table 1: "TinyBERT"',
        "hub_ids": ["test-org/tiny-cased-bert"], "config": facts, "config_from": "the test's own model",
        "encoding": "sent-bias", "code": "the test"}]}), encoding="utf-8")
    return mini.sync()


def _hub_cache(tmp_path, monkeypatch, folders: dict) -> None:
    """A Hugging Face cache (HF_HOME) of this test's own holding ``folders`` (repo id -> [(folder, commit, refs)]),
    laid out as huggingface_hub lays out a download (tests/hub_cache.py)."""
    from hub_cache import put_snapshot
    from huggingface_hub import constants

    home = tmp_path / "hf-home"
    for repo, snapshots in folders.items():
        for folder, commit, refs in snapshots:
            put_snapshot(home / "hub", repo, folder, commit, refs)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))


def _cli_run(mini, db, capsys, model, *extra) -> tuple[str, str]:
    """``eatlas run --model MODEL`` of t1 at word level, offline; the run id and its last printed line."""
    assert main(["--registry", str(mini.root), "--db", str(db), "run", "--model", model, "--offline", "--tests",
                 "t1", "--levels", "word", "--n-samples", "200", "--no-ci", "--no-cache", *extra]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    run_id = next(line.split()[1] for line in out if line.startswith("run ") and " written to " in line)
    return run_id, out[-1]


def test_a_hub_model_under_a_papers_id_pairs_only_with_its_configuration_and_encoding(mini, cased_bert, tmp_path,
                                                                                     monkeypatch, capsys):
    """``eatlas run --model test-org/tiny-cased-bert`` from a Hugging Face cache, offline, three times: with the
    paper's configuration and its authors' encoding (paired), with the standard encoding (loose), and at a
    revision whose configuration has another layer count (loose). About 15 s on the 2-core machine: three
    runs, most of it importing transformers."""
    from hub_cache import commit_id

    facts = {k: v for k, v in _facts(cased_bert).items() if k in ("model_type", "num_hidden_layers", "hidden_size",
                                                                  "do_lower_case")}
    assert facts == {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 32, "do_lower_case": False}
    _published_registry(mini, facts)
    two, three = commit_id(201), commit_id(202)
    _hub_cache(tmp_path, monkeypatch, {"test-org/tiny-cased-bert": [
        (cased_bert, two, ("main",)), (_cased_bert(tmp_path / "three-layers", layers=3), three, ("three-layers",))]})
    db = tmp_path / "r.duckdb"
    theirs, said = _cli_run(mini, db, capsys, "test-org/tiny-cased-bert", "--encoding", "sent-bias")
    assert said.startswith("reproduction: 1 of this run's 1 result(s) pair with a number a paper printed for this "
                           "model")
    standard, said = _cli_run(mini, db, capsys, "test-org/tiny-cased-bert")
    assert said.startswith("reproduction: none of this run's 1 result(s) pairs with a number a paper printed for "
                           "test-org/tiny-cased-bert; 1 pair loosely") and \
        "e.g. differing in: encoding standard vs sent-bias" in said
    deeper, _ = _cli_run(mini, db, capsys, "test-org/tiny-cased-bert@three-layers", "--encoding", "sent-bias")
    con = duckdb.connect(str(db), read_only=True)
    runs = {r[0]: r[1:] for r in con.execute("SELECT run_id, encoding, model_hub_id, model_revision, model_commit, "
                                             "model_config->>'num_hidden_layers' FROM runs").fetchall()}
    assert runs == {theirs: ("sent-bias", "test-org/tiny-cased-bert", None, two, "2"),
                    standard: ("standard", "test-org/tiny-cased-bert", None, two, "2"),
                    deeper: ("sent-bias", "test-org/tiny-cased-bert", "three-layers", three, "3")}
    ours = con.execute("SELECT effect_size FROM results WHERE run_id = ?", [theirs]).fetchone()[0]
    assert con.execute("SELECT run_id, test_id, our_effect_size, published_effect_size FROM reproduction"
                       ).fetchall() == [(theirs, "t1", ours, 0.5)]
    loose = dict(con.execute("SELECT run_id, differs FROM reproduction_loose WHERE match = 'same_family'"
                             ).fetchall())
    assert loose == {standard: "encoding standard vs sent-bias", deeper: "num_hidden_layers 3 vs 2"}
    con.close()


# ------------------------------------------------------------------------------ the encoders, by hand
def test_the_sent_bias_encoding_is_the_first_lower_cased_wordpiece_of_the_last_layer(cased_bert):
    from transformers import BertModel

    ids = [WORDS.index(w) for w in ("this", "is", "katie", ".")]         # lower-cased, no [CLS] or [SEP]
    model = BertModel.from_pretrained(cased_bert).eval()
    with torch.no_grad():
        by_hand = model(input_ids=torch.tensor([ids]), token_type_ids=torch.zeros(1, 4, dtype=torch.long)
                        ).last_hidden_state[0, 0].numpy()
    enc = load_encoder(str(cased_bert), encoding="sent-bias")
    assert sent_bias_ids(enc.tokenizer, "This is Katie.") == ids
    got = enc.encode(["This is Katie.", "That is a rose here.", "This is Katie."])     # batched with a longer text
    np.testing.assert_allclose(got.vectors[0], by_hand, atol=1e-5)
    np.testing.assert_allclose(got.vectors[2], by_hand, atol=1e-5)
    assert (enc.pooling, enc.encoding) == ("first", "sent-bias")
    # the standard encoding reads the cased tokens with [CLS] first: another vector
    std = load_encoder(str(cased_bert), pooling="cls").encode(["This is Katie."]).vectors[0]
    assert not np.allclose(std, by_hand, atol=1e-3)
    # their encoder's vectors are cached apart from the standard ones
    assert enc.cache_key("plain")["encoding"] == "sent-bias" and "encoding" not in load_encoder(
        str(cased_bert)).cache_key("plain")


def test_a_stimulus_the_sent_bias_tokenizer_reads_as_unknown_is_not_encodable(cased_bert):
    """'Kat' is in the cased vocabulary, 'kat' (what sent-bias's lower-casing tokenizer reads) is not: the
    sent-bias encoding drops it as unknown to the tokenizer, as a word out of a static vocabulary."""
    assert list(load_encoder(str(cased_bert)).covers(["Kat", "Katie"])) == [True, True]
    enc = load_encoder(str(cased_bert), encoding="sent-bias")
    assert list(enc.covers(["Kat", "Katie"])) == [False, True]
    assert enc.coverage_key()["encoding"] == "sent-bias"


def test_the_tan2019_encoding_reads_the_position_after_the_words_first_subword(gpt2):
    from transformers import AutoModel, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(gpt2), AutoModel.from_pretrained(gpt2).eval()
    text = "That is Katie here."
    enc = load_encoder(str(gpt2), encoding="tan2019")
    assert (enc.pooling, enc.subword) == ("last", "next")
    words = ["That", "is", "Katie", "here"]                              # text[:-1].split(), each on its own
    pieces = [tok(w, add_special_tokens=False)["input_ids"] for w in words]
    ids = [i for p in pieces for i in p] + [0]                          # padded with id 0 after the text
    with torch.no_grad():
        h = model(input_ids=torch.tensor([ids])).last_hidden_state[0].numpy()
    for k, word in enumerate(words):
        start = text.index(word)
        pos = 1 + sum(len(p) for p in pieces[:k])
        assert tan2019_positions(tok, text, (start, start + len(word))) == (ids, pos)
        got = enc.encode_spans([text], [(start, start + len(word))]).vectors[0]
        np.testing.assert_allclose(got, h[pos], atol=1e-5)
    # word and sentence levels: the standard encoding's last token
    np.testing.assert_allclose(enc.encode([text]).vectors[0],
                               load_encoder(str(gpt2), pooling="last").encode([text]).vectors[0], atol=1e-6)


# ------------------------------------------------------------------------------------ the option's errors
def _one_line(rc, err, *needles):
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


@pytest.mark.parametrize("extra, needles", [
    (["--encoding", "nonsense"], ["unknown encoding 'nonsense'", "standard, sent-bias, tan2019"]),
    (["--encoding", "sent-bias", "--levels", "c-word"], ["sent-bias encoding encodes whole texts", "c-word"]),
    (["--encoding", "sent-bias", "--pooling", "cls"], ["--pooling does not apply to the sent-bias encoding"]),
    (["--encoding", "tan2019", "--layer", "2"], ["reads the last layer"]),
    (["--encoding", "tan2019", "--levels", "word"], ["tan2019 encoding is Tan & Celis", "model_type 'bert'"]),
])
def test_an_encoding_the_run_cannot_use_is_one_line_and_writes_nothing(tmp_path, capsys, extra, needles):
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--tests", "weat1", "--n-samples", "200", "--quiet", *extra])
    _one_line(rc, capsys.readouterr().err, *needles)
    assert not db.exists()


@pytest.mark.parametrize("entry, field, needle", [
    ({"hub_ids": "bert-large-cased"}, "models[0].hub_ids", "hub_ids must be a list of hub ids"),
    ({"hub_ids": []}, "models[0].no_hub_id", "hub_ids is empty: say why in no_hub_id"),
    ({"hub_ids": ["bert-large-cased"], "config": {"layers": 24}}, "models[0].config.layers",
     "unknown configuration fact 'layers'"),
    ({"hub_ids": ["bert-large-cased"], "encoding": "sentbias"}, "models[0].encoding", "unknown encoding 'sentbias'"),
])
def test_a_broken_models_file_is_named_by_validate_and_refused_before_a_run(mini, tmp_path, capsys, entry, field,
                                                                           needle):
    pub = mini.root / "registry" / "testpaper" / "published" / "models.yaml"
    pub.parent.mkdir(parents=True)
    pub.write_text(json.dumps({"paper": "testpaper", "models": [{"model": "TinyBERT", "stated_in": "Table 1",
                                                                 **entry}]}), encoding="utf-8")
    assert main(["--registry", str(mini.root), "validate"]) == 1
    err = capsys.readouterr().err
    assert "registry/testpaper/published/models.yaml" in err and field in err and needle in err
    db = tmp_path / "r.duckdb"
    rc = main(["--registry", str(mini.root), "--db", str(db), "run", "--tests", "t1", "--levels", "word", "--quiet"])
    _one_line(rc, capsys.readouterr().err, "models.yaml", field, needle)
    assert not db.exists()


def test_the_papers_models_can_be_queried_before_any_run(tmp_path, capsys):
    """Which hub id a paper's model is, before the first run wrote a results file."""
    db = tmp_path / "none.duckdb"
    assert main(["--db", str(db), "sql", "SELECT model, hub_ids, encoding FROM published_models WHERE paper = "
                 "'may2019' AND model = 'BERT'", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"model": "BERT", "hub_ids": ["bert-large-cased"],
                                                    "encoding": "sent-bias"}]
    assert not db.exists()
