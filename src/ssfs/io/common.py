"""Shared pieces of the readers: building the AnnData, names, labels, numeric parsing."""

from __future__ import annotations

import numpy as np
import pandas as pd
from anndata import AnnData
from scipy import sparse

from .._numerics import refuse_inexact_integers
from ..errors import InputError
from ..labels import encode_labels


def examples(values, k: int = 3) -> str:
    """``'a', 'b', 'c'`` (the first ``k`` values, quoted) for error messages."""
    vals = [str(v) for v in list(values)[:k]]
    return ", ".join(repr(v) for v in vals)


def check_unique(names, *, what: str, where: str) -> pd.Index:
    """``names`` as a string Index; duplicated names are an InputError naming an example."""
    idx = pd.Index(np.asarray(names, dtype=object).astype(str), dtype=object)
    if not idx.is_unique:
        dup = idx[idx.duplicated(keep=False)]
        counts = dup.value_counts()
        first = dup[0]
        raise InputError(
            f"{where}: {what} name {first!r} occurs {int(counts[first])} times "
            f"({counts.size} duplicated {what} name(s) in all); {what} names must be unique"
        )
    return idx


def generated_names(prefix: str, n: int) -> pd.Index:
    return pd.Index([f"{prefix}{i + 1}" for i in range(n)], dtype=object)


def labels_categorical(values, unlabeled_values=()) -> pd.Categorical:
    """``obs['label']`` of a reader or of the prepared data: the labels encoded by
    :func:`ssfs.labels.encode_labels` (bytes decoded, missing and ``unlabeled_values`` cells
    NaN, classes in natural order or an ordered categorical's order) as a categorical of
    the class names (text), so that encoding it again gives the same codes and names."""
    ordered = isinstance(getattr(values, "dtype", None), pd.CategoricalDtype) and bool(values.dtype.ordered)
    codes, classes = encode_labels(values, unlabeled_values)
    return pd.Categorical.from_codes(codes, categories=pd.Index([str(c) for c in classes], dtype=object),
                                     ordered=ordered)


def as_matrix(X):
    """float64 CSR (sparse input) or C-contiguous float64 ndarray."""
    if sparse.issparse(X):
        return sparse.csr_matrix(X, dtype=np.float64)
    return np.ascontiguousarray(np.asarray(X, dtype=np.float64))


def make_adata(
    X,
    *,
    where: str,
    labels=None,
    obs_names=None,
    var_names=None,
    obs: pd.DataFrame | None = None,
    var: pd.DataFrame | None = None,
) -> AnnData:
    """AnnData with X = samples x features, ``obs['label']`` when ``labels`` is given.

    Names absent from the input are generated (``s1..sn``, ``f1..fp``); given names
    must be unique.
    """
    X = as_matrix(X)
    if X.ndim != 2:
        raise InputError(f"{where}: the matrix must be 2-dimensional, got shape {X.shape}")
    n, p = X.shape
    obs_idx = (
        generated_names("s", n) if obs_names is None else check_unique(obs_names, what="sample", where=where)
    )
    var_idx = (
        generated_names("f", p) if var_names is None else check_unique(var_names, what="feature", where=where)
    )
    obs = pd.DataFrame(index=obs_idx) if obs is None else obs.set_axis(obs_idx, axis=0).copy()
    var = pd.DataFrame(index=var_idx) if var is None else var.set_axis(var_idx, axis=0).copy()
    if labels is not None:
        if len(labels) != n:
            raise InputError(f"{where}: {len(labels)} labels for {n} samples")
        obs["label"] = labels_categorical(labels)
    return AnnData(X=X, obs=obs, var=var)


def parse_numeric_frame(df: pd.DataFrame, *, where: str, skip_lines: int = 1) -> np.ndarray:
    """The frame's values as float64; the first non-numeric cell is an InputError.

    Columns pandas already parsed as numbers are taken as they are; a text column
    is either mixed (numbers and text) or wholly text, and the message says which,
    naming the row, the column and the (1-based) line of the file (``skip_lines``
    = lines before the first data row).
    """
    out = np.empty(df.shape, dtype=np.float64)
    numeric = np.array(
        [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in df.dtypes], dtype=bool
    )
    for j in np.flatnonzero(numeric & np.array([t.kind in "iu" for t in df.dtypes], dtype=bool)):
        refuse_inexact_integers(df.iloc[:, j].to_numpy(), feature=str(df.columns[j]), where=where)
    if numeric.any():
        out[:, numeric] = df.iloc[:, np.flatnonzero(numeric)].to_numpy(dtype=np.float64, na_value=np.nan)
    for j in np.flatnonzero(~numeric):  # text columns only (normally none)
        col, s = df.columns[j], df.iloc[:, j]
        num = pd.to_numeric(s, errors="coerce")
        bad = num.isna().to_numpy() & s.notna().to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            kind = "mixes numbers and text" if num.notna().any() else "is not numeric"
            raise InputError(
                f"{where}: column {str(col)!r} {kind}: first non-numeric cell at row "
                f"{str(df.index[i])!r}, column {str(col)!r} (line {i + 1 + skip_lines}): {str(s.iloc[i])!r}"
            )
        refuse_inexact_integers(num.to_numpy(), feature=str(col), where=where)
        out[:, j] = num.to_numpy(dtype=np.float64, na_value=np.nan)
    return out
