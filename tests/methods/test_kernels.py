"""Compiled CSR kernels (issue #16, a million cells) against the scipy expressions they replace."""

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.methods._shared import cls, graph, kernels, representation
from ssfs.methods._shared.representation import pca_embedding
from ssfs.simulate import few_labels, simulate_singlecell

pytest.importorskip("numba")


@pytest.fixture
def forced(monkeypatch):
    """Kernels for any size (they run above kernels.MIN_WORK only)."""
    monkeypatch.setattr(kernels, "MIN_WORK", 0)


@pytest.fixture(scope="module")
def cells():
    X, sim = simulate_singlecell(1200, 300, n_types=4, rng=3)
    return X, sim


def _scipy(monkeypatch, fn, *args):
    monkeypatch.setattr(kernels, "MIN_WORK", 10**15)
    out = fn(*args)
    monkeypatch.setattr(kernels, "MIN_WORK", 0)
    return out


def test_pair_distances_match_scipy(cells, monkeypatch):
    X, _ = cells
    rng = np.random.default_rng(0)
    rows = np.sort(rng.integers(0, X.shape[0], 5000))
    cols = rng.integers(0, X.shape[0], 5000)
    ref = _scipy(monkeypatch, graph._sq_dists_of_pairs, X, rows, cols)
    got = graph._sq_dists_of_pairs(X, rows, cols)
    assert np.all(ref[rows != cols] > 0)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0)
    # unsorted rows, with row == col pairs: zero
    got2 = kernels.pair_sq_dists(X, cols, cols)
    assert np.all(got2 == 0.0)


def test_pair_distances_exact_on_counts_and_duplicates(forced):
    rng = np.random.default_rng(1)
    C = sparse.random(300, 80, density=0.2, random_state=1, format="csr", data_rvs=lambda k: rng.integers(1, 9, k))
    C = sparse.vstack([C, C[:10]]).tocsr()  # rows 300..309 duplicate rows 0..9
    D = C.toarray()
    rows, cols = rng.integers(0, 310, 4000), rng.integers(0, 310, 4000)
    exact = ((D[rows] - D[cols]) ** 2).sum(axis=1)  # integers: every order gives these values
    assert np.array_equal(kernels.pair_sq_dists(C, rows, cols), exact)
    assert np.all(kernels.pair_sq_dists(C, np.arange(10), np.arange(300, 310)) == 0.0)


def test_cross_sums_match_scipy_by_group(cells, monkeypatch):
    X, _ = cells
    S, _ = graph.heat_kernel_graph(X, k=8)
    g = np.repeat(np.arange(3), [500, 400, 300])
    ref = _scipy(monkeypatch, cls._cross_sums, S, X, g, 3)
    got = cls._cross_sums(S, X, g, 3)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    # block diagonal by group (EnsCLS's stacked members): summed from the upper triangle
    B = sparse.block_diag([graph.heat_kernel_graph(X[a:b], k=8)[0] for a, b in ((0, 500), (500, 900), (900, 1200))],
                          format="csr")
    assert kernels._upper_if_symmetric(B, g).nnz < B.nnz
    ref_b = _scipy(monkeypatch, cls._cross_sums, B, X, g, 3)
    np.testing.assert_allclose(cls._cross_sums(B, X, g, 3), ref_b, rtol=1e-12, atol=1e-12 * np.abs(ref_b).max())
    # f^T S f directly for one feature
    f = X[:, 7].toarray().ravel()
    assert got.sum(axis=0)[7] == pytest.approx(f @ (S @ f), rel=1e-12)


def test_cross_sums_independent_of_threads(cells, forced):
    import numba

    X, _ = cells
    S, _ = graph.heat_kernel_graph(X, k=8)
    before = numba.get_num_threads()
    out = []
    for t in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        monkeypatch_env = {"SSFS_THREADS": str(t)}
        with pytest.MonkeyPatch.context() as mp:
            for k, v in monkeypatch_env.items():
                mp.setenv(k, v)
            out.append((kernels.cross_sums(S, X), kernels.pair_sq_dists(X, *S.nonzero())))
    numba.set_num_threads(before)
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])


def test_cls_same_scores_with_kernels(cells, monkeypatch):
    X, sim = cells
    y = few_labels(sim.cell_type, 10, 0)
    G = graph.knn_graph(pca_embedding(X, 20), 10)
    ref = _scipy(monkeypatch, lambda: run_method("cls", X, y, graph=G).scores)
    got = run_method("cls", X, y, graph=G).scores
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    top = np.argsort(got)[: sim.markers.size]
    assert len(set(top) & set(sim.markers.ravel())) >= 0.9 * sim.markers.size


def test_pca_embedding_matches_exact_pca():
    """The randomized range finder (p-side normalisation only) against a dense SVD on data with
    a spectral gap: the same distances between samples in the first 6 components, sparse
    (never densified) and dense input alike."""
    rng = np.random.default_rng(0)
    n, p = 800, 120
    Q1, _ = np.linalg.qr(rng.standard_normal((n, 6)))
    Q2, _ = np.linalg.qr(rng.standard_normal((p, 6)))
    D = (Q1 * np.array([90.0, 70, 55, 40, 30, 20])) @ Q2.T + 0.05 * rng.standard_normal((n, p)) + 3.0
    U, s, _ = np.linalg.svd(D - D.mean(axis=0), full_matrices=False)
    E = U[:, :6] * s[:6]
    Z = pca_embedding(sparse.csr_matrix(D), 6)
    i = rng.integers(0, n, (2000, 2))
    d_ref = ((E[i[:, 0]] - E[i[:, 1]]) ** 2).sum(axis=1)
    d_got = ((Z[i[:, 0]] - Z[i[:, 1]]) ** 2).sum(axis=1)
    np.testing.assert_allclose(d_got, d_ref, rtol=1e-8, atol=1e-10 * d_ref.max())
    np.testing.assert_allclose(np.abs(pca_embedding(D, 6)), np.abs(Z), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("n, p", [(300, 40), (60, 500)])
def test_signal_pca_is_the_exact_pca_where_it_is_cheaper(n, p, monkeypatch):
    """``signal_pca``: the exact components (covariance when p <= n, Gram matrix when p > n) on
    noise, where the randomized finder's trailing components are rotated, as a dense SVD gives
    them (up to sign), sparse and dense alike; the randomized finder where it costs less."""
    rng = np.random.default_rng(1)
    D = rng.standard_normal((n, p)) + 2.0
    D[D < 1.5] = 0.0  # sparse-like
    U, s, _ = np.linalg.svd(D - D.mean(axis=0), full_matrices=False)
    d = 10
    ref = U[:, :d] * s[:d]
    for X in (D, sparse.csr_matrix(D)):
        np.testing.assert_allclose(np.abs(representation.signal_pca(X, d)), np.abs(ref), rtol=1e-9, atol=1e-9)
    calls = []
    monkeypatch.setattr(representation, "pca_embedding", lambda X, k, n_iter: calls.append(k) or np.zeros(1))
    representation.signal_pca(np.zeros((2000, 2000)), 50)  # covariance 2000^3 x 2 > 14 products of 2000^2 x 70
    representation.signal_pca(np.zeros((30_000, 800)), 20)  # cheaper exactly, but more than EXACT_MAX_VALUES
    assert calls == [50, 20]


@pytest.mark.parametrize("m, d, full", [(100, 50, True), (100, 16, False), (100, 17, True), (60, 2, False)])
def test_leading_eigenpairs_either_driver(m, d, full, monkeypatch):
    """``_leading_eigh``: the d largest eigenvalues (ascending) and their vectors, as numpy's full
    decomposition gives them (vectors up to sign), from every eigenpair (syevd) when d > m / 6, else
    from the subset (syevr)."""
    import scipy.linalg

    rng = np.random.default_rng(m + d)
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    C = (Q * np.linspace(1.0, 50.0, m)) @ Q.T
    drivers = []
    real = scipy.linalg.eigh
    monkeypatch.setattr(scipy.linalg, "eigh", lambda *a, **kw: drivers.append(kw.get("driver")) or real(*a, **kw))
    w, V = representation._leading_eigh(C, d)
    w_ref, V_ref = np.linalg.eigh(C)
    np.testing.assert_allclose(w, w_ref[m - d:], rtol=1e-12)
    np.testing.assert_allclose(np.abs(V.T @ V_ref[:, m - d:]), np.eye(d), atol=1e-9)
    assert drivers == (["evd"] if full else [None])


@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_spread_same_values_as_numpy(weighted, monkeypatch):
    """Labels spread (Zhou et al. eq. 4) and the harmonic function (Zhu et al. eq. 5) solved by the compiled
    conjugate gradients: the values of numpy's loop bit for bit (a kNN graph of 300 samples, 6 classes)."""
    from ssfs.methods._shared import propagation

    rng = np.random.default_rng(2)
    W = graph.knn_graph(rng.standard_normal((300, 4)), 8)
    if weighted:
        W = W.multiply(rng.random(W.shape))
        W = W.maximum(W.T).tocsr()
    y = np.full(300, -1)
    y[rng.choice(300, 24, replace=False)] = np.arange(24) % 6
    Y = propagation.one_hot_labels(y, 6)
    monkeypatch.setattr(kernels, "_spreads", {"large": 0})
    monkeypatch.setattr(kernels, "CG_WARM_SPREADS", 1)  # the first large system in numpy, then compiled
    assert not kernels.use_cg_kernel(300, 6)
    assert kernels.use_cg_kernel(300, 6) and kernels.use_cg_kernel(276, 6)  # spread's and harmonic's systems
    assert not kernels.use_cg_kernel(255, 10) and not kernels.use_cg_kernel(900, 1)
    got = propagation.spread(W, Y, 0.99), propagation.harmonic(W, Y, y >= 0)
    monkeypatch.setattr(kernels, "CG_MIN_SAMPLES", 10**9)
    ref = propagation.spread(W, Y, 0.99), propagation.harmonic(W, Y, y >= 0)
    assert got[0].tobytes() == ref[0].tobytes() and got[1].tobytes() == ref[1].tobytes()
    assert np.abs(ref[0]).max() > 0 and (ref[1][y < 0].argmax(axis=1) == ref[0][y < 0].argmax(axis=1)).mean() > 0.6


def test_large_systems_are_solved_compiled_at_once(monkeypatch):
    """From :data:`~ssfs.methods._shared.kernels.CG_AT_ONCE` samples the first system is solved compiled (one
    spread takes seconds there); below, only after :data:`~ssfs.methods._shared.kernels.CG_WARM_SPREADS`."""
    monkeypatch.setattr(kernels, "_spreads", {"large": 0})
    assert kernels.use_cg_kernel(kernels.CG_AT_ONCE, 2) and not kernels.use_cg_kernel(kernels.CG_AT_ONCE - 1, 2)
    assert not kernels.use_cg_kernel(kernels.CG_AT_ONCE, 1)  # one column: numpy sums it pairwise
    monkeypatch.setattr(kernels, "CG_AT_ONCE", 300)  # a graph of 300 samples then: numpy's bits
    from ssfs.methods._shared import propagation

    rng = np.random.default_rng(5)
    W = graph.knn_graph(rng.standard_normal((300, 4)), 8)
    y = np.full(300, -1)
    y[rng.choice(300, 24, replace=False)] = np.arange(24) % 6
    Y = propagation.one_hot_labels(y, 6)
    got = propagation.spread(W, Y, 0.99)
    monkeypatch.setattr(kernels, "CG_MIN_SAMPLES", 10**9)
    assert got.tobytes() == propagation.spread(W, Y, 0.99).tobytes()


def test_products_same_values_as_scipy(cells, forced):
    X, _ = cells
    M = np.random.default_rng(0).standard_normal((X.shape[1], 7))
    N = np.random.default_rng(1).standard_normal((X.shape[0], 7))
    assert np.array_equal(kernels.csr_matmul(X, M), X @ M)
    assert np.array_equal(kernels.csr_matmul(X, N, transpose=True), X.T @ N)


def test_cross_sums_symmetric_half(cells, forced):
    """A symmetric S is summed from its upper triangle (and diagonal), a non-symmetric one whole."""
    X, _ = cells
    S, _ = graph.heat_kernel_graph(X, k=8)
    S = (S + sparse.diags(np.linspace(0.1, 1, X.shape[0]))).tocsr()
    A = sparse.triu(S, 1, format="csr")  # not symmetric
    D = X.toarray()
    for M in (S, A):
        np.testing.assert_allclose(kernels.cross_sums(M, X)[0], np.einsum("ij,ij->j", D, M @ D), rtol=1e-12)
    assert kernels._upper_if_symmetric(S).nnz < S.nnz and kernels._upper_if_symmetric(A).nnz == A.nnz
