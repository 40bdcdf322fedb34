"""The files a package people depend on carries: LICENSE, DATA-LICENSES.md (current), CHANGELOG.md,
CONTRIBUTING.md whose commands are the CLI's own."""
from __future__ import annotations

import re
import shlex
import tomllib

import pytest

from eatlas.cli import build_parser
from eatlas.registry import load_registry
from eatlas.registry.licenses import data_licenses
from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_the_full_apache_text():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text) > 10_000


def test_data_licenses_is_current():
    """Each source and the licence its files record; regenerate with python -m eatlas.registry.licenses."""
    committed = (ROOT / "DATA-LICENSES.md").read_text(encoding="utf-8")
    assert committed == data_licenses(load_registry()), "run: python -m eatlas.registry.licenses > DATA-LICENSES.md"


def test_data_licenses_names_every_licence_as_recorded():
    reg = load_registry()
    text = (ROOT / "DATA-LICENSES.md").read_text(encoding="utf-8")
    for obj in [*reg.sets.values(), *reg.tests.values(), *reg.templates.values()]:
        assert f"| {obj.source.get('paper')} | {obj.license} |" in text, obj.file


def test_data_licenses_names_every_data_folder_with_its_recorded_licence():
    import yaml

    text = (ROOT / "DATA-LICENSES.md").read_text(encoding="utf-8")
    folders = sorted((ROOT / "registry").glob("*/data/provenance.yaml"))
    assert folders
    for prov in folders:
        doc = yaml.safe_load(prov.read_text(encoding="utf-8"))
        assert f"| {prov.parent.relative_to(ROOT).as_posix()} | {doc['license']} | {len(doc['files'])} |" in text


def test_both_licence_files_ship_in_the_package_metadata():
    assert set(PYPROJECT["project"]["license-files"]) == {"LICENSE", "DATA-LICENSES.md"}


def test_changelog_has_unreleased_and_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text
    heads = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert heads[0] == "Unreleased" and PYPROJECT["project"]["version"] in heads


def _contributing_commands() -> list[str]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"`eatlas ([^`]+)`", text)))


def test_contributing_shows_commands():
    cmds = _contributing_commands()
    assert any(c.startswith("add ") for c in cmds) and "catalog --sync" in cmds and "catalog --check" in cmds


@pytest.mark.parametrize("cmd", _contributing_commands())
def test_every_command_in_contributing_parses(cmd):
    argv = shlex.split(cmd.replace("<test>", "weat1"))
    if "--help" in argv:
        return
    build_parser().parse_args(argv)      # SystemExit (a failed test) on an option the CLI does not have


def test_contributing_says_where_add_puts_a_file():
    helptext = build_parser()._subparsers._group_actions[0].choices["add"].format_help()
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "registry/<source.paper>/sets/<id>.yaml" in helptext.replace("\n", " ")
    assert "registry/<source.paper>/sets/<id>.yaml" in text
