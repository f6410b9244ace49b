"""sSelect (thesis eq. 2.8-2.10) against a direct computation and scikit-learn's NMI."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from ssfs import run_method
from ssfs.methods.sselect import binary_nmi


def test_binary_nmi_matches_sklearn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 25)
    B = rng.random((25, 40)) < 0.5
    B[:, 0] = y == 1  # informative column
    B[:, 1] = True  # one cluster only
    got = binary_nmi(B, y)
    ref = [normalized_mutual_info_score(y, B[:, j], average_method="geometric") for j in range(40)]
    np.testing.assert_allclose(got, ref, atol=1e-12)
    assert got[0] > 0.5


def _sselect_direct(X, y, k, t, eta):
    n = X.shape[0]
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    S = np.zeros((n, n))
    for i in range(n):
        nb = [j for j in np.argsort(d2[i], kind="stable") if j != i][:k]
        for j in nb:
            S[i, j] = S[j, i] = np.exp(-d2[i, j] / t)
    D = np.diag(S.sum(1))
    L = D - S
    one = np.ones(n)
    lab = y >= 0
    out = []
    for r in range(X.shape[1]):
        f = X[:, r]
        g = f - (f @ D @ one) / (one @ D @ one) * one  # eq. 2.8
        cut = (g @ L @ g) / (g @ D @ g)
        ghat = np.where(g > 0, 1, -1)[lab]
        nmi = normalized_mutual_info_score(y[lab], ghat, average_method="geometric")
        out.append(eta * cut + (1 - eta) * (1 - nmi))  # eq. 2.9
    return np.array(out)


@pytest.mark.parametrize("eta", [0.1, 0.7])
def test_sselect_matches_direct_formula(eta):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 5))
    y = np.full(20, -1)
    y[:8] = [0, 1, 0, 1, 0, 1, 0, 1]
    X[:8, 2] += 3 * y[:8]
    got = run_method("sselect", X, y, k=4, bandwidth=2.5, eta=eta).scores
    np.testing.assert_allclose(got, _sselect_direct(X, y, 4, 2.5, eta), rtol=1e-10)
    assert run_method("sselect", X, y, k=4, bandwidth=2.5, eta=eta).order[0] == 2


def test_sselect_eta_one_is_laplacian_score():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 6))
    y = np.full(30, -1)
    y[:6] = [0, 1, 2, 0, 1, 2]
    a = run_method("sselect", X, y, eta=1.0).scores
    b = run_method("laplacian", X, y).scores
    np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(ValueError, match="eta"):
        run_method("sselect", X, y, eta=1.5)
