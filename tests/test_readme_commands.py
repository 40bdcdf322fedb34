"""README is a front door: short, its commands run as printed, its quoted output is what the command prints.

Every command in a bash block of README and the manual parses with the CLI's own parser (a renamed option fails
here); README's first block is the install and the default run; the example of "Compare a model with the papers"
is run and its quoted table compared with what `eatlas sql` prints. The slow commands (the default run, publish,
a whole language) run in tests of their own: test_first_run.py, test_publish.py, test_multilingual.py."""
from __future__ import annotations

import re
import shlex

import pytest

from eatlas.cli import main
from eatlas.cli.main import build_parser
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def bash_lines(text: str) -> list[str]:
    """The command lines of the bash blocks, continuation lines joined."""
    out = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        out += [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return out


def eatlas_commands(line: str) -> list[list[str]]:
    """argv (after 'eatlas') of each `eatlas ...` in a shell line: split at &&, ||, ; and |, comments dropped."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    out, cur, redirect = [], [], False
    for w in [*words, "&&"]:
        if w in ("&&", "||", ";", "|"):
            if cur and cur[0] == "eatlas":
                out.append(cur[1:])
            cur, redirect = [], False
        elif w.startswith((">", "<", "2>")):
            redirect = True                 # "> file" or ">file": the rest is the shell's
        elif not redirect:
            cur.append(w)
    return out


COMMANDS = [(f"{p.relative_to(ROOT)}", argv) for p in PAGES for line in bash_lines(p.read_text(encoding="utf-8"))
            for argv in eatlas_commands(line)]


def test_readme_is_a_front_door_not_a_manual():
    lines = README.splitlines()
    assert len(lines) <= 300
    heads = re.findall(r"^## (.+)$", README, flags=re.M)
    assert heads[:2] == ["Install and run", "One example per job"]
    assert {"What else is here", "Citing"} <= set(heads)
    assert "CITATION.cff" in README
    for link in re.findall(r"\]\((docs/[^)#]+)", README):      # every link into the manual lands on a page
        assert (ROOT / link).is_file(), link


def test_readmes_first_command_installs_and_runs_the_default_job():
    first = bash_lines(README)[0]
    assert first.startswith("pip install") and first.endswith("&& eatlas run")


def test_every_readme_command_is_an_install_line_or_an_eatlas_or_python_command():
    """What a newcomer pastes after the install: eatlas commands, and a Python one-liner reading the dataset."""
    for line in bash_lines(README):
        if "pip install" in line:
            continue
        assert line.startswith(("eatlas ", "python -c ")), line


@pytest.fixture(scope="module")
def parser():
    return build_parser()


@pytest.mark.parametrize("where,argv", COMMANDS, ids=[f"{w}: {' '.join(a)[:60]}" for w, a in COMMANDS])
def test_every_documented_command_parses(where, argv, parser):
    # "<test>" is a placeholder; "[--option value]" marks an option as optional: both parse as written out
    argv = [a.replace("<test>", "weat1").removeprefix("[").removesuffix("]") for a in argv]
    if "--help" in argv or "-h" in argv:
        return
    try:
        parser.parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"{where}: eatlas {' '.join(argv)} does not parse (exit {e.code})")


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in table.splitlines() if line.startswith("│")]


def test_readmes_papers_example_prints_what_readme_quotes(tmp_path, capsys, monkeypatch):
    """The example of "Compare a model with the papers", run as printed (in a folder of its own, where the run
    writes eatlas.duckdb): README's quoted table is what the last command prints."""
    section = README[README.index("### Compare a model with the papers"):README.index("### Download the stimuli")]
    commands = [argv for line in bash_lines(section) for argv in eatlas_commands(line)]
    assert [c[0] for c in commands] == ["sql", "run", "sql"]
    monkeypatch.chdir(tmp_path)                 # eatlas.duckdb is written in the current folder
    monkeypatch.setenv("COLUMNS", "120")
    for argv in commands:
        capsys.readouterr()
        # the quoted table shows effect sizes, which neither the interval nor the number of permutations changes:
        # the run skips the first and samples fewer of the second, to keep this test fast
        extra = ["--no-ci", "--n-samples", "1000"] if argv[0] == "run" else []
        assert main([*argv, *extra]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    quoted = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    assert _rows(printed) == _rows(quoted) and len(_rows(quoted)) == 5
    assert "corpus Wikipedia 2014 + Gigaword 5 (6B tokens) vs Common Crawl (840B tokens); dimension 50 vs 300" \
        in section.replace("\n", " ")


def test_the_quickstarts_first_run_prints_what_it_quotes(tmp_path, capsys, monkeypatch):
    """The manual's first run (Quickstart, step 2: GloVe, two tests, word level), run as printed: its quoted
    table's rows are what it prints, every column (the default settings, seed 0)."""
    page = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    section = page[page.index("## 2. "):page.index("## 3. ")]
    (argv,) = [a for line in bash_lines(section) for a in eatlas_commands(line)]
    assert argv[:3] == ["run", "--model", "glove-6b-50d"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    quoted = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    assert _rows(printed) == _rows(quoted) and len(_rows(quoted)) == 2
