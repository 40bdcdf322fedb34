"""eatlas add on a copy of the registry as it ships, and validate's warning on a set's kind.

One copy of the shipped registry (catalog.yaml, registry/, templates/, schemas/) serves the module, with a
cache folder of its own; validate runs on it once first (it records its outcome, which add then reuses).
The sets and tests added here are the tests' own stand-ins, cited to a test paper added to the copy's
sources.yaml, not stimuli of any paper.

(a) a new set, then a new test naming it and shipped sets: both indexed, catalog --check clean, the
    registry and outcome add keeps in the cache equal a fresh parse and a full validate, validate exits 0
    (its two WEATHub warnings shown by add, not blocking), and the test runs (a tiny vector file);
(b) a set and a test with several problems each: every one listed with file, object and field, exit 1;
(c) add killed (SIGKILL) while validating, a faulty file and a good one: every file byte-identical;
(d) a set of occupations of kind noun warns (validate and add), naming the file, set, field and the
    kind to use; the same set with kind group_term does not; the registry's own sets are evidence too;
(e) errors the registry already has refuse an add, named as being elsewhere; a registry changed while add
    checked (another add) gets nothing written.

(a) takes about ten seconds (the module's copy and first validate a few more): it is the one test of
add on the 2,600-set registry as it ships, and it runs validate on it whole and a test, as the issue asks.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from eatlas.cli import main
from eatlas.registry import base as registry
from eatlas.registry import cache as registry_cache
from eatlas.registry.checks import from_rows
from tests.cli_helpers import cli
from tests.conftest import ROOT, TESTPAPER, make_set, make_test, write_yaml

NEW_SET = "curators_nurses"
NEW_TEST = "curators_nurses_t"


def snapshot(root: Path) -> dict[str, str]:
    """Every file of the registry folder and its sha256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """A copy of the shipped registry, validated once (its outcome recorded in its own cache folder)."""
    tmp = tmp_path_factory.mktemp("shipped")
    root = tmp / "reg"
    root.mkdir()
    for name in ("catalog.yaml", "registry", "templates", "schemas"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    with open(root / "registry" / "sources.yaml", "a", encoding="utf-8") as f:
        f.write("\n" + yaml.safe_dump({"testpaper": TESTPAPER}, sort_keys=False))
    saved = os.environ.get("EATLAS_CACHE")
    os.environ["EATLAS_CACHE"] = str(tmp / "cache")
    registry._DEFAULT.clear()
    try:
        assert main(["--registry", str(root), "validate"]) == 0
        yield root
    finally:
        registry._DEFAULT.clear()
        if saved is None:
            os.environ.pop("EATLAS_CACHE", None)
        else:
            os.environ["EATLAS_CACHE"] = saved


def _vectors(path: Path, reg, set_ids) -> Path:
    words = sorted({w for s in set_ids for it in reg.sets[s].items for w in it.text.split()})
    rng = np.random.default_rng(0)
    path.write_text("".join(f"{w} " + " ".join(f"{v:.5f}" for v in rng.normal(size=8)) + "\n" for w in words),
                    encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- (a)
def test_add_a_set_then_a_test_to_the_shipped_registry(shipped, tmp_path, capsys):
    before = snapshot(shipped)
    new_set = write_yaml(tmp_path / "nurses.yaml", make_set(NEW_SET, [
        {"text": t, "kind": "group_term"} for t in ("nurse", "midwife", "nanny", "receptionist")],
        concept="Nurses (test stand-in)", language="en"))
    rc, out, err = cli(capsys, "--registry", shipped, "add", new_set)
    assert rc == 0, err
    assert f"added set {NEW_SET} as registry/testpaper/sets/{NEW_SET}.yaml; catalog.yaml updated" in out
    # the registry as it ships has no warning (WEATHub's items shared by a target and an attribute are declared):
    # a curator adding a clean file reads nothing about other people's files
    assert "warning" not in err and "error" not in err
    new_test = write_yaml(tmp_path / "t.yaml", make_test(
        NEW_TEST, f"{NEW_SET}@1.0.0", "winobias_male_occupations@1.0.0", "pleasant@1.0.0", "unpleasant@1.0.0",
        equal_targets=False))
    rc, out, err = cli(capsys, "--registry", shipped, "add", new_test)
    assert rc == 0, err
    assert f"added test {NEW_TEST} as registry/testpaper/tests/{NEW_TEST}.yaml" in out
    # two files and one catalog line each, nothing else changed
    after = snapshot(shipped)
    assert {k for k in after if before.get(k) != after[k]} == {
        "catalog.yaml", f"registry/testpaper/sets/{NEW_SET}.yaml", f"registry/testpaper/tests/{NEW_TEST}.yaml"}
    fresh = registry.Registry(shipped)
    assert fresh.sets[NEW_SET].version == "1.0.0" and fresh.tests[NEW_TEST].sets["x"] == f"{NEW_SET}@1.0.0"
    assert fresh.recorded_hash[("sets", NEW_SET)] == fresh.sets[NEW_SET].hash()
    from eatlas.registry.catalog import render_catalog
    assert (shipped / "catalog.yaml").read_text(encoding="utf-8") == render_catalog(fresh.catalog)  # as sync writes

    # what add kept in the registry cache is what a fresh parse and a full validate give
    top = shipped.resolve()
    kept = registry_cache.load(top, lambda: pytest.fail("add kept no parsed registry for the files it left"),
                               registry.Registry.from_view)
    assert any(k == "published" for k, _ in fresh.recorded_hash)
    for key, digest in fresh.recorded_hash.items():      # looked up one by one, as a run does (the index, not a list)
        assert kept.recorded_hash[key] == digest, key
    for attr in ("sets", "tests", "templates", "catalog", "recorded_hash"):
        assert getattr(kept, attr) == getattr(fresh, attr), attr
    assert list(kept.sets) == list(fresh.sets) and list(kept.tests) == list(fresh.tests)
    state = registry_cache.state(top)
    assert registry_cache.validation(state) is not None          # add recorded what it found (nothing)
    by_add = from_rows(registry_cache.validation(state) or [])
    rc, out, err = cli(capsys, "--registry", shipped, "validate")     # checks it all, and records what it found
    assert rc == 0 and "ok: " in out, err
    assert "read as things" not in err          # no kind warning on the registry as it ships
    by_validate = from_rows(registry_cache.validation(state) or [])
    assert sorted((type(p).__name__, p.render()) for p in by_add) == \
        sorted((type(p).__name__, p.render()) for p in by_validate)
    assert by_validate == []                     # no problem, no warning

    vecs = _vectors(tmp_path / "vectors.txt", fresh, [NEW_SET, "winobias_male_occupations", "pleasant",
                                                      "unpleasant"])
    db = tmp_path / "r.duckdb"
    rc, out, err = cli(capsys, "--registry", shipped, "--db", db, "run", "--tests", NEW_TEST, "--levels", "word",
                       "--model", vecs, "--n-samples", "100", "--quiet", "--no-cache")
    assert rc == 0, err
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT test_id, level, effect_size FROM results WHERE test_id = ?", [NEW_TEST]).fetchall()
    con.close()
    assert len(rows) == 1 and rows[0][1] == "word" and np.isfinite(rows[0][2])


# ---------------------------------------------------------------------------------------------- (b)
def listed(err: str, where: str, expected: list[tuple[str, str]]) -> None:
    """Each (field, what) is an error line of its own naming the file, the object and the field."""
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    for field, what in expected:
        assert any(ln.startswith(f"error: {where}, field '{field}': ") and what in ln for ln in lines), (field, err)
    assert len(lines) == len(expected), err


def test_every_problem_of_a_new_set_is_listed(shipped, tmp_path, capsys):
    doc = make_set("curators_bad", ["nurse", "nurse", "ro\u200bse", "flautist"], concept=["Bad"], colour="red",
                   version="1.0")
    del doc["license"]
    doc["items"][3]["kind"] = "flower"
    doc["items"] += [{"text": 12, "kind": "noun"}, {"text": "sailor"}]
    bad = write_yaml(tmp_path / "bad.yaml", doc)
    before = snapshot(shipped)
    rc, out, err = cli(capsys, "--registry", shipped, "add", bad)
    assert rc == 1, err
    listed(err, f"file {bad}, set curators_bad", [
        ("colour", "unknown key(s) colour"), ("version", "version '1.0' is not semantic"),
        ("concept", "expected text, got a list"), ("license", "missing required field"),
        ("items[1].text", "duplicate item in the set"), ("items[2].text", "U+200B ZERO WIDTH SPACE"),
        ("items[3].kind", "unknown kind 'flower'"), ("items[4].text", "expected text, got int 12"),
        ("items[5].kind", "the item has no kind")])
    assert f"9 problem(s) in {bad}; nothing was written" in err
    assert snapshot(shipped) == before


def test_every_problem_of_a_new_test_is_listed(shipped, tmp_path, capsys):
    doc = make_test("curators_bad_t", "winobias_male_occupations@1.0.0", "winobias_male_occupations@1.0.0",
                    "pleasant@2.0.0", "no_such_set@1.0.0", level="sent")
    doc["source"] = {"paper": "no_such_paper"}
    doc["expansions"]["sent"]["famlies"] = {}
    doc["changelog"][0]["version"] = "0.9.0"
    bad = write_yaml(tmp_path / "bad_t.yaml", doc)
    before = snapshot(shipped)
    rc, out, err = cli(capsys, "--registry", shipped, "add", bad)
    assert rc == 1, err
    listed(err, f"file {bad}, test curators_bad_t", [
        ("expansions.sent.famlies", "unknown key(s) famlies"),
        ("changelog", "changelog has no entry for version 1.0.0"),
        ("y", "x and y are the same set"), ("source.paper", "unknown paper 'no_such_paper'"),
        ("a", "names pleasant@2.0.0 but the registry holds pleasant@1.0.0"),
        ("b", "names stimulus set 'no_such_set', which is not in the catalog")])
    assert f"6 problem(s) in {bad}; nothing was written" in err
    assert snapshot(shipped) == before


# ---------------------------------------------------------------------------------------------- (c)
KILLED = """
import pathlib, sys, time
import eatlas.registry.schemas as schemas
real = schemas.check_entry
def checking(*a, **k):
    out = real(*a, **k)
    pathlib.Path(sys.argv[1]).write_text("validating")     # the new entry is checked: kill me now
    time.sleep(300)
    return out
schemas.check_entry = checking
from eatlas.registry.checks import from_rows
from eatlas.cli import main
sys.exit(main(["--registry", sys.argv[2], "add", sys.argv[3]]))
"""


@pytest.mark.parametrize("good", [False, True], ids=["faulty-file", "good-file"])
def test_add_killed_while_validating_leaves_every_file_as_it_was(shipped, tmp_path, good):
    doc = make_set("curators_killed", [{"text": t, "kind": "group_term"} for t in ("nanny", "doula")])
    if not good:
        doc["items"].append({"text": "nanny", "kind": "flower"})
    new = write_yaml(tmp_path / "killed.yaml", doc)
    marker = tmp_path / "marker"
    before = snapshot(shipped)
    p = subprocess.Popen([sys.executable, "-c", KILLED, str(marker), str(shipped), str(new)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "add never reached its checks"
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -signal.SIGKILL
    assert snapshot(shipped) == before          # no new file, no temporary file, catalog.yaml byte-identical


# ---------------------------------------------------------------------------------------------- (d)
OCCUPATIONS = ["carpenter", "plumber", "welder", "mason"]


def test_occupations_of_kind_noun_warn_and_the_right_kind_does_not(mini, capsys):
    mini.add_set(make_set("trades", OCCUPATIONS, concept="Manual occupations"))     # items kind noun
    mini.sync()
    rc, out, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 0, err                      # a warning: validate still passes
    assert ("warning: file registry/testpaper/sets/trades.yaml, set trades, field 'items[0].kind': 4 of 4 items "
            "are kind noun, which sentence templates read as things ('A carpenter is a thing.'), but the set's "
            "concept says occupations (if the items denote people, write kind: group_term") in err, err
    mini.add_set(make_set("trades", [{"text": t, "kind": "group_term"} for t in OCCUPATIONS],
                          concept="Manual occupations"))
    mini.sync()
    rc, out, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 0 and "read as things" not in err, err


def test_a_set_kind_of_noun_is_named_as_the_field(mini, capsys):
    doc = make_set("trades", [], concept="Occupations", kind="noun")
    doc["items"] = OCCUPATIONS               # bare strings: their kind is the set's
    mini.add_set(doc)
    mini.sync()
    rc, out, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 0 and "set trades, field 'kind': 4 of 4 items are kind noun" in err, err


def test_the_registrys_own_person_sets_are_evidence(mini, capsys):
    """No people word in the concept: the items are people (group_term) in another set of the registry."""
    mini.add_set(make_set("staff", [{"text": t, "kind": "group_term"} for t in OCCUPATIONS]))
    mini.add_set(make_set("helpers", ["carpenter", "plumber", "hammer", "saw"], concept="Helpers"))
    mini.sync()
    rc, out, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 0, err
    assert ("set helpers, field 'items[0].kind': 4 of 4 items are kind noun, which sentence templates read as "
            "things ('A carpenter is a thing.'), but 2 of them ('carpenter', 'plumber') are group_term in the "
            "registry's own sets (if the items denote people, write kind: group_term, as the registry's sets of "
            "such items do (staff))") in err, err
    assert "set staff," not in err
    mini.add_set(make_set("helpers", ["carpenter", "hammer", "saw", "drill"], concept="Helpers"))
    mini.sync()             # one of four: no evidence that the set is about people
    assert "read as things" not in cli(capsys, "--registry", mini.root, "validate")[2]


def test_add_warns_on_the_kind_and_adds(mini, tmp_path, capsys):
    new = write_yaml(tmp_path / "trades.yaml", make_set("trades", OCCUPATIONS, concept="Occupations"))
    rc, out, err = cli(capsys, "--registry", mini.root, "add", new)
    assert rc == 0 and "added set trades" in out, err
    assert "warning: file registry/testpaper/sets/trades.yaml, set trades, field 'items[0].kind'" in err
    assert "write kind: group_term" in err


def test_add_writes_nothing_when_the_registry_changed_while_it_checked(mini, tmp_path, capsys, monkeypatch):
    """Another add (or an edit) between the checks and the writing: its catalog line would be lost."""
    import eatlas.registry.schemas as schemas

    real = schemas.check_entry

    def meanwhile(*a, **k):
        out = real(*a, **k)
        write_yaml(mini.root / "registry" / "testpaper" / "sets" / "other.yaml", make_set("other", OCCUPATIONS))
        return out
    monkeypatch.setattr(schemas, "check_entry", meanwhile)
    before = (mini.root / "catalog.yaml").read_bytes()
    new = write_yaml(tmp_path / "trades.yaml", make_set("trades", [{"text": t, "kind": "group_term"}
                                                                    for t in OCCUPATIONS]))
    rc, out, err = cli(capsys, "--registry", mini.root, "add", new)
    assert rc == 2 and "the registry changed while add was checking the file; nothing was written" in err, err
    assert not (mini.root / "registry" / "testpaper" / "sets" / "trades.yaml").exists()
    assert (mini.root / "catalog.yaml").read_bytes() == before


def test_errors_the_registry_already_has_refuse_the_add_and_are_named_as_such(mini, tmp_path, capsys):
    mini.add_set(make_set("roses", ["rose", "tulip", "rose", "lily"]))       # an error validate reports
    mini.sync()
    new = write_yaml(tmp_path / "trades.yaml", make_set("trades", [{"text": t, "kind": "group_term"}
                                                                    for t in OCCUPATIONS]))
    rc, out, err = cli(capsys, "--registry", mini.root, "add", new)
    assert rc == 1, err
    assert ("error: file registry/testpaper/sets/roses.yaml, set roses, field 'items[2].text': duplicate item"
            in err)
    assert f"0 problem(s) in {new}, 1 elsewhere in the registry; nothing was written" in err
    assert not (mini.root / "registry" / "testpaper" / "sets" / "trades.yaml").exists()
