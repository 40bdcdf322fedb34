"""Outputs a newcomer reads: `eatlas --version`, `eatlas models` (copyable install commands, whole ids), `eatlas sql`
on wide results, `eatlas show` in prose, `eatlas report --help`."""
from __future__ import annotations

import pytest

from eatlas import __version__
from eatlas.cli import main


def test_version_prints_the_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"eatlas {__version__}"


@pytest.mark.parametrize("columns", ["120", "80"])
def test_models_prints_every_install_command_whole_on_one_line(columns, capsys, monkeypatch):
    """Each install command of a model that is not installed stands whole on one line (to copy), and no model id
    is cut ('…') or broken, at 120 columns and on a narrow terminal."""
    import eatlas.encoders as enc

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(enc, "entry_installed", lambda e: False)     # every model shows its install command
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "…" not in out
    for mid, e in enc.model_entries().items():
        cmd = " ".join(str(e["install"]).split())
        assert any(line.split() == [mid, *cmd.split()] for line in lines), (mid, cmd)
        shown = lines[:next(n for n, line in enumerate(lines) if line.startswith("Not installed"))]
        assert any(mid in line.split() for line in shown), mid      # whole in the tables (or blocks)
