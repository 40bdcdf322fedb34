"""Security: data files never run code, templates cannot reach Python, models bring no code unless
asked, ``eatlas sql`` touches nothing but the database unless --write, paths stay in the registry."""
from __future__ import annotations

import json

import duckdb
import pytest

from eatlas import store
from eatlas.cli import build_parser, main
from eatlas.errors import EatlasError
from eatlas.registry import Item, parse_template, parse_yaml
from eatlas.registry.templates import expand_item, vet_template


# ----------------------------------------------------------------------------- YAML
@pytest.mark.parametrize("payload", [
    '!!python/object/apply:os.system ["touch {m}"]',
    '!!python/object/apply:subprocess.check_output [["touch", "{m}"]]',
    '!!python/object/new:subprocess.Popen [["touch", "{m}"]]',
    "!!python/name:os.system",
    "!!python/module:os",
])
def test_yaml_python_tags_run_nothing_and_are_reported(tmp_path, payload):
    marker = tmp_path / "pwned"
    with pytest.raises(EatlasError) as e:
        parse_yaml(f"id: x\nnotes: {payload.format(m=marker)}\n", "sets/x.yaml")
    assert "is not allowed at line 2" in str(e.value) and "nothing in them is run" in str(e.value)
    assert e.value.file == "sets/x.yaml"
    assert not marker.exists()


# ----------------------------------------------------------------------------- Jinja
def _tmpl(src):
    return parse_template({"id": "t", "version": "1.0.0", "families": {"name": [src]}}, "templates/t.yaml")


ESCAPES = ["{{ ''.__class__.__mro__ }}", "{{ ''.__class__.__mro__[1].__subclasses__() }}",
           "{{ cycler.__init__.__globals__ }}", "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
           "{{ joiner.__init__.__globals__ }}", "{{ lipsum.__globals__['os'] }}", "{{ namespace.__init__ }}",
           "{% include 'x' %}", "{% import 'x' as y %}", "{% from 'x' import y %}", "{% extends 'x' %}",
           "{{ self }}", "{{ self.__init__.__globals__ }}", "{{ config }}", "{{ request.application }}",
           "{% set x = term %}{{ x }}", "{% macro m() %}{% endmacro %}", "{{ term|attr('__class__') }}",
           "{{ term|format('%s') }}", "{{ term['__class__'] }}", "{{ (term).__len__() }}",
           "{% for c in range(10**9) %}{% endfor %}", "{{ term ~ term }}", "{{ 9**9**9 }}"]


@pytest.mark.parametrize("src", ESCAPES)
def test_template_escapes_are_refused_before_and_at_rendering(src):
    with pytest.raises(EatlasError) as e:
        vet_template(_tmpl(src))
    assert e.value.file == "templates/t.yaml"
    with pytest.raises(EatlasError):       # also at render time, without 'eatlas validate'
        expand_item(Item("Amy", "name"), 0, _tmpl(src))


@pytest.mark.parametrize("name", ["cycler", "joiner", "namespace", "lipsum", "range", "dict"])
def test_jinja_globals_are_not_reachable(name):
    """Even a bare name that Jinja would bind to one of its globals is undefined here."""
    with pytest.raises(EatlasError, match="undefined variable"):
        expand_item(Item("Amy", "name"), 0, _tmpl(f"{{{{ {name} }}}}"))


# ----------------------------------------------------------------------------- model code
def test_trust_remote_code_is_off_by_default():
    assert not build_parser().parse_args(["run"]).trust_remote_code
    from eatlas.run.runner import RunConfig
    assert RunConfig().trust_remote_code is False


def test_model_folder_with_custom_code_is_refused_without_the_flag(tmp_path, capsys):
    folder = tmp_path / "custom-model"
    folder.mkdir()
    marker = tmp_path / "pwned"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "eatlas_custom", "hidden_size": 8,
        "auto_map": {"AutoConfig": "configuration_custom.CustomConfig", "AutoModel": "modeling_custom.CustomModel"}}))
    code = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    (folder / "configuration_custom.py").write_text(code)
    (folder / "modeling_custom.py").write_text(code)
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--model", str(folder), "--tests", "weat1", "--levels", "word", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "custom code" in err and str(folder) in err and "Traceback" not in err
    assert f"--trust-remote-code {folder}" in err                       # says how, naming this model
    assert not marker.exists() and not db.exists()
    # The flag must name the model it trusts: naming another one is refused before anything loads.
    rc = main(["--db", str(db), "run", "--model", str(folder), "--trust-remote-code", str(tmp_path / "other"),
               "--tests", "weat1", "--levels", "word", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "--trust-remote-code names" in err and not marker.exists()
    # Naming it lets its code run (here it only writes the marker, then fails to build a model).
    rc = main(["--db", str(db), "run", "--model", str(folder), "--trust-remote-code", str(folder),
               "--tests", "weat1", "--levels", "word", "--quiet"])
    assert rc == 2 and marker.read_text() == "ran" and not db.exists()


# ----------------------------------------------------------------------------- eatlas sql
@pytest.fixture
def db(tmp_path):
    path = tmp_path / "r.duckdb"
    con = duckdb.connect(str(path))
    store.init_schema(con)
    con.execute("CREATE TABLE other AS SELECT 1 AS x")
    con.close()
    duckdb.connect(str(tmp_path / "elsewhere.duckdb")).close()
    return path


@pytest.mark.parametrize("sql", [
    "COPY results TO '{d}/out.csv'", "COPY (SELECT 1) TO '{d}/out.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{d}/exported'", "ATTACH '{d}/elsewhere.duckdb' AS e", "ATTACH '{d}/new.duckdb' AS n",
    "INSTALL httpfs", "LOAD httpfs", "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM '{d}/elsewhere.duckdb'", "SELECT * FROM glob('/etc/*')", "SET enable_external_access = true",
    "RESET enable_external_access", "SET lock_configuration = false", "DELETE FROM results", "DROP TABLE other",
    "CREATE TABLE t2 (x INT)", "INSERT INTO other VALUES (2)", "CREATE SECRET (TYPE s3)",
])
def test_sql_without_write_touches_nothing_but_the_database(db, capsys, sql):
    d = db.parent
    before = sorted(p.name for p in d.iterdir())
    rc = main(["--db", str(db), "sql", sql.format(d=d)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and "Traceback" not in err
    assert "--write" in err, err
    assert sorted(p.name for p in d.iterdir()) == before
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM other").fetchone()[0] == 1
    con.close()


def test_sql_without_write_still_reads(db, capsys):
    assert main(["--db", str(db), "sql", "SELECT x FROM other", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["x", "1"]
    assert main(["--db", str(db), "sql", "SELECT count(*) AS n FROM reproduction", "--format", "csv"]) == 0


def test_sql_with_write_may_change_and_export(db, capsys):
    out = db.parent / "out.csv"
    assert main(["--db", str(db), "sql", "--write", f"COPY other TO '{out}'"]) == 0
    assert out.read_text().split() == ["x", "1"]
    assert main(["--db", str(db), "sql", "--write", "INSERT INTO other VALUES (2)"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM other").fetchone()[0] == 2
    con.close()
