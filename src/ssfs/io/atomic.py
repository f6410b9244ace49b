"""Atomic file writing: outputs appear complete or not at all, and a write that fails says why.

Every writer of ssfs (workflow steps, ``ssfs rank -o``, ``ssfs select -o``, the report) goes
through :func:`atomic_path`, which hands out a temporary name in the destination folder and
renames it into place only when the writer returned without error. An interrupted job or a
full disk therefore never leaves a partial file that looks complete.

The destination is checked first (:func:`ssfs._outputs.check_destination`): a directory, a
device, a pipe or a socket is refused (writing there would replace it: as root, ``-o /dev/full``
turned the device into a file); a symbolic link is followed (the file it points to is written
and the link stays). Any operating-system error on the way (disk full, file-size limit,
permission, read-only file system, a missing or non-folder parent ...) becomes one
:class:`~ssfs.errors.OutputError` naming the path and the cause (:func:`ssfs._outputs.os_cause`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .._checked import MANIFEST, manifest_text, table_bytes
from .._outputs import check_destination, os_cause, os_errno, output_error  # noqa: F401 - re-exported
from ..errors import OutputError

_UMASK = os.umask(0)
os.umask(_UMASK)

@contextlib.contextmanager
def atomic_path(path, *, what: str = ""):
    """``with atomic_path(p) as tmp: write(tmp)`` -> ``p`` appears only on success.

    The destination is checked (:func:`check_destination`); parent folders are created; an
    operating-system error (from the writer too) becomes an :class:`OutputError` naming ``p``
    and the cause, and the temporary file is removed."""
    target = check_destination(path, what=what)
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=target.suffix + ".tmp")
    except OSError as e:
        raise output_error(path, e, what, folder=target.parent) from None
    try:
        os.close(fd)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the usual permissions
        yield Path(tmp)
        os.replace(tmp, target)
    except OutputError:
        raise
    except Exception as e:  # OSError; also h5py's RuntimeError quoting the errno of a failed write
        if isinstance(e, OSError) or os_errno(e) is not None:
            raise output_error(path, e, what) from None
        raise
    finally:
        if tmp is not None and os.path.lexists(tmp):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write_text(path, text: str, *, what: str = "") -> None:
    with atomic_path(path, what=what) as tmp:
        Path(tmp).write_text(text)


def atomic_write_bytes(path, data: bytes, *, what: str = "") -> None:
    with atomic_path(path, what=what) as tmp:
        Path(tmp).write_bytes(data)


def write_tsv(df, path, *, what: str = "") -> None:
    """Tab-separated table, written atomically, floats with full precision (byte-stable)."""
    with atomic_path(path, what=what) as tmp:
        df.to_csv(tmp, sep="\t", index=False, float_format="%.10g")


def write_checked_tsv(df, path) -> None:
    """An intermediate table of the workflow, written atomically with its end-of-table line
    (:mod:`ssfs._checked`: its readers refuse it when cut short or changed)."""
    atomic_write_bytes(path, table_bytes(df))


def write_manifest(folder, paths) -> None:
    """``folder/.ssfs-manifest.json``: the SHA-256 of each of ``paths`` (written last, after
    them), checked by the step that reads them (:func:`ssfs._checked.check_manifest`)."""
    atomic_write_text(Path(folder) / MANIFEST, manifest_text(folder, paths))
