"""Turning scores into rankings, in one place.

Ties are broken by feature index (lower index first) so a ranking is a
deterministic function of the scores. Infinite scores are ordered as numbers (a
perfect separator's Fisher score is +inf and ranks first); NaN (undefined) ranks
last. :func:`ssfs.runner.run_method` replaces undefined scores by the worst value
(-inf when higher is better, +inf when lower is better), so published rankings
never hold NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def _sort_keys(scores, higher_is_better: bool) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    return -s if higher_is_better else s  # NaN stays NaN: argsort puts it last


def order_from_scores(scores: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Feature indices ordered best first (stable: ties by index; NaN last)."""
    return np.argsort(_sort_keys(scores, higher_is_better), kind="stable")


def ranks_from_order(order: np.ndarray, p: int) -> np.ndarray:
    """1-based rank of each feature given an ordering (unlisted features get rank p)."""
    ranks = np.full(p, p, dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(1, len(order) + 1)
    return ranks


def ranking_table(
    feature_names, scores: np.ndarray | None, order: np.ndarray, selected_only: bool = False, by_size=None
) -> pd.DataFrame:
    """Tidy table ``feature, index, score, rank`` sorted by rank.

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
    """The orders of a ranking file written from :func:`ranking_table` (only its first
    ``max_rows`` rows when it has no per-size columns)."""
    import pandas as pd

    head = pd.read_csv(path, sep="\t", nrows=0).columns
    sized = [c for c in head if c.startswith(SIZE_PREFIX)]
    table = pd.read_csv(path, sep="\t", usecols=["index", *sized], nrows=None if sized else max_rows)
    idx = table["index"].to_numpy(np.int64)
    by_size = {int(c[len(SIZE_PREFIX):]): idx[np.argsort(table[c].to_numpy(), kind="stable")] for c in sized}
    return RankingOrders(idx, by_size)


def rank_matrix(score_matrix: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Row-wise 1-based ranks (row = one run, columns = features), same rule as
    :func:`order_from_scores`, vectorized over rows."""
    S = np.atleast_2d(np.asarray(score_matrix, dtype=float))
    order = np.argsort(_sort_keys(S, higher_is_better), axis=1, kind="stable")
    R = np.empty(S.shape, dtype=np.int64)
    np.put_along_axis(R, order, np.broadcast_to(np.arange(1, S.shape[1] + 1), S.shape), axis=1)
    return R
