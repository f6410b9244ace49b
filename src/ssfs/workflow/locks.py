"""Resuming after a hard kill (``kill -9``, an out-of-memory kill, a lost terminal).

A Snakemake process killed with SIGKILL cannot release its lock (``.snakemake/locks``):
the same command then stops with ``LockException ... --unlock``, and the jobs it had
started keep running as orphans. Two pieces make the same command continue instead:

* :func:`clear_stale_locks`, called by the workflow (``workflow/rules/common.smk``) in
  the main Snakemake process while the Snakefile is read, i.e. before Snakemake takes the
  lock: the lock is stale when the process that took it is gone. ssfs records the owner
  of every run (host, pid, start time) in ``.snakemake/ssfs_owner.json``; a lock is
  removed only when that owner ran on this host and is no longer alive, and no other
  Snakemake process works in this folder. A lock taken on another host (shared file
  system) is never touched: the message says so and ``--unlock`` stays the way out.
  Incomplete outputs of the killed jobs are then redone (the profile's
  ``rerun-incomplete``).
* :func:`watch_parent`, started by every job (:func:`ssfs.workflow.scripting.run_step`):
  a daemon thread that ends the job when the Snakemake process that started it is gone,
  so no orphan keeps computing (and writing) after its workflow was killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

OWNER_FILE = "ssfs_owner.json"
#: environment variable naming the main Snakemake process ("host pid start start-since-boot"), set by
#: :func:`clear_stale_locks` and inherited by the jobs, so a job started just before its
#: workflow died still knows whom to watch
PARENT_ENV = "SSFS_WORKFLOW_PROCESS"


def _psutil():
    import psutil  # a dependency of snakemake

    return psutil


#: seconds by which two readings of one process's start may differ (a reused pid starts later than this
#: after the first process, which lived longer)
START_SLACK = 2.5


def start_times(p) -> tuple[float, float]:
    """(start, start since boot) of the psutil process ``p``, in seconds. On Linux psutil's start is the
    boot time, read from /proc/stat in whole seconds at every call, plus the start since boot: the boot
    time moves whenever the clock is slewed (by a second about every 15 minutes on this project's VMs), so
    only the second number is the same at every reading; on other systems the first is."""
    start = p.create_time()
    return start, start - _psutil().boot_time()


def _alive(pid: int, create_time: float | None, since_boot: float | None = None) -> bool:
    """Whether process ``pid`` runs and is the one that started at ``create_time`` (or ``since_boot``
    seconds after boot; :func:`start_times`), within :data:`START_SLACK`. A job whose live Snakemake
    process read a second later stopped as an orphan when only the first was compared."""
    psutil = _psutil()
    try:
        start, rel = start_times(psutil.Process(int(pid)))
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False
    if create_time is None:
        return True
    return abs(start - float(create_time)) < START_SLACK or (
        since_boot is not None and abs(rel - float(since_boot)) < START_SLACK)


def _is_snakemake(cmdline) -> bool:
    return any(Path(a).name in ("snakemake", "snakemake.exe") or a == "snakemake" for a in cmdline[:3]) or (
        "-m" in cmdline[:3] and "snakemake" in cmdline[:4])


def other_snakemakes(workdir: Path) -> list[int]:
    """PIDs of Snakemake processes working in ``workdir``, other than this one and its ancestors."""
    psutil = _psutil()
    me = psutil.Process()
    mine = {me.pid, *(p.pid for p in me.parents())}
    wd = os.path.realpath(workdir)
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if p.info["pid"] in mine or not _is_snakemake(p.info["cmdline"] or []):
                continue
            if os.path.realpath(p.cwd()) == wd:
                out.append(p.info["pid"])
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return out


def clear_stale_locks(snakemake_dir: Path | str = ".snakemake") -> str | None:
    """Remove ``snakemake_dir/locks`` when it is stale (module doc), record this process as
    the owner of the run, and return a one-line note of what was done (None: nothing)."""
    sdir = Path(snakemake_dir)
    locks = sdir / "locks"
    owner_path = sdir / OWNER_FILE
    note = None
    held = locks.is_dir() and any(locks.iterdir())
    if held:
        try:
            owner = json.loads(owner_path.read_text())
        except (OSError, ValueError):
            owner = None
        if owner is not None and owner.get("host") != socket.gethostname():
            return (f"the lock in {locks} was taken on host {owner.get('host')!r}; if no run is going on there, "
                    "run the same command once with --unlock")
        owner_alive = owner is not None and _alive(owner.get("pid", -1), owner.get("create_time"),
                                                   owner.get("since_boot"))
        others = other_snakemakes(sdir.parent)
        if owner_alive or others:
            live_lock_message(owner if owner_alive else None, others)
            return None  # a live run: Snakemake's LockException applies, with the message naming that run
        for f in locks.iterdir():
            f.unlink()
        who = f"process {owner['pid']}" if owner else "a Snakemake process"
        note = f"removed the stale lock of {who}, which is no longer running (killed?); resuming"
    psutil = _psutil()
    me = psutil.Process()
    sdir.mkdir(parents=True, exist_ok=True)
    tmp = sdir / f".{OWNER_FILE}.{me.pid}.tmp"
    start, since_boot = start_times(me)
    tmp.write_text(json.dumps({"host": socket.gethostname(), "pid": me.pid, "create_time": start,
                               "since_boot": since_boot}))
    os.replace(tmp, owner_path)
    os.environ[PARENT_ENV] = f"{socket.gethostname()} {me.pid} {start!r} {since_boot!r}"
    return note


def live_lock_message(owner: dict | None, others: list[int]) -> str:
    """Make Snakemake's lock error name the run that holds the lock and say not to ``--unlock``.

    Snakemake's own message suggests ``--unlock`` even while the first run is alive, and two
    runs writing the same files corrupt them. Snakemake raises
    ``snakemake.exceptions.LockException()`` (looked up when raised) only if the runs share
    files; this replaces that class, in this process, by a subclass with this message."""
    psutil = _psutil()
    pids = ([int(owner["pid"])] if owner else []) + [p for p in others if not owner or p != int(owner["pid"])]
    started = ""
    with contextlib.suppress(psutil.Error, KeyError, ValueError):
        started = time.strftime(" since %H:%M:%S", time.localtime(psutil.Process(pids[0]).create_time()))
    who = (f"Snakemake process {pids[0]}{started}" if len(pids) == 1 else
           f"Snakemake processes {', '.join(map(str, pids))}")
    text = (f"ssfs: this folder is locked by a run that is still going ({who}, working in {os.getcwd()}); wait "
            f"for it to finish or stop it (kill {pids[0]}; it can resume later), and do not use --unlock while it "
            "runs: two runs writing the same files corrupt them")
    sx = sys.modules.get("snakemake.exceptions")  # loaded: this runs in Snakemake's own process
    if sx is None:  # outside a workflow
        return text
    base = getattr(sx.LockException, "ssfs_original", sx.LockException)

    class LockException(base):  # the same name in Snakemake's error header
        ssfs_original = base

        def __init__(self):
            sx.WorkflowError.__init__(self, text)

    sx.LockException = LockException
    return text


def _snakemake_ancestor():
    """The outermost Snakemake process above this one (None outside a workflow)."""
    psutil = _psutil()
    found = None
    try:
        for p in psutil.Process().parents():
            try:
                if _is_snakemake(p.cmdline()):
                    found = p
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
    except psutil.NoSuchProcess:
        return None
    return found


def watch_parent(interval: float = 0.5, on_orphan=None) -> threading.Thread | None:
    """Start a daemon thread that ends this process (exit status 1, after ``on_orphan()``)
    as soon as the Snakemake process that started it is gone. None outside a workflow."""
    host, _, rest = os.environ.get(PARENT_ENV, "").partition(" ")
    if host == socket.gethostname() and rest:
        fields = rest.split()
        pid, created = int(fields[0]), float(fields[1])
        since_boot = float(fields[2]) if len(fields) > 2 else None
    else:  # another host (cluster job) or no record: the Snakemake process above this one
        anc = _snakemake_ancestor()
        if anc is None:
            return None
        pid, (created, since_boot) = anc.pid, start_times(anc)

    def run():
        while True:
            time.sleep(interval)
            if not _alive(pid, created, since_boot):
                if on_orphan is not None:
                    with contextlib.suppress(Exception):  # never keep an orphan alive
                        on_orphan(pid)
                os._exit(1)

    t = threading.Thread(target=run, name="ssfs-watch-parent", daemon=True)
    t.start()
    return t
