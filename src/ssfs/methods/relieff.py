"""ReliefF (Kononenko 1994; Robnik-Sikonja & Kononenko 2003), vectorized.

For every instance i (all labeled samples by default) the k nearest hits
(same class) and the k nearest misses of every other class are found with the
Manhattan distance over range-normalised features; then

    W_f = 1/m sum_i [ -sum_h w_ih diff_f(i,h) + sum_{c != y_i} pi_c(i) sum_j w_ij diff_f(i,j) ]

with diff_f(a,b) = |x_af - x_bf| / (max_f - min_f), neighbour weights w = 1/k
(``weighting="equal"``) or CORElearn's exponential rank weights
exp(-(r/sigma)^2) normalised within each class (``weighting="exprank"``,
"ReliefFexpRank", used by the EFSIS code with k = 70, sigma = 20), and miss-class
weights pi_c = P(c) / (1 - P(y_i)) (Kononenko's class priors, ``miss_weights="prior"``).

Two-class data: identical to scikit-rebate's ReliefF (same k, all samples as
instances, features with more than ``discrete_threshold`` distinct values
continuous). Multi-class: scikit-rebate does not use the priors; it weights
miss class c by (K - 1) (n_c / n_miss)^2 where n_c is the number of class-c
misses among the neighbours (``miss_weights="neighbourhood"`` reproduces it);
with at least k samples in every class that is 1/(K - 1) per class instead of
the prior ratio.

Options for fidelity to the peers: ``discrete_threshold`` (scikit-rebate's
categorical_threshold: features with at most that many distinct values are
compared by equality; with mixed data the continuous diff becomes 1 above the
feature's standard deviation and discrete mismatches are scaled by p/|discrete|
in the distance, as scikit-rebate does), ``ramp=(eq, diff)`` (CORElearn's ramp
function: diff 0 below eq x range, 1 above diff x range; CORElearn defaults
0.04, 0.1) and ``instances`` ("all", "sqrt", "log" or a number: random instances
drawn with the method's rng; EFSIS used ReliefIterations = -2, i.e. sqrt(n)).
Distances equal up to round-off (2^-40 of the largest) tie, and ties are broken by sample
index (so the sample order can decide neighbours on data with exact ties: ReliefF does not
promise invariance to it, docs/invariances.md). An
exact copy of a feature gets the feature's weight to the last bit (computed once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.spatial.distance import pdist, squareform

from .._threads import limit_threads
from ..errors import InputError
from ..params import Fraction, NonNegInt, PosFloat, PosInt
from ..registry import SelectionResult, register
from ._labeled import labeled, resample_counts
from ._shared.invariance import EVERY, distinct_columns

#: elements of a pair x feature work block (bounds temporary memory to ~32 MB)
BLOCK_ELEMENTS = 1 << 22
#: elements of a pair x feature block of the dense diff sums, sized to stay in the L2 cache
#: (Isolet, 331k pairs x 617 features: 0.30 s for 2^16-2^18, 2.7 s for 2^22 elements per block)
CACHE_ELEMENTS = 1 << 17
#: widest feature block of the dense diff sums
FEATURE_BLOCK = 4096


# ----------------------------------------------------------------- feature description
@dataclass
class DiffSpec:
    """How the per-feature difference diff_f(a, b) is computed from |x_af - x_bf|."""

    inv_range: np.ndarray  # 1/(max - min), 0 for constant features
    discrete: np.ndarray  # bool mask
    std_thr: np.ndarray | None  # scikit-rebate mixed-data ramp: 1 when |d| > sd
    ramp: tuple | None  # CORElearn ramp (eq, diff) as fractions of the range

    @property
    def linear(self) -> bool:
        return self.std_thr is None and self.ramp is None and not self.discrete.any()

    def diff(self, A: np.ndarray, cols) -> np.ndarray:
        """diff values of absolute differences ``A`` whose features are ``cols`` (an index
        array or slice broadcasting against ``A``: a dense pairs x features block, or the
        stored values of a sparse matrix with their column indices)."""
        out = A * self.inv_range[cols]
        if self.ramp is not None:
            eq, df = self.ramp
            out = np.clip((out - eq) / (df - eq), 0.0, 1.0) if df > eq else (out > eq).astype(float)
        if self.std_thr is not None:
            out = np.where(self.std_thr[cols] < A, 1.0, out)
        dm = self.discrete[cols]
        if dm.any():
            disc = np.broadcast_to(dm, out.shape)
            out[disc] = A[disc] > 0
        return out


def _column_range(X):
    if sparse.issparse(X):
        mx = X.max(axis=0).toarray().ravel()
        mn = X.min(axis=0).toarray().ravel()
    else:
        mx, mn = X.max(axis=0), X.min(axis=0)
    return mx - mn


def _n_distinct(X) -> np.ndarray:
    if sparse.issparse(X):
        C = sparse.csc_matrix(X)
        C.sum_duplicates()
        col = np.repeat(np.arange(C.shape[1]), np.diff(C.indptr))
        nz = C.data != 0
        col, val = col[nz], C.data[nz]
        o = np.lexsort((val, col))
        col, val = col[o], val[o]
        new = np.ones(col.size, dtype=bool)
        new[1:] = (col[1:] != col[:-1]) | (val[1:] != val[:-1])
        cnt = np.bincount(col[new], minlength=C.shape[1])
        return cnt + (np.diff(C.indptr) < C.shape[0])
    S = np.sort(X, axis=0)
    return 1 + (np.diff(S, axis=0) != 0).sum(axis=0)


def diff_spec(X, discrete_threshold: int = 0, ramp=None) -> DiffSpec:
    rng_ = _column_range(X)
    inv = np.divide(1.0, rng_, out=np.zeros_like(rng_, dtype=float), where=rng_ > 0)
    p = X.shape[1]
    disc = _n_distinct(X) <= discrete_threshold if discrete_threshold > 0 else np.zeros(p, dtype=bool)
    std_thr = None
    if disc.any() and not disc.all():  # scikit-rebate's mixed-data rule
        if sparse.issparse(X):
            m = np.asarray(X.mean(axis=0)).ravel()
            std = np.sqrt(np.maximum(np.asarray(X.multiply(X).mean(axis=0)).ravel() - m * m, 0))
        else:
            std = X.std(axis=0)
        std_thr = np.where(disc, np.inf, std)
    if ramp is not None:
        ramp = tuple(float(v) for v in ramp)
        if len(ramp) != 2 or not 0 <= ramp[0] <= ramp[1] <= 1:
            raise InputError(f"relieff: ramp must be (eq, diff) with 0 <= eq <= diff <= 1, got {ramp}")
    return DiffSpec(inv, disc, std_thr, ramp)


# ----------------------------------------------------------------- distances
def _pair_blocks(n_pairs: int, p: int):
    step = max(1, BLOCK_ELEMENTS // max(p, 1))
    for a in range(0, n_pairs, step):
        yield slice(a, min(a + step, n_pairs))


def pair_diff_sums(X, I, J, spec: DiffSpec, w=None) -> np.ndarray:
    """w-weighted sum over pairs (I, J) of diff_f per feature (length p) or, with
    ``w=None``, the per-pair total sum_f diff_f (length len(I))."""
    I = np.asarray(I, dtype=np.int64)
    J = np.asarray(J, dtype=np.int64)
    p = X.shape[1]
    if sparse.issparse(X):
        out = np.zeros(p) if w is not None else np.empty(I.size)
        for sl in _pair_blocks(I.size, max(1, X.nnz // max(X.shape[0], 1)) * 8):
            Dm = (X[I[sl]] - X[J[sl]]).tocsr()
            Dm.data = np.abs(Dm.data)
            if not spec.linear:
                Dm.data = _apply_sparse(Dm, spec)
            else:
                Dm.data *= spec.inv_range[Dm.indices]
            if w is None:
                out[sl] = np.asarray(Dm.sum(axis=1)).ravel()
            else:
                out += Dm.T @ w[sl]
        return out
    X = np.ascontiguousarray(X, dtype=np.float64)  # row gathers from an F-ordered X are ~2x slower
    w = None if w is None else np.asarray(w, dtype=np.float64)
    out = np.zeros(p) if w is not None else np.zeros(I.size)
    with _one_blas_thread():  # small products: threads only add overhead (and thread-count rounding)
        for cols in (np.flatnonzero(~spec.discrete), np.flatnonzero(spec.discrete)):
            for a in range(0, cols.size, FEATURE_BLOCK):
                fc = cols[a:a + FEATURE_BLOCK]
                Xs = X if fc.size == p else X[:, fc]  # fancy column index: a C-ordered copy
                got = _dense_block_sums(Xs, I, J, spec, fc, w)
                if w is None:
                    out += got
                else:
                    out[fc] = got
    return out


def _one_blas_thread():
    return limit_threads(1, user_api="blas")


def _dense_block_sums(Xs, I, J, spec: DiffSpec, fc, w):
    """pair_diff_sums for the features ``fc`` (all continuous or all discrete), columns of the
    C-ordered Xs: blocks of pairs sized to the cache, one fused rule per kind of feature
    (no np.where / masked assignment, which cost 3-6 ns per element against 0.2-0.3 for
    arithmetic ufuncs)."""
    q = Xs.shape[1]
    step = max(8, CACHE_ELEMENTS // q)
    inv = spec.inv_range[fc]
    if spec.discrete[fc[0]]:
        kind = "discrete"
    elif spec.ramp is not None:
        kind = "general"
    elif spec.std_thr is not None:
        kind = "threshold"
        thr = spec.std_thr[fc]
        lift = 1.0 - thr * inv  # diff = min(|d|, sd)/range + [|d| > sd](1 - sd/range)
    else:
        kind = "linear"
    weighted = w is not None
    s1 = np.zeros(q) if weighted else np.zeros(I.size)
    s2 = np.zeros(q) if weighted and kind == "threshold" else None
    M = np.empty((step, q))
    for a in range(0, I.size, step):
        sl = slice(a, min(a + step, I.size))
        L = sl.stop - sl.start
        if kind == "discrete":
            D = np.not_equal(Xs[I[sl]], Xs[J[sl]], out=M[:L])
            if weighted:
                s1 += w[sl] @ D
            else:
                s1[sl] = D.sum(axis=1)
            continue
        A = Xs[I[sl]]
        A -= Xs[J[sl]]
        np.abs(A, out=A)
        if kind == "linear":
            if weighted:
                s1 += w[sl] @ A  # scaled by 1/range once at the end
            else:
                s1[sl] = A @ inv
        elif kind == "threshold":
            Mk = np.greater(A, thr, out=M[:L])
            np.minimum(A, thr, out=A)
            if weighted:
                s1 += w[sl] @ A
                s2 += w[sl] @ Mk
            else:
                s1[sl] = A @ inv + Mk @ lift
        else:
            Dd = spec.diff(A, fc)
            if weighted:
                s1 += w[sl] @ Dd
            else:
                s1[sl] = Dd.sum(axis=1)
    if weighted and kind in ("linear", "threshold"):
        s1 *= inv
        if kind == "threshold":
            s1 += s2 * lift
    return s1


def _apply_sparse(Dm, spec: DiffSpec) -> np.ndarray:
    return spec.diff(Dm.data, Dm.indices)


def _mismatches(Xd) -> np.ndarray:
    """n x n number of discrete features on which two samples differ.

    With each feature's most frequent value as "background" (zero for count data):
    mismatches(i, j) = m_i + m_j - eq_ij - both_ij, m_i = features where i is off the
    background, both_ij = features where both are, eq_ij = those where both are and agree
    (two sparse products; the background never enters them, so they stay cheap).
    """
    if sparse.issparse(Xd):
        return _mismatches_sparse(Xd)
    n, q = Xd.shape
    o = np.argsort(Xd, axis=0, kind="stable")
    S = np.take_along_axis(Xd, o, axis=0)
    codes_sorted = np.vstack([np.zeros((1, q), dtype=np.int64), np.cumsum(np.diff(S, axis=0) != 0, axis=0)])
    codes = np.empty_like(codes_sorted)
    np.put_along_axis(codes, o, codes_sorted, axis=0)
    nvals = codes_sorted[-1] + 1
    offs = np.concatenate([[0], np.cumsum(nvals)[:-1]])
    flat = (codes + offs).ravel()
    freq = np.bincount(flat, minlength=int(nvals.sum()))
    feat_of = np.repeat(np.arange(q), nvals)
    # most frequent value of every feature (first on ties)
    best = np.lexsort((-freq, feat_of))
    first = np.ones(best.size, dtype=bool)
    first[1:] = feat_of[best][1:] != feat_of[best][:-1]
    mode = np.empty(q, dtype=np.int64)
    mode[feat_of[best[first]]] = best[first]
    rows = np.repeat(np.arange(n), q)
    cols_feat = np.tile(np.arange(q), n)
    off = flat != mode[cols_feat]
    r, cv, cf = rows[off], flat[off], cols_feat[off]
    E = sparse.csr_matrix((np.ones(r.size), (r, cv)), shape=(n, int(nvals.sum())))
    B = sparse.csr_matrix((np.ones(r.size), (r, cf)), shape=(n, q))
    m = np.bincount(r, minlength=n).astype(float)
    return m[:, None] + m[None, :] - (E @ E.T).toarray() - (B @ B.T).toarray()


def _mismatches_sparse(Xd) -> np.ndarray:
    """_mismatches of sparse input with zero as every feature's background (no densifying:
    PCMAC, 1943 x 3235 discrete features, 1.1 s -> 0.1 s)."""
    C = sparse.csr_matrix(Xd, dtype=np.float64, copy=True)
    C.sum_duplicates()
    C.eliminate_zeros()
    n = C.shape[0]
    rows = np.repeat(np.arange(n), np.diff(C.indptr))
    # one indicator column per distinct (feature, nonzero value)
    o = np.lexsort((C.data, C.indices))
    c, v = C.indices[o], C.data[o]
    new = np.ones(o.size, dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (v[1:] != v[:-1])
    code = np.empty(o.size, dtype=np.int64)
    code[o] = np.cumsum(new) - 1
    ones = np.ones(o.size)
    E = sparse.csr_matrix((ones, (rows, code)), shape=(n, int(new.sum())))
    B = sparse.csr_matrix((ones, C.indices, C.indptr), shape=C.shape)
    m = np.diff(C.indptr).astype(float)
    return m[:, None] + m[None, :] - (E @ E.T).toarray() - (B @ B.T).toarray()


#: a sparse continuous block is densified for the distance matrix when it has at most this
#: many columns per stored value of a row (measured: scipy's dense pdist ~0.3 ns per pair and
#: column over n^2/2 pairs; scikit-learn's sparse Manhattan ~5 ns per stored value of the two
#: rows over all n^2 pairs: break-even near 60; PCMAC's 54 continuous columns with 6 stored
#: values a row: 0.22 s sparse, 0.03 s dense)
DENSIFY_COLUMNS_PER_VALUE = 32


def distance_matrix(X, spec: DiffSpec) -> np.ndarray:
    """n x n distances used to find neighbours (sum of diffs; scikit-rebate's scaling for mixed data)."""
    n, p = X.shape
    cont = ~spec.discrete
    if spec.ramp is not None:  # nonlinear diff: pairwise totals
        I, J = np.triu_indices(n, 1)
        D = np.zeros((n, n))
        D[I, J] = pair_diff_sums(X, I, J, spec)
        return D + D.T
    D = np.zeros((n, n))
    if cont.any():
        Xc = X[:, cont] if not sparse.issparse(X) else sparse.csr_matrix(X)[:, np.flatnonzero(cont)]
        scale = spec.inv_range[cont]
        if sparse.issparse(Xc):
            per_row = max(Xc.nnz / max(n, 1), 1.0)
            if Xc.shape[1] <= DENSIFY_COLUMNS_PER_VALUE * per_row and n * Xc.shape[1] <= BLOCK_ELEMENTS * 8:
                Xc = Xc.toarray()
        if sparse.issparse(Xc):
            from sklearn.metrics.pairwise import manhattan_distances

            D += manhattan_distances(Xc @ sparse.diags(scale))
        else:
            # C order: pdist on an F-ordered matrix takes twice as long (Isolet 0.41 s vs 0.20 s)
            D += squareform(pdist(np.ascontiguousarray(Xc * scale), metric="cityblock"))
    if spec.discrete.any():
        idx = np.flatnonzero(spec.discrete)
        Xd = X[:, idx] if not sparse.issparse(X) else sparse.csc_matrix(X)[:, idx]
        mm = _mismatches(Xd)
        D += mm * (p / idx.size) if cont.any() else mm
    return D


# ----------------------------------------------------------------- neighbours and weights
def instance_sample(n: int, instances, rng) -> np.ndarray:
    if isinstance(instances, str):
        if instances == "all":
            return np.arange(n)
        if instances == "sqrt":
            m = int(np.sqrt(n))
        elif instances == "log":
            m = int(np.log(n))
        else:
            raise InputError(f"relieff: instances must be 'all', 'sqrt', 'log' or a number, got {instances!r}")
    else:
        m = int(instances)
    if not m >= 1:
        raise InputError(f"relieff: number of instances must be >= 1, got {instances!r}")
    m = min(m, n)
    if m == n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=m, replace=False))


#: distances are compared on a grid of this many steps up to each data set's largest one
DISTANCE_STEPS = 2.0**40


def _snapped(D: np.ndarray) -> np.ndarray:
    """M x n x n distances on a grid of 2^-40 of each data set's largest: distances equal up to
    round-off (sums of the same diffs in another order: the features' order decides the last
    bits) tie, and ties go to the lower sample index, whatever the order of the features."""
    top = D.max(axis=(1, 2), keepdims=True)
    return np.rint(D * np.where(top > 0, DISTANCE_STEPS / np.where(top > 0, top, 1.0), 1.0))


def neighbour_weights(D: np.ndarray, codes: np.ndarray, inst: np.ndarray, *, k: int, weighting: str,
                      sigma: float, miss_weights: str):
    """Sparse (rows, cols, weights) of the ReliefF update: instance rows, neighbour columns.
    Hits get negative weight, misses positive; one instance's weights sum to 0 in magnitude terms
    (|hits| = 1, misses = sum of class weights). ``D`` M x n x n: the distances of M data sets
    sharing ``codes`` and ``inst`` at once, and the data set of every weight comes first
    (each set's weights in the order one call of its own would give)."""
    batch = D.ndim == 3
    D = _snapped(D if batch else D[None])
    n = codes.size
    K = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=K)
    prior = counts / n
    Di = D[:, inst].astype(float, copy=True)
    Di[:, np.arange(inst.size), inst] = np.inf  # never one's own neighbour
    yi = codes[inst]
    sets, rows, cols, wts, cls_of = [], [], [], [], []
    fsum = np.zeros((D.shape[0], inst.size, K))
    for c in range(K):  # loop over classes
        members = np.flatnonzero(codes == c)
        kk = min(k, members.size)
        Dc = Di[..., members]
        o = np.argsort(Dc, axis=-1, kind="stable")[..., :kk]
        ds = np.take_along_axis(Dc, o, axis=-1)
        avail = members.size - (yi == c)
        pos = np.broadcast_to(np.arange(kk), o.shape)
        valid = pos < avail[:, None]
        if weighting == "exprank":
            new = np.ones(o.shape, dtype=bool)
            new[..., 1:] = ds[..., 1:] != ds[..., :-1]
            eff = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)  # ties keep the factor
            f = np.exp(-((eff / sigma) ** 2))
        else:
            f = np.ones(o.shape)
        f = np.where(valid, f, 0.0)
        fsum[..., c] = f.sum(axis=-1)
        m, r, q = np.nonzero(valid)
        sets.append(m)
        rows.append(r)
        cols.append(members[o[m, r, q]])
        wts.append(f[m, r, q])
        cls_of.append(np.full(r.size, c))
    order = np.argsort(np.concatenate(sets), kind="stable")  # data set by data set
    m, rows, cols, f, cl = (np.concatenate(v)[order] for v in (sets, rows, cols, wts, cls_of))
    hit = cl == yi[rows]
    norm = fsum[m, rows, cl]
    if miss_weights == "prior":
        pi = prior[cl] / (1.0 - prior[yi[rows]])
    elif miss_weights == "neighbourhood":
        nmiss = fsum.sum(axis=-1) - fsum[:, np.arange(inst.size), yi]
        pi = (K - 1) * (fsum[m, rows, cl] / nmiss[m, rows]) ** 2
    else:
        raise InputError(f"relieff: miss_weights must be 'prior' or 'neighbourhood', got {miss_weights!r}")
    w = np.where(hit, -1.0, pi) * f / norm
    return (m, inst[rows], cols, w) if batch else (inst[rows], cols, w)


def symmetric_pairs(rows, cols, w, n: int):
    """Merge (i, j) and (j, i) (diff is symmetric): pairs i < j with summed weights."""
    W = sparse.coo_matrix((w, (rows, cols)), shape=(n, n)).tocsr()
    W = sparse.triu(W + W.T, k=1).tocoo()
    keep = W.data != 0
    return W.row[keep], W.col[keep], W.data[keep]


def _check(k, weighting, sigma):
    if int(k) < 1:
        raise InputError(f"relieff: k must be >= 1, got {k}")
    if weighting not in ("equal", "exprank"):
        raise InputError(f"relieff: weighting must be 'equal' or 'exprank', got {weighting!r}")
    if not sigma > 0:
        raise InputError(f"relieff: sigma must be > 0, got {sigma}")


def relieff_scores(XL, codes, rng, *, k=10, weighting="equal", sigma=20.0, miss_weights="prior",
                   instances="all", ramp=None, discrete_threshold=0) -> np.ndarray:
    """ReliefF weights of every feature of XL (n x p, dense or CSR) with class codes 0..K-1."""
    _check(k, weighting, sigma)
    n = XL.shape[0]
    if not sparse.issparse(XL):
        XL = np.ascontiguousarray(XL, dtype=np.float64)  # row gathers and pdist want C order
    spec = diff_spec(XL, discrete_threshold, ramp)
    D = distance_matrix(XL, spec)
    inst = instance_sample(n, instances, rng)
    r, c, w = neighbour_weights(D, codes, inst, k=int(k), weighting=weighting, sigma=sigma,
                                miss_weights=miss_weights)
    I, J, ww = symmetric_pairs(r, c, w, n)
    first, group = distinct_columns(XL)  # an exact copy of a feature: the feature's sum, bit for bit
    if first.size == XL.shape[1]:
        return pair_diff_sums(XL, I, J, spec, w=ww) / inst.size
    sub = DiffSpec(spec.inv_range[first], spec.discrete[first],
                   None if spec.std_thr is None else spec.std_thr[first], spec.ramp)
    return pair_diff_sums(XL[:, first], I, J, sub, w=ww)[group] / inst.size


@register("relieff", higher_is_better=True, needs=("labels",), invariances=EVERY - {"samples"})
def relieff_score(X, y, constraints, rng, *, k: PosInt = 10, weighting: Literal["equal", "exprank"] = "equal",
                  sigma: PosFloat = 20.0, miss_weights: Literal["prior", "neighbourhood"] = "prior",
                  instances: Literal["all", "sqrt", "log"] | PosInt = "all", ramp: list[Fraction] | None = None,
                  discrete_threshold: NonNegInt = 0):
    """ReliefF (Kononenko 1994): k nearest hits/misses, class-prior miss weights, optional exp-rank weights."""
    XL, codes, _ = labeled(X, y, method="relieff", keep_sparse=True)
    return SelectionResult(scores=relieff_scores(
        XL, codes, rng, k=k, weighting=weighting, sigma=sigma, miss_weights=miss_weights,
        instances=instances, ramp=ramp, discrete_threshold=discrete_threshold))


# ----------------------------------------------------------------- many bootstraps at once
def bootstrap_scores(X, codes, boots: np.ndarray, seeds, *, k=10, weighting="equal", sigma=20.0,
                     miss_weights="prior", instances="all", ramp=None, discrete_threshold=0,
                     block_features: int = 512, threads: int = 1):
    """ReliefF of every bootstrap resample ``X[boots[m]]`` (M x n index matrix), sharing the
    work: each resample's distances and scores are two matrix products over the absolute
    differences of the distinct original sample pairs, computed in blocks of
    ``block_features`` features (a cache-sized buffer, rebuilt for the second product rather
    than kept: P x p would be 144 MB on 54 x 12,625). Equals
    ``relieff_scores(X[b], codes[b], default_rng(seed))`` per resample (up to rounding).
    Returns None when the options need the per-resample path (ramp, discrete features, sparse)."""
    if ramp is not None or discrete_threshold > 0 or sparse.issparse(X):
        return None
    _check(k, weighting, sigma)
    from ._shared.ranker_kernels import pair_absdiff, resample_ranges  # lazy: numba (about 1 s) when it runs

    X = np.ascontiguousarray(X, dtype=np.float64)
    n, p = X.shape
    M = boots.shape[0]
    U, V = np.triu_indices(n, 1)
    P = U.size
    pair_id = np.full((n, n), -1, dtype=np.int64)
    pair_id[U, V] = np.arange(P)
    pair_id[V, U] = np.arange(P)
    rg = resample_ranges(X, resample_counts(boots, codes)[0], threads)
    inv = np.divide(1.0, rg, out=np.zeros((M, p)), where=rg > 0)
    blocks = [slice(a, min(a + block_features, p)) for a in range(0, p, block_features)]
    buffer = np.empty(P * min(block_features, p))

    def absdiff(fs):
        return pair_absdiff(X, fs.start, fs.stop, buffer[:P * (fs.stop - fs.start)].reshape(P, -1), 1)

    dist = np.zeros((P, M))
    for fs in blocks:
        dist += absdiff(fs) @ inv[:, fs].T
    Wp, m_inst = _pair_weights(dist, pair_id, codes, boots, seeds, instances, k=int(k), weighting=weighting,
                               sigma=sigma, miss_weights=miss_weights)
    first, group = distinct_columns(X)  # the scores of distinct features only: a copy's are the feature's
    if first.size < p:
        X, inv = np.ascontiguousarray(X[:, first]), inv[:, first]
        blocks = [slice(a, min(a + block_features, first.size)) for a in range(0, first.size, block_features)]
    S = np.empty((M, X.shape[1]))
    for fs in blocks:
        S[:, fs] = (Wp @ absdiff(fs)) * inv[:, fs]
    return (S / m_inst[:, None])[:, group] if first.size < p else S / m_inst[:, None]


def _pair_weights(dist, pair_id, codes, boots, seeds, instances, **options):
    """(M x P weights of the distinct sample pairs in each resample's ReliefF update, instances
    per resample) from every resample's pair distances (P x M). Resamples whose positions
    hold the same classes and every instance (stratified bootstraps, ``instances="all"``)
    choose their neighbours together."""
    M, n = boots.shape
    P = dist.shape[0]
    layout = codes[boots]
    if instances == "all" and (layout == layout[0]).all():
        pid = pair_id[boots[:, :, None], boots[:, None, :]]
        D = np.where(pid >= 0, dist[np.maximum(pid, 0), np.arange(M)[:, None, None]], 0.0)
        m, r, c, w = neighbour_weights(D, layout[0], np.arange(n), **options)
        q = pair_id[boots[m, r], boots[m, c]]
        ok = q >= 0  # duplicates of one sample differ by 0
        return np.bincount(m[ok] * P + q[ok], weights=w[ok], minlength=M * P).reshape(M, P), np.full(M, float(n))
    Wp, m_inst = np.zeros((M, P)), np.empty(M)
    for m in range(M):  # loop over resamples
        b = boots[m]
        pid = pair_id[b[:, None], b[None, :]]
        D = np.where(pid >= 0, dist[np.maximum(pid, 0), m], 0.0)
        inst = instance_sample(n, instances, np.random.default_rng(seeds[m]))
        m_inst[m] = inst.size
        r, c, w = neighbour_weights(D, codes[b], inst, **options)
        q = pair_id[b[r], b[c]]
        ok = q >= 0
        Wp[m] = np.bincount(q[ok], weights=w[ok], minlength=P)
    return Wp, m_inst
