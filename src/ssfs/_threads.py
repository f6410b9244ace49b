"""Limiting the BLAS / OpenMP thread pools (threadpoolctl) without rescanning the process.

``threadpoolctl.threadpool_limits`` scans every loaded shared library on each call (about
3 ms, more than Fisher's score on 1,560 x 617); one ``ThreadpoolController`` is kept and
rebuilt only when new modules were imported since (a new module may load a new pool).
"""

from __future__ import annotations

import os
import sys

#: environment variable holding the number of BLAS/OpenMP threads a method may use; set by
#: every workflow job to its rule's ``threads`` (:func:`ssfs.workflow.scripting.run_step`)
THREADS_ENV = "SSFS_THREADS"


def job_threads(given: int | None = None) -> int:
    """Threads a method may use: ``given`` (a method's ``n_jobs`` / ``threads``) when not None,
    else ``$SSFS_THREADS`` (the workflow job's ``threads``), else 1. One thread by default: on
    a busy 2-core machine two OpenBLAS threads made the kNN search 35-50x slower (issue #16);
    set the variable to use more."""
    if given is not None:
        return max(1, int(given))
    try:
        return max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        return 1

_cached: list = [None, -1]  # [controller, len(sys.modules) when it was built]


def _controller():
    if _cached[0] is None or _cached[1] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        _cached[0] = ThreadpoolController()
        _cached[1] = len(sys.modules)
    return _cached[0]


def limit_threads(limits: int, user_api: str | None = None):
    """Context manager: at most ``limits`` threads in every pool (or only ``user_api``:
    "blas" / "openmp"), as ``threadpoolctl.threadpool_limits``."""
    return _controller().limit(limits=int(limits), user_api=user_api)
