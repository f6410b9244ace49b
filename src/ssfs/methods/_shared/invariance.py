"""The invariances the method families promise (:data:`ssfs.registry.INVARIANCES`,
docs/invariances.md), in one place so that a family's members declare them alike.

A promise is checked for every registered method by ``tests/methods/test_contract.py``;
the runner relies on ``scale`` and ``shift`` to compute scale-free (:mod:`ssfs._numerics`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from scipy import sparse

from ...registry import get_method

#: per-feature formulas of the labels and the values, no absolute constant: every invariance
EVERY = frozenset({"samples", "features", "copies", "scale", "shift", "unit"})
#: scores on a neighbourhood graph built from all features (distances: shift-free, but a
#: feature's scale moves the neighbours); the unit only with the data-adaptive bandwidth. Not
#: the sample order: equal distances at a sample's k-th neighbour (duplicated samples, integer
#: data) go to the lower sample index (:func:`ssfs.methods._shared.graph.knn_search`)
GRAPH = frozenset({"features", "copies", "shift"})


def with_adaptive_bandwidth(base: Iterable[str] = GRAPH) -> Callable[[dict], frozenset]:
    """``base`` plus "unit" when the heat kernel's bandwidth is the data's ("auto"): a fixed
    number is in the unit of X; a SOM (``som``) draws its prototypes in sample order."""
    base = frozenset(base)

    def promises(params: dict) -> frozenset:
        out = set(base)
        if params.get("bandwidth", "auto") == "auto":
            out.add("unit")
        if params.get("som"):
            out.discard("samples")
        return frozenset(out)

    return promises


def of_rankers(own: Iterable[str], rankers: Iterable[tuple[str, dict]]) -> frozenset:
    """An ensemble's promises: its own (``own``: what its aggregation and random draws keep)
    that every one of its ``rankers`` (name, parameters) also keeps."""
    out = frozenset(own)
    for name, params in rankers:
        out &= get_method(name).promises(params or {})
    return out


def distinct_columns(X) -> tuple[np.ndarray, np.ndarray]:
    """(first, group): the index of the first of each group of bit-identical columns of a
    dense X, ascending, and each column's group (sparse X, or a hash collision: every column
    its own group). Columns are grouped by two wrap-around sums of their bits (exact, in
    any order), then the grouping is verified value by value."""
    p = X.shape[1]
    alone = np.arange(p), np.arange(p)
    if sparse.issparse(X) or p < 2 or X.shape[0] == 0:
        return alone
    bits = np.asarray(X, dtype=np.float64).view(np.uint64)  # any layout, no copy (an F-ordered copy: 10 ms on ALLAML)
    with np.errstate(over="ignore"):
        key = bits.sum(axis=0, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        key ^= (bits ^ (bits >> np.uint64(29))).sum(axis=0, dtype=np.uint64)
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    if first.size == p:
        return alone
    order = np.argsort(first)  # groups numbered by their first column
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    first, group = first[order], rank[group.ravel()]
    if not np.array_equal(bits, bits[:, first[group]]):
        return alone
    return first, group


def per_distinct_column(score: Callable, X):
    """``score(X)`` (one value per column, or rows of them) computed on the distinct columns of
    X only and copied to their duplicates: an exact copy of a feature gets the feature's value
    to the last bit, which a matrix product's blocking (its last bits depend on a column's
    position) would not give; and duplicated features cost nothing."""
    first, group = distinct_columns(X)
    if first.size == X.shape[1]:
        return score(X)
    return np.asarray(score(X[:, first]))[..., group]
