"""Batch SOM compression (thesis 3.3.2) and the SOM options of CLS and CSFS."""

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.methods._shared.som import compress_unlabeled, map_size, som_compress


def _blobs(seed=0, per=60, p=4):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0] * p, [8.0] + [0.0] * (p - 1), [0.0, 8.0] + [0.0] * (p - 2)])
    return np.vstack([c + rng.normal(size=(per, p)) for c in centres])


def test_map_size_follows_pca_heuristic_and_cap():
    rng = np.random.default_rng(0)
    iso = rng.normal(size=(400, 3))
    assert map_size(iso) == (5, 4)  # cap sqrt(400) = 20 nodes, ratio ~1: 5 x 4
    long = iso * np.array([4.0, 1.0, 1.0])  # eigenvalue ratio 16 -> side ratio 4
    r, c = map_size(long)
    assert r * c <= 20 and max(r, c) / min(r, c) >= 3
    assert map_size(iso, max_nodes=6)[0] * map_size(iso, max_nodes=6)[1] <= 6
    big = 5 * 50**0.54321  # Kohonen's munits for u = 50 is above sqrt(50)
    assert big > np.sqrt(50) and np.prod(map_size(iso[:50])) <= 7


def _direct_batch_som(X, n_iter, radii):
    """Linear initialisation and batch updates (eq. 3.14) written with plain loops."""
    u = X.shape[0]
    mean = X.mean(0)
    w, V = np.linalg.eigh(np.cov(X.T))
    order = np.argsort(w)[::-1]
    ev, axes = w[order], V[:, order].T
    for a in range(2):
        if axes[a][np.argmax(np.abs(axes[a]))] < 0:
            axes[a] = -axes[a]
    rows, cols = map_size(X)
    coords = [(i, j) for i in range(rows) for j in range(cols)]
    C = []
    for i, j in coords:  # rows >= cols here: longer side (rows) along the first axis
        t0 = i / (rows - 1) * 2 - 1
        t1 = j / (cols - 1) * 2 - 1
        C.append(mean + t0 * np.sqrt(ev[0]) * axes[0] + t1 * np.sqrt(ev[1]) * axes[1])
    C = np.array(C)
    for T in radii[:n_iter]:
        bmu = [int(np.argmin([np.sum((x - c) ** 2) for c in C])) for x in X]
        new = C.copy()
        for z, (zi, zj) in enumerate(coords):
            num, den = np.zeros(X.shape[1]), 0.0
            for i in range(u):
                vi, vj = coords[bmu[i]]
                tau = np.exp(-((vi - zi) ** 2 + (vj - zj) ** 2) / (2 * T * T))
                num += tau * X[i]
                den += tau
            new[z] = num / den
        C = new
    return C


def test_som_matches_direct_batch_updates():
    X = _blobs(1, per=30, p=3)
    rows, cols = map_size(X)
    assert rows > cols > 1
    radii = np.linspace(max(1.0, max(rows, cols) / 4), 1.0, 3)
    got, counts = som_compress(X, np.random.default_rng(0), n_iter=3)
    np.testing.assert_allclose(got, _direct_batch_som(X, 3, radii), rtol=1e-9, atol=1e-9)
    assert counts.sum() == X.shape[0]


def test_som_prototypes_quantize_the_data():
    X = _blobs(2)
    P, counts = som_compress(X, np.random.default_rng(0))
    assert P.shape[0] <= int(np.sqrt(X.shape[0])) and counts.sum() == X.shape[0]
    d2 = ((X[:, None, :] - P[None, :, :]) ** 2).sum(-1).min(1)
    # quantization error far below the spread of the data, and every blob gets nodes
    assert d2.mean() < 0.25 * ((X - X.mean(0)) ** 2).sum(1).mean()
    used = P[counts > 0]
    for centre in ([0, 0], [8, 0], [0, 8]):
        assert np.min(np.abs(used[:, :2] - centre).sum(1)) < 2.0


def test_som_deterministic_and_sparse_equals_dense():
    X = _blobs(3)
    a = som_compress(X, np.random.default_rng(1))
    b = som_compress(X, np.random.default_rng(2))
    c = som_compress(sparse.csr_matrix(X), np.random.default_rng(1))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(a[0], c[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(a[1], c[1])


def test_compress_unlabeled_keeps_labeled_rows():
    X = _blobs(4)
    keep = np.zeros(X.shape[0], dtype=bool)
    keep[[3, 70, 150]] = True
    Xn, index = compress_unlabeled(X, keep, np.random.default_rng(0), max_nodes=9)
    assert Xn.shape[0] == 3 + np.prod(map_size(X[~keep], max_nodes=9)) <= 3 + 9
    np.testing.assert_array_equal(Xn[index[[3, 70, 150]]], X[[3, 70, 150]])
    assert (index[~keep] == -1).all()


@pytest.mark.parametrize("name", ["cls", "csfs"])
def test_som_option_scores_on_compressed_data(name):
    X = _blobs(5, per=100, p=5)
    X[:, 4] = np.random.default_rng(9).normal(size=X.shape[0]) * 0.1  # low-variance noise
    y = np.full(X.shape[0], -1)
    y[[0, 1, 100, 101, 200, 201]] = [0, 0, 1, 1, 2, 2]
    r = run_method(name, X, y, som=True)
    again = run_method(name, X, y, som=True)
    np.testing.assert_array_equal(r.scores, again.scores)
    assert r.order[0] in (0, 1)  # a separating feature ranks first
    plain = run_method(name, X, y)
    assert not np.allclose(r.scores, plain.scores)
    if name == "csfs":
        assert r.result.extra["n_samples_scored"] == 6 + np.prod(map_size(np.delete(X, [0, 1, 100, 101, 200, 201], 0)))
