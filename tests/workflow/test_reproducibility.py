"""Reproducibility (issue 8): the same config and seed give the same bytes.

The tiny config (two randomized methods, one of them threaded) run
with ``--cores 1`` and with ``--cores 2`` (jobs in a different order, two at once)
gives byte-identical splits, constraints, rankings and score tables; another seed
changes the splits; the seed derivation does not depend on Python's per-process hash
salt. Each method's own reproducibility is part of tests/methods/test_contract.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from workflow_helpers import SCORE_TARGETS, config, reference_run, snakemake, tables

from ssfs.seeding import derive_rng

# ----------------------------------------------------------------------------- workflow


@pytest.mark.slow
def test_cores_1_and_2_give_identical_tables(tmp_path, tmp_path_factory):
    ref = tables(reference_run(tmp_path_factory))  # --cores 1
    snakemake(tmp_path, config(), *SCORE_TARGETS, cores=2)
    got = tables(tmp_path)
    # 2 splits + 2 constraint files + 2 methods x 2 reps (rankings; no components: not extractions) + 2 scores
    assert len(ref) == 2 + 2 + 4 + 2
    assert sorted(got) == sorted(ref)
    diff = [k for k in ref if got[k] != ref[k]]
    assert not diff, f"--cores 2 changed {diff}"
    # the tables hold real rankings, not something trivially equal
    assert b"\t" in ref["rankings/bcs/0.tsv"] and ref["rankings/bcs/0.tsv"] != ref["rankings/bcs/1.tsv"]


@pytest.mark.slow
def test_one_job_per_method_gives_the_batched_tables(tmp_path, tmp_path_factory):
    """execution.batch_methods: false (one select and one evaluate job per method, as on a
    cluster) writes the same bytes as the default batched jobs, and runs one job per method."""
    ref = tables(reference_run(tmp_path_factory))
    cfg = config(execution={"batch_methods": False, "reps_per_job": None})
    plan = snakemake(tmp_path, cfg, "-n", "--quiet=rules", *SCORE_TARGETS, cores=1).stdout
    jobs = dict(line.split()[:2] for line in plan.splitlines() if line[:1].isalpha() and len(line.split()) == 2)
    assert jobs.get("select_0_0") == jobs.get("select_0_1") == "1" and "select_0" not in jobs, plan
    snakemake(tmp_path, cfg, *SCORE_TARGETS, cores=2)
    got = tables(tmp_path)
    assert sorted(got) == sorted(ref)
    assert [k for k in ref if got[k] != ref[k]] == []


def _plan(workdir, cfg) -> dict[str, str]:
    """rule -> number of jobs of a dry run up to the score tables."""
    out = snakemake(workdir, cfg, "-n", "--quiet=rules", *SCORE_TARGETS, cores=1).stdout
    return dict(line.split()[:2] for line in out.splitlines() if line[:1].isalpha() and len(line.split()) == 2)


@pytest.mark.slow
def test_fused_steps_give_the_tables_of_one_job_per_step(tmp_path, tmp_path_factory):
    """execution.fuse_steps (default true: prepare with supervision, select with evaluate, one
    job each per dataset) writes the same bytes as one job per step (false)."""
    ref = tables(reference_run(tmp_path_factory))  # fused
    fused = _plan(tmp_path / "plan", config())
    assert fused.get("prepare") == fused.get("select_0") == "1" and "supervision" not in fused, fused
    assert "evaluate" not in fused, fused
    cfg = config(execution={"fuse_steps": False})
    apart = _plan(tmp_path, cfg)
    assert apart.get("supervision") == apart.get("evaluate") == apart.get("select_0") == "1", apart
    whole = {k: v for k, v in (line.split()[:2] for line in snakemake(
        tmp_path / "plan", config(), "-n", "--quiet=rules", cores=1).stdout.splitlines() if len(line.split()) == 2)}
    assert whole.get("aggregate") == "1" and "report" not in whole, whole  # the aggregate job writes the report
    snakemake(tmp_path, cfg, *SCORE_TARGETS, cores=2)
    got = tables(tmp_path)
    assert sorted(got) == sorted(ref) and len(ref) == 2 + 2 + 4 + 2
    assert [k for k in ref if got[k] != ref[k]] == []


@pytest.mark.slow
def test_other_seed_changes_splits(tmp_path, tmp_path_factory):
    ref = reference_run(tmp_path_factory)
    targets = [f"results/wine/base/splits/{r}.json" for r in (0, 1)]
    snakemake(tmp_path, config(seed=6), *targets, cores=1)
    for r in (0, 1):
        a = json.loads((ref / targets[r]).read_text())
        b = json.loads((tmp_path / targets[r]).read_text())
        assert a["train"] != b["train"] and a["labeled"] != b["labeled"]
        assert len(a["train"]) == len(b["train"]) and len(a["labeled"]) == len(b["labeled"]) == 9
    # and the repetitions of one run differ from each other
    s0, s1 = (json.loads((ref / t).read_text()) for t in targets)
    assert s0["train"] != s1["train"]


def test_derived_seeds_do_not_depend_on_hash_salt():
    code = ("from ssfs.seeding import derive_rng; "
            "print(derive_rng(5, 'wine', 'split', 1).integers(0, 2**31, 4).tolist())")
    outs = set()
    for salt in ("1", "2"):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": salt})
        assert res.returncode == 0, res.stderr
        outs.add(res.stdout.strip())
    here = str(derive_rng(5, "wine", "split", 1).integers(0, 2**31, 4).tolist())
    assert outs == {here}
    # distinct keys give distinct streams
    assert derive_rng(5, "wine", "split", 0).integers(2**62) != derive_rng(5, "wine", "split", 1).integers(2**62)
    assert derive_rng(5, "wine", "split", 0).integers(2**62) != derive_rng(6, "wine", "split", 0).integers(2**62)
