"""Models named by their Hugging Face hub id (issue 22, parts 1 and 4), never the network.

Every test here runs on a hub cache built on disk (fixture ``hf_cache``, tests/hub_cache.py: tiny random-weight
models laid out as huggingface_hub lays out a download) with HF_HUB_OFFLINE=1 and every socket connection
refused (fixture ``no_network``). The few tests of what happens online replace ``HfApi.model_info`` and
``snapshot_download`` with stand-ins: no test can download.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pytest

from eatlas.cli import main
from eatlas.encoders import load_encoder
from eatlas.encoders.identity import run_columns
from eatlas.errors import EatlasError
from eatlas.run.runner import RunConfig, evaluate
from tests.conftest import ROOT, MiniRegistry, make_set, make_test
from tests.hub_cache import HINDI, custom_code_model, pickle_bomb_model

torch = pytest.importorskip("torch")
TEXTS = ["This is a rose.", "aster", "A caterpillar is here, and it is eating a leaf."]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "eatlas-cache"))


def _cli(capsys, *args) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    return rc, cap.out, cap.err


def _one_line_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------- loading by id
def test_loading_by_id_gives_the_vectors_of_automodel_on_the_same_cache(hf_cache):
    from transformers import AutoModel, AutoTokenizer
    enc = load_encoder("tiny-org/tiny-bert")
    got = enc.encode(TEXTS).vectors
    tok = AutoTokenizer.from_pretrained("tiny-org/tiny-bert", cache_dir=hf_cache.cache, local_files_only=True)
    model = AutoModel.from_pretrained("tiny-org/tiny-bert", cache_dir=hf_cache.cache, local_files_only=True).eval()
    for text, row in zip(TEXTS, got):
        batch = tok(text, return_tensors="pt")
        with torch.no_grad():
            h = model(**batch).last_hidden_state[0]
        np.testing.assert_allclose(row, h.mean(0).numpy(), atol=1e-5)    # mean pooling, special tokens included
    assert enc.model_hub_id == "tiny-org/tiny-bert" and enc.model_commit == hf_cache.commits["bert-b"]


def test_a_sentence_transformers_id_gives_the_vectors_of_sentence_transformers(hf_cache):
    from sentence_transformers import SentenceTransformer
    enc = load_encoder("tiny-org/tiny-st")
    assert (enc.pooling, enc.normalize, enc.max_length) == ("mean", True, 64)       # its modules, as a folder's
    st = SentenceTransformer("tiny-org/tiny-st", cache_folder=str(hf_cache.cache), local_files_only=True,
                             device="cpu")
    np.testing.assert_allclose(enc.encode(TEXTS).vectors, st.encode(TEXTS), atol=1e-5)


def test_two_commits_of_one_id_are_two_fingerprints_and_the_run_records_both(hf_cache):
    main_, tag = load_encoder("tiny-org/tiny-bert"), load_encoder("tiny-org/tiny-bert@v1")
    by_commit = load_encoder(f"tiny-org/tiny-bert@{hf_cache.commits['bert-a']}")
    assert main_.fingerprint != tag.fingerprint == by_commit.fingerprint
    a, b = run_columns(tag), run_columns(main_)
    assert (a["model_hub_id"], a["model_revision"], a["model_commit"]) == \
        ("tiny-org/tiny-bert", "v1", hf_cache.commits["bert-a"])
    assert (b["model_revision"], b["model_commit"]) == (None, hf_cache.commits["bert-b"])
    # the recorded hash is the weight file's own sha256 (huggingface_hub names an LFS blob by it)
    weights = (hf_cache.models["bert-a"] / "model.safetensors").read_bytes()
    assert json.loads(a["model_weights_sha256"]) == {"model.safetensors": hashlib.sha256(weights).hexdigest()}
    assert json.loads(a["model_config"]) == {"model_type": "bert", "architectures": ["BertModel"],
                                             "num_hidden_layers": 2, "hidden_size": 32, "vocab_size": 30522,
                                             "do_lower_case": True}
    # different weights, different vectors: the embedding cache keeps the two commits apart
    assert not np.allclose(main_.encode(["rose"]).vectors, tag.encode(["rose"]).vectors)


def test_a_gpt2_config_records_its_layers_and_width_under_the_common_names(hf_cache):
    """GPT-2's config.json says n_layer and n_embd; model_config says num_hidden_layers and hidden_size, as for
    BERT, so a paper's facts compare alike."""
    cfg = json.loads(run_columns(load_encoder("tiny-org/tiny-gpt2-bin"))["model_config"])
    assert cfg == {"model_type": "gpt2", "num_hidden_layers": 2, "hidden_size": 32, "vocab_size": 292,
                   "do_lower_case": False}


def test_a_folder_whose_name_holds_an_at_sign_is_still_a_folder(hf_cache, tmp_path):
    import shutil
    folder = tmp_path / "my@model"
    shutil.copytree(hf_cache.models["bert-a"], folder)
    enc = load_encoder(str(folder))
    assert enc.model_hub_id is None and enc.model_id == str(folder)
    np.testing.assert_allclose(enc.encode(["rose"]).vectors, load_encoder("tiny-org/tiny-bert@v1").encode(
        ["rose"]).vectors, atol=1e-6)


def test_held_out_check_a_fresh_process_runs_a_cached_id_offline(hf_cache, tmp_path):
    """As the issue's check: HF_HOME holding a tiny model under ORG/NAME, HF_HUB_OFFLINE=1, a new process (two
    processes that import torch: the one test here over 10 s, because the environment is what it checks)."""
    env = {**os.environ, "HF_HOME": str(hf_cache.home), "HF_HUB_OFFLINE": "1",
           "EATLAS_CACHE": str(tmp_path / "c"), "COLUMNS": "200"}
    env.pop("HF_HUB_CACHE", None)
    db = tmp_path / "r.duckdb"
    run = [sys.executable, "-m", "eatlas", "--db", str(db), "run", "--tests", "weat1", "--levels", "word,sent",
           "--n-samples", "2000"]
    p = subprocess.run([*run, "--model", "tiny-org/tiny-wordpiece"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert _rows(db, "SELECT level, status FROM results ORDER BY level") == [("sent", "ok"), ("word", "ok")]
    assert _rows(db, "SELECT model_hub_id, model_revision, model_commit FROM runs") == [
        ("tiny-org/tiny-wordpiece", None, hf_cache.commits["wordpiece"])]
    p = subprocess.run([*run, "--model", "tiny-org/not-cached"], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line, = p.stderr.strip().splitlines()
    assert "option --model: 'tiny-org/not-cached' is no registered model or local path" in line
    assert "hf download tiny-org/not-cached" in line
    assert len(_rows(db, "SELECT * FROM runs")) == 1


# ------------------------------------------------------------------------------------ refusals: one line each
def _custom(hf_cache, tmp_path):
    marker = tmp_path / "pwned"
    hf_cache.put("tiny-org/custom", custom_code_model(tmp_path / "custom", marker, hf_cache.models["bert-a"]),
                 "c" * 40)
    return marker


def _bomb(hf_cache, tmp_path):
    marker = tmp_path / "pwned"
    hf_cache.put("tiny-org/bomb", pickle_bomb_model(tmp_path / "bomb", marker, hf_cache.models["bert-a"]),
                 "b" * 40)
    return marker


REFUSALS = {
    "not cached": ("tiny-org/not-cached", None, ["'tiny-org/not-cached' is no registered model", "HF_HUB_OFFLINE",
                                                 "hf download tiny-org/not-cached"]),
    "bare name not cached": ("bert-base-uncased", None, ["'bert-base-uncased' is no registered model or local path, "
                                                         "so it was read as a Hugging Face hub id",
                                                         "your Hugging Face cache",
                                                         "hf download bert-base-uncased"]),
    "revision not cached": ("tiny-org/tiny-bert@nope", None, ["revision 'nope' of tiny-org/tiny-bert",
                                                              "main 78b3ba12002f", "v1 0f98b1f7eda3",
                                                              "hf download tiny-org/tiny-bert --revision nope"]),
    "no weights a backend loads": ("tiny-org/tf-only", None, ["tiny-org/tf-only", "no weights EATlas can load",
                                                              "flax_model.msgpack, tf_model.h5"]),
    "custom code": ("tiny-org/custom", _custom, ["tiny-org/custom needs its own custom code",
                                                 "--trust-remote-code tiny-org/custom"]),
    "pickle that runs code": ("tiny-org/bomb", _bomb, ["could not load the model", "Unpickl"]),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_each_refusal_is_one_line_exit_2_and_writes_nothing(case, hf_cache, tmp_path, capsys):
    model, setup, needles = REFUSALS[case]
    marker = setup(hf_cache, tmp_path) if setup else None
    before, db = hf_cache.files(), tmp_path / "r.duckdb"
    rc, _, err = _cli(capsys, "--db", db, "run", "--model", model, "--tests", "weat1", "--levels", "word",
                      "--n-samples", "200", "--quiet")
    _one_line_error(rc, err, *needles)
    assert not db.exists() and hf_cache.files() == before
    assert not any((tmp_path / "eatlas-cache").rglob("*.npz"))         # no vector, no coverage answer cached
    assert marker is None or not marker.exists()        # the repository's code never ran


def test_the_pickle_of_the_refusal_test_does_run_code_when_unpickled(tmp_path):
    """The test above can fail: unpickled without torch's weights_only loader, the file writes its marker."""
    marker, base = tmp_path / "ran", tmp_path / "base"
    base.mkdir()
    bomb = pickle_bomb_model(tmp_path / "m", marker, base)
    assert not marker.exists()
    pickle.loads((bomb / "pytorch_model.bin").read_bytes())
    assert marker.read_text() == "ran"


def test_pickled_weights_load_only_through_torchs_weights_only_loader(hf_cache, monkeypatch):
    from transformers import AutoModel, AutoTokenizer
    calls = []
    real = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("weights_only"))
        return real(*args, **kwargs)
    monkeypatch.setattr(torch, "load", spy)
    enc = load_encoder("tiny-org/tiny-gpt2-bin")
    got = enc.encode(["This is a rose."]).vectors[0]
    assert enc.info["hub"]["weights_format"] == "bin" and calls and all(w is True for w in calls)
    monkeypatch.setattr(torch, "load", real)
    tok = AutoTokenizer.from_pretrained("tiny-org/tiny-gpt2-bin", cache_dir=hf_cache.cache, local_files_only=True)
    model = AutoModel.from_pretrained("tiny-org/tiny-gpt2-bin", cache_dir=hf_cache.cache, local_files_only=True)
    with torch.no_grad():
        h = model(**tok("This is a rose.", return_tensors="pt")).last_hidden_state[0]
    np.testing.assert_allclose(got, h.mean(0).numpy(), atol=1e-5)


def test_trust_remote_code_must_name_the_hub_id(hf_cache, tmp_path, capsys):
    marker = _custom(hf_cache, tmp_path)
    db = tmp_path / "r.duckdb"
    run = ["--db", db, "run", "--model", "tiny-org/custom@main", "--tests", "weat1", "--levels", "word", "--quiet"]
    rc, _, err = _cli(capsys, *run, "--trust-remote-code", "tiny-org/other")
    _one_line_error(rc, err, "--trust-remote-code names 'tiny-org/other'")
    assert not marker.exists()
    # naming it (with or without its revision) lets its code run: here it writes the marker, then builds no model
    rc, _, err = _cli(capsys, *run, "--trust-remote-code", "tiny-org/custom")
    assert rc == 2 and marker.read_text() == "ran" and not db.exists()


# ----------------------------------------------------------------------------------- online, with stand-ins
def _http_error(cls, status: int):
    import httpx2
    request = httpx2.Request("GET", "https://huggingface.co/api/models/x")
    return cls(f"{status} error", response=httpx2.Response(status, request=request))


@pytest.fixture
def online(hf_cache, monkeypatch):
    """Downloads on (HF_HUB_OFFLINE unset), sockets still refused: model_info and snapshot_download are stand-ins."""
    import huggingface_hub
    from huggingface_hub import constants
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    calls = SimpleNamespace(info=[], download=[], listing=None, error=None)
    real_download = huggingface_hub.snapshot_download

    def model_info(self, repo_id, revision=None, **kwargs):
        calls.info.append((repo_id, revision))
        if calls.error is not None:
            raise calls.error
        return calls.listing

    def snapshot_download(repo_id, **kwargs):
        calls.download.append((repo_id, kwargs))
        if kwargs.get("local_files_only"):
            return real_download(repo_id, **kwargs)
        # "downloaded": the files are already in this cache, under the listed commit
        return str(hf_cache.cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / calls.listing.sha)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", model_info)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    return calls


def _listing(sha: str, files: dict, config: dict | None = None):
    sib = [SimpleNamespace(rfilename=f, lfs=SimpleNamespace(sha256=h) if h else None) for f, h in files.items()]
    return SimpleNamespace(id="tiny-org/tiny-bert", sha=sha, siblings=sib, config=config or {"model_type": "bert"})


def test_online_a_download_fetches_the_safetensors_and_not_the_pickles(online, hf_cache):
    online.listing = _listing(hf_cache.commits["bert-b"], {
        "config.json": None, "tokenizer.json": None, "README.md": None, "model.safetensors": "ab" * 32,
        "pytorch_model.bin": "cd" * 32, "tf_model.h5": "ef" * 32, "onnx/model.onnx": "01" * 32})
    enc = load_encoder("tiny-org/tiny-bert@main")
    assert online.info == [("tiny-org/tiny-bert", "main")]
    (repo, kw), = online.download
    assert repo == "tiny-org/tiny-bert" and kw["revision"] == "main" and not kw.get("local_files_only")
    assert "model.safetensors" in kw["allow_patterns"] and "config.json" in kw["allow_patterns"]
    assert not {"pytorch_model.bin", "tf_model.h5", "*.py"} & set(kw["allow_patterns"])
    assert enc.model_weights_sha256 == {"model.safetensors": "ab" * 32}      # the hub's own LFS metadata
    assert enc.model_commit == hf_cache.commits["bert-b"]


def test_offline_flag_never_asks_the_hub(online, hf_cache, tmp_path, capsys):
    online.error = AssertionError("the hub was asked")
    rc, out, err = _cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--model", "tiny-org/tiny-bert", "--offline",
                        "--tests", "weat1", "--levels", "word", "--n-samples", "200", "--quiet")
    assert rc == 0, err
    assert online.info == [] and all(kw.get("local_files_only") for _, kw in online.download)


def test_online_an_unreachable_hub_falls_back_to_the_cache(online, hf_cache):
    from huggingface_hub.errors import OfflineModeIsEnabled
    online.error = OfflineModeIsEnabled("no connection")
    assert load_encoder("tiny-org/tiny-bert").model_commit == hf_cache.commits["bert-b"]
    with pytest.raises(EatlasError, match="the Hugging Face hub could not be reached"):
        load_encoder("tiny-org/not-cached")


def test_a_sweep_with_offline_runs_each_commit_from_the_cache_and_records_an_uncached_id(online, hf_cache,
                                                                                         tmp_path, capsys):
    online.error = AssertionError("the hub was asked")
    db = tmp_path / "s.duckdb"
    rc = main(["sweep", "--models", "tiny-org/tiny-bert", "tiny-org/tiny-bert@v1", "tiny-org/not-cached", "--tests",
               "weat1", "--levels", "word", "--n-samples", "200", "--no-cache", "--offline", "--db", str(db),
               "--quiet"])
    assert rc == 1 and online.info == []                # one model failed; the hub was never asked
    runs = _rows(db, "SELECT model, model_revision, model_commit, model_fingerprint FROM runs ORDER BY model")
    assert [r[:3] for r in runs] == [("tiny-org/tiny-bert", None, hf_cache.commits["bert-b"]),
                                     ("tiny-org/tiny-bert@v1", "v1", hf_cache.commits["bert-a"])]
    assert runs[0][3] != runs[1][3]
    (model, error), = _rows(db, "SELECT model, error FROM sweep_failures")
    assert model == "tiny-org/not-cached" and "hf download tiny-org/not-cached" in error


def _online_refusals():
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError
    return {
        "no such repository": (_http_error(RepositoryNotFoundError, 404), None,
                               ["unknown model 'tiny-org/tiny-bert@main'", "hub has no model 'tiny-org/tiny-bert'",
                                "private", "hf auth login"]),
        "gated": (_http_error(GatedRepoError, 403), None, ["tiny-org/tiny-bert is a gated model", "hf auth login"]),
        "no such revision": (_http_error(RevisionNotFoundError, 404), None,
                             ["tiny-org/tiny-bert has no revision 'main'"]),
        "no weights a backend loads": (None, {"config.json": None, "model.gguf": "aa" * 32},
                                       ["holds no weights EATlas can load", "model.gguf"]),
        "custom code": (None, {"config.json": None, "model.safetensors": "aa" * 32},
                        ["needs its own custom code", "--trust-remote-code tiny-org/tiny-bert@main"]),
    }


@pytest.mark.parametrize("case", ["no such repository", "gated", "no such revision", "no weights a backend loads",
                                  "custom code"])
def test_online_refusals_are_one_line_before_any_download(case, online, hf_cache, tmp_path, capsys):
    error, files, needles = _online_refusals()[case]
    online.error = error
    online.listing = files and _listing("e" * 40, files, {"model_type": "bert", "auto_map": {
        "AutoModel": "modeling_x.X"}} if case == "custom code" else None)
    before, db = hf_cache.files(), tmp_path / "r.duckdb"
    rc, _, err = _cli(capsys, "--db", db, "run", "--model", "tiny-org/tiny-bert@main", "--tests", "weat1",
                      "--levels", "word", "--quiet")
    _one_line_error(rc, err, *needles)
    assert online.download == [] and hf_cache.files() == before and not db.exists()


# ------------------------------------------------------------------------------------------------ eatlas models
def test_eatlas_models_lists_the_hub_models_in_the_cache(hf_cache, capsys):
    from eatlas.encoders.hub import cached_models
    root, rows = cached_models()
    assert root == str(hf_cache.cache)
    got = {(r["id"], r["commit"]): (r["refs"], r["usable"]) for r in rows}
    c = hf_cache.commits
    assert got == {("tiny-org/tf-only", c["tf-only"]): ("main", "no: no weights EATlas loads"),
                   ("tiny-org/tiny-bert", c["bert-b"]): ("main", "yes"),
                   ("tiny-org/tiny-bert", c["bert-a"]): ("v1", "yes"),
                   ("tiny-org/tiny-gpt2-bin", c["gpt2-bin"]): ("main", "yes"),
                   ("tiny-org/tiny-st", c["st"]): ("main", "yes"),
                   ("tiny-org/tiny-wordpiece", c["wordpiece"]): ("main", "yes")}
    rc, out, _ = _cli(capsys, "models")
    text = " ".join(out.split())
    assert rc == 0 and "hub models in your cache" in text
    assert text.index("all-minilm-l6-v2") < text.index("hub models in your cache")     # registered ones first
    for repo, commit in got:
        assert repo in text and commit[:12] in text


def test_eatlas_models_with_an_empty_cache_says_where_it_looked(no_network, tmp_path, monkeypatch, capsys):
    from huggingface_hub import constants
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    rc, out, _ = _cli(capsys, "models")
    assert rc == 0 and "hub models in your cache: none in" in " ".join(out.split())


# ------------------------------------------------------------------------------------- a loader entry from the hub
def test_a_loader_entry_may_name_a_hub_id_and_revision(hf_cache, tmp_path, monkeypatch):
    import shutil

    import eatlas.encoders as encoders
    from eatlas.encoders.loaders import check_loader
    loaders = tmp_path / "loaders"
    shutil.copytree(ROOT / "loaders", loaders)
    entry = {"id": "tiny-bert-v1", "name": "tiny BERT at v1", "backend": "transformers", "family": "bert",
             "weights": {"hub": "tiny-org/tiny-bert", "revision": "v1"}, "license": "Apache-2.0",
             "languages": ["en"]}
    (loaders / "tiny-bert-v1.yaml").write_text(json.dumps(entry))
    monkeypatch.setattr(encoders, "LOADERS_DIR", loaders)
    enc = load_encoder("tiny-bert-v1")
    assert (enc.family, enc.family_source, enc.languages) == ("bert", "loader", ["en"])
    assert enc.model_commit == hf_cache.commits["bert-a"] and enc.fingerprint == \
        load_encoder("tiny-org/tiny-bert@v1").fingerprint
    assert encoders.entry_installed(entry)
    for bad, field in (({"hub": "tiny-org/tiny-bert@v1"}, "weights.hub"),
                       ({"hub": "a/b", "module": "x"}, "weights.module"),
                       ({"module": "x", "path": "p", "revision": "v1"}, "weights.revision")):
        with pytest.raises(EatlasError) as e:
            check_loader({**entry, "weights": bad}, "loaders/tiny-bert-v1.yaml")
        assert e.value.field == field
    with pytest.raises(EatlasError) as e:
        check_loader({**entry, "languages": ["English"]}, "loaders/tiny-bert-v1.yaml")
    assert e.value.field == "languages[0]"


# --------------------------------------------------------------------------------------- part 4: tokenizer coverage
def test_only_the_unknown_token_counts_against_coverage_not_character_pieces(hf_cache):
    enc = load_encoder("tiny-org/tiny-wordpiece")
    assert enc.tokenizer.tokenize("caterpillar")[:3] == ["c", "##at", "##e"]     # many known pieces: covered
    assert enc.tokenizer.tokenize("xq") == ["x", "##q"] and enc.tokenizer.tokenize("a") == ["a"]
    words = ["caterpillar", HINDI[0], f"rose {HINDI[0]}", f"xq {HINDI[0]} {HINDI[1]}", f"a {HINDI[0]} {HINDI[1]}", ""]
    # shares of [UNK]: 0, 1, 1/5, 2/4 (not above one half), 2/3, no token at all
    assert enc.covers(words).tolist() == [True, False, True, True, False, False]
    assert not enc.loaded                       # the tokenizer alone decides it: no weights were loaded


def _hindi_registry(root: Path, *, x_extra=(), language=None, y=("ant", "moth", "wasp", "flea")) -> MiniRegistry:
    """The mini registry's test t1 (X may hold more words, Y as many), in ``language`` (then at word level only)."""
    r = MiniRegistry(root)
    lang = {"language": language} if language else {}
    r.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily", *x_extra], **lang))
    r.add_set(make_set("bugs", [*y, "beetle"][:4 + len(x_extra)], **lang))
    r.add_set(make_set("good", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "honest")],
                       **lang))
    r.add_set(make_set("bad", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "sick", "evil")], **lang))
    test = make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", **lang)
    if language:
        del test["expansions"]          # a template is in English: a test in another language has its words only
    r.add_test(test)
    return r.sync()


def test_a_stimulus_unknown_to_the_tokenizer_is_dropped_with_the_reason(hf_cache, tmp_path):
    reg = _hindi_registry(tmp_path / "reg", x_extra=HINDI[:1])
    cfg = RunConfig(model="tiny-org/tiny-wordpiece", tests=["t1"], levels=("word", "sent", "c-word"),
                    n_samples=200)
    out = evaluate(cfg, registry=reg.root)
    for r in out.results:
        assert r["status"] == "ok" and r["n_x"] == len(r["dropped"]["x"]) * 4, r     # 1 of 5 words, at each level
        assert set(r["dropped"]["reasons"].values()) == {"unknown to the tokenizer"}
        assert all(HINDI[0] in t for t in r["dropped"]["x"])
    # --min-coverage decides as for a word out of a static vocabulary, and the reason names the cause
    out = evaluate(RunConfig(**{**vars(cfg), "min_coverage": 0.9, "levels": ("word",)}), registry=reg.root)
    r, = out.results
    assert r["status"] == "not_run" and "X 4/5" in r["reason"] and r["reason"].endswith(
        "1 stimulus unknown to the tokenizer")


def test_a_run_whose_vectors_are_cached_loads_no_tokenizer_and_drops_the_same_stimuli(hf_cache, tmp_path):
    from eatlas.encoders.cache import EmbeddingCache
    reg = _hindi_registry(tmp_path / "reg", x_extra=HINDI[:1])
    cfg = RunConfig(tests=["t1"], levels=("word", "sent"), n_samples=200)
    cache = EmbeddingCache(tmp_path / "c")
    first = evaluate(cfg, registry=reg.root, encoder=load_encoder("tiny-org/tiny-wordpiece"), cache=cache)
    enc = load_encoder("tiny-org/tiny-wordpiece")
    again = evaluate(cfg, registry=reg.root, encoder=enc, cache=cache)
    assert enc._tokenizer is None and not enc.loaded            # the coverage answers came from the cache too
    assert [r["dropped"] for r in again.results] == [r["dropped"] for r in first.results]
    assert all(HINDI[0] in t for r in again.results for t in r["dropped"]["x"])


def test_stimuli_the_tokenizer_makes_one_say_so_in_the_overlap_reason(hf_cache, tmp_path):
    reg = _hindi_registry(tmp_path / "reg", y=("Rose", "moth", "wasp", "flea"))
    r, = evaluate(RunConfig(model="tiny-org/tiny-wordpiece", tests=["t1"], levels=("word",), n_samples=200),
                  registry=reg.root).results
    assert r["status"] == "not_run"
    assert "X 'rose' and Y 'Rose' have the same vector (the tokenizer turns both into r ##o ##s ##e)" in r["reason"]


def test_a_test_in_a_language_the_model_does_not_declare_is_warned(hf_cache, tmp_path, capsys):
    reg = _hindi_registry(tmp_path / "reg", language="hi")
    db = tmp_path / "r.duckdb"
    rc, out, err = _cli(capsys, "--registry", reg.root, "--db", db, "run", "--model", "tiny-org/tiny-st", "--tests",
                        "t1", "--levels", "word", "--n-samples", "200")
    assert rc == 0, err
    warning, = _rows(db, "SELECT language_warning FROM results")[0]
    assert warning == "test language hi is not among the model's declared languages (en, de)"
    assert "warning: 1 result(s) are of tests in hi, which the model tiny-org/tiny-st does not declare (it " \
           "declares en, de)" in " ".join(err.split())
    for model, language in (("tiny-org/tiny-st", "de"), ("tiny-org/tiny-bert", "hi")):   # declared; none declared
        reg = _hindi_registry(tmp_path / f"reg-{language}-{model[-2:]}", language=language)
        r, = evaluate(RunConfig(model=model, tests=["t1"], levels=("word",), n_samples=200),
                      registry=reg.root).results
        assert r["language_warning"] is None


def test_the_default_english_run_drops_no_stimulus_as_unknown_to_the_tokenizer():
    """all-MiniLM-L6-v2's WordPiece vocabulary knows every stimulus of the default run's word tests, so the
    default run's numbers are those it gave before tokenizer coverage was checked."""
    from eatlas.registry import load_registry
    from eatlas.registry.stimuli import build_test
    from eatlas.run.runner import default_tests
    reg = load_registry()
    words = sorted({s.text[s.span[0]:s.span[1]] for tid in default_tests(reg, "en") if reg.tests[tid].level == "word"
                    for c in build_test(reg, reg.tests[tid], "word").concepts.values() for s in c.stimuli if s.span})
    enc = load_encoder()
    assert len(words) > 1000 and enc.languages == ["en"]
    assert [w for w, ok in zip(words, enc.covers(words)) if not ok] == []
