"""The tutorial (docs/tutorial.md) runs: its Python blocks, in order, in one namespace, as a notebook would run
them; what it says about the numbers holds."""
from __future__ import annotations

import re

import pytest
from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", TUTORIAL.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_tutorial_runs_and_says_what_it_shows(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for i, code in enumerate(blocks()):
        exec(compile(code, f"{TUTORIAL.name} block {i + 1}", "exec"), ns)      # noqa: S102 - the page's own code
    table = ns["table"]
    assert list(table["test_id"]) == [f"weat{i}" for i in range(1, 11)] and table["printed"].notna().all()
    change = dict(zip(table["test_id"], table["change"].abs()))
    # as the page says: WEAT 6 loses about half its d, WEAT 7 and 8 turn negative, WEAT 1 and 2 hardly move
    d = dict(zip(table["test_id"], table["effect_size"]))
    without = dict(zip(table["test_id"], table["effect_size_without"]))
    assert 0.35 < without["weat6"] / d["weat6"] < 0.65 and without["weat7"] < 0 and without["weat8"] < 0
    assert all(change[t] < 0.1 for t in ("weat1", "weat2"))
    assert ns["original"].run["model_family"] == "glove" and ns["changed"].run["model_family"] == "unknown"
    assert (tmp_path / "weat-without-he-she.png").stat().st_size > 10_000
    assert sorted(ns["stored"]["model"].unique()) == ["GloVe 6B 50d", "GloVe 6B 50d without he - she"]
