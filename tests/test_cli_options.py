"""Command-line habits: global options after the subcommand too, list options with spaces or commas."""
from __future__ import annotations

import argparse
import re

import pytest

from eatlas.cli import build_parser, main


def test_registry_after_the_subcommand(mini, capsys):
    assert main(["validate", "--registry", str(mini.root)]) == 0
    assert str(mini.root) in capsys.readouterr().out


def test_global_option_before_the_subcommand_is_kept(mini, capsys):
    # The subcommand's copy of --registry has no default, so it does not reset the value given before it.
    assert main(["--registry", str(mini.root), "validate"]) == 0
    assert str(mini.root) in capsys.readouterr().out


def test_option_after_the_subcommand_wins(mini, tmp_path, capsys):
    assert main(["--registry", str(tmp_path / "nowhere"), "validate", "--registry", str(mini.root)]) == 0
    assert str(mini.root) in capsys.readouterr().out


@pytest.mark.parametrize("cmd", ["run", "sql", "list", "show", "validate", "models", "catalog", "cache", "add",
                                 "publish", "export", "report"])
def test_every_subcommand_takes_the_global_options(cmd):
    sub = build_parser()._subparsers._group_actions[0].choices[cmd]
    opts = {o for a in sub._actions for o in a.option_strings}
    assert {"--registry", "--db"} <= opts


def test_db_after_the_subcommand(tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    assert main(["sql", "SELECT 1 AS one", "--db", str(db), "--format", "csv"]) == 0
    assert str(db) in capsys.readouterr().err       # the note names the file it looked for


@pytest.mark.parametrize("argv", [["--tests", "weat1", "weat2", "weat3"], ["--tests", "weat1,weat2,weat3"],
                                  ["--tests", "weat1,weat2", "weat3"], ["--tests", "weat1", "--tests", "weat2,weat3"],
                                  ["--tests", "weat1,", ",weat2", "weat3"]])
def test_list_options_take_spaces_and_commas(argv):
    assert build_parser().parse_args(["run", *argv]).tests == ["weat1", "weat2", "weat3"]


def test_levels_take_spaces_and_commas():
    p = build_parser()
    assert p.parse_args(["run"]).levels is None         # the method's default levels (word, sent for WEAT)
    assert p.parse_args(["run", "--levels", "word", "sent(u)"]).levels == ["word", "sent(u)"]
    assert p.parse_args(["run", "--levels", "word,c-word", "sent"]).levels == ["word", "c-word", "sent"]


def test_an_empty_list_is_refused(capsys):
    assert main(["run", "--tests", ","]) == 2
    assert "--tests" in capsys.readouterr().err


def test_export_with_commas(tmp_path):
    assert main(["export", "--format", "sent-bias", str(tmp_path), "--tests", "weat1,weat+occ"]) == 0
    written = sorted(p.name for p in tmp_path.iterdir() if p.name != ".eatlas-manifest.json")
    assert written == ["weat+occ.jsonl", "weat1.jsonl"]


def _run_help(capsys, monkeypatch) -> tuple[str, list]:
    """`eatlas run --help` as printed, and the run parser's options."""
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["run", "--help"]) == 0
    sub = build_parser()._subparsers._group_actions[0].choices["run"]
    return capsys.readouterr().out, [a for a in sub._actions if a.option_strings and a.dest != "help"]


def _help_of(text: str, action) -> str:
    """The help line of one option in the printed --help."""
    flag = re.escape(action.option_strings[-1])
    m = re.search(rf"^  (?:-\w, )?{flag}\b.*(?:\n {{4,}}\S.*)*", text, flags=re.M)   # and its wrapped lines
    assert m, action.option_strings
    return " ".join(m.group(0).split())


def test_run_help_shows_every_default(capsys, monkeypatch):
    """Every option of `eatlas run` with a value by default shows it (the Holm alpha was stated only in the
    results table's footer); one without says what leaving it out does."""
    text, actions = _run_help(capsys, monkeypatch)
    assert "--alpha ALPHA" in text and "(default: 0.01)" in _help_of(text, next(a for a in actions
                                                                                if a.dest == "alpha"))
    for a in actions:
        line = _help_of(text, a)
        if a.default is None:
            assert "default" in line or "required" in line, line
        elif a.default is not False and a.default is not argparse.SUPPRESS:
            assert f"(default: {a.default})" in line, line
    assert "(default: all-minilm-l6-v2)" in _help_of(text, next(a for a in actions if a.dest == "model"))
