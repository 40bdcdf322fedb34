"""The public surface is typed: eatlas ships py.typed (PEP 561), every name of eatlas.__all__ has type hints, and a
type checker (mypy, in the test extra) passes on the public modules. mypy reads only those modules (imports it
does not follow are Any), which keeps the check at a few seconds."""
from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import eatlas

ROOT = Path(eatlas.__file__).resolve().parent
PUBLIC = ["__init__.py", "api/__init__.py", "api/core.py", "api/catalog.py", "api/result_set.py", "progress.py"]


def test_the_package_is_marked_typed():
    assert (ROOT / "py.typed").is_file()


def _hinted(obj) -> list[str]:
    """The parameters (and return) of a function or a class's public methods that have no annotation."""
    if inspect.isclass(obj):
        missing = []
        for name, member in vars(obj).items():
            if (not name.startswith("_") or name in ("__init__", "_repr_html_")) and inspect.isfunction(member):
                missing += [f"{obj.__name__}.{m}" for m in _hinted(member)]
        return missing
    sig = inspect.signature(obj)
    missing = [p.name for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty
               and p.name not in ("self", "cls")]
    if sig.return_annotation is inspect.Signature.empty and obj.__name__ != "__init__":
        missing.append("return")
    return missing


def test_every_public_name_has_type_hints():
    for name in eatlas.__all__:
        obj = getattr(eatlas, name)
        if name == "__version__":
            assert isinstance(obj, str)
            continue
        if name == "run":               # the package eatlas.run, called as the library's run
            obj = eatlas.api.run
        if inspect.isclass(obj) and issubclass(obj, Exception) or not callable(obj):
            continue
        if inspect.isclass(obj) and typing.get_type_hints(obj) and not [
                m for m in vars(obj).values() if inspect.isfunction(m)]:
            continue                    # a dataclass of typed fields
        assert not _hinted(obj), (name, _hinted(obj))


def test_mypy_passes_on_the_public_modules():
    pytest.importorskip("mypy")
    files = [str(ROOT / f) for f in PUBLIC]
    out = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=skip", "--ignore-missing-imports",
                          "--check-untyped-defs", "--disallow-untyped-defs", "--disallow-incomplete-defs",
                          "--no-error-summary", "--cache-dir", "/dev/null", *files], capture_output=True, text=True,
                         cwd=ROOT.parent)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_api_reference_lists_every_public_name_with_an_example():
    import re
    page = (ROOT.parent / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"^```python\n(.*?)^```", page, flags=re.S | re.M))
    for name in eatlas.__all__:
        assert f"eatlas.{name}" in page, name
        if name == "Results":           # its examples are of its methods, on a run's r
            assert "r.to_pandas()" in code and "r.save(" in code and "r.to_arrow()" in code
        elif name != "__version__":
            assert re.search(rf"\b{re.escape(name)}\b", code), name
