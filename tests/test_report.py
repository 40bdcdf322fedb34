"""The HTML report: sections and figures from a small database, checked in headless Chromium."""
from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from eatlas.cli import main
from eatlas.errors import EatlasError
from eatlas.outputs.report import SECTIONS, build_report
from eatlas.registry import load_registry
from eatlas.store import write_run

FIGURES = ("fig-matrix", "fig-forest", "fig-eat-map", "fig-ceat", "fig-reproduction")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ARTIFACTS = Path(os.environ.get("EATLAS_ARTIFACTS") or Path(__file__).parent / "artifacts")

# (test, level) -> (effect size, p) for the two models; weat1 word/sent and weat3 word have published
# counterparts for the cbow-glove family (May et al. Table 4), so the scatter has points.
CELLS = {("weat1", "word"): (1.50, 1e-6), ("weat1", "sent"): (0.30, 0.5), ("weat3", "word"): (-1.10, 2e-3),
         ("weat+occ", "word"): (0.75, 1e-5), ("weat+occ", "sent"): (-0.20, 0.04)}


def _run(db, reg, model, family, minute, method="weat", results=(), **tables):
    rid = f"{method}-{model}-{minute:02d}-0000-0000-000000000000"
    t = dt.datetime(2026, 11, 22, 10, minute)
    write_run(db, {"run_id": rid, "method": method, "model": model, "model_fingerprint": "fp",
                   "model_family": family, "seed": 0, "alpha": 0.01, "started_at": t, "finished_at": t,
                   # the glove runs stand for May et al.'s own CBoW model, so the reproduction view pairs them
                   **({"family_source": "loader", "model_name": "GloVe", "model_corpus": "Common Crawl (840B tokens)",
                       "model_dimension": 300} if family == "glove" else {})},
              [{"run_id": rid, "test_id": tid, "test_version": "1.0.0", "level": lv, "model": model, "status": "ok",
                "effect_size": es, "p_value": p, "holm_significant": p < 1e-3, "dropped": {}}
               for (tid, lv), (es, p) in results], reg, extra_tables={k: pd.DataFrame(v).assign(run_id=rid)
                                                                    for k, v in tables.items()})
    return rid


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    reg = load_registry()
    path = tmp_path_factory.mktemp("report") / "eatlas.duckdb"
    _run(path, reg, "glove-6b-50d", "glove", 1, results=[(k, (-v[0], 0.9)) for k, v in CELLS.items()])
    _run(path, reg, "glove-6b-50d", "glove", 2, results=CELLS.items())           # the latest glove run
    _run(path, reg, "tiny-bert", "bert", 3, results=[(k, (v[0] * 0.4, v[1])) for k, v in CELLS.items()])
    _run(path, reg, "tiny-bert", "bert", 4, method="mleat", mleat_results=[
        {"test_id": "weat1", "test_version": "1.0.0", "level": "word", "x_effect_size": 0.9, "x_p_value": 0.001,
         "y_effect_size": -0.7, "y_p_value": 0.004, "pattern": "AB-Divergent"},
        {"test_id": "weat+occ", "test_version": "1.0.0", "level": "word", "x_effect_size": 0.1, "x_p_value": 0.4,
         "y_effect_size": 0.05, "y_p_value": 0.6, "pattern": "Non-Directional"}])
    _run(path, reg, "tiny-bert", "bert", 5, method="ceat",
         ceat_results=[{"test_id": "weat1", "test_version": "1.0.0", "level": "c-word", "status": "ok", "ces": 0.8}],
         ceat_draws=[{"test_id": "weat1", "test_version": "1.0.0", "level": "c-word", "draw": i,
                      "effect_size": 0.8 + (i % 7 - 3) / 10} for i in range(200)])
    return path


class _Dom(HTMLParser):
    """Ids of sections and figures, and how many <svg> each figure holds."""

    def __init__(self):
        super().__init__()
        self.sections, self.svgs, self.open_figures, self.tags = [], {}, [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "figure":
            self.open_figures.append(a.get("id"))
            if a.get("id"):
                self.svgs[a["id"]] = 0
        if tag == "svg":
            for f in filter(None, self.open_figures):
                self.svgs[f] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.open_figures.pop()


def _dom(html: str) -> _Dom:
    d = _Dom()
    d.feed(html)
    return d


def test_every_section_and_figure(db):
    html = build_report(db)
    d = _dom(html)
    assert d.sections == list(SECTIONS)
    assert all(d.svgs.get(f, 0) >= 1 for f in FIGURES), d.svgs
    assert d.svgs["fig-eat-map"] == 2                      # one map per ML-EAT row
    assert not {"script", "link", "img", "iframe"} & d.tags
    assert not re.search(r"""(src|href)=["']?(https?:)?//|url\((?!#)""", html)   # nothing fetched
    # the newest result per model, test and level; '*' = what the run found Holm-significant (one legend)
    assert "weat-glove-6b-50d-02" in html and "weat-glove-6b-50d-01" not in html
    assert "+1.50*<" in html and "+0.75*<" in html and "-1.10<" in html and "-0.44<" in html
    assert "**" not in re.sub(r"<style>.*?</style>", "", html, flags=re.S).replace("**/", "")
    assert "+0.30<" in html and "-0.20<" in html
    assert "Holm-Bonferroni correction over the run's tests" in html and "newest result per model" in html
    assert "Non-Directional" in html and "AB-Divergent" in html and "CES +0.80" in html
    assert "flowers@1.0.0" in html and "sent-bias tests/weat1.jsonl targ1" in html
    # the forest plot marks May et al.'s numbers beside the glove runs (same model) and tiny-bert (same family)
    assert 'id="forest-published-same_model"' in html and 'id="forest-published-same_family"' in html


def _references(html: str) -> str:
    return html[html.index('<section id="references">'):]


def test_references_cite_the_tests_shown(db, tmp_path):
    refs = _references(build_report(db))
    for key in ("caliskan2017", "may2019", "tan2019", "zhao2018", "eatlas"):
        assert f'id="ref-{key}"' in refs, key
    assert refs.index('id="ref-caliskan2017"') < refs.index('id="ref-eatlas"')       # EATlas last
    assert "@article{caliskan2017," in refs and "@software{eatlas," in refs
    assert "weat+occ [word]" in refs and "weat1 [c-word]" in refs                   # which tests draw on it
    # a report of weat2 alone cites none of Tan & Celis's or WinoBias's works
    path = tmp_path / "w.duckdb"
    _run(path, load_registry(), "some-model", "glove", 1, results=[(("weat2", "word"), (0.4, 0.2))])
    refs = _references(build_report(path))
    assert 'id="ref-caliskan2017"' in refs and 'id="ref-tan2019"' not in refs and 'id="ref-zhao2018"' not in refs


def test_sections_say_when_there_is_nothing(tmp_path):
    reg = load_registry()
    path = tmp_path / "e.duckdb"
    _run(path, reg, "some-model", "no-such-family", 1, results=[(("weat2", "word"), (0.4, 0.2))])
    html = build_report(path)
    assert "No ML-EAT run yet" in html and "No CEAT run yet" in html
    assert "no result of the selected runs has a published counterpart" in html.lower()
    assert _dom(html).sections == list(SECTIONS)


def test_one_run(db, tmp_path):
    html = build_report(db, run_id="weat-tiny-bert")        # a unique prefix
    assert "weat-tiny-bert-03" in html and "weat-glove-6b-50d-02" not in html
    assert "+1.50" not in html and "+0.60*<" in html and "-0.44<" in html    # as the run's own Holm found
    assert "No ML-EAT run yet" in html
    with pytest.raises(EatlasError, match="more than one run"):
        build_report(db, run_id="weat-")
    assert main(["--db", str(db), "report", "--run", "nope", str(tmp_path / "r.html")]) == 2


def _listed(html: str) -> dict[str, list[str]]:
    """The refs (id@version) listed under each heading of the provenance section."""
    sec = html[html.index('<section id="provenance">'):html.index('<section id="references">')]
    return {part.split("</h3>")[0]: re.findall(r"<tr><td><code>([^<]+)</code></td>", part)
            for part in sec.split("<h3>")[1:]}


def _used(reg, tests) -> dict[str, set[str]]:
    """The tests, sets and templates that ``tests`` name in ``reg``, as refs."""
    specs = [reg.tests[t] for t in tests]
    return {"Tests": {s.ref for s in specs},
            "Stimulus sets": {reg.get_set(r).ref for s in specs for r in s.sets.values()},
            "Templates": {reg.get_template(e.template).ref for s in specs for e in s.expansions.values()}}


def test_provenance_lists_what_the_runs_used_and_no_other_set(tmp_path):
    """A run of two tests records its inputs (table run_inputs): the report lists exactly their tests, sets and
    templates, with their content hashes, and says how to see the whole registry."""
    from eatlas.run.runner import RunConfig, run
    from tests.static_models import write_static_model

    reg, db = load_registry(), tmp_path / "two.duckdb"
    run(RunConfig(model=str(write_static_model(tmp_path / "m.txt", 1)), tests=["weat1", "weat2"], levels=("word",),
                  n_samples=100, use_cache=False), db=db)
    html = build_report(db)
    listed, want = _listed(html), _used(reg, ["weat1", "weat2"])
    assert {k: sorted(v) for k, v in listed.items() if k != "Sources"} == {k: sorted(v) for k, v in want.items()}
    assert len(listed["Stimulus sets"]) == 6 < len(reg.sets)            # not the whole registry's
    note = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html[html.index('id="provenance"'):]))
    assert f"2 test(s), 6 stimulus set(s) and {len(want['Templates'])} template(s)" in note
    assert f"of the {len(reg.tests)} tests, {len(reg.sets)} sets and {len(reg.templates)} templates" in note
    assert "eatlas show ID" in note and "eatlas publish DIR" in note and "recorded no inputs" not in note
    assert reg.sets["flowers"].hash()[:12] in html
    assert "Sources caliskan2017:" in note and "tan2019:" not in note     # only the papers of what is listed


def test_provenance_of_runs_that_recorded_no_inputs_and_of_a_set_changed_since(db, mini, tmp_path, capsys):
    # the fixture's runs were written without run_inputs (as before that table): their tests' sets as named now
    html = build_report(db)
    assert "recorded no inputs" in html
    shown = _used(load_registry(), ["weat1", "weat3", "weat+occ"])
    assert set(_listed(html)["Stimulus sets"]) == shown["Stimulus sets"]
    # a set edited after the run without a version bump: the run's hash is listed, and the change is named
    from eatlas.registry import base as registry
    from tests.conftest import make_set
    from tests.test_data_loss import cli, vectors

    rdb = tmp_path / "m.duckdb"
    assert cli(capsys, "--registry", mini.root, "--db", rdb, "run", "--model", vectors(tmp_path / "v.txt"),
               "--tests", "t1", "--levels", "word", "--n-samples", "100", "--no-cache", "--quiet")[0] == 0
    before = mini.load().sets["roses"].hash()
    mini.add_set(make_set("roses", ["rose", "tulip", "daisy", "iris"]))
    mini.sync()
    registry._DEFAULT.clear()            # the registry changed since this process loaded it
    html = build_report(rdb, registry=mini.root)
    row = next(r for r in html.split("<tr>") if "<code>roses@1.0.0</code>" in r)
    assert before[:12] in row and "the registry&#39;s roses@1.0.0 has other content now" in row
    assert sorted(_listed(html)["Stimulus sets"]) == ["bad@1.0.0", "bugs@1.0.0", "good@1.0.0", "roses@1.0.0"]


def _browser() -> str | None:
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


def _chromium(exe: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", *extra, page.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _console_problems(stderr: str) -> list[str]:
    """Console messages (the page has no scripts, so any is a problem) and uncaught errors."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


@pytest.mark.skipif(_browser() is None, reason="no chromium on PATH (apt-get install -y chromium; .ci/run does)")
def test_report_in_headless_chromium(db, tmp_path):
    exe = _browser()
    # the console check catches errors in this browser: a page that throws is reported
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>throw new Error('eatlas-probe')</script></body></html>")
    assert any("eatlas-probe" in ln for ln in _console_problems(_chromium(exe, bad, tmp_path / "p0",
                                                                            "--dump-dom").stderr))

    page = tmp_path / "report.html"
    assert main(["--db", str(db), "report", str(page)]) == 0
    shot = tmp_path / "report.png"
    run = _chromium(exe, page, tmp_path / "p1", f"--screenshot={shot}", "--window-size=1400,2000",
                    "--hide-scrollbars")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)       # kept for a person to look at
    shutil.copy(shot, ARTIFACTS / "report.png")
    shutil.copy(page, ARTIFACTS / "report.html")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1400, 2000)
    assert _console_problems(run.stderr) == []

    dump = _chromium(exe, page, tmp_path / "p2", "--dump-dom")
    assert dump.returncode == 0, dump.stderr[-2000:]
    d = _dom(dump.stdout)
    assert d.sections == list(SECTIONS)
    assert all(d.svgs.get(f, 0) >= 1 for f in FIGURES), d.svgs
    assert _console_problems(dump.stderr) == []


def test_a_quick_run_replaces_only_its_own_cells_and_runs_can_be_chosen(db, tmp_path):
    reg = load_registry()
    path = tmp_path / "q.duckdb"
    shutil.copy(db, path)
    _run(path, reg, "glove-6b-50d", "glove", 9, results=[(("weat1", "word"), (0.11, 0.5))])
    html = build_report(path)
    assert "+0.11<" in html and "+0.75*<" in html        # the older run's other cells stay
    assert "weat-glove-6b-50d-09" in html and "weat-glove-6b-50d-02" in html
    only = build_report(path, runs=["weat-glove-6b-50d-09"])
    assert "+0.75" not in only and "the run(s) weat-glo" in only
    every = build_report(path, all_runs=True, model="glove-6b-50d")
    assert "weat-glove-6b-50d-01" in every and "tiny-bert" not in every.split('id="provenance"')[0]
    assert main(["--db", str(path), "report", "--model", "nope", str(tmp_path / "r.html")]) == 2


def _overlaps(fig) -> list:
    """Pairs of visible, non-empty text labels of a figure whose drawn boxes overlap."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    from matplotlib.text import Text
    texts = list({id(t): t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()}.values())
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in texts]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def test_figures_have_no_overlapping_labels_and_name_model_run_and_legend(db, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import duckdb
    import numpy as np

    from eatlas.methods.mleat import draw_eat_map, draw_eat_map_grid
    from eatlas.stats.mleat import mleat

    con = duckdb.connect(str(db), read_only=True)
    results = con.execute("SELECT * FROM results WHERE run_id LIKE 'weat-%'").fetchdf()
    runs = con.execute("SELECT * FROM runs").fetchdf()
    con.close()
    from eatlas.outputs.report import matrix, reproduction_scatter
    m = matrix(results, runs, load_registry(), None, by_run=True)
    assert _overlaps(m["fig"]) == []
    assert "Holm-Bonferroni" in m["svg"] and "runs: weat-gl" in m["svg"]
    rng = np.random.default_rng(0)
    sc = reproduction_scatter(pd.DataFrame({
        "run_id": ["r1"] * 6 + ["r2"] * 6, "model": ["m1"] * 6 + ["m2"] * 6, "published_model": ["P"] * 12,
        "paper": ["may2019"] * 12, "test_id": [f"weat{i}" for i in range(12)], "level": ["word"] * 12,
        "published_effect_size": rng.uniform(-1.5, 1.5, 12), "our_effect_size": rng.uniform(-1.5, 1.5, 12),
        "difference": rng.normal(size=12)}))
    assert _overlaps(sc["fig"]) == []
    assert [p["model"] for p in sc["per_model"]] == ["m1", "m2"] and all(p["r"] is not None for p in sc["per_model"])
    assert sc["unlabelled"] < 12 and "weat0 [word]" in sc["svg"]
    # EAT-Maps with the registry's long concept names (as eatlas run --method mleat draws them)
    names = ["European American names", "African American names", "Pleasant (Greenwald 1998)", "Unpleasant words"]
    X, Y, A, B = (rng.normal(size=(8, 16)) for _ in range(4))
    res = mleat(X, Y, A, B, n_samples=200, names=names)
    from eatlas.methods.mleat import eat_map_figure, eat_map_grid_figure
    assert _overlaps(eat_map_figure(res, title="weat3 [word]", subtitle="model m · run abcd1234", holm=True,
                                    alpha=0.01)) == []
    assert _overlaps(eat_map_grid_figure({f"t{i} [word]": res for i in range(5)}, subtitle="model m",
                                         alpha=0.01)) == []
    png, svg = draw_eat_map(res, tmp_path / "one", title="weat3 [word]", subtitle="model m · run abcd1234",
                            holm=True, alpha=0.01)
    text = svg.read_text()
    assert "model m · run abcd1234" in text and "Holm-Bonferroni" in text and "d = " in text
    png2, _ = draw_eat_map_grid({f"t{i} [word]": res for i in range(5)}, tmp_path / "grid",
                                subtitle="model m · run abcd1234", alpha=0.01)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for f in (png, png2):
        shutil.copy(f, ARTIFACTS / f.name)
    m["fig"].savefig(ARTIFACTS / "matrix.png", dpi=120, bbox_inches="tight")
    sc["fig"].savefig(ARTIFACTS / "scatter.png", dpi=120, bbox_inches="tight")


def test_the_first_section_is_a_results_table_with_both_ds_their_intervals_both_ps_and_the_holm_family(tmp_path):
    """The report opens on the CLI's columns: the concepts' d with its interval (or 'not estimable', the cause in
    the row's note, which has a line of its own), the sample d with the papers' interval, p concepts, p papers ('<
    1e-05' at its floor, never '1e-05'), the Holm mark with its family; ids in natural order; what to report."""
    reg = load_registry()
    db = tmp_path / "r.duckdb"
    rid = "weat-m-01-0000-0000-0000-000000000000"
    t = dt.datetime(2026, 11, 22, 10, 1)
    common = {"run_id": rid, "test_version": "1.0.0", "level": "word", "model": "m", "status": "ok", "exact": False,
              "n_partitions": 100_000, "parametric": False, "alternative": "greater", "ci_method": "concepts",
              "ci_level": 0.95, "n_x": 8, "n_y": 8, "n_a": 8, "n_b": 8, "holm_family_size": 3,
              "holm_p_rule": "concepts", "dropped": {}}
    write_run(db, {"run_id": rid, "method": "weat", "model": "m", "model_fingerprint": "fp", "seed": 0, "alpha": 0.01,
                   "started_at": t, "finished_at": t},
              [{**common, "test_id": "weat10", "effect_size": 0.9, "p_value": 0.003, "p_concepts": 0.02,
                "d_concepts": 1.1, "concepts_low": 0.2, "concepts_high": 1.8, "ci_low": 0.2, "ci_high": 1.8,
                "concepts_estimable": True, "papers_low": 0.4, "papers_high": 1.3, "holm_significant": False},
               {**common, "test_id": "weat2", "effect_size": 1.5, "p_value": 1e-5, "p_concepts": 1e-4,
                "d_concepts": 1.6, "concepts_low": 1.2, "concepts_high": 1.9, "ci_low": 1.2, "ci_high": 1.9,
                "concepts_estimable": True, "papers_low": 1.3, "papers_high": 1.7, "holm_significant": True},
               {**common, "test_id": "weat8", "effect_size": 1.2, "p_value": 4e-4, "p_concepts": 0.03,
                "concepts_estimable": False, "concepts_low": 0.81, "concepts_high": 2.0, "ci_low": 0.81,
                "ci_high": 2.0, "papers_low": 0.9, "papers_high": 1.4, "holm_significant": False,
                "notes": ["the concepts' d is not estimable: the attribute words' noise swamps the targets' spread "
                          "(only 36% of ...)"]}], reg)
    html = build_report(db)
    assert _dom(html).sections[0] == "results"
    section = html[html.index('<section id="results">'):html.index('<section id="runs">')]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section.replace("&nbsp;", " "))).replace("&lt;", "<").replace(
        "&#39;", "'")
    for head in ("concepts' d [95% CI]", "sample d [papers' CI]", "p concepts", "p papers", "Holm α=0.01"):
        assert head in text, head
    assert [m for m in re.findall(r"<code>(weat\d+)</code>", section)] == ["weat2", "weat8", "weat10"]
    assert "+1.60 [+1.20, +1.90]" in text and "+1.50 [+1.30, +1.70]" in text     # each d beside its own interval
    assert "< 1e-05" in text and " 1e-05 " not in text.replace("< 1e-05", "")
    assert "not estimable" in text and "[+0.81, +2.00]" not in text          # no hull printed as an interval
    assert re.search(r'<tr class="noterow"><td colspan="\d+">the concepts\' d is not estimable: the attribute',
                     section.replace("&#39;", "'"))
    assert "* of 3" in text and "of 3" in text and "the N results of that result's run" in text
    assert "For a paper, report the concepts' d with its interval and p concepts" in text
    # ids and numbers never break inside a word
    style = html[html.index("<style>"):html.index("</style>")]
    assert "anywhere" not in style and "white-space: nowrap" in style
