"""The conjugate gradients of :func:`ssfs.methods._shared.propagation.block_cg`, compiled (numba).

Imported only by :func:`ssfs.methods._shared.kernels.shifted_cg`, when a system is large enough and the
process spreads often (:func:`~ssfs.methods._shared.kernels.use_cg_kernel`): importing this module imports
numba. Every
operation is numpy's, in numpy's order: the sparse products row by row in the matrix's stored order
(as scipy's ``csr_matvecs``), the column sums sample by sample (as numpy's sums of 2 columns or more
over the samples), each step a and b per column; so the result is the same, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..._jit import numba_module

numba = numba_module()


@numba.njit(cache=True, nogil=True)
def _shifted_product(indptr, indices, data, diag, scale, P, out):  # pragma: no cover - compiled
    """out = diag P - scale (S P), S's rows summed in their stored order from 0."""
    K = P.shape[1]
    for i in range(P.shape[0]):
        out[i, :] = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j, w = indices[e], data[e]
            for c in range(K):
                out[i, c] += w * P[j, c]
        for c in range(K):
            out[i, c] = diag[i] * P[i, c] - scale * out[i, c]


@numba.njit(cache=True, nogil=True)
def _column_dots(A, B, out):  # pragma: no cover - compiled
    """out[c] = sum_i A[i, c] B[i, c], added sample after sample."""
    out[:] = 0.0
    for i in range(A.shape[0]):
        for c in range(A.shape[1]):
            out[c] += A[i, c] * B[i, c]


@numba.njit(cache=True, nogil=True)
def _ratios(num, den, out):  # pragma: no cover - compiled
    """out = num / den where den > 0, else 0."""
    for c in range(num.size):
        out[c] = num[c] / den[c] if den[c] > 0 else 0.0


@numba.njit(cache=True, nogil=True)
def _step(X, R, P, MP, a):  # pragma: no cover - compiled
    """X += P a; R -= MP a (a per column)."""
    for i in range(X.shape[0]):
        for c in range(X.shape[1]):
            X[i, c] += P[i, c] * a[c]
            R[i, c] -= MP[i, c] * a[c]


@numba.njit(cache=True, nogil=True)
def _direction(R, P, b):  # pragma: no cover - compiled
    """P = R + P b (b per column)."""
    for i in range(P.shape[0]):
        for c in range(P.shape[1]):
            P[i, c] = R[i, c] + P[i, c] * b[c]


@numba.njit(cache=True, nogil=True)
def shifted_cg(indptr, indices, data, diag, scale, B, tol2, maxiter):  # pragma: no cover - compiled
    """X with (diag(diag) - scale S) X = B: block_cg's iteration (stops when every column's squared
    residual is at most tol2 times its right-hand side's)."""
    n, K = B.shape
    X, R, P, MP = np.zeros((n, K)), B.copy(), B.copy(), np.empty((n, K))
    rr, rr_new, pmp, step = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    _column_dots(R, R, rr)
    stop = tol2 * np.maximum(rr, 1e-300)
    for _ in range(maxiter):
        if np.all(rr <= stop):
            break
        _shifted_product(indptr, indices, data, diag, scale, P, MP)
        _column_dots(P, MP, pmp)
        _ratios(rr, pmp, step)
        _step(X, R, P, MP, step)
        _column_dots(R, R, rr_new)
        _ratios(rr_new, rr, step)
        _direction(R, P, step)
        rr[:] = rr_new
    return X
