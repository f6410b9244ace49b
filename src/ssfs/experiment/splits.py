"""Supervision: train/test splits and the labeled subset of the training part.

Protocols
---------
``holdout`` (EnsCLS paper Alg. 3, SSFI paper Alg. 5): stratified train/test split
(2/3 : 1/3 by default), then ``labeled_per_class`` samples of each class drawn
from the training part; the other training samples are unlabeled. Repeated R
times with independent draws.

``kfold`` (EFSIS paper Section 3.2): stratified K-fold; repetition r uses fold r
as the test part; the labeled subset is drawn from the training folds
(``labeled_per_class: all`` labels the whole training part).

Partially labelled datasets (``y = -1`` for samples given without a label): the split
and the hiding are drawn among the labeled samples only; every sample without a label
joins the training part as unlabeled (listed under ``unlabeled``), so the methods see
it, and it is never in the test part nor scored on. A dataset with no label at all
(label-free) gets one "split": every sample in training, none labeled, no test part.

A split is a small dict (stored as JSON) of global sample indices.
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from .._checked import read_checked_json
from ..errors import SupervisionError
from ..io.atomic import atomic_write_text
from ..labels import class_name


def check_classes(y: np.ndarray, *, dataset: str = "dataset", min_per_class: int = 1, class_names=None) -> None:
    """At least 2 classes among the labeled samples (``y >= 0``), each with ``min_per_class``;
    ``class_names``: class names for the messages (default: the codes)."""
    y = np.asarray(y)
    classes, counts = np.unique(y[y >= 0], return_counts=True)
    if classes.size < 2:
        raise SupervisionError(
            f"{dataset} has {classes.size} class(es) among its labeled samples; at least 2 are needed"
        )
    small = classes[counts < min_per_class]
    if small.size:
        raise SupervisionError(
            f"{dataset}: class(es) {', '.join(class_name(class_names, c) for c in small)} have fewer than "
            f"{min_per_class} labeled samples"
        )


def draw_labeled(y: np.ndarray, pool: np.ndarray, per_class, rng: np.random.Generator,
                 *, dataset: str = "dataset", small_classes: str = "refuse", class_names=None) -> np.ndarray:
    """``per_class`` samples of every class drawn from ``pool`` (indices), sorted.
    ``per_class = "all"`` labels the whole pool. A class with fewer members in the pool
    is refused (``small_classes="refuse"``) or labeled entirely (``"all"``, with a
    warning; for datasets such as lymphoma and nci9 whose smallest classes have 2 samples).
    Samples of ``pool`` without a label (``y = -1``) are never drawn; ``class_names[c]``
    names class code c in messages."""
    pool = np.asarray(pool)
    pool = pool[np.asarray(y)[pool] >= 0]
    if per_class == "all":
        return np.sort(pool)
    per_class = int(per_class)
    if per_class < 1:
        raise SupervisionError(f"labeled_per_class must be >= 1, got {per_class}")
    out = []
    for c in np.unique(y[y >= 0]):
        members = pool[y[pool] == c]
        if members.size < per_class and small_classes == "all":
            msg = (f"{dataset}: class {class_name(class_names, c)} has only {members.size} training sample(s); "
                   "all are labeled")
            warnings.warn(msg, stacklevel=2)
            out.append(members)
            continue
        if members.size < per_class:
            raise SupervisionError(
                f"{dataset}: class {class_name(class_names, c)} has {members.size} training sample(s), fewer than "
                f"labeled_per_class = {per_class}; lower labeled_per_class, use a larger training part, or "
                "label all samples of such classes (supervision: small_classes: all)"
            )
        out.append(rng.choice(members, size=per_class, replace=False))
    return np.sort(np.concatenate(out))


def make_split(
    y: np.ndarray,
    rep: int,
    rng_split: np.random.Generator,
    rng_labels: np.random.Generator,
    *,
    protocol: str = "holdout",
    test_size: float = 1 / 3,
    n_folds: int = 10,
    labeled_per_class=3,
    small_classes: str = "refuse",
    dataset: str = "dataset",
    class_names=None,
) -> dict:
    """One repetition's split. For ``kfold`` all repetitions must be given the same
    ``rng_split`` (the fold assignment is shared) and ``rep`` picks the fold.
    ``y = -1``: a sample given without a label (see the module doc)."""
    y = np.asarray(y)
    known = np.flatnonzero(y >= 0)
    unlabeled = np.flatnonzero(y < 0)
    if known.size == 0:  # label-free dataset
        return {"protocol": protocol, "rep": int(rep), "train": list(range(y.size)), "test": [], "labeled": [],
                "unlabeled": [int(i) for i in unlabeled]}
    yk = y[known]
    n = yk.size
    check_classes(y, dataset=dataset, min_per_class=2, class_names=class_names)
    seed = int(rng_split.integers(0, 2**31 - 1))
    if protocol == "holdout":
        train, test = stratified_holdout(yk, test_size, seed, dataset=dataset)
    elif protocol == "kfold":
        counts = np.unique(yk, return_counts=True)[1]
        if counts.min() < n_folds:
            raise SupervisionError(
                f"{dataset}: the smallest class has {counts.min()} samples, fewer than n_folds = {n_folds}"
            )
        if not 0 <= rep < n_folds:
            raise SupervisionError(f"kfold: repetition {rep} outside 0..{n_folds - 1}")
        from sklearn.model_selection import StratifiedKFold

        skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        train, test = list(skf.split(np.zeros(n), yk))[rep]
    else:
        raise SupervisionError(f"unknown protocol {protocol!r} (holdout or kfold)")
    train, test = known[train], known[test]
    labeled = draw_labeled(y, np.sort(train), labeled_per_class, rng_labels, dataset=dataset,
                           small_classes=small_classes, class_names=class_names)
    out = {
        "protocol": protocol,
        "rep": int(rep),
        "train": sorted(int(i) for i in np.concatenate([train, unlabeled])),
        "test": sorted(int(i) for i in test),
        "labeled": [int(i) for i in labeled],
    }
    if unlabeled.size:  # samples given without a label: training, unlabeled, never scored
        out["unlabeled"] = [int(i) for i in unlabeled]
    return out


def stratified_holdout(y: np.ndarray, test_size: float, seed: int, *, dataset: str = "dataset"):
    """(train, test) positions in y: scikit-learn's ``StratifiedShuffleSplit(n_splits=1,
    test_size=test_size, random_state=seed)`` split, the same draws from the same
    ``RandomState(seed)`` (tested against it), without importing scikit-learn (0.7 s of every
    prepare job): n_test = ceil(test_size n); each class gets the approximate mode of the
    hypergeometric share of the training and then of the test draws (:func:`_approximate_mode`),
    its samples in a random order, train and test each shuffled at the end. The splits no longer
    depend on the installed scikit-learn either."""
    y = np.asarray(y)
    n = y.size
    n_test = int(np.ceil(test_size * n)) if np.asarray(test_size).dtype.kind == "f" else int(test_size)
    n_train = n - n_test
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if counts.min(initial=2) < 2:
        raise SupervisionError(f"{dataset}: a stratified split needs 2 samples of every class; "
                               f"{classes[counts < 2].tolist()} have 1")
    if not 0 < n_test < n or min(n_train, n_test) < classes.size:
        raise SupervisionError(f"{dataset}: test_size {test_size} leaves {n_train} training and {n_test} test "
                               f"samples for {classes.size} classes; each part needs a sample of every class")
    members = np.split(np.argsort(codes, kind="stable"), np.cumsum(counts)[:-1])
    rng = np.random.RandomState(seed)
    n_i = _approximate_mode(counts, n_train, rng)
    t_i = _approximate_mode(counts - n_i, n_test, rng)
    train, test = [], []
    for c in range(classes.size):
        shuffled = members[c].take(rng.permutation(counts[c]), mode="clip")
        train.extend(shuffled[: n_i[c]])
        test.extend(shuffled[n_i[c]: n_i[c] + t_i[c]])
    return rng.permutation(train), rng.permutation(test)


def _approximate_mode(counts: np.ndarray, n_draws: int, rng: np.random.RandomState) -> np.ndarray:
    """Draws per class, scikit-learn's approximation of the mode of the multivariate
    hypergeometric (``sklearn.utils.extmath._approximate_mode``): the floor of each class's share
    of ``n_draws``, then one more for the largest remainders, ties broken at random."""
    continuous = counts / counts.sum() * n_draws
    floored = np.floor(continuous)
    need = int(n_draws - floored.sum())
    if need > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (tied,) = np.where(remainder == value)
            add = min(len(tied), need)
            floored[rng.choice(tied, size=add, replace=False)] += 1
            need -= add
            if need == 0:
                break
    return floored.astype(int)


def partial_labels(y: np.ndarray, split: dict) -> np.ndarray:
    """Labels of the training part with -1 for its unlabeled samples (train order)."""
    train = np.asarray(split["train"])
    yl = np.full(train.size, -1, dtype=np.int64)
    pos = np.searchsorted(train, np.asarray(split["labeled"], dtype=np.int64))
    yl[pos] = np.asarray(y)[split["labeled"]]
    return yl


def write_split(split: dict, path) -> None:
    atomic_write_text(path, json.dumps(split, indent=1) + "\n")


def read_split(path) -> dict:
    """A split written by :func:`write_split` (a JSON document cut short is refused in one line)."""
    return read_checked_json(path)
