"""Command-line habits: global options after the subcommand too, list options with spaces or commas."""
from __future__ import annotations

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
