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
    assert "tulip" in [i.text for i in first.sets["roses"].items] and list(fresh.glob("*.jsonl"))
    registry._DEFAULT.clear()
    again = registry.load_registry(mini.root)          # from the cache: the same registry
    assert [i.text for i in again.sets["roses"].items] == [i.text for i in first.sets["roses"].items]
    _edit(mini.root / "registry" / "testpaper" / "sets" / "roses.yaml", "tulip", "tulop")   # same length
    registry._DEFAULT.clear()
    edited = registry.load_registry(mini.root)
    assert "tulop" in [i.text for i in edited.sets["roses"].items]


def test_a_test_list_checked_once_is_checked_again_after_an_edit(mini, fresh, monkeypatch):
    from eatlas.registry import reads
    monkeypatch.setattr(reads, "RACY_NS", 0)         # the files were just written: keep what was found anyway
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


# ----------------------------------------------------------------------------- plain data, never a pickle
class _Planted:
    """A pickle that, when loaded, creates a file (as a real attack would run a command)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def _key(mini) -> str:
    from eatlas.registry import cache
    return cache.catalog_key(mini.root.resolve())


def test_a_pickle_where_the_cache_was_is_never_loaded(mini, fresh, tmp_path):
    """Anyone who can write to a shared cache folder could plant a pickle: EATlas never unpickles anything.
    Neither the old file name (<key>.pickle) nor a pickle under the new one (<key>.jsonl) runs."""
    import pickle

    marker = tmp_path / "pwned"
    fresh.mkdir(parents=True)
    key = _key(mini)
    for name in (f"{key}.pickle", f"{key}.jsonl"):
        (fresh / name).write_bytes(pickle.dumps(_Planted(marker)))
    reg = registry.load_registry(mini.root)
    assert not marker.exists()
    assert [i.text for i in reg.sets["roses"].items] == ["rose", "tulip", "daisy", "lily"]
    head = (fresh / f"{key}.jsonl").read_bytes().split(b"\n", 1)[0]       # the pickle was replaced by the cache
    assert head.split(b" ", 1)[1].startswith(b'{"magic":"eatlas-registry-cache"')     # after its seal
    registry._DEFAULT.clear()
    assert registry.load_registry(mini.root).sets["roses"].items == reg.sets["roses"].items
    assert not marker.exists()


def test_a_cache_file_of_other_files_or_cut_short_is_ignored(mini, fresh):
    """The file's own key must be the one of the catalog as it is: a cache file copied under another key
    (e.g. by someone who wants an old catalog trusted) or cut short is parsed afresh, and rewritten; an entry
    is read from its file as it is."""
    registry.load_registry(mini.root)
    before = next(fresh.glob("*.jsonl"))
    _edit(mini.root / "registry" / "testpaper" / "sets" / "roses.yaml", "tulip", "tulop")
    cat = mini.root / "catalog.yaml"
    cat.write_text(cat.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    now = fresh / f"{_key(mini)}.jsonl"
    assert now != before
    now.write_bytes(before.read_bytes())                  # the old registry under the new files' name
    registry._DEFAULT.clear()
    assert "tulop" in [i.text for i in registry.load_registry(mini.root).sets["roses"].items]
    good = now.read_bytes()
    assert good != before.read_bytes() and b'"key":"' + _key(mini).encode() + b'"' in good
    now.write_bytes(good[: len(good) // 2])               # cut short
    registry._DEFAULT.clear()
    assert "tulop" in [i.text for i in registry.load_registry(mini.root).sets["roses"].items]
    assert now.read_bytes() == good


def test_a_damaged_or_forged_entry_is_read_from_its_file(mini, fresh):
    """An entry whose bytes are not those written (CRC), or whose content is not an entry, is read from its
    YAML file, checked as any file is; the other entries still come from the cache."""

    registry.load_registry(mini.root)
    path = fresh / f"{_key(mini)}.jsonl"
    data = path.read_bytes()
    damaged = data.replace(b'"tulip"', b'"tulxp"')        # the set's line changed: its seal no longer holds
    path.write_bytes(damaged)
    registry._DEFAULT.clear()
    reg = registry.load_registry(mini.root)
    assert [i.text for i in reg.sets["roses"].items] == ["rose", "tulip", "daisy", "lily"]
    assert path.read_bytes() == damaged         # the head was taken (not parsed afresh): only the entry was read

    # a forged line whose checksums are recomputed (as anyone with write access to a shared cache could): the
    # seals need the user's private key, so the forged file is not taken and the registry is parsed afresh
    from tests.registry_cache_forge import forge
    forged_file = forge(data, b'"tulip"', b'"tulxp"')       # the same length: only the entry's seal fails
    path.write_bytes(forged_file)
    registry._DEFAULT.clear()
    assert [i.text for i in registry.load_registry(mini.root).sets["roses"].items] == ["rose", "tulip", "daisy",
                                                                                     "lily"]
    forged_file = forge(data, b'"tulip"', b'"tulips"')      # another length: the index and the head change too
    path.write_bytes(forged_file)
    registry._DEFAULT.clear()
    reg = registry.load_registry(mini.root)
    assert reg.sets["roses"].id == "roses" and reg.sets["roses"].file.endswith("roses.yaml")
    assert [i.text for i in reg.sets["roses"].items] == ["rose", "tulip", "daisy", "lily"]
    assert path.read_bytes() != forged_file and b'"tulips"' not in path.read_bytes()    # rebuilt, sealed


def test_values_yaml_has_and_json_lacks_come_back_as_they_were():
    """Dates, times, byte strings, sets, tuples and mappings with other keys than text survive the cache."""
    import datetime as dt

    from eatlas.registry.cache import from_json, to_json
    value = {"date": dt.date(2026, 1, 2), "when": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "raw": b"\x00\xff",
             "set": {1, 2}, "pair": ("a", 1), "ints": {1: "one", (2, 3): "pair"}, "$date": "text, not a tag",
             "nested": [{"$set": [1]}], "nan": float("inf")}
    import json
    assert from_json(json.dumps(to_json(value))) == value
    with pytest.raises(TypeError):
        to_json(object())


def test_the_files_digest_is_kept_by_their_stats_and_an_edit_is_still_seen(mini, fresh, monkeypatch):
    """state() reads and hashes every file only when their stats (size, inode, modification and change
    times) moved since it last did; an edit that keeps the length and puts the modification time back still
    moves the change time, and is seen."""
    import os

    from eatlas.registry import cache
    monkeypatch.setattr(cache, "RACY_NS", 0)         # the files were just written: keep the digest anyway
    root = mini.root.resolve()
    first = cache.state(root)
    assert list(fresh.glob("*.stat"))
    monkeypatch.setattr(cache, "_content", lambda *a: pytest.fail("the files were read again"))
    assert cache.state(root) == first                 # from the stats: no file read
    monkeypatch.undo()
    monkeypatch.setenv("EATLAS_CACHE", str(fresh.parent))
    roses = mini.root / "registry" / "testpaper" / "sets" / "roses.yaml"
    st = os.stat(roses)
    _edit(roses, "tulip", "tulop")
    os.utime(roses, ns=(st.st_atime_ns, st.st_mtime_ns))      # same size, same modification time
    assert cache.state(root) != first
    _edit(roses, "tulop", "tulip")
    assert cache.state(root) == first                 # the content, not the stats, is the key


def test_the_catalogs_key_is_kept_by_its_stats_and_an_edit_is_still_seen(mini, fresh, monkeypatch):
    """catalog_key() hashes catalog.yaml only when its stats moved; a same-length edit with the modification time
    put back still moves the change time, and gives another key."""
    import os

    from eatlas.registry import cache
    monkeypatch.setattr(cache, "RACY_NS", 0)
    root = mini.root.resolve()
    first = cache.catalog_key(root)
    assert list(fresh.glob("*.catstat"))
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: pytest.fail("hashed again") if str(p).endswith(
        "catalog.yaml") else real_open(p, *a, **k))
    assert cache.catalog_key(root) == first           # from the stats: the catalog not read
    monkeypatch.undo()
    monkeypatch.setenv("EATLAS_CACHE", str(fresh.parent))
    cat = root / "catalog.yaml"
    st = os.stat(cat)
    text = cat.read_text(encoding="utf-8")
    cat.write_text(text[:-1] + (" " if text.endswith("\n") else "\n"), encoding="utf-8")     # the same length
    os.utime(cat, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(cat).st_size == st.st_size and cache.catalog_key(root) != first
