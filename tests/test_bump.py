"""Curating at registry scale: `eatlas bump` follows a set's references; licences are SPDX; a source is added
from its fields; every problem of a file at once.

(a) a one-word fix to a set, then `bump`: the set one version more with its changelog line, every test naming the
    old version pointed at the new one, each one version more with a changelog line naming why, catalog.yaml
    updated, `validate` clean; every other byte of the edited files as it was;
(b) `validate` refusing a test that names an older version names `eatlas bump ID --follow`, which fixes it;
(c) a template bump follows the tests that expand with it (flow and block style);
(d) refusals write nothing: an unknown id ("did you mean"), a version that does not increase, a registry changed
    while planning, no terminal without --yes;
(e) the same fix on the shipped registry: Caliskan et al.'s insects, every test naming it, `validate` clean;
(f) licences: CC-BY-5.0 and "free for research" refused by validate and add with the nearest identifiers; an
    expression and LicenseRef- with a note accepted; every licence the registry ships is valid;
(g) `add` of a source file appends its entry with BibTeX built from its fields (cite reads it), every problem of a
    bad one listed, an existing key refused; a set of bare-string items naming it then adds;
(h) a set whose id collides lists its other problems too.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from eatlas.registry import bump as bumping
from eatlas.registry.spdx import license_problem
from tests.cli_helpers import cli as _run
from tests.conftest import ROOT, make_set, make_test


def cli(capsys, *args) -> tuple[int, str]:
    """The command's exit code and its output and errors together, lines unwrapped (rich wraps at the terminal's
    width: no check here depends on it)."""
    rc, out, err = _run(capsys, *args)
    return rc, " ".join((out + "\n" + err).split())


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def shared(mini):
    """The mini registry with a second and a third test naming roses@1.0.0 and a criterion-free layout."""
    mini.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "bad@1.0.0", "good@1.0.0"))
    mini.add_test(make_test("t3", "bugs@1.0.0", "roses@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sent": {"template": "may2019_bleached@1.0.0"}}))
    return mini.sync()


def test_a_one_word_fix_and_bump_leave_validate_clean(shared, capsys):
    roses = shared.root / "registry/testpaper/sets/roses.yaml"
    roses.write_text(roses.read_text().replace("tulip", "tullip"))
    before = {p: (shared.root / p).read_text() for p in ("registry/testpaper/tests/t1.yaml",
                                                        "registry/testpaper/tests/t2.yaml")}
    rc, out = cli(capsys, "--registry", shared.root, "bump", "roses", "-m", "tulip misspelled (test)", "--yes")
    assert rc == 0, out
    assert "bumped 4 file(s) and catalog.yaml: set roses 1.0.1, 3 following" in out
    doc = yaml.safe_load(roses.read_text())
    assert doc["version"] == "1.0.1"
    assert doc["changelog"][-1]["version"] == "1.0.1" and doc["changelog"][-1]["change"] == "tulip misspelled (test)"
    for tid, role in (("t1", "x"), ("t2", "x"), ("t3", "y")):
        t = yaml.safe_load((shared.root / f"registry/testpaper/tests/{tid}.yaml").read_text())
        assert t[role] == "roses@1.0.1" and t["version"] == "1.0.1"
        assert t["changelog"][-1]["change"] == f"{role}: roses@1.0.1 (was 1.0.0): tulip misspelled (test)"
    for rel, text in before.items():        # only the version, the reference and one changelog line changed
        new = (shared.root / rel).read_text().splitlines()
        old = text.splitlines()
        assert len(new) == len(old) + 1
        assert sum(a != b for a, b in zip(old, new)) == 2
    assert cli(capsys, "--registry", shared.root, "validate")[0] == 0
    assert cli(capsys, "--registry", shared.root, "catalog")[0] == 0      # catalog.yaml agrees with the files


def test_validate_names_bump_follow_and_it_fixes_the_references(shared, capsys):
    roses = shared.root / "registry/testpaper/sets/roses.yaml"
    doc = yaml.safe_load(roses.read_text())
    doc["version"] = "1.1.0"
    doc["changelog"].append({"version": "1.1.0", "date": "2026-11-28", "change": "by hand"})
    roses.write_text(yaml.safe_dump(doc, sort_keys=False))
    shared.sync(fresh=False)
    rc, err = cli(capsys, "--registry", shared.root, "validate")
    assert rc == 1 and "names roses@1.0.0 but the registry holds roses@1.1.0" in err
    assert "run 'eatlas bump roses --follow'" in err
    rc, out = cli(capsys, "--registry", shared.root, "bump", "roses", "--follow", "--yes")
    assert rc == 0, out
    t1 = yaml.safe_load((shared.root / "registry/testpaper/tests/t1.yaml").read_text())
    assert t1["x"] == "roses@1.1.0" and t1["version"] == "1.0.1"
    assert t1["changelog"][-1]["change"] == "x: roses@1.1.0 (was 1.0.0): by hand"
    assert cli(capsys, "--registry", shared.root, "validate")[0] == 0
    rc, err = cli(capsys, "--registry", shared.root, "bump", "roses", "--follow", "--yes")
    assert rc == 2 and "nothing to follow" in err


def test_a_template_bump_follows_block_and_flow_references(shared, capsys, tmp_path):
    t3 = shared.root / "registry/testpaper/tests/t3.yaml"
    t3.write_text(t3.read_text().replace("expansions:\n  sent:\n    template: may2019_bleached@1.0.0",
                                         "expansions:\n  sent: {template: \"may2019_bleached@1.0.0\"}"))
    assert "{template: \"may2019_bleached@1.0.0\"}" in t3.read_text()
    shared.sync()
    p = bumping.plan(shared.root, "may2019_bleached", part="minor", change="a family more (test)")
    assert p.target is not None and p.target.new_version == "1.1.0"
    assert sorted(e.id for e in p.followers) == ["t1", "t2", "t3"]
    assert {e.new_version for e in p.followers} == {"1.1.0"}
    bumping.apply(p)
    assert "{template: \"may2019_bleached@1.1.0\"}" in t3.read_text()
    assert cli(capsys, "--registry", shared.root, "validate")[0] == 0


def test_refusals_write_nothing(shared, capsys, monkeypatch):
    before = _files(shared.root)
    rc, err = cli(capsys, "--registry", shared.root, "bump", "rosse", "-m", "x", "--yes")
    assert rc == 2 and "no set, test, template or criterion 'rosse'" in err and "did you mean roses" in err
    rc, err = cli(capsys, "--registry", shared.root, "bump", "roses", "--to", "1.0.0", "-m", "x", "--yes")
    assert rc == 2 and "does not increase the version" in err
    rc, err = cli(capsys, "--registry", shared.root, "bump", "roses", "--yes")
    assert rc == 2 and "needs its changelog line" in err
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    rc, err = cli(capsys, "--registry", shared.root, "bump", "roses", "-m", "x")
    assert rc == 1 and "add --yes" in err
    p = bumping.plan(shared.root, "roses", change="x")
    t2 = shared.root / "registry/testpaper/tests/t2.yaml"
    t2.write_text(t2.read_text() + "# edited meanwhile\n")
    with pytest.raises(Exception, match="changed while bump was planning"):
        bumping.apply(p)
    t2.write_text(t2.read_text().replace("# edited meanwhile\n", ""))
    assert _files(shared.root) == before


def test_bump_of_the_shipped_insects_leaves_validate_clean(tmp_path, capsys, monkeypatch):
    root = tmp_path / "reg"
    root.mkdir()
    for name in ("catalog.yaml", "registry", "templates", "schemas"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    naming = sorted(p.relative_to(root).as_posix() for p in (root / "registry").glob("*/tests/*.yaml")
                    if any(line.split(":", 1)[1].strip() == "insects@1.0.0"
                           for line in p.read_text().splitlines() if line[:2] in ("x:", "y:", "a:", "b:")))
    assert "registry/caliskan2017/tests/weat1.yaml" in naming
    insects = root / "registry/caliskan2017/sets/insects.yaml"
    insects.write_text(insects.read_text().replace("- text: caterpillar\n", "- text: caterpilar\n"))
    p = bumping.plan(root, "insects", change="caterpillar misspelled (a test of bump)")
    assert sorted(e.rel for e in p.followers) == naming
    bumping.apply(p)
    rc, out = cli(capsys, "--registry", root, "validate")
    assert rc == 0, out
    for rel in naming:
        doc = yaml.safe_load((root / rel).read_text())
        assert "insects@1.0.1" in (doc["x"], doc["y"]) and doc["changelog"][-1]["version"] == doc["version"]


@pytest.mark.parametrize("value, accepted", [
    ("CC-BY-4.0", True), ("GPL-3.0", True), ("MIT OR Apache-2.0", True), ("unspecified", True),
    ("GPL-2.0-or-later WITH Classpath-exception-2.0", True), ("(MIT OR Apache-2.0) AND CC-BY-4.0", True),
    ("CC-BY-5.0", False), ("free for research", False), ("mit", False), ("MIT OR", False), ("(MIT", False),
    ("LicenseRef-lab-terms", False), ("Unspecified", False), ("", False)])
def test_licence_forms(value, accepted):
    assert (license_problem(value) is None) is accepted


def test_licence_refused_by_validate_and_add_with_the_nearest_ids(mini, capsys, tmp_path):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], license="CC-BY-5.0"))
    rc, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc != 0 and "set roses" in err and "field 'license'" in err
    assert "'CC-BY-5.0' is not on the SPDX licence list" in err and "did you mean CC-BY-4.0" in err
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"]))       # as it was
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(make_set("lilies", ["lily", "iris"], license="free for research")))
    rc, err = cli(capsys, "--registry", mini.root, "add", new)
    assert rc == 1 and "'free for research' is not on the SPDX licence list" in err and "nothing was written" in err
    ok = make_set("lilies", ["lily", "iris"], license="LicenseRef-lab-terms",
                  license_note="The lab's terms: https://example.org/terms")
    assert license_problem(ok["license"], True) is None


def test_every_shipped_licence_is_valid():
    cat = yaml.safe_load((ROOT / "catalog.yaml").read_text())
    values = {e["license"] for kind in ("sets", "tests", "templates", "criteria") for e in cat.get(kind) or []}
    assert "CC-BY-NC-4.0" in values and "unspecified" in values
    assert {v: license_problem(v) for v in values if license_problem(v)} == {}


SOURCE = {"id": "doe2026", "type": "article", "authors": ["Doe, Jane", "Roe, Richard"], "year": 2026,
          "title": "Word lists for measuring occupational stereotypes", "venue": "Journal of Examples",
          "volume": "12", "pages": "1-20", "doi": "10.1234/example.5678",
          "authors_repository": {"url": "https://github.com/doe/lists", "license": "CC-BY-4.0",
                                 "kind": "authors"}}


def test_add_a_source_then_a_set_naming_it(mini, capsys, tmp_path):
    sources = mini.root / "registry/sources.yaml"
    old = sources.read_text()
    f = tmp_path / "doe2026.yaml"
    f.write_text(yaml.safe_dump(SOURCE, sort_keys=False))
    rc, out = cli(capsys, "--registry", mini.root, "add", f)
    assert rc == 0, out
    assert sources.read_text().startswith(old)          # every line before stays as it was
    entry = yaml.safe_load(sources.read_text())["doe2026"]
    assert "journal = {Journal of Examples}" in entry["bibtex"] and "pages = {1--20}" in entry["bibtex"]
    assert "doi = {10.1234/example.5678}" in entry["bibtex"]
    rc, out = cli(capsys, "--registry", mini.root, "add", f)
    assert rc == 1 and "source 'doe2026' is already in registry/sources.yaml" in out
    s = tmp_path / "set.yaml"
    s.write_text("id: doe_nurses\nversion: 1.0.0\nconcept: Nursing occupations\nlicense: CC-BY-4.0\n"
                 "source: {paper: doe2026, table: Table 1}\nkind: group_term\nchangelog:\n"
                 "- {version: 1.0.0, date: '2026-11-28', change: Copied from Table 1.}\nitems: [nurse, midwife]\n")
    rc, out = cli(capsys, "--registry", mini.root, "add", s)
    assert rc == 0, out
    written = yaml.safe_load((mini.root / "registry/doe2026/sets/doe_nurses.yaml").read_text())
    assert written["items"] == ["nurse", "midwife"]
    rc, out = cli(capsys, "--registry", mini.root, "cite", "t1")
    assert rc == 0
    assert cli(capsys, "--registry", mini.root, "validate")[0] == 0


def test_a_bad_source_lists_every_problem(mini, capsys, tmp_path):
    before = (mini.root / "registry/sources.yaml").read_text()
    bad = {**SOURCE, "id": "testpaper", "type": "articl", "authors": ["Jane Doe"], "year": "2026", "colour": "red",
           "authors_repository": {"url": "https://x.org", "license": "CC-BY-5.0", "kind": "authors"}}
    del bad["doi"]
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(bad, sort_keys=False))
    rc, err = cli(capsys, "--registry", mini.root, "add", f)
    assert rc == 1
    for field in ("'id'", "'colour'", "'year'", "'authors'", "'type'", "'doi'", "'authors_repository.license'"):
        assert f"field {field}" in err, field
    assert "7 problem(s)" in err and "nothing was written" in err
    assert (mini.root / "registry/sources.yaml").read_text() == before


def test_a_colliding_set_lists_its_other_problems(mini, capsys, tmp_path):
    f = tmp_path / "roses.yaml"
    f.write_text(yaml.safe_dump(make_set("roses", [{"text": "rose", "kind": "nounz"}], license="CC-BY-5.0")))
    rc, err = cli(capsys, "--registry", mini.root, "add", f)
    assert rc == 1
    assert "set 'roses' already exists" in err and "eatlas bump roses" in err
    assert "unknown kind 'nounz'" in err and "not on the SPDX licence list" in err


def test_a_paired_forms_reference_follows_too():
    """A gendered test names its attribute's feminine form inside forms: (Lewis and Lupyan, Arabic): bumping that
    set plans the test's reference, version and changelog (plan only: nothing is written)."""
    p = bumping.plan(ROOT, "lewis2020_arabic_career_f", change="a test of bump's plan")
    assert [e.id for e in p.followers] == ["lewis2020_arabic"]
    e = p.followers[0]
    assert e.refs == [("feminine", "lewis2020_arabic_career_f@1.0.0", "lewis2020_arabic_career_f@1.0.1")]
    doc = yaml.safe_load(e.new_text)
    assert doc["forms"]["a"]["feminine"] == "lewis2020_arabic_career_f@1.0.1" and doc["version"] == "1.0.1"
