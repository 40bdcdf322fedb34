"""The wheel carries the registry: built once per session, installed into a throwaway target (not
editable) and run from an empty folder. The sdist carries the data folders too, and a wheel built from
the sdist holds the same files."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, make_set, write_yaml

DATA = ("catalog.yaml", "registry/", "templates/", "schemas/", "loaders/")


def _pip_wheel(src: Path, out: Path) -> Path:
    # Without build isolation where hatchling is installed (no network needed); else pip fetches it.
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True)
    (wheel,) = out.glob("eatlas-*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    return _pip_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("target")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, text=True)
    return target


@pytest.fixture
def eatlas_cli(installed, tmp_path):
    """Run ``python -m eatlas ARGS`` from an empty folder with only the installed wheel on the path."""
    cwd = tmp_path / "empty"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EATLAS_") and k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(installed), EATLAS_CACHE=str(tmp_path / "cache"))

    def run(*args: str, module: str = "eatlas", **extra_env: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd, env={**env, **extra_env},
                              capture_output=True, text=True, timeout=600)
    run.cwd = cwd
    return run


def test_the_wheel_holds_the_data_folders(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for d in DATA:
        assert any(n.startswith("eatlas/_data/" + d) for n in names), d
    assert "eatlas/_data/schemas/stimuli.yaml" in names and "eatlas/outputs/report_template.html.j2" in names
    # a typed package (PEP 561), and the evaluate measurement evaluate.load reads from its folder
    assert "eatlas/py.typed" in names and "eatlas/measurements/weat/weat.py" in names
    site = {"index.html.j2", "test.html.j2", "sql.html.j2", "base.html.j2", "site.css", "filter.js", "sql.js",
            "arrow-shim.mjs"}          # eatlas site's templates and assets
    assert {f"eatlas/outputs/site_assets/{n}" for n in site} <= set(names)
    catalog = {n for n in names if n.startswith("eatlas/_data/registry/") and n.endswith((".yaml", ".csv"))}
    assert len(catalog) > 100
    assert not any(n.startswith(("tests/", "docs/", "benchmarks/")) or "__pycache__" in n for n in names)


def test_the_installed_wheel_runs_from_an_empty_folder(eatlas_cli, installed):
    where = eatlas_cli("eatlas.paths", module="pydoc")       # the module's docs name its file
    assert f"FILE\n    {installed}" in where.stdout, where.stdout + where.stderr     # not the checkout

    r = eatlas_cli("validate")
    assert r.returncode == 0, r.stderr
    assert "ok:" in r.stdout and "_data" in r.stdout

    r = eatlas_cli("sql", "SELECT count(*) AS n FROM published_results", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[1]) > 0
    assert list(eatlas_cli.cwd.iterdir()) == []          # no database file before a run

    r = eatlas_cli("run", "--tests", "weat6", "--levels", "word", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (eatlas_cli.cwd / "eatlas.duckdb").is_file()
    r = eatlas_cli("sql", "SELECT test_id, level, status FROM results", "--format", "csv")
    assert r.returncode == 0 and r.stdout.split() == ["test_id,level,status", "weat6,word,ok"], r.stdout + r.stderr

    r = eatlas_cli("report", "report.html")
    assert r.returncode == 0, r.stderr
    assert "weat6" in (eatlas_cli.cwd / "report.html").read_text(encoding="utf-8")

    r = eatlas_cli("site", "site", "--figures", "none")
    assert r.returncode == 0, r.stderr
    assert "weat6" in (eatlas_cli.cwd / "site" / "tests" / "weat6.html").read_text(encoding="utf-8")
    assert (eatlas_cli.cwd / "site" / "assets" / "sql.js").is_file()


def test_the_installed_wheel_reads_a_labs_own_registry(eatlas_cli, mini):
    r = eatlas_cli("validate", "--registry", mini.root)
    assert r.returncode == 0 and "1 tests" in r.stdout and str(mini.root) in r.stdout, r.stdout + r.stderr
    r = eatlas_cli("list", EATLAS_REGISTRY=str(mini.root))
    assert r.returncode == 0 and "1 test(s)" in r.stdout, r.stdout + r.stderr


def test_the_installed_registry_is_not_changed_in_place(eatlas_cli, installed, mini, tmp_path):
    new = write_yaml(tmp_path / "weeds.yaml", make_set("weeds", ["thistle", "nettle", "dock", "bindweed"]))
    catalog = installed / "eatlas" / "_data" / "catalog.yaml"
    before = catalog.read_bytes()
    r = eatlas_cli("add", new)
    assert r.returncode == 2 and "installed with the package" in r.stderr and "--registry" in r.stderr, r.stderr
    assert catalog.read_bytes() == before
    assert not list((installed / "eatlas" / "_data" / "registry").glob("*/sets/weeds.yaml"))
    r = eatlas_cli("add", new, "--registry", mini.root)       # a lab's own registry takes it
    assert r.returncode == 0, r.stderr
    assert (mini.root / "registry" / "testpaper" / "sets" / "weeds.yaml").is_file()


def test_the_sdist_holds_the_data_folders_and_builds_the_same_wheel(wheel, tmp_path):
    code = "import sys; from hatchling.build import build_sdist; print(build_sdist(sys.argv[1]))"
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling is not installed (pip install hatchling)")
    name = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.split()[-1]
    with tarfile.open(tmp_path / name) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        for d in DATA:
            assert any(m.startswith(d) for m in members), d
        assert {"README.md", "pyproject.toml", "LICENSE"} <= members
        tar.extractall(tmp_path / "src", filter="data")
    again = _pip_wheel(tmp_path / "src" / top, tmp_path / "w")
    assert sorted(zipfile.ZipFile(again).namelist()) == sorted(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_holds_no_workplace_path(wheel):
    """No shipped file names ../shared, shared/seeds, shared/reference or a path of the build machine."""
    needles = ("../shared", "shared/seeds", "shared/reference", str(ROOT), str(ROOT.resolve()), "/work/")
    found = []
    with zipfile.ZipFile(wheel) as z:
        for n in z.namelist():
            text = z.read(n).decode("utf-8", errors="replace")
            found += [f"{n}: {s}" for s in needles if s in text]
    assert not found, "\n".join(found)
