"""Interruption and resumption of the workflow (issue 8).

The tiny config runs with one selection job per (method, repetition) on one core;
as soon as the first ranking file appears (selection jobs are running) the whole
process tree is stopped as a cluster would: SIGTERM to the snakemake process
group, then SIGKILL to every process of the tree still alive. Then:

* no output looks complete without being so: every file left under results/ parses,
  and every ranking file left is byte-identical to the uninterrupted run's (writers go
  through :mod:`ssfs.io.atomic`, whose temporary files are hidden ``.*.tmp``);
* re-running as a user would (the default profile, which sets rerun-incomplete)
  completes, does not redo the steps that had finished (prepared data, splits,
  constraints keep their modification times), and gives tables byte-identical to an
  uninterrupted run;
* the report of the completed run states the seed, the configuration and the versions
  of ssfs, Python and the key packages.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_helpers import PROFILE, command, config, reference_run, snakemake, tables

from ssfs._checked import END, read_checked_tsv

psutil = pytest.importorskip("psutil")  # a dependency of snakemake

pytestmark = pytest.mark.slow


def _kill_tree(proc: subprocess.Popen, grace: float = 0.5) -> None:
    """SIGTERM the process group of ``proc`` (started with start_new_session), then SIGKILL
    every process of its tree (by pid: jobs may sit in other process groups)."""
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    time.sleep(grace)
    with contextlib.suppress(psutil.NoSuchProcess):  # processes started after the listing above
        tree += psutil.Process(proc.pid).children(recursive=True)
    if proc.poll() is None:
        proc.kill()  # snakemake itself; reaped by Popen so its exit status is kept
    for p in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    proc.wait(timeout=30)
    psutil.wait_procs(tree, timeout=30)


def _check_readable(path: Path) -> None:
    """Raise if ``path`` is not a complete file of its kind."""
    suffix = "".join(path.suffixes[-2:]) if path.name.endswith(".components.npy") else path.suffix
    if suffix == ".tsv":  # intermediate tables prove they are whole (ssfs._checked); final tables are plain
        checked = path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1].startswith(END.encode())
        df = read_checked_tsv(path) if checked else pd.read_csv(path, sep="\t")
        assert len(df.columns) >= 2, path
        final = "tables" in path.parts or "benchmarks" in path.parts or path.name == "consensus.tsv"
        assert checked != final, path
    elif suffix == ".json":
        json.loads(path.read_text())
    elif suffix in (".npy", ".components.npy"):
        np.load(path)
    elif suffix == ".h5ad":
        import anndata

        anndata.read_h5ad(path)
    elif suffix in (".log", ".html", ".md", ".tex", ".png", ".pdf", ".svg") or path.name == ".snakemake_timestamp":
        pass
    else:
        raise AssertionError(f"unexpected output {path}")


def _wait_for_first_ranking(proc, rankings: Path, log: Path, timeout: float = 300) -> Path:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        found = sorted(p for p in rankings.glob("*/*.tsv") if not p.name.startswith("."))
        if found:
            return found[0]
        if proc.poll() is not None:
            raise AssertionError(f"workflow ended ({proc.returncode}) before any ranking was written:\n"
                                 f"{log.read_text()[-3000:]}")
        time.sleep(0.02)
    raise AssertionError("no ranking file within the time limit")


def test_profile_sets_rerun_incomplete():
    prof = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert prof.get("rerun-incomplete") is True


def test_kill_during_selection_then_resume(tmp_path, tmp_path_factory):
    ref = tables(reference_run(tmp_path_factory))
    wd = tmp_path / "run"
    # one selection job per repetition: 4 selection jobs, the kill lands among them
    cfg = config(execution={"reps_per_job": 1})
    log = tmp_path / "interrupted.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(command(wd, cfg, cores=1), stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            _wait_for_first_ranking(proc, wd / "results/wine/base/rankings", log)
        finally:
            _kill_tree(proc)
    assert proc.returncode != 0, "the workflow finished before it could be interrupted"

    # --- nothing left that looks complete but is not
    results = wd / "results"
    left = [p for p in results.rglob("*") if p.is_file()]
    partial = [p for p in left if p.name.endswith(".tmp")]
    assert all(p.name.startswith(".") for p in partial), partial  # temporaries are hidden
    for p in left:
        if p not in partial:
            _check_readable(p)
    # snakemake removes the outputs of the job it stopped; whatever ranking is left is complete
    rank_files = [p for p in (results / "wine/base/rankings").rglob("*.tsv") if not p.name.startswith(".")]
    for p in rank_files:
        assert p.read_bytes() == ref[str(p.relative_to(results / "wine/base"))], p
    n_rankings_before = len(rank_files)
    assert n_rankings_before < 4, "all selection jobs had finished: the kill came too late to test anything"
    done_before = {p: p.stat().st_mtime_ns for p in [results / "wine/prepared.h5ad",
                                                     *results.glob("wine/base/splits/*.json"),
                                                     *results.glob("wine/base/constraints/*.tsv")]}
    assert results / "wine/prepared.h5ad" in done_before and len(done_before) == 5

    # --- resume as a user would: the same command (the workflow profile next to the Snakefile,
    # applied by Snakemake itself, sets rerun-incomplete); two cores this time
    res = snakemake(wd, cfg, cores=2)
    assert (results / "report.html").is_file(), res.stderr[-2000:]
    for p, mtime in done_before.items():
        assert p.stat().st_mtime_ns == mtime, f"{p} was recomputed although it was complete"
    got = tables(wd)
    assert sorted(got) == sorted(ref)
    diff = [k for k in ref if got[k] != ref[k]]
    assert not diff, f"tables differ from the uninterrupted run: {diff}"
    new_tmp = set(results.rglob("*.tmp")) - set(partial)
    assert not new_tmp, f"the resumed run left temporary files: {sorted(new_tmp)}"

    # --- the report states seed, configuration and versions (layout-independent: tags stripped)
    html = (results / "report.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert re.search(r"\bseed:? 5\b", text), "seed not stated"
    import platform

    pkgs = {"python": platform.python_version(),
            **{pkg: version(pkg) for pkg in ("ssfs", "numpy", "scipy", "pandas", "scikit-learn", "anndata",
                                             "snakemake")}}
    for pkg, ver in pkgs.items():
        assert re.search(rf"\b{re.escape(pkg)}:? {re.escape(ver)}\b", text), f"version of {pkg} not stated"
    assert "n_bags: 5" in html and "method: bootstrap_rank" in html, "configuration not stated"
