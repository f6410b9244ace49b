"""Moran's I (``methods/_shared/autocorrelation.py``) and ``propagate``'s label-free
``"autocorrelation"`` scores for counts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.methods import propagate as P
from ssfs.methods._shared.autocorrelation import moran_i
from ssfs.methods._shared.graph import knn_graph
from ssfs.simulate import get_scenario


def _by_hand(X, W, batch):
    """x_c^T W x_c / x_c^T x_c, W row-normalised, x_c = x minus its batch's mean, dense loops."""
    W = W.toarray()
    W = W / W.sum(axis=1, keepdims=True)
    out = []
    for x in X.T:
        xc = x.copy()
        for b in np.unique(batch):
            xc[batch == b] -= x[batch == b].mean()
        den = xc @ xc
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
    monkeypatch.setattr(P, "REFINE_SAMPLES", 200)
    sub, _ = P.autocorrelation_scores(X, 10)
    rows = np.sort(np.argsort(P.canonical_rows(X), kind="stable")[:200])
    monkeypatch.setattr(P, "REFINE_SAMPLES", 10_000)
    np.testing.assert_array_equal(sub, P.autocorrelation_scores(X[rows], 10)[0])
    assert not np.array_equal(sub, full)


def test_a_given_graph_or_embedding_is_the_one_measured_on():
    """No labels with ``graph=`` (scanpy's connectivities, as ``ssfs.tl`` passes them) or
    ``embedding=``: Moran's I on that graph (symmetrised, no self loops) / on the 30-neighbour
    graph of that embedding, and the warning says which."""
    rng = np.random.default_rng(3)
    X = sparse.csr_matrix(rng.poisson(0.7, size=(150, 25)).astype(float))
    E = rng.normal(size=(150, 4))
    G = sparse.random(150, 150, density=0.05, random_state=1, format="csr")
    with pytest.warns(UserWarning, match="Moran's I on the given graph"):
        on_graph = run_method("propagate", X, None, graph=G).scores
    sym = G.maximum(G.T).tolil()
    sym.setdiag(0)
    np.testing.assert_allclose(on_graph, moran_i(X, sparse.csr_matrix(sym)), rtol=1e-12)
    with pytest.warns(UserWarning, match="Moran's I on the given embedding's kNN graph"):
        on_embedding = run_method("propagate", X, None, embedding=E).scores
    np.testing.assert_allclose(on_embedding, moran_i(X, knn_graph(E - E.mean(axis=0), 30)), rtol=1e-12)
