"""Issue #32 item 3: the default workflow run, fresh, its CPU time and where it goes.

    python benchmarks/bench_default_run.py                    # measure, one table per job
    python benchmarks/bench_default_run.py --max-cpu 180 --max-aggregate 20   # the CI check

Runs ``snakemake --cores 2`` of the shipped default config (``config/config.yaml``) in a fresh
results folder (a new temporary working directory: nothing reused), in a child process waited
for with ``os.wait4``: wall seconds, CPU seconds (user + system of snakemake and every job it
ran) and the largest resident set of any one process. Each Python process of the run appends
its own CPU seconds, wall seconds and script to a log (a ``sitecustomize`` on ``PYTHONPATH``
registers an ``atexit`` hook), so the table shows what each job costs, and snakemake's own
share (DAG building, scheduling) is the rest.

``--max-cpu`` / ``--max-aggregate``: exit with status 1 when the whole run's CPU seconds or the
``aggregate`` job's CPU seconds (CPU: a loaded runner stretches wall time) exceed them, a
benchmark-style budget with a generous margin: the goals are 45 s CPU and 5 s, the run took
89 s with propagate in the default config, and this VM kind's speed varies about 2x from day
to day (docs/speed.md).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: written into a folder put first on the children's PYTHONPATH: every Python process of the run
#: logs its CPU and wall seconds and its script when it exits
SITECUSTOMIZE = """
import atexit, os, resource, sys, time
_t0 = time.perf_counter()
_script = next((a for a in sys.argv if a.endswith('.py')), ' '.join(sys.argv[:2]))
_prof = None
if os.environ.get('SSFS_BENCH_PROFILE') and f".{os.environ['SSFS_BENCH_PROFILE']}.py" in _script:
    import cProfile
    _prof = cProfile.Profile()
    _prof.enable()
def _ssfs_bench_log():
    u = resource.getrusage(resource.RUSAGE_SELF)
    if _prof is not None:
        _prof.disable()
        _prof.dump_stats(f"{os.environ['SSFS_BENCH_LOG']}.{os.getpid()}.prof")
    with open(os.environ['SSFS_BENCH_LOG'], 'a') as fh:
        fh.write(f"{u.ru_utime + u.ru_stime:.3f}\\t{time.perf_counter() - _t0:.3f}\\t"
                 f"{u.ru_maxrss / 1024:.0f}\\t{_script}\\n")
atexit.register(_ssfs_bench_log)
"""


def job_name(script: str) -> str:
    """A job's rule script (snakemake runs a copy named ``tmpXXXX.<script>.py``) or the command."""
    m = re.search(r"tmp[\w-]+\.(\w+)\.py$", script)
    if m:
        return m.group(1)
    return "snakemake" if "snakemake" in script else Path(script).name


def run(cores: int, workdir: Path, log: Path, profile: str | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB of the largest process) of a fresh default run in ``workdir``."""
    site = workdir / "_site"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ, SSFS_BENCH_LOG=str(log), SSFS_BENCH_PROFILE=profile or "",
               PYTHONPATH=os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))
    cmd = ["snakemake", "-s", str(ROOT / "Snakefile"), "--configfile", str(ROOT / "config" / "config.yaml"),
           "--directory", str(workdir), "--cores", str(cores), "--quiet"]
    t = time.perf_counter()
    with open(workdir / "snakemake.out", "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status:
        sys.exit(f"snakemake failed (status {status}); its output: {workdir / 'snakemake.out'}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the temporary working directory")
    ap.add_argument("--profile", metavar="RULE", help="cProfile each job of RULE (kept: processes.tsv.<pid>.prof)")
    ap.add_argument("--max-cpu", type=float, help="fail when the run's CPU seconds exceed this")
    ap.add_argument("--max-aggregate", type=float, help="fail when the aggregate job's CPU seconds exceed this")
    args = ap.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="ssfs_default_run_"))
    log = workdir / "processes.tsv"
    load = os.getloadavg()[0]
    wall, cpu, peak = run(args.cores, workdir, log, args.profile)
    rows = [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []
    jobs: dict[str, list[float]] = {}
    for c, w, _, script in rows:
        j = jobs.setdefault(job_name(script.strip()), [0, 0.0, 0.0])
        j[0] += 1
        j[1] += float(c)
        j[2] += float(w)
    print(f"# default run, fresh results, --cores {args.cores}: wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"(user + sys, all processes), largest process {peak:.0f} MB; load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"{'process':<22} {'n':>3} {'CPU s':>8} {'wall s':>8}")
    for name, (n, c, w) in sorted(jobs.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:<22} {n:>3} {c:>8.1f} {w:>8.1f}")
    print(f"{'(not Python)':<22} {'':>3} {cpu - sum(j[1] for j in jobs.values()):>8.1f}")
    failed = []
    if args.max_cpu is not None and cpu > args.max_cpu:
        failed.append(f"CPU {cpu:.1f} s > {args.max_cpu:g} s")
    agg = jobs.get("aggregate", [0, 0.0, 0.0])[1]
    if args.max_aggregate is not None and agg > args.max_aggregate:
        failed.append(f"aggregate {agg:.1f} s CPU > {args.max_aggregate:g} s")
    if not (args.keep or args.profile):
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"# kept: {workdir}")
    if failed:
        print("over budget: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
