"""Runs store the content hash of every test, set and template they read (table run_inputs)."""
import duckdb
from conftest import make_set
from test_progress import toy_encoder

from eatlas.registry.base import _DEFAULT
from eatlas.run.runner import RunConfig, run


def test_two_results_under_one_version_can_be_told_apart(tmp_path, mini):
    db = tmp_path / "r.duckdb"
    cfg = RunConfig(tests=["t1"], levels=("word",), n_samples=200, use_cache=False)
    run(cfg, db=db, registry=mini.root, encoder=toy_encoder())
    # The set is edited without a version bump: same version, other stimuli.
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "happy"]))   # X shares an item with A: a warning
    mini.sync()
    _DEFAULT.clear()      # a new process would read the registry afresh
    run(cfg, db=db, registry=mini.root, encoder=toy_encoder())
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT i.run_id, i.version, i.sha256, r.effect_size FROM run_inputs i JOIN results r "
                       "USING (run_id) WHERE i.kind = 'set' AND i.id = 'roses' ORDER BY r.effect_size").fetchall()
    assert len(rows) == 2 and rows[0][1] == rows[1][1] == "1.0.0"
    assert rows[0][2] != rows[1][2] and rows[0][3] != rows[1][3]
    reg = mini.load()
    kinds = con.execute("SELECT kind, id, sha256 FROM run_inputs WHERE run_id = ? ORDER BY kind, id",
                        [rows[0][0] if rows[0][2] == reg.sets["roses"].hash() else rows[1][0]]).fetchall()
    assert [(k, i) for k, i, _ in kinds] == [("set", "bad"), ("set", "bugs"), ("set", "good"), ("set", "roses"),
                                            ("template", "may2019_bleached"), ("test", "t1")]
    assert dict(((k, i), h) for k, i, h in kinds)[("test", "t1")] == reg.tests["t1"].hash()
