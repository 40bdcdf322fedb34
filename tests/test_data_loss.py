"""Nothing lost, nothing silently wrong (issue 15): outputs never overwrite what eatlas did not write,
faults fail early in one line with the database as it was, degenerate vectors and results are
recorded as such, stored text is printed as data, CSV cells cannot run as formulas, and an
interrupted ``eatlas add`` can be retried.

Runs use a small GloVe-style vector file written by each test (word level only), so the vectors,
zero, NaN or shared, are chosen by the test.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.cli_helpers import cli, one_line_error
from tests.conftest import ROOT, make_set, make_test

WORDS = ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea",
         "happy", "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"]


def vectors(path: Path, words=WORDS, *, dim: int = 6, seed: int = 0, override: dict | None = None) -> Path:
    rng = np.random.default_rng(seed)
    rows = {w: rng.normal(size=dim) for w in words}
    rows.update(override or {})
    path.write_text("".join(f"{w} {' '.join(map(str, np.asarray(v, dtype=float)))}\n" for w, v in rows.items()))
    return path


def run(capsys, mini, db, model, *extra) -> tuple[int, str, str]:
    return cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", model, "--tests", "t1", "--levels",
               "word", "--n-samples", "200", "--no-cache", *extra)


def results(db) -> list[dict]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT * FROM results ORDER BY run_id").fetchdf().to_dict("records")
    finally:
        con.close()


@pytest.fixture
def ran(mini, tmp_path, capsys):
    """A database holding one finished run of the mini registry."""
    db = tmp_path / "R.duckdb"
    rc, _, err = run(capsys, mini, db, vectors(tmp_path / "vec.txt"), "--quiet")
    assert rc == 0, err
    return db


# ============================================================ 1. outputs never overwrite what eatlas did not write
def test_report_over_the_database_is_refused_and_the_database_kept(mini, ran, capsys):
    before = ran.read_bytes()
    one_line_error(*cli(capsys, "--registry", mini.root, "--db", ran, "report", ran)[::2], "R.duckdb",
                   "results database")
    assert ran.read_bytes() == before
    assert len(results(ran)) == 1


def test_report_replaces_only_its_own_unchanged_file(mini, ran, tmp_path, capsys):
    mine = tmp_path / "notes.html"
    mine.write_text("my notes")
    one_line_error(*cli(capsys, "--registry", mini.root, "--db", ran, "report", mine)[::2], "notes.html",
                   "eatlas did not write it")
    assert mine.read_text() == "my notes"
    out = tmp_path / "report.html"
    assert cli(capsys, "--registry", mini.root, "--db", ran, "report", out)[0] == 0
    assert cli(capsys, "--registry", mini.root, "--db", ran, "report", out)[0] == 0     # its own: replaced
    out.write_text(out.read_text() + "<!-- my edit -->")
    one_line_error(*cli(capsys, "--registry", mini.root, "--db", ran, "report", out)[::2], "report.html",
                   "changed since eatlas wrote it")
    assert out.read_text().endswith("<!-- my edit -->")


def test_no_output_goes_into_the_registry(mini, ran, capsys):
    cat = (mini.root / "catalog.yaml").read_bytes()
    one_line_error(*cli(capsys, "--registry", mini.root, "--db", ran, "report", mini.root / "catalog.yaml")[::2],
                   "catalog.yaml", "inside the registry")
    assert (mini.root / "catalog.yaml").read_bytes() == cat
    sets = mini.root / "registry" / "testpaper" / "sets"
    one_line_error(*cli(capsys, "--registry", mini.root, "export", sets, "--format", "csv")[::2],
                   "inside the registry")
    assert sorted(p.name for p in sets.iterdir()) == ["bad.yaml", "bugs.yaml", "good.yaml", "roses.yaml"]
    assert cli(capsys, "--registry", mini.root, "--db", ran, "publish", mini.root)[0] == 2


def test_export_refuses_a_file_in_the_way_before_writing_any(mini, tmp_path, capsys):
    mini.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    out = tmp_path / "ex"
    out.mkdir()
    (out / "t2.csv").write_text("mine")
    one_line_error(*cli(capsys, "--registry", mini.root, "export", out, "--format", "csv")[::2], "t2.csv",
                   "eatlas did not write it")
    assert sorted(p.name for p in out.iterdir()) == ["t2.csv"] and (out / "t2.csv").read_text() == "mine"
    (out / "t2.csv").unlink()
    assert cli(capsys, "--registry", mini.root, "export", out, "--format", "csv")[0] == 0
    assert cli(capsys, "--registry", mini.root, "export", out, "--format", "csv")[0] == 0     # its own files


def test_eat_maps_refuse_a_foreign_file_before_the_run(mini, tmp_path, capsys):
    maps = tmp_path / "maps"
    maps.mkdir()
    (maps / "grid.png").write_bytes(b"my picture")
    db = tmp_path / "R.duckdb"
    rc, _, err = run(capsys, mini, db, vectors(tmp_path / "vec.txt"), "--method", "mleat", "--maps", maps, "--quiet")
    one_line_error(rc, err, "grid.png", "eatlas did not write it")
    assert not db.exists() and (maps / "grid.png").read_bytes() == b"my picture"


# ============================================================ 2. publish replaces only what it wrote
def test_publish_keeps_user_files_and_refuses_changed_or_foreign_ones(mini, tmp_path, capsys):
    out = tmp_path / "ds"
    assert cli(capsys, "--registry", mini.root, "publish", out)[0] == 0
    manifest = json.loads((out / ".eatlas-manifest.json").read_text())["files"]
    assert {"README.md", "LICENSE.md", "data/t1/test.parquet", "data/sets/test.parquet"} <= set(manifest)
    (out / "data" / "mine.txt").write_text("my notes")
    assert cli(capsys, "--registry", mini.root, "publish", out)[0] == 0      # re-publish: its own files only
    assert (out / "data" / "mine.txt").read_text() == "my notes"

    parquet = out / "data" / "t1" / "test.parquet"
    parquet.write_bytes(parquet.read_bytes() + b"edited")
    one_line_error(*cli(capsys, "--registry", mini.root, "publish", out)[::2], "test.parquet", "changed since")
    assert parquet.read_bytes().endswith(b"edited")
    parquet.unlink()

    mini.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    mini.sync()
    (out / "data" / "t2").mkdir()
    (out / "data" / "t2" / "test.parquet").write_bytes(b"not publish's")
    one_line_error(*cli(capsys, "--registry", mini.root, "publish", out)[::2], "t2", "eatlas did not write it")
    assert (out / "data" / "t2" / "test.parquet").read_bytes() == b"not publish's"


def test_publish_into_a_folder_it_never_wrote_is_refused(mini, tmp_path, capsys):
    out = tmp_path / "ds"
    (out / "data").mkdir(parents=True)
    (out / "data" / "thesis.tex").write_text("chapter 1")
    one_line_error(*cli(capsys, "--registry", mini.root, "publish", out)[::2], "ds", "not empty",
                   ".eatlas-manifest.json")
    assert (out / "data" / "thesis.tex").read_text() == "chapter 1"


# ============================================================ 3. faults: early, one line, nothing lost
@pytest.mark.parametrize("args,needle", [
    (["--seed", str(2**70)], "--seed: 1180591620717411303424 is above"),
    (["--n-samples", str(10**30)], "--n-samples: 1000000000000000000000000000000 is above"),
    (["--n-samples", "1e30"], "'1e30' is not a whole number"),
])
def test_integers_beyond_the_store_are_refused_at_parsing(mini, tmp_path, capsys, args, needle):
    rc, _, err = run(capsys, mini, tmp_path / "R.duckdb", vectors(tmp_path / "vec.txt"), *args)
    assert rc == 2 and needle in err
    assert not (tmp_path / "R.duckdb").exists()


def _no_work(monkeypatch):
    import eatlas.run.runner

    def fail(*a, **k):
        raise AssertionError("the run started before the database was checked")
    monkeypatch.setattr(eatlas.run.runner, "evaluate", fail)


@pytest.mark.parametrize("kind", ["truncated", "text", "sqlite"])
def test_a_damaged_or_foreign_database_is_refused_before_any_work(mini, ran, tmp_path, capsys, monkeypatch, kind):
    import sqlite3
    db = tmp_path / f"{kind}.duckdb"
    if kind == "truncated":
        db.write_bytes(ran.read_bytes()[:len(ran.read_bytes()) // 3])
    elif kind == "text":
        db.write_text("a text file\n" * 100)
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE t (a)")
        con.commit()
        con.close()
    before = db.read_bytes()
    _no_work(monkeypatch)
    rc, _, err = run(capsys, mini, db, tmp_path / "vec.txt")
    one_line_error(rc, err, db.name, "cannot open database")
    if kind == "sqlite":
        assert "SQLite" in err and "download" not in err.lower()      # refused, no extension fetched
    assert db.read_bytes() == before


@pytest.mark.parametrize("where", ["proc", "folder", "missing-folder"])
def test_a_store_that_cannot_be_written_is_refused_before_any_work(mini, tmp_path, capsys, monkeypatch, where):
    db = {"proc": Path("/proc/eatlas-test.duckdb"), "folder": tmp_path,
          "missing-folder": tmp_path / "nope" / "R.duckdb"}[where]
    _no_work(monkeypatch)
    rc, _, err = run(capsys, mini, db, tmp_path / "vec.txt")
    one_line_error(rc, err, str(db))


def test_disk_full_at_commit_is_one_line_and_the_database_stays_as_it_was(mini, ran, tmp_path, capsys, monkeypatch):
    from eatlas.store import db as store

    real = store.connect

    class Full:
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *a):
            if sql.strip().upper() == "COMMIT":
                raise duckdb.IOException("Could not write file: No space left on device")
            return self.con.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.con, name)

    monkeypatch.setattr(store, "connect", lambda *a, **k: Full(real(*a, **k)) if not k.get("read_only") and
                        not k.get("sandbox") else real(*a, **k))
    rc, _, err = run(capsys, mini, ran, tmp_path / "vec.txt", "--quiet")
    one_line_error(rc, err, "R.duckdb", "No space left on device", "nothing of it was")
    monkeypatch.setattr(store, "connect", real)
    assert len(results(ran)) == 1            # the earlier run, and nothing of the failed one


@pytest.mark.parametrize("sql", ["", "   ", ";"])
def test_an_empty_sql_query(ran, capsys, sql):
    one_line_error(*cli(capsys, "--db", ran, "sql", sql)[::2], "empty SQL query")


# ============================================================ 4. degenerate vectors and results
def test_zero_and_nan_vectors_are_dropped_with_their_reason(mini, tmp_path, capsys):
    db = tmp_path / "R.duckdb"
    vec = vectors(tmp_path / "vec.txt", override={"tulip": np.zeros(6), "ant": np.full(6, np.nan)})
    rc, _, err = run(capsys, mini, db, vec, "--min-coverage", "0.5", "--quiet")
    assert rc == 0, err
    (r,) = results(db)
    assert r["status"] == "ok" and r["n_dropped"] == 2 and (r["n_x"], r["n_y"]) == (3, 3)
    dropped = json.loads(r["dropped"])
    assert dropped["x"] == ["tulip"] and dropped["y"] == ["ant"]
    assert dropped["reasons"] == {"tulip": "zero vector", "ant": "vector holds NaN or inf"}


def test_a_role_left_without_vectors_is_not_run(mini, tmp_path, capsys):
    db = tmp_path / "R.duckdb"
    vec = vectors(tmp_path / "vec.txt", override={w: np.zeros(6) for w in ("happy", "gentle", "lucky", "honest")})
    assert run(capsys, mini, db, vec, "--quiet")[0] == 0
    (r,) = results(db)
    assert r["status"] == "not_run" and "A 0/4" in r["reason"]


def test_identical_target_vectors_are_not_run_with_the_reason(mini, tmp_path, capsys):
    db = tmp_path / "R.duckdb"
    same = np.arange(1.0, 7.0)
    vec = vectors(tmp_path / "vec.txt", override={w: same for w in WORDS[:8]})
    assert run(capsys, mini, db, vec, "--quiet")[0] == 0
    (r,) = results(db)
    assert r["status"] == "not_run" and "same vector" in r["reason"] and "'rose'" in r["reason"]


def test_an_undefined_effect_size_is_not_run(mini, tmp_path, capsys):
    """X and Y orthogonal to every attribute: every s(w, A, B) is 0, the standard deviation too."""
    db = tmp_path / "R.duckdb"
    rng = np.random.default_rng(1)
    over = {w: np.r_[rng.normal(size=3), 0, 0, 0] for w in WORDS[8:]}
    over.update({w: np.r_[0, 0, 0, rng.normal(size=3)] for w in WORDS[:8]})
    assert run(capsys, mini, db, vectors(tmp_path / "vec.txt", override=over), "--quiet")[0] == 0
    (r,) = results(db)
    assert r["status"] == "not_run" and "effect size undefined" in r["reason"]


def test_nan_in_the_cache_is_encoded_afresh(mini, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EATLAS_CACHE", str(tmp_path / "cache"))
    vec = vectors(tmp_path / "vec.txt")
    db = tmp_path / "R.duckdb"
    args = ("--registry", mini.root, "--db", db, "run", "--model", vec, "--tests", "t1", "--levels", "word",
            "--n-samples", "200", "--quiet")
    assert cli(capsys, *args)[0] == 0
    shards = list((tmp_path / "cache").glob("*/*.npz"))
    assert shards
    for p in shards:                     # damaged outside eatlas: every cached vector NaN
        with np.load(p) as z:
            arrays = dict(z)
        arrays["vectors"] = np.full_like(arrays["vectors"], np.nan)
        np.savez(p, **arrays)
    assert cli(capsys, *args)[0] == 0
    first, second = results(db)
    assert second["status"] == "ok" and second["effect_size"] == pytest.approx(first["effect_size"], abs=1e-6)


def test_ceat_leaves_out_zero_context_vectors(mini, tmp_path):
    """A CEAT stimulus whose contexts all encode to zero vectors has no usable context: reported missing."""
    from eatlas.encoders import StaticEncoder
    from eatlas.run.runner import RunConfig, evaluate

    rng = np.random.default_rng(0)
    vec = {w: rng.normal(size=6) for w in WORDS}
    vec["tulip"] = np.zeros(6)
    enc = StaticEncoder(list(vec), np.vstack(list(vec.values())), model_id="v", family="test", fingerprint="v:1",
                        lowercase=False)
    lines = [f"the {x} was {a} and the {y} was {b}" for x, y, a, b in
             zip(WORDS[:4] * 5, WORDS[4:8] * 5, WORDS[8:12] * 5, WORDS[12:16] * 5)]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines))
    cfg = RunConfig(method="ceat", tests=["t1"], options={"corpus": [str(corpus)], "n_draws": 50, "max_contexts": 5})
    tables = evaluate(cfg, registry=mini.root, encoder=enc).tables
    res = tables["ceat_results"].iloc[0]
    assert res["status"] == "ok" and "tulip" in res["missing"]


def test_a_case_collision_in_the_model_is_an_overlap(mini, tmp_path, capsys):
    """'aster' in X and 'Aster' in Y: the vector file has only 'aster', so both get one vector."""
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "aster"]))
    mini.add_set(make_set("bugs", ["ant", "moth", "wasp", "Aster"]))
    mini.sync()
    db = tmp_path / "R.duckdb"
    assert run(capsys, mini, db, vectors(tmp_path / "vec.txt", [*WORDS, "aster"]), "--quiet")[0] == 0
    (r,) = results(db)
    assert r["status"] == "not_run" and "X 'aster' and Y 'Aster'" in r["reason"] and "overlap" in r["reason"]


def test_a_published_inf_does_not_break_the_report():
    """A printed 'inf' (or any non-finite number) is left out of the comparison plot, never plotted."""
    import numpy as np
    import pandas as pd

    from eatlas.outputs.report import reproduction_scatter
    df = pd.DataFrame({"run_id": ["r1", "r1"], "model": ["m", "m"], "test_id": ["t1", "t2"], "level": ["word", "word"],
                       "our_effect_size": [0.4, 0.6], "published_effect_size": [np.inf, 0.5],
                       "paper": ["testpaper", "testpaper"], "published_model": ["m", "m"]})
    df["difference"] = df["our_effect_size"] - df["published_effect_size"]
    fig = reproduction_scatter(df)
    assert fig is not None and fig["n"] == 1


# ============================================================ 5. stored text printed as data
MARKUP = ["[/x]", "[bold red]poppy[/bold red]", "rose", "lily"]


def test_show_and_list_print_markup_and_control_characters_as_data(mini, capsys):
    mini.add_set(make_set("roses", MARKUP, notes="clears the screen \x1b[2J here"))
    mini.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0", title="[/x] title"))
    mini.sync()
    rc, out, err = cli(capsys, "--registry", mini.root, "show", "roses")
    assert rc == 0, err
    assert "[/x]" in out and "[bold red]poppy[/bold red]" in out
    assert "\x1b" not in out and "\\x1b[2J" in out
    rc, out, _ = cli(capsys, "--registry", mini.root, "show", "t1", "--level", "word")
    assert rc == 0 and "[bold red]poppy[/bold red]" in out and "[/x] title" in out
    rc, out, _ = cli(capsys, "--registry", mini.root, "list")
    assert rc == 0 and "[/x] title" in out


def test_sql_and_the_run_table_print_markup_as_data(mini, tmp_path, capsys):
    folder = tmp_path / "m["
    folder.mkdir()
    model = vectors(folder / "x].txt")            # the model path holds '[/x]'
    db = tmp_path / "R.duckdb"
    rc, out, err = run(capsys, mini, db, model)
    assert rc == 0, err
    assert "m[/x].txt" in out
    rc, out, _ = cli(capsys, "--db", db, "sql", "SELECT '[/x]' AS a, '[bold]b[/bold]' AS b, chr(27) || '[31mred' AS c")
    assert rc == 0 and "[/x]" in out and "[bold]b[/bold]" in out and "\x1b" not in out and "\\x1b[31mred" in out


def test_validate_reports_markup_in_its_errors_as_data(mini, capsys):
    mini.add_set(make_set("roses", ["[/x]", "[/x]", "daisy", "lily"]))
    mini.sync()
    rc, _, err = cli(capsys, "--registry", mini.root, "validate")
    assert rc == 1 and "duplicate item" in err and "[/x]" in err


# ============================================================ 6. CSV cells never run as formulas
def test_sql_csv_neutralises_formula_cells(ran, capsys):
    rc, out, _ = cli(capsys, "--db", ran, "sql", "SELECT '=HYPERLINK(''http://x'')' AS a, '+cmd' AS b, '@SUM(1)' AS c, "
                     "'-0.5' AS d, -2 AS e, 'rose' AS f, chr(9) || 'tab' AS g", "--format", "csv")
    assert rc == 0
    row = pd.read_csv(pd.io.common.StringIO(out), dtype=str, keep_default_na=False).iloc[0].to_dict()
    assert row == {"a": "'=HYPERLINK('http://x')", "b": "'+cmd", "c": "'@SUM(1)", "d": "-0.5", "e": "-2",
                   "f": "rose", "g": "'\ttab"}


def test_exported_items_are_neutralised(mini, tmp_path, capsys):
    mini.add_set(make_set("roses", ["@home", "=1+1", "daisy", "lily"]))
    mini.sync()
    assert cli(capsys, "--registry", mini.root, "export", tmp_path / "ex", "--format", "csv", "--level", "word")[0] == 0
    df = pd.read_csv(tmp_path / "ex" / "t1.csv", dtype=str)
    assert {"'@home", "'=1+1"} <= set(df["item"]) and {"'@home", "'=1+1"} <= set(df["text"])
    assert not any(v.startswith(("=", "@")) for v in df["item"])


# ============================================================ 7. eatlas add, interrupted, can be retried
def _add_killed(mini, new: Path, where: str):
    """``eatlas add`` in a child process that dies (os._exit, no clean-up) at ``where``."""
    hook = {"after-write": "import eatlas.registry.catalog as c; c.render_catalog = c._with_entry = "
                           "lambda *a, **k: os._exit(9)",       # the set's file is in place, the catalog not yet
            "mid-write": "os.replace = lambda *a, **k: os._exit(9)"}[where]
    code = f"import os, sys; {hook}; from eatlas.cli import main; main(['--registry', {str(mini.root)!r}, 'add', " \
           f"{str(new)!r}])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr


@pytest.mark.parametrize("where", ["after-write", "mid-write"])
def test_an_interrupted_add_can_be_retried(mini, tmp_path, capsys, where):
    import yaml
    new = tmp_path / "irises.yaml"
    new.write_text(yaml.safe_dump(make_set("irises", ["iris", "flag", "orris", "sword"]), sort_keys=False))
    _add_killed(mini, new, where)
    rc, out, err = cli(capsys, "--registry", mini.root, "add", new)
    assert rc == 0, err
    sets = mini.root / "registry" / "testpaper" / "sets"
    assert [p.name for p in sets.iterdir() if p.name.startswith(".")] == []     # no temporary file left
    assert "irises" in (mini.root / "catalog.yaml").read_text()
    assert cli(capsys, "--registry", mini.root, "validate")[0] == 0
