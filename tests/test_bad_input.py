"""A catalogue of bad input: every kind gives a one-line message naming the file, the set or test,
the field and what to do, a non-zero exit through the CLI, and never a traceback.

At the end, property-based tests feed random YAML documents and random mutations of a real set
file to the loader: it either loads them or raises EatlasError, never anything else.

Faults, outputs and degenerate content are in tests/test_data_loss.py (issue 15), 41 cases by kind:
- outputs that would overwrite what eatlas did not write (12): report over the results database,
  over a user's file, over its own file edited since; report, export and publish into the registry;
  export and EAT-Maps over a user's file; publish beside a user's file (kept), over an edited file,
  over a foreign file in the way, into a non-empty folder it never published into;
- command-line integers beyond the store (3): --seed 2**70, --n-samples 10**30, --n-samples 1e30;
- store faults, refused before any work (8): truncated database, text file, SQLite file, location
  that cannot be written (/proc), a folder as --db, a missing folder; disk full at commit (database
  left as it was); an empty SQL query;
- degenerate vectors and results (8): zero vector, NaN vector, a role with no vector left, identical
  target vectors, an undefined effect size (standard deviation 0), NaN in the embedding cache, a
  case collision (Aster/aster) in the model, a published inf in the report;
- stored text on the terminal (6): unbalanced and balanced rich markup in items, an escape sequence
  in notes, markup in a title (list/show), markup and escapes in SQL values, markup in a model path
  (run table), markup in validate's own error report;
- CSV formula injection (2): sql --format csv, export --format csv;
- eatlas add killed (2): after writing the file, in the middle of writing it.

Long work and corpora (issue 24), continued in tests/test_long_work.py (11 cases: a sweep whose database a
reader holds past --wait or briefly, a run on a database in use, a write failing mid-sweep, a truncated
database, resume after a bumped test, a rewritten vector file and a run stored by `eatlas run`, the planned
and stored keys, run's options in a sweep, a path with a comma, kill -9 of a Ray driver) and
tests/test_corpus_shards.py (a single JSONL or gzip corpus, 7 bad JSONL lines, a shard without text on Ray,
null text, parquet columns of numbers or lists, truncated parquet and gzip files, a non-UTF-8 line, a
stimulus in a 4 MB line and its window). Trust boundaries (issue 24: results import, a store that drifted,
sql output, options, the dataset card) are catalogued in tests/test_trust_import.py, in the same style.

Catalogue, continued in tests/test_validation.py (68 cases; each refused by validate, and by run
where it bears on the tests run):
- stimulus characters and look-alikes: 21 (15 control/format/space characters by code point, mixed
  scripts, one accepted single-script control, a confusable within a set, two across targets,
  NFC/NFD forms across targets);
- test structure (a set or an item in a target and an attribute role): 3;
- templates (a sentence without the stimulus, empty or blank, through a part; a 10^8-word bomb in
  validate and in run; parts nested too deep): 8;
- run refuses what validate refuses (duplicate, 100,000-character item, kind: Name, zero-width
  space, a set edited without a version bump, only the tests run are checked): 6;
- published tables (header swapped or extra; non-numeric, infinite or empty value; unknown test
  id, level, family; bad missing flag; formula-like cells; version and hash): 15;
- loader entries (unknown keys, types, backend, required field, weights paths and module, id vs
  file name, YAML tags; the project's loaders): 11;
- paths (sources.yaml or catalog.yaml linked outside the registry): 2;
- tags (a list of ids, matched whole): 2.

Outputs that cannot be turned against their user (at the end of this file):
- a planted manifest listing files outside its folder ('..', an absolute path, through a symbolic link) and
  the results database, refused with nothing written or removed, by each writer (5): site, publish, export,
  EAT-Maps, results export; a manifest naming the database or a registry file inside its folder (guard); a
  report that leaves no manifest and never replaces a file it did not write or one edited since;
- a hostile results file (a declared table as a view over a local file, a macro replacing a built-in) refused
  by each reader with nothing of the file read (13): site, report and the run's store check (published_results
  view, run_inputs view, macro), show-influence, results export, results import, sweep --resume (run_inputs
  view); a file whose own reproduction view reads a local file, read through EATlas's views (report, site);
- Ctrl-C in a site after a page (what it wrote is said) and before any file ("nothing was written");
- cache clear beside a user's file, another program's .npz folder, a file in the registry cache folder and a
  symbolic link out: only the cache's own files removed;
- a site after five runs of two models: every published row joins a published run, counted once;
- results import of a run of an unknown method, of implausible times, finished before started, with a result
  of another model, of a test the run did not run (5);
- a set with a test's id and a test with a set's id, in add and in validate;
- add of a FIFO (never read), a folder, /dev/zero; read_yaml of a folder and a device;
- sql csv of NULL, NaN, HUGEINT, DECIMAL(38,9), BLOB, struct, list, infinity; a 5 MB cell in the table format;
- models on cached hub models: a tokenizer auto_map, a bare pickle, a torch checkpoint naming an unsafe
  class, a repository with a ref to a commit not in the cache.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.registry import Registry, parse_set, parse_template, parse_test, parse_yaml, read_yaml
from tests.conftest import ROOT, make_set, make_test, write_yaml

ROSES = "registry/testpaper/sets/roses.yaml"
T1 = "registry/testpaper/tests/t1.yaml"


# ----------------------------------------------------------------------------- helpers
def cli(capsys, *args) -> tuple[int, str]:
    rc = main([str(a) for a in args])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err and "Traceback" not in cap.out
    return rc, cap.err


def says(rc: int, err: str, *needles: str, code: int | None = None):
    """Non-zero exit and every needle (file, object, field, what to do) in the message."""
    assert rc != 0, err
    if code is not None:
        assert rc == code, (rc, err)
    assert err.lstrip().startswith("error: "), err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"


def validate(mini, capsys) -> tuple[int, str]:
    return cli(capsys, "--registry", mini.root, "validate")


def write_raw(mini, rel: str, data: str | bytes) -> Path:
    p = mini.root / rel
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def edit_catalog(mini, fn):
    cat = yaml.safe_load((mini.root / "catalog.yaml").read_text())
    fn(cat)
    write_yaml(mini.root / "catalog.yaml", cat)


def with_set(mini, capsys, doc) -> tuple[int, str]:
    """Replace set roses by ``doc`` (catalog rebuilt) and validate."""
    cat = (mini.root / "catalog.yaml").read_bytes()
    mini.add_set(doc)
    try:
        mini.sync()
    except EatlasError:     # the catalog keeps the previous entry; validate reports the file
        (mini.root / "catalog.yaml").write_bytes(cat)
    return validate(mini, capsys)


def roses(items=("rose", "tulip", "daisy", "lily"), **kw):
    return make_set("roses", list(items), **kw)


# ----------------------------------------------------------------------------- YAML itself
def test_malformed_yaml(mini, capsys):
    write_raw(mini, ROSES, "id: roses\nversion: 1.0.0\nitems: [a, b\n")
    says(*validate(mini, capsys), ROSES, "set roses", "malformed YAML at line 4", "check the indentation", code=2)


def test_tabs_in_yaml(mini, capsys):
    write_raw(mini, ROSES, "id: roses\nitems:\n\t- {text: rose, kind: noun}\n")
    says(*validate(mini, capsys), ROSES, "set roses", "line 3, column 1", "YAML does not allow tabs")


@pytest.mark.parametrize("text, what", [("- rose\n- tulip\n", "got a list"), ("just some words\n", "got text"),
                                        ("42\n", "got int")])
def test_top_level_list_or_scalar(mini, capsys, text, what):
    write_raw(mini, ROSES, text)
    says(*validate(mini, capsys), ROSES, "set roses", "must be a mapping", what, "key: value lines")


def test_empty_file(mini, capsys):
    write_raw(mini, ROSES, "# nothing yet\n")
    says(*validate(mini, capsys), ROSES, "set roses", "the file is empty", "start it with id:")


def test_several_documents_in_one_file(mini, capsys):
    write_raw(mini, ROSES, (mini.root / ROSES).read_text() + "---\nid: other\n")
    says(*validate(mini, capsys), ROSES, "set roses", "more than one YAML document", "one document per file")


def test_billion_laughs_is_bounded(mini, capsys):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 10) + "]")
    write_raw(mini, ROSES, "\n".join(lines) + "\nid: roses\n")
    t = time.perf_counter()
    rc, err = validate(mini, capsys)
    assert time.perf_counter() - t < 5
    says(rc, err, ROSES, "set roses", "expands to more than", "aliases", "no anchors (&) or aliases (*)")


def test_recursive_alias(mini, capsys):
    write_raw(mini, ROSES, "id: roses\nnotes: &n [*n]\n")
    says(*validate(mini, capsys), ROSES, "set roses", "recursive alias at line 2", "no anchors")


@pytest.mark.parametrize("tag", ["!!python/object/apply:os.system", "!!python/object/new:os.system",
                                 "!!python/name:os.system", "!custom"])
def test_python_tags_are_refused_and_nothing_runs(mini, capsys, tmp_path, tag):
    marker = tmp_path / "pwned"
    write_raw(mini, ROSES, f'id: roses\nnotes: {tag} ["touch {marker}"]\n')
    rc, err = validate(mini, capsys)
    says(rc, err, ROSES, "set roses", f"tag {tag} is not allowed at line 2", "remove the tag")
    if "python" in tag:
        assert "nothing in them is run" in err
    assert not marker.exists()


def test_python_tag_in_eatlas_add(tmp_path, capsys, mini):
    marker = tmp_path / "pwned"
    f = tmp_path / "new.yaml"
    f.write_text(f'id: lilies\nversion: 1.0.0\nnotes: !!python/object/apply:os.system ["touch {marker}"]\n')
    says(*cli(capsys, "--registry", mini.root, "add", f), "new.yaml", "!!python/object/apply:os.system",
         "remove the tag")
    assert not marker.exists()


def test_duplicate_keys(mini, capsys):
    write_raw(mini, ROSES, (mini.root / ROSES).read_text() + "items: []\n")
    says(*validate(mini, capsys), ROSES, "set roses", "duplicate key 'items'", "field 'items'",
         "keep only the last one")


def test_absurd_nesting(mini, capsys):
    write_raw(mini, ROSES, "id: roses\nnotes: " + "[" * 5000 + "]" * 5000 + "\n")
    says(*validate(mini, capsys), ROSES, "set roses", "nested more than 64 levels deep at line 2",
         "check the brackets", code=2)
    write_raw(mini, ROSES, "id: roses\nnotes: " + "[" * 100 + "]" * 100 + "\n")
    says(*validate(mini, capsys), ROSES, "set roses", "nested more than 64 levels deep at line 2",
         "check the brackets", code=2)


_LOADERS = [pytest.param(getattr(yaml, "CSafeLoader", None), id="libyaml",
                         marks=pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False),
                                                  reason="PyYAML built without libyaml")),
            pytest.param(yaml.SafeLoader, id="pure-python")]


def _parsers_own_limit(loader) -> int | None:
    """The nesting depth from which ``loader`` itself refuses a block list (libyaml 0.2.6, in PyYAML 6.0.4's
    wheels: 1,000 levels; the pure-Python composer: where Python's stack runs out), found by bisection;
    None when it takes 20,000 levels."""
    def refuses(n):
        ld = loader("- " * n + "x\n")
        try:
            ld.get_single_node()
            return False
        except (yaml.YAMLError, RecursionError):
            return True
        finally:
            ld.dispose()
    lo, hi = 1, 20_000
    if not refuses(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if refuses(mid) else (mid + 1, hi)
    return lo


@pytest.mark.parametrize("loader", _LOADERS)
def test_nesting_message_is_eatlas_own_whatever_the_parser(mini, capsys, monkeypatch, loader):
    """EATlas's depth limit (64) speaks, in its own words, below the parser's own limit, at it and far
    above it, whichever PyYAML release and loader is installed (libyaml stops deep nesting itself since
    0.2.6, with its own message)."""
    import eatlas.registry.base as registry

    monkeypatch.setattr(registry, "_Loader", loader)
    theirs = _parsers_own_limit(loader)
    ours = registry.MAX_YAML_DEPTH
    assert theirs is None or theirs > ours + 2
    depths = [ours + 1] + ([theirs - 1, theirs + 1, 2 * theirs] if theirs else [5_000])
    shapes = {"flow list": lambda n: "id: roses\nnotes: " + "[" * n + "]" * n + "\n",
              "flow mapping": lambda n: "id: roses\nnotes: " + "{a: " * n + "b" + "}" * n + "\n",
              "block mapping": lambda n: "id: roses\nnotes:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(n))
              + " " * (n + 1) + "v\n",
              "block list": lambda n: "id: roses\nnotes:\n" + "- " * n + "x\n"}
    for shape, text in shapes.items():
        for n in depths:
            with pytest.raises(EatlasError) as e:
                parse_yaml(text(n), ROSES)
            msg = e.value.render()
            assert msg.startswith(f"file {ROSES}: nested more than {ours} levels deep at line "), (shape, n, msg)
            assert msg.endswith("(registry files are a few levels deep; check the brackets and indentation)"), msg
        assert parse_yaml(text(ours - 2), ROSES)["id"] == "roses"       # within the limit: read as it is
    write_raw(mini, ROSES, shapes["flow list"](depths[-1]))     # and through validate: file, object, exit 2
    says(*validate(mini, capsys), f"file {ROSES}, set roses: nested more than {ours} levels deep at line 2",
         "check the brackets and indentation", code=2)


def test_non_utf8_file(mini, capsys):
    write_raw(mini, ROSES, (mini.root / ROSES).read_text().replace("tulip", "café").encode("latin-1"))
    says(*validate(mini, capsys), ROSES, "set roses", "not valid UTF-8 (byte", "save the file as UTF-8")


def test_absurdly_large_file(mini, capsys):
    write_raw(mini, ROSES, "id: roses\nnotes: |\n" + "  lorem ipsum\n" * 200_000)
    t = time.perf_counter()
    says(*validate(mini, capsys), ROSES, "set roses", "over the 2000000-byte limit", "split it")
    assert time.perf_counter() - t < 5


def test_bom_prefixed_file_loads(mini, capsys):
    p = mini.root / ROSES
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    rc, err = validate(mini, capsys)
    assert rc == 0, err
    assert Registry(mini.root).sets["roses"].items[0].text == "rose"


# ----------------------------------------------------------------------------- fields of a set
def test_wrong_type_of_field(mini, capsys):
    says(*with_set(mini, capsys, roses(concept=["Roses", "Tulips"])), ROSES, "set roses", "field 'concept'",
         "expected text, got a list", "quote values")


def test_wrong_type_of_item_value(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": 1984, "kind": "noun"}, "tulip"])), ROSES, "set roses",
         "field 'items[0].text'", "expected text, got int", "quote values")


def test_items_not_a_list(mini, capsys):
    says(*with_set(mini, capsys, roses(items=()) | {"items": {"text": "rose"}}), ROSES, "set roses",
         "field 'items'", "expected a list", "write items as a list")


def test_unknown_key(mini, capsys):
    says(*with_set(mini, capsys, roses(colour="red")), ROSES, "set roses", "field 'colour'",
         "unknown key(s) colour", "allowed: case_sensitive, changelog")


def test_unknown_key_in_item(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": "rose", "kind": "noun", "colour": "red"}])), ROSES,
         "set roses", "field 'items[0].colour'", "allowed: article, case")


def test_missing_required_field(mini, capsys):
    doc = roses()
    del doc["license"]
    says(*with_set(mini, capsys, doc), ROSES, "set roses", "field 'license'", "missing required field",
         "add license:")


def test_item_without_kind(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": "rose"}])), ROSES, "set roses", "field 'items[0].kind'",
         "the item has no kind", "every item needs text and kind")


def test_item_as_bare_string(mini, capsys):
    doc = roses()
    doc["items"] = ["rose", "tulip"]
    says(*with_set(mini, capsys, doc), ROSES, "set roses", "field 'items[0]'", "bare string", "kind: noun")


def test_empty_set(mini, capsys):
    says(*with_set(mini, capsys, roses(items=())), ROSES, "set roses", "field 'items'", "the set has no items",
         "add items", code=1)


def test_duplicate_item(mini, capsys):
    says(*with_set(mini, capsys, roses(["rose", "tulip", "rose", "lily"])), ROSES, "set roses",
         "field 'items[2].text'", "duplicate item", "remove the repeated item", code=1)


def test_duplicate_after_unicode_normalisation(mini, capsys):
    says(*with_set(mini, capsys, roses(["café", "cafe\u0301", "daisy", "lily"])), ROSES, "set roses",
         "field 'items[1].text'", "duplicate item", "Unicode normalisation", "remove the repeated item", code=1)


def test_duplicate_after_case_folding(mini, capsys):
    says(*with_set(mini, capsys, roses(["Rose", "rose", "daisy", "lily"], case_sensitive=False)), ROSES,
         "set roses", "field 'items[1].text'", "case folded", "remove the repeated item", code=1)
    rc, err = with_set(mini, capsys, roses(["Rose", "rose", "daisy", "lily"]))   # case-sensitive by default
    assert rc == 0, err


def test_case_sensitive_must_be_a_boolean(mini, capsys):
    says(*with_set(mini, capsys, roses(case_sensitive="no")), ROSES, "set roses", "field 'case_sensitive'",
         "expected true or false", "(unquoted)")


@pytest.mark.parametrize("text", ["", "   ", "\u3000\t"])
def test_item_with_empty_text(mini, capsys, text):
    says(*with_set(mini, capsys, roses([text, "tulip", "daisy", "lily"])), ROSES, "set roses",
         "field 'items[0].text'", "the item's text is empty", "or remove the item", code=1)


def test_pronoun_without_case(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": "he", "kind": "pronoun"}, "tulip", "daisy", "lily"])), ROSES,
         "set roses", "field 'items[0].case'", "a pronoun needs its case", "add case: subject", code=1)


def test_case_on_a_noun(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": "rose", "kind": "noun", "case": "object"}, "tulip"])), ROSES,
         "set roses", "field 'items[0].case'", "only pronouns take a case", code=1)


def test_unknown_stimulus_kind(mini, capsys):
    says(*with_set(mini, capsys, roses([{"text": "rose", "kind": "flower"}, "tulip", "daisy", "lily"])), ROSES,
         "set roses", "field 'items[0].kind'", "'flower'", "one of: name, noun, group_term", code=1)


@pytest.mark.parametrize("version, hint", [("1.0", "three numbers"), (1.0, "write it quoted"),
                                           ("v1.0.0", "three numbers"), ("01.0.0", "three numbers")])
def test_version_not_semver(mini, capsys, version, hint):
    says(*with_set(mini, capsys, roses(version=version)), ROSES, "set roses", "field 'version'", "not semantic",
         hint)


@pytest.mark.parametrize("bad", ["../evil", "a/b", "Roses", "a..b", "/etc/passwd", ""])
def test_ids_with_path_separators_or_dots(mini, capsys, bad):
    doc = roses()
    doc["id"] = bad
    write_yaml(mini.root / ROSES, doc)
    says(*validate(mini, capsys), ROSES, "field 'id'", "invalid id", "no '/', no '..'")


def test_content_changed_without_version_bump(mini, capsys):
    mini.add_set(roses(["rose", "tulip", "daisy", "iris"]))
    says(*validate(mini, capsys), ROSES, "set roses", "field 'version'", "content changed but version 1.0.0 did not",
         "bump the version", code=1)
    says(*cli(capsys, "--registry", mini.root, "catalog"), ROSES, "set roses", "content changed", "bump the version")


def test_version_may_not_go_down(mini, capsys):
    """An old version number must not come back with other content: 1.0.0 -> 0.0.1 -> '1.0.0' again."""
    doc = roses(["rose", "tulip", "daisy", "iris"])
    doc["version"] = "0.0.1"
    doc["changelog"] = [{"version": "0.0.1", "date": "2026-11-22", "change": "lower"}]
    mini.add_set(doc)
    says(*cli(capsys, "--registry", mini.root, "catalog"), ROSES, "set roses", "field 'version'",
         "version 0.0.1 is lower than 1.0.0", "above 1.0.0")
    doc["changelog"] = [{"version": "1.0.0", "date": "2026-11-22", "change": "first"},
                        {"version": "0.0.1", "date": "2026-11-23", "change": "lower"}]
    mini.add_set(doc)
    edit_catalog(mini, lambda cat: next(e for e in cat["sets"] if e["id"] == "roses").update(version="0.0.1"))
    says(*validate(mini, capsys), ROSES, "set roses", "field 'version'", "below 1.0.0, the newest in the changelog",
         "versions only go up", code=1)


def test_set_citing_an_unknown_paper(mini, capsys):
    doc = roses()
    doc["source"] = {"paper": "nopaper", "section": "1"}
    mini.add_set(doc)
    says(*validate(mini.sync(), capsys), ROSES, "set roses", "field 'source.paper'", "unknown paper 'nopaper'",
         "registry/sources.yaml", code=1)


# ----------------------------------------------------------------------------- tests (X, Y, A, B)
def test_item_in_both_attribute_concepts(mini, capsys):
    mini.add_set(make_set("bad", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "happy", "evil")]))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'a/b'", "item(s) in both a and b: 'happy'",
         "one concept only", code=1)


def test_item_in_both_concepts(mini, capsys):
    mini.add_set(make_set("bugs", ["ant", "moth", "rose", "flea"]))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'x/y'", "item(s) in both x and y: 'rose'",
         "one concept only", code=1)


def test_item_in_both_concepts_after_case_folding(mini, capsys):
    mini.add_set(make_set("bugs", ["ant", "moth", "ROSE", "flea"], case_sensitive=False))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'x/y'", "in both x and y", code=1)


def test_unequal_targets(mini, capsys):
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp"]))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'x/y'", "|X|=4 and |Y|=3",
         "set equal_targets: false", code=1)
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", equal_targets=False))
    assert validate(mini.sync(), capsys)[0] == 0


def test_equal_targets_given_as_text(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", equal_targets="no"))
    says(*validate(mini, capsys), T1, "test t1", "field 'equal_targets'", "expected true or false")


def test_same_set_twice(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "roses@1.0.0", "good@1.0.0", "bad@1.0.0"))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'y'", "x and y are the same set", "different sets",
         code=1)


def test_missing_set(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "beetles@1.0.0", "good@1.0.0", "bad@1.0.0"))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'y'", "'beetles', which is not in the catalog",
         "add the set, or fix the id", code=1)


def test_missing_set_version(mini, capsys):
    mini.add_test(make_test("t1", "roses@2.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'x'", "names roses@2.0.0 but the registry holds "
         "roses@1.0.0", "update the reference", code=1)


@pytest.mark.parametrize("ref, hint", [("roses", "e.g. flowers@1.0.0"), ("roses@", "e.g. flowers@1.0.0"),
                                       ("roses@1.0.0@x", "e.g. flowers@1.0.0"), (7, "e.g. flowers@1.0.0"),
                                       ("../roses@1.0.0", "no '/', no '..'"), ("roses@1.0", "three numbers")])
def test_set_reference_not_id_at_version(mini, capsys, ref, hint):
    mini.add_test(make_test("t1", ref, "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    says(*validate(mini, capsys), T1, "test t1", "field 'x'", hint)


def test_unknown_test_level(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", level="sentence"))
    says(*validate(mini, capsys), T1, "test t1", "field 'level'", "'sentence' is neither 'word'", "one of: word, sent")


def test_expansion_names_missing_template(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sent": {"template": "no_such@1.0.0"}}))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'expansions.sent.template'",
         "'no_such', which is not in the catalog", "one of: may2019_bleached", code=1)


def test_expansion_names_missing_template_version(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sent": {"template": "may2019_bleached@9.0.0"}}))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'expansions.sent.template'",
         "may2019_bleached@9.0.0", "update the reference", code=1)


def test_expansion_names_missing_family(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sent": {"template": "may2019_bleached@1.0.0",
                                                 "families": {"x": "no_such_family"}}}))
    says(*validate(mini.sync(), capsys), T1, "test t1", "field 'expansions.sent.families.x'",
         "'no_such_family', which template may2019_bleached@1.0.0 does not have", "one of: adjective", code=1)


def test_expansion_with_unknown_level_or_key(mini, capsys):
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sentence": {"template": "may2019_bleached@1.0.0"}}))
    says(*validate(mini, capsys), T1, "test t1", "field 'expansions.sentence'", "sent or sent(u)")
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0",
                            expansions={"sent": {"template": "may2019_bleached@1.0.0", "famlies": {}}}))
    says(*validate(mini, capsys), T1, "test t1", "field 'expansions.sent.famlies'", "allowed: families, template")


# ----------------------------------------------------------------------------- templates
TMPL = "templates/may2019_bleached.yaml"


def _template(mini, family_src: str):
    doc = yaml.safe_load((mini.root / TMPL).read_text())
    doc["families"]["name"] = [family_src]
    write_yaml(mini.root / TMPL, doc)
    mini.sync()


def test_template_unknown_variable(mini, capsys):
    _template(mini, "This is {{ nme }}.")
    says(*validate(mini, capsys), TMPL, "template may2019_bleached", "field 'families.name[0]'",
         "unknown variable(s) nme", "known: article, term", code=1)


@pytest.mark.parametrize("src", ["{{ term.upper() }}", "{{ ''.__class__.__mro__ }}",
                                 "{{ cycler.__init__.__globals__ }}",
                                 "{% include 'x.html' %}", "{% import 'x' as y %}", "{{ self }}",
                                 "{% for c in term %}{{ c }}{% endfor %}", "{{ term|attr('x') }}"])
def test_template_attribute_access_or_code(mini, capsys, src):
    _template(mini, src)
    rc, err = validate(mini, capsys)
    says(rc, err, TMPL, "template may2019_bleached", "field 'families.name[0]'", code=1)
    assert "are refused" in err or "reserved name" in err or "allowed:" in err, err


def test_template_syntax_error(mini, capsys):
    _template(mini, "This is {{ term .")
    says(*validate(mini, capsys), TMPL, "template may2019_bleached", "field 'families.name[0]'",
         "Jinja syntax error", "braces must balance", code=1)


# ----------------------------------------------------------------------------- catalog
def test_catalog_entry_whose_file_is_missing(mini, capsys):
    (mini.root / ROSES).unlink()
    says(*validate(mini, capsys), ROSES, "set roses", "file not found", "eatlas catalog --sync")


def test_catalog_id_or_version_disagrees_with_file(mini, capsys):
    edit_catalog(mini, lambda c: c["sets"][[e["id"] for e in c["sets"]].index("roses")].update(version="1.1.0"))
    says(*validate(mini, capsys), ROSES, "catalog set roses", "field 'id/version'",
         "catalog says roses@1.1.0 but the file holds roses@1.0.0", "eatlas catalog --sync")


@pytest.mark.parametrize("path", ["/etc/passwd", "../../etc/passwd", "registry/../../outside.yaml", "\x00x"])
def test_catalog_path_escaping_the_registry(mini, capsys, path):
    edit_catalog(mini, lambda c: c["sets"][0].update(file=path))
    rc, err = validate(mini, capsys)
    says(rc, err, "catalog.yaml", "catalog set", "field 'file'", "relative to the registry folder")


def test_catalog_path_through_a_symlink_outside(mini, capsys, tmp_path):
    outside = write_yaml(tmp_path / "outside.yaml", roses())
    (mini.root / ROSES).unlink()
    (mini.root / ROSES).symlink_to(outside)
    says(*validate(mini, capsys), "catalog.yaml", "catalog set roses", "field 'file'", "leaves the registry folder",
         "no symlinks pointing outside")
    says(*cli(capsys, "--registry", mini.root, "catalog"), ROSES, "outside the registry folder",
         "copy the file into the registry")


def test_catalog_not_a_mapping_or_with_unknown_keys(mini, capsys):
    write_raw(mini, "catalog.yaml", "- sets\n- tests\n")
    says(*validate(mini, capsys), "catalog.yaml", "catalog", "must be a mapping", "eatlas catalog --sync")
    write_raw(mini, "catalog.yaml", "sets: []\nstes: []\n")
    says(*validate(mini, capsys), "catalog.yaml", "catalog", "field 'stes'", "allowed: criteria, published, sets")


def test_catalog_duplicate_id(mini, capsys):
    edit_catalog(mini, lambda c: c["sets"].append(dict(c["sets"][0])))
    says(*validate(mini, capsys), "catalog.yaml", "field 'id'", "duplicate set id", "listed once")


def test_not_a_registry_folder(tmp_path, capsys):
    says(*cli(capsys, "--registry", tmp_path, "validate"), "catalog.yaml", "no catalog.yaml here",
         "pass --registry DIR")


# ----------------------------------------------------------------------------- published results
def _published(mini, text: str | bytes):
    d = mini.root / "registry" / "testpaper" / "published"
    d.mkdir(parents=True, exist_ok=True)
    (d / "table1.csv").write_bytes(text if isinstance(text, bytes) else text.encode())
    mini.sync()


def test_published_csv_with_a_missing_column(mini, capsys, tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    _published(mini, "paper,table_id,row_label,column_label,statistic,value\ntestpaper,T1,a,b,effect_size,0.5\n")
    says(*validate(mini, capsys), "registry/testpaper/published/table1.csv", "published testpaper_table1",
         "field 'significance'", "missing column(s) significance", "the header must name", code=1)
    db = tmp_path / "r.duckdb"
    says(*cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", tiny_bert, "--levels", "word",
              "--n-samples", "200", "--quiet"),
         "table1.csv", "missing column(s) significance", code=1)      # refused like validate, before any work
    assert not db.exists() or _tables(db) == []     # the failed write rolled back, schema included


def test_published_csv_not_utf8_or_not_csv(mini, capsys):
    _published(mini, "paper,table_id\nmay,caf\xe9\n".encode("latin-1"))
    says(*validate(mini, capsys), "table1.csv", "published testpaper_table1", "not valid UTF-8", "save the file",
         code=1)
    _published(mini, 'paper,table_id\n"unclosed,1\n')
    says(*validate(mini, capsys), "table1.csv", "published testpaper_table1", "not a readable CSV", "one header line",
         code=1)


def _tables(db):
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    finally:
        con.close()


# ----------------------------------------------------------------------------- the command line
def test_unknown_level_in_run(capsys, tmp_path):
    says(*cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--tests", "weat1", "--levels", "word,sentence"),
         "field 'levels'", "unknown level 'sentence'", "one of word, sent", code=2)
    assert not (tmp_path / "r.duckdb").exists()


def test_unknown_test_in_run(capsys, tmp_path):
    says(*cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--tests", "weat1", "waet3"),
         "unknown test 'waet3'", "did you mean weat3", "eatlas list", code=2)


def test_unknown_model(capsys, tmp_path):
    says(*cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--tests", "weat1", "--model", "no-such-model"),
         "option --model", "'no-such-model' is no registered model or local path", "eatlas models", code=2)
    assert not (tmp_path / "r.duckdb").exists()


@pytest.fixture
def db_with_a_run(tmp_path):
    import duckdb

    from eatlas import store
    db = tmp_path / "r.duckdb"
    con = duckdb.connect(str(db))
    store.init_schema(con)
    con.close()
    return db


def test_sql_with_bad_sql(db_with_a_run, capsys):
    # EATlas's words (file, "SQL error", the tables to query); what follows "SQL error:" is DuckDB's own
    says(*cli(capsys, "--db", db_with_a_run, "sql", "SELEC * FROM runs"), "file ", "r.duckdb", "SQL error: ",
         "tables: runs, results", code=2)
    says(*cli(capsys, "--db", db_with_a_run, "sql", "SELECT nope FROM runs"), "r.duckdb", "SQL error: ",
         "tables: runs, results", code=2)


def test_sql_on_a_missing_or_foreign_database(tmp_path, capsys):
    # No results file: the published tables are read in memory, the note names the file, nothing is created.
    assert main(["--db", str(tmp_path / "none.duckdb"), "sql", "SELECT count(*) AS n FROM runs"]) == 0
    cap = capsys.readouterr()
    assert "no results file" in cap.err and "none.duckdb" in cap.err
    says(*cli(capsys, "--db", tmp_path / "none.duckdb", "sql", "--write", "SELECT 1"), "none.duckdb",
         "no such database", "eatlas run", code=2)
    assert not (tmp_path / "none.duckdb").exists()
    (tmp_path / "notes.txt").write_text("not a database\n" * 100)
    says(*cli(capsys, "--db", tmp_path / "notes.txt", "sql", "SELECT 1"), "notes.txt", "cannot open database",
         "pass another --db", code=2)


def test_show_unknown_id(capsys):
    says(*cli(capsys, "show", "weat33"), "unknown test 'weat33'", "did you mean", code=2)


# ----------------------------------------------------------------------------- property-based
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12),
                     st.sampled_from(["1.0.0", "roses", "noun", "pronoun", "x@1.0.0", "../x", "roses@1.0.0"]))
_keys = st.one_of(st.sampled_from(sorted({"id", "version", "items", "text", "kind", "case", "concept", "license",
                                          "source", "paper", "x", "y", "a", "b", "level", "expansions", "families",
                                          "parts", "template", "vars", "changelog", "aliases", "template_vars",
                                          "case_sensitive", "equal_targets", "sets", "tests", "templates",
                                          "published", "file", "sent"})),
                  st.text(max_size=8), st.integers())
_docs = st.recursive(_scalars, lambda kids: st.one_of(st.lists(kids, max_size=5),
                                                      st.dictionaries(_keys, kids, max_size=6)), max_leaves=30)


def _load_all_ways(text: str):
    doc = parse_yaml(text, "fuzz.yaml")
    for parse in (parse_set, parse_test, parse_template):
        try:
            parse(doc, "fuzz.yaml")
        except EatlasError:
            pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_docs)
def test_random_documents_load_or_raise_eatlas_error(doc):
    text = yaml.safe_dump(doc, allow_unicode=True)
    try:
        _load_all_ways(text)
    except EatlasError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_loads_or_raises_eatlas_error(text):
    try:
        _load_all_ways(text)
    except EatlasError:
        pass


REAL_SET = (ROOT / "registry/caliskan2017/sets/flowers.yaml").read_text(encoding="utf-8")
_YAMLISH = "\n\t :-[]{},&*!|>'\"#%@`?\ufeff\u0301é0123456789"


@st.composite
def _mutations(draw):
    text = REAL_SET
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "dup_line", "drop_line", "swap_lines"]))
        i = draw(st.integers(0, len(text)))
        if op == "insert":
            text = text[:i] + draw(st.text(alphabet=_YAMLISH, min_size=1, max_size=6)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)):]
        elif op == "replace":
            text = text[:i] + draw(st.sampled_from(_YAMLISH)) + text[i + 1:]
        else:
            lines = text.splitlines(keepends=True)
            if not lines:
                continue
            j, k = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(j, lines[k])
            elif op == "drop_line":
                del lines[j]
            else:
                lines[j], lines[k] = lines[k], lines[j]
            text = "".join(lines)
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_mutated_real_set_loads_or_raises_eatlas_error(text):
    try:
        doc = parse_yaml(text, "flowers.yaml")
        parse_set(doc, "flowers.yaml")
    except EatlasError:
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(_mutations())
def test_mutated_set_in_a_registry_validates_or_reports(mini, text):
    """The whole path (catalog -> file -> parse -> schema -> cross-test checks) on a mutated file."""
    from eatlas.registry.schemas import check_registry
    (mini.root / ROSES).write_text(text, encoding="utf-8")
    try:
        problems = check_registry(Registry(mini.root))
    except EatlasError:
        return
    assert all(isinstance(p, EatlasError) for p in problems)


def test_read_yaml_of_a_folder_or_device(tmp_path):
    with pytest.raises(EatlasError, match="is a folder, not a regular file"):
        read_yaml(tmp_path)
    if os.path.exists("/dev/zero"):
        with pytest.raises(EatlasError, match="is a character device, not a regular file"):
            read_yaml(Path("/dev/zero"))
    with pytest.raises(EatlasError, match="file not found"):
        read_yaml(tmp_path / "nothing.yaml")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_add_names_a_fifo_a_device_or_a_folder_and_never_reads_a_fifo(mini, tmp_path, capsys):
    from tests.cli_helpers import cli as cli3
    fifo = tmp_path / "set.yaml"
    os.mkfifo(fifo)         # no writer: reading it would block for ever
    for path, what in ((fifo, "a named pipe (FIFO)"), (tmp_path, "a folder"),
                       (Path("/dev/zero"), "a character device")):
        if not path.exists():
            continue
        rc, _, err = cli3(capsys, "--registry", mini.root, "add", path)
        assert rc != 0 and f"is {what}, not a regular file" in err and "catalog --sync" not in err, err


# ----------------------------------------------------------------------------- command-line values
@pytest.mark.parametrize("args,needle", [
    (["run", "--batch-size", "0"], "--batch-size: 0 is below 1"),
    (["run", "--n-samples", "1"], "--n-samples: 1 is below 2"),
    (["run", "--n-samples", "many"], "'many' is not a whole number"),
    (["run", "--seed", "-1"], "--seed: -1 is below 0"),
    (["run", "--alpha", "5"], "--alpha: 5 is outside (0, 1]"),
    (["run", "--min-coverage", "1.5"], "--min-coverage: 1.5 is outside [0, 1]"),
    (["run", "--method", "mleat", "--mleat-alpha", "0"], "--mleat-alpha: 0 is outside (0, 1]"),
    (["run", "--method", "ceat", "--n-draws", "1"], "--n-draws: 1 is below 2"),
    (["show", "weat1", "--seed", "-3"], "--seed: -3 is below 0"),
])
def test_bad_command_line_values_are_refused_before_any_work(tmp_path, capsys, args, needle):
    rc = main(["--db", str(tmp_path / "r.duckdb"), *args])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "Traceback" not in err
    assert not (tmp_path / "r.duckdb").exists()


def test_a_layer_the_model_does_not_have(tiny_bert, tmp_path, capsys):
    says(*cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--model", tiny_bert, "--layer", "9", "--tests", "weat1",
              "--levels", "word"), "field 'layer'", "layer 9 is out of range", "3 hidden states", "from -3 to 2",
         code=2)
    assert not (tmp_path / "r.duckdb").exists()


def test_an_empty_vector_file(tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("")
    says(*cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--model", tmp_path / "empty.txt", "--tests", "weat1",
              "--levels", "word"), "empty.txt", "vector file", code=2)


def test_a_test_or_level_named_twice_runs_once(tiny_bert, tmp_path, capsys):
    import duckdb
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat1", "sent-weat1", "weat1",
                 "--levels", "word,word", "--n-samples", "200", "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT test_id, level FROM results").fetchall() == [("weat1", "word")]
    assert con.execute("SELECT tests, levels FROM runs").fetchone() == (["weat1"], ["word"])


# ----------------------------------------------------------------------------- outputs turned against their user
# A manifest is a file in a folder someone may share or unpack: each writer refuses one naming a file outside its
# folder (climbing out, absolute, through a symbolic link) or a protected file, before touching anything.
_STORED: dict[tuple, Path] = {}     # one run of the mini registry per session, copied for each test


def _stored_run(capsys, mini, tmp_path, *extra) -> Path:
    """``tmp_path/R.duckdb`` holding one run of test t1 on ``tmp_path/vec.txt`` (the mini registry's content is the
    same in every test, so the run is made once and copied)."""
    import shutil

    from tests.cli_helpers import cli as cli3
    from tests.test_data_loss import vectors
    db = tmp_path / "R.duckdb"
    first = _STORED.get(extra)
    if first is not None and first.is_file():
        shutil.copy(first, db)
        shutil.copy(first.parent / "vec.txt", tmp_path / "vec.txt")
        return db
    rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "run", "--model", vectors(tmp_path / "vec.txt"),
                      "--tests", "t1", "--levels", "word", "--n-samples", "200", "--no-cache", "--quiet", *extra)
    assert rc == 0, err
    keep = tmp_path / "pristine"
    keep.mkdir()
    shutil.copy(db, keep / "R.duckdb")
    shutil.copy(tmp_path / "vec.txt", keep / "vec.txt")
    _STORED[extra] = keep / "R.duckdb"
    return db


def _victims(tmp_path) -> dict[str, Path]:
    """Files outside an output folder, each named as a manifest entry would name it (relative to OUT)."""
    (tmp_path / "victim").mkdir()
    out = {"../victim/precious.txt": tmp_path / "victim" / "precious.txt",
           str(tmp_path / "victim" / "absolute.txt"): tmp_path / "victim" / "absolute.txt",
           "link/through.txt": tmp_path / "victim" / "through.txt"}
    for p in out.values():
        p.write_text(f"the user's own {p.name}\n")
    return out


WRITERS = {     # name -> (the command, given OUT, the db and the registry; the manifest's name; its layout)
    "site": (lambda out, db, reg: ["--registry", reg, "site", out, "--db", db, "--figures", "none"], "guard"),
    "publish": (lambda out, db, reg: ["--registry", reg, "publish", out, "--db", db], "guard"),
    "export": (lambda out, db, reg: ["--registry", reg, "export", out, "--format", "csv", "--db", db], "guard"),
    "EAT-Maps": (lambda out, db, reg: ["--registry", reg, "--db", db, "run", "--model", db.parent / "vec.txt",
                                       "--tests", "t1", "--levels", "word", "--n-samples", "200", "--no-cache",
                                       "--quiet", "--method", "mleat", "--maps", out], "guard"),
    "results export": (lambda out, db, reg: ["results", "export", out, "--db", db], "results"),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_planted_manifest_naming_files_outside_its_folder_is_refused_by_every_writer(mini, tmp_path, capsys,
                                                                                     writer):
    import json

    from eatlas.guard import MANIFEST, sha256_of
    from tests.cli_helpers import cli as cli3
    db = _stored_run(capsys, mini, tmp_path)
    out = tmp_path / "OUT"
    out.mkdir()
    (out / "link").symlink_to(tmp_path / "victim", target_is_directory=True)
    victims = _victims(tmp_path)
    entries = {rel: sha256_of(p) for rel, p in victims.items()}
    entries[str(db)] = sha256_of(db)
    command, layout = WRITERS[writer]
    if layout == "guard":
        (out / MANIFEST).write_text(json.dumps({"written_by": "eatlas", "files": entries}))
    else:
        (out / "manifest.json").write_text(json.dumps({"tables": {"runs": {"files": entries}}}))
    db_before = db.read_bytes()
    rc, _, err = cli3(capsys, *command(out, db, mini.root))
    assert rc != 0 and "manifest lists" in err and "refused" in err, err
    assert all(p.is_file() for p in victims.values()) and db.read_bytes() == db_before
    assert sorted(p.name for p in out.iterdir()) == sorted(["link", MANIFEST if layout == "guard" else
                                                            "manifest.json"])      # nothing written either


def test_a_manifest_naming_the_database_or_a_registry_file_inside_the_folder_removes_neither(mini, tmp_path):
    import json

    from eatlas.guard import MANIFEST, Outputs, sha256_of
    out = tmp_path / "OUT"
    out.mkdir()
    db = out / "R.duckdb"
    db.write_bytes(b"not really a database, but the one the user named")
    (out / MANIFEST).write_text(json.dumps({"written_by": "eatlas", "files": {"R.duckdb": sha256_of(db)}}))
    with pytest.raises(EatlasError, match="results database"):
        Outputs(out, db=db)
    shutil_reg = mini.root / "registry" / "testpaper" / "sets" / "roses.yaml"
    (mini.root / MANIFEST).write_text(json.dumps({"written_by": "eatlas",
                                                  "files": {"registry/testpaper/sets/roses.yaml":
                                                            sha256_of(shutil_reg)}}))
    with pytest.raises(EatlasError, match="inside the registry"):
        Outputs(mini.root, registry_root=mini.root)
    assert db.is_file() and shutil_reg.is_file()


def test_a_report_leaves_nothing_but_itself_and_never_replaces_a_file_it_did_not_write(mini, tmp_path, capsys):
    from tests.cli_helpers import cli as cli3
    db = _stored_run(capsys, mini, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "report", home / "report.html")
    assert rc == 0, err
    assert [p.name for p in home.iterdir()] == ["report.html"]
    rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "report", home / "report.html")
    assert rc == 0, err     # its own, unchanged: replaced
    (home / "report.html").write_text((home / "report.html").read_text() + "<p>my note</p>\n")
    rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "report", home / "report.html")
    assert rc != 0 and "changed since" in err and "my note" in (home / "report.html").read_text()
    (home / "mine.html").write_text("<p>mine</p>")
    rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "report", home / "mine.html")
    assert rc != 0 and (home / "mine.html").read_text() == "<p>mine</p>"


# A results file from elsewhere is data, never a program: a declared table that is a view over a local file, or a
# macro that replaces a built-in function, is refused by every command that reads the file; EATlas's own views are
# read as this EATlas defines them. No byte of the local file reaches any output.
SECRET = "S3CRET-0f-the-user-4d1a"


def _hostile(db: Path, secret_file: Path, kind: str) -> Path:
    import duckdb
    con = duckdb.connect(str(db))
    try:
        src = f"read_text('{secret_file}')"
        if kind == "published_results":
            con.execute("DROP TABLE published_results")
            con.execute(f"CREATE VIEW published_results AS SELECT content AS paper, content AS test_id, "
                        f"content AS value, false AS missing FROM {src}")
        elif kind == "run_inputs":
            con.execute("DROP TABLE run_inputs")
            con.execute(f"CREATE VIEW run_inputs AS SELECT r.run_id, s.content AS path FROM runs r, {src} s")
        elif kind == "macro":
            con.execute("CREATE MACRO lower(x) AS upper(x)")
        elif kind == "reproduction":
            con.execute(f"CREATE OR REPLACE VIEW reproduction AS SELECT content AS test_id FROM {src}")
    finally:
        con.close()
    return db


READERS = {
    "site": lambda out, db, reg, rid: ["--registry", reg, "site", out, "--db", db, "--figures", "none"],
    "report": lambda out, db, reg, rid: ["--registry", reg, "--db", db, "report", out / "r.html"],
    "show-influence": lambda out, db, reg, rid: ["--registry", reg, "--db", db, "show-influence", rid, "t1"],
    "results export": lambda out, db, reg, rid: ["results", "export", out, "--db", db],
    "results import": lambda out, db, reg, rid: ["results", "import", db, "--db", out / "new.duckdb"],
    "run (its store check)": lambda out, db, reg, rid: [
        "--registry", reg, "--db", db, "run", "--model", db.parent / "vec.txt", "--tests", "t1", "--levels", "word",
        "--n-samples", "200", "--no-cache", "--quiet"],
    "sweep --resume": lambda out, db, reg, rid: [
        "--registry", reg, "--db", db, "sweep", "--models", db.parent / "vec.txt", "--tests", "t1", "--levels",
        "word", "--n-samples", "200", "--no-cache", "--resume"],
}


def _no_secret_anywhere(out: Path, text: str) -> None:
    assert SECRET not in text
    for p in out.rglob("*") if out.exists() else []:
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p


@pytest.mark.parametrize("reader, kind", [(r, k) for r in READERS for k in ("published_results", "run_inputs", "macro")
                                           if k == "run_inputs" or r in ("site", "report", "run (its store check)")])
def test_a_hostile_results_file_is_refused_by_every_reader_and_nothing_of_a_local_file_leaks(
        mini, tmp_path, capsys, reader, kind):
    from eatlas.store.db import connect
    from tests.cli_helpers import cli as cli3
    db = _stored_run(capsys, mini, tmp_path)
    con = connect(db, read_only=True)
    rid = con.execute("SELECT run_id FROM runs").fetchone()[0]
    con.close()
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    _hostile(db, secret, kind)
    out = tmp_path / "OUT"
    rc, stdout, err = cli3(capsys, *READERS[reader](out, db, mini.root, rid))
    assert rc != 0, err
    name = {"macro": "lower"}.get(kind, kind)
    assert name in err and ("view" in err or "macro" in err), err
    _no_secret_anywhere(out, stdout + err)


def test_a_results_file_whose_own_views_read_a_local_file_is_read_through_eatlas_views(mini, tmp_path, capsys):
    from tests.cli_helpers import cli as cli3
    db = _stored_run(capsys, mini, tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    _hostile(db, secret, "reproduction")
    out = tmp_path / "OUT"
    rc, stdout, err = cli3(capsys, "--registry", mini.root, "--db", db, "report", out / "r.html")
    assert rc == 0, err
    rc2, stdout2, err2 = cli3(capsys, "--registry", mini.root, "site", out / "site", "--db", db, "--figures", "none")
    assert rc2 == 0, err2
    _no_secret_anywhere(out, stdout + err + stdout2 + err2)


def test_ctrl_c_during_a_site_says_what_it_wrote(mini, tmp_path, capsys, monkeypatch):
    from eatlas.outputs import site
    from tests.cli_helpers import cli as cli3
    real, calls = site._test_context, []

    def stop_at_the_second_page(*a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(site, "_test_context", stop_at_the_second_page)
    mini.add_test(make_test("t2", "bugs@1.0.0", "roses@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    out = tmp_path / "OUT"
    rc, _, err = cli3(capsys, "--registry", mini.root, "site", out, "--figures", "none")
    assert rc == 130 and "nothing was written" not in err
    written = [p for p in out.rglob("*") if p.is_file() and p.name != ".eatlas-manifest.json"]
    assert f"wrote {len(written)} file(s) of the site in {out}" in err and "run the command again" in err, err
    assert (out / ".eatlas-manifest.json").is_file()


def test_ctrl_c_before_any_file_says_nothing_was_written(tmp_path, capsys, monkeypatch):
    from eatlas.outputs import site
    from tests.cli_helpers import cli as cli3

    def stop(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "_Source", stop)
    rc, _, err = cli3(capsys, "site", tmp_path / "OUT")
    assert rc == 130 and "interrupted: nothing was written" in err


def test_cache_clear_removes_only_what_the_cache_wrote(tmp_path, monkeypatch, capsys):
    import numpy as np

    from eatlas.encoders.cache import EmbeddingCache
    from eatlas.registry import cache as registry_cache
    root = tmp_path / "cache"
    monkeypatch.setenv("EATLAS_CACHE", str(root))
    cache = EmbeddingCache(root)
    cache.put({"model": "m"}, [("rose", None)], np.ones((1, 3)), np.array([False]))
    mixed = root / next(p.name for p in root.iterdir())
    (mixed / "notes.txt").write_text("mine")                      # a user's file beside the shards
    (root / "photos").mkdir()
    (root / "photos" / "a.npz").write_bytes(b"not a shard")     # a folder of someone else's .npz
    (root / "registry").mkdir()
    (root / "registry" / "thesis.tex").write_text("mine too")
    (root / "registry" / ("a" * 32 + ".jsonl")).write_text("{}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "key.json").write_text("{}")
    (root / "link").symlink_to(elsewhere, target_is_directory=True)
    assert main(["cache", "clear"]) == 0
    assert (mixed / "notes.txt").read_text() == "mine" and not list(mixed.glob("*.npz"))
    assert not (mixed / "key.json").exists()
    assert (root / "photos" / "a.npz").is_file() and (root / "registry" / "thesis.tex").is_file()
    assert not (root / "registry" / ("a" * 32 + ".jsonl")).exists()
    assert (elsewhere / "key.json").is_file()
    assert registry_cache.folder() == root / "registry"


def test_a_site_after_several_runs_per_model_publishes_every_run_its_rows_join(mini, tmp_path, capsys):
    import duckdb

    from tests.cli_helpers import cli as cli3
    from tests.test_data_loss import vectors
    mini.add_test(make_test("t2", "bugs@1.0.0", "roses@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    db, a, b = tmp_path / "R.duckdb", vectors(tmp_path / "a.txt"), vectors(tmp_path / "b.txt", seed=3)
    for model, tests, extra in [(a, ["t1", "t2"], []), (a, ["t1"], ["--seed", "5"]), (b, ["t2"], []),
                                (b, ["t1", "t2"], ["--method", "mleat"]), (a, ["t2"], ["--seed", "9"])]:
        rc, _, err = cli3(capsys, "--registry", mini.root, "--db", db, "run", "--model", model, "--tests", *tests,
                          "--levels", "word", "--n-samples", "200", "--no-cache", "--quiet", *extra)
        assert rc == 0, err
    out = tmp_path / "site"
    rc, said, err = cli3(capsys, "--registry", mini.root, "--db", db, "site", out, "--figures", "none")
    assert rc == 0, err
    con = duckdb.connect()
    runs = {r[0] for r in con.execute(f"SELECT run_id FROM '{out}/data/runs.parquet'").fetchall()}
    shown = set()
    for t in ("results", "influence", "mleat_results", "run_inputs"):
        ids = {r[0] for r in con.execute(f"SELECT DISTINCT run_id FROM '{out}/data/{t}.parquet'").fetchall()}
        assert ids <= runs, (t, ids - runs)         # every published row joins a published run
        shown |= ids
    assert runs == shown and len(runs) == 3         # the newest result per model, test and level: 3 of the 5 runs
    assert f"of {len(runs)} run(s)" in said and f"runs {len(runs)}," in said    # the summary counts them once


@pytest.mark.parametrize("sql, needles", [
    ("UPDATE runs SET method = 'nosuchmethod'", ("method 'nosuchmethod'", "does not have")),
    ("UPDATE runs SET started_at = '1900-01-01', finished_at = '9999-12-31'", ("1900-01-01", "outside")),
    ("UPDATE runs SET finished_at = started_at - INTERVAL 1 HOUR", ("finished before it started",)),
    ("UPDATE results SET model = 'some-other-model'", ("model 'some-other-model'", "its run of model")),
    ("UPDATE results SET test_id = 'weat6'", ("test 'weat6'", "did not run")),
], ids=["unknown method", "implausible times", "finished before started", "model of a result", "test of a result"])
def test_results_import_refuses_rows_that_disagree_with_their_run(mini, tmp_path, capsys, sql, needles):
    import duckdb

    from tests.cli_helpers import cli as cli3
    src = _stored_run(capsys, mini, tmp_path)
    con = duckdb.connect(str(src))
    con.execute(sql)
    con.close()
    target = tmp_path / "new.duckdb"
    rc, _, err = cli3(capsys, "--registry", mini.root, "results", "import", src, "--db", target)
    assert rc != 0 and all(n in err for n in needles), err
    assert "nothing was written" in err
    from tests.cli_helpers import rows
    assert not target.exists() or rows(target, "SELECT count(*) FROM runs") == [(0,)]


def test_a_set_may_not_take_a_tests_id_in_add_or_validate(mini, tmp_path, capsys):
    from tests.cli_helpers import cli as cli3
    doc = make_set("t1", ["rose", "tulip", "daisy", "lily"])
    write_yaml(tmp_path / "t1.yaml", doc)
    rc, _, err = cli3(capsys, "--registry", mini.root, "add", tmp_path / "t1.yaml")
    assert rc == 1 and "set id 't1' is the id of a test" in err and "nothing was written" in err, err
    assert not (mini.root / "registry" / "testpaper" / "sets" / "t1.yaml").exists()
    test = make_test("roses", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0")     # the reverse
    write_yaml(tmp_path / "roses.yaml", test)
    rc, _, err = cli3(capsys, "--registry", mini.root, "add", tmp_path / "roses.yaml")
    assert rc == 1 and "test id 'roses' is the id of a set" in err, err
    mini.add_set(doc)       # placed by hand: validate names it
    mini.sync()
    rc, err = validate(mini, capsys)
    says(rc, err, "set 't1' has the id of a test", "t1.yaml", "field 'id'", code=1)


def test_sql_csv_keeps_null_nan_exact_numbers_blobs_and_structs_apart(tmp_path, capsys):
    import csv
    import io

    import duckdb
    db = tmp_path / "types.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT NULL::DOUBLE AS a, 'NaN'::DOUBLE AS b, "
                "170141183460469231731687303715884105727::HUGEINT AS h, "
                "12345678901234567890123456789.123456789::DECIMAL(38,9) AS d, '\\xAA\\xBB'::BLOB AS bl, "
                "{'x': 1, 'y': [1.5, 'NaN'::DOUBLE]} AS st, [1, 2] AS li, 0.1::DOUBLE AS f, '-inf'::DOUBLE AS i")
    con.close()
    assert main(["--db", str(db), "sql", "SELECT * FROM t", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows == [{"a": "", "b": "NaN", "h": "170141183460469231731687303715884105727",
                     "d": "12345678901234567890123456789.123456789", "bl": "qrs=", "st": '{"x": 1, "y": [1.5, NaN]}',
                     "li": "[1, 2]", "f": "0.1", "i": "-Infinity"}]


def test_sql_table_cuts_a_huge_cell_with_a_note(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.duckdb"), "sql", "SELECT repeat('x', 5000000) AS s"]) == 0
    out = capsys.readouterr().out
    import re
    flat = re.sub(r"[\s│]", "", out)       # the note as folded into the table's column
    assert "[cut:5,000,000characters;--formatcsvor--formatjsonwritesitwhole]" in flat
    assert len(out) < 20_000


def test_models_says_yes_only_for_a_cached_hub_model_a_run_would_load(hf_cache, tmp_path):
    import json
    import shutil

    import torch

    from eatlas.encoders.hub import cached_models
    from tests.hub_cache import commit_id, pickle_bomb_model
    base = hf_cache.models["bert-a"]
    tok = tmp_path / "tok-code"
    shutil.copytree(base, tok)
    (tok / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["tok.T", None]}}))
    hf_cache.put("tiny-org/tok-code", tok, commit_id(901))
    hf_cache.put("tiny-org/bomb", pickle_bomb_model(tmp_path / "bomb", tmp_path / "ran", base), commit_id(902))
    unsafe = tmp_path / "unsafe"
    shutil.copytree(base, unsafe, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    torch.save({"w": torch.ones(2), "path": Path("x")}, unsafe / "pytorch_model.bin")     # a class not allowed
    hf_cache.put("tiny-org/unsafe", unsafe, commit_id(903))
    repo = next(hf_cache.cache.glob("models--tiny-org--tiny-bert"))
    (repo / "refs" / "pr").mkdir(parents=True)
    (repo / "refs" / "pr" / "1").write_text(commit_id(999))       # a ref to a commit not in the cache
    got = {(r["id"], r["refs"]): r["usable"] for r in cached_models()[1]}
    assert got[("tiny-org/tok-code", "main")] == "only with --trust-remote-code"
    assert got[("tiny-org/bomb", "main")].startswith("no: pytorch_model.bin is not a checkpoint")
    assert got[("tiny-org/unsafe", "main")].startswith("no: pytorch_model.bin names code")
    assert got[("tiny-org/tiny-bert", "main")] == got[("tiny-org/tiny-bert", "v1")] == "yes"     # still listed
    assert not (tmp_path / "ran").exists()


def test_every_eatlas_view_is_made_again_for_a_file_read_as_data():
    from eatlas.store.db import _VIEW_NAMES, _VIEW_STATEMENTS, duck, init_schema
    con = duck()
    init_schema(con)
    for stmt in _VIEW_STATEMENTS:
        con.execute(stmt.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW", 1))
    temp = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal"
                                      ).fetchall()}
    assert len(_VIEW_STATEMENTS) == len(_VIEW_NAMES) and temp == set(_VIEW_NAMES)


# ----------------------------------------------------------------------------- the LLM IAT and the model's limits
def _short_causal_lm(out: Path, n_positions: int) -> Path:
    """A random GPT-2 LM of ``n_positions`` positions, its byte-level BPE trained on the LLM IAT's template."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.hub_cache import gpt2_tokenizer

    tok = gpt2_tokenizer([(ROOT / "templates" / "bai2024_llm_iat.yaml").read_text(encoding="utf-8")], vocab_size=400)
    tok.save_pretrained(out)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=n_positions, n_embd=16, n_layer=1, n_head=2,
                               bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)).save_pretrained(out)
    return out


@pytest.mark.parametrize("scoring", ["generate", "logprob"])
def test_llm_iat_prompt_longer_than_the_models_context(tmp_path, capsys, scoring):
    """A causal LM of 64 positions (torch's 'index out of range in self' before): refused after loading, before any
    prompt is read, in one line with both lengths; nothing written."""
    model = _short_causal_lm(tmp_path / "lm", 64)
    rc, err = cli(capsys, "--db", tmp_path / "r.duckdb", "run", "--method", "llm-iat", "--model", model, "--tests",
                  "bai2024_racism", "--llm-iat-prompts", "2", "--llm-iat-scoring", scoring)
    last = " ".join(err.strip().split("error: ")[-1].split())
    assert rc == 2 and "index out of range" not in err
    assert "tokens (test bai2024_racism, prompt" in last and "reads at most 64 positions" in last, err
    assert not (tmp_path / "r.duckdb").exists()


def test_llm_iat_generation_longer_than_the_models_context(tmp_path, capsys):
    """--llm-iat-max-new-tokens 2000 on a model whose positions hold the prompt and 8 more (generation ran past the
    position table and the run was lost before): capped at what fits, said, recorded, and the run stored."""
    import duckdb
    from transformers import AutoTokenizer

    from eatlas.methods.llm_iat import build_prompts, lists_of
    from eatlas.registry import load_registry

    model = _short_causal_lm(tmp_path / "lm", 1024)
    reg = load_registry()
    prompt = build_prompts(lists_of(reg, reg.tests["bai2024_age"]), reg.templates["bai2024_llm_iat"].families[
        "replication"][0], 1, seed=0)[0]["prompt"]
    n_prompt = len(AutoTokenizer.from_pretrained(model)(prompt + "\n")["input_ids"])     # no chat template
    model = _short_causal_lm(tmp_path / "lm8", n_prompt + 8)
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--method", "llm-iat", "--model", str(model), "--tests", "bai2024_age",
               "--llm-iat-prompts", "1", "--llm-iat-max-new-tokens", "2000", "--n-boot", "100"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 0 and "generation capped at " in out and "(--llm-iat-max-new-tokens 2000)" in out
    con = duckdb.connect(str(db), read_only=True)
    settings, n_max = con.execute("SELECT settings, max_new_tokens FROM runs JOIN llm_iat_results USING (run_id)"
                                  ).fetchone()
    con.close()
    assert '"max_new_tokens_asked": 2000' in settings and n_max == 8
    assert "generation capped at 8 new tokens" in out


# ----------------------------------------------------------------------------- validity and the LLM IAT (i39-valid)
# results import of validity rows out of range or inconsistent (r = 1.7, 60 used of 50 items, rho's interval
# reversed, a p of 2, a NaN association) and LLM IAT rows (shares of 5.0 and -2.0, a score of 3, parsed > prompts,
# a negative count): refused naming table, row and column, nothing written.
@pytest.fixture(scope="module")
def validity_db(tmp_path_factory):
    from eatlas.registry import load_registry
    from eatlas.run.runner import RunConfig, evaluate
    from eatlas.store import write_run
    from tests.test_validity import OCC, _encoder

    reg = load_registry()
    out = evaluate(RunConfig(method="validity", options={"criteria": [OCC]}, n_boot=200), encoder=_encoder(reg))
    db = tmp_path_factory.mktemp("validity") / "v.duckdb"
    write_run(db, out.run, [], reg, extra_tables=out.tables)
    return db


@pytest.mark.parametrize("table, change, needle", [
    ("validity_results", "pearson_r = 1.7", "field 'pearson_r': 1.7 is outside [-1, 1]"),
    ("validity_results", "n_used = 60", "uses more items (n_used) than it has (n_items)"),
    ("validity_results", "spearman_ci_low = 0.9, spearman_ci_high = 0.1", "lower bound is above its upper bound"),
    ("validity_results", "pearson_p = 2", "field 'pearson_p': 2.0 is outside [0, 1]"),
    ("validity_results", "n_dropped = 3", "n_used + n_dropped different from n_items"),
    ("validity_items", "association = 'NaN'::DOUBLE WHERE item = 'nurse'", "field 'association': NaN"),
    ("validity_items", "association = NULL WHERE item = 'nurse'", "is used but has no association"),
])
def test_import_refuses_validity_rows_out_of_range(validity_db, tmp_path, capsys, table, change, needle):
    import shutil

    import duckdb
    bad = tmp_path / "bad.duckdb"
    shutil.copy(validity_db, bad)
    con = duckdb.connect(str(bad))
    con.execute(f"UPDATE {table} SET {change}")
    con.close()
    rc, err = cli(capsys, "results", "import", bad, "--db", tmp_path / "new.duckdb")
    flat = " ".join(err.split())
    says(rc, flat, f"table {table} (run ", "criterion 'caliskan2017_wefat_occupations'", needle, "nothing was written")
    assert not (tmp_path / "new.duckdb").exists()


def test_import_takes_a_validity_run_as_exported(validity_db, tmp_path, capsys):
    rc, err = cli(capsys, "results", "import", validity_db, "--db", tmp_path / "new.duckdb")
    assert rc == 0, err


@pytest.mark.parametrize("column, value, needle", [
    ("first_share", 5.0, "field 'first_share': 5.0 is outside [0, 1]"),
    ("parse_rate", -2.0, "field 'parse_rate': -2.0 is outside [0, 1]"),
    ("iat_bias", 3.0, "field 'iat_bias': 3.0 is outside [-1, 1]"),
    ("n_parsed", 9, "parsed more prompts (n_parsed) than it has"),
    ("a", -1, "field 'a': -1 is negative"),
])
def test_llm_iat_rows_out_of_range_are_refused(column, value, needle):
    from eatlas.store.checks import check_rows, frame

    good = {"run_id": ["r" * 36], "test_id": ["bai2024_age"], "level": ["word"], "scoring": ["generate"],
            "status": ["ok"], "iat_bias": [0.2], "ci_low": [0.1], "ci_high": [0.3], "parse_rate": [1.0],
            "first_share": [0.5], "n_prompts": [4], "n_parsed": [4], "a": [1]}
    types = {"run_id": "VARCHAR", "test_id": "VARCHAR", "level": "VARCHAR", "scoring": "VARCHAR",
                      "status": "VARCHAR", "iat_bias": "DOUBLE", "ci_low": "DOUBLE", "ci_high": "DOUBLE",
                      "parse_rate": "DOUBLE", "first_share": "DOUBLE", "n_prompts": "INTEGER", "n_parsed": "INTEGER",
                      "a": "INTEGER"}
    check_rows("llm_iat_results", frame(good, types), types)       # a row a run writes passes
    with pytest.raises(EatlasError, match=r"table llm_iat_results \(run 'rrrrrrrr', test 'bai2024_age'") as e:
        check_rows("llm_iat_results", frame({**good, column: [value]}, types), types, where="x.duckdb")
    assert needle in str(e.value) and "nothing was written" in str(e.value)


# eatlas criterion add (scripts/criterion_from_csv.py before): every problem named with file, row and column,
# nothing written on error, nothing outside the registry, and what it writes validates.
def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _criterion_add(capsys, root: Path, file: Path, **over) -> tuple[int, str]:
    opts = {"source": "testpaper", "file": file, "id": "flowers", "key": "word", "value": "share",
            "a": "good@1.0.0", "b": "bad@1.0.0", "measure": "share", "unit": "percent", "agency": "a lab",
            "year": "2020", "table": "t", "license": "CC0-1.0", **over}
    args = ["criterion", "add", "--registry", root] + [x for k, v in opts.items()
                                                        for x in (f"--{k.replace('_', '-')}", v)]
    return cli(capsys, *args)


@pytest.mark.parametrize("content, over, needles", [
    (b"word,share\nrose,80\nRose,60\n", {}, ["row 2 (line 3): word 'Rose' is also in row 1", "field 'word'"]),
    (b"word,share\nros\xe9,80\n", {}, ["is not UTF-8 text (byte 14, line 2"]),
    (b"word,share\nrose,eighty\ntulip,60\n", {}, ["row 1 (line 2): value 'eighty' of 'rose' is not a number",
                                                  "field 'share'"]),
    (b"word,share\nrose,NaN\n", {}, ["value 'NaN' of 'rose' is not a finite number"]),
    (b"word,share\nrose,inf\n", {}, ["value 'inf' of 'rose' is not a finite number"]),
    (b"name,share\nrose,80\n", {}, ["has no column 'word'", "option --key"]),
    (b"word,share\n rose,80\n", {}, ["word ' rose' has leading or trailing whitespace"]),
    (b"word,share\nrose,80\n", {"id": "../../escape"}, ["'../../escape' is not a registry id", "option --id"]),
    (b"word,share\nrose,80\n", {"source": "testpaper/../.."}, ["is not a registry id", "option --source"]),
    (b"word,share\nrose,80\n", {"source": "nosuch"}, ["unknown source 'nosuch'", "option --source"]),
    (b"word,share\nrose,80\ntulip,60\ndaisy,30\n", {"a": "nosuch@1.0.0"},
     ["criterion flowers", "names set 'nosuch', which is not in the catalog", "field 'a'"]),
])
def test_criterion_add_names_every_problem_and_writes_nothing(mini, tmp_path, capsys, content, over, needles):
    f = tmp_path / "shares.csv"
    f.write_bytes(content)
    before = _tree(mini.root)
    rc, err = _criterion_add(capsys, mini.root, f, **over)
    flat = " ".join(err.split())
    assert rc != 0 and err.startswith("error: "), err
    for n in needles:
        assert n in flat, flat
    if "option" not in needles[-1]:
        assert str(f) in flat or "criterion flowers" in flat
    assert _tree(mini.root) == before
    assert not list(tmp_path.parent.rglob("escape*"))


def test_criterion_add_follows_no_link_planted_in_the_registry(mini, tmp_path, capsys):
    """A criteria folder that is a symbolic link to a folder elsewhere: refused in one line, nothing written
    there or in the registry (every registry writer goes through eatlas.files.write_under)."""
    f = tmp_path / "shares.csv"
    f.write_bytes(b"word,share\nrose,80\ntulip,60\ndaisy,30\nlily,20\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    src = Path(mini.root) / "registry" / "testpaper"
    src.mkdir(parents=True, exist_ok=True)
    (src / "criteria").symlink_to(elsewhere, target_is_directory=True)
    before = _tree(mini.root)
    rc, err = _criterion_add(capsys, mini.root, f)
    assert rc != 0 and "link" in err and "Traceback" not in err, err
    assert list(elsewhere.iterdir()) == [] and _tree(mini.root) == before


def test_criterion_add_lists_every_row_problem_at_once(mini, tmp_path, capsys):
    f = tmp_path / "shares.tsv"
    f.write_bytes(b"word\tshare\nrose\t80\nrose\t60\ntulip\tx\ndaisy\t\n")
    rc, err = _criterion_add(capsys, mini.root, f)
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    assert rc == 1 and len(lines) == 3
    assert "row 2 (line 3)" in lines[0] and "row 3 (line 4)" in lines[1] and "row 4 (line 5)" in lines[2]


def test_criterion_add_output_validates_and_runs_in_the_site(mini, tmp_path, capsys):
    """What it writes validates (after catalog --sync), runs, and renders in the site beside a second criterion
    run after it (the site keeps the newest result per model AND criterion)."""
    import numpy as np

    from eatlas.encoders import StaticEncoder
    from eatlas.registry.schemas import check_registry
    from eatlas.run.runner import RunConfig, evaluate
    from eatlas.store import write_run

    f = tmp_path / "shares.csv"
    f.write_bytes(b"word,share\nrose,80\ntulip,60\ndaisy,30\nlily,20\n")
    assert _criterion_add(capsys, mini.root, f)[0] == 0
    g = tmp_path / "other.csv"
    g.write_bytes(b"word,score\nrose,1\ntulip,4\ndaisy,2\nlily,3\n")
    assert _criterion_add(capsys, mini.root, g, id="flowers_b", value="score")[0] == 0
    mini.sync(fresh=False)
    reg = mini.load()
    assert check_registry(reg) == [] and set(reg.criteria) == {"flowers", "flowers_b"}
    words = ["rose", "tulip", "daisy", "lily", "happy", "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"]
    enc = StaticEncoder(words, np.random.default_rng(0).normal(size=(len(words), 8)), model_id="toy",
                        family="test", fingerprint="toy", lowercase=False)
    db = tmp_path / "r.duckdb"
    for cid in ("flowers", "flowers_b"):         # two runs of one model, one criterion each
        out = evaluate(RunConfig(method="validity", n_boot=100, options={"criteria": [cid]}), registry=mini.root,
                       encoder=enc)
        write_run(db, out.run, [], reg, extra_tables=out.tables)
    rc, err = cli(capsys, "--db", db, "--registry", mini.root, "site", tmp_path / "site", "--offline")
    assert rc == 0, err
    for cid in ("flowers", "flowers_b"):
        page = (tmp_path / "site" / "criteria" / f"{cid}.html").read_text(encoding="utf-8")
        assert "No validity run shown" not in page and "toy" in page, cid


def test_ctrl_c_in_a_weat_run_stores_the_finished_tests_and_says_how_to_resume(mini, tmp_path, capsys, monkeypatch):
    """Ctrl-C during the second of two tests: the first is stored (its run lists only it, its Holm family is its
    own), the command says so with the --tests to resume, exits 130; Ctrl-C before any test finished stores
    nothing."""
    import duckdb

    import eatlas.run.runner as runner
    from tests.test_data_loss import vectors

    mini.add_set(make_set("good3", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky")]))
    mini.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "good3@1.0.0", "bad@1.0.0"))
    mini.sync()
    model = vectors(tmp_path / "v.txt", ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea", "happy",
                                         "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"])
    real, calls = runner._one, []

    def one(t, *a, **kw):
        calls.append(t.id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(t, *a, **kw)

    monkeypatch.setattr(runner, "_one", one)
    db = tmp_path / "r.duckdb"
    args = ["--registry", mini.root, "--db", db, "run", "--model", model, "--tests", "t1", "t2", "--levels", "word",
            "--n-samples", "200", "--no-cache"]
    rc = main([str(a) for a in args])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 130
    assert "interrupted (Ctrl-C) after 1 of 2 test/level pair(s)" in out and "--tests t2" in out
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT test_id FROM results").fetchall() == [("t1",)]
    assert con.execute("SELECT holm_family_size FROM results").fetchone()[0] in (None, 1)
    tests = con.execute("SELECT tests FROM runs").fetchone()[0]
    con.close()
    assert "t2" not in str(tests)
    calls.clear()

    def none(t, *a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_one", none)
    db2 = tmp_path / "r2.duckdb"
    rc = main([str(a) for a in [*args[:3], db2, *args[4:]]])
    assert rc == 130 and "interrupted: nothing was written" in capsys.readouterr().err and not db2.exists()
