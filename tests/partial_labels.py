"""Planted, partially labelled data shared by the tests of issue #13 (every door).

63 samples of 4 named classes (as the small round blue cell tumour microarray), 13
of them labeled (80 % unlabeled); features 0..7 are planted (class-dependent means),
the other ``p - 8`` are noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = np.array(["EWS", "NB", "RMS", "BL"], dtype=object)
PLANTED = np.arange(8)


def planted(n: int = 63, p: int = 120, n_labeled_per_class=(4, 3, 3, 3), seed: int = 2, shift: float = 3.0):
    """``(X, truth, labels, planted)``: ``truth`` class names of every sample; ``labels``
    the same with None for the unlabeled ones (``sum(n_labeled_per_class)`` labeled)."""
    rng = np.random.default_rng(seed)
    k = CLASSES.size
    codes = rng.permutation(np.arange(n) % k)
    X = rng.normal(size=(n, p))
    means = rng.normal(scale=shift, size=(k, PLANTED.size))
    X[:, PLANTED] += means[codes]
    truth = CLASSES[codes]
    labels = np.full(n, None, dtype=object)
    for c, m in enumerate(n_labeled_per_class):
        pick = rng.choice(np.flatnonzero(codes == c), size=m, replace=False)
        labels[pick] = CLASSES[c]
    return X, truth, labels, PLANTED


def frame(X, ids=None) -> pd.DataFrame:
    ids = ids if ids is not None else [f"s{i + 1}" for i in range(X.shape[0])]
    return pd.DataFrame(X, index=pd.Index(ids, name="id"), columns=[f"g{j + 1}" for j in range(X.shape[1])])


def top(order, m: int = 8) -> set:
    return {int(i) for i in np.asarray(order)[:m]}


def replicate_groups(seed: int = 0, n_groups: int = 14, per_class: int = 3, n_markers: int = 5,
                     n_distractors: int = 10, n_noise: int = 40, labeled_per_class: int = 15):
    """``(X, y)`` where the kNN graph's ``k`` decides what a graph score finds (the data of
    the grid-search recipe, docs/sklearn.md).

    Two classes; features ``0..n_markers-1`` are the markers (mean 0 or 1.5, sd 0.5). The
    samples come in replicate groups of ``2 * per_class`` (each group holds both classes):
    the next ``n_distractors`` features are a group's own values (sd 1 between groups,
    0.05 within), class-free. A kNN graph with ``k`` below the group size joins replicates
    only, on which the distractors are smoothest; with ``k`` past the group size (and below
    a class) neighbours share the class, and the markers are. ``y``: 0/1 for
    ``labeled_per_class`` samples per class, -1 for the others.
    """
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(n_groups), 2 * per_class)
    cls = np.tile(np.repeat([0, 1], per_class), n_groups)
    n = group.size
    X = 0.5 * rng.normal(size=(n, n_markers + n_distractors + n_noise))
    X[:, :n_markers] += 1.5 * cls[:, None]
    centers = rng.normal(size=(n_groups, n_distractors))
    X[:, n_markers:n_markers + n_distractors] = centers[group] + 0.05 * rng.normal(size=(n, n_distractors))
    y = np.full(n, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(cls == c), labeled_per_class, replace=False)] = c
    perm = rng.permutation(n)
    return X[perm], y[perm]
