"""k-means of the samples in a low-dimensional embedding: Lloyd's iterations (Lloyd 1982) from the
k-means++ start (Arthur & Vassilvitskii 2007, section 2.2), the best of a few starts by the
within-cluster sum of squares. ``propagate`` ranks features by the variance such groups explain
when no labels are given (``label_free="clusters"``), as an analyst clusters cells and ranks each
cluster's markers.

The iterations are COP-KMeans' without constraints (:func:`~ssfs.methods._shared.clustering.cop_kmeans`),
not scikit-learn's KMeans: its Lloyd iterations sum the centres in OpenMP chunks whose order follows the
thread count, and the same seed must give the same groups, bit for bit, whatever ``--cores``.
"""

from __future__ import annotations

import numpy as np

from ...constraints import Constraints
from .clustering import cop_kmeans

#: starts tried (scikit-learn's k-means++ default is 1; a few starts find a small group more often)
STARTS = 4


def kmeans(Z, n_clusters: int, seed: int = 0, starts: int = STARTS) -> np.ndarray:
    """Cluster codes 0..G-1 (G <= ``n_clusters``, empty clusters dropped, numbered by first row) of
    the rows of Z: the best of ``starts`` k-means++ starts (``seed``: their draws) by the
    within-cluster sum of squares."""
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    n_clusters = int(min(max(n_clusters, 1), Z.shape[0]))
    best = cop_kmeans(Z, n_clusters, Constraints.empty(), np.random.default_rng(seed), n_init=starts,
                      start="plus_plus")
    _, first = np.unique(best, return_index=True)
    renumber = np.empty(int(best.max()) + 1, dtype=np.int64)
    renumber[best[np.sort(first)]] = np.arange(first.size)
    return renumber[best]
