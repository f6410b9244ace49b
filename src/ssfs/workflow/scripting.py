"""Glue for the workflow scripts: one-line errors instead of tracebacks, logs to the job's log file."""

from __future__ import annotations

import logging
import sys
import warnings

from ..errors import SSFSError


def run_step(main, snakemake) -> None:
    """Call ``main(snakemake)``; an :class:`SSFSError` becomes ``ERROR: <message>`` on
    stderr and in the log, and exit status 1. Warnings go to the log. The job stops by
    itself when the Snakemake process that started it is gone (:func:`~ssfs.workflow.locks.watch_parent`)."""
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
