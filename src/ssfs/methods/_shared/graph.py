"""Sparse graph machinery shared by every spectral score.

The kNN graph is built by a blocked brute-force search (one BLAS Gram product per
block of rows, CSR products for mostly-zero data; sparse output, never an n x n
dense matrix); heat-kernel weights ``exp(-d^2 / lambda)``
(thesis eq. 2.5 / 3.2); the bandwidth defaults to a data-adaptive value, the
mean squared distance over the kNN edges, because the papers' fixed
``lambda = 0.1`` drives every weight to zero on unscaled data (it remains
available as a number).

Quadratic forms ``f^T L f`` for all features at once are computed as
``sum_i d_i f_i^2 - f^T S f`` with one sparse product ``S @ X``.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...constraints import Constraints
from ...errors import InputError
from . import kernels
from .column_sums import sparse_column_sums, sparse_quad_forms


def as_float_matrix(X):
    """Float64 dense array or CSR matrix."""
    if sparse.issparse(X):
        return sparse.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


#: bytes of one block of pair differences in :func:`_sq_dists_of_pairs` (cache-sized: on ALLAML,
#: 72 x 7,129, blocks of 4,096 pairs took 4x longer, the row gathers streaming through memory)
PAIR_BLOCK_BYTES = 512 * 1024


#: dense data of at least this many features measure a pair and its mirror once (:func:`_sq_dists_of_pairs`):
#: below, sorting the pairs to find the mirrors costs more than measuring them twice (350 x 8: 1.2 ms
#: against 0.5; 700 x 100: 3.4 against 2.3; 200 x 1,500 alike; 72 x 7,129: 13 against 18)
MIRROR_MIN_FEATURES = 1024


def _sq_dists_of_pairs(X, rows, cols, block: int | None = None) -> np.ndarray:
    """Exact ||x_rows - x_cols||^2 for each pair, in blocks of pairs (bounded memory, cache-sized
    by default); many pairs of a sparse X by the compiled row merge (:mod:`.kernels`, same values).
    Each pair's value is summed over its own row of differences, so it does not depend on the
    block; a dense X is gathered from a C-ordered copy (rows of an F-ordered array, as
    ``scipy.io.loadmat`` returns, are strided)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if kernels.use_kernels(X, rows.size):
        return kernels.pair_sq_dists(X, rows, cols)
    if not sparse.issparse(X) and rows.size > 1 and X.shape[1] >= MIRROR_MIN_FEATURES:
        # a pair and its mirror (mutual neighbours) measured once: the same bits (x - y = -(y - x))
        key = np.minimum(rows, cols) * X.shape[0] + np.maximum(rows, cols)
        pairs, back = np.unique(key, return_inverse=True)
        if pairs.size < 0.9 * rows.size:
            return _sq_dists_of_pairs(X, pairs // X.shape[0], pairs % X.shape[0], block)[back]
    if not sparse.issparse(X):
        X = np.ascontiguousarray(X)
    if block is None:
        block = max(1, PAIR_BLOCK_BYTES // (8 * max(X.shape[1], 1)))
    out = np.empty(rows.size)
    for s in range(0, rows.size, block):
        if sparse.issparse(X):
            diff = X[rows[s:s + block]] - X[cols[s:s + block]]
            out[s:s + block] = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
        else:
            diff = X[rows[s:s + block]]
            diff -= X[cols[s:s + block]]  # in the gathered block (ALLAML: 10.7 -> 6.9 ms)
            out[s:s + block] = np.einsum("ij,ij->i", diff, diff)
    return out


def _undirected_sq_dists(X, rows, cols) -> np.ndarray:
    """:func:`_sq_dists_of_pairs` of each unordered pair once (a kNN graph holds most pairs in
    both directions), returned for every given pair."""
    n = X.shape[0]
    a, b = np.minimum(rows, cols).astype(np.int64), np.maximum(rows, cols).astype(np.int64)
    key, inv = np.unique(a * n + b, return_inverse=True)
    return _sq_dists_of_pairs(X, key // n, key % n)[inv]


#: dense input with at most this fraction of non-zeros is searched as CSR (text counts)
SPARSE_SEARCH_DENSITY = 0.1


def sparse_if_mostly_zero(X):
    """CSR for sparse or mostly-zero dense input (sparse products are then much faster:
    on PCMAC, S @ X takes 0.02 s as CSR vs 0.2 s dense); otherwise X unchanged."""
    if sparse.issparse(X) or not X.size:
        return X
    if np.count_nonzero(X) > SPARSE_SEARCH_DENSITY * X.size:
        return X
    if X.flags.f_contiguous and not X.flags.c_contiguous:  # e.g. scipy.io.loadmat output
        return _dense_to_csr(X.T).T.tocsr()
    return _dense_to_csr(np.ascontiguousarray(X))


def _dense_to_csr(X: np.ndarray) -> sparse.csr_matrix:
    """CSR of a C-contiguous array; faster than csr_matrix(X), which calls nonzero on the
    float array (0.03 s vs 0.1 s on PCMAC)."""
    n, p = X.shape
    flat = np.flatnonzero(X.ravel() != 0)
    indptr = np.searchsorted(flat, np.arange(n + 1) * p)
    return sparse.csr_matrix((X.ravel()[flat], flat % p, indptr), shape=(n, p))


#: above this many samples ``knn_search(method="auto")`` uses NN-descent (pynndescent, the
#: search scanpy uses) instead of the exact blocked search, whose cost grows as n^2
KNN_EXACT_MAX_N = 50_000


def _center(X):
    """Dense X minus its column means (distances unchanged, Gram-trick rounding smaller:
    the error bound scales with the squared norms); sparse X unchanged (centering densifies)."""
    return X if sparse.issparse(X) else X - X.mean(axis=0)


def _exact_refine(X, ind_rows, cols, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of the rows ``queries`` (ascending) among candidate pairs (``ind_rows``,
    ``cols``; at least k per query): squared distances computed directly,
    sum_f (x_if - x_jf)^2, then ordered by (distance, index)."""
    d = _sq_dists_of_pairs(X, ind_rows, cols)
    if ind_rows.size and np.all(np.diff(ind_rows * X.shape[0] + cols) > 0):
        return _first_k_by_distance(d, ind_rows, cols, queries, k)
    o = np.lexsort((cols, d, ind_rows))
    starts = np.searchsorted(ind_rows[o], queries)
    take = (starts[:, None] + np.arange(k)[None, :]).ravel()
    return cols[o][take].reshape(queries.size, k), d[o][take].reshape(queries.size, k)


def _first_k_by_distance(d: np.ndarray, rows: np.ndarray, cols: np.ndarray, queries: np.ndarray,
                         k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_exact_refine`'s order for candidates given row by row, columns ascending (as the
    search gives them): a stable sort of each query's candidates by distance (ties stay in column
    order), :func:`_padded_first_k`: the lexsort's result, without sorting all candidates at once
    on three keys (it took most of a small graph's refinement)."""
    slot_row = np.searchsorted(queries, rows)
    counts = np.bincount(slot_row, minlength=queries.size)
    return _padded_first_k(d, slot_row, cols, counts, int(counts.max()), k)


def _padded_first_k(values: np.ndarray, rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, width: int,
                    k: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns and values of the k smallest ``values`` of each row (``rows`` ascending, ``counts``
    per row, at most ``width``), ties in the given order: the entries padded to one row each
    (with inf), a stable sort of every row."""
    slot = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
    pad = np.full((counts.size, width), np.inf)
    cand = np.zeros((counts.size, width), dtype=np.int64)
    pad[rows, slot] = values
    cand[rows, slot] = cols
    o = np.argsort(pad, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand, o, axis=1), np.take_along_axis(pad, o, axis=1)


def _nonzero_2d(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a C-ordered 2-d boolean array (row-major order), through the flat
    indices: 10x faster than numpy's 2-d nonzero on a 93 x 20,000 block of few hits."""
    flat = np.flatnonzero(mask)
    rows, cols = np.divmod(flat, mask.shape[1])
    return rows, cols


def _kth_smallest_per_row(values: np.ndarray, rows: np.ndarray, n_rows: int, k: int) -> np.ndarray:
    """The k-th smallest of ``values`` within each row (``rows`` ascending, every row at least k
    entries): one partition of the entries padded to a rectangle (a lexsort of them took half of
    a 20,000-sample search)."""
    counts = np.bincount(rows, minlength=n_rows)
    start = np.cumsum(counts) - counts
    pad = np.full((n_rows, int(counts.max())), np.inf)
    pad[rows, np.arange(rows.size) - start[rows]] = values
    return np.partition(pad, k - 1, axis=1)[:, k - 1]


def _smallest_exact(dist: np.ndarray, k: int, step: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Columns and values of the k smallest entries of each row of an exactly computed distance
    block, ordered by (value, column): ties at the k-th value go to the lower columns (however
    many there are: duplicated or all-zero count rows). ``step`` > 1: the k-th smallest of every
    step-th column bounds the k-th from above, and when that leaves few candidates (no large
    ties) only they are sorted."""
    if step > 1:
        bound = np.partition(dist[:, ::step], k - 1, axis=1)[:, k - 1]
        rows, cols = _nonzero_2d(dist <= bound[:, None])
        counts = np.bincount(rows, minlength=dist.shape[0])
        width = int(counts.max()) if rows.size else 0
        if width <= 64 * k:  # candidates padded to one row each, columns ascending: a stable sort
            return _padded_first_k(dist[rows, cols], rows, cols, counts, width, k)
    t = np.partition(dist, k - 1, axis=1)[:, k - 1][:, None]
    less = dist < t
    eq = dist == t
    need = k - less.sum(axis=1)
    tied = eq.sum(axis=1) > need
    if tied.any():  # the first columns of the tie
        eq[tied] &= np.cumsum(eq[tied], axis=1) <= need[tied, None]
    rows, cols = _nonzero_2d(less | eq)  # k per row
    d = dist[rows, cols].astype(np.float64)
    o = np.lexsort((cols, d, rows))
    return cols[o].reshape(-1, k), d[o].reshape(-1, k)


#: values per chunk of :func:`_integral_dtype`'s check (256 kB)
INTEGRAL_CHUNK = 32 * 1024


def _integral_dtype(X):
    """float32 or float64 when X holds integers (counts) whose squared distances are exact in
    that type's sums (every partial sum below 2^24 or 2^53), else None."""
    d = X.data if sparse.issparse(X) else X.ravel()
    if not d.size:
        return None
    top = 0.0
    for s in range(0, d.size, INTEGRAL_CHUNK):  # in cache; real-valued data stop at the first chunk
        chunk = d[s:s + INTEGRAL_CHUNK]
        if not np.array_equal(chunk, np.rint(chunk)):
            return None
        top = max(top, float(np.abs(chunk).max()))
    bound = 4.0 * top**2 * X.shape[1]
    return np.float32 if bound < 2.0**24 else np.float64 if bound < 2.0**53 else None


def _distinct_rows(X) -> tuple[np.ndarray, np.ndarray]:
    """Index of the first copy of each distinct row (ascending) and each row's position among
    them; rows are grouped by a fixed random projection and the grouping verified exactly
    (no grouping if the projection ever merged two different rows)."""
    n = X.shape[0]
    h = np.asarray(X @ np.random.default_rng(20261124).standard_normal(X.shape[1])).ravel()
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    rep = first[inv]
    copy = np.flatnonzero(rep != np.arange(n))  # a row is its own first copy otherwise
    same = (X[copy] - X[rep[copy]]).nnz == 0 if sparse.issparse(X) else np.array_equal(X[copy], X[rep[copy]])
    if not same:
        return np.arange(n), np.arange(n)
    order = np.argsort(first)
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return first[order], pos[inv.ravel()]


#: the search runs on the distinct rows when they are at most this share of the samples
DISTINCT_SHARE = 0.8


def _knn_exact(X, k: int, block_bytes: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Exact search (:func:`_knn_queries`); with many duplicated rows (text counts on a few words:
    an EnsCLS member of PCMAC has ~380 distinct rows of 1,943) only the distinct rows are
    searched, for their k + 1 nearest samples including themselves: a copy's neighbours are
    that list without itself (or its first k, when k + 1 lower-indexed copies tie at 0)."""
    n = X.shape[0]
    reps, where = _distinct_rows(X)
    if reps.size > DISTINCT_SHARE * n:
        return _knn_queries(X, None, k, block_bytes, dtype)
    ind, d2 = _knn_queries(X, reps, k + 1, block_bytes, dtype)
    ind, d2 = ind[where], d2[where]
    hit = ind == np.arange(n)[:, None]
    drop = np.where(hit.any(axis=1), hit.argmax(axis=1), k)
    keep = np.ones(ind.shape, dtype=bool)
    keep[np.arange(n), drop] = False
    return ind[keep].reshape(n, k), d2[keep].reshape(n, k)


#: ``precision="auto"`` computes the Gram blocks in float32 for dense data of at most this many
#: features (the rounding bound, and so the share of candidates re-measured, grows with p) ...
F32_MAX_FEATURES = 1024
#: ... and at least this many samples (below, the product is too small for its speed to count).
#: Laplacian score, one BLAS thread, float64 -> float32 (same scores): Isolet 1,560 x 617 107-112 ->
#: 81 ms; Gaussian 1,000 x 300 31 -> 26, 1,200 x 1,000 119 -> 96, 3,000 x 1,000 645 -> 407 ms
#: (session 17; the limits were 256 features and 2,000 samples)
F32_MIN_SAMPLES = 1000
#: float32 Gram blocks only for centred values within [2^-40, 2^40] in magnitude (or 0): their
#: products and sums then stay normal numbers, where the rounding bound holds
F32_EXPONENT_LIMIT = 40


def _gram_dtype(Xc, requested):
    """float32 or float64 for the Gram blocks of the centred non-integer ``Xc``: ``requested``
    (None = auto: float32 for dense data of few features and many samples, where the product is
    the search's main cost), float64 whenever a value's magnitude would leave float32's safe
    range (:data:`F32_EXPONENT_LIMIT`)."""
    n, p = Xc.shape
    if requested is None:
        requested = np.float32 if (not sparse.issparse(Xc) and p <= F32_MAX_FEATURES
                                   and n >= F32_MIN_SAMPLES) else np.float64
    if requested != np.float32:
        return np.float64
    a = np.abs(Xc.data if sparse.issparse(Xc) else Xc)
    lim = 2.0**F32_EXPONENT_LIMIT
    if a.size and (a.max() > lim or np.min(a, where=a > 0, initial=np.inf) < 1.0 / lim):
        return np.float64
    return np.float32


#: integer data: the first bound on a row's k-th distance is taken over every step-th column, about
#: SUBSET_PER_K * k of them (candidates: about n / SUBSET_PER_K per row)
SUBSET_PER_K = 128


def _subset_step(n: int, k: int) -> int:
    """Every how many columns the first bound on a row's k-th distance is taken (:func:`_knn_queries`):
    about sqrt(2 n k) columns, which balances the bound's partition (n x columns) against the
    candidates it leaves (about n k / columns per row). Only the cost depends on it, not the result.
    One BLAS thread, d = 8-20 (ms): 700 samples 13-15 -> 5-10 (every column before), 2,000 samples 69
    -> 32-36, 5,000 samples 259 -> 112-115, 20,000 samples 1,143 -> 1,022-1,231."""
    return max(1, int(round(np.sqrt(n / (2.0 * k)))))


def _knn_queries(X, queries, k: int, block_bytes: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest samples of each row in ``queries`` (ascending; None: every row, itself
    excluded). Integer data: the Gram-trick distances are exact, ties go to the lower index
    (:func:`_knn_integral`). Otherwise a Gram-trick distance block (in ``dtype``) gives each row's
    candidates, every sample whose lower error bound does not exceed a proven upper bound on the
    k-th distance; the candidates' distances are then computed directly in float64."""
    n, p = X.shape
    self_excluded = queries is None
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.int64)
    exact_dtype = _integral_dtype(X)
    if exact_dtype is not None:
        return _knn_integral(X, queries, k, block_bytes, exact_dtype, self_excluded, max(1, n // (SUBSET_PER_K * k)))
    step = _subset_step(n, k)
    Xc = _center(X)
    dtype = _gram_dtype(Xc, dtype)
    dense = not sparse.issparse(Xc)
    if dense:
        sq = np.einsum("ij,ij->i", Xc, Xc)
        p_eff = max(p, 1)
    else:
        sq = np.asarray(Xc.multiply(Xc).sum(axis=1)).ravel()
        p_eff = max(1, int(np.diff(Xc.indptr).max())) if Xc.nnz else 1
    # rounding error of sq_i - 2 x_i.x_j + sq_j in `dtype` (inputs rounded to dtype, dot products
    # of p_eff terms, two additions; or one dot product of p_eff + 1 terms, lo_j the last),
    # bounded by c (sq_i + sq_j): a rigorous worst-case bound
    c = (2.0 * p_eff + 16.0) * float(np.finfo(dtype).eps)
    lo_i, lo_j = sq * (1.0 - c), (sq * (1.0 - c)).astype(dtype)
    width = 2.0 * c * sq
    A, B, folded = _gram_operands(Xc, dtype, lo_j)
    whole = queries.size == n and np.array_equal(queries, np.arange(n))  # blocks of rows: views, not gathers
    # candidates: every sample whose lower bound does not exceed an upper bound on the row's
    # k-th distance; that bound is first the k-th smallest upper bound over every step-th column
    # (~sqrt(2 n k) columns, their own small product: no argpartition over all n, no strided
    # gather), then tightened among the candidates
    sub = np.arange(0, n, step)
    Bsub = None if step == 1 else B[:, sub]  # step 1 (n < 4.5 k): the subset is every column
    ind, d2 = np.empty((queries.size, k), dtype=np.int64), np.empty((queries.size, k))
    for s, e, qb in _query_blocks(queries, n, dtype, block_bytes):
        Aq = A[s:e] if whole else A[qb]
        L = _dense(Aq @ B)
        Lsub = L if Bsub is None else _dense(Aq @ Bsub)  # one product less for small n
        if not folded:
            if dense:  # -2 x_i.x_j from x_i.x_j: exact (a power of two)
                L *= -2.0
                if Lsub is not L:
                    Lsub *= -2.0
            L += lo_j[None, :]  # L + lo_i <= true d2 (lower bound); lo_i is added to the thresholds
            if Lsub is not L:
                Lsub += lo_j[None, sub]
        r = np.arange(e - s)
        if self_excluded:
            L[r, qb] = np.inf
            on = qb % step == 0
            Lsub[r[on], qb[on] // step] = np.inf
        U = Lsub.astype(np.float64, copy=False) + width[None, sub]  # float64 blocks: no copy
        thr = np.partition(U, k - 1, axis=1)[:, k - 1] + width[qb]  # minus lo_i
        bound = np.nextafter(thr.astype(dtype), np.inf, dtype=dtype)  # rounded up
        rows, cols = _nonzero_2d(bound[:, None] >= L)
        lc = L[rows, cols].astype(np.float64) + lo_i[qb[rows]]
        del L
        uc = lc + width[qb[rows]] + width[cols]
        thr2 = _kth_smallest_per_row(uc, rows, e - s, k)  # among the candidates of each row
        keep = lc <= thr2[rows]
        ind[s:e], d2[s:e] = _exact_refine(X, qb[rows[keep]], cols[keep].astype(np.int64), qb, k)
    return ind, d2


def _query_blocks(queries: np.ndarray, n: int, dtype, block_bytes: int):
    """(start, end, rows) of consecutive blocks of ``queries`` whose distance rows to all n
    samples (in ``dtype``, plus a byte of mask each) take at most ``block_bytes``."""
    bs = max(1, min(queries.size, block_bytes // ((np.dtype(dtype).itemsize + 1) * max(n, 1))))
    for s in range(0, queries.size, bs):
        e = min(queries.size, s + bs)
        yield s, e, queries[s:e]


def _dense(M) -> np.ndarray:
    return M.toarray() if sparse.issparse(M) else np.asarray(M)


def _gram_operands(Xc, dtype, lo_j):
    """(A, B, folded) with A[rows] @ B = -2 x_i.x_j (+ lo_j when ``folded``: a column of ones in A
    and the row lo_j in B, so the product adds it, one pass less per block) in ``dtype``; -2 is
    exact. Dense float64 data of fewer samples than features: (Xc, Xc^T) as they are, the product
    x_i.x_j (the caller scales and adds lo_j to the small n-wide blocks rather than copy X twice)."""
    if sparse.issparse(Xc):
        Xd = Xc.astype(dtype)
        return Xd, -2.0 * Xd.T.tocsc(), False
    n, p = Xc.shape
    if dtype == np.float64 and n <= p and Xc.flags.c_contiguous:
        return Xc, Xc.T, False
    A = np.empty((n, p + 1), dtype=dtype)
    A[:, :p] = Xc
    A[:, p] = 1.0
    BT = np.empty((n, p + 1), dtype=dtype)  # B transposed: its columns are rows here (no transposing copy)
    np.multiply(A[:, :p], -2.0, out=BT[:, :p])
    BT[:, p] = lo_j
    return A, BT.T, True


def _knn_integral(X, queries, k: int, block_bytes: int, dtype, self_excluded: bool, step: int):
    """:func:`_knn_queries` for integer data whose Gram-trick distances sq_i + sq_j - 2 x_i.x_j are
    exact in ``dtype`` (:func:`_integral_dtype`): the k smallest of each row, ties to the lower index."""
    n = X.shape[0]
    if sparse.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        Xd = X.astype(dtype)
        XT = -2.0 * Xd.T.tocsc()
    else:
        sq = np.einsum("ij,ij->i", X, X)
        Xd = X.astype(dtype, copy=False)
        XT = -2.0 * Xd.T
    sq_d = sq.astype(dtype)
    ind, d2 = np.empty((queries.size, k), dtype=np.int64), np.empty((queries.size, k))
    for s, e, qb in _query_blocks(queries, n, dtype, block_bytes):
        L = _dense(Xd[qb] @ XT)
        L += sq_d[None, :]
        L += sq_d[qb][:, None]
        if self_excluded:
            L[np.arange(e - s), qb] = np.inf
        ind[s:e], d2[s:e] = _smallest_exact(L, k, step)
    return ind, d2


def _knn_nndescent(X, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Approximate search by NN-descent (pynndescent, as scanpy and UMAP), deterministic
    for a seed (single-threaded); returned distances computed directly, ordered by
    (distance, index)."""
    from pynndescent import NNDescent

    n = X.shape[0]
    index = NNDescent(X, n_neighbors=min(n, k + 1), metric="euclidean", random_state=seed,
                      n_jobs=1, low_memory=True, compressed=True, verbose=False)
    nb, _ = index.neighbor_graph
    nb = np.asarray(nb, dtype=np.int64)
    rows = np.repeat(np.arange(n), nb.shape[1])
    cols = nb.ravel()
    keep = (cols != rows) & (cols >= 0)
    if np.bincount(rows[keep], minlength=n).min() < k:  # a sample short of neighbours (tiny n)
        return _knn_exact(X, k, 16 * 1024**2, np.float64)
    return _exact_refine(X, rows[keep], cols[keep], np.arange(n), k)


def knn_search(X, k: int, block_bytes: int = 16 * 1024**2, *, method: str = "auto",
               precision: str = "auto", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's k nearest other samples (Euclidean): indices (n x k), nearest first,
    and their squared distances sum_f (x_if - x_jf)^2 computed directly in float64; ties
    (equal computed distances, e.g. duplicated samples or integer data) go to the lower index.

    ``method``: ``"exact"`` is a blocked brute-force search (one BLAS or CSR Gram product per
    block of rows of at most ``block_bytes``; sparse output, never an n x n matrix) whose
    Gram-trick distances only propose candidates: every sample that rounding could place
    among the k nearest is re-measured directly, so the result is that of exact comparison
    of the directly computed distances. ``precision="float32"`` computes the Gram blocks in
    float32 (faster, half the memory; same result, more candidates re-measured; float64 when a
    magnitude leaves float32's safe range); ``"auto"`` (default) float32 for dense data with at most
    :data:`F32_MAX_FEATURES` features and at least :data:`F32_MIN_SAMPLES` samples, else float64.
    ``"nndescent"`` is pynndescent's approximate search (seeded); ``"auto"``: exact up to
    :data:`KNN_EXACT_MAX_N` samples, NN-descent above.
    """
    if method not in ("auto", "exact", "nndescent"):
        raise InputError(f"kNN search method must be 'auto', 'exact' or 'nndescent', got {method!r}")
    if precision not in ("auto", "float64", "float32"):
        raise InputError(f"kNN search precision must be 'auto', 'float64' or 'float32', got {precision!r}")
    X = sparse_if_mostly_zero(X)
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)  # rows gathered below (loadmat gives F order)
    n = X.shape[0]
    k = int(k)
    if not 1 <= k <= n - 1:
        raise InputError(f"number of neighbours k must be between 1 and n - 1 = {n - 1}, got {k}")
    if method == "nndescent" or (method == "auto" and n > KNN_EXACT_MAX_N):
        return _knn_nndescent(X, k, seed)
    dtype = {"auto": None, "float32": np.float32, "float64": np.float64}[precision]
    return _knn_exact(X, k, int(block_bytes), dtype)


def knn_indices(X, k: int) -> np.ndarray:
    """Indices (n x k) of each sample's k nearest other samples, nearest first."""
    return knn_search(X, k)[0]


def knn_graph(X, k: int = 10) -> sparse.csr_matrix:
    """Binary symmetric kNN connectivity: 1 if i is among the k nearest neighbours of j
    or vice versa (no self loops)."""
    X = as_float_matrix(X)
    n = X.shape[0]
    k_eff = min(int(k), n - 1)
    if k_eff < 1:
        raise InputError(f"number of neighbours k must be >= 1, got {k}")
    ind = knn_indices(X, k_eff)
    A = sparse.csr_matrix((np.ones(n * k_eff), (np.repeat(np.arange(n), k_eff), ind.ravel())), shape=(n, n))
    return A.maximum(A.T).tocsr()


def resolve_bandwidth(d2: np.ndarray, bandwidth) -> float:
    """``"auto"``/``"mean"`` -> mean squared kNN distance, ``"median"`` -> its median
    (zero distances of duplicated samples ignored); a number is used as is."""
    if bandwidth in (None, "auto", "mean", "median"):
        vals = d2[d2 > 0]
        if not vals.size:
            return 1.0
        return float(np.median(vals)) if bandwidth == "median" else float(vals.mean())
    t = float(bandwidth)
    if not t > 0:
        raise InputError(f"heat-kernel bandwidth must be > 0, got {bandwidth}")
    return t


def heat_kernel_graph(X, k: int = 10, bandwidth="auto", precomputed=None,
                      symmetric: bool = True, edge_sq_dists: bool = False) -> tuple[sparse.csr_matrix, float]:
    """Sparse symmetric heat-kernel kNN graph, S_ij = exp(-||xi - xj||^2 / t) if i is
    among the k nearest neighbours of j or vice versa (thesis eq. 2.5). Returns (S, t).
    ``symmetric=False``: row i holds only i's own k nearest neighbours (not symmetrised).

    ``precomputed`` may be a stored connectivity matrix (e.g. scanpy's
    ``obsp['connectivities']``): its sparsity pattern replaces the kNN search and
    the heat-kernel weights are computed on its edges; ``edge_sq_dists=True``: its stored
    values are the edges' squared distances (a search already measured them).
    """
    X = as_float_matrix(X)
    n = X.shape[0]
    if n < 2:
        raise InputError(f"a neighbourhood graph needs at least 2 samples, got {n}")
    if precomputed is not None:
        P = sparse.coo_matrix(precomputed)
        keep = P.row != P.col
        rows, cols = P.row[keep], P.col[keep]
        d2 = P.data[keep].astype(np.float64) if edge_sq_dists else _undirected_sq_dists(X, rows, cols)
    else:
        k_eff = min(int(k), n - 1)
        if k_eff < 1:
            raise InputError(f"number of neighbours k must be >= 1, got {k}")
        ind, d2 = knn_search(X, k_eff)
        rows, cols, d2 = np.repeat(np.arange(n), k_eff), ind.ravel(), d2.ravel()
    t = resolve_bandwidth(d2, bandwidth)
    S = sparse.csr_matrix((np.exp(-d2 / t), (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    S = S.maximum(S.T).tocsr() if symmetric else S.tocsr()
    return S, t


def pair_weights(X, pairs: np.ndarray, bandwidth: float) -> np.ndarray:
    """Heat-kernel weights of explicit pairs (e.g. must-link constraints)."""
    if len(pairs) == 0:
        return np.zeros(0)
    X = as_float_matrix(X)
    return np.exp(-_sq_dists_of_pairs(X, pairs[:, 0], pairs[:, 1]) / bandwidth)


def pairs_matrix(pairs: np.ndarray, n: int, weights=None) -> sparse.csr_matrix:
    """Symmetric sparse matrix with the given weights (default 1) on the pairs."""
    if len(pairs) == 0:
        return sparse.csr_matrix((n, n))
    w = np.ones(len(pairs)) if weights is None else np.asarray(weights, float)
    rows, cols = np.r_[pairs[:, 0], pairs[:, 1]], np.r_[pairs[:, 1], pairs[:, 0]]
    M = sparse.coo_matrix((np.r_[w, w], (rows, cols)), shape=(n, n))
    return M.tocsr()  # Constraints stores each pair once with i < j: no duplicates


def constrained_graph(
    X, constraints: Constraints, k: int = 10, bandwidth="auto", precomputed=None, knn_among=None,
    edge_sq_dists: bool = False,
) -> tuple[sparse.csr_matrix, float]:
    """CLS graph S^kn (thesis eq. 3.4): heat-kernel kNN graph, must-link pairs added
    with their heat-kernel weight, cannot-link edges removed. Returns (S, t).

    ``knn_among`` (indices or boolean mask, default all samples): the kNN search, its
    edges and the "auto" bandwidth are restricted to these samples; the others join the
    graph only through must-link pairs (EnsCLS paper eq. 2 read literally: neighbour
    edges only within X_U)."""
    X = as_float_matrix(X)
    n = X.shape[0]
    if knn_among is None:
        S, t = heat_kernel_graph(X, k=k, bandwidth=bandwidth, precomputed=precomputed, edge_sq_dists=edge_sq_dists)
    else:
        idx = np.asarray(knn_among)
        idx = np.flatnonzero(idx) if idx.dtype == bool else idx.astype(np.int64)
        if idx.size >= 2:
            sub = None if precomputed is None else sparse.csr_matrix(precomputed)[idx][:, idx]
            Su, t = heat_kernel_graph(X[idx], k=k, bandwidth=bandwidth, precomputed=sub, edge_sq_dists=edge_sq_dists)
            E = sparse.csr_matrix((np.ones(idx.size), (idx, np.arange(idx.size))), shape=(n, idx.size))
            S = (E @ Su @ E.T).tocsr()
        else:
            S, t = sparse.csr_matrix((n, n)), resolve_bandwidth(np.zeros(0), bandwidth)
    if constraints.n_ml:
        W = pairs_matrix(constraints.ml, n, pair_weights(X, constraints.ml, t))
        S = S.maximum(W).tocsr()
    if constraints.n_cl:
        C = pairs_matrix(constraints.cl, n)
        S = (S - S.multiply(C)).tocsr()
        S.eliminate_zeros()
    return S, t


def degree(S: sparse.spmatrix) -> np.ndarray:
    return np.asarray(S.sum(axis=1)).ravel()


def quad_forms(S: sparse.spmatrix, X) -> np.ndarray:
    """``f_r^T S f_r`` for every column r of X (one sparse product, by blocks of rows for a
    sparse X: :func:`~.column_sums.sparse_quad_forms`; mostly-zero dense X is multiplied as CSR)."""
    X = sparse_if_mostly_zero(X)
    if sparse.issparse(X):
        return sparse_quad_forms(S, sparse.csr_matrix(X))
    return np.einsum("ij,ij->j", np.asarray(S @ X), X)


def weighted_sq_sums(X, w: np.ndarray) -> np.ndarray:
    """``sum_i w_i f_ri^2`` for every column r."""
    if sparse.issparse(X):
        return sparse_column_sums(sparse.csr_matrix(X), w, np.square)
    return w @ (X * X)


def weighted_sums(X, w: np.ndarray) -> np.ndarray:
    """``sum_i w_i f_ri`` for every column r."""
    if sparse.issparse(X):
        return np.asarray(X.T @ w).ravel()
    return w @ X


def weighted_pair_sums(X, pairs: np.ndarray, W, block_bytes: int = 64 * 1024**2) -> np.ndarray:
    """``sum_k W[r, k] (f_{i_k} - f_{j_k})^2`` for every row r of the R x n_pairs weights
    ``W`` (dense or sparse) and every feature: an R x p array, summed from the
    differences themselves (unlike :func:`laplacian_quad`'s expansion d f^2 - f S f, it
    cannot cancel when the weights span many orders of magnitude), in blocks of pairs
    whose differences take at most ``block_bytes``."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    W = sparse.csc_matrix(W) if sparse.issparse(W) else np.asarray(W, dtype=float)
    p = X.shape[1]
    out = np.zeros((W.shape[0], p))
    step = max(1, block_bytes // (8 * max(p, 1)))
    for s in range(0, len(pairs), step):
        a, b = pairs[s:s + step, 0], pairs[s:s + step, 1]
        diff = X[a] - X[b]
        sq = diff.multiply(diff) if sparse.issparse(diff) else diff * diff
        part = W[:, s:s + step] @ sq
        out += part.toarray() if sparse.issparse(part) else np.asarray(part)
    return out


def laplacian_quad(S: sparse.spmatrix, X) -> np.ndarray:
    """``sum_ij S_ij (f_i - f_j)^2 = 2 f^T L f`` for every feature (thesis eq. 3.6).
    Only the samples with an edge take part (constraint graphs touch few rows)."""
    S = sparse.csr_matrix(S)
    active = np.flatnonzero(np.diff(S.indptr) > 0)
    if active.size < S.shape[0]:
        S = S[active][:, active]
        X = X[active]
    d = degree(S)
    return 2.0 * (weighted_sq_sums(X, d) - quad_forms(S, X))
