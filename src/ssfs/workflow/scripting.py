"""Glue for the workflow scripts: logging, one line per job start / end, one-line errors.

Logging: the ``ssfs`` logger at the config's ``log_level`` (default INFO), every other
library (matplotlib, fontTools, numba, anndata, ...) at WARNING, so a job's log and the
console hold only ssfs's own lines. ``log_level: DEBUG`` or ``snakemake --verbose`` (the
workflow passes it on as ``SSFS_LOG_LEVEL``) also lets third-party INFO through.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import time
import warnings
from pathlib import Path

from .._outputs import os_cause
from .._progress import fmt_seconds
from ..errors import SSFSError
from ..runner import THREADS_ENV
from .locks import watch_parent

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
#: environment variable overriding the config's ``log_level`` (set by ``snakemake --verbose``)
ENV_LEVEL = "SSFS_LOG_LEVEL"
log = logging.getLogger("ssfs")


def log_level(config: dict | None = None) -> str:
    """The ssfs log level: ``$SSFS_LOG_LEVEL``, else the config's ``log_level``, else INFO."""
    level = os.environ.get(ENV_LEVEL) or (config or {}).get("log_level") or "INFO"
    level = str(level).upper()
    return level if level in LEVELS else "INFO"


def configure_logging(level: str = "INFO", log_path=None, *, stream=None, capture_warnings: bool = True) -> None:
    """ssfs's logger at ``level``, third-party loggers at WARNING (INFO when ``level`` is
    DEBUG); messages go to ``stream`` (default stderr) and, if given, to ``log_path``
    (``capture_warnings``: Python warnings too, once each)."""
    handlers = [logging.StreamHandler(stream or sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    third_party = logging.INFO if level == "DEBUG" else logging.WARNING
    logging.basicConfig(level=third_party, format="%(message)s", handlers=handlers, force=True)
    log.setLevel(getattr(logging, level))
    # libraries that set their own level (fontTools' subsetter logs every glyph at INFO)
    for name in ("fontTools", "matplotlib", "PIL", "numba", "h5py", "anndata", "scanpy"):
        logging.getLogger(name).setLevel(third_party)
    if capture_warnings:
        logging.captureWarnings(True)
        warnings.simplefilter("default")


def describe(snakemake) -> str:
    """``rule key=value ...``: what a job does, from its rule, its wildcards and, unless a
    wildcard names it, its ``methods`` param (the labels of a batched rule)."""
    try:
        wildcards = dict(snakemake.wildcards.items())
    except Exception:  # pragma: no cover - wildcards without items()
        wildcards = {}
    wc = " ".join(f"{k}={v}" for k, v in wildcards.items())
    try:
        methods = dict(snakemake.params.items()).get("methods")
    except Exception:  # pragma: no cover - params without items()
        methods = None
    if methods and "method" not in wildcards:
        wc = f"{wc} method{'s' if len(methods) > 1 else ''}={','.join(methods)}".strip()
    return f"{getattr(snakemake, 'rule', 'step')} {wc}".strip()


#: thread-count variables of the native pools, set before numpy/scipy/numba load their libraries
_POOL_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def pin_job_threads(threads: int) -> None:
    """Pin this job's thread pools to the rule's ``threads``: ``$SSFS_THREADS`` (read by
    :func:`ssfs.runner.run_method`), the pools' environment variables (for libraries not yet
    loaded and for child processes) and, through threadpoolctl, the pools already loaded."""
    from threadpoolctl import threadpool_limits

    n = str(max(1, int(threads)))
    os.environ[THREADS_ENV] = n
    for var in _POOL_ENV:
        os.environ[var] = n
    threadpool_limits(limits=int(n))  # process-wide, not undone: the job is this process


@contextlib.contextmanager
def job(snakemake):
    """One workflow job, around the named call of a script (``with job(snakemake): run_x(...)``):
    thread pools pinned to the rule's ``threads``, ssfs's log to the job's log file, a start and
    an end line with the wall-clock time, an :class:`SSFSError` as the one line ``ERROR:
    <message>`` (stderr and log) and exit status 1, as is an operating-system error or running
    out of memory (:func:`one_line_error`); warnings go to the log. The job stops by
    itself when the Snakemake process that started it is gone
    (:func:`~ssfs.workflow.locks.watch_parent`)."""
    collect_after_imports()
    pin_job_threads(getattr(snakemake, "threads", 1) or 1)
    log_path = snakemake.log[0] if len(snakemake.log) else None
    configure_logging(log_level(getattr(snakemake, "config", None)), log_path)
    watch_parent(on_orphan=lambda pid: log.error(
        "ERROR: the snakemake process %d that started this job is gone (killed?); stopping the job", pid))
    what = describe(snakemake)
    log.info("ssfs %s: started", what)
    t0 = time.perf_counter()
    try:
        yield snakemake
    except (SSFSError, OSError, MemoryError) as e:
        log.error("ERROR: %s", one_line_error(e))
        log.info("ssfs %s: failed after %s", what, fmt_seconds(time.perf_counter() - t0))
        skip_exit_collection()
        sys.exit(1)
    log.info("ssfs %s: done in %s", what, fmt_seconds(time.perf_counter() - t0))
    skip_exit_collection()


def _script_process() -> bool:
    """This process runs a Snakemake script (its main file is under ``.snakemake/scripts``)."""
    parts = Path(sys.argv[0]).parts
    return ".snakemake" in parts and "scripts" in parts


def collect_after_imports() -> None:
    """The garbage collector back on for the job's work. A workflow script turns it off before
    its imports (``gc.disable()``, its first line): the objects the imports build are all kept,
    yet each collection on the way walked them (0.2 s of a job's 1.5 s start-up). In a script
    process they are then frozen (``gc.freeze()``): later collections skip them."""
    if _script_process():
        gc.freeze()
    gc.enable()


def skip_exit_collection() -> None:
    """In a Snakemake script process (its main file is under ``.snakemake/scripts``), which ends
    with the job: ``gc.freeze()``, so that the interpreter's garbage collections at exit do not
    walk every object scikit-learn, pandas and matplotlib created (0.3 s of CPU a job, a sixth
    of the default run's jobs' start-up cost). Objects are still released and ``atexit`` runs;
    the job's files are closed by then. Elsewhere (a test calling :func:`job`) nothing."""
    if _script_process():
        gc.freeze()


def one_line_error(e: BaseException) -> str:
    """The one-line message of a failed step: an :class:`SSFSError`'s own text; an
    operating-system error no reader or writer named more precisely as ``path: cause``."""
    if isinstance(e, SSFSError):
        return str(e)
    if isinstance(e, MemoryError):
        return ("out of memory; raise the rule's memory (resources: <method>: mem_mb) or reduce the data "
                "(top_variable)")
    where = f"{e.filename}: " if getattr(e, "filename", None) else ""
    return f"{where}{os_cause(e)}"


def run_step(main, snakemake) -> None:
    """``main(snakemake)`` as one workflow :func:`job`."""
    with job(snakemake):
        main(snakemake)
