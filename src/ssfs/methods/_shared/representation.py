"""The space a neighbourhood graph is built in (issue 15).

Scores are computed on the features themselves; only the kNN search and the
heat-kernel weights use the representation returned here. ``space``:

* ``"raw"``: the features as given (the papers' reading);
* ``"pca"``: the first ``n_pcs`` principal components (centred PCA by a randomized
  range finder with implicit centring: sparse input is never densified), as
  scanpy builds ``pp.neighbors`` on ``obsm['X_pca']``;
* ``"auto"`` (default): ``"pca"`` when the input looks like log-normalised
  single-cell data (:func:`single_cell_like`), else ``"raw"``.

On the planted single-cell simulation the raw-gene kNN graph is dominated by
thousands of noisy low-count genes; 50 components keep the cell-type structure
(docs/semi_supervised.md, "graph space").
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..._threads import limit_threads
from ...errors import MethodError
from . import kernels

SPACES = ("auto", "raw", "pca")
#: at least this many samples before "auto" uses PCA
AUTO_MIN_SAMPLES = 500
#: most values (n x p) of an X whose principal components :func:`signal_pca` computes exactly
EXACT_MAX_VALUES = 20_000_000


def single_cell_like(X) -> bool:
    """Sparse (CSR/CSC), non-negative, at least ``AUTO_MIN_SAMPLES`` rows and not integer
    counts: a normalised + log1p expression matrix. Text counts (integers) and dense
    microarrays are not."""
    if not sparse.issparse(X) or X.shape[0] < AUTO_MIN_SAMPLES or X.shape[1] < 2:
        return False
    data = X.data
    if not data.size:
        return False
    sample = data[:: max(1, data.size // 100_000)]
    return bool(sample.min() >= 0 and np.any(sample != np.round(sample)))


def pca_embedding(X, n_pcs: int = 50, *, n_iter: int = 6, seed: int = 0) -> np.ndarray:
    """n x d scores on the first d = min(n_pcs, n - 1, p - 1) principal components of X
    (centred), by a randomized range finder (Halko et al. 2011, Alg. 4.4 with ``n_iter``
    power iterations) applied to X - 1 mu^T without forming it. Each power iteration
    orthonormalises the p x q block only (A^T A applied to an orthonormal basis; the n x q
    QR, the costly one at a million cells, is done once at the end). Deterministic
    (``seed``); the graph depends only on distances, which do not change with the
    components' signs."""
    # thin products (n x ~70): one BLAS thread; on this loaded 2-core machine the default two
    # threads made 5,000 x 500 take 13.6 s instead of 1.1 s (same result)
    with limit_threads(1, user_api="blas"):
        return _pca_embedding(X, n_pcs, n_iter, seed)


def _pca_embedding(X, n_pcs: int, n_iter: int, seed: int) -> np.ndarray:
    n, p = X.shape
    d = int(max(1, min(n_pcs, n - 1, p - 1)))
    Xs = sparse.csr_matrix(X, dtype=np.float64) if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    mu = np.asarray(Xs.mean(axis=0)).ravel()
    XT = Xs.T  # a CSC view, no copy (5x faster products than a CSR transpose, same values)

    big = kernels.use_kernels(Xs, n)  # products on the job's threads, same values

    def right(M):  # (X - 1 mu^T) M
        out = kernels.csr_matmul(Xs, M) if big else np.asarray(Xs @ M)
        out -= mu @ M
        return out

    def left(M):  # (X - 1 mu^T)^T M
        XTM = kernels.csr_matmul(Xs, M, transpose=True) if big else np.asarray(XT @ M)
        return XTM - np.outer(mu, M.sum(axis=0))

    rng = np.random.default_rng(seed)
    q = min(p, d + 20)
    Y = right(rng.standard_normal((p, q)))
    for _ in range(int(n_iter)):
        W, _ = np.linalg.qr(left(Y))
        Y = right(W)
    Q, _ = np.linalg.qr(Y)
    B = left(Q).T  # q x p
    Ub, s, _ = np.linalg.svd(B, full_matrices=False)
    return (Q @ Ub[:, :d]) * s[:d]


def signal_pca(X, n_pcs: int = 50, *, n_iter: int = 6) -> np.ndarray:
    """:func:`pca_embedding`'s scores, computed exactly (an eigendecomposition of the p x p
    covariance or the n x n Gram matrix of the centred X) when X has at most
    :data:`EXACT_MAX_VALUES` values and that costs fewer operations than the randomized range
    finder's ``2 (n_iter + 1)`` products with X: ``propagate``'s refined graphs (a few hundred
    genes) and small data, 2-8x faster. The same leading components up to rounding and sign
    (which distances do not see); where eigenvalues are close (noise) the exact ones, which the
    range finder's 6 power iterations only approach. Larger X: :func:`pca_embedding` (its
    products on the job's threads, no n x n or dense p x p work beyond its block)."""
    n, p = X.shape
    d = int(max(1, min(n_pcs, n - 1, p - 1)))
    m, big = min(n, p), max(n, p)
    if n * p > EXACT_MAX_VALUES or m * m * big + m ** 3 >= 2 * (n_iter + 1) * n * p * min(p, d + 20):
        return pca_embedding(X, n_pcs, n_iter=n_iter)
    with limit_threads(1, user_api="blas"):
        return _exact_pca(X, d)


def _leading_eigh(C: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The d largest eigenvalues (ascending) and their eigenvectors of the symmetric m x m ``C``: every
    one by divide and conquer (LAPACK's ``syevd``) when d > m / 6, where that is faster than the
    relatively robust representations' subset (``syevr``), else the subset. One BLAS thread (ms): m = 100,
    d = 50: 1.9 -> 0.7; m = 200, d = 50: 4.2 -> 2.7; m = 350, d = 50: syevr 8.9, syevd 9.6 (kept)."""
    from scipy.linalg import eigh

    m = C.shape[0]
    if 6 * d > m:
        w, V = eigh(C, driver="evd")
        return w[m - d:], V[:, m - d:]
    return eigh(C, subset_by_index=(m - d, m - 1))


#: up to this many samples or features :func:`top_variance` takes a full eigendecomposition
EXACT_TOP = 200


def top_variance(X: np.ndarray) -> float:
    """The largest component variance of dense X (the largest eigenvalue of its centred columns' covariance,
    divided by n), from the smaller of the Gram and covariance matrices as :func:`_exact_pca`: exactly
    (:func:`_leading_eigh`) up to :data:`EXACT_TOP` rows or columns, else by Lanczos (ARPACK, relative tolerance
    1e-6, a fixed start; no m x m matrix). The randomized range finder of :func:`pca_embedding` only approaches
    it where the spectrum is flat (noise: 13.5 against 13.97 on 400 x 3,000 permuted columns), which would make
    noise look like a rising component (:func:`~ssfs.methods._shared.signal.clearly_rising`)."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    n, p = X.shape
    Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
    m = min(n, p)
    if m <= EXACT_TOP:
        return float(_leading_eigh(Xc @ Xc.T if n <= p else Xc.T @ Xc, 1)[0][0]) / n
    if n <= p:
        op = LinearOperator((m, m), matvec=lambda u: Xc @ (Xc.T @ u), dtype=np.float64)
    else:
        op = LinearOperator((m, m), matvec=lambda v: Xc.T @ (Xc @ v), dtype=np.float64)
    v0 = np.random.default_rng(20261204).standard_normal(m)
    return float(eigsh(op, k=1, which="LA", tol=1e-6, v0=v0, return_eigenvectors=False)[0]) / n


def _exact_pca(X, d: int) -> np.ndarray:
    """n x d scores on the first d principal components of X (centred), exactly: from the
    eigenvectors of the covariance (p <= n) or of the Gram matrix (p > n), :func:`_leading_eigh`."""
    n, p = X.shape
    mu = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    if p <= n:
        if sparse.issparse(X):
            X = sparse.csr_matrix(X, dtype=np.float64)
            C = np.asarray((X.T @ X).toarray()) - n * np.outer(mu, mu)
        else:
            Xc = np.asarray(X, dtype=np.float64) - mu
            C = Xc.T @ Xc
        _, V = _leading_eigh(C, d)
        V = V[:, ::-1]
        return np.asarray(X @ V) - mu @ V
    if sparse.issparse(X):  # (X - 1 mu^T)(X - 1 mu^T)^T without a dense copy of X
        X = sparse.csr_matrix(X, dtype=np.float64)
        v = np.asarray(X @ mu).ravel()
        G = np.asarray((X @ X.T).toarray()) - v[:, None] - v[None, :] + mu @ mu
    else:
        Xc = np.asarray(X, dtype=np.float64) - mu
        G = Xc @ Xc.T
    w, U = _leading_eigh(G, d)
    return U[:, ::-1] * np.sqrt(np.maximum(w[::-1], 0.0))


def graph_space(X, space: str = "auto", n_pcs: int = 50, embedding=None, precomputed=None):
    """The matrix whose rows the kNN graph joins: ``embedding`` when given (e.g. scanpy's
    ``obsm['X_pca']``, n rows), else X or its PCA per ``space`` (module doc). With a
    ``precomputed`` graph, ``space="auto"`` is X itself: the edges are given and their heat-kernel
    weights are measured on the features (a PCA would only be computed to weigh them)."""
    if embedding is not None:
        E = np.asarray(embedding, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != X.shape[0]:
            raise MethodError(f"embedding must have one row per sample ({X.shape[0]}), got shape {E.shape}")
        return E
    if space not in SPACES:
        raise MethodError(f"space must be one of {SPACES}, got {space!r}")
    if space == "pca" or (space == "auto" and precomputed is None and single_cell_like(X)):
        return pca_embedding(X, n_pcs)
    return X
