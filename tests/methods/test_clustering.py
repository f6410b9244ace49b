"""COP-KMeans (Wagstaff et al. 2001): constraints always satisfied, hand-checked cases, errors."""

import numpy as np
import pytest

from ssfs.constraints import Constraints
from ssfs.errors import SupervisionError
from ssfs.methods._shared.clustering import (
    cop_kmeans,
    dispersion_weights,
    violations,
    weighted_sq_dists,
)


def test_hand_checked_cannot_link_splits_a_tight_pair():
    # 1-D points 0, 0.1 | 10, 10.1: plain k-means pairs them by proximity; CL(0,1) and CL(2,3)
    # force each cluster to take one point of each pair: {0,2} & {1,3} or {0,3} & {1,2}
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    cons = Constraints(np.zeros((0, 2)), [[0, 1], [2, 3]])
    lab = cop_kmeans(X, 2, cons, np.random.default_rng(0))
    assert lab[0] != lab[1] and lab[2] != lab[3]
    # best objective: {0, 2} with {1, 3} (sse 2 * 10^2 / 2 = 100) beats {0, 3}/{1, 2} (sse 102.01/2 + 98.01/2)
    assert lab[0] == lab[2] and lab[1] == lab[3]


def test_must_link_joins_far_points():
    X = np.array([[0.0], [0.2], [5.0], [5.2], [10.0], [10.2]])
    cons = Constraints([[0, 5]], np.zeros((0, 2)))
    lab = cop_kmeans(X, 2, cons, np.random.default_rng(1))
    assert lab[0] == lab[5]
    assert violations(lab, cons) == (0, 0)


def test_random_constraints_never_violated():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 1.0, size=(40, 5)) for c in (0, 3, 6)])
    truth = np.repeat([0, 1, 2], 40)
    y = np.full(120, -1)
    y[rng.choice(120, 30, replace=False)] = 0
    y[y == 0] = truth[y == 0]
    for seed in range(5):
        cons = Constraints.sample(y, 10, 10, np.random.default_rng(seed))
        lab = cop_kmeans(X, 3, cons, np.random.default_rng(seed))
        assert lab.shape == (120,) and set(lab) <= {0, 1, 2}
        # closure too: a reported labelling satisfies every implied constraint
        assert violations(lab, cons.transitive_closure(120)) == (0, 0)


def test_infeasible_raises_naming_a_sample():
    X = np.arange(3.0)[:, None]
    cons = Constraints(np.zeros((0, 2)), [[0, 1], [0, 2], [1, 2]])  # 3 mutually CL points, 2 clusters
    with pytest.raises(SupervisionError, match=r"sample \d"):
        cop_kmeans(X, 2, cons, np.random.default_rng(0), n_init=3)


def test_deterministic_under_seed():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    cons = Constraints([[0, 1], [2, 3]], [[0, 2], [4, 5]])
    a = cop_kmeans(X, 3, cons, np.random.default_rng(9))
    b = cop_kmeans(X, 3, cons, np.random.default_rng(9))
    assert np.array_equal(a, b)


def test_unconstrained_matches_lloyd_fixed_point():
    # without constraints each sample ends at its nearest final centre (a k-means fixed point)
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    lab = cop_kmeans(X, 2, Constraints.empty(), np.random.default_rng(0))
    C = np.array([X[lab == q].mean(0) for q in range(2)])
    d = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    assert np.array_equal(lab, d.argmin(1))
    assert len(set(lab[:20])) == 1 and len(set(lab[20:])) == 1


def test_weighted_distances_direct():
    X = np.array([[1.0, 2.0], [3.0, -1.0]])
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    W = np.array([[1.0, 2.0], [0.5, 0.0]])
    want = np.array([[[W[q] @ (X[i] - C[q]) ** 2 for q in range(2)] for i in range(2)]])[0]
    assert np.allclose(weighted_sq_dists(X, C, W), want)


def test_dispersion_weights_formula():
    E = np.array([1.0, 2.0, 4.0, 0.0])
    beta = -0.1
    w = dispersion_weights(E, beta)[0]
    # direct eq. 4.23/4.28: w_j = 1 / sum_s (E_j / E_s)^(1/(beta-1)) over E_s > 0, 0 where E_j = 0
    want = [1.0 / sum((E[j] / E[s]) ** (1 / (beta - 1)) for s in range(3)) for j in range(3)] + [0.0]
    assert np.allclose(w, want)
    assert np.isclose(w.sum(), 1.0) and w[0] < w[1] < w[2]  # eq. 4.23 as written: grows with E for beta < 0
