"""Start graphs judge the scales (session 35, docs/labels_that_count.md "Start graphs judge the scales"): another
scale's graph replaces the incumbent's when its kept graph predicts 2 more held-out labels, or when its start graph
(built without a label: its held-out agreement needs no refit) does against the incumbent's start graph while its
kept graph predicts at least as many (``propagate.scale_leads``)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from ssfs.methods.propagate import fit_propagation, scale_leads

Y = np.array([0, 0, 1, 1, 2, 2, 3, 3, -1, -1])
TRUTH = Y[Y >= 0]


def _graph(right: int) -> SimpleNamespace:
    """A candidate whose held-out predictions are right on the first ``right`` of the 8 labels (wrong: the next
    class)."""
    pred = TRUTH.copy()
    pred[right:] = (TRUTH[right:] + 1) % 4
    return SimpleNamespace(agreement=(right / 8, 0.25, pred, None))


@pytest.mark.parametrize(("kept", "start", "other_kept", "other_start", "leads"), [
    (2, 2, 4, 2, True),    # the kept graph predicts 2 more
    (2, 2, 3, 8, True),    # 1 more kept, the start 6 more
    (2, 2, 2, 6, True),    # as many kept, the start 4 more (5 % outlying samples, seed 3, 2 per class)
    (4, 2, 3, 8, False),   # the start leads, the kept graph predicts 1 fewer
    (2, 2, 2, 3, False),   # the start 1 more only
    (2, 6, 2, 2, False),   # the incumbent's start is the better one
])
def test_scale_leads_by_hand(kept, start, other_kept, other_start, leads):
    assert scale_leads((_graph(kept), _graph(start)), (_graph(other_kept), _graph(other_start)), Y) is leads


def test_outlying_samples_at_two_labels_per_class(other_shapes):
    """``bench_other_shapes.py``'s ``outlying_samples`` (300 x 2,000, 4 classes x 10 markers, 5 % of the samples with
    4x the noise) at 2 labels per class, seed 3: the kept graphs of both sample scales agree with 2 of the 8 held-out
    labels (chance), the start graph on samples scaled alike with 6, that in the genes' units with 2. The graph on
    samples scaled alike is kept: all 40 markers (2 before; 3 labels per class: 40)."""
    X, _, cls, markers = other_shapes.SHAPES["outlying_samples"](3)
    y = other_shapes.per_class_labels(cls, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit_propagation(X, y)
    assert (model.gene_scale, model.sample_scale) == ("standardized", "equal")
    assert (model.agreement, model.start_agreement) == (0.25, 0.75)
    assert np.isin(np.argsort(-model.scores, kind="stable")[:40], markers).sum() == 40
