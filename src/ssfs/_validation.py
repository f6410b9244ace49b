"""Input checks shared by the runner, the methods, preprocessing and metrics
(as scikit-learn's ``utils.validation``): nothing here imports the runner."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .errors import InputError, SupervisionError
from .labels import Labels, encode_labels

#: a dense copy of a sparse matrix larger than this is refused (bytes)
DENSE_LIMIT_BYTES = 4 * 1024**3


def _check_real(dtype, where: str) -> None:
    """Real numbers only: text, objects, booleans and complex numbers are refused (casting a
    complex matrix to float would silently drop the imaginary parts)."""
    if dtype == np.dtype(object) or not np.issubdtype(dtype, np.number):
        raise InputError(f"{where} is not numeric (dtype {dtype})")
    if np.issubdtype(dtype, np.complexfloating):
        raise InputError(f"{where} holds complex numbers (dtype {dtype}); give real values (e.g. np.abs(X) or X.real)")


def check_matrix(X, *, where: str = "X", return_extremes: bool = False):
    """Float matrix without NaN/inf, with at least 2 samples and 1 feature; with
    ``return_extremes`` also its :func:`column_extremes` (dense input: computed for the
    check anyway; None for sparse input)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        _check_real(X.dtype, where)
        X = X.astype(np.float64)
        vals = X.data
    else:
        X = np.asarray(X)
        _check_real(X.dtype, where)
        X = X.astype(np.float64, copy=False)
        vals = X
    if X.ndim != 2:
        raise InputError(f"{where} must be 2-dimensional (samples x features), got shape {X.shape}")
    n, p = X.shape
    if n < 2 or p < 1:
        raise InputError(f"{where} has shape {n} x {p}: need at least 2 samples and 1 feature")
    # dense: column min / max (NaN and inf propagate; no mask unless something is wrong)
    extremes = None if sparse.issparse(X) else column_extremes(X)
    if not (np.isfinite(vals).all() if extremes is None else all(np.isfinite(e).all() for e in extremes)):
        bad = ~np.isfinite(vals)
        if sparse.issparse(X):
            coo = X.tocoo()
            r, c = coo.row[bad][0], coo.col[bad][0]
        else:
            r, c = np.argwhere(bad)[0]
        raise InputError(
            f"{where} holds {int(bad.sum())} missing or infinite value(s), first at sample {r}, feature {c}; "
            "impute them (prepare: missing: median) or remove them"
        )
    return (X, extremes) if return_extremes else X


def column_extremes(X) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) of every column (implicit zeros of sparse input included)."""
    if sparse.issparse(X):
        return (np.asarray(X.min(axis=0).todense()).ravel(), np.asarray(X.max(axis=0).todense()).ravel())
    return X.min(axis=0), X.max(axis=0)


def check_labels(y, n: int) -> np.ndarray:
    """int64 class codes with -1 for unlabeled samples (:func:`check_labels_named` without the names)."""
    return check_labels_named(y, n)[0]


def check_labels_named(y, n: int):
    """``(codes, classes)``: integer codes are kept as given (``classes`` None: the codes
    are the names), :class:`ssfs.labels.Labels` keep their names; anything else (strings,
    NaN, None, categoricals) is encoded by :func:`ssfs.labels.encode_labels`."""
    if y is None:
        return np.full(n, -1, dtype=np.int64), None
    if isinstance(y, Labels):
        return _checked_codes(y.codes, n, y.classes), y.classes
    arr = y if hasattr(y, "dtype") and not hasattr(y, "cat") else np.asarray(y)
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "iu":
        return _checked_codes(arr, n), None
    return encode_labels(y, n=n)


def _checked_codes(codes, n: int, classes=None) -> np.ndarray:
    """int64 class codes of length ``n``, each -1 (unlabeled) or a class (< ``len(classes)``)."""
    arr = np.asarray(codes)
    if arr.shape != (n,):
        raise SupervisionError(f"labels have shape {arr.shape}, expected ({n},): one label per sample")
    if arr.size and arr.dtype.kind not in "iu":
        raise SupervisionError(f"label codes must be integers, got {arr.dtype}")
    if (arr < -1).any():
        raise SupervisionError("labels must be >= 0, or -1 for unlabeled samples")
    if classes is not None and arr.size and arr.max() >= len(classes):
        raise SupervisionError(f"label code {int(arr.max())} has no class name ({len(classes)} classes)")
    return arr.astype(np.int64)


def dense(X, *, method: str = "this method"):
    """Dense float array; converts sparse input when it fits, refuses with an estimate otherwise."""
    if not sparse.issparse(X):
        return np.asarray(X, dtype=np.float64)
    need = X.shape[0] * X.shape[1] * 8
    if need > DENSE_LIMIT_BYTES:
        raise InputError(
            f"{method} needs a dense matrix; densifying {X.shape[0]} x {X.shape[1]} would take "
            f"{need / 1024**3:.1f} GiB (limit {DENSE_LIMIT_BYTES / 1024**3:.0f} GiB): "
            "select fewer features first (prepare: top_variable) or use a graph-based score"
        )
    return X.toarray()


def constant_features(X, extremes=None) -> np.ndarray:
    """Boolean mask of features with zero variance (dense: max == min; ``extremes``: the
    :func:`column_extremes` of X when already known)."""
    if extremes is not None and not sparse.issparse(X):
        return extremes[0] == extremes[1]
    if sparse.issparse(X):  # exactly, as dense input: a column of values near 1e-7 varies
        lo, hi = column_extremes(sparse.csr_matrix(X))
        return lo == hi
    X = np.asarray(X, dtype=float)
    return np.ptp(X, axis=0) == 0


def column_variance(X) -> np.ndarray:
    """Population variance of every column (two-pass for dense input; sparse-aware)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        mean = np.asarray(X.mean(axis=0)).ravel()
        return np.maximum(np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2, 0.0)
    return np.asarray(X, dtype=float).var(axis=0)
