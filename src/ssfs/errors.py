"""Error types: every problem with a user's input is raised as one of these.

All derive from :class:`SSFSError` so the command line and the workflow scripts
can print a one-line message instead of a traceback.
"""


class SSFSError(Exception):
    """Base class of every error ssfs raises on purpose."""


class InputError(SSFSError, ValueError):
    """A data file or matrix is unusable (missing, malformed, non-numeric, NaN ...)."""


class ConfigError(SSFSError, ValueError):
    """The configuration is invalid (unknown key, wrong type, unknown method ...)."""


class SupervisionError(SSFSError, ValueError):
    """Labels or pairwise constraints are unusable (one class, too few labels, contradictions ...)."""


class MethodError(SSFSError, ValueError):
    """A method cannot run on this input (unknown name, missing optional package ...)."""


class OutputError(SSFSError, OSError):
    """A result cannot be written (disk full, file-size limit, no permission, a directory or
    a device where a file should go ...): the message names the path and the cause."""


class IncompleteResultError(InputError):
    """An intermediate result is cut short or changed after it was written (its end-of-table
    line, row count or checksum does not match): the message names the file and how to
    regenerate it."""
