"""COP-KMeans: k-means with hard must-link / cannot-link constraints (Wagstaff et al. 2001).

Each iteration assigns every sample to the nearest centre that violates no
constraint with the samples already assigned in this pass, then moves each centre
to the mean of its samples, until the assignment no longer changes. Constraints are
first closed transitively (:meth:`ssfs.constraints.Constraints.transitive_closure`).

Choices (documented): initial centres are distinct samples drawn at random (as in
Wagstaff et al. and thesis Alg. 13-14); unconstrained samples cannot violate
anything, so they are assigned all at once (vectorized), and the constrained ones
one by one in a random order drawn per restart (Wagstaff et al. use data order; a
fresh order per restart gives infeasible orders a second chance); a cluster left
empty keeps its previous centre. When a sample has no admissible cluster the
restart fails; :func:`cop_kmeans` keeps the feasible restart of lowest objective
and raises :class:`ssfs.errors.SupervisionError` naming the sample when every
restart failed (it never returns a labelling that violates a constraint).

Clustering agreement: use scikit-learn's ``rand_score`` / ``adjusted_rand_score``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...constraints import Constraints
from ...errors import InputError, SupervisionError


class Infeasible(Exception):
    """A sample has no cluster compatible with its constraints (carries the sample index)."""

    def __init__(self, sample: int):
        super().__init__(sample)
        self.sample = int(sample)


class ConstraintIndex:
    """Neighbour lists of the transitively closed constraints, for fast assignment checks."""

    def __init__(self, constraints: Constraints, n: int):
        closed = constraints.transitive_closure(n) if len(constraints) else constraints
        closed.validate(n)
        self.ml = _adjacency(closed.ml, n)
        self.cl = _adjacency(closed.cl, n)
        self.constrained = closed.samples()
        self.closed = closed


def _adjacency(pairs: np.ndarray, n: int) -> sparse.csr_matrix:
    if len(pairs) == 0:
        return sparse.csr_matrix((n, n), dtype=np.int8)
    i = np.r_[pairs[:, 0], pairs[:, 1]]
    j = np.r_[pairs[:, 1], pairs[:, 0]]
    return sparse.csr_matrix((np.ones(i.size, dtype=np.int8), (i, j)), shape=(n, n))


def weighted_sq_dists(X, C: np.ndarray, W: np.ndarray | None = None) -> np.ndarray:
    """D_iq = sum_j W_qj (x_ij - c_qj)^2 for every sample i and centre q (n x K);
    W (K x p) defaults to 1. Expanded as X^2 W^T - 2 X (W C)^T + sum_j W C^2."""
    W = np.ones_like(C) if W is None else W
    X2 = X.multiply(X) if sparse.issparse(X) else X * X
    D = np.asarray(X2 @ W.T) - 2.0 * np.asarray(X @ (W * C).T) + (W * C * C).sum(axis=1)[None, :]
    return np.maximum(D, 0.0)


def cop_assign(D: np.ndarray, index: ConstraintIndex, order: np.ndarray) -> np.ndarray:
    """One COP-KMeans assignment pass given costs D (n x K): unconstrained samples to
    their cheapest cluster, constrained samples in ``order`` to the cheapest cluster
    compatible with the samples assigned before them. Raises :class:`Infeasible`."""
    labels = np.argmin(D, axis=1)
    done = np.ones(D.shape[0], dtype=bool)
    done[order] = False
    ml, cl = index.ml, index.cl
    for i in order:  # sequential by definition (each choice constrains the next); constrained samples only
        ranked = np.argsort(D[i], kind="stable")
        nb_ml = ml.indices[ml.indptr[i]:ml.indptr[i + 1]]
        nb_ml = nb_ml[done[nb_ml]]
        nb_cl = cl.indices[cl.indptr[i]:cl.indptr[i + 1]]
        banned = set(labels[nb_cl[done[nb_cl]]].tolist())
        if nb_ml.size:
            need = np.unique(labels[nb_ml])
            if need.size > 1 or int(need[0]) in banned:
                raise Infeasible(i)
            labels[i] = need[0]
        else:
            ok = [q for q in ranked if q not in banned]
            if not ok:
                raise Infeasible(i)
            labels[i] = ok[0]
        done[i] = True
    return labels


def update_centres(X, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Mean of each cluster's samples; an empty cluster keeps its centre."""
    K = centres.shape[0]
    n = labels.size
    M = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(K, n))
    sums = M @ X
    sums = sums.toarray() if sparse.issparse(sums) else np.asarray(sums)
    counts = np.bincount(labels, minlength=K)
    out = centres.copy()
    out[counts > 0] = sums[counts > 0] / counts[counts > 0, None]
    return out


def initial_centres(X, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """``n_clusters`` distinct samples drawn at random."""
    idx = rng.choice(X.shape[0], size=n_clusters, replace=False)
    C = X[idx]
    return np.asarray(C.toarray() if sparse.issparse(C) else C, dtype=np.float64)


def plus_plus_centres(X, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ centres (Arthur & Vassilvitskii 2007, section 2.2) of dense X: the first a uniformly
    drawn sample, each next one drawn with probability proportional to its squared distance to the
    nearest centre so far. Fewer than ``n_clusters`` when X has fewer distinct rows."""
    n = X.shape[0]
    centres = [X[int(rng.integers(n))]]
    nearest = weighted_sq_dists(X, centres[0][None, :])[:, 0]
    for _ in range(1, n_clusters):
        total = float(nearest.sum())
        if total <= 0.0:
            break
        pick = min(int(np.searchsorted(np.cumsum(nearest), rng.random() * total, side="right")), n - 1)
        centres.append(X[pick])
        nearest = np.minimum(nearest, weighted_sq_dists(X, X[pick][None, :])[:, 0])
    return np.array(centres, dtype=np.float64)


#: how the centres of a restart are drawn (the ``start`` of :func:`cop_kmeans`)
STARTS = {"random": initial_centres, "plus_plus": plus_plus_centres}


def _check(X, n_clusters: int):
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"clustering needs a samples x features matrix, got shape {X.shape}")
    if not 1 <= int(n_clusters) <= X.shape[0]:
        raise InputError(f"n_clusters must be in 1..{X.shape[0]} (the number of samples), got {n_clusters}")
    return X


def cop_kmeans(X, n_clusters: int, constraints: Constraints, rng: np.random.Generator, *, n_init: int = 10,
               max_iter: int = 100, start: str = "random") -> np.ndarray:
    """COP-KMeans labels (length n, 0..n_clusters-1) of the best of ``n_init`` feasible
    restarts (lowest within-cluster sum of squares). Every returned labelling satisfies
    all constraints; raises :class:`SupervisionError` when no restart found one. ``start``:
    the restarts' centres, distinct samples at random (Wagstaff et al.) or k-means++
    ("plus_plus", dense X; without constraints this is plain k-means, Lloyd's iterations)."""
    X = _check(X, n_clusters)
    n = X.shape[0]
    if n_init < 1 or max_iter < 1:
        raise InputError(f"cop_kmeans: n_init and max_iter must be >= 1, got {n_init}, {max_iter}")
    index = ConstraintIndex(constraints, n)
    best, best_obj, last_bad = None, np.inf, -1
    for _ in range(int(n_init)):
        C = STARTS[start](X, int(n_clusters), rng)
        order = rng.permutation(index.constrained)
        try:
            labels = None
            for _ in range(int(max_iter)):
                D = weighted_sq_dists(X, C)
                new = cop_assign(D, index, order)
                if labels is not None and np.array_equal(new, labels):
                    break
                labels = new
                C = update_centres(X, labels, C)
        except Infeasible as e:
            last_bad = e.sample
            continue
        obj = float(weighted_sq_dists(X, C)[np.arange(n), labels].sum())
        if obj < best_obj:
            best, best_obj = labels, obj
    if best is None:
        raise SupervisionError(
            f"COP-KMeans found no assignment satisfying the constraints in {n_init} restart(s): "
            f"sample {last_bad} cannot join any of the {n_clusters} clusters without violating one"
        )
    return best


def violations(labels: np.ndarray, constraints: Constraints) -> tuple[int, int]:
    """Numbers of violated must-link and cannot-link constraints."""
    labels = np.asarray(labels)
    ml = int((labels[constraints.ml[:, 0]] != labels[constraints.ml[:, 1]]).sum()) if constraints.n_ml else 0
    cl = int((labels[constraints.cl[:, 0]] == labels[constraints.cl[:, 1]]).sum()) if constraints.n_cl else 0
    return ml, cl


def dispersion_weights(E: np.ndarray, beta: float) -> np.ndarray:
    """Feature weights from dispersions (thesis eq. 4.23 / 4.28), row-wise:
    w_j = 1 / sum_s (E_j / E_s)^(1 / (beta - 1)) over the features with E > 0, i.e.
    w_j proportional to E_j^(1 / (1 - beta)), and w_j = 0 where E_j = 0 (the thesis's
    rule for degenerate features). Each row with any positive dispersion sums to 1.
    Computed in log space (no overflow).

    Note: for beta < 0 this formula (the Lagrangian solution, eq. 4.20-4.23) makes
    w_j grow with E_j (a large w_j then has a small w_j^beta in the distance); the
    thesis's prose ("if beta < 0, a high value [of E_j] leads to a small value of
    w_j") states the opposite. The formula is implemented as written."""
    E = np.atleast_2d(np.asarray(E, dtype=float))
    if beta in (0.0, 1.0):
        raise InputError(f"beta must differ from 0 and 1 (thesis 4.3.1), got {beta}")
    pos = E > 0
    with np.errstate(divide="ignore"):
        logw = np.where(pos, np.log(np.where(pos, E, 1.0)) / (1.0 - beta), -np.inf)
    mx = np.max(logw, axis=1, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    w = np.exp(logw - mx)
    s = w.sum(axis=1, keepdims=True)
    return np.divide(w, s, out=np.zeros_like(w), where=s > 0)


def powered(w: np.ndarray, beta: float) -> np.ndarray:
    """w^beta with 0^beta := 0 (a zero-weight feature drops out of the distance)."""
    w = np.asarray(w, dtype=float)
    out = np.zeros_like(w)
    np.power(w, beta, out=out, where=w > 0)
    return out


def standardize(X) -> np.ndarray:
    """Dense z-scored copy of X (population sd); constant features become 0."""
    X = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
