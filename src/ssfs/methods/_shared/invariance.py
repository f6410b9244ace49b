"""The invariances the method families promise (:data:`ssfs.registry.INVARIANCES`,
docs/invariances.md), in one place so that a family's members declare them alike.

A promise is checked for every registered method by ``tests/methods/test_contract.py``;
the runner relies on ``scale`` and ``shift`` to compute scale-free (:mod:`ssfs._numerics`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

#: per-feature formulas of the labels and the values, no absolute constant: every invariance
EVERY = frozenset({"samples", "features", "copies", "scale", "shift", "unit"})
#: scores on a neighbourhood graph built from all features (distances: shift-free, but a
#: feature's scale moves the neighbours); the unit only with the data-adaptive bandwidth
GRAPH = frozenset({"samples", "features", "copies", "shift"})


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
    from ...registry import get_method

    out = frozenset(own)
    for name, params in rankers:
        out &= get_method(name).promises(params or {})
    return out
