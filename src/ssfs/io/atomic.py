"""Atomic file writing: outputs appear complete or not at all.

Every writer of the workflow goes through :func:`atomic_path`, which hands out a
temporary name in the destination folder and renames it into place only when
the writer returned without error. An interrupted job therefore never leaves a
partial file that looks complete.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path):
    """``with atomic_path(p) as tmp: write(tmp)`` -> ``p`` appears only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix + ".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the usual permissions
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def write_tsv(df, path) -> None:
    """Tab-separated table, written atomically, floats with full precision (byte-stable)."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, float_format="%.10g")
