"""Every YAML example in the docs and README is valid: it parses, and a set, test or template example
passes the registry validator (`eatlas validate`) in a registry that holds what it names."""
import re
import shutil

import pytest
import yaml
from conftest import ROOT, MiniRegistry, write_yaml

from eatlas.registry.schemas import check_registry

DOCS = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def blocks() -> list[tuple[str, int, str]]:
    out = []
    for f in DOCS:
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M):
            out.append((str(f.relative_to(ROOT)), text[:m.start()].count("\n") + 1, m.group(1)))
    return out


def kind(doc) -> str:
    if not isinstance(doc, dict):
        return "other"
    if {"sets", "tests"} & set(doc):
        return "catalog"
    if "items" in doc:
        return "set"
    if {"x", "y", "a", "b"} <= set(doc):
        return "test"
    if "forms" in doc:                                      # a fragment of a test: its paired forms
        return "forms"
    if set(doc) == {"authors_repository"}:                  # a fragment of a source entry
        return "repository"
    if "families" in doc or "parts" in doc:
        return "template"
    if set(doc) == {"source"}:                              # a fragment of a set: where it comes from
        return "source"
    if "expansions" in doc or set(doc) == {"methods"}:       # a fragment of a test
        return "expansions"
    if "models" in doc and "paper" in doc:
        return "published_models"
    if {"paper", "convention"} <= set(doc):
        return "published_conventions"
    if doc and all(isinstance(v, dict) and "bibtex" in v for v in doc.values()):
        return "sources"
    return "other"


EXAMPLES = blocks()


def _registry(tmp_path) -> MiniRegistry:
    """The project's sources, templates and caliskan2017 sets, in a fresh registry folder."""
    r = MiniRegistry(tmp_path / "reg")
    shutil.copy(ROOT / "registry" / "sources.yaml", r.root / "registry" / "sources.yaml")
    for t in (ROOT / "templates").glob("*.yaml"):
        shutil.copy(t, r.root / "templates" / t.name)
    shutil.copytree(ROOT / "registry" / "caliskan2017" / "sets", r.root / "registry" / "caliskan2017" / "sets")
    return r


def _test_example() -> dict:
    return next(yaml.safe_load(b) for _, _, b in EXAMPLES if kind(yaml.safe_load(b)) == "test")


def test_the_docs_have_set_test_and_template_examples():
    kinds = [kind(yaml.safe_load(b)) for _, _, b in EXAMPLES]
    assert {"catalog", "set", "test", "template", "expansions", "published_models", "published_conventions",
            "sources"} <= set(kinds)


@pytest.mark.parametrize("where,line,text", EXAMPLES, ids=[f"{f}:{n}" for f, n, _ in EXAMPLES])
def test_every_yaml_example_is_valid(where, line, text, tmp_path):
    doc = yaml.safe_load(text)
    k = kind(doc)
    r = _registry(tmp_path)
    if k == "set":
        write_yaml(r.root / "registry" / "caliskan2017" / "sets" / f"{doc['id']}.yaml", doc)
    elif k == "test":
        write_yaml(r.root / "registry" / "caliskan2017" / "tests" / f"{doc['id']}.yaml", doc)
    elif k == "template":
        write_yaml(r.root / "templates" / f"{doc['id']}.yaml", doc)
    elif k == "expansions":            # a fragment of a test: placed into the docs' test example
        write_yaml(r.root / "registry" / "caliskan2017" / "tests" / "example.yaml",
                   {**_test_example(), "id": "example", **doc})
    elif k == "catalog":
        assert set(doc) <= {"sets", "tests", "templates", "published"}
        for entries in doc.values():
            assert all({"id", "file"} <= set(e) for e in entries)
        return
    elif k == "published_models":
        from eatlas.encoders.identity import read_published_models
        write_yaml(r.root / "registry" / "may2019" / "published" / "models.yaml", doc)
        r.sync()
        assert len(read_published_models(r.load())) == len(doc["models"])
        return
    elif k == "published_conventions":
        from eatlas.registry.published import read_conventions
        write_yaml(r.root / "registry" / doc["paper"] / "published" / "conventions.yaml", doc)
        r.sync()
        assert [c["paper"] for c in read_conventions(r.load())] == [doc["paper"]]     # then validated below
    elif k == "source":
        from eatlas.registry.models import SourceModel
        SourceModel.model_validate(doc["source"])
        for d in doc["source"].get("differences", []):
            assert {"position", "text", "reason"} <= set(d) <= {"position", "text", "stored", "reason"}, d
            assert isinstance(d["position"], int) and d["position"] >= 0
        return
    elif k == "forms":
        from eatlas.registry import load_registry
        from eatlas.registry.models import FormsModel
        forms = FormsModel.model_validate(doc["forms"])
        assert doc["a"] == forms.a[forms.x] and doc["b"] == forms.b[forms.x]      # a and b: x's forms
        reg = load_registry(ROOT)
        assert all(reg.get_set(ref) for role in (forms.a, forms.b) for ref in role.values())
        return
    elif k == "repository":
        from eatlas.registry.models import RepositoryModel
        RepositoryModel.model_validate(doc["authors_repository"])
        return
    elif k == "sources":
        from eatlas.registry.cite import check_sources
        checked = check_sources(doc)
        assert set(checked) == set(doc) and all(v["citation"] for v in checked.values())
        return
    else:
        pytest.fail(f"{where}:{line}: a YAML example of no known kind")
    r.sync()
    problems = check_registry(r.load())
    assert [p.render() for p in problems] == [], f"{where}:{line}"


def test_eatlas_add_needs_the_sets_before_the_test_that_names_them(mini, tmp_path, capsys):
    """The order docs/registry-format.md documents: a test naming a set not yet added is refused, and
    nothing is written; once the set is in, the test is added."""
    from conftest import make_set, make_test

    from eatlas.cli import main

    new_set = write_yaml(tmp_path / "weeds.yaml", make_set("weeds", ["nettle", "thistle", "dock", "bramble"]))
    new_test = write_yaml(tmp_path / "t2.yaml", make_test("t2", "weeds@1.0.0", "bugs@1.0.0", "good@1.0.0",
                                                          "bad@1.0.0"))
    before = (mini.root / "catalog.yaml").read_bytes()
    assert main(["--registry", str(mini.root), "add", str(new_test)]) != 0
    assert "weeds" in capsys.readouterr().err
    assert (mini.root / "catalog.yaml").read_bytes() == before
    assert not (mini.root / "registry" / "testpaper" / "tests" / "t2.yaml").exists()
    assert main(["--registry", str(mini.root), "add", str(new_set)]) == 0
    assert main(["--registry", str(mini.root), "add", str(new_test)]) == 0
    assert (mini.root / "registry" / "testpaper" / "tests" / "t2.yaml").exists()
