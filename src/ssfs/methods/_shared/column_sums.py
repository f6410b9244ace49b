"""Column sums of sparse matrices by blocks of rows: memory bounded by the block, whatever
the number of samples (a transformed copy of a million-cell matrix, or the product of a kNN
graph with it, would take gigabytes)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

#: stored values per block of rows in :func:`sparse_column_sums` (memory bounded whatever the size)
BLOCK_VALUES = 1 << 21


def sparse_column_sums(X, W: np.ndarray, transform) -> np.ndarray:
    """f(X)^T W for a CSR X, f = ``transform`` applied to the stored values (f(0) = 0: e.g.
    np.square, x != 0), W n x G or n: by blocks of rows, so no transformed copy of X is made."""
    n = X.shape[0]
    out = np.zeros((X.shape[1],) + np.shape(W)[1:])
    for a, step in row_blocks(n, X.nnz):
        B = X[a:a + step]
        out += sparse.csr_matrix((transform(B.data), B.indices, B.indptr), shape=B.shape).T @ W[a:a + step]
    return out


def row_blocks(n: int, values: int, budget: int | None = None):
    """(start, rows) blocks covering n rows that hold ``values`` stored values in all, each
    about ``budget`` values (default :data:`BLOCK_VALUES`; at least one row)."""
    step = max(1, (BLOCK_VALUES if budget is None else budget) * n // max(int(values), 1))
    return [(a, step) for a in range(0, n, step)]


def sparse_quad_forms(S, X) -> np.ndarray:
    """f_r^T S f_r for every column r of a CSR X: the rows of S @ X by blocks, each multiplied
    by the same rows of X and summed (the whole n x p product of a kNN graph with single-cell
    data is nearly dense)."""
    S = sparse.csr_matrix(S)
    n, p = X.shape
    out = np.zeros(p)
    per_row = max(1, min(p, X.nnz * max(S.nnz, 1) // max(n, 1) ** 2))  # values of a row of S @ X
    for a, step in row_blocks(n, n * per_row):
        out += np.asarray((S[a:a + step] @ X).multiply(X[a:a + step]).sum(axis=0)).ravel()
    return out
