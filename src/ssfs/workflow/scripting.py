"""Glue for the workflow scripts: one-line errors instead of tracebacks, logs to the job's log file."""

from __future__ import annotations

import inspect
import logging
import os
import sys
import warnings

from ..errors import SSFSError

#: thread-count variables of the native pools, set before numpy/scipy/numba load their libraries
_POOL_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def pin_job_threads(threads: int) -> None:
    """Pin this job's thread pools to the rule's ``threads``: ``$SSFS_THREADS`` (read by
    :func:`ssfs.runner.run_method`), the pools' environment variables (for libraries not yet
    loaded and for child processes) and, through threadpoolctl, the pools already loaded."""
    from threadpoolctl import threadpool_limits

    from ..runner import THREADS_ENV

    n = str(max(1, int(threads)))
    os.environ[THREADS_ENV] = n
    for var in _POOL_ENV:
        os.environ[var] = n
    threadpool_limits(limits=int(n))  # process-wide, not undone: the job is this process


def run_step(main, snakemake) -> None:
    """Call ``main(snakemake)`` with thread pools pinned to the rule's ``threads``; an
    :class:`SSFSError` becomes ``ERROR: <message>`` on stderr and in the log, and exit
    status 1. Warnings go to the log. The job stops by itself when the Snakemake process
    that started it is gone (:func:`~ssfs.workflow.locks.watch_parent`)."""
    pin_job_threads(getattr(snakemake, "threads", 1) or 1)
    log_path = snakemake.log[0] if len(snakemake.log) else None
    handlers = [logging.StreamHandler(sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(message)s", handlers=handlers, force=True)
    logging.captureWarnings(True)
    warnings.simplefilter("default")
    from .locks import watch_parent

    watch_parent(on_orphan=lambda pid: logging.getLogger("ssfs").error(
        "ERROR: the snakemake process %d that started this job is gone (killed?); stopping the job", pid))
    try:
        main(snakemake)
    except SSFSError as e:
        logging.getLogger("ssfs").error("ERROR: %s", e)
        sys.exit(1)


def rule_arguments(snakemake, fn) -> dict:
    """The keyword arguments of ``fn`` taken by name from the rule: its named inputs,
    outputs, params and wildcards (a name must not appear twice). Multi-file entries
    become lists; wildcards annotated ``int`` become ints."""
    sig = inspect.signature(fn)
    groups = [("wildcards", snakemake.wildcards), ("input", snakemake.input), ("output", snakemake.output),
              ("params", snakemake.params)]
    found: dict = {}
    where: dict = {}
    for group, entries in groups:
        for name, value in entries.items():
            if name not in sig.parameters:
                continue
            if name in found:
                raise TypeError(f"{fn.__name__}: {name!r} is both {where[name]}.{name} and {group}.{name} of the rule")
            if not isinstance(value, str) and group in ("input", "output"):
                value = list(value)
            if group == "wildcards" and sig.parameters[name].annotation in (int, "int"):
                value = int(value)
            found[name], where[name] = value, group
    missing = [n for n, q in sig.parameters.items() if q.default is q.empty and n not in found]
    if missing:
        raise TypeError(f"{fn.__name__}: the rule has no named input, output, param or wildcard {missing}")
    return found


def run_rule(fn, snakemake) -> None:
    """:func:`run_step` of ``fn(**rule_arguments(snakemake, fn))``: a pipeline entry point
    whose keyword-only parameters are named like the rule's inputs, outputs and params."""
    run_step(lambda sm: fn(**rule_arguments(sm, fn)), snakemake)
