"""The conda envs of the workflow steps (issue #18), checked statically (CI has no conda):
each `envs/*.yaml` pins exactly the versions installed here (the ones CI tests), every
module a step's script can import (its ssfs modules followed through their imports,
function-level ones included) comes from a package of the step's env, and ssfs is
installed by a post-deploy script beside the env file (Snakemake runs it from its own copy
of the env, so a relative `pip: -e ..` cannot work)."""

import ast
import re
import sys
from importlib.metadata import packages_distributions, version
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ENVS = sorted((REPO / "envs").glob("*.yaml"))
#: conda-forge package -> Python distribution, where the names differ
DIST = {"matplotlib-base": "matplotlib"}
#: build tools of the post-deploy install (pyproject's build-system range, not a runtime pin)
BUILD = {"pip", "setuptools", "wheel"}
#: optional packages: a method that needs one says so (registry ``requires``) and is refused with an install hint
OPTIONAL = {"mrmr", "scikit_posthocs", "skrebate"}


def _deps(env: Path) -> dict[str, str]:
    """package -> version spec ('' when unpinned) of an env file; refuses nested pip sections."""
    spec = yaml.safe_load(env.read_text())
    out = {}
    for d in spec["dependencies"]:
        assert isinstance(d, str), f"{env.name}: a pip section ({d}) cannot install ssfs from Snakemake's env copy"
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", d)
        out[m.group(1).lower()] = m.group(2).strip()
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_env_pins_the_installed_versions(env):
    deps = _deps(env)
    assert deps.pop("python") == "={}.{}".format(*sys.version_info[:2])
    for pkg, spec in deps.items():
        if pkg in BUILD:
            continue
        assert spec.startswith("=") and not spec.startswith("=="), f"{env.name}: {pkg} is not pinned ({spec!r})"
        tested = version(DIST.get(pkg, pkg))
        assert spec[1:] == tested, f"{env.name}: {pkg}{spec} but CI tests {tested}"


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_post_deploy_script_installs_ssfs_from_the_repository(env):
    script = env.with_name(env.stem + ".post-deploy.sh")
    assert script.is_file(), f"{script.name} missing: Snakemake would build the env without ssfs"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    assert re.search(r'pip install --no-deps .*"\$SSFS_REPO"', text)
    assert "import sys, ssfs" in text  # the install is verified inside the env
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert 'os.environ.setdefault("SSFS_REPO", str(Path(workflow.basedir).resolve()))' in common


# ------------------------------------------------------------------ modules per step
def _steps() -> dict[str, tuple[Path, Path]]:
    """rule -> (script, env file), from the rule files."""
    out = {}
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        for block in re.split(r"\n(?=\s*rule( \w+)?:)", smk.read_text()):
            if not block or not re.match(r"\s*rule( \w+)?:", block):
                continue
            # `rule x:`, or `rule:` with `name: batch_rule("select", ...)` (one rule per chunk and batch)
            name = re.match(r"\s*rule (\w+):", block) or re.search(
                r"name:\s*\n\s*(?:batch_rule\()?f?\"([\w{}]+)", block)
            conda = re.search(r"conda:\s*\n\s*\"([^\"]+)\"", block)
            script = re.search(r"script:\s*\n\s*\"([^\"]+)\"", block)
            if name and script:
                assert conda, f"rule {name.group(1)} has a script but no conda env"
                out[name.group(1)] = ((smk.parent / script.group(1)).resolve(), (smk.parent / conda.group(1)).resolve())
    return out


def _imports(path: Path) -> set[str]:
    """Every absolute or relative module a file imports (at any depth), as dotted names."""
    pkg = _module_name(path).rsplit(".", 1)[0] if path.is_relative_to(REPO / "src") else ""
    if path.name == "__init__.py":
        pkg = _module_name(path)
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}  # `from . import methods`
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO / "src").with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _module_file(name: str) -> Path | None:
    base = REPO / "src" / Path(*name.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _third_party(script: Path) -> set[str]:
    """Top-level non-ssfs, non-stdlib modules reachable from a workflow script."""
    todo, seen, found = [script], set(), set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if f.name == "registry.py":  # the registry imports every method module at run time
            todo += [m for m in (REPO / "src/ssfs/methods").glob("*.py")]
        for mod in _imports(f):
            top = mod.split(".")[0]
            if top == "ssfs":
                g = _module_file(mod)
                if g is not None:
                    todo.append(g)
                    # importing a.b.c runs a/__init__.py and a/b/__init__.py too
                    for i in range(1, mod.count(".") + 1):
                        init = _module_file(".".join(mod.split(".")[:i]))
                        if init is not None:
                            todo.append(init)
            elif top and top not in sys.stdlib_module_names and top != "__future__":
                found.add(top)
    return found


STEPS = _steps()


def test_every_workflow_step_has_an_env():
    assert {"prepare", "supervision", "evaluate", "aggregate", "report"} <= set(STEPS)
    assert any(r.startswith("select") for r in STEPS)


@pytest.mark.parametrize("rule", sorted(STEPS))
def test_every_module_a_step_imports_is_in_its_env(rule):
    script, env = STEPS[rule]
    provided = {_norm(DIST.get(p, p)) for p in _deps(env)}
    dists = packages_distributions()
    missing = []
    for mod in sorted(_third_party(script) - OPTIONAL):
        names = {_norm(d) for d in dists.get(mod, [mod])}
        if not names & provided:
            missing.append(f"{mod} ({', '.join(sorted(names))})")
    assert not missing, f"rule {rule} ({script.name}) imports modules not in {env.name}: {missing}"


def test_optional_packages_have_install_hints():
    from ssfs.registry import PIP_NAMES, get_method, list_methods

    required = {get_method(m).requires for m in list_methods()} - {None}
    assert required <= OPTIONAL | {"scanpy"}  # scanpy is in every env
    assert set(PIP_NAMES) >= OPTIONAL  # each optional package has an install hint


def _constraints() -> dict[str, str]:
    out = {}
    for line in (REPO / "envs" / "pip-constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, ver = line.partition("==")
            out[_norm(name)] = ver
    return out


@pytest.mark.parametrize("env", ENVS, ids=lambda p: p.stem)
def test_env_pins_match_the_pip_constraints(env):
    """README's install uses envs/pip-constraints.txt, so CI tests exactly those versions whatever the
    registry has released since (a new PyYAML patch broke the pins once): the envs pin the same."""
    pins = _constraints()
    for pkg, spec in _deps(env).items():
        if pkg in BUILD or pkg == "python":
            continue
        assert pins.get(_norm(DIST.get(pkg, pkg))) == spec[1:], f"{env.name}: {pkg}{spec} vs pip-constraints.txt"
