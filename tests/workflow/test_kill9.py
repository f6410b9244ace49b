"""kill -9 resume (issue 19 item 5): after SIGKILL of the Snakemake process alone (no
SIGTERM, no chance to release its lock), the jobs it started stop by themselves and the
same command continues (:mod:`ssfs.workflow.locks`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workflow_helpers import command, config, reference_run, tables

from ssfs.workflow.locks import OWNER_FILE, PARENT_ENV, clear_stale_locks

psutil = pytest.importorskip("psutil")


def _locks(sdir: Path, owner: dict | None) -> Path:
    (sdir / "locks").mkdir(parents=True)
    (sdir / "locks" / "0.input.lock").write_text("x\n")
    (sdir / "locks" / "0.output.lock").write_text("y\n")
    if owner is not None:
        (sdir / OWNER_FILE).write_text(json.dumps(owner))
    return sdir


def _dead_pid() -> tuple[int, float]:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    ct = psutil.Process(p.pid).create_time()
    p.wait()
    return p.pid, ct


def test_stale_lock_of_a_dead_owner_is_removed(tmp_path, monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)
    pid, ct = _dead_pid()
    sdir = _locks(tmp_path / ".snakemake", {"host": socket.gethostname(), "pid": pid, "create_time": ct})
    note = clear_stale_locks(sdir)
    assert note is not None and f"process {pid}" in note and "no longer running" in note
    assert not any((sdir / "locks").iterdir())
    owner = json.loads((sdir / OWNER_FILE).read_text())
    assert owner["pid"] == os.getpid()  # this process now owns the run
    assert os.environ[PARENT_ENV].split()[1] == str(os.getpid())


def test_lock_of_a_live_owner_is_kept(tmp_path, monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        ct = psutil.Process(live.pid).create_time()
        sdir = _locks(tmp_path / ".snakemake", {"host": socket.gethostname(), "pid": live.pid, "create_time": ct})
        import snakemake.exceptions as sx

        original = sx.LockException
        try:
            assert clear_stale_locks(sdir) is None
            # Snakemake's lock error (raised when the runs share files) now names the live run and
            # says not to --unlock, instead of suggesting --unlock
            message = str(sx.LockException())
            assert isinstance(sx.LockException(), original)
        finally:
            sx.LockException = original
        assert f"Snakemake process {live.pid}" in message and "do not use --unlock while it runs" in message
        assert "It can be removed with the --unlock argument" not in message
        assert sorted(p.name for p in (sdir / "locks").iterdir()) == ["0.input.lock", "0.output.lock"]
    finally:
        live.kill()
        live.wait()


def test_lock_of_a_reused_pid_is_stale(tmp_path, monkeypatch):
    """A live process with the owner's pid but another start time is not the owner."""
    monkeypatch.delenv(PARENT_ENV, raising=False)
    me = psutil.Process()
    sdir = _locks(tmp_path / ".snakemake", {"host": socket.gethostname(), "pid": me.pid,
                                           "create_time": me.create_time() - 1000})
    assert "no longer running" in clear_stale_locks(sdir)


def test_a_process_whose_start_reads_later_as_the_clock_moves_is_the_same_process(monkeypatch):
    """On Linux psutil's start time adds the boot time in whole seconds, read at every call, which moves
    as the clock is slewed (a live Snakemake process read 1 s later stopped its job as an orphan): the
    start since boot identifies the process however far the boot time moved; a start 3 s or 1,000 s off
    on both clocks (a reused pid) and a dead pid do not."""
    from ssfs.workflow import locks

    me = psutil.Process()
    start, since_boot = locks.start_times(me)
    assert abs(since_boot - (start - psutil.boot_time())) < 1e-6
    for off in (0.0, 1.0, -1.0, 2.0):
        assert locks._alive(me.pid, start + off)
    for off in (3.0, -1000.0):
        assert not locks._alive(me.pid, start + off) and not locks._alive(me.pid, start + off, since_boot + off)
    real_boot = psutil.boot_time()
    monkeypatch.setattr(psutil, "boot_time", lambda: real_boot + 60.0)  # the clock moved by a minute
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: start + 60.0)
    assert not locks._alive(me.pid, start) and locks._alive(me.pid, start, since_boot)
    monkeypatch.undo()
    pid, ct = _dead_pid()
    assert not locks._alive(pid, ct, 0.0)


def test_lock_taken_on_another_host_is_kept(tmp_path, monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)
    sdir = _locks(tmp_path / ".snakemake", {"host": "elsewhere.invalid", "pid": 1, "create_time": 0.0})
    note = clear_stale_locks(sdir)
    assert "taken on host 'elsewhere.invalid'" in note and "--unlock" in note
    assert len(list((sdir / "locks").iterdir())) == 2


PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {child!r}])
print(child.pid, flush=True)
time.sleep(120)
"""
CHILD = """
import os, sys, time
sys.path.insert(0, {src!r})
from ssfs.workflow.locks import watch_parent
assert watch_parent(interval=0.1, on_orphan=lambda pid: open({flag!r}, "w").write(str(pid))) is not None
open({flag!r} + ".ready", "w").close()
time.sleep(120)
"""


@pytest.mark.parametrize("via", ["ancestor", "environment"])
def test_job_stops_when_its_snakemake_is_killed(tmp_path, via):
    """A stand-in workflow process starts a job that watches it; SIGKILL of the stand-in
    ends the job within a second. ``ancestor``: the stand-in is a script named
    ``snakemake``; ``environment``: its name says nothing, the job finds it through
    SSFS_WORKFLOW_PROCESS (which the main Snakemake process sets for its jobs)."""
    flag = tmp_path / "orphaned"
    src = str(Path(__file__).resolve().parents[2] / "src")
    script = tmp_path / ("snakemake" if via == "ancestor" else "parent.py")
    script.write_text(PARENT.format(child=CHILD.format(src=src, flag=str(flag))))
    env = {k: v for k, v in os.environ.items() if k != PARENT_ENV}
    if via == "ancestor":
        cmd = [sys.executable, str(script)]
    else:
        cmd = [sys.executable, "-c",
               "import os, psutil, socket; p = psutil.Process(); "
               f"os.environ[{PARENT_ENV!r}] = f'{{socket.gethostname()}} {{p.pid}} {{p.create_time()!r}}'; "
               f"exec(open({str(script)!r}).read())"]
    parent = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    child_pid = int(parent.stdout.readline())
    t0 = time.monotonic()
    while not Path(f"{flag}.ready").exists():  # the child is watching
        assert time.monotonic() - t0 < 60 and psutil.pid_exists(child_pid), "the job did not start watching"
        time.sleep(0.05)
    assert not flag.exists()
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    gone, alive = psutil.wait_procs([psutil.Process(child_pid)], timeout=10)
    assert not alive, "the job outlived its workflow"
    assert flag.read_text() == str(parent.pid)


def _first_select_job(proc, wd: Path, timeout: float = 300):
    """The first running selection job of the workflow ``proc`` (a psutil.Process)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise AssertionError("the workflow ended before a selection job started")
        try:
            for c in psutil.Process(proc.pid).children(recursive=True):
                if any(a.endswith(".select.py") for a in c.cmdline()):
                    return c
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.05)
    raise AssertionError("no selection job within the time limit")


@pytest.mark.slow
def test_sigkill_then_the_same_command_continues(tmp_path, tmp_path_factory):
    ref = tables(reference_run(tmp_path_factory))
    wd = tmp_path / "run"
    cfg = config(execution={"reps_per_job": 1})
    cmd = command(wd, cfg, cores=1)
    with open(tmp_path / "killed.log", "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        job = _first_select_job(proc, wd)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)  # snakemake alone, as the OOM killer or kill -9 would
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert any((wd / ".snakemake/locks").iterdir()), "the killed run left no lock: nothing tested"
    gone, alive = psutil.wait_procs([job], timeout=15)
    assert not alive, "the selection job kept running after its snakemake was killed"
    # the same command, in a fresh process
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "LockException" not in res.stderr
    assert "removed the stale lock of process" in res.stderr
    got = tables(wd)
    assert got == ref
    assert (wd / "results/report.html").is_file()
