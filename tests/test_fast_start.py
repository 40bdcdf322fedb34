"""A fast start (issue 23): a command imports the heavy libraries only when it needs them. `eatlas --help`
imports none of them; `eatlas list` neither pandas, pandera, scipy.stats, torch nor pydantic; a warm re-run
(every text in the embedding cache, the registry in its cache) none of the libraries of validation, tables,
models or figures. The times are benchmarks (benchmarks/bench_startup.py, bench_rerun.py); what is imported
is checked here, so that a change elsewhere cannot bring a slow import back unseen."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "pandas", "pyarrow", "pandera", "scipy.stats", "statsmodels", "matplotlib",
         "ray", "datasets", "duckdb", "rich", "pydantic", "sklearn", "jinja2")

CODE = """
import json, sys
from eatlas.cli import main
try:
    rc = main(sys.argv[2:])
except SystemExit as e:
    rc = e.code
heavy = json.loads(sys.argv[1])
loaded = sorted(m for m in heavy if m in sys.modules)
with open(__import__("os").environ["EATLAS_TEST_OUT"], "w") as f:
    json.dump({"rc": rc, "loaded": loaded}, f)
"""


def _imports(tmp_path, *argv, env=None) -> tuple[int, set]:
    out = tmp_path / "imported.json"
    env = {**os.environ, **(env or {}), "EATLAS_TEST_OUT": str(out)}
    env.pop("EATLAS_CHECK_ROWS", None)              # a user's run, not the test suite's (tests/conftest.py)
    p = subprocess.run([sys.executable, "-c", CODE, json.dumps(HEAVY), *map(str, argv)], env=env,
                       capture_output=True, text=True)
    assert out.exists(), p.stderr[-3000:]
    got = json.loads(out.read_text())
    return got["rc"], set(got["loaded"])


def test_help_imports_no_heavy_library(tmp_path):
    rc, loaded = _imports(tmp_path, "--help")
    assert rc == 0 and loaded == set(), loaded


@pytest.mark.parametrize("argv", [["list", "--help"], ["run", "--help"], ["sql", "--help"]])
def test_a_commands_help_imports_no_heavy_library(tmp_path, argv):
    rc, loaded = _imports(tmp_path, *argv)
    assert rc == 0 and loaded == set(), loaded


def test_list_imports_no_table_library_validation_or_model(mini, tmp_path):
    env = {"EATLAS_CACHE": str(tmp_path / "cache")}
    assert _imports(tmp_path, "--registry", mini.root, "list", env=env)[0] == 0          # the registry is parsed
    rc, loaded = _imports(tmp_path, "--registry", mini.root, "list", env=env)           # and now kept
    assert rc == 0
    assert not loaded & {"pandas", "pyarrow", "pandera", "scipy.stats", "statsmodels", "torch", "transformers",
                         "pydantic", "duckdb", "matplotlib"}, loaded


def test_a_warm_rerun_imports_none_of_the_heavy_libraries(mini, tiny_bert, tmp_path):
    """The second run finds every text in the embedding cache and the checked registry in its cache: no
    model is loaded (no torch, transformers), nothing validated (pandera, pydantic: the built-in methods' rows
    are checked by the tests, eatlas.methods.rows_checked_at_write), no DataFrame made for the store (pandas,
    pyarrow), Holm without statsmodels and scipy.stats; duckdb writes the run."""
    env = {"EATLAS_CACHE": str(tmp_path / "cache")}
    argv = ["--registry", mini.root, "--db", tmp_path / "r.duckdb", "run", "--model", tiny_bert, "--tests", "t1",
            "--levels", "word", "--no-ci", "--n-samples", "1000"]
    rc, cold = _imports(tmp_path, *argv, env=env)
    assert rc == 0 and {"torch", "pydantic"} <= cold             # the model ran, the files were read
    rc, warm = _imports(tmp_path, *argv, env=env)
    assert rc == 0
    assert not warm & {"torch", "transformers", "pandas", "pyarrow", "pandera", "scipy.stats", "statsmodels",
                       "pydantic", "matplotlib", "ray", "datasets", "sklearn", "jinja2"}, warm
    import duckdb
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    try:
        runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        results = con.execute("SELECT count(*), count(DISTINCT effect_size) FROM results").fetchone()
    finally:
        con.close()
    assert runs == 2 and results == (2, 1)          # the same numbers, read from the cache
