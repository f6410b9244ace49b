"""The package's shape: imports point down an allowed order of packages (function-local
imports included), no import cycle, few function-local imports of ssfs modules and each with
its reason, no function over 80 lines, methods never import the runner."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ssfs"
MAX_FUNCTION_LINES = 80
#: no module over this many lines (662 today: methods/_shared/graph.py); a larger one becomes a package of
#: modules, as methods/propagate/ did (2,635 lines before session 60)
MAX_MODULE_LINES = 700
#: the modules of the ``propagate`` package in the order its docstring gives: each imports only those before it
PROPAGATE_ORDER = ("model", "reading", "ordering", "graphs", "weights", "label_free", "judges", "fit", "notes",
                   "score")

#: the packages of ssfs from the bottom up: a module may import modules of its own package and
#: of packages in lower layers only; packages of one layer do not import each other. A package
#: is a top-level module (``ranking``) or a sub-package (``methods._shared``, ``experiment``);
#: ``ssfs`` is the package's ``__init__`` (the names users import). The registry finds the
#: methods by name at run time (plugin discovery, :data:`ssfs.registry.METHODS_PACKAGE`): the
#: methods import it to register, it imports none of them.
LAYERS = (
    ("errors", "_docs"),
    ("_jit", "_outputs", "_checked", "_tiles"),
    ("seeding", "_sort_kernels", "_threads", "_progress"),
    ("labels", "params"),
    ("_validation", "ranking", "constraints"),
    ("preprocess", "registry", "_numerics"),
    ("methods._shared",),
    ("methods",),
    ("runner", "io"),
    ("experiment",),
    ("selector", "tl", "singlecell"),
    ("report", "workflow", "simulate"),
    ("pl",),
    ("ssfs",),
    ("cli",),
)
#: at most this many imports of ssfs modules inside functions; each says why on its line or
#: in a comment just above its block of imports (``# lazy: <reason>``): start-up time only
MAX_LOCAL_IMPORTS = 25  # 24 today


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


def _imports(name: str, node: ast.AST, known: set[str]) -> set[str]:
    """The ssfs modules an import statement of module ``name`` loads (empty for other nodes)."""
    if isinstance(node, ast.ImportFrom):
        return _resolve(name, (SRC.parent / Path(*name.split("."))).is_dir(), node, known)
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    return set()


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    graph = {}
    for name, tree in mods.items():
        deps = set().union(*(_imports(name, node, known) for node in ast.walk(tree)))
        # a package's __init__ importing its own submodules is not a cycle
        graph[name] = {d for d in deps if d != name and not d.startswith(name + ".")}
    return graph


def package_of(module: str) -> str:
    """``ssfs.methods._shared.graph`` -> ``methods._shared``, ``ssfs.io.h5ad`` -> ``io``,
    ``ssfs.ranking`` -> ``ranking``, ``ssfs`` -> ``ssfs``."""
    parts = module.split(".")[1:]
    if not parts:
        return "ssfs"
    return ".".join(parts[:2]) if parts[:2] == ["methods", "_shared"] else parts[0]


def layer_violations(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """``a -> b`` for every import of a module ``b`` that is not below ``a``'s package in ``layers``
    (a package missing from ``layers`` is a violation too: place it)."""
    rank = {pkg: i for i, layer in enumerate(layers) for pkg in layer}
    out = []
    for a in sorted(graph):
        pa = package_of(a)
        if pa not in rank:
            out.append(f"{a}: package {pa!r} is in no layer")
            continue
        for b in sorted(graph[a]):
            pb = package_of(b)
            if pb != pa and rank.get(pb, len(layers)) >= rank[pa]:
                out.append(f"{a} -> {b}")
    return out


def local_imports(tree: ast.Module, name: str, known: set[str], lines: list[str]) -> list[tuple[int, bool]]:
    """(line, has a reason) of every import of an ssfs module inside a function: the reason is a
    ``# lazy:`` comment on the lines of its block of consecutive imports or just above it."""
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        bodies = [b for n in ast.walk(fn) for f in ("body", "orelse", "finalbody")
                  if isinstance(b := getattr(n, f, None), list)]
        for body in bodies:
            i = 0
            while i < len(body):
                j = i
                while j < len(body) and isinstance(body[j], ast.Import | ast.ImportFrom):
                    j += 1
                if j == i:
                    i += 1
                    continue
                block = body[i:j]
                start = block[0].lineno - 1
                while start > 0 and lines[start - 1].strip().startswith("#"):
                    start -= 1
                reason = any("# lazy:" in line for line in lines[start:block[-1].end_lineno])
                out |= {(n.lineno, reason) for n in block if _imports(name, n, known)}
                i = j
    return sorted(out)


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


def test_layer_checker_finds_a_planted_climb():
    graph = {"ssfs.methods.cls": {"ssfs.methods._shared.graph", "ssfs.experiment.splits"},
             "ssfs.methods._shared.graph": {"ssfs.errors"}, "ssfs.experiment.splits": {"ssfs.methods.cls"},
             "ssfs.report.build": {"ssfs.workflow.config"}, "ssfs.workflow.config": set(), "ssfs.errors": set(),
             "ssfs.newpkg": set()}
    assert layer_violations(graph) == ["ssfs.methods.cls -> ssfs.experiment.splits", "ssfs.newpkg: package "
                                       "'newpkg' is in no layer", "ssfs.report.build -> ssfs.workflow.config"]


def test_imports_point_down_the_layers():
    """Function-local imports count: a lazy import that climbs a layer is a package loop too."""
    assert layer_violations(import_graph()) == []


def test_local_import_finder_reads_the_reason():
    src = ("def f():\n    import numpy\n\n    # lazy: anndata\n    from .io import x\n    from .tl import y\n"
           "def g():\n    if True:\n        from .ranking import z\n")
    known = {"ssfs.io", "ssfs.tl", "ssfs.ranking"}
    assert local_imports(ast.parse(src), "ssfs.cli", known, src.splitlines()) == [
        (5, True), (6, True), (9, False)]


def test_few_function_local_imports_each_with_its_reason():
    known, found = set(_modules()), []
    for path in sorted(SRC.rglob("*.py")):
        name, text = _module_name(path), path.read_text()
        found += [(f"{name}:{line}", ok) for line, ok in local_imports(ast.parse(text), name, known, text.splitlines())]
    assert [where for where, ok in found if not ok] == [], "say why on the line: # lazy: <start-up reason>"
    assert len(found) <= MAX_LOCAL_IMPORTS, f"{len(found)} function-local imports of ssfs modules"


def test_methods_and_building_blocks_never_import_the_runner():
    graph = import_graph()
    low = [m for m in graph if m.startswith(("ssfs.methods", "ssfs.preprocess", "ssfs.experiment.metrics",
                                             "ssfs._validation"))]
    offenders = sorted(m for m in low if "ssfs.runner" in graph[m])
    assert offenders == []


def test_no_module_over_700_lines():
    long = {str(p.relative_to(SRC)): n for p in sorted(SRC.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_propagate_s_modules_import_only_those_before_them():
    graph = import_graph()
    package = "ssfs.methods.propagate"
    assert {m for m in graph if m.startswith(package + ".")} == {f"{package}.{m}" for m in PROPAGATE_ORDER}
    climbs = [f"{a} -> {b}" for i, a in enumerate(PROPAGATE_ORDER)
              for b in PROPAGATE_ORDER[i:] if f"{package}.{b}" in graph[f"{package}.{a}"]]
    assert climbs == []


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_function_over_80_lines(path):
    tree = ast.parse(path.read_text())
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def test_the_ranking_jobs_start_without_scikit_learn_scanpy_or_scipy_stats():
    """A selection-mode job (load PBMC or waveform, rank with propagate, write the tables) and the
    prepare job of either (its holdout split) import neither scikit-learn nor scanpy nor
    scipy.stats, nor do the figure and report modules when imported: each would add 0.4-2 s of
    CPU to every such job of a run."""
    import subprocess
    import sys

    code = ("import sys; import ssfs.workflow.pipeline, ssfs.report.selection, ssfs.workflow.scripting; "
            "from ssfs.io.builtin import load_builtin; from ssfs import run_method; "
            "a = load_builtin('pbmc68k_reduced'); load_builtin('waveform', {'n_samples': 60}); "
            "y = a.obs['label'].cat.codes.to_numpy().copy(); y[5:] = -1; "
            "run_method('propagate', a.X[:120], y[:120]); import ssfs.report.figures, ssfs.report.build; "
            "from ssfs.experiment.splits import make_split; from ssfs.seeding import derive_rng; "
            "make_split(a.obs['label'].cat.codes.to_numpy(), 0, derive_rng(0, 's'), derive_rng(0, 'l')); "
            "print(sorted(m for m in ('sklearn', 'scanpy', 'scipy.stats') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
