"""SemiSupervisedSelector: scikit-learn's estimator checks, names, unlabeled samples, Pipelines."""

import numpy as np
import pandas as pd
import pytest
from partial_labels import PLANTED, frame, planted, replicate_groups, top
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

import ssfs
from ssfs import SemiSupervisedSelector, SupervisionError
from ssfs.selector import LabeledOnly, labeled_scorer


def test_exported():
    from ssfs.selector import SemiSupervisedSelector as S

    assert ssfs.SemiSupervisedSelector is S and "SemiSupervisedSelector" in ssfs.__all__


@parametrize_with_checks([SemiSupervisedSelector(m, n_features=2) for m in ("variance", "fisher", "laplacian", "cls")]
                         + [SemiSupervisedSelector("cls", n_features=2, k=3, mean="uniform"),
                            LabeledOnly(LogisticRegression())],
                         expected_failed_checks=lambda est: {
                             "check_classifiers_classes": "-1 means unlabeled (scikit-learn's semi-supervised "
                             "convention), so classes [-1, 1] are one class and unlabeled samples"}
                         if isinstance(est, LabeledOnly) else {})
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_tags():
    assert SemiSupervisedSelector("fisher").__sklearn_tags__().target_tags.required
    tags = SemiSupervisedSelector("laplacian").__sklearn_tags__()
    assert tags.input_tags.sparse and not tags.target_tags.required


@pytest.mark.parametrize("method", ["fisher", "cls", "laplacian"])
def test_dataframe_names_string_labels_80_percent_unlabeled(method):
    X, _, labels, _ = planted()
    df = frame(X)
    y = pd.Series(labels, index=df.index)  # None = unlabeled
    sel = SemiSupervisedSelector(method, n_features=8).fit(df, y)
    assert top(sel.order_) == set(PLANTED.tolist())
    assert list(sel.get_feature_names_out()) == [f"g{j + 1}" for j in sorted(PLANTED)]
    assert list(sel.feature_names_in_) == list(df.columns)
    assert list(sel.classes_) == ["BL", "EWS", "NB", "RMS"]
    assert sel.ranking_[sel.order_[0]] == 1
    # -1 codes, NaN and "unknown" with unlabeled_values give the same selection
    codes = np.array([-1 if v is None else ["BL", "EWS", "NB", "RMS"].index(v) for v in labels])
    nan = np.array([np.nan if v is None else v for v in labels], dtype=object)
    unk = np.array(["unknown" if v is None else v for v in labels], dtype=object)
    for other in (SemiSupervisedSelector(method, n_features=8).fit(X, codes),
                  SemiSupervisedSelector(method, n_features=8).fit(X, nan),
                  SemiSupervisedSelector(method, n_features=8, unlabeled_values=["unknown"]).fit(X, unk)):
        np.testing.assert_array_equal(other.order_, sel.order_)


@pytest.mark.parametrize(("n_features", "kept"), [(3, 3), (500, 120), (0.1, 12), (1.0, 120), ("all", 120)])
def test_n_features_values(n_features, kept):
    X, _, labels, _ = planted()
    assert SemiSupervisedSelector("variance", n_features=n_features).fit(X).transform(X).shape == (63, kept)


@pytest.mark.parametrize("bad", [-2, 0, 1.5, 0.0, "half", True, None, [3]])
def test_n_features_refused_at_fit(bad):
    X, _, _, _ = planted()
    sel = SemiSupervisedSelector("variance", n_features=bad)  # constructing never validates (sklearn rule)
    with pytest.raises(ValueError, match="^n_features .*(int >= 1|must be in \\(0, 1\\])"):
        sel.fit(X)


def test_label_method_without_labels_and_unknown_method():
    X, _, _, _ = planted()
    with pytest.raises(ValueError, match="method 'fisher' requires y to be passed"):
        SemiSupervisedSelector("fisher").fit(X)
    with pytest.raises(ValueError, match="method 'fisher' needs labels but no sample is labeled"):
        SemiSupervisedSelector("fisher").fit(X, [None] * 63)
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        SemiSupervisedSelector("nope").fit(X)


def test_pipeline_with_self_training():
    """The selector sees every sample; SelfTrainingClassifier pseudo-labels the unlabeled ones."""
    X, truth, labels, _ = planted()
    names = np.array(["BL", "EWS", "NB", "RMS"])
    y = np.array([-1 if v is None else int(np.flatnonzero(names == v)[0]) for v in labels])
    pipe = make_pipeline(SemiSupervisedSelector("cls", n_features=8),
                         SelfTrainingClassifier(LogisticRegression(max_iter=1000)))
    pipe.fit(X, y)
    assert top(pipe[0].order_) == set(PLANTED.tolist())
    acc = np.mean(names[pipe.predict(X)] == truth)
    assert acc > 0.9, acc


def _codes(labels):
    names = np.array(["BL", "EWS", "NB", "RMS"])
    return np.array([-1 if v is None else int(np.flatnonzero(names == v)[0]) for v in labels])


def test_method_parameters_are_estimator_parameters():
    sel = SemiSupervisedSelector("cls", n_features=8, k=15)
    assert sel.get_params()["k"] == 15 and sel.k == 15
    assert repr(sel) == "SemiSupervisedSelector(k=15, method='cls', n_features=8)"
    twin = clone(sel)
    assert twin.get_params() == sel.get_params() and twin is not sel
    assert clone(sel.set_params(k=4)).k == 4
    fresh = SemiSupervisedSelector("cls").set_params(k=7, bandwidth=2.0)  # never given at construction
    assert fresh.get_params()["k"] == 7 and fresh.get_params()["bandwidth"] == 2.0
    # method first: k is checked against the new method; an undeclared name names the valid ones
    assert SemiSupervisedSelector("fisher").set_params(method="laplacian", k=5).k == 5
    with pytest.raises(ValueError, match="Invalid parameter 'kk' .* method 'cls'.*'k'"):
        SemiSupervisedSelector("cls").set_params(kk=3)
    with pytest.raises(AttributeError):
        _ = SemiSupervisedSelector("cls").k
    X, _, labels, _ = planted()
    y = _codes(labels)
    # k=15 given as a keyword or in params is the same call
    a = SemiSupervisedSelector("cls", n_features=8, k=3).fit(X, y)
    b = SemiSupervisedSelector("cls", n_features=8, params={"k": 3}).fit(X, y)
    c = SemiSupervisedSelector("cls", n_features=8).fit(X, y)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert not np.array_equal(a.scores_, c.scores_)  # the keyword reached the method (default k=10)


def test_method_parameters_checked_at_fit_only():
    X, _, labels, _ = planted()
    sel = SemiSupervisedSelector("cls", k=-3)  # no work, no check in __init__ (scikit-learn's rule)
    assert sel.get_params()["k"] == -3
    with pytest.raises(ValueError, match="method 'cls' parameter k"):
        sel.fit(X, _codes(labels))
    with pytest.raises(ValueError, match="parameter 'k' is given twice"):
        SemiSupervisedSelector("cls", params={"k": 3}, k=4).fit(X, _codes(labels))
    with pytest.raises(ValueError, match="method 'fisher' got unknown parameter"):
        SemiSupervisedSelector("cls", k=4).set_params(method="fisher").fit(X, _codes(labels))


def test_labeled_scorer_ignores_unlabeled_samples():
    X, truth, labels, _ = planted()
    y = _codes(labels)
    names = np.array(["BL", "EWS", "NB", "RMS"])
    pipe = make_pipeline(SemiSupervisedSelector("cls", n_features=8),
                         SelfTrainingClassifier(LogisticRegression(max_iter=1000))).fit(X, y)
    assert np.mean(names[pipe.predict(X)] == truth) == 1.0  # right on every sample
    assert pipe.score(X, y) == pytest.approx(13 / 63)  # scikit-learn's score counts the -1 entries as misses
    assert labeled_scorer()(pipe, X, y) == 1.0
    assert labeled_scorer("balanced_accuracy")(pipe, X, y) == 1.0
    # class names with None = unlabeled; "unknown" with unlabeled_values
    named = np.array(labels, dtype=object)
    clf = LabeledOnly(LogisticRegression(max_iter=1000)).fit(X[:, :8], named)
    assert labeled_scorer()(clf, X[:, :8], named) == 1.0
    unk = np.where(named == None, "unknown", named)  # noqa: E711 - elementwise
    assert labeled_scorer(unlabeled_values=["unknown"])(clf, X[:, :8], unk) == 1.0
    # sample weights follow the labeled rows: weight only on one wrong-labeled sample gives 0
    wrong = y.copy()
    first = np.flatnonzero(y >= 0)[0]
    wrong[first] = (y[first] + 1) % 4
    w = np.zeros(63)
    w[first] = 1.0
    assert labeled_scorer()(pipe, X, wrong, sample_weight=w) == 0.0
    with pytest.raises(SupervisionError, match="no labeled sample among the 3 given.*StratifiedKFold"):
        labeled_scorer()(pipe, X[:3], np.array([-1, -1, -1]))
    assert repr(labeled_scorer("f1_macro")) == "labeled_scorer('f1_macro')"


def test_labeled_only_fits_labeled_samples_and_scores_them():
    X, truth, labels, _ = planted()
    y = _codes(labels)
    pipe = make_pipeline(SemiSupervisedSelector("cls", n_features=8), LabeledOnly(LogisticRegression(max_iter=1000)))
    pipe.fit(X, y)
    assert top(pipe[0].order_) == set(PLANTED.tolist())  # the selector saw the unlabeled samples too
    assert list(pipe[-1].classes_) == [0, 1, 2, 3]  # no class -1
    assert pipe[-1].estimator_.n_features_in_ == 8
    assert pipe.score(X, y) == 1.0  # the labeled samples only
    assert pipe.predict_proba(X).shape == (63, 4)
    plain = make_pipeline(SemiSupervisedSelector("cls", n_features=8), LogisticRegression(max_iter=1000)).fit(X, y)
    assert -1 in plain[-1].classes_  # what LabeledOnly prevents: -1 learnt as a class


def test_grid_search_tunes_k_with_partial_labels():
    """A graph score's k on replicate groups of 6 (partial_labels.replicate_groups): k = 1 or 2
    joins replicates only and the class-free distractors win; k = 20 reaches past the group
    and the markers win. The grid picks 20 with the labeled scorer; scikit-learn's default
    score counts the unlabeled samples as errors and reads about the labeled share."""
    X, y = replicate_groups(seed=0)
    with threadpool_limits(1):  # 20-sample fits: BLAS threads on a shared machine cost 10x
        _grid_search_tunes_k(X, y)


def _grid_search_tunes_k(X, y):
    pipe = Pipeline([("selector", SemiSupervisedSelector("laplacian", n_features=5)),
                     ("clf", LabeledOnly(LogisticRegression()))])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)  # -1 as a group: labels in every fold
    grid = GridSearchCV(pipe, {"selector__k": [1, 2, 20]}, scoring=labeled_scorer(), cv=cv).fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert grid.best_params_ == {"selector__k": 20}
    assert scores[2] == 1.0 and scores[:2].max() <= 0.6, scores  # chance level is 0.5
    assert sorted(grid.best_estimator_[0].order_[:5]) == [0, 1, 2, 3, 4]
    self_training = clone(pipe).set_params(selector__k=20, clf=SelfTrainingClassifier(LogisticRegression()))
    both = cross_validate(self_training, X, y, cv=cv, scoring={"labeled": labeled_scorer(), "plain": "accuracy"})
    assert both["test_labeled"].min() == 1.0
    assert both["test_plain"].max() <= (y >= 0).mean() + 0.05, both  # every sample scored: the labeled share


def test_docs_recipe_runs():
    """docs/sklearn.md's recipe, as printed: the grid runs and finds the informative features."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "sklearn.md").read_text()
    code = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(code) == 1
    ns: dict = {}
    with threadpool_limits(1):
        exec(code[0], ns)  # noqa: S102 - the documentation's own example
    grid = ns["grid"]
    assert grid.best_score_ > 0.75
    assert len({"x0", "x1", "x2", "x3", "x4"} & set(grid.best_estimator_[0].get_feature_names_out())) >= 4
