"""Raw counts read as an analysis reads them: library-size normalised and log1p-transformed.

A single-cell matrix straight from Cell Ranger or an h5ad whose ``X`` holds the counts differs
from cell to cell mostly by its depth: a kNN graph of raw counts joins cells of like depth and
the highly expressed genes lead every variance. Scanpy's tutorials normalise every cell to the
same total and take log1p before the PCA (``sc.pp.normalize_total`` + ``sc.pp.log1p``);
:func:`read_counts` does the same for the methods that compare cells (``propagate``'s
``counts`` parameter), without importing scanpy (:func:`normalize_log1p`).

Which data are raw counts (:func:`raw_counts`): non-negative integers, some of them 2 or more
(binary presence data stay as they are), in a matrix that is sparse or at least half zeros
(:func:`count_like`; dense integer data with few zeros, such as
images or mass spectra, are read as they are). Measured (planted counts, 3 labels per class):
``propagate`` on raw counts 0.82 of the planted markers, on log1p-normalised counts 1.00; on a
Splatter-like model outside the project 0.01 against 0.61.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...errors import MethodError

#: how raw counts are read (the ``counts`` parameter): "auto" normalises what :func:`raw_counts`
#: recognises, "log1p" any non-negative data, "as_is" nothing
COUNTS = ("auto", "log1p", "as_is")
#: counts per sample after normalisation (scanpy's tutorials' ``target_sum``)
TARGET_SUM = 1e4
#: share of zero values from which dense X counts as counts
ZERO_SHARE = 0.5


def count_like(X) -> bool:
    """Sparse, or at least :data:`ZERO_SHARE` of the values 0: counts (or log counts), whose
    variance follows the expression level more than the structure."""
    if sparse.issparse(X):
        return True
    return bool(X.size) and np.count_nonzero(X) <= (1.0 - ZERO_SHARE) * X.size


def raw_counts(X) -> bool:
    """:func:`count_like` X whose values are non-negative integers with at least one of 2 or more."""
    if not count_like(X):
        return False
    values = sparse.csr_matrix(X).data if sparse.issparse(X) else np.asarray(X)
    if not values.size or values.dtype.kind not in "iuf":
        return False
    return bool(values.min() >= 0 and values.max() >= 2 and np.all(np.floor(values) == values))


def normalize_log1p(X, target_sum: float = TARGET_SUM) -> sparse.csr_matrix:
    """Library-size normalisation to ``target_sum`` counts per sample, then log1p, as scanpy's
    ``normalize_total`` + ``log1p`` (:func:`ssfs.singlecell.log_normalize`) but without importing
    scanpy; CSR in, CSR out (samples without counts stay zero)."""
    X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
    tot = np.asarray(X.sum(axis=1)).ravel()
    scale = np.divide(target_sum, tot, out=np.zeros_like(tot), where=tot > 0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    np.log1p(X.data, out=X.data)
    return X


def read_counts(X, counts: str = "auto"):
    """X as the methods read it: log1p of the counts normalised to :data:`TARGET_SUM` per sample
    (CSR) when ``counts`` is "log1p", or "auto" and X holds :func:`raw_counts`; else X itself."""
    if counts not in COUNTS:
        raise MethodError(f"counts must be one of {COUNTS}, got {counts!r}")
    if counts == "as_is" or (counts == "auto" and not raw_counts(X)):
        return X
    values = X.data if sparse.issparse(X) else np.asarray(X)
    if values.size and values.min() < 0:
        raise MethodError("counts='log1p' needs non-negative data (counts); these hold negative values")
    return normalize_log1p(X, TARGET_SUM)
