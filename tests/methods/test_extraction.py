"""PCA and SSDR-CMU extraction baselines, and the optional mRMR baseline."""

import sys

import numpy as np
import pytest
from sklearn.decomposition import PCA

from ssfs import Constraints, MethodError, run_method
from ssfs.methods import extraction


def _data(seed=0, n=24, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([3.0, 1.0, 2.0, 0.5, 1.5, 1.0])[:p]
    y = np.full(n, -1)
    y[:8] = [0, 0, 1, 1, 0, 1, 0, 1]
    X[:8, 3] += 3 * y[:8]
    return X, y


def test_pca_matches_sklearn():
    X, y = _data()
    r = run_method("pca", X, y, n_components=4)
    assert r.kind == "extraction" and r.result.extra["n_components"] == 4
    Z = r.result.transform(X)
    ref = PCA(n_components=4, svd_solver="full").fit(X).transform(X)
    np.testing.assert_allclose(np.abs(Z), np.abs(ref), rtol=1e-8, atol=1e-10)
    assert np.all(np.diff(Z.var(axis=0)) <= 1e-12)  # best component first
    # applies to new samples with the training mean
    np.testing.assert_allclose(r.result.transform(X[:3]), Z[:3])


def _ssdr_direct(X, C, alpha, beta):
    """Dense S of eq. 2.13 and the top eigenvectors of X^T L X (eq. 2.14)."""
    n = X.shape[0]
    S = np.full((n, n), 1.0 / n**2)
    for i, j in C.cl:
        S[i, j] = S[j, i] = 1.0 / n**2 + alpha / C.n_cl
    for i, j in C.ml:
        S[i, j] = S[j, i] = 1.0 / n**2 - beta / C.n_ml
    L = np.diag(S.sum(1)) - S
    w, V = np.linalg.eigh(X.T @ L @ X)
    return w[::-1], V[:, ::-1], S


def _objective(X, S, g):
    """J(g) = 1/2 sum_ij (g^T x_i - g^T x_j)^2 S_ij, by a double loop (eq. 2.12)."""
    z = X @ g
    return 0.5 * sum(S[i, j] * (z[i] - z[j]) ** 2 for i in range(len(z)) for j in range(len(z)))


@pytest.mark.parametrize("row_space", [False, True])
def test_ssdr_matches_dense_eigenproblem(monkeypatch, row_space):
    if row_space:
        monkeypatch.setattr(extraction, "_SSDR_MAX_DENSE_P", 0)
    X, y = _data(1)
    C = Constraints.from_labels(y)
    r = run_method("ssdr", X, y, n_components=3, alpha=1.0, beta=20.0)
    w, V, S = _ssdr_direct(X, C, 1.0, 20.0)
    np.testing.assert_allclose(r.result.extra["eigenvalues"], w[:3], rtol=1e-8)
    Z = r.result.transform(X)
    np.testing.assert_allclose(np.abs(Z), np.abs(X @ V[:, :3]), rtol=1e-7, atol=1e-9)
    g = np.linalg.lstsq(X, Z[:, 0], rcond=None)[0]
    assert np.linalg.norm(g) == pytest.approx(1.0)
    assert _objective(X, S, g) == pytest.approx(w[0], rel=1e-8)


def test_ssdr_row_space_handles_p_larger_than_n(monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 30))
    y = np.array([0, 1, 0, 1, -1, -1, -1, -1, -1, -1])
    a = run_method("ssdr", X, y, n_components=4)
    monkeypatch.setattr(extraction, "_SSDR_MAX_DENSE_P", 0)
    b = run_method("ssdr", X, y, n_components=4)
    np.testing.assert_allclose(a.result.extra["eigenvalues"], b.result.extra["eigenvalues"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.abs(a.result.transform(X)), np.abs(b.result.transform(X)), rtol=1e-6, atol=1e-8)


def test_mrmr_optional_package(monkeypatch):
    X, y = _data(3)
    y = np.array([0, 1] * 12)
    monkeypatch.setitem(sys.modules, "mrmr", None)  # import fails as if absent
    with pytest.raises(MethodError, match="optional package 'mrmr'"):
        run_method("mrmr", X, y)


def test_mrmr_selects_relevant_first():
    pytest.importorskip("mrmr")
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 6))
    X[:, 2] += 3 * y
    X[:, 5] = X[:, 2] + 0.01 * rng.normal(size=40)  # redundant copy
    X[:, 0] += 1.0 * y
    r = run_method("mrmr", X, y, n_features=3)
    assert r.kind == "subset" and len(r.order) == 3
    assert r.order[0] in (2, 5) and 0 in r.order[:3]
