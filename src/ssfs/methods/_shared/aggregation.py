"""Aggregating several rankings of the same features into one.

Ranks are 1-based (1 = best), one row per ranking; tied features share their
average rank (R's ``rank``, :func:`ssfs.ranking.rank_matrix`), so no aggregate
depends on the order of the features. Every aggregate is a "lower is better"
score; :func:`ranks_from_aggregate` gives the positions in the aggregated list
(tied aggregates: their average position).

The rank product (EFSIS eq. 2/3, Breitling et al. 2004) is computed as a sum
of logarithms: a product of 50 ranks of 12 625 features is ~1e205 and
overflows float64 for slightly larger problems, while the log-sum orders
features identically and never overflows.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...ranking import ROUND_OFF, order_from_scores, rank_matrix

METHODS = ("product", "mean", "median", "min")


def rank_rows(scores, higher_is_better: bool = True) -> np.ndarray:
    """1-based ranks of every row of a run x feature score matrix (NaN last; ties, and scores
    equal up to round-off, share their average rank: :func:`ssfs.ranking.rank_matrix`)."""
    return rank_matrix(scores, higher_is_better, ROUND_OFF)


def _weights(w, m: int) -> np.ndarray:
    if w is None:
        return np.ones(m)
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape != (m,) or not np.all(np.isfinite(w)) or (w < 0).any():
        raise InputError(f"aggregation weights must be {m} finite non-negative numbers, got {w}")
    return w


def log_rank_product(R, weights=None) -> np.ndarray:
    """sum_m w_m log R_m,f: the log of the (weighted) rank product prod_m R_m,f^w_m."""
    R = np.atleast_2d(np.asarray(R))
    if (R < 1).any():
        raise InputError("ranks must be >= 1")
    return weighted_rows(_weights(weights, R.shape[0]), _log_ranks(R))


def weighted_rows(w: np.ndarray, M: np.ndarray) -> np.ndarray:
    """sum_m w_m M[m] for every column, added row by row: equal columns give equal sums to the
    last bit (a BLAS product ``w @ M`` computes columns in blocks whose last bits differ)."""
    out = np.zeros(M.shape[1:])
    for wm, row in zip(w, M, strict=True):
        out += wm * row
    return out


def _log_ranks(R: np.ndarray) -> np.ndarray:
    """log R elementwise; ranks that are integers or halves (average ranks) through tables
    of logs (one log per distinct value; integers by the same table whether or not halves occur)."""
    top = float(R.max())
    if top > 4 * R.shape[1]:
        return np.log(R.astype(np.float64))
    if R.dtype.kind in "iu":
        return np.log(np.arange(1, int(top) + 1, dtype=np.float64)).take(R - 1)
    twice = R * 2.0
    k = twice.astype(np.int64)
    if not np.array_equal(k, twice):
        return np.log(R.astype(np.float64))
    whole = np.log(np.arange(1, int(top) + 1, dtype=np.float64))
    half = np.log(np.arange(1, int(top) + 1, dtype=np.float64) + 0.5)
    idx = np.maximum(k // 2 - 1, 0)
    return np.where(k % 2 == 0, whole.take(idx), half.take(idx))


def aggregate_ranks(R, method: str = "product", weights=None) -> np.ndarray:
    """Aggregate a run x feature rank matrix; lower result = better feature.

    product: weighted log rank product; mean: weighted mean rank;
    median: median rank (unweighted); min: best rank reached in any run.
    """
    R = np.atleast_2d(np.asarray(R, dtype=np.float64))
    if method == "product":
        return log_rank_product(R, weights)
    if method == "mean":
        w = _weights(weights, R.shape[0])
        return weighted_rows(w, R) / w.sum()
    if method == "median":
        return np.median(R, axis=0)
    if method == "min":
        return R.min(axis=0)
    raise InputError(f"unknown rank aggregation {method!r}; choose one of {', '.join(METHODS)}")


def order_from_aggregate(agg) -> np.ndarray:
    """Features ordered best (lowest aggregate) first, ties by index (a listing; rankings
    are published by the runner, which breaks ties by its documented rule)."""
    return order_from_scores(agg, higher_is_better=False)


def ranks_from_aggregate(agg) -> np.ndarray:
    """1-based positions in the aggregated list (the R_f,n of EFSIS eq. 3); tied aggregates
    (equal up to round-off: log 2 + log 3 against log 6) share their average position."""
    return rank_matrix(np.asarray(agg, dtype=float)[None, :], higher_is_better=False, rtol=ROUND_OFF)[0]
