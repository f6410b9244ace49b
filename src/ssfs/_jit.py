"""numba, imported with its compiled-function cache in the user's cache folder.

numba's ``cache=True`` writes next to the source files (``__pycache__`` in the installed
package) unless told otherwise: a read-only install then falls back to guesses, and a
checkout fills its source tree. Every ssfs module that compiles with numba imports it
through :func:`numba_module`, which points ``NUMBA_CACHE_DIR`` (unless the user set it) at
``<user cache>/ssfs/numba``: ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "NUMBA_CACHE_DIR"


def user_cache_dir() -> Path:
    """The platform's per-user cache folder for ssfs."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ssfs"


def numba_cache_dir() -> Path:
    """Where numba keeps ssfs's compiled functions: ``$NUMBA_CACHE_DIR`` if set, else the user cache."""
    return Path(os.environ.get(ENV) or user_cache_dir() / "numba")


def numba_module():
    """The ``numba`` module, its cache folder set first (also for numba already imported elsewhere)."""
    folder = str(numba_cache_dir())
    os.environ.setdefault(ENV, folder)  # read by numba at import, and by child processes
    import numba

    if not getattr(numba.config, "CACHE_DIR", ""):
        numba.config.CACHE_DIR = folder
    return numba
