"""CSFSR: CSFS followed by redundancy elimination on a maximum spanning tree
(thesis 3.5, eq. 3.29-3.31, Algorithms 11-12). Returns a reduced ordered subset."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import minimum_spanning_tree

from ..errors import MethodError
from ..params import PosFloat, PosInt, Range
from ..ranking import order_from_scores
from ..registry import SelectionResult, register
from .csfs import csfs_score


def gaussian_mutual_information(Xh) -> np.ndarray:
    """h x h matrix I = -1/2 log(1 - rho^2) (eq. 3.31) from Pearson correlations (eq. 3.29);
    0 where a feature is constant (rho undefined), large but finite for |rho| = 1."""
    Xh = Xh.toarray() if sparse.issparse(Xh) else np.asarray(Xh, dtype=np.float64)
    Xc = Xh - Xh.mean(axis=0)
    norm = np.sqrt(np.einsum("ij,ij->j", Xc, Xc))
    ok = norm > 0
    Z = np.where(ok, Xc / np.where(ok, norm, 1.0), 0.0)
    rho2 = np.clip((Z.T @ Z) ** 2, 0.0, 1.0 - 1e-15)
    I = -0.5 * np.log1p(-rho2)
    np.fill_diagonal(I, 0.0)
    return I


def redundancy_elimination(I: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 12 on features 0..h-1 given in relevance order with mutual information I.

    Maximum spanning tree (Algorithm 11) via scipy's minimum spanning tree on
    (max I + 1) - I (positive weights, so zero-information edges stay edges); then,
    in relevance order, each feature not yet removed is selected and its tree
    neighbours are removed. Returns (selected positions, tree edges (h-1) x 2).
    """
    h = I.shape[0]
    if h == 1:
        return np.zeros(1, dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
    W = (I.max() + 1.0) - I
    np.fill_diagonal(W, 0.0)
    T = minimum_spanning_tree(sparse.csr_matrix(np.triu(W))).tocoo()
    edges = np.column_stack([T.row, T.col]).astype(np.int64)
    adj = sparse.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(h, h))
    adj = (adj + adj.T).tocsr()
    removed = np.zeros(h, dtype=bool)
    selected = []
    for r in range(h):  # h <= 200 tree vertices, not features of the data
        if removed[r]:
            continue
        selected.append(r)
        nb = adj.indices[adj.indptr[r]:adj.indptr[r + 1]]
        removed[nb] = True
        removed[r] = True
    return np.asarray(selected, dtype=np.int64), edges


@register("csfsr", higher_is_better=False, kind="subset")
def csfsr_select(X, y, constraints, rng, *, h: PosInt = 200, neighbourhood: Literal["adaptive", "knn"] = "adaptive", k: PosInt = 10,
                 bandwidth: PosFloat | Literal["auto", "mean", "median"] = "auto", select_constraints: bool = True, som: bool = False,
                 max_clusters: Annotated[int, Range(2)] | None = None, mean: Literal["uniform", "degree"] = "uniform"):
    """CSFSR (Algorithm 12): the top ``h`` features by the CSFS score (never more than
    n, thesis 3.8.5), the maximum spanning tree of their Gaussian mutual information
    (eq. 3.31), and the relevant non-redundant subset it leaves. ``scores`` are the CSFS
    scores of all features; ``selected`` the reduced subset, best first. Other
    parameters are passed to CSFS."""
    res = csfs_score(X, y, constraints, rng, neighbourhood=neighbourhood, k=k, bandwidth=bandwidth,
                     select_constraints=select_constraints, som=som, max_clusters=max_clusters, mean=mean)
    n, p = X.shape
    h_eff = int(min(h, n, p))
    if h_eff < 1:
        raise MethodError(f"csfsr: h must be >= 1, got {h}")
    top = order_from_scores(res.scores, higher_is_better=False)[:h_eff]
    I = gaussian_mutual_information(X[:, top])
    sel, edges = redundancy_elimination(I)
    extra = dict(res.extra, h=h_eff, tree_edges=top[edges])
    return SelectionResult(scores=res.scores, selected=top[sel], extra=extra)
