"""wCKM: weighted constrained fuzzy k-means (thesis 4.3.1, Alg. 13, eq. 4.4-4.23).

Minimises gamma_2 = sum_q sum_i sum_j a_iq^2 w_j^beta (x_ij - c_qj)^2 + theta_ML + theta_CL
(eq. 4.4, 4.7-4.8) by alternating: memberships by eq. 4.15 (fuzzy c-means with
constraint-violation penalties), centroids by eq. 4.9 (a^2-weighted means), feature
weights by eq. 4.23 (w_j proportional to E_j^(1/(beta-1)), E_j = sum_q sum_i
a_iq^2 (x_ij - c_qj)^2), beta = -0.1 as in the thesis. K = number of labeled
classes (Alg. 13 step 3) unless ``n_clusters``.

Choices (the thesis leaves them open):
- The penalty of sample i for cluster q uses the previous iteration's memberships
  of its constraint partners: P_iq = sum_ML (1 - a_rq) + sum_CL a_rq (eq. 4.12's
  sum_{p != q} a_rp = 1 - a_rq), times ``penalty`` (1 in eq. 4.4). Eq. 4.15 keeps
  sum_q a_iq = 1 but can leave [0, 1]; memberships are clipped to [0, 1] and
  renormalised.
- Eq. 4.23 is implemented as written (see :func:`ssfs.methods._shared.clustering.dispersion_weights`):
  with beta < 0, w_j grows with the within-cluster dispersion E_j, contrary to the
  thesis's prose. On the raw Wave data this puts the noise features last, as in the
  thesis's Fig. 4.1 (the signal features have the larger raw dispersion); z-scoring
  first (``standardize_features=True``) reverses that, so it is off by default.
- Features with E_j = 0 get weight 0 (the thesis's rule for L2GFS, eq. 4.28).
- Stops when no membership moves by more than ``tol`` or after ``max_iter``.
- ``n_init`` runs from random centroids (distinct samples) and random initial weights;
  the returned weights are their average (thesis 4.4.2, "averaged over 10 runs"),
  the clustering that of the run with the lowest gamma_2 (thesis 4.5).

Returns SelectionResult(scores = weights (sum 1, higher is better),
extra = {"clusters": argmax memberships, "objective", "n_iter", "violations": (ML, CL)}).
"""

from __future__ import annotations

import numpy as np

from .._validation import dense
from ..errors import InputError, SupervisionError
from ..params import NonNegFloat, PosInt
from ..registry import SelectionResult, register
from ._shared.clustering import (
    dispersion_weights,
    initial_centres,
    powered,
    standardize,
    violations,
    weighted_sq_dists,
)
from ._shared.graph import pairs_matrix


def n_clusters_from_labels(y, n_clusters, method: str) -> int:
    """K = the given number, else the number of labeled classes (thesis Alg. 13-14 step 3)."""
    if n_clusters is not None:
        return int(n_clusters)
    k = np.unique(y[y >= 0]).size
    if k < 2:
        raise SupervisionError(f"{method}: needs n_clusters or labeled samples of at least 2 classes, got {k}")
    return k


def check_weighting_input(X, y, method: str, *, beta, n_clusters, n_init, max_iter, standardize_features):
    """Shared checks of wCKM and L2GFS: (dense float X, possibly standardized; K)."""
    if beta in (0.0, 1.0):
        raise InputError(f"{method}: beta must differ from 0 and 1, got {beta}")
    if n_init < 1 or max_iter < 1:
        raise InputError(f"{method}: n_init and max_iter must be >= 1, got {n_init}, {max_iter}")
    K = n_clusters_from_labels(y, n_clusters, method)
    Xd = dense(X, method=method)
    Xd = standardize(Xd) if standardize_features else np.asarray(Xd, dtype=np.float64)
    if not 1 <= K <= Xd.shape[0]:
        raise InputError(f"{method}: n_clusters must be in 1..{Xd.shape[0]}, got {K}")
    return Xd, K


def fuzzy_memberships(D: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Eq. 4.15: a_iq = (1/D_iq) / sum_t (1/D_it)
    + 1/(2 D_iq) [ (sum_t P_it / D_it) / (sum_t 1/D_it) - P_iq ], clipped to [0, 1], rows renormalised."""
    inv = 1.0 / D
    s = inv.sum(axis=1, keepdims=True)
    a = inv / s + 0.5 * inv * ((P * inv).sum(axis=1, keepdims=True) / s - P)
    a = np.clip(a, 0.0, 1.0)
    rs = a.sum(axis=1, keepdims=True)
    return np.where(rs > 0, a / np.where(rs > 0, rs, 1.0), 1.0 / D.shape[1])


def _dispersions(X, a2, C):
    """E_qj = sum_i a2_iq (x_ij - c_qj)^2 (K x p)."""
    return np.maximum(a2.T @ (X * X) - 2.0 * C * (a2.T @ X) + C * C * a2.sum(axis=0)[:, None], 0.0)


def _run(X, K, A_ml, A_cl, ml_deg, beta, penalty, max_iter, tol, rng):
    n, p = X.shape
    C = initial_centres(X, K, rng)
    w = rng.random(p)
    w /= w.sum()
    a = None
    eps = 1e-12 * max(1.0, float(np.mean(X * X)))
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (returned: the iteration count)
        wb = np.tile(powered(w, beta), (K, 1))
        D = np.maximum(weighted_sq_dists(X, C, wb), eps)
        if a is None:
            P = np.zeros((n, K))
        else:
            P = penalty * (ml_deg[:, None] - A_ml @ a + A_cl @ a)
        new = fuzzy_memberships(D, P)
        a2 = new * new
        C = (a2.T @ X) / np.maximum(a2.sum(axis=0), 1e-300)[:, None]
        w = dispersion_weights(_dispersions(X, a2, C).sum(axis=0), beta)[0]
        done = a is not None and np.max(np.abs(new - a)) < tol
        a = new
        if done:
            break
    a2 = a * a
    wb = powered(w, beta)
    obj = float((wb * _dispersions(X, a2, C)).sum())
    ml_term = float(ml_deg.sum()) / 2 - 0.5 * float((a * (A_ml @ a)).sum())
    obj += penalty * (ml_term + 0.5 * float((a * (A_cl @ a)).sum()))
    return w, a, obj, it


@register("wckm", higher_is_better=True, invariances=("shift",))
def wckm(X, y, constraints, rng, *, beta: float = -0.1, n_clusters: PosInt | None = None, n_init: PosInt = 10,
         max_iter: PosInt = 100, tol: NonNegFloat = 1e-4, penalty: NonNegFloat = 1.0,
         standardize_features: bool = False):
    """Weighted constrained fuzzy k-means feature weighting (thesis Alg. 13); weights sum to 1."""
    Xd, K = check_weighting_input(X, y, "wckm", beta=beta, n_clusters=n_clusters, n_init=n_init,
                                  max_iter=max_iter, standardize_features=standardize_features)
    n = Xd.shape[0]
    A_ml = pairs_matrix(constraints.ml, n)
    A_cl = pairs_matrix(constraints.cl, n)
    ml_deg = np.asarray(A_ml.sum(axis=1)).ravel()
    runs = [_run(Xd, K, A_ml, A_cl, ml_deg, beta, penalty, int(max_iter), tol, rng) for _ in range(int(n_init))]
    weights = np.mean([r[0] for r in runs], axis=0)
    best = min(range(len(runs)), key=lambda r: runs[r][2])
    labels = np.argmax(runs[best][1], axis=1)
    return SelectionResult(scores=weights, extra={
        "clusters": labels, "objective": runs[best][2], "n_iter": runs[best][3],
        "violations": violations(labels, constraints), "memberships": runs[best][1],
    })
