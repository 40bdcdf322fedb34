"""What users and third parties import keeps working after the package was split into subpackages
(CHANGELOG "Unreleased": the old import paths that still work)."""
from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import numpy as np
import pytest

import eatlas


def _matrices(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, 8)) for n in (6, 6, 5, 5)]


def test_the_package_face():
    assert set(eatlas.__all__) == {"EatlasError", "WeatResult", "get_test", "holm", "list_tests", "weat",
                                   "__version__", "Results", "connect", "measurement_path", "published", "results",
                                   "run", "sets", "tests"}
    assert all(getattr(eatlas, name) is not None for name in eatlas.__all__)
    r = eatlas.weat(*_matrices(), n_samples=200, seed=0, ci=None)
    assert isinstance(r, eatlas.WeatResult) and np.isfinite(r.effect_size) and 0 < r.p_value <= 1
    assert eatlas.holm([0.001, 0.5], alpha=0.05).tolist() == [True, False]
    assert eatlas.get_test("weat1", level="word").x.name == "Flowers"
    assert any(t["id"] == "weat1" for t in eatlas.list_tests())


def test_eatlas_weat_is_the_function_and_its_module_path_still_imports():
    """As before the move: the attribute eatlas.weat is the function, and `from eatlas.weat import ...`
    (and `import eatlas.weat`) find the statistics module, now eatlas.stats.weat."""
    from eatlas.stats import weat as module
    from eatlas.weat import WeatResult, holm, permutation_p, weat

    assert callable(eatlas.weat) and eatlas.weat is weat is module.weat
    assert (holm, permutation_p, WeatResult) == (module.holm, module.permutation_p, module.WeatResult)
    code = "import eatlas.weat, eatlas; import sys; print(callable(eatlas.weat), sys.modules['eatlas.weat'].__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "eatlas.stats.weat"]


@pytest.mark.parametrize("package, module", [("eatlas.registry", "eatlas.registry.base"),
                                             ("eatlas.store", "eatlas.store.db")])
def test_the_former_modules_names_are_the_packages(package, module):
    """eatlas/registry.py and eatlas/store.py became packages: every public name of the former module is a
    name of the package, listed in its __all__."""
    pkg, mod = importlib.import_module(package), importlib.import_module(module)
    public = {n for n, v in vars(mod).items() if not n.startswith("_") and not isinstance(v, type(sys))
              and getattr(v, "__module__", module) == module}
    assert public and public <= set(pkg.__all__), public - set(pkg.__all__)
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None, name


def test_names_users_import_from_the_registry_and_the_store():
    from eatlas.registry import Registry, StimulusSet, TestSpec, check_registry, load_registry, parse_set, read_yaml
    from eatlas.registry.schemas import check_registry as checks
    from eatlas.store import connect, default_db, export_results, query, read_published, write_run
    from eatlas.store.results_io import export_results as export
    assert check_registry is checks and export_results is export
    assert isinstance(load_registry(), Registry)
    assert all(callable(f) for f in (StimulusSet, TestSpec, parse_set, read_yaml, connect, default_db, query,
                                     read_published, write_run))
    with pytest.raises(AttributeError):
        _ = eatlas.registry.no_such_name


def test_the_console_script_and_python_m():
    (ep,) = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "eatlas"]
    assert ep.value == "eatlas.cli:main"
    import eatlas.cli
    assert ep.load() is eatlas.cli.main
    for mod in ("eatlas", "eatlas.cli"):
        out = subprocess.run([sys.executable, "-m", mod, "--help"], capture_output=True, text=True)
        assert out.returncode == 0 and "usage: eatlas" in out.stdout, (mod, out.stderr)


def test_a_third_party_method_registers_through_the_entry_point_group(tmp_path):
    """A lab's own method, installed beside EATlas, joins through the entry-point group eatlas.methods."""
    (tmp_path / "lab_method.py").write_text(
        "from eatlas.methods import Method, Outcome, register\n\n\n@register\nclass LabMethod(Method):\n"
        "    name = 'labmethod'\n    help = 'a lab method: nothing'\n\n"
        "    def compute(self, m, cfg):\n        return Outcome()\n")
    info = tmp_path / "lab_method-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-method\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[eatlas.methods]\nlabmethod = lab_method\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    env.pop("EATLAS_CHECK_ROWS", None)          # as a user runs it (the test suite checks every run's rows)
    code = ("import eatlas.methods as m; print(sorted(m.all_methods())); "
            "print([m.rows_checked_at_write(n) for n in ('labmethod', 'weat', 'llm-iat', 'gone')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert "'labmethod'" in out and "'weat'" in out
    # its rows, like an import's, are checked before a run is written; EATlas's own methods' are checked by tests
    assert out.splitlines()[-1] == "[True, False, False, True]"
    env["EATLAS_CHECK_ROWS"] = "1"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.splitlines()[-1] == "[True, True, True, True]"
