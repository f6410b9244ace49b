"""The evaluation's linear SVM (issue #32 item 3): scikit-learn's SVC(kernel="linear") model and
predictions bit for bit, and the evaluation's accuracies the ones SVC gives."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from ssfs.experiment.evaluation import evaluate_order
from ssfs.experiment.linear_svm import LinearSVM


def _data(seed, n, p, k, overlap):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.random((n, p))
    X[:, : max(1, p // 3)] += overlap * y[:, None]
    X[5] = X[4]  # a repeated sample
    return X, y


@pytest.mark.parametrize(("seed", "n", "p", "k", "overlap"), [
    (0, 40, 1, 2, 0.3), (1, 120, 13, 3, 1.0), (2, 300, 20, 3, 0.2), (3, 200, 40, 10, 0.5), (4, 60, 5, 2, 5.0)])
def test_model_and_predictions_are_svcs_bit_for_bit(seed, n, p, k, overlap, capfd):
    from sklearn.svm import _libsvm

    _libsvm.set_verbosity_wrap(1)  # what libsvm does when nobody silences it
    X, y = _data(seed, n, p, k, overlap)
    labels = np.array([f"class {c}" for c in range(k)], dtype=object)[y]  # any label values
    tr, te = slice(0, 2 * n // 3), slice(2 * n // 3, None)
    ours = LinearSVM().fit(X[tr], labels[tr])
    assert capfd.readouterr().out == ""  # libsvm's solver stays silent (a job's console: tests/workflow)
    ref = SVC(kernel="linear", C=1.0).fit(X[tr], labels[tr])
    support, vectors, counts, dual, intercept = ours._model[:5]
    assert np.array_equal(support, ref.support_) and np.array_equal(vectors, ref.support_vectors_)
    assert np.array_equal(counts, ref.n_support_) and np.array_equal(dual, ref._dual_coef_)
    assert np.array_equal(intercept, ref._intercept_)
    got = ours.predict(X[te])
    assert got.dtype == ref.predict(X[te]).dtype and np.array_equal(got, ref.predict(X[te]))
    assert np.array_equal(ours.predict(X[tr]), ref.predict(X[tr]))
    assert (got == labels[te]).mean() > 1.0 / k or overlap < 0.5  # it learns where there is signal


def test_the_evaluations_accuracies_are_svcs(monkeypatch):
    """evaluate_order's accuracy rows (prescaled columns, accuracy only: LinearSVM) equal those of
    the scaler + SVC pipeline it used before, for every size."""
    import ssfs.experiment.evaluation as ev

    X, y = _data(7, 150, 12, 3, 0.6)
    X = X * np.random.default_rng(1).uniform(0.1, 30, 12)
    split = {"train": list(range(100)), "test": list(range(100, 150)), "labeled": []}
    order = np.array([3, 0, 11, 2, 7, 1, 5])
    got = evaluate_order(X, y, split, order, list(range(1, 8)), metrics=["accuracy"])
    monkeypatch.setattr(ev, "LinearSVM", lambda: SVC(kernel="linear", C=1.0))
    ref = evaluate_order(X, y, split, order, list(range(1, 8)), metrics=["accuracy"])
    assert got.equals(ref) and got["value"].between(0.2, 1.0).all() and got["value"].max() > 0.6


def test_one_class_is_refused_as_svc_refuses_it():
    X = np.random.default_rng(0).random((10, 3))
    for model in (SVC(kernel="linear"), LinearSVM()):
        with pytest.raises(ValueError, match="has to be greater than one"):
            model.fit(X, np.zeros(10, dtype=int))
