"""Compiled (numba) loops over CSR rows for the single-cell sizes of issue #16.

Used only above :data:`MIN_WORK` (pairs x stored entries), so small problems, the tests and
the workflow's jobs never pay numba's import and compilation (about 1 s, cached on disk
afterwards); below it the scipy expressions of the callers run.

* :func:`pair_sq_dists`: sum_f (x_if - x_jf)^2 per pair from the differences themselves (no
  Gram trick: row i scattered into a dense vector, row j's columns, then i's columns absent
  from j); another summation order than scipy's row sums (equal to 1e-15 relative), but
  integer data and duplicated rows give exact values, so ties stay ties
  (``tests/methods/test_kernels.py``);
* :func:`cross_sums`: sum_i x_if (S x)_if = f^T S f for every feature f without forming
  S @ X (whose rows are nearly dense on counts: 7 GB at 300,000 cells);
* :func:`shifted_cg`: the labels' spread (conjugate gradients, :mod:`.cg_kernel`) from
  :data:`CG_MIN_SAMPLES` samples once a process has spread :data:`CG_WARM_SPREADS` times (often
  enough to repay numba's import): the same values as numpy's loop, bit for bit.

Rows are split into :data:`N_CHUNKS` fixed chunks whose partial sums are added in order,
so the result does not depend on the number of threads; threads: ``$SSFS_THREADS``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..._jit import numba_module
from ..._threads import job_threads

#: below this many (pairs x mean stored entries per row) the scipy expressions run instead
MIN_WORK = 20_000_000
#: fixed row chunks of the reductions (thread-count independent summation order)
N_CHUNKS = 64

_compiled: dict = {}


def _canonical(X) -> sparse.csr_matrix:
    X = sparse.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _numba():
    """The compiled kernels (compiled or loaded from numba's cache on first use)."""
    if _compiled:
        return _compiled
    numba = numba_module()  # imports numba (about 1 s) on first use only
    _compiled.update(pair=_pair_kernel(numba), cross=_cross_kernel(numba), **_product_kernels(numba))
    return _compiled


def _pair_kernel(numba):
    @numba.njit(cache=True, parallel=True, nogil=True)
    def pair_kernel(indptr, indices, data, rows, cols, bounds, out, p):  # pragma: no cover - compiled
        for c in numba.prange(bounds.size - 1):
            v = np.zeros(p)  # row i scattered (re-scattered only when i changes)
            mark = np.full(p, -1, np.int64)  # columns of row j, tagged with the pair
            cur = -1
            for k in range(bounds[c], bounds[c + 1]):
                i, j = rows[k], cols[k]
                if i != cur:
                    if cur >= 0:
                        for a in range(indptr[cur], indptr[cur + 1]):
                            v[indices[a]] = 0.0
                    for a in range(indptr[i], indptr[i + 1]):
                        v[indices[a]] = data[a]
                    cur = i
                s = 0.0
                for b in range(indptr[j], indptr[j + 1]):  # columns of j: (x_jf - x_if)^2
                    f = indices[b]
                    d = data[b] - v[f]
                    s += d * d
                    mark[f] = k
                for a in range(indptr[i], indptr[i + 1]):  # columns of i only: x_if^2
                    if mark[indices[a]] != k:
                        s += data[a] * data[a]
                out[k] = s

    return pair_kernel


def _cross_kernel(numba):
    @numba.njit(cache=True, parallel=True, nogil=True)
    def cross_kernel(indptr, indices, data, s_indptr, s_indices, s_data, bounds, out):  # pragma: no cover
        p = out.shape[1]
        for c in numba.prange(bounds.size - 1):
            v = np.zeros(p)
            acc = out[c]
            for i in range(bounds[c], bounds[c + 1]):
                for a in range(indptr[i], indptr[i + 1]):
                    v[indices[a]] = data[a]
                for e in range(s_indptr[i], s_indptr[i + 1]):
                    j, w = s_indices[e], s_data[e]
                    for b in range(indptr[j], indptr[j + 1]):
                        f = indices[b]
                        acc[f] += w * v[f] * data[b]
                for a in range(indptr[i], indptr[i + 1]):
                    v[indices[a]] = 0.0

    return cross_kernel


def _product_kernels(numba):
    @numba.njit(cache=True, parallel=True, nogil=True)
    def right(indptr, indices, data, M, out):  # pragma: no cover - compiled; rows in parallel
        q = M.shape[1]
        for i in numba.prange(out.shape[0]):
            for a in range(indptr[i], indptr[i + 1]):
                x, f = data[a], indices[a]
                for c in range(q):
                    out[i, c] += x * M[f, c]

    @numba.njit(cache=True, parallel=True, nogil=True)
    def left(indptr, indices, data, N, col_bounds, out):  # pragma: no cover - compiled; columns in parallel
        for b in numba.prange(col_bounds.size - 1):
            c0, c1 = col_bounds[b], col_bounds[b + 1]
            for i in range(indptr.size - 1):
                for a in range(indptr[i], indptr[i + 1]):
                    x, f = data[a], indices[a]
                    for c in range(c0, c1):
                        out[f, c] += x * N[i, c]

    return {"right": right, "left": left}


#: samples from which the labels are spread by the compiled conjugate gradients (:func:`shifted_cg`) ...
CG_MIN_SAMPLES = 256
#: ... once a process has spread this many times over graphs that large with numpy's loop: numba's import
#: and the kernel's load (about 0.5 s) are repaid by about 200 spreads of PBMC's size (2.4 ms saved each),
#: about 2.5 ``propagate`` fits; a process that fits once (``ssfs rank``) never pays them, the workflow's
#: jobs (10-42 fits) switch early. The values do not depend on when: the kernel gives numpy's bits.
CG_WARM_SPREADS = 200

#: ... or at once from this many samples, where one spread takes seconds: the kernel's load is repaid by the first
#: (200,000 samples, 9 classes, one thread: 2.68 -> 2.27 s; at 1,000,000 cells a spread takes 7-40 s)
CG_AT_ONCE = 50_000

_spreads = {"large": 0}  # this process's spreads of CG_MIN_SAMPLES samples or more


def use_cg_kernel(n: int, n_columns: int) -> bool:
    """Whether :func:`shifted_cg` solves the next system of ``n`` samples and ``n_columns`` right-hand
    sides (counting it): at least :data:`CG_MIN_SAMPLES` samples, 2 columns (numpy sums one column
    pairwise, several column by column, which the kernel repeats) and :data:`CG_WARM_SPREADS` such systems
    solved before in this process, or :data:`CG_AT_ONCE` samples."""
    if n < CG_MIN_SAMPLES or n_columns < 2:
        return False
    _spreads["large"] += 1
    return _spreads["large"] > CG_WARM_SPREADS or n >= CG_AT_ONCE


def shifted_cg(S: sparse.csr_matrix, diag: np.ndarray, scale: float, B: np.ndarray, tol: float,
               maxiter: int) -> np.ndarray:
    """X with (diag(``diag``) - ``scale`` S) X = B, S symmetric, the matrix positive definite: the conjugate
    gradients of :func:`ssfs.methods._shared.propagation.block_cg` compiled, every operation in its
    order (S's products row by row in stored order as scipy's, column sums sample by sample as numpy's
    for 2 columns or more), so the same values bit for bit without numpy's per-iteration calls (PBMC's
    graphs, 350 cells, 10 classes: 3.7 -> 1.3 ms a spread)."""
    from . import cg_kernel  # lazy: numba's import (0.4 s) only in a process that spreads on large graphs

    S = sparse.csr_matrix(S, dtype=np.float64)
    diag = np.ascontiguousarray(diag, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    return cg_kernel.shifted_cg(S.indptr, S.indices, S.data, diag, float(scale), B, float(tol) ** 2, int(maxiter))


def _threads():
    import numba

    t = max(1, min(job_threads(), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(t)
    return t


def csr_matmul(X, M, transpose: bool = False) -> np.ndarray:
    """X @ M (or X^T @ M) for CSR X and a dense M, rows (columns of M) split over the threads;
    every entry is summed in the order of scipy's products, so the values are the same."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    M = np.ascontiguousarray(M, dtype=np.float64)
    k = _numba()
    t = _threads()
    if not transpose:
        out = np.zeros((X.shape[0], M.shape[1]))
        k["right"](X.indptr, X.indices, X.data, M, out)
        return out
    out = np.zeros((X.shape[1], M.shape[1]))
    k["left"](X.indptr, X.indices, X.data, M, np.linspace(0, M.shape[1], t + 1).astype(np.int64), out)
    return out


def use_kernels(X, n_items: int) -> bool:
    """True when X is sparse and ``n_items`` rows' worth of work exceeds :data:`MIN_WORK`."""
    if not sparse.issparse(X) or X.shape[0] == 0:
        return False
    return n_items * (X.nnz / X.shape[0]) >= MIN_WORK


def pair_sq_dists(X, rows, cols) -> np.ndarray:
    """sum_f (x_if - x_jf)^2 for each pair (rows[k], cols[k]) of CSR X."""
    X = _canonical(X)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    out = np.empty(rows.size)
    k = _numba()
    _threads()
    bounds = np.linspace(0, rows.size, N_CHUNKS + 1).astype(np.int64)
    k["pair"](X.indptr, X.indices, X.data, rows, cols, bounds, out, X.shape[1])
    return out


def _upper_if_symmetric(S: sparse.csr_matrix, g: np.ndarray | None = None) -> sparse.csr_matrix:
    """For a symmetric S (block diagonal by the groups ``g``), 2 triu(S, 1) + diag(S): the
    same f^T S f per group from half the edges."""
    S = _canonical(S)
    T = _canonical(S.T)
    if g is not None and np.any(g[np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))] != g[S.indices]):
        return S
    if not (np.array_equal(S.indptr, T.indptr) and np.array_equal(S.indices, T.indices)
            and np.array_equal(S.data, T.data)):
        return S
    return _canonical(sparse.triu(S, 1, format="csr") * 2.0 + sparse.diags(S.diagonal(), format="csr"))


def cross_sums(S, X, groups: np.ndarray | None = None, n_groups: int = 1) -> np.ndarray:
    """(n_groups x p): per group of the rows i, sum_i x_i * (S x)_i for every feature, S an
    n x n sparse matrix (weights S_ij), X CSR; S @ X is never formed."""
    X = _canonical(X)
    n, p = X.shape
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    S = _upper_if_symmetric(sparse.csr_matrix(S, dtype=np.float64), None if groups is None else g)
    # chunks of equal numbers of edges, never straddling a group change (a chunk's partial sum
    # goes to one group)
    change = np.flatnonzero(np.diff(g)) + 1
    even = np.searchsorted(S.indptr, np.linspace(0, S.nnz, N_CHUNKS + 1), side="left").astype(np.int64)
    bounds = np.unique(np.r_[even, change, 0, n])
    part = np.zeros((bounds.size - 1, p))
    k = _numba()
    _threads()
    k["cross"](X.indptr, X.indices, X.data, S.indptr, S.indices.astype(np.int64, copy=False), S.data,
               bounds, part)
    H = sparse.csr_matrix((np.ones(bounds.size - 1), (g[bounds[:-1]], np.arange(bounds.size - 1))),
                          shape=(n_groups, bounds.size - 1))
    return np.asarray(H @ part)
