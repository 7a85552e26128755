"""``tvm.backend``'s modules import each other without a circle: each one imports first in a fresh
interpreter, and the graph of their imports (read from the installed sources, function-level
imports included) has no cycle."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from conftest import run_python

PACKAGE = "tvm.backend"


def _sources() -> dict[str, Path]:
    """Module name -> source file of the core's own tvm.backend modules (no backend hooks)."""
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.origin is not None
    directory = Path(spec.origin).parent
    return {
        PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}": path
        for path in sorted(directory.glob("*.py"))
    }


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in its source."""
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = f"{base}.{node.module}" if node.level and node.module else node.module or base
            found.add(target)
            # `from . import loader` imports the submodule `loader`.
            found.update(f"{target}.{alias.name}" for alias in node.names)
    # Importing a submodule imports its parent package first; that is not an edge of a circle.
    return {name for name in found if name in known and name != PACKAGE and name != module}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for succ in sorted(graph[node]):
            if state.get(succ) == "open":
                return [*stack[stack.index(succ) :], succ]
            if succ not in state and (found := visit(succ)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_backend_import_graph_has_no_cycle():
    sources = _sources()
    graph = {name: _imports(name, path, set(sources)) for name, path in sources.items()}
    assert {f"{PACKAGE}.loader", f"{PACKAGE}._discovery", f"{PACKAGE}._registry"} <= set(graph)
    # The registry is the leaf everything reads: it imports nothing of tvm.backend.
    assert graph[f"{PACKAGE}._registry"] <= {f"{PACKAGE}._declaration"}
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("module", sorted(_sources()))
def test_each_backend_module_imports_first_in_a_fresh_interpreter(module):
    proc = run_python(f"import importlib; importlib.import_module({module!r}); print('ok')")
    assert proc.stdout.strip().endswith("ok")
