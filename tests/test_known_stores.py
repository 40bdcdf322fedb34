"""A results file this EATlas wrote last and nobody changed since skips the checks it passed then
(eatlas.store.known); any change to it, a record forged by someone else, or other code brings every check back."""
from __future__ import annotations

import json

import duckdb
import pytest

from eatlas.store import known
from tests.cli_helpers import cli
from tests.test_bad_input import _stored_run
from tests.test_data_loss import vectors


def _run(capsys, mini, tmp_path, db):
    return cli(capsys, "--registry", mini.root, "--db", db, "run", "--model", vectors(tmp_path / "vec.txt"),
               "--tests", "t1", "--levels", "word", "--n-samples", "200", "--no-cache", "--quiet")


def test_a_run_records_the_file_it_left_and_a_second_run_trusts_it(mini, tmp_path, capsys, monkeypatch):
    import shutil
    db = tmp_path / "copy.duckdb"
    shutil.copy(_stored_run(capsys, mini, tmp_path), db)      # a copy: not a file this EATlas wrote
    assert not known.unchanged(db)
    rc, _, err = _run(capsys, mini, tmp_path, db)
    assert rc == 0, err
    assert known.unchanged(db)
    from eatlas.store import db as store
    checked = []
    monkeypatch.setattr(store, "check_schema", lambda *a, **k: checked.append(a))
    rc, _, err = _run(capsys, mini, tmp_path, db)
    assert rc == 0 and checked == [], err            # the checks it passed were not made again
    assert duckdb.connect(str(db)).execute("SELECT count(*) FROM runs").fetchone()[0] == 3


@pytest.mark.parametrize("change", ["macro", "view in a table's place", "column"])
def test_a_file_changed_after_the_write_gets_every_check(mini, tmp_path, capsys, change):
    db = _stored_run(capsys, mini, tmp_path)
    assert _run(capsys, mini, tmp_path, db)[0] == 0 and known.unchanged(db)
    con = duckdb.connect(str(db))
    if change == "macro":
        con.execute("CREATE MACRO lower(x) AS 'pwned'")
    elif change == "view in a table's place":
        con.execute("DROP TABLE influence")
        con.execute("CREATE VIEW influence AS SELECT 1 AS run_id")
    else:
        con.execute("ALTER TABLE runs ADD COLUMN extra_col VARCHAR")
    con.close()
    assert not known.unchanged(db)
    before = db.read_bytes()
    rc, _, err = _run(capsys, mini, tmp_path, db)
    assert rc != 0 and "Traceback" not in err, err
    assert str(db) in err or db.name in err
    assert db.read_bytes() == before


def test_a_forged_record_is_not_trusted(mini, tmp_path, capsys):
    db = _stored_run(capsys, mini, tmp_path)
    assert _run(capsys, mini, tmp_path, db)[0] == 0
    con = duckdb.connect(str(db))
    con.execute("CREATE MACRO lower(x) AS 'pwned'")
    con.close()
    real = db.resolve()
    rec = known._record(real)
    body = json.dumps([str(real), known._identity(real), known._code()])     # the file's new identity...
    rec.write_text(json.dumps({"body": body, "seal": "0" * 32}))               # ...under a seal not made by the key
    assert not known.unchanged(db)
    rc, _, err = _run(capsys, mini, tmp_path, db)
    assert rc != 0 and "macro" in err, err


def test_other_code_does_not_trust_the_record(mini, tmp_path, capsys, monkeypatch):
    db = _stored_run(capsys, mini, tmp_path)
    assert _run(capsys, mini, tmp_path, db)[0] == 0 and known.unchanged(db)
    monkeypatch.setattr(known, "_code", lambda: "another version")
    assert not known.unchanged(db)


def test_the_declared_schema_kept_per_code_equals_the_one_made_now():
    from eatlas.store import db as store
    sig = tuple((t.name, t.row, t.open) for t in store.tables())
    store._declared.cache_clear()
    kept = store._declared(sig)
    store._declared.cache_clear()
    kept_again = store._declared(sig)                  # read back from the sealed file
    now = store._declared_now(sig)
    assert kept == kept_again
    assert [t for t, *_ in now[0]] == [t for t, _ in kept[0]] and list(now[1]) == list(kept[1])
    for (_t, cols, nn, key, is_open, runs), (_, d) in zip(now[0], kept[0]):
        assert (dict(cols), frozenset(nn), tuple(key), is_open, runs) == (d.columns, d.not_null, d.key, d.open, d.runs)


def test_the_counts_the_write_kept_equal_a_fresh_read(mini, tmp_path, capsys):
    """The reproduction line's counts, computed inside the write's transaction, are those a fresh read-only open
    of the file gives."""
    from eatlas.store import db as store
    db = _stored_run(capsys, mini, tmp_path)
    assert _run(capsys, mini, tmp_path, db)[0] == 0
    con = duckdb.connect(str(db), read_only=True)
    run_id = con.execute("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
    con.close()
    kept = store._PAIRING.get((str(db.resolve()), run_id))
    assert kept is not None and known.unchanged(db)
    con = store.connect(db, read_only=True)
    try:
        assert store.pairing(con, run_id) == kept == store.reproduction_counts(db, run_id)
    finally:
        con.close()
