"""Arrays rescaled gene by gene (issue #28, session 36): where no component rises the label-free scores are the
genes' dispersions, which after a z-score, a min-max scaling or a rank transform gene by gene measure the
rescaling; ``propagate`` then neither takes turns with them nor lets them lead
(``propagate.rescaled_gene_by_gene``)."""

from __future__ import annotations

import numpy as np
import pytest
from method_settings import former_graphs

from ssfs.methods.propagate import fit_propagation, judges, rescaled_gene_by_gene


def _columns(*cols) -> np.ndarray:
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])


@pytest.mark.parametrize(("X", "rescaled"), [
    (_columns([0.0, 1.0, 2.0], [5.0, 7.0, 9.0]), False),           # sds 0.82 and 1.63, ranges 2 and 4
    (_columns([-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]), True),          # z-scored: sd 0.82 both
    (_columns([0.0, 0.2, 1.0], [1.0, 0.0, 0.9]), True),            # min-max: ranges 1 (sds differ)
    (_columns([1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [4.0, 4.0, 4.0]), True),  # ranks; a constant gene does not count
    (_columns([4.0, 4.0, 4.0], [2.0, 2.0, 2.0]), False),           # only constant genes
    (_columns([0.0, 1.0, 2.0], [0.0, 1.0, 2.0 + 1e-12]), True),    # within rounding
    (_columns([0.0, 1.0, 2.0], [0.0, 1.0, 2.01]), False),          # sds 0.3 % apart: measured
])
def test_rescaled_gene_by_gene_by_hand(X, rescaled):
    assert rescaled_gene_by_gene(X) is rescaled


def test_rescaled_as_files_and_anndata_keep_them(other_shapes):
    """A z-scored array as float32 (AnnData's usual X) or written with 4 decimals, a min-max scaled one with 3: still
    rescaled; the same array before its z-score (equal-noise genes, 400 samples) is not."""
    X = other_shapes.SHAPES["z_scored_many_classes"](1)[0]
    assert rescaled_gene_by_gene(X.astype(np.float32)) and rescaled_gene_by_gene(np.round(X, 4))
    assert rescaled_gene_by_gene(np.round(other_shapes.SHAPES["min_max_many_classes"](1)[0], 3))
    assert not rescaled_gene_by_gene(other_shapes.SHAPES["many_classes"](1)[0])


def test_sparse_is_never_rescaled():
    from scipy import sparse

    assert not rescaled_gene_by_gene(sparse.csr_matrix(_columns([-1.0, 0.0, 1.0], [1.0, -1.0, 0.0])))


def _found(scores, markers) -> int:
    return int(np.isin(np.argsort(-scores, kind="stable")[:markers.size], markers).sum())


def test_the_benchmark_s_shapes(other_shapes):
    assert rescaled_gene_by_gene(other_shapes.SHAPES["z_scored_few_samples"](2)[0])
    assert rescaled_gene_by_gene(other_shapes.SHAPES["min_max_many_classes"](2)[0])
    assert not rescaled_gene_by_gene(other_shapes.SHAPES["few_samples"](2)[0])


@pytest.mark.parametrize(("shape", "labels", "seed", "found", "forced"), [
    ("z_scored_few_samples", "2/class", 2, 20, 0),   # unjudged (2 labels per class of 2 classes): it would lead
    ("z_scored_many_classes", "3/class", 1, 5, 0),   # its R^2 at chance where nothing rises: it would lead
    ("min_max_many_classes", "3/class", 1, 5, 1),    # the same, min-max scaled: the dispersions differ, by the range
])
def test_ties_neither_take_turns_nor_lead(other_shapes, monkeypatch, shape, labels, seed, found, forced):
    """``bench_other_shapes.py``'s rescaled shapes: the R^2 ranks alone (20, 5 and 5 of the 40 markers); with the
    label-free order of the rescaled dispersions allowed to lead, 0-1. The graphs the rule was found on (session 36,
    :func:`former_graphs`; the 40 samples' own now: tests/methods/test_small_studies.py)."""
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    y = other_shapes.budget_labels(cls, labels, seed)
    model = fit_propagation(X, y, **former_graphs(X.shape[1]))
    assert model.free_turns == (False, 0, 0, 0, 0) and not model.free_leads and model.labels_scores is None
    assert model.free_rescaled and model.extra()["graph"]["label_free_rescaled"]
    assert _found(model.scores, markers) == found
    monkeypatch.setattr(judges, "rescaled_gene_by_gene", lambda X: False)
    tied = fit_propagation(X, y, **former_graphs(X.shape[1]))
    assert tied.free_leads and _found(tied.scores, markers) == forced and not tied.free_rescaled
