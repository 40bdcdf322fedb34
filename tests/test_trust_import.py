"""Trust boundaries (issue 24, part one): results from elsewhere let nothing in, a store that drifted is found
before the work, and output is faithful and bounded. Each case gives the right behaviour or a one-line error
(exit 2, no traceback), and loses nothing: the database and the files are as they were.

Catalogue (the issue's cases, in its order; the sweep, Ray and corpus cases are in tests/test_bad_input.py):
- ``results import`` of an export folder: a table that is not a run table (published_results with a fake
  -9.99 even when the run is already present, published_models, a made-up table ``evil``); a file path that is
  absolute, holds ``..``, is a symlink out, is missing or changed (one message for all); a p-value of 5.0, a NaN
  effect size, a missing ``effect_size`` column, an extra column, a ``model`` column contradicting its hive
  folder, a negative count, a CI that does not hold d, an unknown status; a manifest nested too deeply, of the
  wrong types, with an unknown key;
- ``results import`` of a ``.duckdb`` file: a poisoned ``published_models``, a table ``evil``, an out-of-range
  p-value, a store whose ``influence`` gained a column by ALTER; a SQLite file (no extension download);
- every DuckDB connection has extension autoload and autoinstall off;
- a re-export never removes a file whose checksum differs from the manifest's;
- a store that drifted (a column added by ALTER, a published table changed) is refused by ``run`` and
  ``import`` before any work, with a repair (export, import into a fresh file) that works;
- a run's own rows pass the schema import applies (one schema, two uses);
- ``sql``: the table format caps at TABLE_MAX_ROWS rows with a note, CSV and JSON stream every row; JSON
  writes NaN and Infinity apart from null and a BLOB as base64; a database named ``pg_catalog.duckdb``;
- rich markup in a path (``results export 'mk/[/x]'``); ``show-influence`` of an SC-EAT or SAME run;
- ``--n-boot``, ``--n-samples``, ``--max-contexts`` bounded by memory; ``--no-ci`` with ``--ci``, ``--n-boot``
  or ``--ci-method``; ``--ray-address`` without ``--engine ray``; ``--pooling``, ``--layer``, ``--subword`` on
  a static model;
- ``source_kind: {}``; ``<script>`` in a ``license_note`` of the dataset card; ``publish`` into a report's folder;
  a killed ``publish``'s temporary file.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest

from eatlas.cli import main
from tests.cli_helpers import cli, one_line_error, rows
from tests.conftest import MiniRegistry, make_set, make_test

WORDS = ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea",
         "happy", "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"]
ONE_MESSAGE = "of the manifest is missing, lies outside the export folder, or is not the file the manifest lists"


# ----------------------------------------------------------------------------------------- helpers
def state(*paths: Path) -> dict:
    """What a failed command must leave as it was: every file under the paths, by content."""
    out = {}
    for p in paths:
        for f in ([p] if p.is_file() else sorted(p.rglob("*")) if p.exists() else []):
            if f.is_file():
                out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
        out[f"{p} exists"] = p.exists()
    return out


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A small registry, a vector file, and a results file with a WEAT run, an SC-EAT run and a SAME run."""
    d = tmp_path_factory.mktemp("trust")
    reg = MiniRegistry(d / "reg")
    reg.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"]))
    reg.add_set(make_set("bugs", ["ant", "moth", "wasp", "flea"]))
    reg.add_set(make_set("good", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky", "honest")]))
    reg.add_set(make_set("bad", [{"text": t, "kind": "adjective"} for t in ("ugly", "rotten", "sick", "evil")]))
    reg.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    reg.sync()
    rng = np.random.default_rng(0)
    vec = d / "vec.txt"
    vec.write_text("".join(f"{w} {' '.join(map(str, rng.normal(size=6)))}\n" for w in WORDS))
    db = d / "R.duckdb"
    for method, extra in (("weat", ["--n-samples", "200"]), ("sceat", ["--n-samples", "200"]),
                          ("same", [])):
        assert main(["--registry", str(reg.root), "--db", str(db), "run", "--model", str(vec), "--tests", "t1",
                     "--levels", "word", "--no-cache", "--quiet", "--method", method, *extra]) == 0
    exp = d / "exp"
    assert main(["--db", str(db), "results", "export", str(exp)]) == 0
    return {"reg": reg.root, "vec": vec, "db": db, "exp": exp, "dir": d}


def copy_export(world, tmp_path) -> Path:
    out = tmp_path / "exp"
    shutil.copytree(world["exp"], out)
    return out


def manifest(exp: Path) -> dict:
    return json.loads((exp / "manifest.json").read_text())


def save(exp: Path, m: dict) -> None:
    (exp / "manifest.json").write_text(json.dumps(m))


def tamper(exp: Path, table: str, select: str, *, columns=None) -> None:
    """Rewrite every file of ``table`` as ``select`` (``{f}``: the file) and fix its checksums, as someone who
    edits an export on purpose would; ``columns``: the manifest's new column list."""
    m = manifest(exp)
    for rel in m["tables"][table]["files"]:
        f = exp / rel
        con = duckdb.connect()
        con.execute(f"COPY ({select.format(f=f)}) TO '{f}.new' (FORMAT parquet)")
        con.close()
        os.replace(f"{f}.new", f)
        m["tables"][table]["files"][rel] = sha(f)
    if columns is not None:
        m["tables"][table]["columns"] = columns(m["tables"][table]["columns"])
    save(exp, m)


def add_table(exp: Path, name: str, select: str, *, partition="model") -> None:
    """Add a table to an export, with a file and its checksum (as an attacker would)."""
    m = manifest(exp)
    folder = exp / name / f"{partition}=x"
    folder.mkdir(parents=True)
    con = duckdb.connect()
    con.execute(f"COPY ({select}) TO '{folder / 'data_0.parquet'}' (FORMAT parquet)")
    cols = [[c[0], c[1]] for c in con.execute(f"DESCRIBE {select}").fetchall()]
    con.close()
    rel = f"{name}/{partition}=x/data_0.parquet"
    m["tables"][name] = {"columns": cols + [[partition, "VARCHAR"]], "partition_by": [partition], "rows": 1,
                         "model_from_runs": False, "files": {rel: sha(exp / rel)}}
    save(exp, m)


def imports(capsys, world, src, db) -> tuple[int, str, str]:
    return cli(capsys, "--registry", world["reg"], "results", "import", src, "--db", db)


# ============================================================ 1. import: only run tables come in
@pytest.mark.parametrize("table", ["published_results", "published_models", "evil"])
def test_import_refuses_a_table_that_is_not_a_run_table_even_for_a_run_already_present(world, tmp_path, capsys,
                                                                                       table):
    exp = copy_export(world, tmp_path)
    add_table(exp, table, "SELECT 'may2019' AS paper, 'weat1' AS test_id, 'word' AS level, "
                          "'effect_size' AS statistic, '-9.99' AS value, false AS missing")
    db = tmp_path / "R.duckdb"
    shutil.copy(world["db"], db)            # the store it came from: its run is "already present"
    before = state(db, exp)
    rc, _, err = imports(capsys, world, exp, db)
    one_line_error(rc, err, f"tables.{table}", "nothing was written")
    assert ("rebuilt from the registry" in err) == table.startswith("published")
    assert state(db, exp) == before
    assert not rows(db, "SELECT * FROM published_results WHERE value = '-9.99'")
    assert not rows(db, "SELECT * FROM information_schema.tables WHERE table_name = 'evil'")


def test_a_table_or_column_of_a_newer_eatlas_says_which_version(world, tmp_path, capsys):
    exp = copy_export(world, tmp_path)
    m = manifest(exp)
    m["eatlas_version"] = "99.0.0"
    m["tables"]["results"]["columns"].append(["new_stat", "DOUBLE"])
    save(exp, m)
    rc, _, err = imports(capsys, world, exp, tmp_path / "b.duckdb")
    one_line_error(rc, err, "new_stat", "written by EATlas 99.0.0", "upgrade to 99.0.0 or later")
    assert not (tmp_path / "b.duckdb").exists()


# ============================================================ 2. import: files inside the folder, one message
def _path_cases(exp: Path, tmp_path: Path, case: str) -> None:
    m = manifest(exp)
    runs = m["tables"]["runs"]["files"]
    first = next(iter(runs))
    if case == "absolute":
        runs["/etc/passwd"] = "0" * 64
    elif case == "dotdot":
        runs["runs/../../exp/manifest.json"] = "0" * 64
    elif case == "missing":
        runs[first.rsplit("/", 1)[0] + "/gone.parquet"] = "0" * 64
    elif case == "changed":
        runs[first] = "1" * 64
    elif case == "symlink-out":
        outside = tmp_path / "outside.parquet"
        shutil.copy(exp / first, outside)
        (exp / first).unlink()
        (exp / first).symlink_to(outside)
    save(exp, m)


@pytest.mark.parametrize("case", ["absolute", "dotdot", "missing", "changed", "symlink-out"])
def test_a_file_outside_missing_or_changed_gets_one_message(world, tmp_path, capsys, case):
    exp = copy_export(world, tmp_path)
    _path_cases(exp, tmp_path, case)
    db = tmp_path / "b.duckdb"
    rc, _, err = imports(capsys, world, exp, db)
    one_line_error(rc, err, ONE_MESSAGE, "nothing was written")
    assert "passwd" not in err.replace("'/etc/passwd'", "") and not db.exists()
    # the same words whatever the case: only the name the manifest gives differs
    assert err.split("' of the manifest", 1)[1] == (
        f"{ONE_MESSAGE.split('of the manifest', 1)[1]} (its checksum differs) (export it again; nothing was written)\n")


# ============================================================ 3. import: values a run writes, no others
VALUE_CASES = {
    "p-value 5.0": ("results", "SELECT * REPLACE (5.0::DOUBLE AS p_value) FROM read_parquet('{f}')", None,
                    "field 'p_value': 5.0 is outside [0, 1]"),
    "NaN effect size": ("results", "SELECT * REPLACE ('nan'::DOUBLE AS effect_size) FROM read_parquet('{f}')", None,
                        "field 'effect_size': NaN (not a number) is not a value a run stores (it stores NULL)"),
    "negative count": ("results", "SELECT * REPLACE (-3::BIGINT AS n_x) FROM read_parquet('{f}')", None,
                       "field 'n_x': -3 is negative"),
    "CI beside d": ("results", "SELECT * REPLACE (effect_size + 5 AS ci_low, effect_size + 6 AS ci_high) "
                               "FROM read_parquet('{f}')", None, "has a CI that does not hold its effect size"),
    "unknown status": ("results", "SELECT * REPLACE ('fine' AS status) FROM read_parquet('{f}')", None,
                       "field 'status': 'fine' is not a known status"),
    "no effect_size column": ("results", "SELECT * EXCLUDE (effect_size) FROM read_parquet('{f}')",
                              lambda cols: [c for c in cols if c[0] != "effect_size"],
                              "lacks column(s) effect_size"),
    "an extra column": ("influence", "SELECT *, 1.0::DOUBLE AS evil FROM read_parquet('{f}')",
                        lambda cols: cols + [["evil", "DOUBLE"]], "has column(s) evil, which this EATlas does not"),
    "model beside its folder": ("results", "SELECT *, 'another-model' AS model FROM read_parquet('{f}', "
                                           "hive_partitioning=false)", None,
                                "column model holds 'another-model'"),
    "influence role": ("influence", "SELECT * REPLACE ('z' AS role) FROM read_parquet('{f}')", None,
                       "field 'role': 'z' is not a known role"),
    "a method's p-value 5.0": ("sceat_results", "SELECT * REPLACE (5.0::DOUBLE AS p_value) FROM read_parquet('{f}')",
                               None, "table sceat_results (run "),
    "NaN in a method's table": ("same_targets", "SELECT * REPLACE ('nan'::DOUBLE AS bias) FROM read_parquet('{f}')",
                                None, "field 'bias': NaN (not a number) is not a value a run stores"),
}


@pytest.mark.parametrize("case", list(VALUE_CASES))
def test_import_checks_values_as_a_run_writes_them(world, tmp_path, capsys, case):
    table, select, columns, needle = VALUE_CASES[case]
    exp = copy_export(world, tmp_path)
    tamper(exp, table, select, columns=columns)
    db = tmp_path / "R.duckdb"
    shutil.copy(world["db"], db)
    before = state(db)
    rc, _, err = imports(capsys, world, exp, db)
    one_line_error(rc, err, needle, "nothing was written")
    if case == "a method's p-value 5.0":
        assert "field 'p_value': 5.0 is outside [0, 1]" in err
    assert state(db) == before


@pytest.mark.parametrize("edit, needle", [
    (lambda m: m.update(registry={"commits": [[[[[[[[]]]]]]]], "test_versions": {}}), "registry.commits.0"),
    (lambda m: m["tables"]["runs"].update(rows="1"), "tables.runs.rows"),
    (lambda m: m.update(signed_by="someone"), "signed_by"),
    (lambda m: m["tables"]["runs"].update(partition_by=["evil"]), "tables.runs.partition_by.0"),
])
def test_the_manifest_has_a_declared_shape(world, tmp_path, capsys, edit, needle):
    exp = copy_export(world, tmp_path)
    m = manifest(exp)
    edit(m)
    save(exp, m)
    rc, _, err = imports(capsys, world, exp, tmp_path / "b.duckdb")
    one_line_error(rc, err, "manifest does not have the shape of an EATlas export", needle)


def test_a_manifest_nested_too_deeply(world, tmp_path, capsys):
    exp = copy_export(world, tmp_path)
    text = (exp / "manifest.json").read_text()
    (exp / "manifest.json").write_text(text[:-2] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    rc, _, err = imports(capsys, world, exp, tmp_path / "b.duckdb")
    one_line_error(rc, err, "manifest is nested too deeply")


def test_a_clean_export_still_imports_and_twice_adds_nothing(world, tmp_path, capsys):
    db = tmp_path / "b.duckdb"
    assert imports(capsys, world, world["exp"], db)[0] == 0
    assert rows(db, "SELECT count(*) FROM runs") == [(3,)]
    rc, out, err = imports(capsys, world, world["exp"], db)
    # matched after unwrapping: rich wraps the line at the terminal's width, which the paths' length moves
    assert rc == 0 and "3 run(s) already present" in " ".join(out.split()), err


# ============================================================ 4. import: another results file, the same rules
def _poisoned(world, tmp_path, sql: str) -> Path:
    p = tmp_path / "other.duckdb"
    shutil.copy(world["db"], p)
    con = duckdb.connect(str(p))
    con.execute(sql)
    con.close()
    return p


@pytest.mark.parametrize("sql, needle", [
    ("INSERT INTO published_models (paper, model, name) VALUES ('may2019', 'x', 'evil')", None),
    ("ALTER TABLE published_models ADD COLUMN evil VARCHAR", "published_models has column evil"),
    ("CREATE TABLE evil AS SELECT run_id FROM runs", "holds table evil"),
    ("UPDATE results SET p_value = 7 WHERE p_value IS NOT NULL", "field 'p_value': 7.0 is outside [0, 1]"),
    ("ALTER TABLE influence ADD COLUMN extra DOUBLE", "influence has column extra"),
])
def test_a_results_file_is_imported_by_the_same_rules(world, tmp_path, capsys, sql, needle):
    src = _poisoned(world, tmp_path, sql)
    db = tmp_path / "b.duckdb"
    rc, out, err = imports(capsys, world, src, db)
    if needle is None:          # published rows of another file are never read: only the runs come in
        assert rc == 0, err
        assert not rows(db, "SELECT * FROM published_models WHERE name = 'evil'")
        return
    one_line_error(rc, err, needle, "nothing was written")
    assert not db.exists()


def test_a_sqlite_file_is_refused_and_no_extension_is_fetched(world, tmp_path, capsys):
    import sqlite3
    s = tmp_path / "s.sqlite"
    con = sqlite3.connect(s)
    con.execute("CREATE TABLE runs (run_id)")
    con.commit()
    con.close()
    rc, _, err = imports(capsys, world, s, tmp_path / "b.duckdb")
    one_line_error(rc, err, "a SQLite database")
    assert "download" not in err.lower() and "extension" not in err.lower()


def test_every_connection_autoloads_and_autoinstalls_no_extension(world, tmp_path):
    from eatlas.store import db as store
    settings = ("SELECT current_setting('autoload_known_extensions'), "
                "current_setting('autoinstall_known_extensions')")
    cons = [store.connect(world["db"], read_only=True), store.connect(world["db"], sandbox=True),
            store.connect(tmp_path / "new.duckdb"), store.duck()]
    try:
        for con in cons:
            assert con.execute(settings).fetchone() == (False, False)
    finally:
        for con in cons:
            con.close()


def test_the_package_opens_duckdb_only_through_its_helper():
    """``duckdb.connect`` appears once in the package, in ``eatlas.store.db.duck`` (which sets the above)."""
    import ast

    import eatlas
    root = Path(eatlas.__file__).parent
    calls = []
    for f in root.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "connect" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "duckdb":
                calls.append(f"{f.relative_to(root)}:{node.lineno}")
    assert len(calls) == 1 and calls[0].startswith("store/db.py"), calls


# ============================================================ 5. export never removes what it did not write
def test_a_re_export_keeps_a_file_the_manifest_lists_with_another_checksum(world, tmp_path, capsys):
    exp = copy_export(world, tmp_path)
    m = manifest(exp)
    m["tables"]["runs"]["files"]["analysis.ipynb"] = "0" * 64
    save(exp, m)
    (exp / "analysis.ipynb").write_text('{"cells": []}')
    rc, _, err = cli(capsys, "--db", world["db"], "results", "export", exp)
    one_line_error(rc, err, "analysis.ipynb", "did not write or that changed since")
    assert (exp / "analysis.ipynb").read_text() == '{"cells": []}'
    # an export's own file edited since is not removed either
    exp2 = copy_export(world, tmp_path / "two")
    victim = exp2 / next(iter(manifest(exp2)["tables"]["results"]["files"]))
    victim.write_bytes(b"my edits")
    rc, _, err = cli(capsys, "--db", world["db"], "results", "export", exp2)
    one_line_error(rc, err, "changed since")
    assert victim.read_bytes() == b"my edits"


# ============================================================ 6. a store that drifted is found before the work
def _no_work(monkeypatch):
    import eatlas.run.runner

    def fail(*a, **k):
        raise AssertionError("the run started before the store was checked")
    monkeypatch.setattr(eatlas.run.runner, "evaluate", fail)


@pytest.mark.parametrize("sql, needle", [
    ("ALTER TABLE results ADD COLUMN evil DOUBLE", "table results has column evil"),
    ("ALTER TABLE published_results ADD COLUMN evil VARCHAR", "table published_results has column evil"),
    ("ALTER TABLE influence ALTER COLUMN delta SET DATA TYPE VARCHAR", "column influence.delta is VARCHAR"),
])
def test_a_drifted_store_is_refused_before_any_work_and_the_repair_works(world, tmp_path, capsys, monkeypatch,
                                                                        sql, needle):
    db = _poisoned(world, tmp_path, sql)
    before = state(db)
    with monkeypatch.context() as mp:
        _no_work(mp)
        rc, _, err = cli(capsys, "--registry", world["reg"], "--db", db, "run", "--model", world["vec"], "--tests",
                         "t1", "--levels", "word", "--no-cache")
        one_line_error(rc, err, needle, "nothing was computed or written", "eatlas results export FOLDER --db")
        rc, _, err = imports(capsys, world, world["exp"], db)
        one_line_error(rc, err, needle)
    assert state(db) == before
    # the repair it names: export (the declared tables and columns), import into a fresh file, run there
    rc, _, err = cli(capsys, "--db", db, "results", "export", tmp_path / "fix")
    assert rc == 0, err
    assert ("left out" in err) == ("ADD COLUMN evil DOUBLE" in sql)
    fresh = tmp_path / "fresh.duckdb"
    assert imports(capsys, world, tmp_path / "fix", fresh)[0] == 0
    assert rows(fresh, "SELECT count(*) FROM runs") == [(3,)]
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", fresh, "run", "--model", world["vec"], "--tests",
                     "t1", "--levels", "word", "--n-samples", "200", "--no-ci", "--no-cache", "--quiet")
    assert rc == 0, err


def test_a_runs_own_rows_pass_the_schema_import_applies(world, tmp_path):
    from eatlas.errors import EatlasError
    from eatlas.registry import load_registry
    from eatlas.store import write_run
    db = tmp_path / "R.duckdb"
    shutil.copy(world["db"], db)
    run = rows(db, "SELECT run_id FROM runs WHERE method = 'weat'")
    con = duckdb.connect(str(db), read_only=True)
    r = con.execute("SELECT * FROM runs WHERE method = 'weat'").fetchdf().to_dict("records")[0]
    res = con.execute("SELECT * FROM results WHERE run_id = ?", [run[0][0]]).fetchdf().to_dict("records")
    con.close()
    r = {k: v for k, v in r.items() if not isinstance(v, float) or v == v}
    r.update(run_id="a-new-run", registry=json.loads(r["registry"]), settings={}, package_versions={})
    bad = [{**x, "run_id": "a-new-run", "p_value": 5.0, "dropped": {}} for x in res]
    before = state(db)
    with pytest.raises(EatlasError, match=r"field 'p_value': 5.0 is outside \[0, 1\]"):
        write_run(db, r, bad, load_registry(world["reg"]))
    assert state(db) == before


# ============================================================ 7. sql: faithful and bounded
def test_sql_table_is_capped_with_a_note_csv_and_json_give_every_row(world, capsys):
    from eatlas.cli.results_cmds import TABLE_MAX_ROWS
    n = TABLE_MAX_ROWS * 3
    rc, out, _ = cli(capsys, "--db", world["db"], "sql", f"SELECT range AS i FROM range({n})")
    assert rc == 0 and f"{TABLE_MAX_ROWS} row(s) shown, more follow" in out and "--format csv" in out
    assert f"│ {TABLE_MAX_ROWS - 1} " in out and f"│ {TABLE_MAX_ROWS} " not in out
    rc, out, _ = cli(capsys, "--db", world["db"], "sql", f"SELECT range AS i FROM range({n})", "--format", "csv")
    assert rc == 0 and out.splitlines() == ["i", *map(str, range(n))]
    rc, out, _ = cli(capsys, "--db", world["db"], "sql", f"SELECT range AS i FROM range({n})", "--format", "json")
    assert rc == 0 and [r["i"] for r in json.loads(out)] == list(range(n))


def test_sql_json_keeps_nan_infinity_null_and_blobs_apart(world, capsys):
    import base64
    q = ("SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, '-inf'::DOUBLE AS c, NULL::DOUBLE AS d, "
         "'\\x00\\xFFab'::BLOB AS e, 'NaN' AS f, [1.5, 'nan'::DOUBLE] AS g")
    rc, out, _ = cli(capsys, "--db", world["db"], "sql", q, "--format", "json")
    assert rc == 0
    (row,) = json.loads(out)
    assert np.isnan(row["a"]) and row["b"] == float("inf") and row["c"] == float("-inf") and row["d"] is None
    assert base64.b64decode(row["e"]) == b"\x00\xffab" and row["f"] == "NaN"
    assert row["g"][0] == 1.5 and np.isnan(row["g"][1])
    rc, out, _ = cli(capsys, "--db", world["db"], "sql", "SELECT 'nan'::DOUBLE AS a, NULL::DOUBLE AS b")
    assert rc == 0 and "NaN" in out           # the table tells NaN from NULL (blank) too


def test_a_database_named_like_a_system_schema_is_queried(world, tmp_path, capsys):
    for name in ("pg_catalog", "information_schema", "main"):
        db = tmp_path / f"{name}.duckdb"
        shutil.copy(world["db"], db)
        for extra in ((), ("--write",)):
            rc, out, err = cli(capsys, "--db", db, "sql", "SELECT count(*) AS n FROM runs", "--format", "csv", *extra)
            assert rc == 0 and out.splitlines() == ["n", "3"], err


# ============================================================ 8. printed text is data
def test_markup_in_a_path_is_printed_as_it_is(world, tmp_path, capsys):
    exp = tmp_path / "mk" / "[/x]"
    rc, out, err = cli(capsys, "--db", world["db"], "results", "export", exp)
    assert rc == 0 and "[/x]" in out, err
    rc, out, err = imports(capsys, world, exp, tmp_path / "[bold]b.duckdb")
    assert rc == 0 and "[/x]" in out and "[bold]b.duckdb" in out, err
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", tmp_path / "[red]none.duckdb", "sql",
                     "SELECT 1 AS a", "--format", "csv")
    assert rc == 0 and "[red]none.duckdb" in err


@pytest.mark.parametrize("method", ["sceat", "same"])
def test_show_influence_of_a_run_without_a_weat_d(world, capsys, method):
    run_id = rows(world["db"], f"SELECT run_id FROM runs WHERE method = '{method}'")[0][0]
    rc, _, err = cli(capsys, "--db", world["db"], "show-influence", run_id[:8], "t1")
    one_line_error(rc, err, f"is a {method} run", "no WEAT effect size", "weat, mleat")


# ============================================================ 9. options: bounded, consistent, applied
@pytest.mark.parametrize("args, needle", [
    (["--n-boot", "100000000000"], "bootstrap resamples need about 745 GiB"),
    (["--n-samples", "1000000000000"], "permutation samples need about"),
    (["--method", "ceat", "--max-contexts", "1000000000000"], "contexts per stimulus need about"),
])
def test_sizes_beyond_the_machines_memory_are_refused_at_parsing(world, tmp_path, capsys, args, needle):
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", tmp_path / "R.duckdb", "run", "--model",
                     world["vec"], *args)
    assert rc == 2 and needle in err and "at most" in err
    assert not (tmp_path / "R.duckdb").exists()


@pytest.mark.parametrize("args, needle", [
    (["--no-ci", "--ci", "0.9"], "--no-ci and --ci contradict each other"),
    (["--no-ci", "--ci", "0.95"], "--no-ci and --ci contradict each other"),        # the default, given
    (["--no-ci", "--n-boot", "500"], "--no-ci and --n-boot contradict each other"),
    (["--ci-method", "BCa", "--no-ci"], "--no-ci and --ci-method contradict each other"),
    (["--method", "ceat", "--ray-address", "auto"], "--ray-address acts only with --engine ray"),
    (["--pooling", "evil"], "--pooling applies to transformers models"),
    (["--layer", "abc"], "--layer applies to transformers models"),
    (["--subword", "first"], "--subword applies to transformers models"),
])
def test_contradictory_or_ignored_options_are_refused(world, tmp_path, capsys, args, needle):
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", tmp_path / "R.duckdb", "run", "--model",
                     world["vec"], "--tests", "t1", "--levels", "word", "--n-samples", "200", "--no-cache", *args)
    one_line_error(rc, err, needle)
    assert not (tmp_path / "R.duckdb").exists()


def test_ray_address_without_the_ray_engine_in_a_sweep(world, tmp_path, capsys):
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", tmp_path / "R.duckdb", "sweep", "--models",
                     world["vec"], "--ray-address", "auto")
    one_line_error(rc, err, "--ray-address acts only with --engine ray")


# ============================================================ 10. registry strings and outputs
def test_source_kind_must_be_a_list_of_tags(mini, capsys):
    cat = (mini.root / "catalog.yaml").read_bytes()
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "lily"], source_kind={}))
    try:
        mini.sync()
    except Exception:       # the catalog keeps the previous entry; validate reports the file
        (mini.root / "catalog.yaml").write_bytes(cat)
    rc, _, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc != 0 and "source_kind must be a list of tags" in err and "roses" in err


def test_the_dataset_card_escapes_html(tmp_path, capsys):
    reg = MiniRegistry(tmp_path / "reg")
    for sid, items in (("roses", ["rose", "tulip"]), ("bugs", ["ant", "moth"]), ("good", ["happy", "lucky"]),
                       ("bad", ["ugly", "sick"])):
        extra = {"license_note": "<script>alert(1)</script> & more"} if sid == "roses" else {}
        if sid == "bugs":
            extra["changelog"] = [{"version": "1.0.0", "date": "2026-11-22", "change": "<img src=x onerror=y>"}]
        reg.add_set(make_set(sid, items, **extra))
    reg.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", title="<b>t1</b>"))
    reg.sync()
    rc, _, err = cli(capsys, "--registry", reg.root, "publish", tmp_path / "ds")
    assert rc == 0, err
    # the card and the files beside it (the config table, the changelog) are Markdown the Hub renders
    card = "\n".join((tmp_path / "ds" / f).read_text() for f in ("README.md", "CONFIGS.md", "CHANGELOG.md",
                                                                  "LICENSE.md", "CITATIONS.md"))
    assert "<script>" not in card and "<img" not in card and "<b>" not in card
    assert "&lt;script&gt;alert(1)&lt;/script&gt; & more" in card and "&lt;b&gt;t1&lt;/b&gt;" in card


def test_publish_refuses_a_folder_that_holds_a_reports_manifest(world, tmp_path, capsys):
    out = tmp_path / "site"
    rc, _, err = cli(capsys, "--registry", world["reg"], "--db", world["db"], "report", out / "report.html")
    assert rc == 0, err
    assert [p.name for p in out.iterdir()] == ["report.html"]     # a report leaves no manifest beside it now
    (out / "report.html").unlink()          # an earlier eatlas's report left its manifest: only that is left
    (out / ".eatlas-manifest.json").write_text('{"written_by": "eatlas", "files": {"report.html": "' + "0" * 64 + '"}}')
    before = state(out)
    rc, _, err = cli(capsys, "--registry", world["reg"], "publish", out)
    one_line_error(rc, err, "manifest of another eatlas output", "report.html")
    assert state(out) == before


def test_a_killed_publishs_temporary_file_is_removed_by_the_next(world, tmp_path, capsys):
    out = tmp_path / "ds"
    assert cli(capsys, "--registry", world["reg"], "publish", out)[0] == 0
    left = out / "data" / "t1" / ".eatlas-tmp-3f2a.parquet"
    left.write_bytes(b"half a parquet")
    assert cli(capsys, "--registry", world["reg"], "publish", out)[0] == 0
    assert not left.exists() and (out / "data" / "t1" / "test.parquet").exists()
    # killed before its first file was whole: the folder holds only the temporary file, and publish goes on
    fresh = tmp_path / "ds2"
    (fresh / "data" / "t1").mkdir(parents=True)
    (fresh / "data" / "t1" / ".eatlas-tmp-9c1d.parquet").write_bytes(b"half")
    assert cli(capsys, "--registry", world["reg"], "publish", fresh)[0] == 0
    assert not list(fresh.rglob(".eatlas-tmp-*"))
