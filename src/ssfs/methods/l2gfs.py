"""L2GFS: local-to-global feature weighting on COP-KMeans (thesis 4.3.2, Alg. 14, eq. 4.24-4.37).

Minimises Q = sum_q sum_i sum_j a_iq w_qj^beta (x_ij - c_qj)^2 (eq. 4.24) with hard
assignments that violate no constraint (eq. 4.25-4.26: a COP-KMeans pass,
:func:`ssfs.methods._shared.clustering.cop_assign`, with the cluster-specific weighted distance),
centroids by eq. 4.27, local weights per cluster by eq. 4.28 (w_qj proportional to
E_qj^(1/(beta-1)), E_qj = sum_{i in q} (x_ij - c_qj)^2, 0 where E_qj = 0) until the
assignment no longer changes (Lemma 4); global weights w_j = (1/K) sum_q w_qj
(eq. 4.37). beta = -0.1 ("the same parameter values" as wCKM, thesis 4.5).

Choices (documented): eq. 4.28 is implemented as written (w_qj grows with E_qj for
beta < 0; see :func:`ssfs.methods._shared.clustering.dispersion_weights` and the wCKM module doc);
raw features by default (``standardize_features`` z-scores them first); initial local
weights are random, each cluster's row summing to 1 (eq. 4.25);
a zero local weight drops the feature from that cluster's distance (0^beta := 0 for
beta < 0); a cluster left empty or without any within-cluster dispersion keeps its
previous centroid and weights; constrained samples are assigned in a random order
drawn per run (the thesis uses data order). ``n_init`` runs: the weights are averaged
over the feasible runs, the clustering is that of the run with the lowest Q.
A run with no feasible assignment is dropped; if all are, SupervisionError.

Returns SelectionResult(scores = global weights (sum 1, higher is better),
extra = {"clusters", "objective", "n_iter", "local_weights" (K x p)}).
"""

from __future__ import annotations

import numpy as np

from ..errors import SupervisionError
from ..params import PosInt
from ..registry import SelectionResult, register
from ._shared.clustering import (
    ConstraintIndex,
    Infeasible,
    cop_assign,
    dispersion_weights,
    initial_centres,
    powered,
    update_centres,
    weighted_sq_dists,
)
from .wckm import check_weighting_input


def _local_dispersions(X, labels, C):
    """E_qj = sum_{i in cluster q} (x_ij - c_qj)^2 (K x p)."""
    K = C.shape[0]
    onehot = np.zeros((X.shape[0], K))
    onehot[np.arange(X.shape[0]), labels] = 1.0
    return np.maximum(onehot.T @ (X * X) - 2.0 * C * (onehot.T @ X) + C * C * onehot.sum(axis=0)[:, None], 0.0)


def _run(X, K, index, beta, max_iter, rng):
    n, p = X.shape
    C = initial_centres(X, K, rng)
    W = rng.random((K, p))
    W /= W.sum(axis=1, keepdims=True)
    order = rng.permutation(index.constrained)
    labels = None
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (returned: the iteration count)
        new = cop_assign(weighted_sq_dists(X, C, powered(W, beta)), index, order)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        C = update_centres(X, labels, C)
        E = _local_dispersions(X, labels, C)
        Wn = dispersion_weights(E, beta)
        keep = E.sum(axis=1) > 0  # empty or single-point clusters keep their weights
        W[keep] = Wn[keep]
    obj = float(weighted_sq_dists(X, C, powered(W, beta))[np.arange(n), labels].sum())
    return W, labels, obj, it


@register("l2gfs", higher_is_better=True, invariances=("shift", "unit"))
def l2gfs(X, y, constraints, rng, *, beta: float = -0.1, n_clusters: PosInt | None = None, n_init: PosInt = 10,
          max_iter: PosInt = 100, standardize_features: bool = False):
    """Local-to-global feature weighting on constrained k-means (thesis Alg. 14); weights sum to 1."""
    Xd, K = check_weighting_input(X, y, "l2gfs", beta=beta, n_clusters=n_clusters, n_init=n_init,
                                  max_iter=max_iter, standardize_features=standardize_features)
    n = Xd.shape[0]
    index = ConstraintIndex(constraints, n)
    runs, last_bad = [], -1
    for _ in range(int(n_init)):
        try:
            runs.append(_run(Xd, K, index, beta, int(max_iter), rng))
        except Infeasible as e:
            last_bad = e.sample
    if not runs:
        raise SupervisionError(
            f"l2gfs: no constraint-satisfying assignment in {n_init} run(s); sample {last_bad} "
            f"cannot join any of the {K} clusters"
        )
    glob = np.array([r[0].mean(axis=0) for r in runs])  # eq. 4.37 per run
    glob /= glob.sum(axis=1, keepdims=True)
    best = min(range(len(runs)), key=lambda r: runs[r][2])
    return SelectionResult(scores=glob.mean(axis=0), extra={
        "clusters": runs[best][1], "objective": runs[best][2], "n_iter": runs[best][3],
        "local_weights": runs[best][0], "n_feasible_runs": len(runs),
    })
