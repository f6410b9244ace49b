"""Simple reference scores: variance (unsupervised) and Fisher score (supervised,
labeled samples only). Higher is better for both."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..registry import register
from ._shared.graph import weighted_sq_sums, weighted_sums
from ._shared.invariance import EVERY, per_distinct_column


def column_variance(X, w=None) -> np.ndarray:
    """(Weighted) population variance of every column; sparse-aware."""
    n = X.shape[0]
    w = np.full(n, 1.0 / n) if w is None else w / w.sum()
    m = weighted_sums(X, w)
    return np.maximum(weighted_sq_sums(X, w) - m**2, 0.0)


@register("variance", higher_is_better=True, invariances=EVERY - {"scale"})
def variance_score(X, y, constraints, rng):
    """Variance of each feature over all samples (Bishop 1995)."""
    return per_distinct_column(column_variance, X)


@register("fisher", higher_is_better=True, needs=("labels",), invariances=EVERY)
def fisher_score(X, y, constraints, rng):
    """Fisher score on the labeled samples: sum_c n_c (mu_c - mu)^2 / sum_c n_c sigma_c^2."""
    lab = np.flatnonzero(y >= 0)
    XL = X[lab]
    yl = y[lab]
    classes = np.unique(yl)
    onehot = sparse.csr_matrix((np.ones(lab.size), (np.searchsorted(classes, yl), np.arange(lab.size))),
                               shape=(classes.size, lab.size))
    nc = np.asarray(onehot.sum(axis=1)).ravel()
    sums = onehot @ XL
    sq = onehot @ (XL.multiply(XL) if sparse.issparse(XL) else XL * XL)
    sums = sums.toarray() if sparse.issparse(sums) else np.asarray(sums)
    sq = sq.toarray() if sparse.issparse(sq) else np.asarray(sq)
    mu_c = sums / nc[:, None]
    var_c = sq / nc[:, None] - mu_c**2
    mu = sums.sum(axis=0) / nc.sum()
    between = (nc[:, None] * (mu_c - mu) ** 2).sum(axis=0)
    within = (nc[:, None] * np.maximum(var_c, 0)).sum(axis=0)
    return between / within
