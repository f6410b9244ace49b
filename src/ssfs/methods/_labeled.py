"""Shared helpers of the supervised rankers (SAM, GeoDE, ReliefF, information gain)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .._validation import dense
from ..errors import SupervisionError


def labeled(X, y, *, method: str, keep_sparse: bool = False):
    """Labeled rows of X (dense unless ``keep_sparse``), class codes 0..K-1 and class sizes."""
    y = np.asarray(y)
    lab = np.flatnonzero(y >= 0)
    XL = X[lab]
    if sparse.issparse(XL):
        XL = sparse.csr_matrix(XL, dtype=np.float64) if keep_sparse else dense(XL, method=method)
    else:
        XL = np.asarray(XL, dtype=np.float64)
    classes, codes = np.unique(y[lab], return_inverse=True)
    if classes.size < 2:
        raise SupervisionError(f"method {method!r} needs labeled samples of at least 2 classes, got {classes.size}")
    return XL, codes.astype(np.int64), np.bincount(codes)


def resample_counts(boots, codes: np.ndarray):
    """(W, sizes): each bootstrap resample (row of the M x n index matrix ``boots``) as the
    multiplicity of every sample (M x n), and its class sizes (M x K)."""
    boots = np.atleast_2d(np.asarray(boots, dtype=np.int64))
    codes = np.asarray(codes, dtype=np.int64)
    M, n = boots.shape[0], codes.size
    W = np.bincount((boots + n * np.arange(M)[:, None]).ravel(), minlength=M * n).reshape(M, n)
    return W, W @ (codes[:, None] == np.arange(int(codes.max()) + 1))
