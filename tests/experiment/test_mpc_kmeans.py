"""MPC-KMeans (Bilenko, Basu & Mooney 2004): objective and metric update by hand, and
the behaviour constraints + metric learning are for."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from ssfs import Constraints
from ssfs.errors import InputError
from ssfs.experiment.mpc_kmeans import _Problem, initial_centres_from_neighbourhoods, mpc_kmeans

X4 = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 2.0], [11.0, 4.0]])


def test_objective_by_hand():
    # labels 0,0,1,1; centres (0.5,0), (10.5,3); A_0 = (1, 2), A_1 = (0.5, 1)
    cons = Constraints(ml=[[1, 2]], cl=[[0, 1]])
    prob = _Problem(X4, 2, cons, w=1.0, wbar=2.0)
    C = np.array([[0.5, 0.0], [10.5, 3.0]])
    A = np.array([[1.0, 2.0], [0.5, 1.0]])
    labels = np.array([0, 0, 1, 1])
    # distances: x0: 0.25; x1: 0.25; x2: 0.5*0.25 + 1 = 1.125; x3: 0.125 + 1 = 1.125; -log det: -log 2, -log 0.5
    dist = 0.25 + 0.25 + 1.125 + 1.125 - 2 * np.log(2.0) - 2 * np.log(0.5)
    # ML (1,2) violated: d = (81, 4): 0.5 * (1*81 + 2*4 + 0.5*81 + 1*4) = 66.75
    ml = 0.5 * (81 + 8 + 40.5 + 4)
    # CL (0,1) violated in cluster 0: range^2 = (121, 16), d = (1, 0): 2 * (1*(121-1) + 2*16) = 304
    cl = 2.0 * (120 + 32)
    assert prob.objective(labels, C, A) == pytest.approx(dist + ml + cl)


def test_metric_update_by_hand():
    cons = Constraints(ml=[[1, 2]], cl=[[0, 1]])
    prob = _Problem(X4, 2, cons, w=1.0, wbar=2.0)
    labels = np.array([0, 0, 1, 1])
    C = np.array([[0.5, 0.0], [10.5, 3.0]])
    A = prob.metrics(labels, C, "cluster")
    # cluster 0: scatter (0.5, 0); ML half (40.5, 2); CL 2 * ((121, 16) - (1, 0)) = (240, 32)
    s0 = np.array([0.5 + 40.5 + 240, 0 + 2 + 32])
    # cluster 1: scatter (0.5, 2); ML half (40.5, 2)
    s1 = np.array([0.5 + 40.5, 2 + 2])
    np.testing.assert_allclose(A, np.vstack([2 / s0, 2 / s1]))
    shared = prob.metrics(labels, C, "shared")
    np.testing.assert_allclose(shared, np.vstack([4 / (s0 + s1)] * 2))
    np.testing.assert_allclose(prob.metrics(labels, C, "none"), 1.0)


def test_neighbourhood_initialisation():
    cons = Constraints(ml=[[0, 1], [2, 3]], cl=[])
    C = initial_centres_from_neighbourhoods(X4, 2, cons.transitive_closure(4), np.random.default_rng(0))
    np.testing.assert_allclose(sorted(C.tolist()), [[0.5, 0.0], [10.5, 3.0]])
    # one neighbourhood, K = 2: the second centre is the sample farthest from it
    cons = Constraints(ml=[[0, 1]], cl=[])
    C = initial_centres_from_neighbourhoods(X4, 2, cons.transitive_closure(4), np.random.default_rng(0))
    np.testing.assert_allclose(C, [[0.5, 0.0], [11.0, 4.0]])


def _anisotropic(n=120, seed=0):
    """Classes differ on feature 0 (gap 3, sd 0.3); feature 1 has sd 15 and two lumps that
    k-means follows instead of the classes."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    lump = np.tile([0, 1], n // 2)
    f0 = 3.0 * y + rng.normal(0, 0.3, n)
    f1 = np.where(lump == 1, 15.0, -15.0) + rng.normal(0, 2, n)
    return np.column_stack([f0, f1]), y, lump


def test_constraints_and_metric_recover_the_classes():
    X, y, lump = _anisotropic()
    plain = mpc_kmeans(X, 2, Constraints.empty(), np.random.default_rng(1), metric="none")
    assert adjusted_rand_score(y, plain) < 0.2  # unconstrained: feature 1's lumps
    assert adjusted_rand_score(lump, plain) == pytest.approx(1.0)
    lab = np.full(len(y), -1)
    for c in (0, 1):  # 3 labeled samples per (class, lump): must-links across the lumps
        for g in (0, 1):
            pick = np.flatnonzero((y == c) & (lump == g))[:3]
            lab[pick] = c
    cons = Constraints.from_labels(lab)
    got = mpc_kmeans(X, 2, cons, np.random.default_rng(1), metric="cluster")
    assert adjusted_rand_score(y, got) == pytest.approx(1.0)
    prob = _Problem(X, 2, cons, 1.0, 1.0)
    C = np.vstack([X[got == h].mean(0) for h in (0, 1)])
    A = prob.metrics(got, C, "cluster")
    assert (A[:, 0] > 100 * A[:, 1]).all()  # the learned metric weighs the class feature


def test_bad_metric_refused():
    with pytest.raises(InputError, match="metric"):
        mpc_kmeans(X4, 2, Constraints.empty(), np.random.default_rng(0), metric="full")


def test_singleton_and_empty_clusters_keep_finite_metrics():
    """Issue #20: farthest-first initialisation puts an outlying sample alone (PCMAC, RELATHE); its
    scatter is 0 on every dimension and a floor relative to it alone made A infinite, so every
    unconstrained restart ended non-finite and Table 4.3's cell was empty."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (40, 3)), [[60.0, 60.0, 60.0]]])
    prob = _Problem(X, 3, Constraints.empty(), 1.0, 1.0)
    labels = np.r_[np.zeros(40, dtype=int), 1]  # cluster 1: the outlier alone; cluster 2: empty
    C = np.vstack([X[:40].mean(0), X[40], X[0]])
    A = prob.metrics(labels, C, "cluster")
    assert np.isfinite(A).all()
    # the floor: 1e-12 x |X_h| x the data's mean per-dimension variance
    np.testing.assert_allclose(A[1:], 1.0 / (1e-12 * X.var(axis=0).mean()), rtol=1e-12)
    assert np.isfinite(prob.objective(labels, C, A))
    got = mpc_kmeans(X, 2, Constraints.empty(), np.random.default_rng(0))
    assert got is not None and np.bincount(got, minlength=2).tolist() == [40, 1]
