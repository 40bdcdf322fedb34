"""Curators' commands: add, show, list, catalog --check; and the Python API on the real registry."""
import yaml

import eatlas
from eatlas.cli import main
from tests.conftest import make_set, make_test, write_yaml


def test_add_a_new_set_and_test(mini, tmp_path, capsys):
    new_set = write_yaml(tmp_path / "in" / "weeds.yaml", make_set("weeds", ["thistle", "nettle", "dock", "bindweed"]))
    assert main(["--registry", str(mini.root), "add", str(new_set)]) == 0
    assert (mini.root / "registry/testpaper/sets/weeds.yaml").is_file()
    cat = yaml.safe_load((mini.root / "catalog.yaml").read_text())
    assert any(e["id"] == "weeds" and e["sha256"] for e in cat["sets"])
    new_test = write_yaml(tmp_path / "in" / "t9.yaml", make_test("t9", "roses@1.0.0", "weeds@1.0.0", "good@1.0.0",
                                                                 "bad@1.0.0"))
    assert main(["--registry", str(mini.root), "add", str(new_test)]) == 0
    assert main(["--registry", str(mini.root), "validate"]) == 0
    assert "added test t9" in capsys.readouterr().out


def test_add_refuses_existing_id(mini, tmp_path, capsys):
    dup = write_yaml(tmp_path / "roses.yaml", make_set("roses", ["peony", "aster", "iris", "lupin"], version="2.0.0"))
    before = (mini.root / "catalog.yaml").read_bytes()
    assert main(["--registry", str(mini.root), "add", str(dup)]) == 1       # a problem of the file, listed
    err = capsys.readouterr().err
    assert "roses.yaml, set roses, field 'id': set 'roses' already exists (version 1.0.0)" in err
    assert "1 problem(s) in" in err and "nothing was written" in err
    assert (mini.root / "catalog.yaml").read_bytes() == before


def test_add_rejects_invalid_and_leaves_registry_as_it_was(mini, tmp_path, capsys):
    before = (mini.root / "catalog.yaml").read_bytes()
    bad = write_yaml(tmp_path / "t9.yaml", make_test("t9", "roses@1.0.0", "roses@1.0.0", "good@1.0.0", "bad@1.0.0"))
    assert main(["--registry", str(mini.root), "add", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "test t9" in err and "same set" in err
    assert not (mini.root / "registry/testpaper/tests/t9.yaml").exists()
    assert (mini.root / "catalog.yaml").read_bytes() == before
    nosource = make_set("weeds", ["thistle", "nettle"])
    nosource["source"] = {"section": "x"}
    assert main(["--registry", str(mini.root), "add", str(write_yaml(tmp_path / "w.yaml", nosource))]) == 1
    assert "source.paper" in capsys.readouterr().err
    unknown = make_set("weeds", ["thistle", "nettle"])
    unknown["source"] = {"paper": "nopaper", "section": "x"}      # a paper registry/sources.yaml does not cite
    assert main(["--registry", str(mini.root), "add", str(write_yaml(tmp_path / "u.yaml", unknown))]) == 1
    assert "unknown paper 'nopaper'" in capsys.readouterr().err
    assert not (mini.root / "registry" / "nopaper").exists()        # no folder left behind
    assert (mini.root / "catalog.yaml").read_bytes() == before


def test_changelog_must_cover_the_version(mini, capsys):
    doc = make_set("roses", ["rose", "tulip", "daisy", "lily"])
    doc["changelog"] = [{"version": "0.9.0", "date": "2026-01-01", "change": "draft"}]
    mini.add_set(doc)
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) == 1
    assert "changelog has no entry for version 1.0.0" in capsys.readouterr().err


def test_show_and_list(capsys):
    assert main(["show", "weat+occ", "--level", "sent", "--all"]) == 0
    out = capsys.readouterr().out
    lines = [ln.strip() for ln in out.splitlines()]
    assert "This is a construction worker." in lines and "This is a construction." not in lines
    assert "zhao2018" in out or "WinoBias" in out or "winobias" in out
    assert main(["list", "--source", "guo2021"]) == 0
    out = capsys.readouterr().out
    assert "ceat_i1" in out and "weat1 " not in out


def test_python_api_on_the_shipped_registry():
    ids = {t["id"] for t in eatlas.list_tests()}
    assert {"weat1", "weat10", "weat3b", "angry_black_woman_stereotype_b", "heilman_double_bind_likable_1+3-",
            "weat+occ", "weat_r_hdb_competent", "ceat_i1"} <= ids
    t = eatlas.get_test("weat3")
    assert t.x.name and len(t.x.items) == 32 and t.version
    assert t.provenance["paper"] == "caliskan2017"
    s = eatlas.get_test("heilman_double_bind_competent_one_sentence")   # own level: the written sentences
    assert s.level != "word" and s.x.items[0] == "John is an engineer."
    assert eatlas.get_test("sent-weat1").id == "weat1"                 # alias
