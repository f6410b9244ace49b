"""The workflow through the SLURM profile on a real (local) SLURM cluster.

Runs only where ``sinfo`` reports an idle node, e.g. after
``bash workflow/scripts/local_slurm.sh install && bash workflow/scripts/local_slurm.sh start``
(.ci/run does this). The tiny config of workflow_helpers, with one job per
(dataset, method, repetition) and the bootstrap ensemble split into member jobs, goes
through ``--profile profiles/slurm``;
the test proves that every non-local job was an sbatch job (the scheduler's own
records: ``squeue -t all`` keeps finished jobs for MinJobAge, 3600 s on the local
cluster) and that the ranking/score tables are byte-identical to a local run.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import workflow_helpers as wf

PROFILE = wf.REPO / "profiles" / "slurm"
TIMEOUT = 600


def _idle_node() -> bool:
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return False
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], check=False, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and any(s.startswith(("idle", "mix")) for s in out.stdout.split())


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not _idle_node(), reason="no SLURM cluster with an idle node (workflow/scripts/local_slurm.sh start)"
    ),
]


def _squeue_records(ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """job id -> (state, work dir, comment) from the controller's job records."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%Z|%k"],
                         check=False, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    recs = {}
    for line in out.stdout.splitlines():
        jid, state, wd, comment = line.strip().split("|", 3)
        recs[jid] = (state, wd, comment)
    return recs


def test_tiny_workflow_through_slurm_equals_local_run(tmp_path_factory):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    reference = wf.reference_run(tmp_path_factory)  # local, --cores 1
    wd = tmp_path_factory.mktemp("slurm")
    # one cluster job per (dataset, method, repetition); the bootstrap ensemble split into 2 member jobs
    cfg = wf.config(execution={"reps_per_job": 1, "member_chunks": {"boot": 2}})
    cmd = ["timeout", "-k", "10", str(TIMEOUT),
           *wf.command(wd, cfg, "--profile", str(PROFILE), "--slurm-keep-successful-logs",
                       "--jobs", "4", "--quiet=host",  # print the "rule x:" lines the default profile hides
                       *wf.SCORE_TARGETS, cores=1)]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=TIMEOUT + 30)
    log = res.stdout + res.stderr
    if res.returncode != 0:
        subprocess.run(wf.command(wd, cfg, "--unlock", cores=1), check=False, capture_output=True, timeout=120)
    assert res.returncode == 0, f"snakemake via SLURM failed ({res.returncode}, 124 = timeout):\n{log[-6000:]}"

    # every job Snakemake ran as a cluster job ("rule x:", not "localrule x:") was submitted with sbatch
    cluster_jobs = re.findall(r"^rule (\w+):$", log, flags=re.MULTILINE)
    ids = re.findall(r"has been submitted with SLURM jobid (\d+)", log)
    assert len(cluster_jobs) >= 7 and len(ids) == len(cluster_jobs) == len(set(ids)), log[-3000:]
    assert sum(re.fullmatch(r"select_\d+", r) is not None for r in cluster_jobs) == 2  # bcs x 2 repetitions
    assert cluster_jobs.count("select_members") == 4 and cluster_jobs.count("combine_members") == 2  # boot

    # ... and the scheduler has a finished record of each, run in our working directory
    recs = _squeue_records(ids)
    assert set(recs) == set(ids)
    for jid, (state, workdir, comment) in recs.items():
        assert state == "COMPLETED", (jid, state)
        assert workdir == str(wd)
        assert comment.startswith("rule_")
    assert sorted(c.split("_wildcards")[0].removeprefix("rule_") for _, _, c in recs.values()) == sorted(cluster_jobs)
    # the plugin's per-job logs carry the same job ids
    logs = {p.stem for p in (wd / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert logs == set(ids)

    # outputs byte-identical to the local run
    got, want = wf.tables(wd), wf.tables(reference)
    assert set(got) == set(want) and len(got) >= 8
    different = [k for k in want if got[k] != want[k]]
    assert not different, f"SLURM and local outputs differ: {different}"
