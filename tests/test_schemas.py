"""Each validation rule, with the message a curator sees (file, set or test, field)."""
import pytest
import yaml

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.registry import Registry
from eatlas.registry.schemas import check_registry
from tests.conftest import make_set, make_test, write_yaml


def problems(reg_folder):
    return [p.render() for p in check_registry(Registry(reg_folder.root))]


def test_valid_registry_passes(mini, capsys):
    assert problems(mini) == []
    assert main(["--registry", str(mini.root), "validate"]) == 0


def only(msgs, *needles):
    hits = [m for m in msgs if all(n in m for n in needles)]
    assert hits, f"no message with {needles} in {msgs}"
    return hits[0]


def test_duplicate_item(mini):
    mini.add_set(make_set("roses", ["rose", "tulip", "rose", "lily"]))
    msg = only(problems(mini.sync()), "duplicate item")
    assert "registry/testpaper/sets/roses.yaml" in msg and "set roses" in msg and "items[2].text" in msg


def test_duplicate_after_unicode_normalisation_and_case_folding(mini):
    mini.add_set(make_set("roses", ["café", "cafe\u0301", "daisy", "lily"]))
    assert only(problems(mini.sync()), "duplicate item", "set roses")
    mini.add_set(make_set("roses", ["Rose", "rose", "daisy", "lily"], case_sensitive=False))
    assert only(problems(mini.sync()), "duplicate item", "case folded")


def test_item_in_both_targets(mini):
    mini.add_set(make_set("bugs", ["ant", "moth", "rose", "flea"]))
    msg = only(problems(mini.sync()), "in both x and y")
    assert "test t1" in msg and "'rose'" in msg


def test_unequal_targets(mini):
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp"]))
    assert only(problems(mini.sync()), "|X|=4 and |Y|=3", "test t1")


def test_unknown_kind(mini):
    mini.add_set(make_set("roses", [{"text": "rose", "kind": "flower"}, "tulip", "daisy", "lily"]))
    msg = only(problems(mini.sync()), "unknown kind 'flower'", "set roses", "one of: name, noun")
    assert "items[0].kind" in msg and "'flower'" in msg


def test_pronoun_needs_case(mini):
    mini.add_set(make_set("roses", [{"text": "he", "kind": "pronoun"}, "tulip", "daisy", "lily"]))
    msg = only(problems(mini.sync()), "pronoun needs its case")
    assert "items[0].case" in msg


def test_empty_set(mini):
    mini.add_set(make_set("roses", []))
    assert only(problems(mini.sync()), "set roses", "no items")


def test_missing_set_reference(mini):
    mini.add_test(make_test("t1", "roses@1.0.0", "beetles@1.0.0", "good@1.0.0", "bad@1.0.0"))
    msg = only(problems(mini.sync()), "'beetles'")
    assert "test t1" in msg and "field 'y'" in msg


def test_wrong_set_version(mini):
    mini.add_test(make_test("t1", "roses@2.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    assert only(problems(mini.sync()), "roses@2.0.0", "field 'x'")


def test_content_changed_without_version_bump(mini):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "iris"]))
    assert only(problems(mini), "content changed but version 1.0.0 did not", "set roses")
    with pytest.raises(EatlasError, match="content changed"):
        mini.sync(fresh=False)
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "iris"], version="1.1.0"))
    mini.add_test(make_test("t1", "roses@1.1.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", version="1.1.0"))
    assert problems(mini.sync(fresh=False)) == []


@pytest.mark.parametrize("doc_change, needle", [
    ({"version": "1.0"}, "not semantic"),
    ({"id": "../evil"}, "invalid id"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"items": "rose"}, "expected a list"),
    ({"license": None}, "missing required field"),
])
def test_bad_set_fields_name_file_and_field(mini, doc_change, needle):
    doc = make_set("roses", ["rose", "tulip", "daisy", "lily"])
    doc.update(doc_change)
    write_yaml(mini.root / "registry/testpaper/sets/roses.yaml", doc)
    with pytest.raises(EatlasError) as e:
        mini.sync()
    assert needle in str(e.value) and "registry/testpaper/sets/roses.yaml" in str(e.value)


def test_malformed_yaml_gives_line(mini):
    (mini.root / "registry/testpaper/sets/roses.yaml").write_text("id: roses\nitems: [a, b\n")
    with pytest.raises(EatlasError, match=r"malformed YAML at line \d+") as e:
        mini.sync()
    assert "roses.yaml" in str(e.value)


def test_bare_string_item(mini):
    doc = make_set("roses", ["rose"])
    doc["items"] = ["rose", "tulip"]
    mini.add_set(doc)
    with pytest.raises(EatlasError, match="bare string; give its kind"):
        mini.sync()


def test_catalog_path_cannot_leave_registry(mini):
    cat = yaml.safe_load((mini.root / "catalog.yaml").read_text())
    cat["sets"][0]["file"] = "../../etc/passwd"
    write_yaml(mini.root / "catalog.yaml", cat)
    with pytest.raises(EatlasError, match="leaves the registry folder"):
        Registry(mini.root)


def test_validate_cli_exits_non_zero_with_message(mini, capsys):
    mini.add_set(make_set("bugs", ["ant", "moth", "rose", "flea"]))
    mini.sync()
    assert main(["--registry", str(mini.root), "validate"]) == 1
    err = capsys.readouterr().err
    assert "registry/testpaper/tests/t1.yaml" in err and "test t1" in err and "Traceback" not in err


def test_project_registry_is_valid():
    from eatlas.registry.checks import split_warnings
    from tests.conftest import ROOT
    errors, _ = split_warnings(check_registry(Registry(ROOT)))   # warnings: items the authors' lists share
    assert errors == []
