"""Ctrl-C in a method's own loop keeps the finished work: CEAT (per test) and IBD/EIBD (per group) store the units
that finished in one write, record the run as interrupted, say what was stored and how to resume, and exit 130;
a Ctrl-C before any unit finished stores nothing. (The WEAT-style runner and the LLM IAT: tests/test_bad_input.py.)"""
from __future__ import annotations

import json

import duckdb

from eatlas.cli import main


def _stop_at_second(monkeypatch, module, name):
    real, calls = getattr(module, name), []

    def wrapped(*a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)
    monkeypatch.setattr(module, name, wrapped)
    return calls


def _settings(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return json.loads(con.execute("SELECT settings FROM runs").fetchone()[0])
    finally:
        con.close()


def test_ctrl_c_in_ceat_stores_the_finished_tests_and_resumes(tiny_bert, tmp_path, monkeypatch, capsys):
    import eatlas.methods.ceat as ceat_method
    from tests.test_ceat_encode import lines

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines()), encoding="utf-8")
    db = tmp_path / "r.duckdb"
    argv = ["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--corpus", str(corpus),
            "--n-draws", "200", "--max-contexts", "6", "--no-cache", "--tests"]
    _stop_at_second(monkeypatch, ceat_method, "_one_test")
    assert main([*argv, "weat1", "weat2"]) == 130
    out = " ".join(capsys.readouterr().out.split())
    assert "interrupted (Ctrl-C) after 1 test(s): weat1 stored" in out and "--tests weat2" in out, out
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT test_id FROM ceat_results").fetchall() == [("weat1",)]
    assert {r[0] for r in con.execute("SELECT DISTINCT test_id FROM ceat_contexts").fetchall()} == {"weat1"}
    assert {r[0] for r in con.execute("SELECT DISTINCT test_id FROM ceat_draws").fetchall()} == {"weat1"}
    con.close()
    s = _settings(db)
    assert s["interrupted"] is True and s["not_finished"] == ["weat2"]
    monkeypatch.undo()
    assert main([*argv, "weat2"]) == 0                  # the resume the note names
    con = duckdb.connect(str(db), read_only=True)
    assert sorted(r[0] for r in con.execute("SELECT test_id FROM ceat_results").fetchall()) == ["weat1", "weat2"]
    con.close()


def test_ctrl_c_in_ceat_before_any_test_finished_stores_nothing(tiny_bert, tmp_path, monkeypatch, capsys):
    import eatlas.methods.ceat as ceat_method
    from tests.test_ceat_encode import lines

    def stop(*a, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(ceat_method, "_one_test", stop)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines()), encoding="utf-8")
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--corpus", str(corpus),
               "--n-draws", "200", "--max-contexts", "6", "--no-cache", "--tests", "weat1", "weat2"])
    assert rc == 130 and "nothing was written" in capsys.readouterr().err and not db.exists()


def test_ctrl_c_in_ibd_stores_the_finished_groups(tmp_path, monkeypatch, capsys):
    from test_method_runs import planted_encoder

    import eatlas.encoders
    import eatlas.methods.ibd as ibd_method
    enc, _ = planted_encoder("AF")
    monkeypatch.setattr(eatlas.encoders, "load_encoder", lambda *a, **k: enc)
    _stop_at_second(monkeypatch, ibd_method, "_one_group")
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "ibd", "--ibd-groups", "AF", "MF", "EM"]) == 130
    out = " ".join(capsys.readouterr().out.split())
    assert "interrupted (Ctrl-C) after 1 group(s): AF stored" in out and "--ibd-groups MF EM" in out, out
    con = duckdb.connect(str(db), read_only=True)
    assert {r[0] for r in con.execute("SELECT target FROM ibd_results").fetchall()} == {"AF"}
    con.close()
    s = _settings(db)
    assert s["interrupted"] is True and s["not_finished"] == ["MF", "EM"] and s["eibd_rule"] == "any"


def test_ctrl_c_in_validity_stores_the_finished_criteria(tmp_path, monkeypatch, capsys):
    import eatlas.stats.validity as stats_validity
    from eatlas.registry import load_registry

    first, second = sorted(load_registry(None).criteria)[:2]
    _stop_at_second(monkeypatch, stats_validity, "correlate")
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "validity", "--model", "glove-6b-50d", "--criteria", first,
                 second, "--n-boot", "200"]) == 130
    out = " ".join(capsys.readouterr().out.split())
    assert f"interrupted (Ctrl-C) after 1 criterion(s): {first} stored" in out and f"--criteria {second}" in out
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT criterion_id FROM validity_results").fetchall() == [(first,)]
    assert {r[0] for r in con.execute("SELECT DISTINCT criterion_id FROM validity_items").fetchall()} == {first}
    con.close()
    s = _settings(db)
    assert s["interrupted"] is True and s["not_finished"] == [second] and list(s["criteria"]) == [first]
