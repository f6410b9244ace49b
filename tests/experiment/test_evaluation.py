"""Evaluation protocols of a ranking (ssfs.experiment.evaluation), checked against hand computations."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from ssfs.constraints import Constraints
from ssfs.errors import ConfigError
from ssfs.experiment.evaluation import (
    METRICS,
    evaluate_order,
    metric_higher_is_better,
    n_features_grid,
)


def _value(df, metric, i):
    v = df[(df.metric == metric) & (df.n_features == i)]["value"]
    assert len(v) == 1
    return float(v.iloc[0])


def test_knn1_accuracy_by_hand():
    # feature 1 separates the classes, feature 0 is misleading
    X = np.array([[0.0, 0.0], [1.0, 0.1], [0.0, 1.0], [1.0, 1.1], [5.0, 0.2], [3.0, 0.9],
                  [0.1, 0.05], [5.0, 0.8], [0.9, 0.95]])
    y = np.array([0, 0, 1, 1, 0, 1, 0, 1, 1])
    split = {"train": list(range(6)), "test": [6, 7, 8], "labeled": [0, 2]}
    df = evaluate_order(X, y, split, order=[1, 0], grid=[1, 2], classifier="knn1", scale="none")

    def nn_acc(cols):  # direct 1-NN: loop over test samples
        hits = 0
        for t in split["test"]:
            d = [np.sum((X[t, cols] - X[s, cols]) ** 2) for s in split["train"]]
            hits += y[split["train"][int(np.argmin(d))]] == y[t]
        return hits / len(split["test"])

    assert _value(df, "accuracy", 1) == pytest.approx(nn_acc([1])) == 1.0
    assert _value(df, "accuracy", 2) == pytest.approx(nn_acc([1, 0]))
    assert nn_acc([1, 0]) == pytest.approx(2 / 3)  # with feature 0, test sample 7 is nearest to 4 (class 0)
    # train_on="labeled": only samples 0 and 2 are prototypes
    df = evaluate_order(X, y, split, [1], [1], classifier="knn1", scale="none", train_on="labeled")
    assert _value(df, "accuracy", 1) == 1.0


def test_auc_matches_sklearn_binary_and_multiclass():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] + 0.8 * rng.normal(size=60) > 0).astype(int)
    split = {"train": list(range(40)), "test": list(range(40, 60)), "labeled": list(range(40))}
    df = evaluate_order(X, y, split, [0, 3, 1], [3], classifier="svm", metrics=["auc"])
    ref = make_pipeline(MinMaxScaler(), SVC(kernel="linear")).fit(X[:40][:, [0, 3, 1]], y[:40])
    assert _value(df, "auc", 3) == pytest.approx(roc_auc_score(y[40:], ref.decision_function(X[40:][:, [0, 3, 1]])))
    # three classes, 1-NN probabilities: one-vs-rest macro AUC as sklearn computes it
    y3 = np.digitize(X[:, 0] + 0.5 * rng.normal(size=60), [-0.5, 0.5])
    df = evaluate_order(X, y3, split, [0, 2], [2], classifier="knn1", metrics=["auc"], scale="none")
    from sklearn.neighbors import KNeighborsClassifier

    P = KNeighborsClassifier(1).fit(X[:40][:, [0, 2]], y3[:40]).predict_proba(X[40:][:, [0, 2]])
    assert _value(df, "auc", 2) == pytest.approx(roc_auc_score(y3[40:], P, multi_class="ovr", average="macro"))


def _blobs(n_per=12, noise_features=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X = np.vstack([c + 0.3 * rng.normal(size=(n_per, 2)) for c in centres])
    X = np.hstack([X, rng.normal(size=(X.shape[0], noise_features))])
    y = np.repeat(np.arange(3), n_per)
    perm = rng.permutation(y.size)
    X, y = X[perm], y[perm]
    test = np.sort(np.concatenate([np.flatnonzero(y == c)[:4] for c in range(3)]))
    train = np.setdiff1d(np.arange(y.size), test)
    labeled = np.sort(np.concatenate([train[y[train] == c][:2] for c in range(3)]))
    return X, y, {"train": train.tolist(), "test": test.tolist(), "labeled": labeled.tolist()}


def test_semisupervised_and_clustering_on_separable_blobs():
    X, y, split = _blobs()
    yl = np.full(y.size, -1)
    yl[split["labeled"]] = y[split["labeled"]]
    cons = Constraints.from_labels(yl)  # global indices
    df = evaluate_order(X, y, split, [0, 1, 2, 3, 4], [2, 5],
                        metrics=["semisupervised_accuracy", "rand", "ari", "red"], constraints=cons, seed=3)
    assert _value(df, "semisupervised_accuracy", 2) == 1.0
    assert _value(df, "rand", 2) == 1.0
    assert _value(df, "ari", 2) == 1.0
    assert set(df.metric) == {"semisupervised_accuracy", "rand", "ari", "red"}
    # red on the training part: thesis eq. 3.33, the sum over pairs divided by m(m-1)
    tr = split["train"]
    r = np.corrcoef(X[tr][:, :2].T)[0, 1]
    assert _value(df, "red", 2) == pytest.approx(r / 2)
    # same seed -> identical output
    df2 = evaluate_order(X, y, split, [0, 1, 2, 3, 4], [2, 5],
                         metrics=["semisupervised_accuracy", "rand", "ari", "red"], constraints=cons, seed=3)
    assert df.equals(df2)


def test_red_of_one_feature_is_nan_and_direction():
    X, y, split = _blobs()
    df = evaluate_order(X, y, split, [0, 1], [1, 2], metrics=["red"])
    assert np.isnan(_value(df, "red", 1))
    assert metric_higher_is_better("accuracy")
    assert not metric_higher_is_better("red") and not metric_higher_is_better("rank_sum:x")
    assert set(METRICS) >= {"accuracy", "auc", "semisupervised_accuracy", "rand", "ari", "red"}


def test_grid_for_subset_methods_and_grid_helper():
    X, y, split = _blobs()
    # a subset method selected 3 features: sizes beyond 3 are skipped
    df = evaluate_order(X, y, split, [1, 0, 4], [1, 2, 5, 10], classifier="tree", metrics=["accuracy", "auc"])
    assert sorted(df.n_features.unique()) == [1, 2]
    assert len(df) == 4
    assert n_features_grid(13, max_features=20) == list(range(1, 14))
    assert n_features_grid(1000, percent=[0.3, 0.5, 5]) == [3, 5, 50]
    assert n_features_grid(10, n_features=[12, 3, 3, 1]) == [1, 3, 10]


def test_bad_requests_refused():
    X, y, split = _blobs()
    with pytest.raises(ConfigError, match="constraints"):
        evaluate_order(X, y, split, [0], [1], metrics=["semisupervised_accuracy"])
    with pytest.raises(ConfigError, match="unknown metric"):
        evaluate_order(X, y, split, [0], [1], metrics=["f1"])
    with pytest.raises(ConfigError, match="scale"):
        evaluate_order(X, y, split, [0], [1], scale="log")


def test_cache_reuses_the_rows_of_a_top_i_set_already_evaluated(monkeypatch):
    """Methods of one repetition that agree on a top-i set share its fits: same rows, fewer fits."""
    import ssfs.experiment.evaluation as ev

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = np.repeat([0, 1, 2], 20)
    X[:, 0] += y
    split = {"train": list(range(0, 60, 2)), "test": list(range(1, 60, 2)), "labeled": list(range(0, 60, 2))}
    fits = []
    real = ev.make_classifier
    monkeypatch.setattr(ev, "make_classifier", lambda *a, **k: fits.append(1) or real(*a, **k))
    plain = ev.evaluate_order(X, y, split, np.array([0, 1, 2, 3]), [1, 2, 3], metrics=["accuracy", "auc"])
    assert len(fits) == 3
    cache: dict = {}
    a = ev.evaluate_order(X, y, split, np.array([0, 1, 2, 3]), [1, 2, 3], metrics=["accuracy", "auc"], cache=cache)
    b = ev.evaluate_order(X, y, split, np.array([0, 1, 5, 4]), [1, 2, 3], metrics=["accuracy", "auc"], cache=cache)
    assert len(fits) == 3 + 3 + 1  # the second order shares its top 1 and top 2 with the first
    assert a.equals(plain) and b.iloc[:4].equals(plain.iloc[:4]) and len(b) == 6


@pytest.mark.parametrize("scale", ["minmax", "maxabs", "standard"])
def test_columns_scaled_once_give_the_pipelines_values_bit_for_bit(scale):
    """Each size's classifier sees the columns scaled once for the whole order (minmax, maxabs):
    the same accuracy and decision values as a scaler + SVM pipeline fitted on that size's columns."""
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 8)) * rng.uniform(0.1, 50, size=8) + rng.normal(0, 5, size=8)
    y = np.repeat([0, 1, 2], 30)
    X[:, [2, 5]] += y[:, None] * 1.5
    split = {"train": list(range(0, 90, 3)) + list(range(1, 90, 3)), "test": list(range(2, 90, 3)), "labeled": []}
    order = np.array([5, 2, 7, 0, 3])
    df = evaluate_order(X, y, split, order, [1, 2, 3, 4, 5], metrics=["accuracy", "auc"], scale=scale)
    scaler = {"minmax": MinMaxScaler, "maxabs": MaxAbsScaler, "standard": StandardScaler}[scale]
    tr, te = np.array(split["train"]), np.array(split["test"])
    for i in range(1, 6):
        Xi = X[:, order[:i]]
        model = make_pipeline(scaler(), SVC(kernel="linear", C=1.0)).fit(Xi[tr], y[tr])
        assert _value(df, "accuracy", i) == float(np.mean(model.predict(Xi[te]) == y[te]))
        auc = np.mean([roc_auc_score(y[te] == c, model.decision_function(Xi[te])[:, c]) for c in range(3)])
        assert _value(df, "auc", i) == auc
