"""The report's forest plot (effect sizes with their bootstrap CIs, models side by side, the published numbers
marked) and the influence table beside it, from real `eatlas run`s of two small vector models."""
from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import duckdb
import numpy as np
import pandas as pd
import pytest
from conftest import MiniRegistry, make_set, make_test, write_yaml
from markupsafe import escape
from test_report import _overlaps

from eatlas.cli import main
from eatlas.outputs.report import build_report, forest_plots
from eatlas.stats.robust import leave_one_out

ODD = "<b>&\"x'"            # a stimulus a page must show as text, never as markup
WORDS = {"x": [ODD, "tulip", "daisy", "lily"], "y": ["ant", "moth", "wasp", "flea"],
         "a": ["happy", "gentle", "lucky", "honest"], "b": ["ugly", "rotten", "sick", "evil"]}
MODELS = ("flowers-glove", "flowers-other")


def _flip_vectors(dim=6):
    """Vectors where d > 0 only because of X's first stimulus (ODD): leaving it out flips the sign."""
    rng = np.random.default_rng(1)
    e = np.eye(dim)
    m = {"a": e[0] + 0.2 * rng.normal(size=(4, dim)), "b": e[1] + 0.2 * rng.normal(size=(4, dim)),
         "y": 0.3 * rng.normal(size=(4, dim)) + e[2], "x": 0.3 * rng.normal(size=(4, dim)) + e[2] + 0.25 * e[1]}
    m["x"][0] = 2 * e[0] + 0.1 * rng.normal(size=dim)
    return m


def _stable_vectors(dim=6):
    """Targets and attributes far apart: no single stimulus flips the sign."""
    rng = np.random.default_rng(7)
    m = {r: rng.normal(size=(4, dim)) for r in "xyab"}
    for r in "xa":
        m[r][:, 0] += 3.0
    for r in "yb":
        m[r][:, 1] += 3.0
    return m


def _write_vectors(path, mats):
    lines = [w + " " + " ".join(f"{v:.6f}" for v in row) for r in "xyab" for w, row in zip(WORDS[r], mats[r])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """A registry of two word tests (t2 = t1 with A and B swapped) and a published t1 effect size of the glove
    family; model 1 (family glove) runs with the papers' CIs, model 2 with --no-ci."""
    tmp = tmp_path_factory.mktemp("forest")
    reg = MiniRegistry(tmp / "reg")
    for sid, role in (("roses", "x"), ("bugs", "y"), ("good", "a"), ("bad", "b")):
        reg.add_set(make_set(sid, [{"text": t, "kind": "noun"} for t in WORDS[role]]))
    reg.add_test(make_test("t1", "roses@1.0.0", "bugs@1.0.0", "good@1.0.0", "bad@1.0.0"))
    reg.add_test(make_test("t2", "roses@1.0.0", "bugs@1.0.0", "bad@1.0.0", "good@1.0.0"))
    pub = reg.root / "registry" / "testpaper" / "published" / "table1.csv"
    pub.parent.mkdir(parents=True)
    pd.DataFrame([{"paper": "testpaper", "table_id": "Table 1", "row_label": "flowers", "column_label": "GloVe",
                   "statistic": "effect_size", "value": "1.23", "significance": "", "missing": "false",
                   "test_id": "t1", "level": "word", "model": "GloVe", "model_family": "glove", "note": ""}]
                 ).to_csv(pub, index=False)
    write_yaml(reg.root / "registry" / "testpaper" / "published" / "models.yaml",
               {"paper": "testpaper", "models": [{"model": "GloVe", "model_family": "glove", "name": "GloVe",
                                                  "size": "840B", "stated_in": "Table 1"}]})
    reg.sync()
    db = tmp / "r.duckdb"
    flip = leave_one_out(*(_flip_vectors()[r] for r in "xyab"))
    assert not flip.sign_stable and flip.effect_size > 0          # the fixture is what it claims to be
    v1 = _write_vectors(tmp / f"{MODELS[0]}.txt", _flip_vectors())
    v2 = _write_vectors(tmp / f"{MODELS[1]}.txt", _stable_vectors())
    common = ["--registry", str(reg.root), "--db", str(db), "run", "--levels", "word", "--quiet"]
    # the papers' interval (--ci-method permutation) has a bar at any set size; the concepts' d of 4 words a set
    # is most often not estimable, which draws no bar (tests/test_concepts_wiring.py)
    assert main([*common, "--model", str(v1), "--family", "glove", "--ci-method", "permutation"]) == 0
    assert main([*common, "--model", str(v2), "--family", "bert", "--no-ci"]) == 0
    return db, reg


class _Sections(HTMLParser):
    """The text and the SVG <text> labels of one section, and its table rows (class and cell texts)."""

    def __init__(self, wanted):
        super().__init__()
        self.wanted, self.depth, self.stack = wanted, 0, []
        self.svg_text, self.rows, self.text, self.ids = [], [], [], []
        self._in_svg_text = self._row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.stack.append(a.get("id"))
        if self.stack and self.stack[-1] == self.wanted:
            if a.get("id"):
                self.ids.append(a["id"])
            if tag == "text":
                self._in_svg_text = []
            if tag == "tr":
                self._row = {"class": a.get("class") or "", "cells": []}
            if tag in ("td", "th") and self._row is not None:
                self._row["cells"].append("")

    def handle_endtag(self, tag):
        if tag == "section":
            self.stack.pop()
        if tag == "text" and self._in_svg_text is not None:
            self.svg_text.append("".join(self._in_svg_text))
            self._in_svg_text = None
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self.stack and self.stack[-1] == self.wanted:
            self.text.append(data)
            if self._in_svg_text is not None:
                self._in_svg_text.append(data)
            if self._row is not None and self._row["cells"]:
                self._row["cells"][-1] += data


def _section(page: str, sid: str) -> _Sections:
    p = _Sections(sid)
    p.feed(page)
    return p


def test_forest_has_one_row_per_test_and_level_both_models_and_the_published_mark(two_models):
    db, reg = two_models
    page = build_report(db, registry=reg.root)
    f = _section(page, "forest")
    rows = [t for t in f.svg_text if re.fullmatch(r"t\d \[word\]", t)]
    assert rows == ["t1 [word]", "t2 [word]"]                    # one row each, in registry order
    svg = page[page.index('<section id="forest">'):page.index('<section id="influence">')]
    # both models' markers (one scatter group per model), named in the legend
    assert 'id="forest-series-0"' in svg and 'id="forest-series-1"' in svg
    assert any(MODELS[0] in t for t in f.svg_text) and any(MODELS[1] in t for t in f.svg_text)
    # the CI bars: model 1 only (model 2 ran with --no-ci), and the caption says why the other has none
    assert 'id="forest-ci-0"' in svg and 'id="forest-ci-1"' not in svg
    assert "2 result(s) have no bar" in " ".join(" ".join(f.text).split())
    # the published t1 number: same family (glove), not same model; named by its paper on the t1 row only
    assert 'id="forest-published-same_family"' in svg and 'id="forest-published-same_model"' not in svg
    assert [t for t in f.svg_text if t.startswith("testpaper")] == ["testpaper ◇+1.23"]


def test_influence_rows_ordered_by_change_with_the_sign_flip_marked(two_models):
    db, reg = two_models
    con = duckdb.connect(str(db), read_only=True)
    inf = con.execute("SELECT r.model, i.test_id, i.item, i.d_without, i.delta FROM influence i "
                      "JOIN runs r USING (run_id)").fetchdf()
    con.close()
    page = build_report(db, registry=reg.root, influence_top=3)
    rows = _section(page, "influence").rows
    groups = [i for i, r in enumerate(rows) if "result" in r["class"].split()]
    assert len(groups) == 4                                       # 2 tests x 2 models
    flipped = 0
    for g, end in zip(groups, groups[1:] + [len(rows)]):
        head = rows[g]["cells"][0]
        model = next(m for m in MODELS if m in head)
        test = re.search(r"(t\d) \[word\]", head)[1]
        shown = [(r["cells"][1].replace("⚠ flips the sign", "").strip(), float(r["cells"][3]), "flip" in r["class"])
                 for r in rows[g + 1:end]]
        mine = inf[(inf["model"].str.contains(model)) & (inf["test_id"] == test)]
        expect = mine.reindex(mine["delta"].abs().sort_values(ascending=False).index).head(3)
        assert [s[0] for s in shown] == list(expect["item"])         # the largest |change| first, top 3
        assert [s[1] for s in shown] == pytest.approx(list(expect["delta"]), abs=5e-4)
        d = float(re.search(r"d = ([+-][\d.]+)", head)[1])
        for (_, _, flag), d_without in zip(shown, expect["d_without"]):
            assert flag == (np.sign(d_without) != np.sign(d))       # a stimulus that flips the sign is marked
        unstable = "⚠ one stimulus left out flips the sign" in head
        assert unstable == (model == MODELS[0]) and ("sign stable" in head) == (not unstable)
        flipped += any(s[2] for s in shown)
    assert flipped == 2       # model 1's t1 and t2: leaving out ODD flips both


def test_every_database_string_is_escaped(two_models):
    db, reg = two_models
    page = build_report(db, registry=reg.root)
    assert ODD not in page and "<b>" not in page
    assert str(escape(ODD)) in page                                # as Jinja's autoescape writes it
    cells = [c for r in _section(page, "influence").rows for c in r["cells"]]
    assert any(c.startswith(ODD) for c in cells)                   # shown as the text it is
    # in the figure too: a model or test named so is SVG text, not markup
    res = pd.DataFrame({"run_id": ["r1"], "run_model": [ODD], "test_id": [ODD], "level": ["word"], "status": ["ok"],
                        "effect_size": [0.5], "holm_significant": [None]})
    svg = forest_plots(res, pd.DataFrame(), None)["figures"][0]["svg"]
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg


def test_a_database_without_influence_data_still_renders(two_models, tmp_path):
    db, reg = two_models
    old = tmp_path / "old.duckdb"
    shutil.copy(db, old)
    con = duckdb.connect(str(old))
    con.execute("DROP TABLE influence")
    con.execute("ALTER TABLE results DROP COLUMN ci_low")       # and written before CIs were stored
    con.close()
    page = build_report(old, registry=reg.root)
    text = " ".join(" ".join(_section(page, "influence").text).split())
    # a table the file lacks is read as an empty one of EATlas's (eatlas.store.db.read_as_data): each result says
    # it has no influence rows
    assert "no influence rows stored for this result" in text and "Traceback" not in page
    f = _section(page, "forest")
    assert [t for t in f.svg_text if re.fullmatch(r"t\d \[word\]", t)] == ["t1 [word]", "t2 [word]"]
    assert "4 result(s) have no bar" in " ".join(" ".join(f.text).split())


def test_many_rows_make_several_readable_figures():
    results = pd.DataFrame({"run_id": ["r1"] * 45 + ["r2"] * 45, "run_model": ["m$1"] * 45 + ["m2"] * 45,
                            "test_id": [f"x{i:02d}" for i in range(45)] * 2, "level": ["word"] * 90,
                            "status": "ok", "effect_size": np.linspace(-1.5, 1.5, 90),
                            "ci_low": np.linspace(-1.5, 1.5, 90) - 0.3, "ci_high": np.linspace(-1.5, 1.5, 90) + 0.3,
                            "holm_significant": [True, False] * 45})
    f = forest_plots(results, pd.DataFrame(), None, rows_per_figure=20)
    assert [len(p["rows"]) for p in f["figures"]] == [20, 20, 5]
    assert sum((p["rows"] for p in f["figures"]), []) == [f"x{i:02d} [word]" for i in range(45)]
    heights = [p["fig"].get_size_inches()[1] for p in f["figures"]]
    assert heights[0] == heights[1] > heights[2]                # height grows with the rows
    assert "m$1" in f["figures"][0]["svg"]                      # a '$' is text, not mathtext
    assert all(_overlaps(p["fig"]) == [] for p in f["figures"])  # no label drawn over another
    # Holm: filled where significant, open (white) where not, in every figure
    checked = 0
    for part in f["figures"]:
        for coll in part["fig"].axes[0].collections:
            if (coll.get_gid() or "").startswith("forest-series-"):
                j = int(coll.get_gid().rsplit("-", 1)[1])
                mine = results.iloc[45 * j:45 * (j + 1)]
                holm = mine.set_index(mine["test_id"] + " [word]").loc[part["rows"], "holm_significant"]
                white = [tuple(c) == (1.0, 1.0, 1.0, 1.0) for c in coll.get_facecolors()]
                assert white == [not h for h in holm]
                checked += 1
    assert checked == 6                                         # 2 models x 3 figures
