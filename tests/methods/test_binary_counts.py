"""Binary counts (scATAC-seq peaks binarised, ``methods/_shared/detection.py``): the detection model's rates and
residuals by hand, which counts are binary, and planted peaks whose type-specific peaks the negative binomial's
residual graph missed without labels (session 46)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.methods._shared import detection as D
from ssfs.methods._shared.residuals import (
    BINARY_GENES,
    CountModel,
    binary_counts,
    most_detected,
    residual_embedding,
)


def _recall(order, markers) -> int:
    return int(np.isin(np.asarray(order)[:markers.size], markers).sum())


def test_rates_by_hand_where_every_margin_is_alike():
    """4 cells each detecting 3 of 6 features, every feature in 2 cells: p = 3 / 6 = 2 / 4 = 1 / 2 everywhere, so
    t_c m_g = -ln(1 - 1/2) = ln 2 (the linear Poisson reading would give 1/2); a cell and a feature never detected
    get rate 0."""
    B = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]], dtype=float)
    t, m = D.detection_rates(B.sum(axis=1), B.sum(axis=0))
    np.testing.assert_allclose(np.outer(t, m), np.log(2.0), rtol=1e-12)
    t, m = D.detection_rates(np.r_[B.sum(axis=1), 0.0], np.r_[B.sum(axis=0), 0.0])
    assert t[-1] == 0.0 and m[-1] == 0.0
    np.testing.assert_allclose(np.outer(t[:-1], m[:-1]), np.log(2.0), rtol=1e-12)


@pytest.mark.parametrize("n, p, tolerance", [(200, 300, 1e-10), (2000, 3000, 1e-5)])
def test_rates_match_every_margin(n, p, tolerance):
    """Random binary counts (cells of log-normal depth, features of log-normal accessibility): every cell's and
    every feature's expected detections sum(1 - exp(-t_c m_g)) equal the observed ones; exactly (1e-10) on the
    distinct margins (59 and 68 of them), within 1e-5 where the cells hold 515 distinct margins (more than
    :data:`~ssfs.methods._shared.detection.GROUPS`: fitted on groups spaced in log, then solved one by one)."""
    rng = np.random.default_rng(0)
    chance = rng.lognormal(-3, 1, 3000)[None, :p] * rng.lognormal(0, 0.5, 2000)[:n, None]
    B = (rng.random((n, p)) < chance).astype(float)
    r, k = B.sum(axis=1), B.sum(axis=0)
    t, m = D.detection_rates(r, k)
    P = -np.expm1(-np.outer(t, m))
    assert np.max(np.abs(P.sum(axis=1) - r) / np.maximum(r, 1)) < tolerance
    assert np.max(np.abs(P.sum(axis=0) - k) / np.maximum(k, 1)) < tolerance
    assert (np.unique(r).size > D.GROUPS) == (n == 2000)


def test_residuals_by_hand():
    """(x - p) / sqrt(p (1 - p)) with p = 1 - exp(-t m), clipped; a feature never detected: 0."""
    t, m = np.array([0.5, 2.0]), np.array([1.0, 0.1, 0.0])
    x = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    p = 1.0 - np.exp(-np.outer(t, m[:2]))
    expected = np.c_[(x[:, :2] - p) / np.sqrt(p * (1.0 - p)), np.zeros(2)]
    np.testing.assert_allclose(D.detection_residuals(sparse.csr_matrix(x), t, m, 10.0), expected, rtol=1e-12)
    assert D.detection_residuals(x, t, m, 1.0)[1, 1] == 1.0  # 2.98 clipped to +-1


def test_which_counts_are_binary(other_shapes):
    """Binarised peaks, raw or as log1p(CP10k), carry the detection model (the same rates); peak counts (some 2s),
    planted RNA counts and an empty matrix do not (their model and graphs are unchanged, bit for bit)."""
    X, C, _, _ = other_shapes.SHAPES["binary_peaks"](0)
    raw, logged = CountModel.of(C), CountModel.of(X)
    assert raw.detection is not None and logged.detection is not None
    np.testing.assert_allclose(np.outer(*logged.detection)[:50], np.outer(*raw.detection)[:50], rtol=1e-9)
    assert CountModel.of(other_shapes.SHAPES["peak_counts"](0)[1]).detection is None
    assert CountModel.of(other_shapes.SHAPES["bursty_genes_counts"](0)[1]).detection is None
    assert CountModel.of(sparse.csr_matrix((5, 4))).detection is None
    assert D.is_binary(np.ones(3)) and not D.is_binary(np.array([1.0, 2.0])) and not D.is_binary(np.zeros(0))
    assert D.is_binary(np.array([1.0, 0.0, 1.0])) and not D.is_binary(np.zeros(2))  # stored zeros aside
    assert binary_counts(X) and binary_counts(sparse.csr_matrix(C))
    assert not binary_counts(other_shapes.SHAPES["peak_counts"](0)[0]) and not binary_counts(2.0 * C)
    assert not binary_counts(np.zeros((3, 3)))
    stored = sparse.csr_matrix((np.array([1.0, 0.0, 1.0]), np.array([0, 1, 2]), np.array([0, 3])), shape=(1, 3))
    assert binary_counts(stored) and stored.nnz == 3  # a stored zero aside, and the caller's matrix untouched


def test_the_most_detected_genes_and_their_ties():
    """Binary counts' residual components use the genes detected most often; genes tied with the last one come
    too, unless they would double the count (then none of them)."""
    C = np.zeros((10, 6))
    for j, detected in enumerate([9, 7, 7, 7, 2, 1]):
        C[:detected, j] = 1.0
    model = CountModel.of(C)
    np.testing.assert_array_equal(most_detected(model, np.arange(6), 2), [0, 1, 2, 3])
    np.testing.assert_array_equal(most_detected(model, np.arange(6), 1), [0])
    np.testing.assert_array_equal(most_detected(model, np.arange(6), 6), np.arange(6))
    wide = CountModel.of(np.c_[np.ones((10, 1)), np.tile(C[:, [1]], 5)])
    np.testing.assert_array_equal(most_detected(wide, np.arange(6), 2), [0])


def test_the_residual_graph_of_binary_peaks_separates_the_types(other_shapes):
    """The detection residuals' components of the :data:`BINARY_GENES` most detected peaks (all 10,000 here: every
    one of the 300 type-specific peaks among them) cut into the 5 types by k-means (adjusted Rand index above 0.6);
    the negative binomial's residual variance picked noise there (below 0.05)."""
    from sklearn.metrics import adjusted_rand_score

    from ssfs.methods._shared.kmeans import kmeans

    _, C, cls, _ = other_shapes.SHAPES["binary_peaks"](0)
    assert C.shape[1] > BINARY_GENES
    model = CountModel.of(C)
    Z, d = residual_embedding(model, 50)
    assert adjusted_rand_score(cls, kmeans(Z, d + 1)) > 0.6
    counted = CountModel(model.X, model.unit, model.totals, model.shares, model.theta, model.clip)
    Z, d = residual_embedding(counted, 50)
    assert adjusted_rand_score(cls, kmeans(Z, d + 1)) < 0.05


@pytest.mark.parametrize("shape, budget, before, least", [
    ("binary_peaks", 0, 4, 290),  # of 300: 298; Hotspot 273, triku 266
    ("binary_peaks_weak", 0, 7, 255),  # 266; Hotspot 158, triku 34
    ("binary_peaks_weak", 3, 9, 290),  # 296; label spreading + F 23, Hotspot 158
])
def test_planted_binary_peaks_find_their_types_peaks(other_shapes, shape, budget, before, least):
    """Planted binarised peaks (``bench_other_shapes.py``, seed 0), ``budget`` labels per type (0: none): the
    type-specific peaks in the top 300 (at least ``least``) against the negative binomial's residual graph before
    session 46 (``before``)."""
    X, _, cls, markers = other_shapes.SHAPES[shape](0)
    y = other_shapes.per_class_labels(cls, budget, 0) if budget else np.full(cls.size, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", X, y, rng=0)
    assert _recall(fit.order, markers) >= least > before
    if not budget:  # the note names the residuals the groups were cut in
        assert "k-means groups of the detection residuals' signal components" in fit.result.extra["note"]


def test_the_anndata_door_ranks_sparse_binary_peaks_without_labels(other_shapes):
    """A sparse binary AnnData (``X`` of 0/1 peaks, no label column): ``ssfs.tl.rank_features`` without labels
    ranks as ``run_method`` does and finds the type-specific peaks."""
    import anndata as ad

    import ssfs

    _, C, cls, markers = other_shapes.SHAPES["binary_peaks"](1)
    adata = ad.AnnData(sparse.csr_matrix(C.astype(np.float32)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ssfs.tl.rank_features(adata)
        expected = run_method("propagate", sparse.csr_matrix(C.astype(np.float32)), np.full(cls.size, -1), rng=0)
    ranked = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")
    np.testing.assert_array_equal(ranked[:markers.size], expected.order[:markers.size])
    assert _recall(ranked, markers) >= 270
