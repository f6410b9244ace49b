"""Local autocorrelation of every feature on a kNN graph: how much a gene's value is shared by
neighbouring samples (label-free; ``propagate``'s ``label_free="autocorrelation"`` / ``"moran"``
for counts).

For a row-normalised graph W (each row sums to 1) and x centred, the shared variance is
x^T W x; Moran's I divides it by x^T x (Moran 1950; with row-normalised weights S0 = n and the
usual n / S0 factor is 1). :func:`poisson_autocorrelation` divides it by n mean(x) instead, for x
on the count scale (:func:`count_scale`): the Moran numerator of Poisson Pearson residuals
(Lause et al. 2021), the sum Hotspot takes over the graph's edges (DeTomaso & Yosef 2021, whose
null is a depth-adjusted negative binomial). A cell type's markers are shared by its cells'
neighbours whatever the type's size; on the count scale a marker of a few cells, far above its
mean there, weighs as its counts say, where log values compress it (the rare type's markers:
docs/labels_that_count.md, "session 16").

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


def batch_codes_or_one(batch, n: int) -> np.ndarray:
    """Batch codes 0..B-1 of the n samples (None: all in batch 0)."""
    return np.zeros(n, dtype=np.int64) if batch is None else np.asarray(batch, dtype=np.int64)


def shared_variance(X, W, batch=None) -> np.ndarray:
    """x_c^T W x_c of every feature (column of X, dense or sparse) on the graph W (n x n
    affinities, row-normalised here), x centred in every ``batch`` (codes 0..B-1; None: one
    batch): the numerator of Moran's I, the part of the sum of squares neighbours share.
    x_c^T W x_c = x^T W x - sum_b m_b (c_b + r_b) . x + m^T A m with c_b = W^T 1_b, r_b = W 1_b,
    A = H^T W H and m_b the batch means (module doc)."""
    n = X.shape[0]
    W = row_normalized(W)
    codes = batch_codes_or_one(batch, n)
    H = sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, int(codes.max(initial=0)) + 1))
    sizes = np.asarray(H.sum(axis=0)).ravel()
    sums = H.T @ X
    means = (sums.toarray() if sparse.issparse(sums) else np.asarray(sums)) / np.maximum(sizes, 1)[:, None]  # B x p
    WH = np.asarray((W @ H).todense())  # r_b: each row's weight on batch b
    WtH = np.asarray((W.T @ H).todense())  # c_b
    cross = np.asarray(X.T @ (WH + WtH))  # p x B
    A = np.asarray((H.T @ W @ H).todense())
    return (quad_forms(W, X) - np.einsum("bp,pb->p", means, cross)
            + np.einsum("bp,bc,cp->p", means, A, means))


def moran_i(X, W, batch=None) -> np.ndarray:
    """Moran's I of every feature: :func:`shared_variance` / x_c^T x_c (x centred in every
    ``batch``; W row-normalised). NaN for a feature constant within its batches."""
    numerator = shared_variance(X, W, batch)
    total = within_batch_total(X, batch_codes_or_one(batch, X.shape[0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, numerator / total, np.nan)


def has_count_scale(X) -> bool:
    """No negative value: X can be counts or their logs (:func:`count_scale`); read in place."""
    data = X.data if sparse.issparse(X) else np.asarray(X)
    return not (data.size and data.min() < 0)


def count_scale(X):
    """X on the scale of counts, where a Poisson variance equals the mean: integer X (raw counts)
    scaled to every sample's median total (rows without counts stay 0), other X taken as
    log1p(normalised counts) (scanpy's ``normalize_total`` + ``log1p``) and mapped back by expm1.
    Sparse stays sparse; a copy. None for X with a negative value (:func:`has_count_scale`)."""
    if not has_count_scale(X):
        return None
    data = X.data if sparse.issparse(X) else np.asarray(X)
    if np.array_equal(data, np.round(data)):
        totals = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        target = float(np.median(totals[totals > 0])) if np.any(totals > 0) else 1.0
        scale = np.divide(target, totals, out=np.zeros_like(totals), where=totals > 0)
        return sparse.csr_matrix(sparse.diags(scale) @ X) if sparse.issparse(X) else data * scale[:, None]
    if sparse.issparse(X):
        out = sparse.csr_matrix(X, dtype=np.float64, copy=True)
        np.expm1(out.data, out=out.data)
        return out
    return np.expm1(np.asarray(X, dtype=np.float64))


def poisson_autocorrelation(X, W, batch=None) -> np.ndarray:
    """The shared variance of every feature in units of its Poisson variance:
    x_c^T W x_c / (n mean(x)) for X on the count scale (:func:`count_scale` maps it there; W
    row-normalised, x
    centred in every ``batch``). It is the Moran numerator of the Pearson residuals
    (x - mu) / sqrt(mu) of a Poisson model with one mean per gene (Lause et al. 2021, with
    theta = infinity), which is what Hotspot's Z sums over the kNN edges (DeTomaso & Yosef 2021,
    with a depth-free null): a marker of 2 % of the cells has few cells but a mean far
    below their values, so its residuals there are large, where Moran's I divides by its own
    variance and ranks it by the share of that variance (small when most of it is noise). Units
    of X cancel in the ranking (a common factor). NaN for a feature with mean 0."""
    n = X.shape[0]
    mean = np.asarray(X.sum(axis=0), dtype=np.float64).ravel() / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mean > 0, shared_variance(X, W, batch) / (n * mean), np.nan)
