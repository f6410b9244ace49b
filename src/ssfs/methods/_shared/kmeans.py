"""k-means of the samples in a low-dimensional embedding: Lloyd's iterations (Lloyd 1982) from the
k-means++ start (Arthur & Vassilvitskii 2007, section 2.2), the best of a few starts by the
within-cluster sum of squares. ``propagate`` ranks features by the variance such groups explain
when no labels are given (``label_free="clusters"``), as an analyst clusters cells and ranks each
cluster's markers.

Written here rather than taken from scikit-learn because its Lloyd iterations sum the centres in
OpenMP chunks whose order follows the thread count: the same seed must give the same groups, bit
for bit, whatever ``--cores``. Every step here is one BLAS product or a fixed-order reduction.
"""

from __future__ import annotations

import numpy as np

#: starts tried (scikit-learn's k-means++ default is 1; a few starts find a small group more often)
STARTS = 4
#: most Lloyd iterations per start
MAX_ITER = 100


def _sq_dists(Z: np.ndarray, sq: np.ndarray, C: np.ndarray) -> np.ndarray:
    """||z_i - c_q||^2 of every row of Z (``sq``: its squared norms) and centre, through the Gram
    product, clipped at 0."""
    return np.maximum(sq[:, None] - 2.0 * (Z @ C.T) + np.einsum("ij,ij->i", C, C)[None, :], 0.0)


def plus_plus_start(Z: np.ndarray, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ centres (Arthur & Vassilvitskii 2007): the first a uniformly drawn row, each next
    one drawn with probability proportional to its squared distance to the nearest centre so far.
    Fewer rows than ``n_clusters`` when Z has fewer distinct rows."""
    n = Z.shape[0]
    centres = [Z[int(rng.integers(n))]]
    nearest = np.einsum("ij,ij->i", Z - centres[0], Z - centres[0])
    for _ in range(1, n_clusters):
        total = float(nearest.sum())
        if total <= 0.0:
            break
        pick = min(int(np.searchsorted(np.cumsum(nearest), rng.random() * total, side="right")), n - 1)
        centres.append(Z[pick])
        nearest = np.minimum(nearest, np.einsum("ij,ij->i", Z - Z[pick], Z - Z[pick]))
    return np.array(centres)


def lloyd(Z: np.ndarray, centres: np.ndarray, max_iter: int = MAX_ITER) -> tuple[np.ndarray, float]:
    """Lloyd's iterations from ``centres`` until the assignment repeats: (cluster of every row,
    within-cluster sum of squares). A centre that loses all its rows keeps its place."""
    sq = np.einsum("ij,ij->i", Z, Z)
    labels = None
    for _ in range(max_iter):
        D = _sq_dists(Z, sq, centres)
        new = np.argmin(D, axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=centres.shape[0])
        sums = np.zeros_like(centres)
        np.add.at(sums, labels, Z)
        filled = counts > 0
        centres = centres.copy()
        centres[filled] = sums[filled] / counts[filled, None]
    D = _sq_dists(Z, sq, centres)
    labels = np.argmin(D, axis=1)
    return labels, float(D[np.arange(Z.shape[0]), labels].sum())


def kmeans(Z, n_clusters: int, seed: int = 0, starts: int = STARTS) -> np.ndarray:
    """Cluster codes 0..G-1 (G <= ``n_clusters``, empty clusters dropped, numbered by first row) of
    the rows of Z: the best of ``starts`` k-means++ starts (``seed``: their draws) by the
    within-cluster sum of squares."""
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    n_clusters = int(min(max(n_clusters, 1), Z.shape[0]))
    rng = np.random.default_rng(seed)
    best, best_inertia = np.zeros(Z.shape[0], dtype=np.int64), np.inf
    for _ in range(starts):
        labels, inertia = lloyd(Z, plus_plus_start(Z, n_clusters, rng))
        if inertia < best_inertia:
            best, best_inertia = labels, inertia
    _, first = np.unique(best, return_index=True)
    renumber = np.empty(int(best.max()) + 1, dtype=np.int64)
    renumber[best[np.sort(first)]] = np.arange(first.size)
    return renumber[best]


def simplified_silhouette(Z, labels):
    C = np.array([Z[labels == g].mean(axis=0) for g in range(labels.max() + 1)])
    sq = np.einsum("ij,ij->i", Z, Z)
    D = np.sqrt(_sq_dists(Z, sq, C))
    a = D[np.arange(Z.shape[0]), labels]
    D[np.arange(Z.shape[0]), labels] = np.inf
    b = D.min(axis=1)
    return float(np.mean((b - a) / np.maximum(np.maximum(a, b), 1e-300)))


def chosen_kmeans(Z, most):
    import os
    best, best_s = None, -np.inf
    for K in range(2, int(most) + 1):
        g = kmeans(Z, K)
        s = simplified_silhouette(Z, g)
        if s > best_s:
            best, best_s = g, s
    if os.environ.get("SSFS_VERB"):
        print("K", best.max() + 1, "of", most, round(best_s, 3))
    return best
