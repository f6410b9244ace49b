"""Moran's I and the Poisson-scaled shared variance (``methods/_shared/autocorrelation.py``) and
``propagate``'s label-free ``"autocorrelation"`` / ``"moran"`` scores for counts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.methods import propagate as P
from ssfs.methods._shared.autocorrelation import count_scale, moran_i, poisson_autocorrelation
from ssfs.methods._shared.counts import read_counts
from ssfs.methods._shared.graph import knn_graph
from ssfs.methods._shared.signal import canonical_rows
from ssfs.methods.propagate import label_free
from ssfs.simulate import get_scenario


def _by_hand(X, W, batch, poisson=False):
    """x_c^T W x_c / x_c^T x_c (``poisson``: / (n mean(x))), W row-normalised, x_c = x minus its
    batch's mean, dense loops."""
    W = W.toarray()
    W = W / W.sum(axis=1, keepdims=True)
    out = []
    for x in X.T:
        xc = x.copy()
        for b in np.unique(batch):
            xc[batch == b] -= x[batch == b].mean()
        den = x.size * x.mean() if poisson else xc @ xc
        out.append(np.nan if den == 0 else (xc @ W @ xc) / den)
    return np.array(out)


def test_moran_i_by_hand_dense_sparse_and_within_batches():
    rng = np.random.default_rng(0)
    n = 90
    X = rng.poisson(1.0, size=(n, 12)).astype(float)
    X[:, 2] = 3.0  # constant: NaN
    X[:, 5] = np.repeat([0.0, 4.0, 1.0], 30)  # constant within each batch below: NaN there
    W = knn_graph(rng.normal(size=(n, 3)), 6)
    batch = np.repeat([0, 1, 2], 30)
    for b in (np.zeros(n, dtype=np.int64), batch):
        ref = _by_hand(X, W, b)
        for A in (X, sparse.csr_matrix(X)):
            np.testing.assert_allclose(moran_i(A, W, b), ref, rtol=1e-10, atol=1e-12)
    assert np.isnan(moran_i(X, W)[2]) and np.isfinite(moran_i(X, W)[5]) and np.isnan(moran_i(X, W, batch)[5])
    # a path 0-1-2-3 with x = (1, 1, -1, -1): 2 of the 3 edges join equal values; by hand
    # W rows (0: {1}), (1: {0, 2}), (2: {1, 3}), (3: {2}) -> x^T W x = 1 + 0 + 0 + 1 = 2, x^T x = 4
    path = sparse.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], dtype=float))
    assert moran_i(np.array([[1.0], [1.0], [-1.0], [-1.0]]), path)[0] == pytest.approx(0.5)


def test_poisson_autocorrelation_by_hand_and_the_count_scale():
    """x_c^T W x_c / (n mean(x)) in loops (dense, sparse, within batches; NaN for a gene never
    expressed); the count scale: expm1 of log1p data, integer counts scaled to the median total."""
    rng = np.random.default_rng(1)
    n = 60
    X = rng.poisson(2.0, size=(n, 8)).astype(float)
    X[:, 3] = 0.0
    W = knn_graph(rng.normal(size=(n, 3)), 5)
    batch = np.repeat([0, 1], 30)
    for b in (np.zeros(n, dtype=np.int64), batch):
        ref = _by_hand(X, W, b, poisson=True)
        for A in (X, sparse.csr_matrix(X)):
            np.testing.assert_allclose(poisson_autocorrelation(A, W, b), ref, rtol=1e-10, atol=1e-12)
    assert np.isnan(poisson_autocorrelation(X, W)[3])
    totals = X.sum(axis=1)
    np.testing.assert_allclose(count_scale(X), X * (np.median(totals) / totals)[:, None])
    L = np.log1p(X / totals[:, None] * 1e4)
    np.testing.assert_allclose(count_scale(L), X / totals[:, None] * 1e4)
    np.testing.assert_allclose(count_scale(sparse.csr_matrix(L)).toarray(), count_scale(L))
    assert count_scale(L - 1.0) is None  # negative values: neither counts nor log counts (Moran's I is used)


def test_the_rare_types_markers_rank_on_the_count_scale():
    """``ssfs.simulate``'s rare type (40 of 2,000 cells, 20 markers), no labels: on the count scale
    the few cells' counts far above the gene's mean rank its markers, where Moran's I of the log
    values (``"moran"``, the former default) compresses them."""
    sim = get_scenario("rare").simulate(0, True)
    X = sim.expression()
    rare = sim.markers_of(sim.n_classes - 1)
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for how in ("autocorrelation", "moran"):
            order = run_method("propagate", X, None, label_free=how).order
            found[how] = int(np.isin(rare, order[: sim.markers.size]).sum())
    assert found["autocorrelation"] >= found["moran"] + 5 and found["autocorrelation"] >= 10, found  # 12 and 5


def test_autocorrelation_ranks_markers_the_nuisance_programs_hide():
    """``ssfs.simulate``'s counts with nuisance programs (seed 2, no labels): the markers of the
    types are autocorrelated on the signal graph, the programs' genes less so; the variance in the
    span of the leading components (``"signal"``, the former default) ranks the programs' genes."""
    scen = get_scenario("counts_nuisance")
    sim = scen.simulate(2, True)
    X = sim.expression()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = sim.recall(run_method("propagate", X, None).order)
        former = sim.recall(run_method("propagate", X, None, label_free="signal").order)
    assert auto >= former + 0.1 and auto >= 0.75  # measured 0.80 and 0.65 (seeds 0-3: +0.03 to +0.15)


def test_autocorrelation_on_a_subsample_beyond_refine_samples(monkeypatch):
    rng = np.random.default_rng(2)
    X = sparse.csr_matrix(rng.poisson(0.5, size=(300, 20)).astype(float))
    full, _ = P.autocorrelation_scores(X, 10)
    monkeypatch.setattr(label_free, "REFINE_SAMPLES", 200)
    sub, _ = P.autocorrelation_scores(X, 10)
    rows = np.sort(np.argsort(canonical_rows(X), kind="stable")[:200])
    monkeypatch.setattr(label_free, "REFINE_SAMPLES", 10_000)
    ratio = sub / P.autocorrelation_scores(X[rows], 10)[0]  # integer counts: scaled to the median of all
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    L = X.copy()
    L.data = np.log1p(L.data)
    rows = np.sort(np.argsort(canonical_rows(L), kind="stable")[:200])
    monkeypatch.setattr(label_free, "REFINE_SAMPLES", 200)
    on_log = P.autocorrelation_scores(L, 10)[0]
    monkeypatch.setattr(label_free, "REFINE_SAMPLES", 10_000)
    np.testing.assert_array_equal(on_log, P.autocorrelation_scores(L[rows], 10)[0])  # expm1: row by row
    assert not np.array_equal(sub, full)


def test_a_given_graph_or_embedding_is_the_one_measured_on():
    """No labels with ``graph=`` (scanpy's connectivities, as ``ssfs.tl`` passes them) or
    ``embedding=``: the Poisson-scaled shared variance (``label_free="moran"``: Moran's I) on that
    graph (symmetrised, no self loops) / on the 30-neighbour graph of that embedding, and the
    warning says which."""
    rng = np.random.default_rng(3)
    X = sparse.csr_matrix(rng.poisson(0.7, size=(150, 25)).astype(float))
    E = rng.normal(size=(150, 4))
    G = sparse.random(150, 150, density=0.05, random_state=1, format="csr")
    sym = G.maximum(G.T).tolil()
    sym.setdiag(0)
    sym = sparse.csr_matrix(sym)
    on_knn = knn_graph(E - E.mean(axis=0), 30)
    read = read_counts(X)  # raw counts: propagate reads them as log1p(counts per 10,000)
    statistics = {"autocorrelation": ("shared variance over the Poisson variance",
                                      lambda W: poisson_autocorrelation(count_scale(read), W)),
                  "moran": ("Moran's I", lambda W: moran_i(read, W))}
    for how, (said, by_hand) in statistics.items():
        for given, where, W in (({"graph": G}, "the given graph", sym),
                                ({"embedding": E}, "the given embedding's kNN graph", on_knn)):
            with pytest.warns(UserWarning, match=f"{said} on {where}"):
                scores = run_method("propagate", X, None, label_free=how, **given).scores
            np.testing.assert_allclose(scores, by_hand(W), rtol=1e-12)
