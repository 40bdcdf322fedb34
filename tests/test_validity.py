"""Validity criteria (registry data) and the validity method: values traceable to their source files, the
correlation and its interval, items a model cannot encode listed, and a real GloVe run of Caliskan et al.'s
occupation criterion."""
import csv
import dataclasses

import duckdb
import numpy as np
import pytest
import yaml

from eatlas.encoders import StaticEncoder
from eatlas.errors import EatlasError
from eatlas.registry import load_registry
from eatlas.registry.criteria import check_criterion, derive, read_data
from eatlas.run.runner import RunConfig, evaluate
from eatlas.stats.validity import correlate

OCC = "caliskan2017_wefat_occupations"


@pytest.fixture(scope="module")
def reg():
    return load_registry()


# ------------------------------------------------------------------------------------------ criteria as data
def test_criteria_are_indexed_and_valid(reg):
    assert {OCC, "caliskan2017_wefat_names", "garg2018_occupations_women_2015",
            "zhao2018_winobias_occupations_bls2017"} <= set(reg.criteria)
    for c in reg.criteria.values():
        assert check_criterion(reg, c) == [], c.id
    occ = reg.criteria[OCC]
    assert len(occ.items) == 50 and occ.a == "female_terms_weat7@1.0.0" and occ.b == "male_terms_weat7@1.0.0"
    assert occ.criterion["unit"] == "percent" and occ.criterion["year"] == 2015
    assert len(reg.criteria["caliskan2017_wefat_names"].items) == 50


def test_every_value_is_derived_again_from_its_source_file(reg):
    """The occupation values are the authors' weighted means of the BLS rows labelled with the word, read here from
    the copied file with the csv module alone."""
    c = reg.criteria[OCC]
    path = reg.root / c.criterion["data_file"]
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for item in c.items:
        mine = [n for n, r in enumerate(rows, 1) if item.text in {r[f"label{k}"] for k in range(1, 6)}]
        assert item.rows == mine
        w = np.array([float(rows[n - 1]["TotalEmployed"]) for n in mine])
        v = np.array([float(rows[n - 1]["Women"]) for n in mine])
        assert item.value == pytest.approx(float((w * v).sum() / w.sum()), rel=1e-12)
    accountant = next(i for i in c.items if i.text == "accountant")     # one category: its printed percentage
    assert len(accountant.rows) == 1 and accountant.value == float(rows[accountant.rows[0] - 1]["Women"])
    # the data file is accounted for by its folder's provenance (bytes and where they were copied from)
    prov = yaml.safe_load((path.parent / "provenance.yaml").read_text(encoding="utf-8"))
    entry = next(f for f in prov["files"] if f["file"] == path.name)
    assert entry["authors_file"].startswith("iPieter/biased-rulers ") and len(entry["authors_commit"]) == 40


def test_a_typed_or_mislisted_value_is_caught(reg):
    c = reg.criteria[OCC]
    items = list(c.items)
    items[1] = dataclasses.replace(items[1], value=items[1].value + 0.1)             # typed, not derived
    items[2] = dataclasses.replace(items[2], rows=items[2].rows[:-1])               # a row left out
    found = check_criterion(reg, dataclasses.replace(c, items=items))
    fields = {p.field for p in found}
    assert "items[1].value" in fields and "items[2].rows" in fields and "items[2].value" in fields
    assert any("not the weighted_mean of its rows" in p.message for p in found)


def test_names_criterion_reads_the_census_rows(reg):
    c = reg.criteria["caliskan2017_wefat_names"]
    derived = derive(c, read_data(reg, c))
    assert all(not probs and value == pytest.approx(c.items[i].value) for i, probs, value, _ in derived)
    assert c.expected_sign == "negative"        # the score grows towards men, s(w, A, B) towards women


def test_criterion_file_errors_are_worded():
    from eatlas.registry.models import check

    doc = yaml.safe_load(open(load_registry().root / "registry/caliskan2017/criteria/caliskan2017_wefat_names.yaml"))
    doc["criterion"]["aggregate"] = "median"
    doc["items"][0]["value"] = "high"
    found = {str(p.field): p.message for p in check("criterion", doc, "c.yaml", "criterion x")}
    assert "is not one of" in found["criterion.aggregate"]
    assert found["items[0].value"].startswith("expected a number")


# ------------------------------------------------------------------------------------------ the statistics
def test_correlation_matches_numpy_and_its_interval_holds_it():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.7 * x + rng.normal(size=40)
    c = correlate(x, y, n_boot=2000, seed=1)
    assert c.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert c.pearson_ci_low < c.pearson_r < c.pearson_ci_high
    assert c.spearman_ci_low < c.spearman_rho < c.spearman_ci_high
    assert c == correlate(x, y, n_boot=2000, seed=1)            # the seed fixes the bootstrap
    with pytest.raises(ValueError, match="constant"):
        correlate(x, np.ones(40))
    with pytest.raises(ValueError, match="at least 3"):
        correlate([1.0, 2.0], [2.0, 1.0])


# ------------------------------------------------------------------------------------------ the method
def _encoder(reg, *, leave_out=()):
    """Vectors planted so that an occupation's association follows its percentage of women."""
    c = reg.criteria[OCC]
    female = [i.text for i in reg.get_set(c.a).items]
    male = [i.text for i in reg.get_set(c.b).items]
    rng = np.random.default_rng(0)
    axis = rng.normal(size=16)
    vec = {w: rng.normal(size=16) * 0.3 + axis for w in female}
    vec.update({w: rng.normal(size=16) * 0.3 - axis for w in male})
    for it in c.items:
        if it.text not in leave_out:
            vec[it.text] = rng.normal(size=16) + axis * (it.value - 50) / 25
    return StaticEncoder(list(vec), np.vstack(list(vec.values())), model_id="planted", family="test",
                         fingerprint="planted:1", lowercase=False)


def test_items_not_encodable_are_listed_not_dropped_silently(reg, tmp_path):
    from eatlas.store import write_run

    enc = _encoder(reg, leave_out=("janitor", "paralegal"))
    out = evaluate(RunConfig(method="validity", options={"criteria": [OCC]}, n_boot=500), encoder=enc)
    res = out.tables["validity_results"].to_dict("records")
    assert len(res) == 1
    r = res[0]
    assert (r["n_items"], r["n_used"], r["n_dropped"]) == (50, 48, 2)
    assert set(r["dropped"].split(", ")) == {"janitor", "paralegal"}
    assert r["status"] == "ok" and r["pearson_r"] > 0.5 and r["pearson_ci_low"] > 0
    items = {i["item"]: i for i in out.tables["validity_items"].to_dict("records")}
    assert len(items) == 50 and not items["janitor"]["used"] and "vocabulary" in items["janitor"]["reason"]
    assert items["nurse"]["criterion_value"] == reg.criteria[OCC].items[22].value
    db = tmp_path / "r.duckdb"
    write_run(db, out.run, [], reg, extra_tables=out.tables)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM validity_items WHERE NOT used").fetchone()[0] == 2
    assert out.run["settings"]["criteria"][OCC]["sha256"] == reg.criteria[OCC].hash()


def test_an_item_partly_outside_the_vocabulary_is_dropped_with_its_reason(reg):
    """'nurse zzqxqq' on a static model: not scored as 'nurse' (the mean of its known words), but dropped and
    named, as the WEAT drops such a stimulus; an attribute word partly outside is left out of A too."""
    from eatlas.methods.validity import run_validity

    c = reg.criteria[OCC]
    items = [dataclasses.replace(i, text="nurse zzqxqq") if i.text == "nurse" else i for i in c.items]
    crit = dataclasses.replace(c, items=items)

    class Reg:
        criteria = {OCC: crit}
        get_set = staticmethod(reg.get_set)

    enc = _encoder(reg)
    res, rows, _ = run_validity(enc, Reg(), n_boot=200)
    item = {r.item: r for r in rows}["nurse zzqxqq"]
    assert not item.used and item.association is None and "partly outside" in item.reason
    assert (res[0].n_used, res[0].n_dropped) == (49, 1) and res[0].dropped == "nurse zzqxqq"
    full, _, _ = run_validity(enc, reg, criteria=[OCC], n_boot=200)
    assert full[0].n_used == 50


def test_unknown_criterion_and_tests_are_refused(reg):
    enc = _encoder(reg)
    with pytest.raises(EatlasError, match="unknown criterion"):
        evaluate(RunConfig(method="validity", options={"criteria": ["caliskan2017_wefat_occupation"]}), encoder=enc)
    with pytest.raises(EatlasError, match="criteria, not tests"):
        evaluate(RunConfig(method="validity", tests=["weat1"]), encoder=enc)


def test_glove_occupations_correlate_with_the_share_of_women(tmp_path, capsys):
    """The held-out check's run: GloVe 6B 50d on Caliskan et al.'s occupation criterion."""
    from eatlas.cli import main

    db = tmp_path / "r.duckdb"
    assert main(["--db", str(db), "run", "--method", "validity", "--model", "glove-6b-50d", "--criteria", OCC,
                 "--n-boot", "2000"]) == 0
    printed = capsys.readouterr().out
    assert OCC in printed and "50 / 50" in printed
    con = duckdb.connect(str(db), read_only=True)
    n_used, r, lo, hi, p = con.execute("SELECT n_used, pearson_r, pearson_ci_low, pearson_ci_high, pearson_p "
                                       "FROM validity_results WHERE criterion_id = ?", [OCC]).fetchone()
    assert n_used >= 40 and r > 0 and 0 < lo < r < hi and p < 0.001
    rows = con.execute("SELECT item, criterion_value, data_rows FROM validity_items").fetchall()
    assert len(rows) == 50 and all(dr for _, _, dr in rows)
    # Caliskan et al.'s printed r (Figure 1) is in published_results and beside ours (same family: GloVe 840B 300d)
    assert con.execute("SELECT value, note FROM published_results WHERE paper = 'caliskan2017' AND test_id = ? AND "
                       "statistic = 'pearson_r'", [OCC]).fetchone()[0] == "0.90"
    pair = con.execute("SELECT published_value, our_value, match FROM validity_reproduction_loose "
                       "WHERE criterion_id = ?", [OCC]).fetchall()
    con.close()
    assert pair == [(0.9, pytest.approx(r), "same_family")]
    # the report: the paper's r with its printed bound beside ours, the criterion the run recorded, and no claim
    # that the run "recorded no inputs"
    from eatlas.outputs.report import build_report
    html = build_report(db)
    assert "+0.90, P &lt; 10^-18 (caliskan2017, Figure 1, GloVe Common Crawl 840B 300d; same family" in html
    assert "recorded no inputs" not in html and f"{OCC}@1.0.0" in html
    assert "toward female terms weat7 (+)" in html         # the scatter's y axis says which way is female


# ------------------------------------------------------------------------------------------ a lab's own criterion
def _lab_criterion(mini, value_of_rose=80.0):
    import hashlib

    data = mini.root / "registry" / "testpaper" / "data"
    data.mkdir(parents=True)
    text = "word,share,year\nrose,80,2020\ntulip,60,2020\nrose,10,1990\ndaisy,30,2020\nlily,20,2020\n"
    (data / "shares.csv").write_text(text, encoding="utf-8")
    (data / "provenance.yaml").write_text(yaml.safe_dump({
        "source": "testpaper", "license": "CC0-1.0", "files": [
            {"file": "shares.csv", "sha256": hashlib.sha256(text.encode()).hexdigest()}]}), encoding="utf-8")
    doc = {"id": "flower_shares", "version": "1.0.0", "title": "Shares", "concept": "Flowers", "license": "CC0-1.0",
           "source": {"paper": "testpaper"},
           "criterion": {"measure": "share", "unit": "percent", "meaning": "0 to 100", "agency": "a lab",
                         "year": 2020, "table": "t", "data_file": "registry/testpaper/data/shares.csv",
                         "value_column": "share", "key_columns": ["word"], "where": {"year": "2020"},
                         "aggregate": "single", "derivation": "the row", "reliability": "made up for a test"},
           "a": "good@1.0.0", "b": "bad@1.0.0", "expected_sign": "positive",
           "changelog": [{"version": "1.0.0", "date": "2026-11-27", "change": "first"}],
           "items": [{"text": "rose", "kind": "noun", "value": value_of_rose, "rows": [1]},
                     {"text": "tulip", "kind": "noun", "value": 60, "rows": [2]},
                     {"text": "daisy", "kind": "noun", "value": 30, "rows": [4]},
                     {"text": "lily", "kind": "noun", "value": 20, "rows": [5]}]}
    path = mini.root / "registry" / "testpaper" / "criteria" / "flower_shares.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return mini.sync()


def test_a_lab_criterion_is_indexed_validated_and_published(mini, tmp_path):
    from eatlas.outputs.publish import publish
    from eatlas.registry.catalog import unindexed
    from eatlas.registry.schemas import check_registry

    _lab_criterion(mini)
    reg = mini.load()
    assert [e["id"] for e in reg.catalog["criteria"]] == ["flower_shares"]
    assert check_registry(reg) == [] and unindexed(reg.root, reg.catalog) == []
    out = publish(reg, tmp_path / "pub")
    conf = {c["config_name"]: c for c in out["configs"]}["criterion__flower_shares"]
    assert conf["rows"] == 4 and conf["licence"] == "CC0-1.0"
    import pandas as pd
    df = pd.read_parquet(tmp_path / "pub" / conf["path"])
    assert list(df["item"]) == ["rose", "tulip", "daisy", "lily"] and list(df["rows"]) == ["1", "2", "4", "5"]


def test_a_lab_criterion_whose_value_is_not_its_row_fails_validate(mini):
    from eatlas.registry.schemas import check_registry

    _lab_criterion(mini, value_of_rose=10.0)        # the 1990 row's value, under a 2020 row number
    found = check_registry(mini.load())
    assert [(p.field, p.obj) for p in found] == [("items[0].value", "criterion flower_shares")]


def test_a_run_refuses_a_criterion_whose_value_is_not_its_row(mini):
    from eatlas.errors import ValidationFailed

    _lab_criterion(mini, value_of_rose=10.0)
    words = ["rose", "tulip", "daisy", "lily", "happy", "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"]
    enc = StaticEncoder(words, np.random.default_rng(0).normal(size=(len(words), 8)), model_id="toy", family="test",
                        fingerprint="toy", lowercase=False)
    with pytest.raises(ValidationFailed, match="is not the value of its row"):
        evaluate(RunConfig(method="validity"), registry=mini.root, encoder=enc)


def test_a_printed_correlation_stands_beside_a_run_of_its_model_family(mini, tmp_path):
    """A published row naming a criterion (statistic pearson_r) pairs with a validity run in view
    validity_reproduction_loose (the family matches); validity_reproduction keeps the same model only."""
    from eatlas.store import write_run

    _lab_criterion(mini)
    pub = mini.root / "registry" / "testpaper" / "published" / "validity.csv"
    pub.parent.mkdir(parents=True)
    pub.write_text("paper,table_id,row_label,column_label,statistic,value,significance,missing,test_id,level,model,"
                   "model_family,note\ntestpaper,Figure 1,flower_shares,r,pearson_r,0.9,,false,flower_shares,word,"
                   "GloVe,glove,printed in a test\n", encoding="utf-8")
    mini.sync()
    reg = mini.load()
    from eatlas.registry.schemas import check_registry
    assert check_registry(reg) == []
    words = ["rose", "tulip", "daisy", "lily", "happy", "gentle", "lucky", "honest", "ugly", "rotten", "sick", "evil"]
    enc = StaticEncoder(words, np.random.default_rng(0).normal(size=(len(words), 8)), model_id="toy", family="glove",
                        fingerprint="toy", lowercase=False)
    out = evaluate(RunConfig(method="validity", n_boot=200), registry=mini.root, encoder=enc)
    db = tmp_path / "r.duckdb"
    write_run(db, out.run, [], reg, extra_tables=out.tables)
    con = duckdb.connect(str(db), read_only=True)
    loose = con.execute("SELECT criterion_id, statistic, published_value, our_value, match, paper, table_id "
                        "FROM validity_reproduction_loose").fetchall()
    r = out.tables["validity_results"].to_dict("records")[0]["pearson_r"]
    assert loose == [("flower_shares", "pearson_r", 0.9, pytest.approx(r), "same_family", "testpaper", "Figure 1")]
    assert con.execute("SELECT count(*) FROM validity_reproduction").fetchone()[0] == 0


def test_the_criterion_files_follow_their_json_schema(reg):
    """An editor's check (schemas/criterion.schema.json) accepts every shipped criterion and refuses a typed
    string value, as the declared model does."""
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads((reg.root / "schemas" / "criterion.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    v = Draft202012Validator(schema)
    for c in reg.criteria.values():
        doc = yaml.safe_load((reg.root / c.file).read_text(encoding="utf-8"))
        assert not list(v.iter_errors(doc)), c.id
    doc["items"][0]["value"] = "high"
    assert not v.is_valid(doc)
