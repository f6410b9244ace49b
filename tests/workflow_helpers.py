"""Shared pieces of the workflow-level reliability tests (reproducibility, interruption).

A tiny config (builtin wine, two randomized methods, two repetitions) runs in a
temporary directory with ``-s <repo>/Snakefile``. :func:`reference_run` runs it once
per test process, uninterrupted with ``--cores 1``, and is the yardstick the other
runs are compared with byte for byte.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
PROFILE = REPO / "profiles" / "default"

#: the tiny config, shared with CI's lint step: both methods draw random numbers (bagging of
#: constraints, bootstrap of labeled samples in 2 threads), so byte-identical outputs prove the
#: seeding, not just determinism
TINY = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())

#: the per-repetition / per-method outputs whose bytes must not depend on cores, order or interruption
COMPARED = ("splits", "constraints", "rankings", "scores")
#: targets of a run that stops at the per-method score tables (no aggregate / report jobs)
SCORE_TARGETS = [f"results/wine/base/scores/{m}.tsv" for m in TINY["methods"]]


def config(**overrides) -> dict:
    cfg = copy.deepcopy(TINY)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    return cfg


def command(workdir: Path, cfg: dict, *extra, cores: int = 1) -> list[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    cfg_path = workdir / "config.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--directory", str(workdir),
            "--configfile", str(cfg_path), "--cores", str(cores), *extra]


def snakemake(workdir: Path, cfg: dict, *extra, cores: int = 1, check: bool = True, timeout: float = 600):
    res = subprocess.run(command(workdir, cfg, *extra, cores=cores), capture_output=True, text=True,
                         timeout=timeout)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-5000:]}")
    return res


def tables(workdir: Path) -> dict[str, bytes]:
    """relative path -> bytes of every split, constraint, ranking and score file."""
    base = workdir / "results" / "wine" / "base"
    out = {}
    for sub in COMPARED:
        for f in sorted((base / sub).rglob("*")):
            if f.is_file() and not f.name.startswith("."):
                out[str(f.relative_to(base))] = f.read_bytes()
    return out


_REFERENCE: dict[str, Path] = {}


def reference_run(tmp_path_factory) -> Path:
    """Working directory of one uninterrupted ``--cores 1`` run of :data:`TINY` up to the
    score tables (run once per test process)."""
    if "ref" not in _REFERENCE:
        wd = tmp_path_factory.mktemp("reference")
        snakemake(wd, config(), *SCORE_TARGETS, cores=1)
        _REFERENCE["ref"] = wd
    return _REFERENCE["ref"]
