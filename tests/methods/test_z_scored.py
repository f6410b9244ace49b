"""Arrays z-scored gene by gene (issue #28, session 36): where no component rises, every gene's label-free score
(its dispersion) is the same, so the label-free order is a permutation of ties; ``propagate`` then neither takes
turns with it nor lets it lead (``propagate.orders_genes``)."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs.methods import propagate
from ssfs.methods.propagate import fit_propagation, gene_dispersion, orders_genes


@pytest.mark.parametrize(("scores", "orders"), [
    ([1.0, 1.0, 1.0], False),
    ([1.0, 1.0 + 1e-12, 1.0 - 1e-12], False),   # rounding of a z-scored gene's variance
    ([1.0, 1.01, 0.99], True),
    ([np.nan, 1.0, 2.0], True),                  # NaN (a constant gene) is not a score
    ([np.nan, np.nan], False),
    ([0.0, 0.0], False),
    ([-np.inf, 0.5, 0.25], True),
])
def test_orders_genes_by_hand(scores, orders):
    assert orders_genes(np.array(scores)) is orders


def _found(scores, markers) -> int:
    return int(np.isin(np.argsort(-scores, kind="stable")[:markers.size], markers).sum())


def test_a_z_scored_array_s_dispersions_order_nothing(other_shapes):
    X, _, _, _ = other_shapes.SHAPES["z_scored_few_samples"](2)
    assert not orders_genes(gene_dispersion(X))
    X, _, _, _ = other_shapes.SHAPES["few_samples"](2)
    assert orders_genes(gene_dispersion(X))


@pytest.mark.parametrize(("shape", "labels", "seed", "found", "forced"), [
    ("z_scored_few_samples", "2/class", 2, 20, 0),   # unjudged (2 labels per class of 2 classes): it would lead
    ("z_scored_many_classes", "3/class", 1, 5, 0),   # its R^2 at chance where nothing rises: it would lead
])
def test_ties_neither_take_turns_nor_lead(other_shapes, monkeypatch, shape, labels, seed, found, forced):
    """``bench_other_shapes.py``'s z-scored shapes: the R^2 ranks alone (20 and 5 of the 40 markers); with the tied
    label-free order allowed to lead, 0."""
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    y = other_shapes.budget_labels(cls, labels, seed)
    model = fit_propagation(X, y)
    assert model.free_turns == (False, 0, 0, 0, 0) and not model.free_leads and model.labels_scores is None
    assert _found(model.scores, markers) == found
    monkeypatch.setattr(propagate, "orders_genes", lambda scores: True)
    tied = fit_propagation(X, y)
    assert tied.free_leads and _found(tied.scores, markers) == forced
