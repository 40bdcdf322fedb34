"""Imports inside the package point down the pipeline, never up and never in a circle (CONTRIBUTING.md,
"Where things live").

Every ``import`` and ``from ... import`` of every module is counted, at module level and inside functions,
resolved to the file it loads (``from eatlas.registry import cache`` is the module ``registry/cache.py``,
``from eatlas.registry import Registry`` the package's ``__init__``). A module directly in ``eatlas/`` is
core; a module of a subpackage is in that subpackage's layer. Only ``from eatlas import __version__`` is
not counted: the package's face (``eatlas/__init__.py``, which sits above everything) holds the version.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import eatlas

PKG = Path(eatlas.__file__).resolve().parent

# Bottom to top: a module may import modules of its own layer and of the layers below it.
LAYERS = ("core", "stats", "registry", "encoders", "distributed", "methods", "store", "run", "outputs", "api", "cli",
          "measurements")
RANK = {name: i for i, name in enumerate(LAYERS)}
RANK["api"] = RANK["cli"]       # the library (eatlas.api) and the command line are the two faces on the same layers
# the one import that goes up by design: the package eatlas.run is also the library's run (calling it calls
# eatlas.api.run, imported when called), so that `eatlas.run(model)` and `eatlas.run.runner` are both what they say
UP_ALLOWED = {("eatlas.run", "eatlas.api")}
FACE = {"eatlas", "eatlas.__main__"}        # the package's face: `import eatlas`, `python -m eatlas`
STATS_MAY_IMPORT = {"eatlas.errors"}        # the statistics import nothing else of EATlas


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


MODULES = _modules()


def layer(mod: str) -> str:
    if mod in FACE:
        return "face"
    parts = mod.split(".")
    if len(parts) == 2 and MODULES[mod].name != "__init__.py":
        return "core"
    return parts[1]


def _resolve(name: str) -> str | None:
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(mod: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import of an EATlas module in ``mod``."""
    path = MODULES[mod]
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [[a.name] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            names = [a.name for a in node.names]
            if src == "eatlas" and names == ["__version__"]:
                continue
            # each imported name is a submodule, or a name of the module it is imported from
            targets = [[f"{src}.{n}", src] for n in names]
        else:
            continue
        for candidates in targets:
            for c in candidates:
                if c.split(".")[0] == "eatlas" and (found := _resolve(c)) and found != mod:
                    out.append((node.lineno, found))
                    break
    return out


EDGES = {mod: _imports(mod) for mod in MODULES}


def _unresolved(mod: str) -> list[tuple[int, str]]:
    """(line, module) for every import of an EATlas module that does not exist (e.g. a relative import
    with one dot too few after its module moved into a subpackage)."""
    path = MODULES[mod]
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            src = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            names = [src]
        else:
            continue
        out += [(node.lineno, n) for n in names if n.split(".")[0] == "eatlas" and n not in MODULES]
    return out


def _where(mod: str, line: int) -> str:
    return f"{MODULES[mod].relative_to(PKG.parent)}:{line}"


def test_every_module_has_a_layer():
    unknown = sorted(m for m in MODULES if layer(m) not in RANK and m not in FACE)
    assert not unknown, f"modules in a subpackage the layer table does not name: {unknown} (add it to LAYERS)"
    assert set(LAYERS) - {"core"} <= {layer(m) for m in MODULES}, "a layer of the table has no package"


def test_every_import_names_a_module():
    missing = [f"{_where(m, line)} imports {name}, which does not exist"
               for m in MODULES for line, name in _unresolved(m)]
    assert not missing, "\n".join(missing)


def test_imports_point_down():
    up = [f"{_where(a, line)} ({layer(a)}) imports {b} ({layer(b)})"
          for a, edges in EDGES.items() if a not in FACE for line, b in dict.fromkeys(edges)
          if (b in FACE or RANK[layer(b)] > RANK[layer(a)]) and (a, b) not in UP_ALLOWED]
    assert not up, "imports that go up a layer:\n" + "\n".join(up)


def test_statistics_import_nothing_but_errors():
    out = [f"{_where(a, line)} imports {b}" for a, edges in EDGES.items() if layer(a) == "stats"
           for line, b in edges if layer(b) != "stats" and b not in STATS_MAY_IMPORT]
    assert not out, "\n".join(out)


def _cycles() -> list[list[str]]:
    graph = {m: {b for _, b in e} for m, e in EDGES.items()}
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def test_no_import_cycle():
    assert _cycles() == []


def test_a_cycle_and_an_upward_import_are_caught(tmp_path, monkeypatch):
    """The checks above read real imports: a function-level import from stats up to the store is seen, and
    a relative import that names no module."""
    fake = dict(EDGES)
    fake["eatlas.stats.weat"] = [*EDGES["eatlas.stats.weat"], (1, "eatlas.store.db")]
    fake["eatlas.store.db"] = [*EDGES["eatlas.store.db"], (1, "eatlas.stats.weat")]
    monkeypatch.setattr(sys.modules[__name__], "EDGES", fake)
    with pytest.raises(AssertionError, match=r"stats/weat.py:1 \(stats\) imports eatlas.store.db"):
        test_imports_point_down()
    assert any("eatlas.stats.weat" in c and "eatlas.store.db" in c for c in _cycles())
    (tmp_path / "m.py").write_text("def f():\n    from ..store import db\n")
    (tmp_path / "n.py").write_text("from .files import write_atomic\n")
    monkeypatch.setitem(MODULES, "eatlas.stats.m", tmp_path / "m.py")
    monkeypatch.setitem(MODULES, "eatlas.stats.n", tmp_path / "n.py")
    assert _imports("eatlas.stats.m") == [(2, "eatlas.store.db")]
    assert _unresolved("eatlas.stats.n") == [(1, "eatlas.stats.files")]       # one dot too few


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += [b for _, b in EDGES[m] if b not in FACE]
    return seen


def _third_party(mod: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(MODULES[mod].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out - {"eatlas"}


def test_the_weat_function_needs_no_database_cli_or_console():
    """``eatlas.weat`` (the function) and everything its module imports, at any depth, reach no database,
    command line or console code."""
    mod = eatlas.weat.__module__
    assert mod == "eatlas.stats.weat"
    reach = _closure(mod)
    assert not {m for m in reach if m.startswith(("eatlas.store", "eatlas.cli", "eatlas.console"))}, reach
    libraries = set().union(*map(_third_party, reach))
    assert not libraries & {"duckdb", "rich", "argparse", "pandas", "torch"}, libraries
    code = ("import sys, eatlas\nr = eatlas.weat([[1., 0.], [.9, .1], [.8, .3]], [[0., 1.], [.1, .9], [.3, .8]], "
            "[[1., .1], [.9, 0.]], [[.1, 1.], [0., .9]], ci=None)\nassert r.effect_size > 0\n"
            # argparse itself is not checked here: scipy.special (the concepts' t distribution) imports it through
            # numpy.testing and unittest; the command line is eatlas.cli, which must not be loaded
            "print(sorted(m for m in ('duckdb', 'rich', 'eatlas.cli', 'pandas', 'torch') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded
