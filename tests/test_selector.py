"""SemiSupervisedSelector: scikit-learn's estimator checks, names, unlabeled samples, Pipelines."""

import numpy as np
import pandas as pd
import pytest
from partial_labels import PLANTED, frame, planted, top
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import ssfs
from ssfs import SemiSupervisedSelector


def test_exported():
    from ssfs.selector import SemiSupervisedSelector as S

    assert ssfs.SemiSupervisedSelector is S and "SemiSupervisedSelector" in ssfs.__all__


@parametrize_with_checks([SemiSupervisedSelector(m, n_features=2) for m in ("variance", "fisher", "laplacian", "cls")])
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
