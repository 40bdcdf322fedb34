"""Every SQL example of README.md and the manual (docs/, every page) runs against a results file written by a small
run, and every column the results store's reference table names is a column of that table (README once named a
`family` column that is `model_family`)."""
import re

import duckdb
import pytest
from conftest import ROOT
from static_models import write_static_model

from eatlas.cli import main

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REMOTE = ("hf://", "s3://", "http://", "https://")      # needs the network: not run here


def examples() -> list[tuple[str, str]]:
    """(where, statement) of every `eatlas sql "..."` in a bash block and every statement of a sql block."""
    out = []
    for f in DOCS:
        text = f.read_text(encoding="utf-8")
        for block in re.finditer(r"^```(bash|sql)\n(.*?)^```", text, flags=re.S | re.M):
            line = text[:block.start()].count("\n") + 1
            if block.group(1) == "bash":
                out += [(f"{f.relative_to(ROOT)}:{line}", m.group(1))
                        for m in re.finditer(r'eatlas sql "([^"]*)"', block.group(2))]
            else:
                out += [(f"{f.relative_to(ROOT)}:{line}", s.strip()) for s in block.group(2).split(";") if s.strip()]
    return [(w, s) for w, s in out if not any(r in s for r in REMOTE)]


EXAMPLES = examples()


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A results file with a weat and an mleat run of a tiny static model (family glove, so that
    reproduction_loose holds rows)."""
    tmp = tmp_path_factory.mktemp("docs-sql")
    model = write_static_model(tmp / "m.txt", seed=0, tests=("weat1", "weat6"))
    path = tmp / "r.duckdb"
    for method in ("weat", "mleat"):
        assert main(["--db", str(path), "run", "--method", method, "--model", str(model), "--family", "glove",
                     "--tests", "weat1", "weat6", "--levels", "word", "--n-samples", "1000",
                     "--no-cache", "--quiet"] + (["--no-maps"] if method == "mleat" else [])) == 0
    return path


def test_the_docs_hold_sql_examples():
    assert len(EXAMPLES) >= 8
    assert any("published_results" in s and "ORDER BY" in s for _, s in EXAMPLES)


@pytest.mark.parametrize("where,sql", EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_sql_example_runs(db, where, sql, capsys):
    assert main(["--db", str(db), "sql", sql]) == 0, capsys.readouterr().err


def test_the_published_results_examples_answer_in_a_screenful(db):
    """A reader's first look at the papers' tables: ordered, and a screenful (README once grouped 244 rows by
    paper and table, unordered)."""
    shown = [s for w, s in EXAMPLES if "FROM published_results" in s]
    assert shown
    con = duckdb.connect(str(db), read_only=True)
    try:
        for sql in shown:
            assert "ORDER BY" in sql, sql
            assert len(con.execute(sql).fetchall()) <= 40, sql
    finally:
        con.close()


def store_table_rows() -> list[tuple[str, list[str]]]:
    """The results store's reference table (docs/reference/store.md, "What each table holds"): (table or view, the
    backticked names in its description)."""
    text = (ROOT / "docs" / "reference" / "store.md").read_text(encoding="utf-8")
    section = text[text.index("## What each table holds"):]
    section = section[:section.index("\n## ")]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\| `([a-z_]+)`[^|]*\| (.*) \|$", line)
        if m:
            rows.append((m.group(1), re.findall(r"`([^`]+)`", m.group(2))))
    return rows


def test_every_column_the_store_reference_names_exists(db):
    rows = store_table_rows()
    assert {"runs", "results", "reproduction", "mleat_reproduction"} <= {t for t, _ in rows}
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for table, mentioned in rows:
            cols = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
            for name in mentioned:
                if re.fullmatch(r"[a-z_0-9]+", name):       # not a path, a command or an example value
                    assert name in cols or name in names, f"docs/reference/store.md names column {name!r} of {table}"
    finally:
        con.close()
