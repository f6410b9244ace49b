"""CSFS: constrained selection-based feature selection (thesis 3.4), lower is better.

Three parts, each usable alone:

* :func:`coherent_constraints` - constraint selection by coherence (eq. 3.15-3.17,
  Algorithm 9) with the projected-overlap test of Davidson, Wagstaff & Basu (2006);
* :func:`adaptive_neighbourhood` - neighbours = members of the same cluster of an
  agglomerative (Ward) clustering cut where the Davies-Bouldin index is best (3.4.4);
* :func:`csfs_score` - the score phi (eq. 3.18-3.28).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from scipy import sparse

from ..constraints import Constraints
from ..errors import InputError, MethodError
from ..params import Bandwidth, NonNegFloat, PosInt, Range
from ..registry import SelectionResult, register
from ._shared.cls import balanced_cls, cls_denominator, warn_if_label_free
from ._shared.graph import (
    as_float_matrix,
    degree,
    heat_kernel_graph,
    laplacian_quad,
    pair_weights,
    pairs_matrix,
    resolve_bandwidth,
    sparse_if_mostly_zero,
)
from ._shared.invariance import with_adaptive_bandwidth
from ._shared.representation import graph_space
from ._shared.som import compress_unlabeled

#: the adaptive neighbourhood needs all pairwise distances: refused above this many samples
ADAPTIVE_MAX_SAMPLES = 5000
#: memory budget for one block of constraint-pair overlaps (bytes)
_BLOCK_BYTES = 64 * 1024**2


# ----------------------------------------------------------------- coherence
def _overlap(G, a0, a1, b0, b1, tol: float) -> np.ndarray:
    """Length of the overlap between segment (a0, a1) and the projection of segment
    (b0, b1) on its line, for index arrays a* (rows) x b* (columns); G is the Gram matrix
    of the samples. Zero-length segments have no direction: overlap 0."""
    la2 = G[a1, a1] - 2 * G[a0, a1] + G[a0, a0]  # |a|^2, per row
    la = np.sqrt(np.maximum(la2, 0.0))
    safe = np.where(la > 0, la, 1.0)

    def proj(e):  # (x_e - x_a0) . (x_a1 - x_a0) / |a|
        return (G[np.ix_(a1, e)] - G[np.ix_(a0, e)] - (G[a0, a1] - G[a0, a0])[:, None]) / safe[:, None]

    t0, t1 = proj(b0), proj(b1)
    lo = np.maximum(np.minimum(t0, t1), 0.0)
    hi = np.minimum(np.maximum(t0, t1), la[:, None])
    over = hi - lo
    # rounding: shared endpoints project to ~0, not exactly 0
    return np.where((la[:, None] > 0) & (over > tol * la[:, None]), over, 0.0)


def constraint_coherence(X, constraints: Constraints, tol: float = 1e-9):
    """Coherence of every constraint and of the set (eq. 3.15-3.17).

    For must-link p and cannot-link q, over_{q p} is the overlap of p projected on q's
    line with q (and vice versa). Returns ``(coh_ml, coh_cl, coh_all)``: for each ML
    pair the fraction of CL pairs with over_{q p} = 0 (eq. 3.16), for each CL pair the
    fraction of ML pairs with over_{p q} = 0 (eq. 3.17), and the fraction of (ML, CL)
    pairs with both overlaps zero (eq. 3.15). Euclidean metric in the full feature space.
    """
    ml, cl = constraints.ml, constraints.cl
    if not len(ml) or not len(cl):
        return np.ones(len(ml)), np.ones(len(cl)), 1.0
    idx = constraints.samples()
    pos = np.full(int(idx.max()) + 1, -1)
    pos[idx] = np.arange(idx.size)
    Xs = as_float_matrix(X)[idx]
    G = Xs @ Xs.T
    G = G.toarray() if sparse.issparse(G) else np.asarray(G)
    m0, m1 = pos[ml[:, 0]], pos[ml[:, 1]]
    c0, c1 = pos[cl[:, 0]], pos[cl[:, 1]]
    zero_ml = np.zeros(len(ml))  # count of CL q with over_{q p} = 0, per ML p
    zero_cl = np.zeros(len(cl))
    both = 0.0
    step = max(1, _BLOCK_BYTES // (8 * 6 * len(cl)))
    for s in range(0, len(ml), step):
        sl = slice(s, s + step)
        over_ml_on_cl = _overlap(G, c0, c1, m0[sl], m1[sl], tol).T  # rows ML, cols CL: over_{q p}
        over_cl_on_ml = _overlap(G, m0[sl], m1[sl], c0, c1, tol)  # rows ML, cols CL: over_{p q}
        z1, z2 = over_ml_on_cl == 0, over_cl_on_ml == 0
        zero_ml[sl] = z1.sum(axis=1)
        zero_cl += z2.sum(axis=0)
        both += float((z1 & z2).sum())
    return zero_ml / len(cl), zero_cl / len(ml), both / (len(ml) * len(cl))


def coherent_constraints(X, constraints: Constraints, tol: float = 1e-9) -> tuple[Constraints, float]:
    """Algorithm 9: keep every constraint whose coherence (eq. 3.16/3.17) is at least the
    coherence of the whole set (eq. 3.15). Sets lacking ML or CL pairs are kept whole
    (coherence is only defined between an ML and a CL constraint)."""
    coh_ml, coh_cl, coh = constraint_coherence(X, constraints, tol)
    return Constraints(constraints.ml[coh_ml >= coh], constraints.cl[coh_cl >= coh]), coh


# ---------------------------------------------------- adaptive neighbourhood
def _gram(X) -> np.ndarray:
    """Dense Gram matrix X X^T (CSR product for mostly-zero data)."""
    Xs = sparse_if_mostly_zero(as_float_matrix(X))
    G = Xs @ Xs.T
    return G.toarray() if sparse.issparse(G) else np.asarray(G)


def _sq_dists_from_gram(G: np.ndarray) -> np.ndarray:
    g = np.diag(G)
    D = np.maximum(g[:, None] - 2.0 * G + g[None, :], 0.0)
    np.fill_diagonal(D, 0.0)
    return D


def davies_bouldin_from_gram(G: np.ndarray, labels: np.ndarray) -> float:
    """Davies-Bouldin index (as sklearn.metrics.davies_bouldin_score: Euclidean distances,
    mean distance to the centroid as scatter) computed from the Gram matrix only, so a
    sweep over many cuts costs O(n^2) per cut instead of a pass over the features."""
    _, lab = np.unique(labels, return_inverse=True)
    k, n = lab.max() + 1, lab.size
    H = sparse.csr_matrix((np.ones(n), (lab, np.arange(n))), shape=(k, n))
    size = np.asarray(H.sum(axis=1)).ravel()
    HG = np.asarray(H @ G)  # k x n: sum_{m in a} <x_m, x_i>
    CC = np.asarray(H @ HG.T) / np.outer(size, size)  # <c_a, c_b>
    own = HG[lab, np.arange(n)] / size[lab]  # <x_i, c_{l(i)}>
    d_own = np.sqrt(np.maximum(np.diag(G) - 2 * own + np.diag(CC)[lab], 0.0))
    intra = np.bincount(lab, weights=d_own, minlength=k) / size
    cd = np.sqrt(np.maximum(np.diag(CC)[:, None] - 2 * CC + np.diag(CC)[None, :], 0.0))
    atol = 1e-8 * np.sqrt(max(float(np.diag(G).max()), 0.0))  # sklearn's 1e-8, in the unit of X (issue 30)
    if np.allclose(intra, 0, atol=atol) or np.allclose(cd, 0, atol=atol):
        return 0.0
    cd[cd == 0] = np.inf
    comb = (intra[:, None] + intra[None, :]) / cd
    np.fill_diagonal(comb, -np.inf)
    return float(np.mean(comb.max(axis=1)))


def _adaptive(X, max_clusters):
    n = X.shape[0]
    if n > ADAPTIVE_MAX_SAMPLES:
        raise MethodError(
            f"csfs: the adaptive neighbourhood clusters all {n} samples (limit {ADAPTIVE_MAX_SAMPLES}); "
            "use som: true (compress the unlabeled samples) or neighbourhood: knn"
        )
    G = _gram(X)
    D2 = _sq_dists_from_gram(G)
    if n < 3:
        return np.zeros(n, dtype=np.int64), D2
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    Z = linkage(squareform(np.sqrt(D2), checks=False), method="ward")
    hi = int(np.floor(np.sqrt(n))) if max_clusters is None else int(max_clusters)
    hi = max(2, min(hi, n - 1))
    best, best_db = None, np.inf
    for c in range(2, hi + 1):  # loop over candidate cuts, not features
        lab = fcluster(Z, c, criterion="maxclust")
        if np.unique(lab).size < 2:
            continue
        db = davies_bouldin_from_gram(G, lab)
        if db < best_db - 1e-12:
            best, best_db = lab, db
    labels = best if best is not None else np.zeros(n, dtype=np.int64)
    return np.unique(labels, return_inverse=True)[1].astype(np.int64), D2


def adaptive_neighbourhood(X, *, max_clusters: int | None = None) -> np.ndarray:
    """Cluster labels of an agglomerative Ward clustering cut at the number of clusters
    (2 .. ``max_clusters``, default floor(sqrt(n))) with the lowest Davies-Bouldin index
    (thesis 3.4.4 and 3.7). Ward linkage from scipy on BLAS-computed distances (the tree
    sklearn's AgglomerativeClustering builds with scipy too); the Davies-Bouldin index
    from the Gram matrix (equal to sklearn's davies_bouldin_score, tested; PCMAC sweep
    over 43 cuts: 0.3 s instead of 14 s)."""
    return _adaptive(X, max_clusters)[0]


def cluster_graph(X, labels: np.ndarray, bandwidth="auto", sq_dists=None) -> tuple[sparse.csr_matrix, float]:
    """Heat-kernel graph whose edges join every two members of the same cluster
    (adaptive k: each sample's neighbours are its cluster). ``sq_dists``: the n x n
    squared distances if already computed. Returns (S, t)."""
    n = X.shape[0]
    D2 = _sq_dists_from_gram(_gram(X)) if sq_dists is None else sq_dists
    same = labels[:, None] == labels[None, :]
    rows, cols = np.nonzero(np.triu(same, 1))
    if not rows.size:
        return sparse.csr_matrix((n, n)), 1.0
    d2 = D2[rows, cols]
    t = resolve_bandwidth(d2, bandwidth)
    w = np.exp(-d2 / t)
    S = sparse.csr_matrix((np.r_[w, w], (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n))
    return S, t


# ---------------------------------------------------------------- the score
def csfs_graph(X, S: sparse.csr_matrix, t: float, constraints: Constraints) -> sparse.csr_matrix:
    """S + N of eq. 3.20 / 3.23: N = -w on neighbouring ML pairs (their weight cancels),
    w^2 on non-neighbouring ML pairs and on neighbouring CL pairs, 0 otherwise."""
    n = X.shape[0]
    parts = []
    for pairs, kind in ((constraints.ml, "ml"), (constraints.cl, "cl")):
        if not len(pairs):
            continue
        w = pair_weights(X, pairs, t)
        s_ij = np.asarray(S[pairs[:, 0], pairs[:, 1]]).ravel()
        nb = s_ij > 0
        if kind == "ml":
            val = np.where(nb, -s_ij, w**2)  # -s_ij: cancels the edge exactly
        else:
            val = np.where(nb, w**2, 0.0)
        parts.append(pairs_matrix(pairs, n, val))
    W = S.copy()
    for P in parts:
        W = W + P
    W = W.tocsr()
    W.eliminate_zeros()
    return W


def csfs_denominator(X, d: np.ndarray, cl: np.ndarray, mean: str = "uniform") -> np.ndarray:
    """sum_i (f_i - alpha_i)^2 D_ii of eq. 3.18 with alpha of eq. 3.21: each ordered
    cannot-link pair (i, j) adds (f_i - f_j)^2 D_ii; each sample in no cannot-link pair
    adds (f_i - mu)^2 D_ii (mu: plain mean, thesis text under eq. 3.21, or "degree")."""
    free = np.ones(X.shape[0], dtype=bool)
    if len(cl):
        free[np.unique(cl)] = False
    return cls_denominator(X, d, free, cl, mean=mean)


@register("csfs", higher_is_better=False, invariances=with_adaptive_bandwidth(), description=(
    "CSFS score phi (thesis eq. 3.18-3.28). Default differs from the thesis: label terms per sample as cls "
    "and no coherence selection (weights=balanced; the thesis's all-pairs terms and Algorithm 9, weights=literal, "
    "degrade with many labels)"))
def csfs_score(X, y, constraints, rng, *, neighbourhood: Literal["adaptive", "knn"] = "adaptive", k: PosInt = 10,
               bandwidth: Bandwidth = "auto", select_constraints: bool | None = None,
               som: bool = False, max_clusters: Annotated[int, Range(2)] | None = None,
               mean: Literal["uniform", "degree"] = "uniform", space: Literal["auto", "raw", "pca"] = "auto",
               n_pcs: PosInt = 50, embedding: Any = None, weights: Literal["balanced", "literal"] = "balanced",
               label_weight: NonNegFloat = 10.0):
    """CSFS score phi (thesis eq. 3.18-3.28, Algorithm 10), lower is better.

    1. coherent constraint subset (Algorithm 9) if ``select_constraints`` (default: with the
       thesis's ``weights="literal"`` only; it keeps 278 of the 4,950 label pairs at 20 labels per
       type on the planted simulation, and the balanced score then falls as labels are added);
    2. with ``som``, the samples that are neither labeled nor constrained are replaced
       by SOM prototypes (thesis 3.3.2, :func:`ssfs.methods._shared.som.som_compress`);
    3. neighbours: same cluster of the Davies-Bouldin-cut Ward clustering
       (``neighbourhood="adaptive"``, thesis 3.4.4) or the k nearest neighbours
       (``"knn"``), heat-kernel weights w (eq. 3.19);
    4. phi = sum_ij (f_i - f_j)^2 (S + N)_ij / sum_i (f_i - alpha_i)^2 D_ii with N of
       eq. 3.20 taken literally (ML neighbours: S + N = 0; ML non-neighbours: w^2; CL
       neighbours: w + w^2) and D the degree of S (``weights="literal"``, the thesis);
       ``weights="balanced"`` (default, as ``cls``'s: docs/semi_supervised.md) scores the
       neighbourhood graph S with the label terms per constrained sample, the labels'
       share set by ``label_weight`` (:func:`ssfs.methods._shared.cls.balanced_cls`). The
       literal all-pairs terms grow as n_labeled^2 and the score degrades as labels are
       added (planted simulation: 0.63 -> 0.34 of the markers from 10 to 20 labels per type).

    ``space``, ``n_pcs``, ``embedding``: the space of steps 1 and 3 (coherence, clustering or
    kNN, heat-kernel weights; "auto": PCA for single-cell-like input,
    :mod:`ssfs.methods._shared.representation`); the score itself is on the features.

    ``extra``: ``n_constraints_kept`` (and ``n_constraints_given``, ``coherence``,
    ``n_clusters`` for the adaptive neighbourhood).
    """
    if select_constraints is None:
        select_constraints = weights == "literal"
    model = csfs_model(X, y, constraints, rng, neighbourhood=neighbourhood, k=k, bandwidth=bandwidth,
                       select_constraints=select_constraints, som=som, max_clusters=max_clusters, mean=mean,
                       space=space, n_pcs=n_pcs, embedding=embedding, weights=weights,
                       label_weight=label_weight)
    if model.label_weight is not None:
        warn_if_label_free("csfs", model.constraints, y)
    return SelectionResult(scores=model.phi(model.X), extra=model.extra)


class CsfsModel:
    """The graph of a CSFS run (scored samples ``X``, S + N, degrees, cannot-link pairs), so
    that other columns over the same samples (CSFSR's permuted copies) get the same phi."""

    def __init__(self, X, W, d, constraints, mean, extra, label_weight=None):
        self.X, self.W, self.d, self.constraints, self.mean, self.extra = X, W, d, constraints, mean, extra
        self.label_weight = label_weight  # None: the literal phi; else the balanced reading

    def phi(self, F) -> np.ndarray:
        """phi (eq. 3.18) of every column of F (rows = the scored samples)."""
        if self.label_weight is not None:
            return balanced_cls(self.W, F, self.constraints, label_weight=self.label_weight)
        return laplacian_quad(self.W, F) / csfs_denominator(F, self.d, self.constraints.cl, self.mean)


def csfs_model(X, y, constraints, rng, *, neighbourhood: str = "adaptive", k: int = 10, bandwidth="auto",
               select_constraints: bool = True, som: bool = False, max_clusters: int | None = None,
               mean: str = "uniform", space: str = "auto", n_pcs: int = 50, embedding=None,
               weights: str = "literal", label_weight: float = 10.0) -> CsfsModel:
    """Steps 1-3 of :func:`csfs_score` (parameters as there; ``weights`` defaults to the
    thesis's literal reading, which CSFSR keeps)."""
    if weights not in ("balanced", "literal"):
        raise MethodError(f"csfs: weights must be 'balanced' or 'literal', got {weights!r}")
    if neighbourhood not in ("adaptive", "knn"):
        raise MethodError(f"csfs: neighbourhood must be 'adaptive' or 'knn', got {neighbourhood!r}")
    given = len(constraints)
    coh = None
    if som and embedding is not None:
        raise MethodError("csfs: som and an embedding cannot be combined")
    Z = None if som else graph_space(X, space, n_pcs, embedding)
    if select_constraints:
        constraints, coh = coherent_constraints(X if Z is None else Z, constraints)
    extra = {"n_constraints_given": given, "n_constraints_kept": len(constraints), "coherence": coh}
    if som:
        keep = y >= 0
        keep[constraints.samples()] = True
        X, index = compress_unlabeled(X, keep, rng)
        constraints = Constraints(index[constraints.ml], index[constraints.cl]) if len(constraints) else constraints
        extra["n_samples_scored"] = X.shape[0]
        Z = graph_space(X, space, n_pcs)
    X = as_float_matrix(X)
    Z = as_float_matrix(Z)
    if neighbourhood == "adaptive":
        labels, D2 = _adaptive(Z, max_clusters)
        S, t = cluster_graph(Z, labels, bandwidth, sq_dists=D2)
        extra["n_clusters"] = int(np.unique(labels).size)
    else:
        S, t = heat_kernel_graph(Z, k=k, bandwidth=bandwidth)
    d = degree(S)
    if not d.any():
        raise InputError("csfs: the neighbourhood graph has no edges (every sample is alone in its cluster)")
    if weights == "balanced":
        return CsfsModel(X, S, d, constraints, mean, extra, label_weight=float(label_weight))
    return CsfsModel(X, csfs_graph(Z, S, t, constraints), d, constraints, mean, extra)
