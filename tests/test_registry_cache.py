"""The parsed registry kept between runs (eatlas.registry.cache): never stale, never a wrong 'valid'."""
from __future__ import annotations

import pytest

from eatlas.errors import ValidationFailed
from eatlas.registry import base as registry
from eatlas.run.runner import refuse_invalid


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache folder of its own, and no registry held in this process (as for a new process)."""
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    registry._DEFAULT.clear()
    yield tmp_path / "cache" / "registry"
    registry._DEFAULT.clear()


def _edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_same_length_edit_is_seen_by_the_next_load(mini, fresh):
    first = registry.load_registry(mini.root)
    assert "tulip" in [i.text for i in first.sets["roses"].items] and list(fresh.glob("*.pickle"))
    registry._DEFAULT.clear()
    again = registry.load_registry(mini.root)          # from the cache: the same registry
    assert [i.text for i in again.sets["roses"].items] == [i.text for i in first.sets["roses"].items]
    _edit(mini.root / "registry" / "testpaper" / "sets" / "roses.yaml", "tulip", "tulop")   # same length
    registry._DEFAULT.clear()
    edited = registry.load_registry(mini.root)
    assert "tulop" in [i.text for i in edited.sets["roses"].items]


def test_a_test_list_checked_once_is_checked_again_after_an_edit(mini, fresh):
    refuse_invalid(registry.load_registry(mini.root), ["t1"])      # valid: marked
    assert list(fresh.glob("*.valid-*"))
    # an item changed without a version bump: the catalog's hash no longer matches
    _edit(mini.root / "registry" / "testpaper" / "sets" / "roses.yaml", "tulip", "tulop")
    registry._DEFAULT.clear()
    with pytest.raises(ValidationFailed) as e:
        refuse_invalid(registry.load_registry(mini.root), ["t1"])
    assert "version" in e.value.render()


def test_cache_clear_removes_the_parsed_registry(mini, fresh, capsys):
    from eatlas.cli import main

    registry.load_registry(mini.root)
    assert fresh.is_dir()
    assert main(["cache", "clear"]) == 0
    assert not fresh.exists()


def test_switched_off_nothing_is_kept(mini, fresh, monkeypatch):
    monkeypatch.setenv("EATLAS_REGISTRY_CACHE", "0")
    registry.load_registry(mini.root)
    assert not fresh.exists()
