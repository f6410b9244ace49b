"""Turning scores into rankings, in one place.

Ties (exactly equal scores) in a method's published ranking (:func:`ssfs.runner.run_method`)
are broken by a documented secondary criterion, never by column order: first the
feature's variance over all samples the method saw (higher first: of two features the
method cannot separate, the one that varies more; for a method invariant to each feature's
scale, the variance over the squared range, so that no unit wins a tie), then a permutation
drawn from the run's seed (:func:`tie_break_rng`), so that across repetitions no feature
wins ties because of its position in the file. :func:`tie_sizes` counts ties (the ranking file's ``ties``
column: how many features share each feature's score) and :func:`tied_at` tells whether
the top k is decided by them (the runner, the selector and the evaluation warn).
Inside ensembles (:func:`rank_matrix`) tied features share their average rank, as R's
``rank`` does, and scores equal up to round-off (:data:`ROUND_OFF`) are tied, so a
feature's position in the file never changes its aggregate.
Infinite scores are ordered as numbers (a perfect separator's Fisher score is +inf and
ranks first); NaN (undefined) ranks last. :func:`ssfs.runner.run_method` replaces
undefined scores by the worst value (-inf when higher is better, +inf when lower is
better), so published rankings never hold NaN.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np

from ._checked import checked_body

if TYPE_CHECKING:
    import pandas as pd


def _sort_keys(scores, higher_is_better: bool) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    return -s if higher_is_better else s  # NaN stays NaN: argsort puts it last


#: from this many keys on (a matrix without NaN), :func:`stable_argsort` sorts packed 64-bit
#: words (:mod:`ssfs._sort_kernels`, compiled on first use; smaller inputs never import numba)
PACKED_MIN = 100_000


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, axis=-1, kind="stable")`` of float keys (NaN last, equal keys by
    position), faster: large matrices through one vectorised sort of packed 64-bit words
    (:func:`ssfs._sort_kernels.packed_order`, about twice numpy's argsort); otherwise
    numpy's unstable sort, which gives the one order on distinct keys, and the stable sort
    when keys tie (straight away when the first or last place is tied, as the zero gains
    of uninformative features are)."""
    values = np.asarray(keys, dtype=float)
    if values.ndim == 2 and values.size >= PACKED_MIN and not np.isnan(values).any():
        from ._sort_kernels import packed_order  # lazy: numba (about 1 s) only for large matrices

        order = packed_order(values)
        if order is not None:
            return order
    ends = (values.min(axis=-1, keepdims=True), values.max(axis=-1, keepdims=True)) if values.size else ()
    if any((values == e).sum(axis=-1).max() > 1 for e in ends):  # a tie for first or last place
        return np.argsort(values, axis=-1, kind="stable")
    order = np.argsort(values, axis=-1)
    p = values.shape[-1]
    for row, o in zip(values.reshape(-1, p), order.reshape(-1, p), strict=True):  # loop over rows
        ks = row.take(o)
        if (ks[1:] == ks[:-1]).any() or np.isnan(ks[-1:]).any():
            return np.argsort(values, axis=-1, kind="stable")
    return order


def ranks_from_orders(order: np.ndarray) -> np.ndarray:
    """1-based ranks: the inverse permutation of each row of an ordering (best first)."""
    order = np.atleast_2d(np.asarray(order, dtype=np.int64))
    R = np.empty(order.shape, dtype=np.int64)
    positions = np.arange(1, order.shape[1] + 1)
    for r, o in zip(R, order, strict=True):  # loop over rows (row-wise scatter is cache friendly)
        r[o] = positions
    return R


def order_from_scores(scores: np.ndarray, higher_is_better: bool, *, secondary=None,
                      tie_rng: np.random.Generator | None = None) -> np.ndarray:
    """Feature indices ordered best first, NaN last. Ties: by ``secondary`` (higher
    first) when given, then by a permutation drawn from ``tie_rng`` when given, then by
    index."""
    keys = _sort_keys(scores, higher_is_better)
    if secondary is None and tie_rng is None:
        return stable_argsort(keys)
    p = keys.size
    perm = tie_rng.permutation(p) if tie_rng is not None else np.arange(p)
    sec = np.zeros(p) if secondary is None else -np.asarray(secondary, dtype=float)
    return np.lexsort((perm, sec, keys))  # last key is the primary one


#: stream id of the tie-breaking permutation, apart from every stream the methods use
TIE_STREAM = 0x7135


def tie_break_rng(rng: np.random.Generator) -> np.random.Generator:
    """The generator of the tie-breaking permutation: a function of ``rng``'s seed only
    (not of how many numbers the method drew), so a ranking split over member jobs and
    one computed in a single call break ties identically."""
    ss = getattr(rng.bit_generator, "seed_seq", None)
    if isinstance(ss, np.random.SeedSequence):
        return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, TIE_STREAM)))
    return np.random.default_rng(TIE_STREAM)


def tie_sizes(scores) -> np.ndarray:
    """For each feature, how many features (itself included) have exactly its score
    (1 = untied); NaN scores count as equal to each other."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, inv, counts = np.unique(s, return_inverse=True, return_counts=True, equal_nan=True)
    return counts[inv.ravel()].astype(np.int64)


def tied_at(scores, order, k: int) -> int:
    """Size of the tie group straddling the cut after the first ``k`` of ``order``
    (0 when the top k is not decided by ties)."""
    order = np.asarray(order, dtype=np.int64)
    k = int(k)
    if scores is None or not 0 < k < order.size:
        return 0
    s = np.asarray(scores, dtype=float)[order]
    a, b = s[k - 1], s[k]
    if not (a == b or (np.isnan(a) and np.isnan(b))):
        return 0
    same = (s == a) | (np.isnan(s) & np.isnan(a))
    return int(same.sum())


def ties_message(method: str, scores, order, k: int) -> str | None:
    """A one-line warning when the top ``k`` of a ranking is decided by ties, else None."""
    n = tied_at(scores, order, k)
    if not n:
        return None
    order = np.asarray(order, dtype=np.int64)
    s = np.asarray(scores, dtype=float)[order]
    same = np.flatnonzero((s == s[k - 1]) | (np.isnan(s) & np.isnan(s[k - 1])))
    inside = int((same < k).sum())
    return (f"{method}: the top {k} is decided by ties: {n} features share the score {s[k - 1]:.6g} "
            f"(ranks {same.min() + 1}..{same.max() + 1}) and {inside} of them are kept; ties are broken "
            "by variance (over the squared range for a scale-free method), then by a seeded permutation, not by "
            "the data")


def ranks_from_order(order: np.ndarray, p: int) -> np.ndarray:
    """1-based rank of each feature given an ordering (unlisted features get rank p)."""
    ranks = np.full(p, p, dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(1, len(order) + 1)
    return ranks


def ranking_table(
    feature_names, scores: np.ndarray | None, order: np.ndarray, selected_only: bool = False, by_size=None
) -> pd.DataFrame:
    """Tidy table ``feature, index, score, rank, ties`` sorted by rank; ``ties``: how many
    features share the feature's score (:func:`tie_sizes`; 1 = untied, 0 = no score).

    With ``selected_only`` (subset methods) only the ordered selected features are listed.
    ``by_size`` (t -> order, for methods whose list depends on the number of features
    kept, e.g. EFSIS thresholds) adds one column ``rank_top{t}`` per t: each feature's
    position in the list built for t (read back by :func:`read_ranking`).
    """
    import pandas as pd  # lazy: only the writers and readers of ranking files need it

    names = np.asarray(feature_names).astype(str)
    p = names.size
    order = np.asarray(order, dtype=np.int64)
    if not selected_only and order.size < p:
        rest = np.setdiff1d(np.arange(p), order)
        order = np.concatenate([order, rest])
    sc = np.full(p, np.nan) if scores is None else np.asarray(scores, dtype=float)
    table = pd.DataFrame(
        {
            "feature": names[order],
            "index": order,
            "score": sc[order],
            "rank": np.arange(1, order.size + 1),
            "ties": np.where(np.isnan(sc), 0, tie_sizes(sc))[order],
        }
    )
    for t, o in sorted((by_size or {}).items()):
        table[f"{SIZE_PREFIX}{int(t)}"] = ranks_from_order(o, p)[order]
    return table


#: column prefix of the per-size positions in a ranking file
SIZE_PREFIX = "rank_top"


class RankingOrders:
    """A ranking file's feature order (best first), and the per-size lists of methods whose
    list depends on the number of features kept: :meth:`at` gives the order to use for t."""

    def __init__(self, order: np.ndarray, by_size: dict | None = None):
        self.order = np.asarray(order, dtype=np.int64)
        self.by_size = dict(by_size or {})

    @property
    def size(self) -> int:
        return self.order.size

    def at(self, t: int) -> np.ndarray:
        """The order whose top t features are the selection of size t."""
        return self.by_size.get(int(t), self.order)


def read_ranking(path, max_rows: int | None = None) -> RankingOrders:
    """The orders of a workflow ranking file (:func:`ranking_table` written with its
    end-of-table line, :mod:`ssfs._checked`; a file cut short is refused in one line), only
    its first ``max_rows`` rows when it has no per-size columns."""
    import csv
    from itertools import islice

    import pandas as pd

    body = checked_body(path)
    rows = csv.reader(io.StringIO(body.decode()), delimiter="\t")  # pandas' quoting: a name may hold a tab
    head = next(rows)
    sized = [c for c in head if c.startswith(SIZE_PREFIX)]
    if not sized:  # the index column of the first rows (pandas costs 3 ms a file: 0.3 s a report)
        col = head.index("index")
        idx = np.array([int(r[col]) for r in islice(rows, max_rows)], dtype=np.int64)
        return RankingOrders(idx, {})
    table = pd.read_csv(io.BytesIO(body), sep="\t", usecols=["index", *sized])
    idx = table["index"].to_numpy(np.int64)
    by_size = {int(c[len(SIZE_PREFIX):]): idx[np.argsort(table[c].to_numpy(), kind="stable")] for c in sized}
    return RankingOrders(idx, by_size)


#: inside ensembles, scores this close (relative to the run's largest |score|) are tied: two
#: features with mathematically equal scores (integer data) differ in the last bits by the
#: order of a sum, which a matrix product's blocking, hence the features' positions, decides
ROUND_OFF = 2.0**-40


def rank_matrix(score_matrix: np.ndarray, higher_is_better: bool, rtol: float = 0.0) -> np.ndarray:
    """Row-wise 1-based ranks (row = one run, columns = features), best first, NaN last,
    vectorized over rows. Tied scores share the average of their positions (R's
    ``rank(ties.method = "average")``), so no feature's rank depends on its column; scores
    within ``rtol`` of the row's largest finite |score| of each other count as tied
    (:data:`ROUND_OFF` inside ensembles). int64 when no row holds a tie, else float64
    (multiples of 1/2)."""
    S = np.atleast_2d(np.asarray(score_matrix, dtype=float))
    keys = _sort_keys(S, higher_is_better)
    order = stable_argsort(keys)
    return average_ranks(np.take_along_axis(keys, order, axis=1), order, rtol)


def average_ranks(sorted_keys: np.ndarray, order: np.ndarray, rtol: float = 0.0) -> np.ndarray:
    """1-based ranks from each row's ``order`` and its keys in that order: a run of equal keys
    (NaN equal to NaN; with ``rtol``, consecutive keys within ``rtol`` times the row's largest
    finite |key|) shares the mean of its positions; int64 ranks when there is no tie."""
    sk = np.atleast_2d(sorted_keys)
    order = np.atleast_2d(order)
    R, p = sk.shape
    same = sk[:, 1:] == sk[:, :-1]
    same |= np.isnan(sk[:, 1:]) & np.isnan(sk[:, :-1])
    if rtol > 0 and p > 1:
        finite = np.where(np.isfinite(sk), np.abs(sk), 0.0)
        tol = rtol * finite.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            same |= (sk[:, 1:] - sk[:, :-1]) <= tol
    if not same.any():
        return ranks_from_orders(order)
    pos = np.broadcast_to(np.arange(p), (R, p))
    starts = np.ones((R, p), dtype=bool)
    starts[:, 1:] = ~same
    ends = np.ones((R, p), dtype=bool)
    ends[:, :-1] = ~same
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, p - 1)[:, ::-1], axis=1)[:, ::-1]
    out = np.empty((R, p))
    np.put_along_axis(out, order, (first + last) / 2.0 + 1.0, axis=1)
    return out


def tied_cuts(path, sizes) -> list[int]:
    """The sizes t among ``sizes`` whose top t in the ranking file ``path`` is decided by
    ties (rows t and t + 1 share their score; files without a ``ties`` column: none)."""
    import pandas as pd

    body = checked_body(path)
    head = pd.read_csv(io.BytesIO(body), sep="\t", nrows=0).columns
    if "ties" not in head or "score" not in head:
        return []
    t = pd.read_csv(io.BytesIO(body), sep="\t", usecols=["score", "ties"])
    s, n = t["score"].to_numpy(float), t["ties"].to_numpy(np.int64)
    return [int(k) for k in sizes if 0 < int(k) < s.size and n[k - 1] > 1 and s[k - 1] == s[k]]
