"""FW-SemiFS (thesis Alg. 7): ordered subset, hand-checked forward selection, determinism."""

import numpy as np
import pytest

from ssfs import run_method
from ssfs.errors import MethodError
from ssfs.methods.fwsemifs import _folds, forward_select


def data(n=60, p=80, seed=0, per_class=4):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n)
    X = rng.normal(size=(n, p))
    X[:, 3] += 3.0 * (2 * c - 1)  # strongly informative
    X[:, 10] += 1.5 * (2 * c - 1)  # weaker
    y = np.full(n, -1)
    for k in (0, 1):
        y[np.flatnonzero(c == k)[:per_class]] = k
    return X, y


def test_forward_select_hand_checked():
    # feature 2 alone separates the classes perfectly; 0 and 1 are constant-ish noise
    X = np.array([[0.0, 1.0, -5.0], [0.1, 1.0, -4.0], [0.0, 1.1, -6.0], [0.1, 1.0, 5.0], [0.0, 1.1, 4.0],
                  [0.1, 1.0, 6.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    sel = forward_select(X, y, 2, np.random.default_rng(0), cv=3)
    assert sel[0] == 2 and len(set(sel.tolist())) == 2


def test_folds_stratified_and_resubstitution():
    y = np.array([0, 0, 0, 1, 1, 1, 1])
    folds = _folds(y, 3, np.random.default_rng(0))
    assert len(folds) == 3
    assert sorted(np.concatenate([te for _, te in folds]).tolist()) == list(range(7))
    for tr, te in folds:
        assert set(y[te]) == {0, 1} and not set(tr) & set(te)
    one = _folds(np.array([0, 1, 1]), 3, np.random.default_rng(0))
    assert len(one) == 1 and one[0][0].size == 3


def test_subset_size_order_and_informative_feature():
    X, y = data()
    r = run_method("fwsemifs", X, y, rng=0, sampling_times=3, prefilter=15)
    assert r.kind == "subset"
    sel = r.order
    assert sel.size == 10 and len(set(sel.tolist())) == 10
    assert 3 in sel[:5]
    s = r.scores
    assert np.array_equal(np.argsort(-np.nan_to_num(s, nan=-np.inf))[:10], sel)
    assert (s[np.setdiff1d(np.arange(80), sel)] == -np.inf).all()  # unselected: the worst value


def test_deterministic_and_parameters():
    X, y = data(p=40)
    a = run_method("fwsemifs", X, y, rng=5, sampling_times=2, prefilter=10, size_fs=7, startfn=4).order
    b = run_method("fwsemifs", X, y, rng=5, sampling_times=2, prefilter=10, size_fs=7, startfn=4).order
    assert np.array_equal(a, b) and a.size == 7
    with pytest.raises(MethodError, match=r"parameter sampling_rate: expected a number in \(0, 1\], got 1.5"):
        run_method("fwsemifs", X, y, sampling_rate=1.5)


def test_fast_trees_select_what_the_estimator_selects(monkeypatch):
    """The trees built through forest.fit_tree give the selection of DecisionTreeClassifier."""
    from sklearn.tree import DecisionTreeClassifier

    from ssfs.methods import fwsemifs as fw

    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(45, 40)), 1)  # rounded: tied values exercise the tie rules
    y = np.repeat([0, 1, 2], 15)
    X[:, 3] += y
    X[:, 7] -= y
    yl = np.full(45, -1)
    yl[[0, 1, 2, 15, 16, 17, 30, 31, 32]] = y[[0, 1, 2, 15, 16, 17, 30, 31, 32]]
    params = dict(size_fs=5, sampling_times=3, prefilter=12)
    fast = run_method("fwsemifs", X, yl, rng=3, **params).order

    def estimator(classifier, seed, Xtr, ytr, Xte):
        seed = getattr(seed, "seed", seed)
        return DecisionTreeClassifier(random_state=seed).fit(Xtr, ytr).predict(Xte)

    monkeypatch.setattr(fw, "_fit_predict", estimator)
    slow = run_method("fwsemifs", X, yl, rng=3, **params).order
    np.testing.assert_array_equal(fast, slow)
    assert fast.size == 5 and 3 in fast.tolist()
