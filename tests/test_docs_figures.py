"""The manual's screenshots are current: each PNG under docs/assets that scripts/docs_figures.py makes is there,
small, shown by a page, and was made from the code and templates as they are now (docs/assets/figures.json holds a
hash of the files that decide what each shows; a change to one of them asks for
``python scripts/docs_figures.py screens WASM`` again)."""
from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "scripts" / "docs_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_screenshot_is_there_small_and_shown(figures):
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for name in figures.FIGURES:
        png = ROOT / "docs" / "assets" / name
        assert png.is_file(), name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 300_000, name
        assert f"assets/{name}" in pages, f"no page shows {name}"


def test_every_screenshot_was_made_from_the_code_as_it_is(figures):
    manifest = json.loads((ROOT / "docs" / "assets" / "figures.json").read_text(encoding="utf-8"))
    stale = [name for name in figures.FIGURES if manifest.get(name, {}).get("inputs") != figures.inputs_hash(name)]
    assert not stale, (f"{', '.join(stale)}: made before the code or templates they show changed; run "
                       "python scripts/docs_figures.py screens WASM (scripts/docs_figures.py says what WASM is)")


def test_the_hash_changes_with_a_file_a_figure_shows(figures, monkeypatch, tmp_path):
    before = figures.inputs_hash("shot-validity.png")
    fake = tmp_path / "root"
    for name in {*figures.COMMON, *figures.FIGURES["shot-validity.png"]}:
        src, dst = ROOT / name, fake / name
        if src.is_dir():
            import shutil
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    monkeypatch.setattr(figures, "ROOT", fake)
    assert figures.inputs_hash("shot-validity.png") == before
    (fake / "eatlas" / "methods" / "validity.py").write_text("# changed\n", encoding="utf-8")
    assert figures.inputs_hash("shot-validity.png") != before
