"""Quality measures of a selected feature subset that need no classifier training.

- :func:`redundancy_rate`: RED of the thesis (eq. 3.33, after Zhao et al. 2012).
- :func:`clustering_quality`: k-means on the selected features, Rand index (thesis
  eq. 3.32) and adjusted Rand index against the classes (thesis Tables 3.5 / 4.2).
- :func:`semisupervised_accuracy`: the semi-supervised evaluation of the
  constraint-score paper (Section 3.2): COP-KMeans on the training samples,
  Hungarian matching of clusters to classes, 1-NN on the test samples.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, rand_score
from sklearn.neighbors import KNeighborsClassifier

from .._validation import dense
from ..constraints import Constraints
from ..errors import ConfigError, InputError, MethodError, SupervisionError
from ..methods._shared.clustering import cop_kmeans

_RED_BLOCK = 512  # columns per block of the |correlation| sum (bounds memory to n x 512 + 512 x m)


def _columns(X, selected, what: str):
    """Rows of X restricted to the ``selected`` columns, as a dense float array."""
    if selected is not None:
        sel = np.asarray(selected, dtype=np.int64).ravel()
        p = X.shape[1]
        if sel.size and (sel.min() < -p or sel.max() >= p):
            raise InputError(f"{what}: selected feature index out of range 0..{p - 1}")
        X = X[:, sel]
    return dense(X, method=what)


def redundancy_rate(X, selected=None, *, absolute: bool = False, normalization: str = "paper") -> float:
    """Redundancy rate RED(F) = 1/(m(m-1)) sum_{i>j} rho(F_i, F_j) (thesis eq. 3.33).

    ``rho`` is the Pearson correlation of two selected features over the samples
    (rows of ``X``). As printed the sum runs over the m(m-1)/2 unordered pairs but is
    divided by m(m-1), so RED lies in [-1/2, 1/2]; ``normalization="pairs"`` divides
    by m(m-1)/2 instead (the mean pairwise correlation). The thesis uses the signed
    correlation (default); ``absolute=True`` sums |rho| so that anti-correlated
    features also count as redundant. A constant feature is uncorrelated with every
    other (rho = 0). Fewer than 2 selected features -> NaN.

    Signed: sum_{i>j} rho_ij = (||sum_i z_i||^2 - sum_i ||z_i||^2) / 2 with unit-norm
    centred columns z_i, O(n m); absolute: |Z^T Z| summed in column blocks.
    """
    if normalization not in ("paper", "pairs"):
        raise ConfigError(f"unknown normalization {normalization!r}; choose paper or pairs")
    Z = _columns(X, selected, "redundancy_rate")
    m = Z.shape[1]
    if m < 2:
        return float("nan")
    const = np.ptp(Z, axis=0) == 0
    Z = Z - Z.mean(axis=0)
    norms = np.sqrt((Z * Z).sum(axis=0))
    Z = np.divide(Z, norms, out=np.zeros_like(Z), where=~const)
    if absolute:
        total = 0.0
        for start in range(0, m, _RED_BLOCK):
            B = Z[:, start : start + _RED_BLOCK]
            C = np.abs(B.T @ Z[:, start:])  # rows: block columns; cols: this block onwards
            C = np.clip(C, 0.0, 1.0)
            total += float(np.triu(C[:, : B.shape[1]], 1).sum() + C[:, B.shape[1] :].sum())
    else:
        s = Z.sum(axis=1)
        total = float((s @ s - (~const).sum()) / 2.0)
    denom = m * (m - 1) if normalization == "paper" else m * (m - 1) / 2.0
    return total / denom


def clustering_quality(X, y, rng: np.random.Generator, *, selected=None, n_clusters: int | None = None,
                       n_init: int = 20, max_iter: int = 300) -> dict[str, float]:
    """k-means on the selected features, scored against the classes (thesis Section
    3.8.4: "repeated 20 times with different initializations and the best result in
    terms of the objective function is recorded" = ``KMeans(n_init=20)``).

    All rows of ``X`` are clustered; the indices are computed on the samples with a
    known class (``y >= 0``). ``n_clusters`` defaults to the number of classes.
    Returns ``{"rand": Rand index (eq. 3.32), "ari": adjusted Rand index,
    "inertia": objective of the best run}``; the random state is drawn from ``rng``.
    """
    y = np.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise InputError(f"clustering_quality: {X.shape[0]} samples but {y.shape[0]} labels")
    Xs = _columns(X, selected, "clustering_quality")
    known = y >= 0
    n_cls = np.unique(y[known]).size
    k = n_cls if n_clusters is None else int(n_clusters)
    if k < 1 or k > Xs.shape[0]:
        raise ConfigError(f"clustering_quality: n_clusters={k} must be in 1..{Xs.shape[0]}")
    if known.sum() < 2:
        raise SupervisionError("clustering_quality needs at least 2 samples with known classes")
    seed = int(rng.integers(0, 2**31 - 1))
    km = KMeans(n_clusters=k, n_init=n_init, max_iter=max_iter, random_state=seed).fit(Xs)
    # objective recomputed from the labels: KMeans.inertia_ sums in thread-sized chunks and
    # differs in the last digit between thread counts; this does not
    centers = np.zeros((k, Xs.shape[1]))
    np.add.at(centers, km.labels_, Xs)
    centers /= np.maximum(np.bincount(km.labels_, minlength=k), 1)[:, None]
    inertia = float(((Xs - centers[km.labels_]) ** 2).sum())
    lab = km.labels_[known]
    return {
        "rand": float(rand_score(y[known], lab)),
        "ari": float(adjusted_rand_score(y[known], lab)),
        "inertia": inertia,
    }


def match_clusters(clusters, classes, n_classes: int) -> np.ndarray:
    """Cluster -> class map maximising the number of agreements (Hungarian algorithm,
    :func:`scipy.optimize.linear_sum_assignment`, which solves the same assignment
    problem as the Carpaneto-Toth algorithm the paper cites). Returns ``map`` with
    ``map[cluster] = class``; clusters absent from ``clusters`` still get a distinct class."""
    clusters = np.asarray(clusters, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    C = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(C, (clusters, classes), 1)
    rows, cols = linear_sum_assignment(C, maximize=True)
    out = np.empty(n_classes, dtype=np.int64)
    out[rows] = cols
    return out


MATCHING = ("train", "constrained", "test")


def semisupervised_accuracy(X_train, constraints: Constraints, X_test, y_test, n_classes: int,
                            rng: np.random.Generator, *, y_train=None, matching: str = "train",
                            selected=None, n_init: int = 10, max_iter: int = 100) -> float:
    """Semi-supervised evaluation of a feature subset (constraint-score paper, Section 3.2).

    1. The training samples are clustered into ``n_classes`` groups by constrained
       K-means (Wagstaff et al. 2001; paper Algorithm 1) in the selected feature
       space (``selected`` columns, or all columns of the given matrices), using only
       the must-link / cannot-link ``constraints``.
    2. The estimated training labels (cluster ids) are matched to the classes with
       the Hungarian algorithm on the cluster x class count table. ``matching``
       says which samples' true classes fill that table:

       - ``"train"`` (default, the paper's text: "we propose to match the true and
         estimated labels of the training samples thanks to Carpaneto and Toth
         algorithm"): all training samples; needs ``y_train``.
       - ``"constrained"``: only the samples that appear in a constraint (in the
         simulated protocol their classes are what generated the constraints);
         needs ``y_train``. Clusters with no constrained sample get the classes
         left over by the assignment.
       - ``"test"``: no training class is used; the 1-NN predictions of the test
         samples (cluster ids) are matched to ``y_test`` (the usual clustering
         accuracy; the most favourable relabelling).

    3. Each test sample gets the (matched) estimated label of its nearest training
       sample (1-NN, Euclidean), and the accuracy on ``y_test`` is returned.

    Class codes must be ``0..n_classes-1`` (``y_train``: -1 = unknown, not matched). The random state of COP-KMeans is
    ``rng`` (the caller derives one per run).
    """
    if matching not in MATCHING:
        raise ConfigError(f"unknown matching {matching!r}; choose {', '.join(MATCHING)}")
    Xtr = _columns(X_train, selected, "semisupervised_accuracy")
    Xte = _columns(X_test, selected, "semisupervised_accuracy")
    if Xtr.shape[1] != Xte.shape[1]:
        raise InputError(f"semisupervised_accuracy: training has {Xtr.shape[1]} features, "
                         f"test has {Xte.shape[1]}")
    constraints.validate(Xtr.shape[0])
    y_test = np.asarray(y_test, dtype=np.int64)
    if y_test.shape[0] != Xte.shape[0]:
        raise InputError(f"semisupervised_accuracy: {Xte.shape[0]} test samples but {y_test.shape[0]} labels")
    n_classes = int(n_classes)
    if n_classes < 1 or n_classes > Xtr.shape[0]:
        raise ConfigError(f"n_classes={n_classes} must be in 1..{Xtr.shape[0]} (training samples)")
    if y_test.size and (y_test.min() < 0 or y_test.max() >= n_classes):
        raise InputError(f"test labels must be class codes 0..{n_classes - 1}")
    if matching != "test":
        if y_train is None:
            raise SupervisionError(
                f"matching={matching!r} needs y_train (true training classes, used only to "
                "name the clusters); pass y_train or use matching='test'"
            )
        y_train = np.asarray(y_train, dtype=np.int64)
        if y_train.shape[0] != Xtr.shape[0]:
            raise InputError(f"semisupervised_accuracy: {Xtr.shape[0]} training samples but "
                             f"{y_train.shape[0]} labels")
        ref = y_train if matching == "train" else y_train[constraints.samples()]
        if ref.size and ((ref < -1).any() or ref.max() >= n_classes):
            raise InputError(f"y_train must hold class codes 0..{n_classes - 1} "
                             f"for the samples used by matching={matching!r}")

    clusters = np.asarray(cop_kmeans(Xtr, n_classes, constraints, rng, n_init=n_init, max_iter=max_iter),
                          dtype=np.int64)
    if clusters.shape[0] != Xtr.shape[0] or clusters.min() < 0 or clusters.max() >= n_classes:
        raise MethodError("cop_kmeans returned labels outside 0..n_classes-1 or of the wrong length")
    nn = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(Xtr, clusters)
    pred_cluster = nn.predict(Xte)
    if matching == "train":
        known = y_train >= 0
        mapping = match_clusters(clusters[known], y_train[known], n_classes)
    elif matching == "constrained":
        idx = constraints.samples()
        idx = idx[y_train[idx] >= 0]
        mapping = match_clusters(clusters[idx], y_train[idx], n_classes)
    else:
        mapping = match_clusters(pred_cluster, y_test, n_classes)
    return float(np.mean(mapping[pred_cluster] == y_test)) if y_test.size else float("nan")


__all__ = [
    "clustering_quality",
    "match_clusters",
    "redundancy_rate",
    "semisupervised_accuracy",
]
