"""Properties every registered per-feature score must have (issue 3 quality bar):

* permuting the samples (labels and constraints permuted with them) leaves the scores
  unchanged, for deterministic methods;
* permuting the features permutes the scores;
* an added constant feature is never ranked first.

Methods are discovered from the registry (kind "score"), so new ones are covered
automatically; the heavy ensembles are skipped to keep the file fast. A method is
treated as randomized when two seeds give different scores: sample permutation then
changes its random draws, so only the constant-feature test (and, for methods whose
draws do not depend on the feature order, the feature-permutation test) applies.
"""

import numpy as np
import pytest

from ssfs import Constraints, get_method, list_methods, run_method

#: too slow for a property sweep (tree ensembles)
HEAVY = {"ssfi", "rf"}
#: randomized methods whose random draws do not depend on the feature order
FEATURE_ORDER_FREE = {"bcs"}

SCORE_METHODS = [m for m in list_methods() if get_method(m).kind == "score" and m not in HEAVY]

#: known violations, reported to the method's owner; strict: the test fails once fixed
KNOWN_FEATURE_ORDER_VIOLATIONS = {
    "efsis_basic": "rank product of rankers whose tied scores are broken by feature index",
}


def _feature_params():
    return [
        pytest.param(m, marks=pytest.mark.xfail(reason=KNOWN_FEATURE_ORDER_VIOLATIONS[m], strict=True))
        if m in KNOWN_FEATURE_ORDER_VIOLATIONS else m
        for m in SCORE_METHODS
    ]


def _data(seed=0, n=36, p=7):
    rng = np.random.default_rng(seed)
    y_true = np.arange(n) % 3
    X = rng.normal(size=(n, p))
    X[:, 1] += 2.0 * y_true
    X[:, 4] += 1.0 * (y_true == 1)
    X -= X.min()  # non-negative, as expression (scanpy_hvg refuses negative values)
    y = np.full(n, -1)
    y[:12] = y_true[:12]
    return X, y


def _run(name, X, y, C, seed=0):
    spec = get_method(name)
    if spec.requires:
        pytest.importorskip(spec.requires)
    return run_method(name, X, y, constraints=C, rng=seed)


def _is_randomized(name, X, y, C):
    a = _run(name, X, y, C, seed=1).scores
    b = _run(name, X, y, C, seed=2).scores
    return not np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name", SCORE_METHODS)
def test_sample_permutation_leaves_scores(name):
    X, y = _data()
    C = Constraints.from_labels(y)
    if _is_randomized(name, X, y, C):
        pytest.skip(f"{name} is randomized: its draws follow the sample order")
    perm = np.random.default_rng(5).permutation(X.shape[0])
    pos = np.empty_like(perm)
    pos[perm] = np.arange(perm.size)  # new index of old sample i
    Cp = Constraints(pos[C.ml], pos[C.cl])
    a = _run(name, X, y, C).scores
    b = _run(name, X[perm], y[perm], Cp).scores
    np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", _feature_params())
def test_feature_permutation_permutes_scores(name):
    X, y = _data(1)
    C = Constraints.from_labels(y)
    if name not in FEATURE_ORDER_FREE and _is_randomized(name, X, y, C):
        pytest.skip(f"{name} is randomized: its draws follow the feature order")
    perm = np.random.default_rng(6).permutation(X.shape[1])
    a = _run(name, X, y, C).scores
    b = _run(name, X[:, perm], y, C).scores
    if name in FEATURE_ORDER_FREE:  # rank aggregates: compare the induced rankings
        assert np.array_equal(np.argsort(np.argsort(b)), np.argsort(np.argsort(a[perm])))
    else:
        np.testing.assert_allclose(b, a[perm], rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", SCORE_METHODS)
@pytest.mark.parametrize("where", [0, 3, 7])
def test_constant_feature_never_first(name, where):
    X, y = _data(2)
    Xc = np.insert(X, where, 5.0, axis=1)
    r = _run(name, Xc, y, Constraints.from_labels(y))
    assert r.order[0] != where
    assert r.order.size == Xc.shape[1]


def test_sweep_covers_this_issue_methods():
    for name in ("cs1", "cs2", "c3", "c4", "sc4", "cls", "laplacian", "sselect", "bcs", "csfs"):
        assert name in SCORE_METHODS


@pytest.mark.parametrize("name", ["c3", "c4", "sselect", "bcs", "csfs", "csfsr", "pca", "ssdr"])
def test_sparse_input_equals_dense(name):
    from scipy import sparse

    X, y = _data(3)
    X[X < 0.3] = 0.0
    a = _run(name, X, y, None)
    b = _run(name, sparse.csr_matrix(X), y, None)
    if a.kind == "extraction":
        np.testing.assert_allclose(b.result.transform(sparse.csr_matrix(X)), a.result.transform(X),
                                   rtol=1e-8, atol=1e-10)
    else:
        np.testing.assert_allclose(b.scores, a.scores, rtol=1e-9, atol=1e-12, equal_nan=True)
        np.testing.assert_array_equal(b.order, a.order)
