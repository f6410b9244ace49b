"""Intermediate results that prove they are whole, and readers that check it.

A workflow result cut short or changed after it was written (an interrupted copy, a disk that
filled up outside ssfs, an edit) must not be trusted by the steps that read it: the stability
table would silently lose rows. Every intermediate result carries what its reader needs:

* tables (``.tsv``): a last line ``# ssfs end of table: rows=N sha256=H`` written last, H the
  SHA-256 of every byte above it (:func:`table_bytes`, written by
  :func:`ssfs.io.atomic.write_checked_tsv`; :func:`read_checked_tsv`);
* JSON documents: a complete document (:func:`read_checked_json`);
* ``.npy`` arrays: the header, the full size and the expected shape (:func:`load_checked_npy`);
* ``.npz`` archives: the zip directory and every member's CRC (:func:`load_checked_npz`).

A reader that finds a result incomplete raises :class:`~ssfs.errors.IncompleteResultError`:
one line naming the file, what is wrong, and the command that regenerates it (delete it and
run the same Snakemake command again: the step that writes it runs again). Checking costs one
read and one hash of the file, which the reader reads anyway; nothing is checked while
Snakemake plans the run. (Below :mod:`ssfs.ranking` and :mod:`ssfs.constraints`, whose readers
use it; pandas is imported only by :func:`read_checked_tsv`.)
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from .errors import IncompleteResultError

#: the start of the last line of a checked table
END = "# ssfs end of table:"
_END_LINE = re.compile(rb"# ssfs end of table: rows=(\d+) sha256=([0-9a-f]{64})\n\Z")


def incomplete(path, why: str, also=()) -> IncompleteResultError:
    """The one-line error of an intermediate result that cannot be trusted; ``also``: results
    computed from it that Snakemake must recompute with it (the rm command names them too).
    The error keeps ``path`` and ``why``."""
    extra = f" (and {', '.join(map(str, also))}, computed from it)" if also else ""
    rm = " ".join(f"'{p}'" for p in (path, *also))
    err = IncompleteResultError(
        f"{path} is incomplete: {why}; delete it{extra} and run the same snakemake command again to recompute "
        f"it: rm {rm}")
    err.path, err.why = str(path), why
    return err


def table_bytes(df) -> bytes:
    """A table's tab-separated text (floats in full precision, byte-stable) and its end line."""
    body = df.to_csv(sep="\t", index=False, float_format="%.10g", lineterminator="\n").encode()
    return body + f"{END} rows={len(df)} sha256={hashlib.sha256(body).hexdigest()}\n".encode()


def checked_body(path) -> bytes:
    """The bytes of a checked table above its end line, after checking line, row count and checksum."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise incomplete(path, "the file is missing") from None
    cut = data.rfind(b"\n", 0, len(data) - 1) + 1
    m = _END_LINE.match(data, cut)
    if m is None:
        return _missing_end(path, data)
    body = data[:cut]
    if hashlib.sha256(body).hexdigest() != m.group(2).decode():
        rows = max(body.count(b"\n") - 1, 0)
        raise incomplete(path, f"its content does not match the checksum written with it ({rows} rows, "
                               f"{int(m.group(1))} written; changed after it was written?)")
    return body


def _missing_end(path: Path, data: bytes):
    if not data:
        raise incomplete(path, "the file is empty")
    if END.encode() in data and data.endswith(b"\r\n"):
        raise incomplete(path, "its line ends were changed to CRLF after it was written (a Windows editor or "
                               "git's autocrlf?)")
    if END.encode() in data:
        raise incomplete(path, "its end-of-table line is not its last line (lines added after it was written, or "
                               "the line damaged)")
    raise incomplete(path, "its end-of-table line is missing (cut short, or written by another program or an "
                           "older ssfs?)")


def read_checked_tsv(path, **read_csv):
    """A table written by :func:`ssfs.io.atomic.write_checked_tsv`, checked whole (else one-line
    :class:`~ssfs.errors.IncompleteResultError`); ``read_csv``: options of :func:`pandas.read_csv`."""
    import pandas as pd  # lazy: pandas (about 0.5 s) is I/O only

    return pd.read_csv(io.BytesIO(checked_body(path)), sep="\t", **read_csv)


def read_checked_json(path):
    """A JSON document, refused as incomplete when it does not parse (a file cut short)."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise incomplete(path, "the file is missing") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise incomplete(path, f"it is not a complete JSON document ({e})") from None


def load_checked_npy(path, shape: tuple | None = None) -> np.ndarray:
    """A ``.npy`` array read whole (a file cut short fails numpy's size check), of ``shape``
    when given (None entries: any length)."""
    path = Path(path)
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise incomplete(path, "the file is missing") from None
    except (ValueError, EOFError, OSError) as e:
        raise incomplete(path, f"numpy cannot read it whole ({str(e).splitlines()[0] if str(e) else e!r})") from None
    if shape is not None and (len(shape) != arr.ndim or any(s is not None and s != a
                                                            for s, a in zip(shape, arr.shape, strict=True))):
        want = " x ".join("any" if s is None else str(s) for s in shape)
        raise incomplete(path, f"it holds an array of shape {' x '.join(map(str, arr.shape))}, expected {want}")
    return arr


#: the manifest of a folder of results read by a later step: name -> SHA-256, written last
MANIFEST = ".ssfs-manifest.json"


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_text(folder, paths) -> str:
    """The manifest of ``paths`` (relative to ``folder``), for tables a user reads as they are
    (no end-of-table line) but a later step reads too (:func:`check_manifest`)."""
    folder = Path(folder)
    entries = {Path(p).resolve().relative_to(folder.resolve()).as_posix(): file_sha256(p) for p in paths}
    return json.dumps(dict(sorted(entries.items())), indent=1) + "\n"


def check_manifest(folder, names) -> None:
    """Each of ``names`` (relative to ``folder``) is the file its step wrote, by the manifest the
    step wrote last (else one-line :class:`~ssfs.errors.IncompleteResultError`)."""
    folder = Path(folder)
    listed = read_checked_json(folder / MANIFEST)
    for name in names:
        path = folder / name
        if name not in listed:
            raise incomplete(path, f"it is not in {folder / MANIFEST}, the list its step wrote last")
        if not path.is_file():
            raise incomplete(path, "the file is missing")
        if file_sha256(path) != listed[name]:
            raise incomplete(path, "its content does not match the checksum its step recorded (cut short or "
                                   "changed after it was written?)")


def load_checked_npz(path) -> dict[str, np.ndarray]:
    """Every array of a ``.npz`` archive, each member's CRC checked as it is read."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise incomplete(path, "the file is missing") from None
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as e:
        raise incomplete(path, f"the archive is damaged ({str(e).splitlines()[0] if str(e) else e!r})") from None
