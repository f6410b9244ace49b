"""Delimited text matrices (csv / tsv, optionally compressed) with optional labels file.

The first line is a header (feature names, or sample names when
``orientation: features_as_rows``); column ``index_col`` holds the row ids
(``index_col: null``: none, ids are generated). By default (``"auto"``) that is column 0,
unless it looks like data (numbers that are not distinct integers, under a non-empty
header): a file without an id column would otherwise silently lose its first feature, so
that is an InputError asking for ``index_col: null`` (or an explicit ``index_col: 0``).
Cells reading as :data:`ssfs.labels.NA_TOKENS` are missing values (handled later by ``missing:``).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from anndata import AnnData

from ..errors import ConfigError, InputError, SupervisionError
from ..labels import NA_TOKENS
from .common import check_unique, examples, make_adata, parse_numeric_frame

ORIENTATIONS = ("samples_as_rows", "features_as_rows")
_DELIMS = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def open_text(path: Path):
    """Text handle on ``path``, gunzipping when the file is gzip-compressed (by content)."""
    return gzip.open(path, "rt", errors="replace") if is_gzip(path) else open(path, errors="replace")


def _first_line(path: Path) -> str:
    with open_text(path) as fh:
        return fh.readline()


def _read_table(path: Path, sep: str, index_col, where: str) -> pd.DataFrame:
    comp = "gzip" if is_gzip(path) else "infer"
    try:
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False, compression=comp)
        if index_col is not None and index_col >= header.shape[1]:
            raise InputError(
                f"{where}: index_col is {index_col} but the header of {path} has {header.shape[1]} field(s)"
            )
        df = pd.read_csv(
            path, sep=sep, header=0, index_col=index_col, na_values=list(NA_TOKENS),
            keep_default_na=False, low_memory=False, compression=comp,
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{where}: file {path} is empty") from None
    except pd.errors.ParserError as e:
        msg = str(e).strip().splitlines()[-1]
        raise InputError(f"{where}: cannot parse {path}: {msg} (rows of unequal length?)") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{where}: {path} is not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8 "
                         "(a binary file, or another encoding such as Latin-1 or UTF-16?)") from None
    except (EOFError, OSError, zlib.error) as e:  # a gzip file cut short or damaged
        if not is_gzip(path):
            raise
        raise InputError(f"{where}: the compressed file {path} is truncated or corrupt ({e})") from None
    # pandas renames duplicated header names (g1, g1.1); check the raw header instead
    names = header.iloc[0].tolist()
    if index_col is not None:
        del names[index_col]
    if len(names) == df.shape[1]:
        check_unique(names, what="column", where=where)
        df.columns = pd.Index([str(c) for c in names], dtype=object)
    else:
        df.columns = df.columns.astype(str)
    if df.shape[1] == 0 or (df.shape[1] == 1 and index_col is None):
        line = _first_line(path)
        others = [name for d, name in _DELIMS.items() if d != sep and d in line]
        if df.shape[1] == 0 or others:
            fix = {"comma": "set format: csv", "tab": "set format: tsv"}.get(
                others[0] if others else "", "save it comma-separated (format: csv) or tab-separated (format: tsv), "
                "the two delimiters ssfs reads")
            hint = f"; the header contains {others[0]}s: wrong delimiter? {fix}" if others else ""
            raise InputError(
                f"{where}: {path} came out as a single column with delimiter {_DELIMS.get(sep, repr(sep))}{hint}"
            )
    if df.shape[0] == 0:
        raise InputError(f"{where}: {path} has a header but no data rows")
    return df


#: default ``index_col``: column 0, refused when it looks like data (:func:`check_id_column`)
AUTO = "auto"
_ID_HEADERS = {"", "id", "ids", "sample", "samples", "sample_id", "name", "names", "gene", "genes", "feature",
               "features", "probe", "probe_id", "id_ref", "cell", "cells", "barcode", "rownames"}


def check_id_column(df: pd.DataFrame, path: Path, where: str) -> None:
    """Refuse column 0 as row ids when it looks like a data column: every value a number,
    and the numbers are not distinct integers (1, 2, 3 ... are ids), under a header name
    that is not empty or an id-like name (``id``, ``sample``, ``gene``, ...)."""
    name = "" if df.index.name is None else str(df.index.name)
    if name.strip().lower() in _ID_HEADERS or name.startswith("Unnamed:"):
        return
    values = pd.to_numeric(pd.Series(df.index, dtype=object), errors="coerce")
    if values.isna().any():
        return
    v = values.to_numpy(dtype=float)
    if np.all(v == np.round(v)) and np.unique(v).size == v.size:
        return
    raise InputError(
        f"{where}: the first column of {path} ({name!r}: {examples(df.index.astype(str), 3)}) holds numbers that "
        "look like data, not row ids, and would be lost as a feature; set index_col: null (ssfs rank "
        "--index-column none) if the file has no id column, or index_col: 0 to use it as ids anyway"
    )


def _sniff(path: Path) -> str:
    if path.suffix.lower() == ".csv":
        return ","
    line = _first_line(path)
    for d in ("\t", ",", ";"):
        if d in line:
            return d
    return r"\s+"


def labels_table(path: Path, sample_ids: pd.Index, column: str | None, where: str) -> pd.Series:
    """The table ``sample_id -> label`` of a labels file (header optional), as a Series.

    With ``column`` the table must have a header and the label is taken from that column;
    otherwise it must have exactly two columns and a first line whose id is not a
    sample id is taken as the header.
    """
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "not found"
        raise InputError(f"{where}: labels file {path} {what}" if path.is_dir() else
                         f"{where}: labels file not found: {path}")
    sep = _sniff(path)
    try:
        t = pd.read_csv(
            path, sep=sep, header=None, dtype=str, keep_default_na=False, engine="python",
            compression="gzip" if is_gzip(path) else "infer",
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{where}: labels file {path} is empty") from None
    except pd.errors.ParserError as e:
        raise InputError(f"{where}: cannot parse labels file {path}: {str(e).strip()}") from None
    t = t.apply(lambda c: c.str.strip())
    if column is not None:
        head = t.iloc[0].tolist()
        if column not in head:
            raise SupervisionError(
                f"{where}: labels_file_column {column!r} is not in the header of {path}; columns: {examples(head, 10)}"
            )
        ids, lab = t.iloc[1:, 0], t.iloc[1:, head.index(column)]
    else:
        if t.shape[1] != 2:
            raise InputError(
                f"{where}: labels file {path} has {t.shape[1]} columns; expected 2 (sample_id, label) "
                "or set labels_file_column"
            )
        if t.shape[0] and t.iat[0, 0] not in set(sample_ids):
            t = t.iloc[1:]  # header line
        ids, lab = t.iloc[:, 0], t.iloc[:, 1]
    ids = check_unique(ids.tolist(), what="labels-file sample", where=where)
    return pd.Series(lab.to_numpy(dtype=object), index=ids)


def read_labels_file(path: Path, sample_ids: pd.Index, column: str | None, where: str) -> np.ndarray:
    """Labels for ``sample_ids`` from a labels file (:func:`labels_table`); every sample of the
    matrix must be in it (blank label cells: unlabeled), else a SupervisionError."""
    table = labels_table(path, sample_ids, column, where)
    ids = table.index
    missing = sample_ids[~sample_ids.isin(ids)]
    if missing.size:
        extra = ids[~ids.isin(sample_ids)]
        raise SupervisionError(
            f"{where}: {missing.size} of {sample_ids.size} sample(s) of the matrix are not in labels file "
            f"{path} (e.g. {examples(missing)}); the labels file has {ids.size} ids"
            + (f", {extra.size} not in the matrix (e.g. {examples(extra)})" if extra.size else "")
        )
    return table.loc[sample_ids].to_numpy(dtype=object)


def _pop_batch(df: pd.DataFrame, batch_key, orientation: str, path: Path, where: str) -> pd.Series:
    """The ``batch_key`` column, taken out of the table (it is not a feature)."""
    if orientation != "samples_as_rows" or str(batch_key) not in df.columns:
        raise InputError(f"{where}: batch_key {batch_key!r} is not a column of {path} (samples as rows); "
                         f"columns: {examples(df.columns, 5)}{' ...' if df.shape[1] > 5 else ''}")
    return df.pop(str(batch_key))


def read_delimited(
    path: Path,
    *,
    sep: str,
    where: str,
    orientation: str = "samples_as_rows",
    index_col: int | None | str = AUTO,
    label_column: str | None = None,
    labels_file: Path | None = None,
    labels_file_column: str | None = None,
    batch_key: str | None = None,
) -> AnnData:
    if orientation not in ORIENTATIONS:
        raise ConfigError(f"{where}: orientation must be one of {', '.join(ORIENTATIONS)}, got {orientation!r}")
    auto = index_col == AUTO
    if auto:
        index_col = 0
    if index_col is not None and (isinstance(index_col, bool) or not isinstance(index_col, int) or index_col < 0):
        raise ConfigError(f"{where}: index_col must be a column number >= 0 or null, got {index_col!r}")
    if label_column is not None and labels_file is not None:
        raise ConfigError(f"{where}: give either label_column or labels_file, not both")
    if label_column is not None and orientation != "samples_as_rows":
        raise ConfigError(f"{where}: label_column needs orientation samples_as_rows; use labels_file")
    if labels_file_column is not None and labels_file is None:
        raise ConfigError(f"{where}: labels_file_column given without labels_file")

    df = _read_table(path, sep, index_col, where)
    if auto and label_column is not None and df.index.name == str(label_column):
        df = df.reset_index()  # the first column is the labels, not row ids
        df.index = pd.RangeIndex(len(df))
        index_col = None
    elif auto:
        check_id_column(df, path, where)
    batch = None if batch_key is None else _pop_batch(df, batch_key, orientation, path, where)
    labels = None
    if label_column is not None:
        if str(label_column) not in df.columns:
            raise SupervisionError(
                f"{where}: label_column {label_column!r} is not a column of {path}; "
                f"columns: {examples(df.columns, 5)}{' ...' if df.shape[1] > 5 else ''}"
            )
        labels = df.pop(str(label_column)).to_numpy(dtype=object)
        if df.shape[1] == 0:
            raise InputError(f"{where}: {path} has no feature columns besides the label column")
    X = parse_numeric_frame(df, where=f"{where} ({path.name})")
    rows = None if index_col is None else df.index.astype(str)
    cols = df.columns
    if orientation == "features_as_rows":
        X, rows, cols = X.T, cols, rows
    if labels_file is not None:
        ids = rows if rows is not None else pd.Index([f"s{i + 1}" for i in range(X.shape[0])])
        ids = check_unique(ids, what="sample", where=where)
        labels = read_labels_file(labels_file, ids, labels_file_column, where)
    adata = make_adata(X, where=where, labels=labels, obs_names=rows, var_names=cols)
    if batch is not None:
        adata.obs[str(batch_key)] = batch.to_numpy(dtype=object)
    return adata
