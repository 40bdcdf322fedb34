"""A dropped-in file is never silently ignored: validate names it, catalog --check fails, --sync indexes it."""
from __future__ import annotations

from eatlas.cli import main
from tests.conftest import make_set


def _run(capsys, *args):
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return rc, cap.out, cap.err


def test_a_clean_registry_with_its_extra_files_validates(mini, capsys):
    (mini.root / "registry" / "PUBLISHED.md").write_text("# Published tables\n")   # not YAML/CSV
    # registry/sources.yaml (written by the fixture) is not an entry: never reported
    assert _run(capsys, "--registry", mini.root, "validate")[0] == 0


def test_validate_names_a_set_the_catalog_does_not_index(mini, capsys):
    mini.add_set(make_set("weeds", ["thistle", "nettle", "dock", "bindweed"]))       # no sync
    rc, _, err = _run(capsys, "--registry", mini.root, "validate")
    assert rc == 1
    assert "registry/testpaper/sets/weeds.yaml" in err and "not in catalog.yaml" in err
    assert "eatlas catalog --sync" in err


def test_validate_names_a_file_the_catalog_cannot_index(mini, capsys):
    (mini.root / "registry" / "testpaper" / "weeds.yaml").write_text("id: weeds\n")
    (mini.root / "templates" / "extra").mkdir()
    (mini.root / "templates" / "extra" / "t.yml").write_text("id: t\n")
    (mini.root / "registry" / "testpaper" / "published").mkdir()
    (mini.root / "registry" / "testpaper" / "published" / "table1.csv").write_text("paper\n")
    rc, _, err = _run(capsys, "--registry", mini.root, "validate")
    assert rc == 1
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 3, err
    misplaced = [x for x in lines if "weeds.yaml" in x or "t.yml" in x]
    assert len(misplaced) == 2 and all("move" in x and "registry/*/sets/*.yaml" in x for x in misplaced), err
    assert any("registry/testpaper/published/table1.csv" in x and "eatlas catalog --sync" in x for x in lines)


def test_catalog_check_fails_on_a_stale_catalog_and_writes_nothing(mini, capsys):
    mini.add_set(make_set("weeds", ["thistle", "nettle", "dock", "bindweed"]))
    before = (mini.root / "catalog.yaml").read_bytes()
    for args in (["catalog", "--check"], ["catalog"]):      # checking is the default
        rc, out, err = _run(capsys, "--registry", mini.root, *args)
        assert rc == 1
        assert any(x.startswith("+") and "registry/testpaper/sets/weeds.yaml" in x for x in out.splitlines()), out
        assert "stale" in err and "eatlas catalog --sync" in err
    assert (mini.root / "catalog.yaml").read_bytes() == before


def test_catalog_check_names_a_removed_file(mini, capsys):
    (mini.root / "registry" / "testpaper" / "tests" / "t1.yaml").unlink()
    rc, out, _ = _run(capsys, "catalog", "--check", "--registry", mini.root)
    assert rc == 1 and any(x.startswith("-") and "id: t1," in x for x in out.splitlines()), out


def test_catalog_sync_indexes_the_file(mini, capsys):
    mini.add_set(make_set("weeds", ["thistle", "nettle", "dock", "bindweed"]))
    assert _run(capsys, "--registry", mini.root, "catalog", "--sync")[0] == 0
    assert "registry/testpaper/sets/weeds.yaml" in (mini.root / "catalog.yaml").read_text()
    rc, out, _ = _run(capsys, "--registry", mini.root, "catalog", "--check")
    assert rc == 0 and "up to date" in out
    assert _run(capsys, "--registry", mini.root, "validate")[0] == 0


def test_check_and_sync_exclude_each_other(mini, capsys):
    assert _run(capsys, "--registry", mini.root, "catalog", "--check", "--sync")[0] == 2


def test_the_shipped_catalog_is_up_to_date(capsys):
    rc, out, err = _run(capsys, "catalog", "--check")
    assert rc == 0, out + err


def test_a_sources_data_folder_is_accounted_for_by_its_provenance(mini, capsys):
    """registry/<source>/data/ holds validation data (not catalog entries): provenance.yaml lists every
    file with its sha256; an undescribed file, a missing one or changed bytes are reported."""
    import hashlib

    import yaml
    data = mini.root / "registry" / "testpaper" / "data"
    data.mkdir()
    (data / "scores.csv").write_text("word,score\nnurse,-0.9\n")
    digest = hashlib.sha256((data / "scores.csv").read_bytes()).hexdigest()
    (data / "provenance.yaml").write_text(yaml.safe_dump(
        {"source": "testpaper", "license": "MIT", "files": [{"file": "scores.csv", "sha256": digest}]}))
    assert _run(capsys, "--registry", mini.root, "validate")[0] == 0
    (data / "extra.csv").write_text("a\n")
    rc, _, err = _run(capsys, "--registry", mini.root, "validate")
    assert rc == 1 and "data/extra.csv" in err and "not described in" in err
    (data / "extra.csv").unlink()
    (data / "scores.csv").write_text("word,score\nnurse,0.9\n")
    rc, _, err = _run(capsys, "--registry", mini.root, "validate")
    assert rc == 1 and "data/scores.csv" in err and "sha256" in err
    (data / "scores.csv").unlink()
    rc, _, err = _run(capsys, "--registry", mini.root, "validate")
    assert rc == 1 and "lists 'scores.csv'" in err
