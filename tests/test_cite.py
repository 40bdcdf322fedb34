"""The bibliography (registry/sources.yaml), its checks, and `eatlas cite`."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

import eatlas
from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.registry import Registry, load_registry
from eatlas.registry.cite import check_sources, citations, eatlas_bibtex, source_keys
from tests.conftest import TESTPAPER, make_set, write_yaml

ROOT = Path(__file__).resolve().parents[1]
KEY = re.compile(r"\b[a-z][a-z_]*\d{4}[a-z]?\b")


def _parse(bib: str):
    """A real BibTeX parser (pybtex, a test extra) reads the entries."""
    return pytest.importorskip("pybtex.database").parse_string(bib, "bibtex")


# ---------------------------------------------------------------- the shipped bibliography

def test_every_source_is_a_full_reference_with_valid_bibtex():
    reg = load_registry()
    assert len(reg.sources) >= 8
    for key, src in reg.sources.items():
        (entry,) = _parse(src["bibtex"]).entries.values()
        assert entry.key == key and entry.type == src["type"]
        assert [str(p) for p in entry.persons["author"]] == src["authors"], key
        assert entry.fields["year"] == str(src["year"])
        assert entry.fields["title"].replace("{", "").replace("}", "") == src["title"]
        assert src["venue"] and src["citation"].startswith(src["authors"][0].split(",")[0])
        repo = src.get("authors_repository")
        if repo:
            assert repo["url"].startswith("https://github.com/") and repo["license"]
        assert src.get("checked"), f"{key}: say where the bibliographic data were read"


def test_every_key_the_registry_uses_is_in_the_bibliography():
    reg = load_registry()
    used: dict[str, str] = {}
    for path in sorted([*ROOT.glob("registry/*/sets/*.yaml"), *ROOT.glob("registry/*/tests/*.yaml"),
                        *ROOT.glob("templates/*.yaml")]):
        src = yaml.safe_load(path.read_text(encoding="utf-8")).get("source") or {}
        used.setdefault(src["paper"], str(path))
        for f in ("based_on", "secondary"):
            for k in KEY.findall(str(src.get(f) or "")):
                used.setdefault(k, f"{path} {f}")
    for path in ROOT.glob("registry/*/published/*.csv"):
        with path.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                used.setdefault(row["paper"], str(path))
    missing = {k: where for k, where in used.items() if k not in reg.sources}
    assert not missing, f"cited but not in registry/sources.yaml: {missing}"
    assert {"caliskan2017", "may2019", "guo2021", "tan2019", "wolfe2024", "zhao2018", "heilman2004",
            "ghavami2013"} <= set(used)
    assert set(reg.sources) <= set(used), "a source nothing cites"


# ---------------------------------------------------------------- the checks

def _entry(**change):
    doc = {k: v for k, v in {**TESTPAPER, **change}.items() if v is not None}
    return {"testpaper": doc}


@pytest.mark.parametrize("change, says", [
    ({"citaton": "typo"}, "field 'citaton': unknown key(s) citaton"),
    ({"title": None, "bibtex": None}, "field 'title': missing required field(s) title, bibtex"),
    ({"year": "2026"}, "field 'year': expected int"),
    ({"authors": ["Ada Tester"]}, "each author must be text 'Last, First'"),
    ({"doi": "https://doi.org/10.1/x"}, "is not a DOI"),
    ({"bibtex": TESTPAPER["bibtex"].replace("{testpaper,", "{other,")}, "entry is @article{other"),
    ({"bibtex": TESTPAPER["bibtex"].replace("2026", "2025")},
     "BibTeX year '2025' differs from the entry's year '2026'"),
    ({"authors_repository": {"url": "https://github.com/a/b"}}, "needs url and license"),
    ({"authors_repository": {"url": "https://github.com/a/b", "license": "MIT"}},
     "field 'authors_repository.kind': kind is None: say whose the repository is"),
    ({"authors_repository": {"url": "https://github.com/a/b", "license": "MIT", "kind": "fork"}},
     "kind is 'fork'"),
    ({"authors_repository": {"url": "https://github.com/a/b", "license": "MIT", "kind": "reproduction"}},
     "field 'authors_repository.by': a reproduction names who made it (by:)"),
])
def test_bad_entries_are_refused_with_the_field(change, says):
    with pytest.raises(EatlasError) as e:
        check_sources(_entry(**change))
    msg = e.value.render()
    assert msg.startswith("file registry/sources.yaml, source testpaper") and says in msg, msg
    assert "\n" not in msg


def test_an_old_style_entry_gets_a_clear_error_through_validate(mini, capsys):
    write_yaml(mini.root / "registry" / "sources.yaml", {"testpaper": {"citation": "A test source."}})
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"]))
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) != 0
    err = capsys.readouterr().err
    assert "registry/sources.yaml" in err and "missing required field(s) type, authors, year" in err


def test_a_valid_entry_gets_its_one_line_citation():
    (src,) = check_sources(_entry()).values()
    assert src["citation"] == "Tester, A. (2026). A test source. Journal of Tests."
    assert check_sources(_entry(citation="As I like it."))["testpaper"]["citation"] == "As I like it."


# ---------------------------------------------------------------- eatlas cite

def _keys(text: str) -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", text, flags=re.M)


def test_cite_prints_valid_bibtex_for_the_test_its_sets_and_eatlas(capsys):
    assert main(["cite", "weat1"]) == 0
    out = capsys.readouterr().out
    keys = _keys(out)
    assert keys[0] == "caliskan2017" and keys[-1] == "eatlas" and len(keys) == len(set(keys))
    assert "may2019" in keys          # the lists are sent-bias's files (CC BY-NC 4.0: attribution)
    assert set(_parse(out).entries) == set(keys)
    assert main(["cite", "weat1"]) == 0 and capsys.readouterr().out == out      # stable


def test_cite_adds_the_template_source_at_sentence_levels():
    reg = load_registry()
    word, sent = source_keys(reg, "weat+occ", "word"), source_keys(reg, "weat+occ", "sent")
    assert word == ["tan2019", "zhao2018"]                 # the test's paper, then the WinoBias sets'
    assert sent == word + ["may2019"]                      # the bleached templates are May et al.'s
    assert "heilman2004" in source_keys(reg, "heilman_double_bind_competent_1+3-")     # based_on
    assert source_keys(reg, "ceat_i1") == ["guo2021", "ghavami2013"]                   # secondary
    assert [k for k, _ in citations(reg, "weat+occ", "c-word")][-1] == "eatlas"


def test_cite_refuses_an_unknown_test_or_level(capsys):
    assert main(["cite", "weat99"]) == 2
    assert "unknown test 'weat99'" in capsys.readouterr().err
    assert main(["cite", "weat1", "--level", "sent(u)"]) == 2
    assert "has no level 'sent(u)'" in capsys.readouterr().err


def test_eatlas_entry_matches_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    (entry,) = _parse(eatlas_bibtex()).entries.values()
    assert cff["version"] == eatlas.__version__ == entry.fields["version"]
    assert cff["title"] == entry.fields["title"]
    assert [a["name"] for a in cff["authors"]] == ["EATlas contributors"]
    assert entry.persons["author"][0].last_names == ["{EATlas contributors}"]
    assert cff["license"] == entry.fields["license"] == "Apache-2.0"


def test_citations_work_on_a_lab_registry(mini):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"]))
    reg = Registry(mini.root)
    assert set(reg.sources) == {"testpaper"}
    assert reg.sources["testpaper"]["citation"].startswith("Tester, A. (2026)")


def test_the_docs_show_what_cite_prints(capsys):
    guide = (ROOT / "docs" / "guides" / "stimuli.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Citing"):]
    shown = section[section.index("```bibtex\n") + len("```bibtex\n"):section.index("\n```\n")]
    assert main(["cite", "weat1"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == shown
