"""MPC-KMeans: k-means with soft pairwise constraints and metric learning
(Bilenko, Basu & Mooney 2004, ICML, "Integrating constraints and metric learning in
semi-supervised clustering"; thesis Table 4.3).

Objective (Bilenko et al. eq. 5), one diagonal metric A_h per cluster:

    J = sum_i (||x_i - mu_{l_i}||^2_{A_{l_i}} - log det A_{l_i})
        + sum_{(i,j) in M} w 1[l_i != l_j] (||x_i - x_j||^2_{A_{l_i}} + ||x_i - x_j||^2_{A_{l_j}}) / 2
        + sum_{(i,j) in C} wbar 1[l_i == l_j] (||x'_{l_i} - x''_{l_i}||^2_{A_{l_i}} - ||x_i - x_j||^2_{A_{l_i}})

EM-style: (E) each constrained sample in a random order goes to the cluster that
minimises its own terms of J given the others' current labels (unconstrained samples:
all at once, only the first term depends on them); (M) centres = means, and the metric
update of eq. 9 restricted to the diagonal:

    a_hd = |X_h| / (sum_{i in X_h} (x_id - mu_hd)^2 + sum_{violated ML touching h} w/2 (x_id - x_jd)^2
                    + sum_{violated CL in h} wbar ((x'_d - x''_d)^2 - (x_id - x_jd)^2)).

Choices (parameters or documented): ``metric="cluster"`` (one diagonal metric per
cluster, the paper's general case), ``"shared"`` (one diagonal metric) or ``"none"``
(A = I: PCKMeans of Basu et al. 2004). The maximally separated pair (x', x'') under a
diagonal metric is bounded by the diagonal of the data's bounding box,
(x'_d - x''_d)^2 := range_d^2 (exact on each coordinate; avoids n^2 pairs), which
keeps every CL penalty >= 0. Initialisation (paper Section 3): the neighbourhoods of
the transitively closed must-links; the centres of the K largest, completed by
farthest-first samples when there are fewer than K. A non-positive denominator (a
dimension constant within a cluster) is floored at 1e-12 x the larger of its cluster's
mean over dimensions and |X_h| x the data's mean per-dimension variance: a singleton or
empty cluster (farthest-first puts an outlying document alone) has S_h = 0 on every
dimension, and a floor relative to S_h alone made A_h infinite and every restart's
objective non-finite (issue #20: unconstrained MPC-KMeans on PCMAC and RELATHE).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ..constraints import Constraints
from ..errors import InputError
from ..methods._shared.clustering import ConstraintIndex, _check, update_centres, weighted_sq_dists

METRICS = ("cluster", "shared", "none")


def _dense(X) -> np.ndarray:
    return X.toarray() if sparse.issparse(X) else X


def initial_centres_from_neighbourhoods(X, K: int, closed: Constraints, rng: np.random.Generator) -> np.ndarray:
    """Centres of the K largest must-link neighbourhoods (connected components of the
    closed must-links; singletons are not neighbourhoods), then farthest-first samples
    (the first of them at random when there is no neighbourhood)."""
    n = X.shape[0]
    centres = []
    if closed.n_ml:
        A = sparse.csr_matrix((np.ones(closed.n_ml), (closed.ml[:, 0], closed.ml[:, 1])), shape=(n, n))
        _, comp = connected_components(A, directed=False)
        sizes = np.bincount(comp)
        big = [c for c in np.argsort(-sizes, kind="stable") if sizes[c] > 1][:K]
        centres = [np.asarray(_dense(X[comp == c]).mean(axis=0)).ravel() for c in big]
    if not centres:
        centres = [np.asarray(_dense(X[[int(rng.integers(n))]])).ravel().astype(np.float64)]
    while len(centres) < K:
        d = weighted_sq_dists(X, np.vstack(centres)).min(axis=1)
        centres.append(np.asarray(_dense(X[[int(np.argmax(d))]])).ravel().astype(np.float64))
    return np.vstack(centres).astype(np.float64)


class _Problem:
    """Data, closed constraints and fixed quantities of one MPC-KMeans run."""

    def __init__(self, X, K: int, constraints: Constraints, w: float, wbar: float):
        self.X, self.K, self.w, self.wbar = X, K, float(w), float(wbar)
        self.index = ConstraintIndex(constraints, X.shape[0])
        c = self.index.closed
        self.ml, self.cl = c.ml, c.cl
        Xd = _dense(X)
        self.range2 = np.ptp(Xd, axis=0) ** 2 if X.shape[0] else np.zeros(X.shape[1])
        vbar = float(Xd.var(axis=0).mean()) if X.shape[0] else 0.0
        self.vbar = vbar if vbar > 0 else 1.0  # the scale of the metric floor (constant data: 1)
        self.dml = (Xd[self.ml[:, 0]] - Xd[self.ml[:, 1]]) ** 2 if len(self.ml) else np.zeros((0, X.shape[1]))
        self.dcl = (Xd[self.cl[:, 0]] - Xd[self.cl[:, 1]]) ** 2 if len(self.cl) else np.zeros((0, X.shape[1]))

    def costs(self, C: np.ndarray, A: np.ndarray) -> np.ndarray:
        """n x K: ||x_i - mu_h||^2_{A_h} - log det A_h."""
        return weighted_sq_dists(self.X, C, A) - np.log(A).sum(axis=1)[None, :]

    def objective(self, labels: np.ndarray, C: np.ndarray, A: np.ndarray) -> float:
        n = labels.size
        J = float(self.costs(C, A)[np.arange(n), labels].sum())
        if len(self.ml):
            li, lj = labels[self.ml[:, 0]], labels[self.ml[:, 1]]
            v = li != lj
            J += self.w * 0.5 * float(((A[li[v]] + A[lj[v]]) * self.dml[v]).sum())
        if len(self.cl):
            li, lj = labels[self.cl[:, 0]], labels[self.cl[:, 1]]
            v = li == lj
            J += self.wbar * float((A[li[v]] * (self.range2 - self.dcl[v])).sum())
        return J

    def assign(self, labels: np.ndarray, C: np.ndarray, A: np.ndarray, order: np.ndarray) -> np.ndarray:
        """E-step: unconstrained samples to their cheapest cluster; constrained ones in
        ``order``, each minimising its own terms of J given the current labels."""
        D = self.costs(C, A)
        new = np.argmin(D, axis=1)
        new[order] = labels[order]
        Xd = self.X
        ml, cl = self.index.ml, self.index.cl
        for i in order:  # sequential by definition (each choice changes the next sample's penalties)
            xi = np.asarray(_dense(Xd[[i]])).ravel()
            cost = D[i].copy()
            for j in ml.indices[ml.indptr[i]:ml.indptr[i + 1]]:
                dij = (xi - np.asarray(_dense(Xd[[j]])).ravel()) ** 2
                pen = 0.5 * self.w * (A @ dij + A[new[j]] @ dij)  # paid by every h != l_j
                pen[new[j]] = 0.0
                cost += pen
            for j in cl.indices[cl.indptr[i]:cl.indptr[i + 1]]:
                dij = (xi - np.asarray(_dense(Xd[[j]])).ravel()) ** 2
                cost[new[j]] += self.wbar * float(A[new[j]] @ (self.range2 - dij))
            new[i] = int(np.argmin(cost))
        return new

    def metrics(self, labels: np.ndarray, C: np.ndarray, mode: str) -> np.ndarray:
        """M-step for the diagonal metrics (eq. 9 on the diagonal); K x p."""
        K, p = C.shape
        if mode == "none":
            return np.ones((K, p))
        Xd = _dense(self.X)
        S = np.zeros((K, p))
        np.add.at(S, labels, (Xd - C[labels]) ** 2)
        if len(self.ml):
            li, lj = labels[self.ml[:, 0]], labels[self.ml[:, 1]]
            v = li != lj
            np.add.at(S, li[v], 0.5 * self.w * self.dml[v])
            np.add.at(S, lj[v], 0.5 * self.w * self.dml[v])
        if len(self.cl):
            li, lj = labels[self.cl[:, 0]], labels[self.cl[:, 1]]
            v = li == lj
            np.add.at(S, li[v], self.wbar * (self.range2 - self.dcl[v]))
        counts = np.bincount(labels, minlength=K).astype(float)
        if mode == "shared":
            S = np.broadcast_to(S.sum(axis=0), (K, p)).copy()
            counts = np.full(K, counts.sum())
        floor = 1e-12 * np.maximum(S.mean(axis=1, keepdims=True), np.maximum(counts, 1.0)[:, None] * self.vbar)
        A = np.maximum(counts, 1.0)[:, None] / np.maximum(S, floor)
        return A


def mpc_kmeans(X, n_clusters: int, constraints: Constraints, rng: np.random.Generator, *,
               metric: str = "cluster", w: float = 1.0, wbar: float = 1.0, n_init: int = 1,
               max_iter: int = 100) -> np.ndarray:
    """MPC-KMeans labels (length n, 0..n_clusters-1); the best objective of ``n_init``
    runs (the first initialised from the must-link neighbourhoods, the others from
    random samples completed farthest-first). Constraints may be violated (soft)."""
    if metric not in METRICS:
        raise InputError(f"mpc_kmeans: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    X = _check(X, n_clusters)
    if n_init < 1 or max_iter < 1:
        raise InputError(f"mpc_kmeans: n_init and max_iter must be >= 1, got {n_init}, {max_iter}")
    K = int(n_clusters)
    prob = _Problem(X, K, constraints, w, wbar)
    best, best_obj = None, np.inf
    for run in range(int(n_init)):
        closed = prob.index.closed if run == 0 else Constraints.empty()
        C = initial_centres_from_neighbourhoods(X, K, closed, rng)
        A = np.ones_like(C)
        labels = np.argmin(prob.costs(C, A), axis=1)
        for _ in range(int(max_iter)):
            new = prob.assign(labels, C, A, rng.permutation(prob.index.constrained))
            C = update_centres(X, new, C)
            A = prob.metrics(new, C, metric)
            if np.array_equal(new, labels):
                break
            labels = new
        obj = prob.objective(labels, C, A)
        if obj < best_obj:
            best, best_obj = labels, obj
    return best
