"""Splits and evaluation on partially labelled and label-free datasets (y = -1: no label given)."""

import numpy as np
from partial_labels import PLANTED, planted

from ssfs.constraints import Constraints
from ssfs.experiment.evaluation import evaluate_order
from ssfs.experiment.splits import make_split, partial_labels
from ssfs.labels import encode_labels
from ssfs.seeding import derive_rng


def _y():
    _, truth, labels, _ = planted(n=100, n_labeled_per_class=(5, 5, 5, 5))
    y, _ = encode_labels(labels)
    return y, encode_labels(truth)[0]


def test_split_among_labeled_unlabeled_train_only():
    y, _ = _y()
    known, unl = np.flatnonzero(y >= 0), np.flatnonzero(y < 0)
    for protocol, kw in (("holdout", {}), ("kfold", {"n_folds": 5})):
        for rep in range(3):
            rng_split = derive_rng(0, "d", "folds") if protocol == "kfold" else derive_rng(0, "d", "split", rep)
            s = make_split(y, rep, rng_split, derive_rng(0, "d", "lab", rep), protocol=protocol,
                           labeled_per_class=2, **kw)
            assert set(s["test"]) <= set(known) and set(s["labeled"]) <= set(s["train"]) & set(known)
            assert s["unlabeled"] == unl.tolist() and set(unl) <= set(s["train"])
            assert sorted(s["train"] + s["test"]) == list(range(100))
            assert len(s["labeled"]) == 8 and (partial_labels(y, s) >= 0).sum() == 8


def test_fully_labelled_split_unchanged():
    """No ``unlabeled`` key and the same draws as before for a dataset labelled throughout."""
    y = np.repeat([0, 1, 2], 10)
    s = make_split(y, 0, derive_rng(0, "d", "split", 0), derive_rng(0, "d", "lab", 0))
    assert "unlabeled" not in s and len(s["test"]) == 10


def test_label_free_split():
    s = make_split(np.full(7, -1), 0, derive_rng(0), derive_rng(1))
    assert s["train"] == list(range(7)) and s["test"] == [] and s["labeled"] == []


def test_evaluation_never_uses_unlabeled_samples():
    y, _ = _y()
    X, _, _, _ = planted(n=100, n_labeled_per_class=(5, 5, 5, 5))
    s = make_split(y, 0, derive_rng(0, "d", "split", 0), derive_rng(0, "d", "lab", 0), labeled_per_class=2)
    order = np.r_[PLANTED, np.setdiff1d(np.arange(X.shape[1]), PLANTED)]
    cons = Constraints.from_labels(np.where(np.isin(np.arange(100), s["labeled"]), y, -1))
    df = evaluate_order(X, y, s, order, [8], metrics=("accuracy", "semisupervised_accuracy", "ari"),
                        constraints=cons)
    got = dict(zip(df.metric, df.value, strict=True))
    assert got["accuracy"] == 1.0 and got["ari"] > 0.9 and got["semisupervised_accuracy"] >= 0.8
    # with train_on: labeled the classifier sees the 8 labeled samples only
    assert evaluate_order(X, y, s, order, [8], metrics=("accuracy",), train_on="labeled").value.iloc[0] > 0.8
    free = evaluate_order(X, np.full(100, -1), {"train": list(range(100)), "test": [], "labeled": []}, order, [2, 8],
                          metrics=("accuracy",))
    assert free.metric.tolist() == ["red", "red"] and free.value.notna().all()
