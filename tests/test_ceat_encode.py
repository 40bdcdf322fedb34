"""CEAT's contexts encoded in a Ray Data actor pool and stored as parquet with their vectors (issue 14)."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from eatlas.cli import main

FLOWERS, INSECTS = ["aster", "clover", "rose", "tulip"], ["ant", "flea", "moth", "wasp"]
GOOD, BAD = ["love", "peace", "cheer", "joy"], ["grief", "agony", "filth", "hatred"]


def lines(n=150, seed=1):
    rng = np.random.default_rng(seed)
    return [f"the {rng.choice(FLOWERS)} brought {rng.choice(GOOD)} and a {rng.choice(INSECTS)} brought "
            f"{rng.choice(BAD)} {i}" for i in range(n)]


def ceat(tiny_bert, db, corpus, *extra):
    return main(["--db", str(db), "run", "--method", "ceat", "--model", str(tiny_bert), "--tests", "weat1",
                 "--corpus", *map(str, corpus), "--n-draws", "200", "--max-contexts", "6", "--quiet", *map(str, extra)])


def stored(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        ces = con.execute("SELECT ces, se, p_two_tailed FROM ceat_results").fetchone()
        n = con.execute("SELECT sum(n_contexts)::INT FROM ceat_contexts").fetchone()[0]
        run_id, path = con.execute("SELECT run_id, json_extract_string(settings, '$.contexts_parquet') FROM runs"
                                   ).fetchone()
        return ces, n, run_id, path
    finally:
        con.close()


def test_ceat_encoded_on_ray_gives_the_local_ces_and_parquet_holds_every_context_with_its_vector(
        tiny_bert, tmp_path, ray_local, monkeypatch):
    import eatlas.distributed.ceat_encode as ce
    from eatlas.encoders import load_encoder

    monkeypatch.setattr(ce, "ROWS_PER_BATCH", 16)      # several blocks and actors: the order must come back
    text = lines()
    whole = tmp_path / "corpus.txt"
    whole.write_text("\n".join(text), encoding="utf-8")
    shards = [tmp_path / "s1.txt", tmp_path / "s2.jsonl"]
    shards[0].write_text("\n".join(text[:70]), encoding="utf-8")
    shards[1].write_text("".join(json.dumps({"text": ln}) + "\n" for ln in text[70:]), encoding="utf-8")
    assert ceat(tiny_bert, tmp_path / "local.duckdb", [whole]) == 0
    assert ceat(tiny_bert, tmp_path / "ray.duckdb", shards, "--engine", "ray", "--contexts-out",
                tmp_path / "ctx") == 0
    (l_ces, l_n, l_run, l_path), (r_ces, r_n, r_run, r_path) = stored(tmp_path / "local.duckdb"), \
        stored(tmp_path / "ray.duckdb")
    assert l_ces[0] is not None and np.allclose(l_ces, r_ces, rtol=0, atol=1e-6)
    assert l_path == str(tmp_path / "ceat-contexts" / l_run[:8] / "contexts.parquet")    # default: beside the db
    assert r_path == str(tmp_path / "ctx" / "contexts.parquet")
    local, dist = pq.read_table(l_path).to_pandas(), pq.read_table(r_path).to_pandas()
    # one row per context CEAT drew from, each with its vector
    assert len(local) == l_n == len(dist) == r_n > 40
    assert set(dist["run_id"]) == {r_run} and dist["vector"].map(len).eq(32).all()
    assert not dist.duplicated(["stimulus", "case_sensitive", "rank"]).any()
    assert set(dist.columns) >= {"stimulus", "case_sensitive", "line_hash", "text", "start", "end", "vector"}
    assert (dist.apply(lambda r: r["text"][r["start"]:r["end"]], axis=1) == dist["stimulus"]).all()
    key = ["stimulus", "case_sensitive", "rank"]
    both = local.merge(dist, on=key, suffixes=("_l", "_r"))
    assert len(both) == len(local) and (both["text_l"] == both["text_r"]).all()
    assert np.allclose(np.stack(both["vector_l"]), np.stack(both["vector_r"]), atol=1e-5)
    # each vector is that context's own: the span encoded in its line
    enc = load_encoder(str(tiny_bert))
    some = dist.sample(8, random_state=0)
    again = enc.encode_spans(list(some["text"]), list(zip(some["start"], some["end"]))).vectors
    assert np.allclose(again, np.stack(some["vector"]), atol=1e-5)


def test_run_ceat_with_vectors_encoded_beforehand_gives_the_ces_of_encoding_inside(tiny_bert, tmp_path):
    import pandas as pd

    from eatlas.distributed.ceat_encode import sample_and_encode
    from eatlas.encoders import load_encoder
    from eatlas.methods.ceat import run_ceat
    from eatlas.registry import load_registry

    reg, enc, text = load_registry(), load_encoder(str(tiny_bert)), lines(120, seed=4)
    kw = {"max_contexts": 8, "seed": 3}
    inside = run_ceat(enc, reg, ["weat1"], text, n_draws=300, **kw)
    contexts, encoded, table, n_lines = sample_and_encode(enc, reg, ["weat1"], text, **kw)
    before = run_ceat(enc, reg, ["weat1"], None, n_draws=300, contexts=contexts, encoded=encoded, **kw)
    cols = ["ces", "se", "p_two_tailed", "tau2"]
    a = pd.DataFrame(inside["ceat_results"])[cols].to_numpy(float)
    b = pd.DataFrame(before["ceat_results"])[cols].to_numpy(float)
    assert np.isfinite(a).all() and np.allclose(a, b, rtol=0, atol=1e-6)
    assert inside["ceat_contexts"] == before["ceat_contexts"]
    assert n_lines == 120 and table.num_rows == sum(r["n_contexts"] for r in before["ceat_contexts"])


def test_contexts_out_never_replaces_a_file_eatlas_did_not_write(tiny_bert, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines(30)), encoding="utf-8")
    mine = tmp_path / "out" / "contexts.parquet"
    mine.parent.mkdir()
    mine.write_bytes(b"my own file")
    db = tmp_path / "r.duckdb"
    assert ceat(tiny_bert, db, [corpus], "--contexts-out", mine.parent) == 2
    err = capsys.readouterr().err
    assert "will not write the CEAT contexts there" in err and err.count("\n") == 1
    assert mine.read_bytes() == b"my own file" and not db.exists()


def test_a_run_that_can_be_neither_stored_nor_kept_leaves_no_contexts_behind(tiny_bert, tmp_path, monkeypatch,
                                                                             capsys):
    import eatlas.store.db
    from eatlas.errors import EatlasError

    def refuse(*a, **k):        # the results file and the eatlas-unsaved/ copy alike (issue 24)
        raise EatlasError("database is in use", file="r.duckdb")
    monkeypatch.setattr(eatlas.store.db, "write_run", refuse)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines(30)), encoding="utf-8")
    out = tmp_path / "ctx"
    assert ceat(tiny_bert, tmp_path / "r.duckdb", [corpus], "--contexts-out", out) == 2
    err = capsys.readouterr().err
    assert "database is in use" in err and "could not be kept either" in err
    assert not (out / "contexts.parquet").exists()
    assert json.loads((out / ".eatlas-manifest.json").read_text())["files"] == {}


def test_a_run_kept_in_eatlas_unsaved_keeps_its_contexts(tiny_bert, tmp_path, monkeypatch, capsys):
    """Issue 24: a run the database does not take is kept beside it, and its contexts.parquet with it."""
    import eatlas.store.db
    from eatlas.errors import EatlasError

    db, real = tmp_path / "r.duckdb", eatlas.store.db.write_run

    def refuse_the_database(path, *a, **k):
        if Path(path) == db:
            raise EatlasError("database is in use by another process", file=str(path))
        return real(path, *a, **k)
    monkeypatch.setattr(eatlas.store.db, "write_run", refuse_the_database)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines(30)), encoding="utf-8")
    out = tmp_path / "ctx"
    assert ceat(tiny_bert, db, [corpus], "--contexts-out", out) == 2
    err = capsys.readouterr().err
    (kept,) = (tmp_path / "eatlas-unsaved").iterdir()
    assert f"kept in {kept}" in err and f"eatlas results import {kept} --db {db}" in err
    assert (out / "contexts.parquet").exists() and not db.exists()
    monkeypatch.setattr(eatlas.store.db, "write_run", real)
    assert main(["results", "import", str(kept), "--db", str(db)]) == 0
    con = duckdb.connect(str(db), read_only=True)
    path = con.execute("SELECT json_extract_string(settings, '$.contexts_parquet') FROM runs").fetchone()[0]
    assert Path(path) == out / "contexts.parquet" and con.execute("SELECT count(*) FROM ceat_results").fetchone()[0]


def test_a_model_the_ray_workers_cannot_load_is_one_clear_error(tmp_path, ray_local):
    from eatlas.distributed.ceat_encode import EncoderSpec, encode_contexts
    from eatlas.errors import EatlasError

    class Here:                     # the driver's encoder: only its fingerprint is read
        fingerprint = "sha256:0"
    gone = tmp_path / "model-not-on-the-workers"
    with pytest.raises(EatlasError) as e:
        encode_contexts({("rose", True): [(1, "a rose here", 2, 6)]}, Here(), engine="ray", spec=EncoderSpec(str(gone)))
    msg = e.value.render()
    assert "encoding the contexts on Ray failed on " in msg and f"unknown model '{gone}'" in msg
    assert "\n" not in msg and "\x1b" not in msg and "every Ray worker must be able to load" in msg
