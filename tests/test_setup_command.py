"""One set-up command everywhere: README's test command is the one CONTRIBUTING.md shows and the one
.ci/run runs, so a newcomer who follows any of them installs what the tests need."""
import re

from conftest import ROOT


def _ci_command() -> str:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    parts = dict(re.findall(r'^(INSTALL|TESTS)="(.*)"$', text, flags=re.M))
    assert set(parts) == {"INSTALL", "TESTS"}, ".ci/run no longer defines INSTALL and TESTS"
    return f"{parts['INSTALL']} && {parts['TESTS']}"


def _bash_lines(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return [line.strip() for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M)
            for line in block.splitlines()]


def test_readme_contributing_and_ci_show_the_same_test_command():
    ci = _ci_command()
    assert "python -m pytest" in ci
    readme = [line for line in _bash_lines("README.md") if "python -m pytest" in line]
    contributing = [line for line in _bash_lines("CONTRIBUTING.md") if "python -m pytest" in line]
    assert readme == [ci], f"README's test command differs from .ci/run's: {readme} vs {ci!r}"
    assert contributing == [ci], f"CONTRIBUTING.md's set-up command differs from .ci/run's: {contributing}"


def test_ci_builds_a_new_environment_every_time():
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"mktemp -d", text) and re.search(r"python3 -m venv \"\$tmp/venv\"", text)
    assert "pip freeze" in text
    # the test command is run inside that environment, after it is activated
    assert text.index('. "$tmp/venv/bin/activate"') < text.index('eval "${INSTALL') < text.index('eval "$TESTS"')


def test_readme_main_command_installs_the_same_pinned_torch():
    first = next(line for line in _bash_lines("README.md") if line.startswith("pip install"))
    assert "torch==2.13.0" in first and "torch==2.13.0" in _ci_command()
