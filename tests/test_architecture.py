"""The package's shape: no import cycle (function-local imports included), no function
over 80 lines, methods never import the runner, the registry's methods table in the README."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ssfs"
MAX_FUNCTION_LINES = 80


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {_module_name(p): ast.parse(p.read_text(), str(p)) for p in sorted(SRC.rglob("*.py"))}


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom, known: set[str]) -> set[str]:
    """The ssfs modules an import statement loads (``from . import x`` counts x)."""
    if node.level:
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    out = set()
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.add(sub if sub in known else target)
    return {m for m in out if m in known}


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    graph = {}
    for name, tree in mods.items():
        is_pkg = (SRC.parent / Path(*name.split("."))).is_dir()
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                deps |= _resolve(name, is_pkg, node, known)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in known}
        # a package's __init__ importing its own submodules is not a cycle
        graph[name] = {d for d in deps if d != name and not d.startswith(name + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state and (c := visit(v)):
                return c
        state[u] = 2
        stack.pop()
        return None

    for u in sorted(graph):
        if u not in state and (c := visit(u)):
            return c
    return None


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    assert find_cycle(import_graph()) is None


def test_methods_and_building_blocks_never_import_the_runner():
    graph = import_graph()
    low = [m for m in graph if m.startswith(("ssfs.methods", "ssfs.preprocess", "ssfs.experiment.metrics",
                                             "ssfs._validation"))]
    offenders = sorted(m for m in low if "ssfs.runner" in graph[m])
    assert offenders == []


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_function_over_80_lines(path):
    tree = ast.parse(path.read_text())
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []
