"""Do the propagated samples point at the classes' features? The labels' own yardstick (issue #28).

A graph earns its propagated samples by carrying the classes. Agreeing with held-out labels above
chance is a low bar: a kNN graph of data whose strongest structure is not the classes (co-expressed
gene modules, a program) agrees with held-out labels above chance where its structure happens to
follow them, and the propagated samples, grouped along that structure, put its genes ahead of the
markers (``ssfs.simulate``'s ``microarray_modules``, 10 labels per class: ``propagate`` 0.05 of the
markers on seed 0 where the labels' own F test found 0.68). How often a graph predicts held-out labels
cannot tell such structured errors from noise (a graph right on 80 % of them whose errors are noise
adds samples that help the scores). What tells them apart is the features each side picks:

* :func:`propagated_features`: the :data:`GENES` features the propagated samples' groups explain best
  (R^2 over the unlabeled samples only: no label enters it directly);
* :func:`labels_alone_agreement`: held-out accuracy of the diagonal linear discriminant (DLDA,
  Dudoit, Fridlyand & Speed 2002, eq. 6; the nearest centroid in units of each feature's pooled
  within-class standard deviation, as the nearest shrunken centroids of Tibshirani et al. 2002,
  eq. 2, without the shrinking; the variances moderated by their median, SAM's s0, Tusher et al.
  2001) trained in every fold of :func:`~ssfs.methods._shared.propagation.held_out_agreement` on
  the remaining labels, reading either those fixed propagated features or the :data:`GENES` the
  training labels' own R^2 ranks first (refitted per fold: no selection bias);
* :func:`labels_lead`: the labels' own features predict at least :data:`LEAD_BY` more held-out
  labels than the propagated samples' features (paired: the same held-out samples). The propagated
  samples then count 0 (``propagate``);
* :func:`nearer_own_class`: how often one set of features places a held-out label's own class nearer
  than another (every class's place, not only the first: with many classes and few labels the
  predictions alone rarely differ).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import sparse

from .batches import centred_in_batches
from .class_stats import variance_explained
from .propagation import held_out_agreement

#: features each discriminant reads: few (with hundreds, chance features outweigh the markers: 200
#: of the labels' features predicted 0.33-0.47 of the held-out labels where 50 predicted 0.62-0.72,
#: the module arrays above)
GENES = 50
#: held-out labels the labels' own features must predict beyond the propagated samples' (right where
#: those are wrong, minus the reverse) before the propagated samples count nothing: more than one
#: label's luck
LEAD_BY = 2


def top_by_r2(X, groups: np.ndarray, genes: int = GENES, weights=None, batch=None) -> np.ndarray:
    """The ``genes`` features with the largest R^2 of ``groups`` (``weights``, ``batch``:
    :func:`~ssfs.methods._shared.class_stats.variance_explained`), best first, ties by index."""
    r2 = variance_explained(X, groups, weights, batch)
    return np.argsort(-np.nan_to_num(r2, nan=-np.inf), kind="stable")[: min(int(genes), X.shape[1])]


def propagated_features(X, y: np.ndarray, groups: np.ndarray, genes: int = GENES, batch=None) -> np.ndarray | None:
    """:func:`top_by_r2` of the fit's ``groups`` over the unlabeled samples of ``y`` alone (the
    labeled ones weigh 0); None when those samples hold fewer than 2 groups (nothing to rank by)."""
    free = y < 0
    if np.unique(groups[free]).size < 2:
        return None
    return top_by_r2(X, groups, genes, free.astype(np.float64), batch)


def discriminant_distances(A_train: np.ndarray, g: np.ndarray, A_test: np.ndarray, n_classes: int) -> np.ndarray:
    """Distances (rows of ``A_test`` x classes) of the DLDA (module doc) of the rows ``A_train`` (dense,
    the features it reads) of classes ``g``: sum_j (x_j - m_cj)^2 / (s_j^2 + median s^2) to every class
    mean m_c, s^2 the pooled within-class variances; inf for a class without a training row."""
    H = sparse.csr_matrix((np.ones(g.size), (g, np.arange(g.size))), shape=(n_classes, g.size))
    size = np.asarray(H.sum(axis=1)).ravel()
    present = size > 0
    means = np.asarray(H @ A_train) / np.where(present, size, 1.0)[:, None]
    resid = A_train - means[g]
    var = np.einsum("ij,ij->j", resid, resid) / max(g.size - int(present.sum()), 1)
    var = var + np.median(var)
    inv = 1.0 / np.where(var > 0, var, 1.0)  # distances expanded: no samples x classes x features array
    dist = ((A_test * A_test) @ inv)[:, None] - 2.0 * A_test @ (means * inv).T + ((means * means) @ inv)[None, :]
    dist[:, ~present] = np.inf
    return dist


def discriminant_predict(A_train: np.ndarray, g: np.ndarray, A_test: np.ndarray, n_classes: int) -> np.ndarray:
    """Classes of the rows of ``A_test``: the nearest class of :func:`discriminant_distances` (ties: the
    lower class; a class without a training row is never predicted)."""
    return np.argmin(discriminant_distances(A_train, g, A_test, n_classes), axis=1)


def place_scores(dist: np.ndarray) -> np.ndarray:
    """Class scores (rows normalised to sum 1) from every class's place in a row of ``dist`` (samples x K):
    K for the nearest class, K - 1 for the next, ..., 1 for the farthest (ties: the lower class nearer, as
    :func:`discriminant_predict`). Their largest is the predicted class, and the log of the true class's
    score (:func:`~ssfs.methods._shared.propagation.held_out_agreement`'s reach) tells how near the true
    class came where the prediction missed it (:func:`nearer_own_class`)."""
    n, k = dist.shape
    places = np.empty((n, k), dtype=np.int64)
    np.put_along_axis(places, np.argsort(dist, axis=1, kind="stable"), np.broadcast_to(np.arange(k), (n, k)), axis=1)
    return (k - places) / (k * (k + 1) / 2.0)


def _dense(M) -> np.ndarray:
    return M.toarray() if sparse.issparse(M) else np.asarray(M, dtype=np.float64)


def labels_own_features(X, y: np.ndarray, yy: np.ndarray, genes: int = GENES, batch=None) -> np.ndarray:
    """The ``genes`` best features by the R^2 of a fold's training labels (:func:`top_by_r2`): the labeled samples
    of ``y`` whose label the fold's labels ``yy`` keep (its held-out ones -1), within their batches with ``batch``
    (coded over all labeled samples), best first. What :func:`labels_alone_agreement` reads when given no features."""
    lab = np.flatnonzero(y >= 0)
    train = yy[lab] >= 0
    codes = None if batch is None else np.unique(np.asarray(batch)[lab], return_inverse=True)[1].ravel()[train]
    return top_by_r2(X[lab[train]], yy[lab[train]], genes, batch=codes)


def labels_alone_agreement(X, y: np.ndarray, n_classes: int, *, features=None, positions=None, folds: int = 5,
                           batch=None, genes: int = GENES) -> tuple[float, float, np.ndarray, np.ndarray]:
    """:func:`~ssfs.methods._shared.propagation.held_out_agreement` of :func:`discriminant_predict`
    trained, in each fold, on the remaining labels of ``y``, reading ``features`` (fixed, or a function
    of the fold's labels ``yy``, its held-out ones -1: features chosen without them), or, when None,
    the ``genes`` best by the training labels' R^2 (within batches with ``batch``). With
    ``batch`` the values are the residuals about the labeled samples' batch means. The class scores are
    :func:`place_scores`: the predictions are the nearest classes, and the reach tells every held-out
    label's own class's place (:func:`nearer_own_class`)."""
    lab = np.flatnonzero(y >= 0)
    Xl = X[lab]
    codes = None if batch is None else np.unique(np.asarray(batch)[lab], return_inverse=True)[1].ravel()
    if features is None:
        features = functools.partial(labels_own_features, X, y, genes=genes, batch=batch)

    def scores_for(yy: np.ndarray) -> np.ndarray:
        train = yy[lab] >= 0
        g = yy[lab][train]
        F = np.zeros((y.size, n_classes))
        if (~train).any():
            cols = features(yy) if callable(features) else features
            A = centred_in_batches(_dense(Xl[:, cols]), codes)
            F[lab[~train]] = place_scores(discriminant_distances(A[train], g, A[~train], n_classes))
        return F

    return held_out_agreement(scores_for, y, n_classes, positions=positions, folds=folds)


def labels_lead(propagated: tuple, alone: tuple, y: np.ndarray) -> tuple[bool, int, int]:
    """(lead, b, c): b held-out labels the labels' own features predict and the propagated samples'
    features do not, c the reverse (``propagated``, ``alone``: :func:`labels_alone_agreement` results
    on the same labels ``y``); the labels lead when b - c >= :data:`LEAD_BY`. Any two held-out
    agreements of the same labels and folds compare so (``propagate`` also weighs its graph on genes
    in their own units against the standardised one's: ``alone`` is then the challenger)."""
    truth = np.asarray(y)[np.asarray(y) >= 0]
    pp, pa = propagated[2], alone[2]
    if len(pp) != truth.size or len(pa) != truth.size:
        return False, 0, 0
    both = (pp >= 0) & (pa >= 0)
    b = int((both & (pa == truth) & (pp != truth)).sum())
    c = int((both & (pp == truth) & (pa != truth)).sum())
    return b - c >= LEAD_BY, b, c


def nearer_own_class(first: tuple, second: tuple) -> tuple[int, int]:
    """(nearer, farther): the held-out labels whose own class the ``second`` features' discriminant places
    nearer than the ``first`` features' does, and farther (both :func:`labels_alone_agreement` results of
    the same labels and folds; their reach is the log of the true class's :func:`place_scores`). With 2
    classes these are :func:`labels_lead`'s b and c; with more, every such b (c) is one of the nearer
    (farther), and so is every held-out label whose own class came second rather than fifth: more of the
    held-out labels tell the two apart (8 classes at 3 labels per class: 5 to 1 right, 15 to 1 nearer)."""
    rf, rs = np.asarray(first[3]), np.asarray(second[3])
    if rf.shape != rs.shape:
        return 0, 0
    both = np.isfinite(rf) & np.isfinite(rs)
    return int((rs[both] > rf[both]).sum()), int((rs[both] < rf[both]).sum())
