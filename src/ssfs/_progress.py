"""Progress of long loops (ensemble members, resamples, repetitions), one helper for all.

    with progress(n_members, "enscls members") as bar:
        for batch in batches:
            ...
            bar.update(len(batch))

On a terminal where the command line enabled it (``ssfs rank``), a tqdm bar on stderr
(shown after 1 s, so fast loops stay silent). Everywhere else (workflow jobs, library
use) a line on the ``ssfs.progress`` logger every :data:`INTERVAL` seconds, and a last one
when a loop that printed any finishes::

    ssfs enscls members: 1200/2610 (46%), 1 min 10 s elapsed, about 1 min 22 s left

Workflow jobs send the logger to their log file and the console
(:mod:`ssfs.workflow.scripting`); library users see nothing unless they configure
logging. ``update`` is thread-safe (joblib threads call it). Progress never changes a
result.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

log = logging.getLogger("ssfs.progress")

#: seconds between two progress lines (``SSFS_PROGRESS_INTERVAL`` overrides)
INTERVAL = float(os.environ.get("SSFS_PROGRESS_INTERVAL", 30))
_BAR = {"enabled": False}


def fmt_seconds(s: float) -> str:
    """``0.42 s``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min``."""
    if s < 10:
        return f"{s:.2f} s"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def enable_bar(on: bool = True) -> None:
    """Show tqdm bars instead of log lines when stderr is a terminal (the CLI calls this)."""
    _BAR["enabled"] = bool(on)


def _use_bar() -> bool:
    if not _BAR["enabled"]:
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return False
    return sys.stderr.isatty()


class Progress:
    """Counter of ``done`` out of ``total`` units; reports as described in the module doc."""

    def __init__(self, total: int, what: str, *, interval: float | None = None):
        self.total, self.what, self.done = int(total), what, 0
        self.interval = INTERVAL if interval is None else float(interval)
        self.t0 = self._last = time.monotonic()
        self._lock = threading.Lock()
        self._printed = False
        self._bar = None
        if _use_bar() and self.total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=f"ssfs {what}", delay=1.0, leave=False,
                             dynamic_ncols=True, file=sys.stderr)

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += int(n)
            if self._bar is not None:
                self._bar.update(int(n))
                return
            now = time.monotonic()
            if now - self._last >= self.interval and self.done < self.total:
                self._last = now
                self._printed = True
                log.info("%s", self.line(now))

    def line(self, now: float | None = None) -> str:
        """``ssfs <what>: done/total (pct%), <elapsed> elapsed, about <eta> left``."""
        el = (time.monotonic() if now is None else now) - self.t0
        pct = 100 * self.done / self.total if self.total else 100.0
        text = f"ssfs {self.what}: {self.done}/{self.total} ({pct:.0f}%), {fmt_seconds(el)} elapsed"
        if 0 < self.done < self.total:
            text += f", about {fmt_seconds(el * (self.total - self.done) / self.done)} left"
        return text

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._printed:
            log.info("%s", self.line())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(total: int, what: str, *, interval: float | None = None) -> Progress:
    """A :class:`Progress` over ``total`` units of ``what`` (use as a context manager)."""
    return Progress(total, what, interval=interval)


def track(iterable, what: str, total: int | None = None, *, interval: float | None = None):
    """Yield the items of ``iterable``, counting each as one unit of progress."""
    if total is None:
        total = len(iterable)
    with Progress(total, what, interval=interval) as bar:
        for item in iterable:
            yield item
            bar.update()
