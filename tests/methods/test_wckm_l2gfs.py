"""wCKM (thesis Alg. 13) and L2GFS (Alg. 14): formulas on tiny cases, Wave noise last, clusterings."""

import numpy as np
import pytest
from sklearn.metrics import rand_score

from ssfs import run_method
from ssfs.constraints import Constraints
from ssfs.methods.wckm import fuzzy_memberships


def waveform(n, rng):
    """Breiman's waveform (21 signal features, 2 of them pure noise at the ends) + 19 N(0,1) features."""
    i = np.arange(1, 22)
    h = [np.maximum(6 - np.abs(i - 7), 0), np.maximum(6 - np.abs(i - 15), 0), np.maximum(6 - np.abs(i - 11), 0)]
    pairs = [(0, 1), (0, 2), (1, 2)]
    c = rng.integers(0, 3, n)
    u = rng.random(n)[:, None]
    a = np.array([h[pairs[k][0]] for k in c])
    b = np.array([h[pairs[k][1]] for k in c])
    X = u * a + (1 - u) * b + rng.normal(size=(n, 21))
    return np.hstack([X, rng.normal(size=(n, 19))]), c


def partial(c, per_class=3):
    y = np.full(c.size, -1)
    for k in np.unique(c):
        y[np.flatnonzero(c == k)[:per_class]] = k
    return y


@pytest.fixture(scope="module")
def wave():
    X, c = waveform(300, np.random.default_rng(0))
    return X, c, partial(c)


@pytest.mark.parametrize("method", ["wckm", "l2gfs"])
def test_wave_weights_sum_to_one_noise_last(wave, method):
    X, c, y = wave
    ranks = []
    for seed in range(3):
        r = run_method(method, X, y, rng=seed)
        w = r.scores
        assert w.shape == (40,) and np.all(w >= 0) and np.isclose(w.sum(), 1.0)
        rk = np.empty(40)
        rk[r.order] = np.arange(40)
        ranks.append(rk)
    rk = np.mean(ranks, axis=0)
    # the 19 appended noise features rank behind the 21 waveform features on average
    assert rk[21:].mean() > rk[:21].mean() + 10
    # the middle of the waves (features 5..17) beats every appended noise feature on average
    assert rk[4:17].max() < np.median(rk[21:])


@pytest.mark.parametrize("method", ["wckm", "l2gfs"])
def test_clusterings_returned_and_deterministic(wave, method):
    X, c, y = wave
    a = run_method(method, X, y, rng=7).result
    b = run_method(method, X, y, rng=7).result
    assert np.array_equal(a.scores, b.scores)
    lab = a.extra["clusters"]
    assert lab.shape == (300,) and set(np.unique(lab)) <= {0, 1, 2}
    assert rand_score(c, lab) > 0.6  # k-means on Wave: ~0.68 (chance for 3 equal classes ~0.56)


def test_l2gfs_satisfies_every_constraint(wave):
    X, c, y = wave
    cons = Constraints.from_labels(partial(c, 6))
    lab = run_method("l2gfs", X, y, constraints=cons, rng=1).result.extra["clusters"]
    assert np.all(lab[cons.ml[:, 0]] == lab[cons.ml[:, 1]])
    assert np.all(lab[cons.cl[:, 0]] != lab[cons.cl[:, 1]])


def test_fuzzy_memberships_eq_4_15_by_hand():
    D = np.array([[1.0, 3.0], [2.0, 2.0]])
    P = np.array([[0.0, 1.0], [0.5, 0.0]])
    a = fuzzy_memberships(D, P)
    for i in range(2):
        inv = 1 / D[i]
        for q in range(2):
            want = inv[q] / inv.sum() + 1 / (2 * D[i, q]) * ((P[i] * inv).sum() / inv.sum() - P[i, q])
            assert np.isclose(a[i, q], want)
    assert np.allclose(a.sum(1), 1)


def test_wckm_tiny_case_weights_by_hand():
    # two well separated clusters; with one run the final weights satisfy eq. 4.23 for the returned memberships
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal([0, 0, 0], [0.1, 1, 3], (10, 3)), rng.normal([5, 0, 0], [0.1, 1, 3], (10, 3))])
    y = np.full(20, -1)
    y[[0, 1, 10, 11]] = [0, 0, 1, 1]
    r = run_method("wckm", X, y, rng=0, n_init=1, tol=1e-12, max_iter=500).result
    a = r.extra["memberships"]
    a2 = a * a
    C = (a2.T @ X) / a2.sum(0)[:, None]
    E = np.array([sum(a2[i, q] * (X[i, j] - C[q, j]) ** 2 for i in range(20) for q in range(2)) for j in range(3)])
    beta = -0.1
    want = [1 / sum((E[j] / E[s]) ** (1 / (beta - 1)) for s in range(3)) for j in range(3)]
    assert np.allclose(r.scores, want, rtol=1e-6)
    assert len(set(r.extra["clusters"][:10])) == 1 and len(set(r.extra["clusters"][10:])) == 1


def test_l2gfs_local_weights_eq_4_28_and_global_mean():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal([0, 0], [0.5, 2], (15, 2)), rng.normal([6, 0], [2, 0.5], (15, 2))])
    y = np.full(30, -1)
    y[[0, 15]] = [0, 1]
    r = run_method("l2gfs", X, y, rng=0, n_init=1).result
    lab, W = r.extra["clusters"], r.extra["local_weights"]
    beta = -0.1
    for q in range(2):
        Z = X[lab == q]
        E = ((Z - Z.mean(0)) ** 2).sum(0)
        want = [1 / sum((E[j] / E[s]) ** (1 / (beta - 1)) for s in range(2)) for j in range(2)]
        assert np.allclose(W[q], want)
    assert np.allclose(r.scores, W.mean(0))
