"""Glue for the workflow scripts: logging, one line per job start / end, one-line errors.

Logging: the ``ssfs`` logger at the config's ``log_level`` (default INFO), every other
library (matplotlib, fontTools, numba, anndata, ...) at WARNING, so a job's log and the
console hold only ssfs's own lines. ``log_level: DEBUG`` or ``snakemake --verbose`` (the
workflow passes it on as ``SSFS_LOG_LEVEL``) also lets third-party INFO through.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import time
import warnings

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
    """``rule key=value ...``: what a job does, from its rule and wildcards."""
    try:
        wc = " ".join(f"{k}={v}" for k, v in dict(snakemake.wildcards.items()).items())
    except Exception:  # pragma: no cover - wildcards without items()
        wc = ""
    try:
        batch = dict(snakemake.params.items()).get("batch")
    except Exception:  # pragma: no cover - params without items()
        batch = None
    if batch:
        wc = f"{wc} method{'s' if len(batch) > 1 else ''}={','.join(batch)}".strip()
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


def run_step(main, snakemake) -> None:
    """Call ``main(snakemake)`` with thread pools pinned to the rule's ``threads``, between a
    start and an end line (with the wall-clock time); an :class:`SSFSError` becomes
    ``ERROR: <message>`` on stderr and in the log, and exit status 1. Warnings go to the log.
    The job stops by itself when the Snakemake process that started it is gone
    (:func:`~ssfs.workflow.locks.watch_parent`)."""
    pin_job_threads(getattr(snakemake, "threads", 1) or 1)
    log_path = snakemake.log[0] if len(snakemake.log) else None
    configure_logging(log_level(getattr(snakemake, "config", None)), log_path)

    watch_parent(on_orphan=lambda pid: log.error(
        "ERROR: the snakemake process %d that started this job is gone (killed?); stopping the job", pid))
    what = describe(snakemake)
    log.info("ssfs %s: started", what)
    t0 = time.perf_counter()
    try:
        main(snakemake)
    except (SSFSError, OSError, MemoryError) as e:
        log.error("ERROR: %s", one_line_error(e))
        log.info("ssfs %s: failed after %s", what, fmt_seconds(time.perf_counter() - t0))
        sys.exit(1)
    log.info("ssfs %s: done in %s", what, fmt_seconds(time.perf_counter() - t0))


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


def rule_arguments(snakemake, fn, extra: dict | None = None) -> dict:
    """The keyword arguments of ``fn`` taken by name from the rule: its named inputs,
    outputs, params and wildcards (a name must not appear twice), then ``extra``.
    Multi-file entries become lists; wildcards annotated ``int`` become ints."""
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
    found.update({k: v for k, v in (extra or {}).items() if k in sig.parameters})
    missing = [n for n, q in sig.parameters.items() if q.default is q.empty and n not in found]
    if missing:
        raise TypeError(f"{fn.__name__}: the rule has no named input, output, param or wildcard {missing}")
    return found


def run_rule(fn, snakemake) -> None:
    """:func:`run_step` of ``fn(**rule_arguments(snakemake, fn))``: a pipeline entry point
    whose keyword-only parameters are named like the rule's inputs, outputs and params.
    A batched rule (params ``batch``: method labels; ``per_method``: entry name -> "one" or
    "list") calls ``fn`` once per method with its share of those entries, ``method`` = its
    label and ``settings`` = its entry of the ``settings`` param."""
    run_step(lambda sm: call_per_method(fn, sm), snakemake)


def run_steps(snakemake, *fns) -> None:
    """:func:`run_rule` of several pipeline functions in one job, in order (the fused steps of
    one dataset, ``execution.fuse_steps``: one process start-up instead of one per step). In a
    batched rule a function with a ``method`` parameter runs once per method (every method
    before the next function), one without once with every method's entries."""
    run_step(lambda sm: [call_per_method(fn, sm) for fn in fns], snakemake)


def call_per_method(fn, snakemake) -> None:
    """``fn`` on the rule's arguments, once per method of a batched rule (:func:`run_rule`)."""
    params = dict(snakemake.params.items())
    batch = params.get("batch")
    if not batch or "method" not in inspect.signature(fn).parameters:
        fn(**rule_arguments(snakemake, fn))
        return
    shares = params["per_method"]
    for i, method in enumerate(batch):
        kw = rule_arguments(snakemake, fn, {"method": method})
        for name, kind in shares.items():
            if name not in kw:
                continue
            seq = [kw[name]] if isinstance(kw[name], str) else list(kw[name])
            k = len(seq) // len(batch)
            part = seq[i * k:(i + 1) * k]
            kw[name] = part[0] if kind == "one" else part
        if "settings" in kw:
            kw["settings"] = params["settings"][method]
        fn(**kw)
