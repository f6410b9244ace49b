"""Moran's I of every feature on a kNN graph: how much a gene's value is shared by neighbouring
samples (label-free; ``propagate``'s ``label_free="autocorrelation"`` for counts).

For a row-normalised graph W (each row sums to 1) and x centred, I = x^T W x / x^T x (Moran
1950; with row-normalised weights S0 = n and the usual n / S0 factor is 1). Hotspot (DeTomaso &
Yosef 2021) ranks genes by the same local autocorrelation, standardised by a count model; a
cell type's markers are shared by its cells' neighbours whatever the type's size, where the
variance in the span of the leading components (the former label-free score) misses a type too
small to own a component.

``batch``: x centred in every batch (x - m_b), the residuals of ComBat's location model, so a gene
that only differs between batches is not autocorrelated because the graph's neighbours share a
batch. Sparse X stays sparse: x^T W x is summed by blocks of rows (:func:`.graph.quad_forms`, as
the Laplacian score's) and the centring enters
through X^T W^T H, X^T W H and H^T W H (H the samples' batch indicators), products of size p x B.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .class_stats import within_batch_total
from .graph import quad_forms


def row_normalized(W) -> sparse.csr_matrix:
    """W with every row divided by its sum (an isolated sample's row stays 0)."""
    W = sparse.csr_matrix(W, dtype=np.float64)
    d = np.asarray(W.sum(axis=1)).ravel()
    return sparse.csr_matrix(sparse.diags(np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)) @ W)


def moran_i(X, W, batch=None) -> np.ndarray:
    """Moran's I of every feature (column of X, dense or sparse) on the graph W (n x n affinities,
    row-normalised here), x centred in every ``batch`` (codes 0..B-1; None: one batch). NaN for
    a feature constant within its batches. Numerator x_c^T W x_c = x^T W x - sum_b m_b (c_b + r_b)
    . x + m^T A m with c_b = W^T 1_b, r_b = W 1_b, A = H^T W H and m_b the batch means (module doc)."""
    n = X.shape[0]
    W = row_normalized(W)
    codes = np.zeros(n, dtype=np.int64) if batch is None else np.asarray(batch, dtype=np.int64)
    H = sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, int(codes.max(initial=0)) + 1))
    sizes = np.asarray(H.sum(axis=0)).ravel()
    sums = H.T @ X
    means = (sums.toarray() if sparse.issparse(sums) else np.asarray(sums)) / np.maximum(sizes, 1)[:, None]  # B x p
    WH = np.asarray((W @ H).todense())  # r_b: each row's weight on batch b
    WtH = np.asarray((W.T @ H).todense())  # c_b
    cross = np.asarray(X.T @ (WH + WtH))  # p x B
    A = np.asarray((H.T @ W @ H).todense())
    numerator = (quad_forms(W, X) - np.einsum("bp,pb->p", means, cross)
                 + np.einsum("bp,bc,cp->p", means, A, means))
    total = within_batch_total(X, codes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, numerator / total, np.nan)
