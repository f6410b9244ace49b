"""Samples from several batches: batch codes from any per-sample values, and rows centred within
their batch (the methods' ``batch`` parameter; :func:`ssfs.runner.within_batches` for the others)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...errors import InputError, SSFSError


def batch_codes(batch, n: int, what: str = "batch", error: type[SSFSError] = InputError) -> np.ndarray | None:
    """Batch code >= 0 of each of the ``n`` samples from ``batch`` (any values, one per sample,
    compared as text; None: no batches, None returned); a one-line ``error`` (a method's
    parameter: :class:`MethodError`) for the wrong length or a missing value (None, NaN)."""
    if batch is None:
        return None
    if np.ndim(batch) != 1 or len(batch) != n:
        raise error(f"{what} must give one value per sample ({n}), got shape {np.shape(batch)}")
    values = np.asarray(batch, dtype=object)
    missing = _MISSING(values).astype(bool)
    if missing.any():
        raise error(f"{what} has {int(missing.sum())} missing values (every sample needs its batch)")
    return np.unique(values.astype(str), return_inverse=True)[1].astype(np.int64).ravel()


#: None or NaN, element by element (no pandas: the start-up of every job imports this module)
_MISSING = np.frompyfunc(lambda v: v is None or v != v, 1, 1)


def centred_in_batches(Z, codes: np.ndarray | None) -> np.ndarray:
    """Z (dense float64; a sparse Z made dense) minus every column's mean over the rows of each
    batch (``codes`` from :func:`batch_codes`); Z itself without codes. For scores Z = X V on fixed
    axes V, the scores of X minus its batch means."""
    if codes is None:
        return Z
    D = Z.toarray() if sparse.issparse(Z) else np.asarray(Z, dtype=np.float64)
    B = sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))))
    return D - (np.asarray(B @ D) / np.asarray(B.sum(axis=1)))[codes]
