"""A run reads its own entries: its checks, what it keeps of them and its cost follow the tests it runs, not the
registry (eatlas.registry.cache, eatlas.registry.reads, eatlas.run.runner.refuse_invalid)."""
from __future__ import annotations

import os

import pytest

from eatlas.errors import EatlasError, ValidationFailed
from eatlas.registry import base as registry
from eatlas.registry import reads, schemas
from eatlas.registry.provenance import run_inputs
from eatlas.run import runner
from eatlas.run.runner import refuse_invalid
from tests.conftest import make_set, make_test

T1_FILES = {f"registry/testpaper/{k}/{i}.yaml" for k, i in
            [("tests", "t1"), ("sets", "roses"), ("sets", "bugs"), ("sets", "good"), ("sets", "bad")]
            } | {"templates/may2019_bleached.yaml"}     # its sentence level's


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache folder of its own, no registry held in this process, and findings kept for files just written."""
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(reads, "RACY_NS", 0)
    registry._DEFAULT.clear()
    yield tmp_path / "cache" / "registry"
    registry._DEFAULT.clear()


@pytest.fixture
def larger(mini):
    """The mini registry with entries no run of t1 reads: two sets and a test of theirs."""
    mini.add_set(make_set("cats", ["lion", "tiger", "lynx", "puma"]))
    mini.add_set(make_set("dogs", ["wolf", "fox", "jackal", "dingo"]))
    mini.add_test(make_test("t2", "cats@1.0.0", "dogs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    return mini.sync()


def _load(mini):
    registry._DEFAULT.clear()           # as a new process
    return registry.load_registry(mini.root)


def _counting(monkeypatch) -> dict:
    """Counts of the run's checks, by kind."""
    calls = {"tests": 0, "published": 0}
    real_tests, real_published = schemas.check_tests, schemas.check_published

    def tests(*a, **kw):
        calls["tests"] += 1
        return real_tests(*a, **kw)

    def published(*a, **kw):
        calls["published"] += 1
        return real_published(*a, **kw)
    monkeypatch.setattr(schemas, "check_tests", tests)
    monkeypatch.setattr(schemas, "check_published", published)
    return calls


def _edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_warm_run_reads_only_its_own_entries_files(larger, fresh):
    refuse_invalid(_load(larger), ["t1"])           # parsed, checked, kept
    with reads.recording() as seen:
        reg = _load(larger)
        refuse_invalid(reg, ["t1"])
        run_inputs(reg, ["t1"])
    assert {os.path.relpath(p, larger.root.resolve()) for p in seen} == T1_FILES
    assert "cats" in reg.sets and "t2" in reg.tests and "nothing" not in reg.sets     # looked up, not listed
    with reads.recording() as seen:
        assert list(reg.sets) == ["bad", "bugs", "cats", "dogs", "good", "roses"]       # the catalog's order
        assert reg.versions("tests") == {"t1": "1.0.0", "t2": "1.0.0"}
    assert not seen                                  # listing reads the index, not the files


def test_an_edit_to_a_file_the_run_does_not_read_keeps_its_findings(larger, fresh, monkeypatch):
    refuse_invalid(_load(larger), ["t1"])
    calls = _counting(monkeypatch)
    _edit(larger.root / "registry" / "testpaper" / "sets" / "cats.yaml", "lynx", "lynk")    # no version bump
    refuse_invalid(_load(larger), ["t1"])
    assert calls == {"tests": 0, "published": 0}
    with pytest.raises(ValidationFailed, match="content changed but version 1.0.0 did not"):
        refuse_invalid(_load(larger), ["t2"])         # the edited set's own test is refused
    _edit(larger.root / "registry" / "testpaper" / "sets" / "roses.yaml", "tulip", "tulop")
    with pytest.raises(ValidationFailed, match="content changed but version 1.0.0 did not"):
        refuse_invalid(_load(larger), ["t1"])
    assert calls["tests"] == 2


@pytest.mark.parametrize("what", ["the bibliography", "a new paper folder"])
def test_what_the_checks_depend_on_besides_the_entries_brings_them_back(larger, fresh, monkeypatch, what):
    refuse_invalid(_load(larger), ["t1"])
    calls = _counting(monkeypatch)
    if what == "the bibliography":
        src = larger.root / "registry" / "sources.yaml"
        src.write_text(src.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        want = {"tests": 1, "published": 0}
    else:       # where conventions files and published tables are found
        (larger.root / "registry" / "otherpaper" / "published").mkdir(parents=True)
        want = {"tests": 0, "published": 1}
    refuse_invalid(_load(larger), ["t1"])
    assert calls == want


def test_a_file_written_within_the_clock_tick_is_compared_by_its_bytes(tmp_path, monkeypatch):
    """A write in the same clock tick as the read leaves the file's stat as it was: a file whose times are that
    close to when the finding was kept is compared by its bytes (a folder by its names)."""
    f = tmp_path / "set.yaml"
    f.write_text("id: roses\n", encoding="utf-8")
    with reads.recording() as seen:
        registry.read_yaml(f)
    reads.add(seen, [tmp_path])                       # a folder: by its names
    settled, racy = 10**19, 0                         # 'kept' long after the files' times, or within their tick
    assert reads.unchanged(seen, racy) and reads.unchanged(seen, settled)
    forged = {str(f): [seen[str(f)][0], reads.digest(b"id: tulips\n")]}      # the same stat, other bytes
    assert reads.unchanged(forged, settled) and not reads.unchanged(forged, racy)
    folder = {str(tmp_path): [seen[str(tmp_path)][0], reads.digest(b"other.yaml")]}      # other names
    assert reads.unchanged(folder, settled) and not reads.unchanged(folder, racy)


def test_a_finding_for_other_files_or_forged_is_not_taken(larger, fresh, monkeypatch):
    import json
    reg = _load(larger)
    refuse_invalid(reg, ["t1"])
    (marker,) = fresh.glob("*.valid-*")
    kept = json.loads(marker.read_bytes())
    roses = next(p for p in kept["files"] if p.endswith("roses.yaml"))
    kept["files"][roses][0][0] += 1                 # another size: the seal no longer holds
    marker.write_text(json.dumps(kept))
    calls = _counting(monkeypatch)
    refuse_invalid(_load(larger), ["t1"])
    assert calls["tests"] == 1


@pytest.mark.parametrize("warm", [False, True])
def test_a_broken_file_a_run_does_not_read_stops_it_no_more_than_from_the_cache(larger, fresh, warm):
    """Cold (nothing kept) or warm (the registry kept, then the file broken), the same: a run of t1 goes on, a
    run of t2, which reads the file, is refused naming it; nothing partial is kept."""
    if warm:
        _load(larger)
    cats = larger.root / "registry" / "testpaper" / "sets" / "cats.yaml"
    cats.write_text("id: cats\nitems: [broken\n", encoding="utf-8")
    reg = _load(larger)
    refuse_invalid(reg, ["t1"])
    assert [i.text for i in reg.sets["roses"].items] == ["rose", "tulip", "daisy", "lily"]
    with pytest.raises(EatlasError) as e:
        refuse_invalid(reg, ["t2"])
    assert e.value.file == "registry/testpaper/sets/cats.yaml" and "malformed YAML" in e.value.message
    assert len(list(fresh.glob("*.jsonl"))) == (1 if warm else 0)


def test_the_runs_registry_record_names_the_sets_it_read(larger, fresh):
    state = runner.registry_state(_load(larger), ["t1"])
    assert state["tests"] == {"t1": "1.0.0"}
    assert state["sets"] == {"roses": "1.0.0", "bugs": "1.0.0", "good": "1.0.0", "bad": "1.0.0"}
    assert state["templates"] == {"may2019_bleached": "1.0.0"}
    assert {r["file"] for r in state["inputs"]} >= T1_FILES
