"""Constrained Laplacian Score kernels shared by ``cls``, ``csfs``, ``enscls`` and
``constraint_score``: the score from an already built graph (:func:`cls_from_graph`,
:func:`cls_denominator`), its per-sample balanced form (:func:`balanced_cls`) and the
must-link / cannot-link partner sums of the label terms (:func:`mean_partner_sums`,
:func:`label_partner_sums`). Vectorized over features: sparse products and group sums, no
loop over features or pairs.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse

from ...errors import MethodError
from ...labels import current_class_name
from . import kernels
from .graph import degree, pairs_matrix, weighted_pair_sums


def _ordered_pair_matrix(pairs: np.ndarray, n: int, row_weight: np.ndarray) -> sparse.csr_matrix:
    """W with W_ij = row_weight_i for both orders of each pair."""
    i = np.r_[pairs[:, 0], pairs[:, 1]]
    j = np.r_[pairs[:, 1], pairs[:, 0]]
    return sparse.csr_matrix((row_weight[i], (i, j)), shape=(n, n))


def _drop_pairs(S: sparse.csr_matrix, constraints) -> sparse.csr_matrix:
    """S without the edges joining cannot-link pairs (from labels: edges between two
    samples labeled differently; O(edges), no pairs built)."""
    if constraints.n_cl == 0:
        return S
    y = getattr(constraints, "labels", None)
    if y is not None:
        S = canonical_csr(S)
        rows, cols, entries = cannot_link_entries(S, y)
        return without_entries(S, entries)
    out = (S - S.multiply(pairs_matrix(constraints.cl, S.shape[0]))).tocsr()
    out.eliminate_zeros()
    return out


def canonical_csr(S) -> sparse.csr_matrix:
    """S as CSR with sorted, unique column indices (a copy only when it is not)."""
    S = sparse.csr_matrix(S)
    if not S.has_canonical_format:
        S = S.copy()
        S.sum_duplicates()
    return S


def cannot_link_entries(S: sparse.csr_matrix, y: np.ndarray):
    """(rows, columns, positions in ``S.data``) of the edges of the canonical CSR ``S`` that join
    two samples labeled differently (``y``, -1 unlabeled)."""
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    entries = np.flatnonzero((y[rows] >= 0) & (y[S.indices] >= 0) & (y[rows] != y[S.indices]))
    return rows[entries], S.indices[entries], entries


def without_entries(S: sparse.csr_matrix, entries: np.ndarray) -> sparse.csr_matrix:
    """The canonical CSR ``S`` without the stored entries at ``entries`` (ascending), the others in
    their order (what a COO round trip gave, without its sort)."""
    if not entries.size:
        return S
    keep = np.ones(S.nnz, dtype=bool)
    keep[entries] = False
    rows = np.searchsorted(S.indptr, entries, side="right") - 1
    indptr = S.indptr - np.r_[0, np.cumsum(np.bincount(rows, minlength=S.shape[0]))]
    return sparse.csr_matrix((S.data[keep], S.indices[keep], indptr), shape=S.shape)


def mean_partner_sums(X, constraints) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(M, C, n_M, n_C): M = sum over samples i with a must-link partner of the mean over
    i's partners j of (f_i - f_j)^2 (every feature), n_M the number of such samples; C and
    n_C the same for cannot-link. From labels in closed form, O(n p): within class c
    M_c = 2 n_c / (n_c - 1) sum_i (f_i - mu_c)^2 and
    C_c = S2_c - 2 S1_c m1 + n_c m2 with m1, m2 the mean of f and f^2 over the labeled
    samples of the other classes (S1_c, S2_c: sums of f and f^2 in class c)."""
    p = X.shape[1]
    y = getattr(constraints, "labels", None)
    if y is not None:
        M, C, n_m, n_c = label_partner_sums(X, y)
        return M[0], C[0], int(n_m[0]), int(n_c[0])
    out = []
    for pairs in (constraints.ml, constraints.cl):
        if not len(pairs):
            out += [np.zeros(p), 0]
            continue
        cnt = np.bincount(pairs.ravel(), minlength=X.shape[0]).astype(float)
        w = 1.0 / cnt[pairs[:, 0]] + 1.0 / cnt[pairs[:, 1]]
        out += [weighted_pair_sums(X, pairs, w[None, :])[0], int((cnt > 0).sum())]
    return out[0], out[2], out[1], out[3]


def label_partner_sums(X, y, groups=None):
    """:func:`mean_partner_sums` from labels ``y`` (-1 unlabeled) for G independent groups of
    samples at once (``groups`` as in :func:`cls_from_graph`; labels only pair within a
    group): (M, C) as G x p arrays and (n_M, n_C) as length-G arrays. O(n p)."""
    n, p = X.shape
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    G = int(g.max()) + 1 if n else 1
    y = np.asarray(y)
    lab = np.flatnonzero(y >= 0)
    if lab.size == 0:
        return np.zeros((G, p)), np.zeros((G, p)), np.zeros(G), np.zeros(G)
    K = int(y[lab].max()) + 1
    code = g[lab] * K + y[lab]
    H = sparse.csr_matrix((np.ones(lab.size), (code, np.arange(lab.size))), shape=(G * K, lab.size))
    XL = X[lab]
    if not sparse.issparse(XL):  # shifted by each group's first labeled row: a feature constant over a
        # group's labeled samples then sums to exactly 0 (M = C = 0, undefined) instead of a round-off
        # residue (C = 7e-15 beside M = 0 on GLIOMA's floor values, which ranked it first in c4)
        _, first, inv = np.unique(g[lab], return_index=True, return_inverse=True)
        XL = np.asarray(XL, dtype=float)
        XL = XL - XL[first][inv]
    S1 = H @ XL
    S2 = H @ (XL.multiply(XL) if sparse.issparse(XL) else XL * XL)
    S1 = (S1.toarray() if sparse.issparse(S1) else np.asarray(S1)).reshape(G, K, p)
    S2 = (S2.toarray() if sparse.issparse(S2) else np.asarray(S2)).reshape(G, K, p)
    nc = np.bincount(code, minlength=G * K).astype(float).reshape(G, K, 1)
    has = nc >= 2
    M = np.where(has, 2.0 * (nc * S2 - S1**2) / np.where(has, nc - 1, 1.0), 0.0).sum(axis=1)
    L = nc.sum(axis=1, keepdims=True)
    other = (nc > 0) & (L - nc > 0)
    no = np.where(other, L - nc, 1.0)
    m1 = (S1.sum(axis=1, keepdims=True) - S1) / no
    m2 = (S2.sum(axis=1, keepdims=True) - S2) / no
    C = np.where(other, S2 - 2.0 * S1 * m1 + nc * m2, 0.0).sum(axis=1)
    n_m = np.where(has, nc, 0.0).sum(axis=(1, 2))
    n_c = np.where(other, nc, 0.0).sum(axis=(1, 2))
    return np.maximum(M, 0.0), np.maximum(C, 0.0), n_m, n_c


def label_share_of(n_constrained: int, n: int, label_weight: float = 10.0) -> float:
    """s = w m / (w m + n): the share of the label terms when each of the m constrained
    samples weighs as ``label_weight`` (w) unconstrained ones among n samples."""
    wm = float(label_weight) * n_constrained
    return wm / (wm + n) if wm > 0 else 0.0


def warn_if_label_free(method: str, constraints, y) -> None:
    """Say so when the labels or constraints give must-link pairs but no cannot-link pair: the
    balanced score then gives its label terms no share (they need both kinds of partner) and
    returns the label-free Laplacian score, which a user who gave labels would not expect."""
    if constraints.n_cl or not constraints.n_ml:
        return
    present = np.unique(np.asarray(y)[np.asarray(y) >= 0])
    why = (f"every labeled sample is in class {current_class_name(present[0])}" if present.size == 1
           else "every constraint is must-link")
    warnings.warn(f"{method}: {why}, so no cannot-link pair exists and the label terms are not used: the scores "
                  "are the label-free Laplacian score; label samples of a second class (or give cannot-link pairs)",
                  UserWarning, stacklevel=3)


def balanced_cls(S, X, constraints, *, label_weight: float = 10.0, label_share: float | None = None,
                 groups=None, cannot_links_removed: bool = False) -> np.ndarray:
    """The "balanced" CLS of :func:`constrained_laplacian_score` from a kNN graph ``S``
    (cannot-link edges are removed here). Memory and time linear in n_labeled.
    ``label_share`` s, default :func:`label_share_of` (``label_weight``). ``groups``: G
    independent problems at once as in :func:`cls_from_graph` (``constraints`` must then
    come from labels; result G x p). ``cannot_links_removed``: ``S`` holds no cannot-link edge already."""
    S = sparse.csr_matrix(S) if cannot_links_removed else _drop_pairs(sparse.csr_matrix(S), constraints)
    n = X.shape[0]
    ind, g, n_groups = _group_indicator(groups, n)
    d = degree(S)
    vol = np.bincount(g, weights=d, minlength=n_groups)[:, None]
    D = ind(d)
    dX2 = _group_sums(D, _squared(X))
    Gq = (dX2 - _cross_sums(S, X, g, n_groups)) / vol  # f^T L f per unit degree
    V = (dX2 - _group_sums(D, X) ** 2 / vol) / vol
    y = getattr(constraints, "labels", None)
    if y is not None:
        M, C, n_m, n_c = label_partner_sums(X, y, groups)
    else:
        if groups is not None:
            raise MethodError("balanced CLS over groups needs constraints from labels")
        m, c, a, b = mean_partner_sums(X, constraints)
        M, C, n_m, n_c = m[None, :], c[None, :], np.array([a], float), np.array([b], float)
    sizes = np.bincount(g, minlength=n_groups)
    if label_share is None:
        s = np.array([label_share_of(int(k), int(sz), label_weight) for k, sz in zip(n_m, sizes, strict=True)])
    else:
        s = np.full(n_groups, float(label_share))
    s = np.where(n_c > 0, s, 0.0)[:, None]  # no cannot-link partner: the Laplacian score
    num = (1.0 - s) * Gq + s * M / np.maximum(2.0 * n_m, 1.0)[:, None]
    den = (1.0 - s) * V + s * C / np.maximum(2.0 * n_c, 1.0)[:, None]
    out = num / den
    return out[0] if groups is None else out



def _squared(X):
    """X * X elementwise; CSR keeps X's index arrays (no copy of them: 1 GB at a million cells)."""
    if sparse.isspmatrix_csr(X) and X.has_canonical_format:
        return sparse.csr_matrix((X.data * X.data, X.indices, X.indptr), shape=X.shape, copy=False)
    return X.multiply(X) if sparse.issparse(X) else X * X


def check_cls_options(knn_edges: str, denominator: str) -> None:
    if knn_edges not in ("all", "unlabeled"):
        raise MethodError(f"cls: knn_edges must be 'all' or 'unlabeled', got {knn_edges!r}")
    if denominator not in ("variance", "cannot_link"):
        raise MethodError(f"cls: denominator must be 'variance' or 'cannot_link', got {denominator!r}")


#: rows of S @ X formed at once by :func:`_cross_sums` (bounds its memory: on sparse counts a
#: row of S @ X is nearly dense; 300,000 cells x 2,000 genes at once took 7 GB)
CROSS_BLOCK_ELEMENTS = 1 << 24


def _cross_sums(S, X, g: np.ndarray, n_groups: int) -> np.ndarray:
    """sum over the rows i of each group of x_i * (S x)_i (every feature): f^T S f per feature,
    in blocks of rows so that S @ X is never held whole (large sparse X: compiled, :mod:`.kernels`)."""
    if kernels.use_kernels(X, S.nnz):
        return kernels.cross_sums(S, X, g, n_groups)
    n, p = X.shape
    step = max(1, CROSS_BLOCK_ELEMENTS // max(p, 1))
    out = np.zeros((n_groups, p))
    for a in range(0, n, step):
        b = min(n, a + step)
        SX = (S if (a, b) == (0, n) else S[a:b]) @ X
        XB = X[a:b]
        if sparse.issparse(SX):
            P = sparse.csr_matrix(SX.multiply(XB))
        else:
            P = np.asarray(SX) * (XB.toarray() if sparse.issparse(XB) else XB)
        gb = g[a:b]
        G = sparse.csr_matrix((np.ones(b - a), (gb, np.arange(b - a))), shape=(n_groups, b - a))
        out += _group_sums(G, P)
    return out


def _group_sums(G: sparse.csr_matrix, M) -> np.ndarray:
    """G @ M as a dense (n_groups x p) array; M dense or sparse."""
    out = G @ M
    return out.toarray() if sparse.issparse(out) else np.asarray(out)


def _group_indicator(groups, n: int):
    """(ind, g, G): ``ind(w)`` is the G x n matrix summing rows of a matrix by group with row
    weights ``w``; one group when ``groups`` is None."""
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1 if n else 0

    def ind(w):
        return sparse.csr_matrix((w, (g, np.arange(n))), shape=(n_groups, n))

    return ind, g, n_groups


def cls_from_graph(S, X, constraints, *, mean: str = "uniform", groups=None,
                   denominator: str = "variance") -> np.ndarray:
    """CLS (EnsCLS paper eq. 1-3, the sum form of :func:`constrained_laplacian_score`)
    from an already built constrained graph ``S`` (e.g. :func:`ssfs.methods._shared.graph.constrained_graph`).

    ``groups`` (int array, one id 0..G-1 per sample) scores G independent problems at
    once: ``S`` must be block diagonal by group and every constraint must join samples
    of one group; the result is then G x p (row g = CLS of every feature on group g
    alone, "uniform"/"degree" means taken within the group). EnsCLS stacks its
    members' subspace matrices this way so thousands of small CLS problems cost one
    sparse product. Without ``groups`` the result is the length-p score vector.
    ``denominator``: "variance" or "cannot_link" (:func:`constrained_laplacian_score`).
    """
    n = X.shape[0]
    ind, g, n_groups = _group_indicator(groups, n)

    X2 = X.multiply(X) if sparse.issparse(X) else X * X
    d = degree(S)
    SX = S @ X
    XSX = SX.multiply(X) if sparse.issparse(SX) else np.asarray(SX) * (X.toarray() if sparse.issparse(X) else X)
    if denominator == "cannot_link":
        # exact edge sums (S symmetric): with ML-only degrees of labeled samples the weights
        # span many orders of magnitude and the expansion d f^2 - f S f cancelled to < 0
        E = sparse.triu(S, 1).tocoo()
        num = 2.0 * _pair_sums(X, np.column_stack([E.row, E.col]).astype(np.int64), E.data, g[E.row], n_groups)
    else:
        num = 2.0 * (_group_sums(ind(d), X2) - _group_sums(ind(np.ones(n)), XSX))
    free = constraints.unconstrained(n)
    if denominator == "cannot_link" and len(constraints.cl):  # per group: only where CL pairs exist
        free[np.isin(g, g[np.asarray(constraints.cl)[:, 0]])] = False
    # the CL-only denominator sums terms whose D_ii can differ by many orders of magnitude
    # (ML-only degrees under a small bandwidth): summed pair by pair, not by the expansion,
    # which cancelled to negative values on leukemia (min-max, bandwidth 0.1)
    den = cls_denominator(X, d, free, constraints.cl, mean=mean, groups=groups,
                          exact_pairs=denominator == "cannot_link")
    out = num / den
    return out[0] if groups is None else out


def cls_denominator(X, d: np.ndarray, free: np.ndarray, cl: np.ndarray, *, mean: str = "uniform",
                    groups=None, exact_pairs: bool = False) -> np.ndarray:
    """Denominator of CLS (EnsCLS eq. 1 with alpha of eq. 3) and CSFS (thesis eq. 3.18, 3.21):
    sum over ``free`` samples of (f_i - mu)^2 D_ii plus, for every ordered cannot-link pair
    (i, j) in ``cl``, (f_i - f_j)^2 D_ii. ``mean``: "uniform" (mu = 1/n sum f) or "degree"
    (D-weighted). ``groups`` as in :func:`cls_from_graph` (result G x p, else length p).
    ``exact_pairs``: the CL part as a sum of (d_i + d_j)(f_i - f_j)^2 over blocks of pairs
    instead of the expansion sum d f^2 - 2 f W f (no cancellation; more memory per block)."""
    n = X.shape[0]
    ind, g, n_groups = _group_indicator(groups, n)

    X2 = X.multiply(X) if sparse.issparse(X) else X * X
    wu = np.where(free, d, 0.0)
    if mean == "uniform":
        sizes = np.bincount(g, minlength=n_groups).astype(float)
        mu = _group_sums(ind(np.ones(n)), X) / sizes[:, None]
    elif mean == "degree":
        mu = _group_sums(ind(d), X) / np.bincount(g, weights=d, minlength=n_groups)[:, None]
    else:
        raise MethodError(f"mean must be 'uniform' or 'degree', got {mean!r}")
    den = (_group_sums(ind(wu), X2) - 2 * mu * _group_sums(ind(wu), X)
           + mu**2 * np.bincount(g, weights=wu, minlength=n_groups)[:, None])
    if len(cl) and exact_pairs:
        cl = np.asarray(cl, dtype=np.int64)
        den = den + _pair_sums(X, cl, d[cl[:, 0]] + d[cl[:, 1]], g[cl[:, 0]], n_groups)
    elif len(cl):
        W = _ordered_pair_matrix(np.asarray(cl), n, d)
        rows = np.asarray(W.sum(axis=1)).ravel()
        cols = np.asarray(W.sum(axis=0)).ravel()
        WX = W @ X
        XWX = WX.multiply(X) if sparse.issparse(WX) else np.asarray(WX) * (X.toarray() if sparse.issparse(X) else X)
        den = den + _group_sums(ind(rows + cols), X2) - 2.0 * _group_sums(ind(np.ones(n)), XWX)
    return den[0] if groups is None else den


def _pair_sums(X, pairs: np.ndarray, w: np.ndarray, pair_group: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups x p) sums over pairs (i, j) of w * (f_i - f_j)^2, by group of the pair."""
    G = sparse.csr_matrix((w, (pair_group, np.arange(len(pairs)))), shape=(n_groups, len(pairs)))
    return weighted_pair_sums(X, pairs, G)
