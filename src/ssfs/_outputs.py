"""Output paths and operating-system errors in words, for every writer and door (stdlib only:
the command line imports it at start-up).

:func:`check_destination` refuses a directory, a device, a pipe or a socket where a file is to
be written (a rename onto it would replace it: as root, ``-o /dev/full`` turned the device into
a file) and follows a symbolic link; :func:`output_error` and :func:`os_cause` turn an
operating-system error (disk full, file-size limit, permission, read-only file system ...) into
one :class:`~ssfs.errors.OutputError` line naming the path and the cause.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from .errors import OutputError

#: the causes users meet, in words (others: the system's own text)
CAUSES = {
    errno.ENOSPC: "no space left on the device (disk full)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (the file-size limit, ulimit -f, or the file system's largest file)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "it is a directory",
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EROFS: "read-only file system",
    errno.EIO: "input/output error (a failing disk or a lost network file system?)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EXDEV: "the temporary file and the destination are on different file systems",
}
_ERRNO_IN_TEXT = re.compile(r"errno\s*=\s*(\d+)|\[Errno (\d+)\]")


def os_errno(exc: BaseException) -> int | None:
    """The errno of ``exc``: its attribute, else one quoted in its text (h5py/HDF5 write
    ``errno = 28`` inside the message)."""
    code = getattr(exc, "errno", None)
    if isinstance(code, int):
        return code
    m = _ERRNO_IN_TEXT.search(str(exc))
    return int(m.group(1) or m.group(2)) if m else None


def os_cause(exc: BaseException) -> str:
    """The cause of an operating-system error in a few words (``no space left on the device ...``)."""
    code = os_errno(exc)
    if code in CAUSES:
        return CAUSES[code]
    if code is not None:
        return os.strerror(code).lower()
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _kind(mode: int) -> str | None:
    """What a non-regular file is ('a directory', 'a character device' ...); None for a regular file."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None


def check_destination(path, *, what: str = "") -> Path:
    """The file to write for ``path``: ``path`` itself, or the file a symbolic link points to.

    Raises :class:`OutputError` (one line naming ``path``) when it is a directory, a device,
    a pipe or a socket. ``what`` prefixes the message (``-o``)."""
    if not str(path).strip():
        raise OutputError(f"cannot write {_named(repr(str(path)), what)}: the file name is empty")
    path = Path(path)
    try:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as e:
        raise output_error(path, e, what) from None
    kind = _kind(mode)
    if kind is not None:
        where = f" (the link {path} points to {target})" if target != path else ""
        hint = ("; give a file name inside it" if kind == "a directory" else
                "; ssfs writes results to regular files" + (" (-o - writes to standard output)" if what else ""))
        raise OutputError(f"cannot write {_named(path, what)}: it is {kind}{where}{hint}")
    return target


def _named(path, what: str) -> str:
    return f"{path} ({what})" if what else str(path)


def output_error(path, exc: BaseException, what: str = "", *, folder=None) -> OutputError:
    """The one-line :class:`OutputError` of an operating-system error while writing ``path``
    (``folder``: the error came from creating a file in that folder)."""
    where = f"cannot create a file in folder {folder}: " if folder is not None else ""
    err = OutputError(f"cannot write {_named(path, what)}: {where}{os_cause(exc)}")
    err.errno = os_errno(exc)
    return err
