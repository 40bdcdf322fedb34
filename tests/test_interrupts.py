"""Ctrl-C in a method's own loop keeps the finished work: CEAT (per test) and IBD/EIBD (per group) store the units
that finished in one write, record the run as interrupted, say what was stored and how to resume, and exit 130;
a Ctrl-C before any unit finished stores nothing. (The WEAT-style runner and the LLM IAT: tests/test_bad_input.py.)"""
from __future__ import annotations

import json

import duckdb
import pytest

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


@pytest.mark.parametrize("method", ["mleat", "sceat"])
def test_methods_on_the_run_loop_keep_the_finished_test(method, mini, tmp_path, capsys, monkeypatch):
    """ML-EAT and SC-EAT compute in the runner's loop (inputs "matrices"): its Ctrl-C handling is theirs."""
    import eatlas.run.runner as runner
    from tests.conftest import make_set, make_test
    from tests.test_data_loss import vectors

    mini.add_set(make_set("good3", [{"text": t, "kind": "adjective"} for t in ("happy", "gentle", "lucky")]))
    mini.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "good3@1.0.0", "bad@1.0.0"))
    mini.sync()
    model = vectors(tmp_path / "v.txt", ["rose", "tulip", "daisy", "lily", "ant", "moth", "wasp", "flea", "happy",
                                         "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"])
    db = tmp_path / "r.duckdb"
    args = ["--registry", str(mini.root), "--db", str(db), "run", "--method", method, "--model", str(model),
            "--levels", "word", "--n-samples", "200", "--no-cache"]
    _stop_at_second(monkeypatch, runner, "_one")
    assert main([*args, "--tests", "t1", "t2"]) == 130
    out = " ".join(capsys.readouterr().out.split())
    assert "interrupted (Ctrl-C) after 1 of 2 test/level pair(s)" in out and "--tests t2" in out
    s = _settings(db)
    assert s["interrupted"] is True and s["not_finished"] == ["t2 [word]"]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT DISTINCT test_id FROM results").fetchall() == [("t1",)]
    con.close()
    monkeypatch.undo()
    assert main([*args, "--tests", "t2"]) == 0


def test_ctrl_c_in_a_sweep_keeps_the_stored_models_and_stops(tmp_path, capsys, monkeypatch):
    """A Ctrl-C inside the second model's tests: the first model's run and the second's finished test are
    stored, the sweep stops there (exit 130; before, it went on to the next model) and says to resume with
    --resume, which completes it."""
    import eatlas.run.runner as runner
    from tests.static_models import write_static_model

    models = [str(write_static_model(tmp_path / f"m{seed}.txt", seed)) for seed in (1, 2)]
    db = tmp_path / "s.duckdb"
    args = ["sweep", "--models", *models, "--tests", "weat1", "weat2", "--levels", "word", "--n-samples", "300",
            "--no-cache", "--db", str(db)]
    real, calls = runner._one, []

    def one(*a, **kw):
        calls.append(1)
        if len(calls) == 4:                 # model 2's second test
            raise KeyboardInterrupt
        return real(*a, **kw)
    monkeypatch.setattr(runner, "_one", one)
    assert main(args) == 130
    cap = capsys.readouterr()
    out = " ".join((cap.out + cap.err).split())
    assert "interrupted (Ctrl-C) in" in out and "resume with the same command and --resume" in out
    con = duckdb.connect(str(db), read_only=True)
    assert sorted(con.execute("SELECT model, test_id FROM results").fetchall()) == [
        (models[0], "weat1"), (models[0], "weat2"), (models[1], "weat1")]
    con.close()
    monkeypatch.undo()
    assert main([*args, "--resume"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(f"SELECT count(*) FROM results WHERE model = '{models[1]}' AND test_id = 'weat2'"
                       ).fetchone() == (1,)
    con.close()
