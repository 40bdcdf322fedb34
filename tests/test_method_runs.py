"""CEAT and IBD runs end to end: registry -> encoder -> method -> tables written with the run."""
import duckdb
import numpy as np
import pytest

from eatlas.encoders import StaticEncoder
from eatlas.methods.ibd import ibd_inputs
from eatlas.registry import load_registry
from eatlas.run.runner import RunConfig, evaluate
from eatlas.store import write_run


def planted_encoder(target="AF", dim=40, seed=0):
    """Static vectors where the target group's names and its intersectional words share a direction."""
    reg = load_registry()
    groups, lists = ibd_inputs(reg)
    rng = np.random.default_rng(seed)
    words = sorted({w for ws in lists.values() for w in ws} | {n for ns in groups.values() for n in ns})
    vec = {w: rng.normal(size=dim) for w in words}
    planted = np.zeros(dim)
    planted[0] = 6.0
    for n in groups[target]:
        vec[n] = vec[n] + planted
    positives = set(lists[f"{target.lower()}_intersectional"])
    for w in positives:
        vec[w] = vec[w] + planted
    return StaticEncoder(list(vec), np.vstack(list(vec.values())), model_id="planted", family="test",
                         fingerprint="planted:1", lowercase=False), positives


def test_ibd_detects_planted_words_and_is_stored(tmp_path):
    enc, positives = planted_encoder("AF")
    reg = load_registry()
    out = evaluate(RunConfig(method="ibd", options={"ibd_groups": ["AF"]}), encoder=enc)
    run, tables = out.run, out.tables
    res = tables["ibd_results"].set_index("method")
    assert res.loc["IBD", "tpr"] >= 0.9 and res.loc["IBD", "fpr"] <= 0.1
    detected = set(res.loc["IBD", "detected"].split(","))
    assert len(detected & positives) >= 0.9 * len(positives)
    # The paper's printed numbers come from the registry's published results, not from code.
    assert res.loc["IBD", "paper_accuracy"] == pytest.approx(0.816)          # prose: IBD, AF
    assert res.loc["EIBD", "paper_accuracy"] == pytest.approx(0.847)
    assert res.loc["IBD", "paper_chance"] == pytest.approx(0.143)            # appendix: AF intersectional
    assert res.loc["EIBD", "paper_chance"] == pytest.approx(0.092)           # appendix: AF emergent
    assert res.loc["IBD", "chance"] == pytest.approx(14 / 98, abs=0.0005)    # ours agrees with the printed rate
    db = tmp_path / "r.duckdb"
    write_run(db, run, [], reg, extra_tables=tables)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM ibd_results WHERE run_id = ?", [run["run_id"]]).fetchone()[0] == 2
    assert con.execute("SELECT method FROM runs").fetchone()[0] == "ibd"
    n_words = con.execute("SELECT count(DISTINCT word) FROM ibd_words").fetchone()[0]
    assert n_words == len({w for ws in ibd_inputs(reg)[1].values() for w in ws})


def test_ceat_run_on_a_corpus_reports_missing_stimuli(tiny_bert, tmp_path):
    from eatlas.encoders import load_encoder
    reg = load_registry()
    t = reg.tests["weat1"]
    flowers = [i.text for i in reg.get_set(t.sets["x"]).items]
    insects = [i.text for i in reg.get_set(t.sets["y"]).items]
    good = [i.text for i in reg.get_set(t.sets["a"]).items]
    bad = [i.text for i in reg.get_set(t.sets["b"]).items]
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(150):
        lines.append(f"the {rng.choice(flowers[:-1])} was {rng.choice(good)} today")
        lines.append(f"a {rng.choice(insects)} brought {rng.choice(bad)} again")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines))
    enc = load_encoder(str(tiny_bert))
    cfg = RunConfig(method="ceat", tests=["weat1"], options={"corpus": [str(corpus)], "n_draws": 200,
                                                             "max_contexts": 20})
    out = evaluate(cfg, encoder=enc)
    run, tables = out.run, out.tables
    assert run["method"] == "ceat" and run["levels"] == ["c-word"] and run["n_samples"] == 200
    res = tables["ceat_results"].iloc[0]
    assert res["n_draws"] == 200 and res["sampling"] == "paper" and res["test_id"] == "weat1"
    assert flowers[-1] in res["missing"]            # never in the corpus: reported, not silently skipped
    ctx = tables["ceat_contexts"]
    assert int(ctx.loc[ctx.stimulus == flowers[-1], "n_contexts"].iloc[0]) == 0
    assert ctx["n_contexts"].max() <= 20
    assert len(tables["ceat_draws"]) == 200
    again = evaluate(cfg, encoder=enc).tables
    assert again["ceat_results"].iloc[0]["ces"] == res["ces"]   # seeded
