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
