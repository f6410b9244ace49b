"""The e1071_svm classifier (EFSIS authors' e1071::svm defaults) and pROC's automatic AUC
direction, against hand computations (R is not available to compare with e1071 itself)."""

import numpy as np
import pytest
from sklearn.svm import SVC

from ssfs.errors import ConfigError
from ssfs.experiment.evaluation import RStandardScaler, evaluate_order, macro_auc, make_classifier


def test_r_scale_uses_n_minus_1_and_skips_scaling_with_a_constant_column():
    X = np.array([[1.0, 10.0], [2.0, 20.0], [4.0, 60.0]])
    Z = RStandardScaler().fit(X).transform(X)
    # R: scale(c(1, 2, 4)) = (x - 7/3) / sd, sd = sqrt(((4/3)^2 + (1/3)^2 + (5/3)^2) / 2) = sqrt(7/3)
    assert Z[:, 0] == pytest.approx((np.array([1, 2, 4]) - 7 / 3) / np.sqrt(7 / 3))
    assert Z.std(axis=0, ddof=1) == pytest.approx([1, 1])
    Xc = np.c_[X, np.ones(3)]  # e1071 warns and scales no column
    assert RStandardScaler().fit(Xc).transform(Xc) == pytest.approx(Xc)


def test_e1071_svm_is_rbf_with_gamma_one_over_p_on_r_scaled_features():
    rng = np.random.default_rng(1)
    X = rng.normal(2.0, 3.0, size=(40, 4))
    y = (X[:, 0] + rng.normal(size=40) > 2).astype(int)
    m = make_classifier("e1071_svm", seed=0, scale="minmax").fit(X, y)
    svc = m.pipe.named_steps["svc"]
    assert (svc.kernel, svc.gamma, svc.C) == ("rbf", 0.25, 1.0)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    ref = SVC(kernel="rbf", gamma=0.25, C=1.0).fit(Z, y)
    assert m.pipe.decision_function(X) == pytest.approx(ref.decision_function(Z), abs=1e-6)
    # a per-feature affine map in front changes nothing (why `scale` does not matter for it)
    m2 = make_classifier("e1071_svm").fit(3 * X + 5, y)
    assert m2.pipe.decision_function(3 * X + 5) == pytest.approx(ref.decision_function(Z), abs=1e-6)
    proba = m.predict_proba(X)
    assert proba.shape == (40, 2) and np.allclose(proba.sum(1), 1)
    assert m.fit(X[:, :2], y).pipe.named_steps["svc"].gamma == 0.5


def test_auc_direction_auto_is_proc_default():
    y = np.array([0, 0, 0, 1, 1, 1])
    s = np.array([0.9, 0.8, 0.3, 0.1, 0.2, 0.7])  # reversed: the controls score higher
    fixed = macro_auc(y, s, np.array([0, 1]))
    assert fixed == pytest.approx(1 / 9)  # only (0.7 > 0.3) of the 9 pairs is ordered
    assert macro_auc(y, s, np.array([0, 1]), "auto") == pytest.approx(8 / 9)
    s2 = np.array([0.1, 0.2, 0.7, 0.9, 0.8, 0.3])  # median controls 0.2 < cases 0.8: kept
    assert macro_auc(y, s2, np.array([0, 1]), "auto") == macro_auc(y, s2, np.array([0, 1])) == pytest.approx(8 / 9)
    with pytest.raises(ConfigError, match="auc_direction"):
        macro_auc(y, s, np.array([0, 1]), "up")


def test_evaluate_order_with_e1071_svm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 20))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    split = {"train": list(range(40)), "test": list(range(40, 60)), "labeled": list(range(40))}
    df = evaluate_order(X, y, split, np.arange(20), [1, 10], classifier="e1071_svm", metrics=["accuracy", "auc"],
                        seed=3).set_index(["n_features", "metric"])["value"]
    assert df[(1, "auc")] > 0.9 and df[(1, "accuracy")] >= 0.85  # the planted feature alone
    again = evaluate_order(X, y, split, np.arange(20), [1, 10], classifier="e1071_svm", metrics=["auc"], seed=3)
    assert again["value"].tolist() == df.xs("auc", level="metric").tolist()  # seeded Platt CV
    with pytest.raises(ConfigError, match="auc_direction"):
        evaluate_order(X, y, split, np.arange(20), [1], metrics=["auc"], auc_direction="x")
