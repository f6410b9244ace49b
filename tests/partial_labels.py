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
