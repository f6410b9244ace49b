"""Shared helper of the supervised rankers (SAM, GeoDE, ReliefF, information gain)."""

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
