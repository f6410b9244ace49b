"""Compiled (numba) kernels of the EFSIS rankers, for one data set or many bootstrap resamples
of it at once (issue #16: an EFSIS fold on 54 x 12,625 in about 0.5 s on 2 cores).

* :func:`mdl_conditional_entropy`: Fayyad & Irani's recursive MDL discretisation of every
  feature (:mod:`ssfs.methods.infogain`), on weighted samples: a bootstrap resample is the
  original samples with multiplicities, so one sort of each feature serves every resample
  (sample i repeated w_i times sorts as i with weight w_i; weight 0 = left out). Two
  classes: the first cut of every (feature, resample) in one pass with the resamples as
  vectors and a table of exact cut entropies; the MDL test of that cut from a table too,
  so only features whose first cut is accepted recurse.
* :func:`binned_mad_cv`: the coefficient of variation of the per-bin median absolute
  deviations of samr's ``est.s0`` (:mod:`ssfs.methods.sam`): each bin's values kept sorted
  from one offset to the next, the MAD by a binary search over the two sorted runs of
  deviations.
* :func:`sam_parts`: SAM's numerator and s_i from class sums (one pass, numpy's formulas).
* :func:`resample_ranges`, :func:`pair_absdiff`: ReliefF's per-resample feature ranges
  and the pair differences of a feature block (:func:`ssfs.methods.relieff.bootstrap_scores`).

Every (feature, resample) or resample is independent of the others, so results do not
depend on the thread count (``threads``, capped by numba's pool). Compiled on first use and
cached on disk (numba ``cache=True``); the rankers import this module only when they run, so
importing ssfs never imports numba.
"""

from __future__ import annotations

import numpy as np

from ..._jit import numba_module
from ...ranking import stable_argsort

numba = numba_module()

INT64_MAX = np.iinfo(np.int64).max
#: two classes: the first cut of every (feature, resample) from a table of (A + 1)(B + 1) cut
#: entropies when it has at most this many entries
TWO_CLASS_TABLE = 1 << 16


def _set_threads(threads: int) -> None:
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))


@numba.njit(cache=True, nogil=True, inline="always")
def _ent_n(c, tab):  # pragma: no cover - compiled; N Ent(S) as infogain's numpy formula
    acc = tab[c[0]]
    tot = c[0]
    for j in range(1, c.size):
        acc += tab[c[j]]
        tot += c[j]
    return tab[tot] - acc


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _accept_cut(ctot, left, right, tab, lg_n, lg_3k):  # pragma: no cover - compiled
    """The MDL acceptance test of a cut (Fayyad & Irani 1993), term by term."""
    ns = 0
    k = k1 = k2 = nl = 0
    for c in range(ctot.size):
        ns += ctot[c]
        nl += left[c]
        if ctot[c] > 0:
            k += 1
        if left[c] > 0:
            k1 += 1
        if right[c] > 0:
            k2 += 1
    e_l, e_r = _ent_n(left, tab), _ent_n(right, tab)
    ent_s = _ent_n(ctot, tab) / ns
    gain = ent_s - (e_l + e_r) / ns
    e1 = e_l / max(nl, 1)
    e2 = e_r / max(ns - nl, 1)
    delta = lg_3k[k] - (k * ent_s - k1 * e1 - k2 * e2)
    return gain > (lg_n[ns] + delta) / ns


@numba.njit(cache=True, nogil=True, inline="always")
def _best_cut_2(ys, order, cand, W, f, m, lo, hi, A, B, tabI, left):  # pragma: no cover - compiled
    """:func:`best_cut` for two classes of totals (A, B)."""
    best = INT64_MAX
    best_t = -1
    a = b = 0
    for t in range(lo, hi - 1):
        wt = W[m, order[f, t]]
        wb = wt * ys[f, t]  # branch free: the class is unpredictable
        a += wt - wb
        b += wb
        if cand[f, t] and 0 < a + b < A + B:
            ev = tabI[a + b] + tabI[A + B - a - b] - tabI[a] - tabI[b] - tabI[A - a] - tabI[B - b]
            if ev < best:
                best = ev
                best_t = t
                left[0], left[1] = a, b
    return best_t


@numba.njit(cache=True, nogil=True, inline="always")
def _best_cut(ys, order, cand, W, f, m, lo, hi, ctot, tabI, cur, right, left):  # pragma: no cover - compiled
    """The first best cut of feature f's sorted positions [lo, hi) under weighting m
    (after position t; -1: none), its left class counts copied to ``left``; zero-weight
    positions change nothing."""
    if ctot.size == 2:  # two classes: the counts in registers
        return _best_cut_2(ys, order, cand, W, f, m, lo, hi, ctot[0], ctot[1], tabI, left)
    ns = 0
    sum_r = 0
    for c in range(ctot.size):
        ns += ctot[c]
        sum_r += tabI[ctot[c]]
        cur[c] = 0
        right[c] = ctot[c]
    best = INT64_MAX
    best_t = -1
    sum_l = 0
    nl = 0
    for t in range(lo, hi - 1):
        c, wt = ys[f, t], W[m, order[f, t]]
        sum_l += tabI[cur[c] + wt] - tabI[cur[c]]
        sum_r -= tabI[right[c]] - tabI[right[c] - wt]
        cur[c] += wt
        right[c] -= wt
        nl += wt
        if cand[f, t] and 0 < nl < ns:
            ev = tabI[nl] + tabI[ns - nl] - sum_l - sum_r  # exact: fixed point
            if ev < best:  # rare after the first few positions: copying is cheap
                best = ev
                best_t = t
                for j in range(ctot.size):
                    left[j] = cur[j]
    return best_t


@numba.njit(cache=True, nogil=True, inline="always")
def _feature_cond(ys, order, cand, W, f, m, root_tot, root_t, root_left, tab, tabI, lg_n, lg_3k, ctot, cur,
                 left, right, st_lo, st_hi, st_c):  # pragma: no cover - compiled
    """sum over the final MDL intervals I of N_I Ent(I) of feature f under weighting m
    (``root_t[f, m]`` >= -1: the first interval's best cut is given, with its left counts)."""
    K = ctot.size
    cond = 0.0
    top = 0
    st_lo[0], st_hi[0] = 0, ys.shape[1]
    for c in range(K):
        st_c[0, c] = root_tot[m, c]
    first = True
    while top >= 0:  # depth first, left part first: final intervals from left to right
        lo, hi = st_lo[top], st_hi[top]
        for c in range(K):
            ctot[c] = st_c[top, c]
        top -= 1
        if first and root_t[f, m] >= -1:
            cut = root_t[f, m]
            for c in range(K):
                left[c] = root_left[f, m, c]
        else:
            cut = _best_cut(ys, order, cand, W, f, m, lo, hi, ctot, tabI, cur, right, left)
        first = False
        ok = False
        if cut >= 0:
            for c in range(K):
                right[c] = ctot[c] - left[c]
            ok = _accept_cut(ctot, left, right, tab, lg_n, lg_3k)
        if ok:
            top += 1
            st_lo[top], st_hi[top] = cut + 1, hi
            for c in range(K):
                st_c[top, c] = right[c]
            top += 1
            st_lo[top], st_hi[top] = lo, cut + 1
            for c in range(K):
                st_c[top, c] = left[c]
        else:
            cond += _ent_n(ctot, tab)
    return cond


@numba.njit(cache=True, parallel=True, nogil=True)
def _mdl(ys, order, cand, W, need, root_tot, root_t, root_left, tab, tabI, lg_n, lg_3k, out):  # pragma: no cover
    """``need[f, m]`` False: the first cut is known to be refused (a single interval)."""
    q, n = ys.shape
    K = root_tot.shape[1]
    for f in numba.prange(q):
        ctot = np.empty(K, np.int64)
        cur = np.empty(K, np.int64)
        left = np.empty(K, np.int64)
        right = np.empty(K, np.int64)
        st_lo = np.empty(n + 1, np.int64)
        st_hi = np.empty(n + 1, np.int64)
        st_c = np.empty((n + 1, K), np.int64)
        for m in range(W.shape[0]):
            if not need[f, m]:
                for c in range(K):
                    ctot[c] = root_tot[m, c]
                out[f, m] = 0.0 + _ent_n(ctot, tab)  # as feature_cond with no accepted cut
                continue
            out[f, m] = _feature_cond(ys, order, cand, W, f, m, root_tot, root_t, root_left, tab, tabI, lg_n,
                                     lg_3k, ctot, cur, left, right, st_lo, st_hi, st_c)


@numba.njit(cache=True, parallel=True, nogil=True)
def _two_class_roots_kernel(step, order, cand, WT, E2, accepted, b1, best_t, best_left, need):  # pragma: no cover
    """First best cut of every (feature, resample) over all samples, two classes: the left
    counts (a, b) travel as one index a (B + 1) + b into the table E2 of exact cut
    entropies (no cut: INT64_MAX); resamples innermost, as vectors. ``need``: the cut
    passes the MDL test (``accepted``, the same index), so the recursion goes on."""
    q, n = step.shape
    M = WT.shape[1]
    for f in numba.prange(q):
        idx = np.zeros(M, np.int64)
        bi = np.full(M, INT64_MAX)
        bt = np.full(M, -1)
        bx = np.zeros(M, np.int64)
        for t in range(n - 1):
            k = step[f, t]
            o = order[f, t]
            if not cand[f, t]:
                for m in range(M):
                    idx[m] += WT[o, m] * k
                continue
            for m in range(M):
                i = idx[m] + WT[o, m] * k
                idx[m] = i
                ev = E2[i]
                better = ev < bi[m]
                bi[m] = min(ev, bi[m])
                bt[m] = t if better else bt[m]
                bx[m] = i if better else bx[m]
        for m in range(M):
            best_t[f, m] = bt[m]
            best_left[f, m, 0] = bx[m] // b1
            best_left[f, m, 1] = bx[m] % b1
            need[f, m] = bt[m] >= 0 and accepted[bx[m]]


@numba.njit(cache=True, nogil=True)
def _accept_table(A, B, tab, lg_n, lg_3k, out):  # pragma: no cover - compiled
    """out[a, b]: the MDL test accepts the cut leaving (a, b) of two classes (A, B) left."""
    ctot = np.array([A, B])
    left = np.zeros(2, np.int64)
    right = np.zeros(2, np.int64)
    for a in range(A + 1):
        for b in range(B + 1):
            left[0], left[1], right[0], right[1] = a, b, A - a, B - b
            out[a, b] = 0 < a + b < A + B and _accept_cut(ctot, left, right, tab, lg_n, lg_3k)


@numba.njit(cache=True, parallel=True, nogil=True)
def _cuts(XT, order, codes, out):  # pragma: no cover - compiled
    """out[f, t]: a cut after feature f's sorted position t is worth evaluating: the values
    at t and t + 1 differ, and the blocks of equal values ending at t and starting at
    t + 1 are not both of one and the same class (Fayyad & Irani 1992, Theorem 1: along
    samples of one class the entropy of a cut is strictly concave, so the best cut lies
    at a boundary point; an interior cut is never better than the run's ends, which are
    kept; at an interval's edge the missing end is 'no cut', worse than any cut)."""
    q, n = XT.shape
    for f in numba.prange(q):
        block_class = np.empty(n, np.int64)  # the class of a pure block, -1 mixed
        t = 0
        while t < n:
            c = codes[order[f, t]]
            u = t
            while u + 1 < n and XT[f, order[f, u + 1]] == XT[f, order[f, t]]:
                u += 1
                if codes[order[f, u]] != c:
                    c = -1
            block_class[t:u + 1] = c
            t = u + 1
        for t in range(n - 1):
            same_run = block_class[t] >= 0 and block_class[t] == block_class[t + 1]
            out[f, t] = XT[f, order[f, t]] != XT[f, order[f, t + 1]] and not same_run
        out[f, n - 1] = False


def _two_class_roots(step, order, cand, W, tab, tabI, lg_n, lg_3k, sizes):
    """Root cuts (q x M; -1: none), their left class counts (q x M x 2) and whether the MDL
    test accepts them (q x M) for every (feature, resample), two classes of sizes (A, B)
    in every resample."""
    A, B = (int(v) for v in sizes)
    a = np.arange(A + 1)[:, None]
    b = np.arange(B + 1)[None, :]
    E2 = tabI[a + b] + tabI[A + B - a - b] - tabI[a] - tabI[b] - tabI[A - a] - tabI[B - b]
    E2[0, 0] = E2[A, B] = INT64_MAX  # no samples on one side: not a cut
    accepted = np.zeros((A + 1, B + 1), dtype=bool)
    _accept_table(A, B, tab, lg_n, lg_3k, accepted)
    q, M = order.shape[0], W.shape[0]
    best_t = np.empty((q, M), np.int64)
    best_left = np.empty((q, M, 2), np.int64)
    need = np.empty((q, M), dtype=bool)
    _two_class_roots_kernel(step, order, cand, np.ascontiguousarray(W.T), np.ascontiguousarray(E2).ravel(),
                            accepted.ravel(), B + 1, best_t, best_left, need)
    return best_t, best_left, need


def mdl_conditional_entropy(Xb: np.ndarray, codes: np.ndarray, K: int, W: np.ndarray, tab: np.ndarray,
                            tabI: np.ndarray, threads: int = 1) -> np.ndarray:
    """(q x M): sum over the final MDL intervals I of N_I Ent(I) (bits) of every column of
    ``Xb`` (n x q) under every row of the sample multiplicities ``W`` (M x n, each summing
    to the same N; ``tab``/``tabI``: x log2 x for 0..N in float and in exact fixed point).

    Cuts fall between distinct values only; of equally good cuts the lowest wins (cut
    entropies compared in fixed point); the acceptance test and the entropies of the final
    intervals are infogain's float formulas, term by term. Two classes of the same sizes in
    every resample: the first cut of every feature and resample comes from one pass with
    the resamples as vectors."""
    n, q = Xb.shape
    W = np.ascontiguousarray(W, dtype=np.int64)
    M = W.shape[0]
    codes = np.asarray(codes, dtype=np.int64)
    XT = np.ascontiguousarray(Xb.T)
    order = np.argsort(XT, axis=1)  # ties: cuts never fall inside them, so any order does
    _set_threads(threads)
    cand = np.empty((q, n), dtype=bool)  # cand[f, t]: a cut after sorted position t
    _cuts(XT, order, codes, cand)
    del XT
    ys = codes[order]
    N = int(W[0].sum()) if M else 0
    lg_n = np.log2(np.maximum(np.arange(N + 1, dtype=float) - 1, 1))
    lg_3k = np.log2(np.maximum(3.0 ** np.arange(K + 1) - 2, 1))  # k >= 1 classes
    tabI = np.asarray(tabI, dtype=np.int64)
    root_tot = np.ascontiguousarray(W @ (codes[:, None] == np.arange(K)), dtype=np.int64)  # class sizes
    if K == 2 and M and (root_tot == root_tot[0]).all() and (root_tot[0] + 1).prod() <= TWO_CLASS_TABLE:
        A, B = (int(v) for v in root_tot[0])
        root_t, root_left, need = _two_class_roots(np.where(ys == 0, B + 1, 1), order, cand, W, tab, tabI, lg_n,
                                                   lg_3k, (A, B))
    else:
        root_t = np.full((q, M), -2, dtype=np.int64)
        root_left = np.zeros((q, M, K), dtype=np.int64)
        need = np.ones((q, M), dtype=bool)
    out = np.empty((q, M))
    _mdl(ys, order, cand, W, need, root_tot, root_t, root_left, tab, tabI, lg_n, lg_3k, out)
    return out


@numba.njit(cache=True, nogil=True)
def _kth_deviation(vals, split, n_left, n_right, med, k):  # pragma: no cover - compiled
    """The k-th smallest |v - med| (0-based) of sorted values: the deviations below the
    median (med - vals[split - 1 - t]) and above it (vals[split + t] - med) are two
    sorted runs; binary search for how many come from the first."""
    lo = max(0, k + 1 - n_right)
    hi = min(k + 1, n_left)
    while lo < hi:
        i = (lo + hi) // 2
        j = k + 1 - i
        if j > 0 and med - vals[split - 1 - i] < vals[split + j - 1] - med:
            lo = i + 1
        else:
            hi = i
    j = k + 1 - lo
    d = -np.inf
    if lo > 0:
        d = med - vals[split - lo]
    if j > 0:
        d = max(d, vals[split + j - 1] - med)
    return d


@numba.njit(cache=True, nogil=True)
def _mad(vals, a, cnt):  # pragma: no cover - compiled
    """The median of |v - median| of the sorted vals[a:a + cnt], as numpy's median
    (the mean of the two middle order statistics)."""
    lo, hi = (cnt - 1) // 2, cnt // 2
    med = 0.5 * (vals[a + lo] + vals[a + hi])
    split = a + np.searchsorted(vals[a:a + cnt], med)  # first value >= med
    n_left, n_right = split - a, a + cnt - split
    return 0.5 * (_kth_deviation(vals, split, n_left, n_right, med, lo)
                  + _kth_deviation(vals, split, n_left, n_right, med, hi))


@numba.njit(cache=True, nogil=True, inline="always")
def _insertion_pass(vals, num, den, a, e):  # pragma: no cover - compiled
    """Insertion sort of vals[a:e], num and den moved alongside: cheap when nearly sorted."""
    for t in range(a + 1, e):
        v = vals[t]
        if vals[t - 1] <= v:
            continue
        nt, dt = num[t], den[t]
        u = t - 1
        while u >= a and vals[u] > v:
            vals[u + 1], num[u + 1], den[u + 1] = vals[u], num[u], den[u]
            u -= 1
        vals[u + 1], num[u + 1], den[u + 1] = v, nt, dt


@numba.njit(cache=True, parallel=True, nogil=True, error_model="numpy")
def _mad_cv(numer, sd, w, starts, order0, out):  # pragma: no cover - compiled
    """Rows r in parallel; features grouped by bin (``starts``), numer and s_i put in the
    order of numer / (s_i + w[r, 0]) within each bin by one pass over ``order0`` (that
    order over the whole row), then kept sorted from one offset to the next by insertion
    sort (within a bin the s_i are close, so the order barely changes with w); each
    offset's values are one vectorised pass."""
    R, J = out.shape
    p = numer.shape[1]
    nb = starts.shape[1] - 1
    for r in numba.prange(R):
        vals = np.empty(p)
        num = np.empty(p)
        den = np.empty(p)
        bin_of = np.empty(p, np.int64)
        for b in range(nb):
            bin_of[starts[r, b]:starts[r, b + 1]] = b
        slot = starts[r, :nb].copy()
        for t in order0[r]:  # a stable counting sort by bin
            b = bin_of[t]
            num[slot[b]], den[slot[b]] = numer[r, t], sd[r, t]
            slot[b] += 1
        mads = np.empty(nb)
        for j in range(J):
            wj = w[r, j]
            for b in range(nb):
                a, e = starts[r, b], starts[r, b + 1]
                for t in range(a, e):
                    v = num[t] / (den[t] + wj)
                    vals[t] = v if np.isfinite(v) else np.inf  # not finite: left out, last
                _insertion_pass(vals, num, den, a, e)
                cnt = e - a
                while cnt > 0 and vals[a + cnt - 1] == np.inf:
                    cnt -= 1
                mads[b] = _mad(vals, a, cnt) if cnt > 0 else np.nan
            s = 0.0
            c = 0
            for b in range(nb):
                if not np.isnan(mads[b]):
                    s += mads[b]
                    c += 1
            if c < 2:
                out[r, j] = np.nan
                continue
            mean = s / c
            ss = 0.0
            for b in range(nb):
                if not np.isnan(mads[b]):
                    ss += (mads[b] - mean) ** 2
            out[r, j] = np.sqrt(ss / (c - 1)) / mean


def binned_mad_cv(numer: np.ndarray, sd: np.ndarray, w: np.ndarray, starts: np.ndarray,
                  threads: int = 1) -> np.ndarray:
    """(R x J): for every row r and offset w[r, j], the coefficient of variation (ddof 1) over
    the bins of the MAD (without its constant) of the finite numer / (sd + w) within each bin;
    the features of a row are grouped by bin, bin b holding positions starts[r, b] to
    starts[r, b + 1] (NaN with < 2 non-empty bins)."""
    numer, sd = np.ascontiguousarray(numer, dtype=float), np.ascontiguousarray(sd, dtype=float)
    w = np.ascontiguousarray(w, dtype=float)
    out = np.empty((numer.shape[0], w.shape[1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        v0 = numer / (sd + w[:, :1])  # the kernel's first values, sorted by numpy's faster sort
    order0 = stable_argsort(np.where(np.isfinite(v0), v0, np.inf))
    _set_threads(threads)
    _mad_cv(numer, sd, w, np.ascontiguousarray(starts, dtype=np.int64), order0, out)
    return out


@numba.njit(cache=True, parallel=True, nogil=True)
def _ranges(xs, order, W, out):  # pragma: no cover - compiled
    q, n = xs.shape
    for f in numba.prange(q):
        for m in range(W.shape[0]):
            lo = 0
            while W[m, order[f, lo]] == 0:
                lo += 1
            hi = n - 1
            while W[m, order[f, hi]] == 0:
                hi -= 1
            out[m, f] = xs[f, hi] - xs[f, lo]


def resample_ranges(X: np.ndarray, W: np.ndarray, threads: int = 1) -> np.ndarray:
    """(M x p) max - min of every column of X over the samples of every row of the
    multiplicities W (M x n, each with a positive entry): one sort per feature for all."""
    XT = np.ascontiguousarray(np.asarray(X, dtype=float).T)
    order = np.argsort(XT, axis=1)
    xs = np.take_along_axis(XT, order, axis=1)
    out = np.empty((W.shape[0], XT.shape[0]))
    _set_threads(threads)
    _ranges(xs, order, np.ascontiguousarray(W, dtype=np.int64), out)
    return out


@numba.njit(cache=True, parallel=True, nogil=True)
def _absdiff(X, a, b, out):  # pragma: no cover - compiled
    n = X.shape[0]
    for u in numba.prange(n - 1):
        row = u * (2 * n - u - 1) // 2  # pairs (u, v > u) in np.triu_indices order
        for v in range(u + 1, n):
            for f in range(a, b):
                out[row + v - u - 1, f - a] = abs(X[u, f] - X[v, f])


def pair_absdiff(X: np.ndarray, a: int, b: int, out: np.ndarray, threads: int = 1) -> np.ndarray:
    """|x_u - x_v| over the features a..b-1 of every sample pair u < v (np.triu_indices
    order) into ``out`` (n (n - 1) / 2 x (b - a), C order)."""
    _set_threads(threads)
    _absdiff(X, int(a), int(b), out)
    return out


@numba.njit(cache=True, parallel=True, nogil=True)
def _class_sums(X, X2, W, codes, block, sums, sq):  # pragma: no cover - compiled
    """sums[r, c] += W[r, i] X[i] and sq[r, c] += W[r, i] X2[i] over the samples i of class c,
    i ascending (each row r on its own: the same values whatever else is summed alongside);
    features in blocks, so a block of X stays in cache across the rows of W."""
    n, p = X.shape
    for blk in numba.prange((p + block - 1) // block):
        lo = blk * block
        hi = min(lo + block, p)
        for r in range(W.shape[0]):
            for i in range(n):
                w = W[r, i]
                if w == 0.0:
                    continue
                s, x = sums[r, codes[i], lo:hi], X[i, lo:hi]  # one array per loop: vectorised
                for f in range(hi - lo):
                    s[f] += w * x[f]
                q, x2 = sq[r, codes[i], lo:hi], X2[i, lo:hi]
                for f in range(hi - lo):
                    q[f] += w * x2[f]


def class_sums(X: np.ndarray, codes: np.ndarray, K: int, W: np.ndarray, threads: int = 1):
    """(sums, sums of squares), each R x K x p: per row of the sample weights ``W`` (R x n) and
    per class, sum_i W[r, i] X[i] and sum_i W[r, i] X[i]^2 (samples in index order). A row's
    sums do not depend on the other rows (a matrix product's blocking would make them depend
    on R: bootstrap resamples scored in parts would differ in the last bit)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    W = np.ascontiguousarray(W, dtype=np.float64)
    R, p = W.shape[0], X.shape[1]
    sums, sq = np.zeros((R, K, p)), np.zeros((R, K, p))
    _set_threads(threads)
    _class_sums(X, X * X, W, np.asarray(codes, dtype=np.int64), 2048, sums, sq)
    return sums, sq


@numba.njit(cache=True, parallel=True, nogil=True)
def _sam(sums, sq, counts, a, b, out_numer, out_sd):  # pragma: no cover - compiled
    """SAM numerator and s_i from class sums and sums of squares (numpy's order of
    operations in :func:`ssfs.methods.sam.sam_parts`)."""
    R, K, p = sums.shape
    n = 0.0
    dof = 0.0
    for k in range(K):
        n += counts[k]
        dof += counts[k] - 1
    for r in numba.prange(R):
        for f in range(p):
            ss = 0.0
            mbar = 0.0
            for k in range(K):
                m = sums[r, k, f] / counts[k]
                v = sq[r, k, f] - counts[k] * (m * m)  # (n_k - 1) v_k
                ss += v if v > 0.0 else 0.0
                mbar += sums[r, k, f]
            if K == 2:
                out_numer[r, f] = sums[r, 1, f] / counts[1] - sums[r, 0, f] / counts[0]
                out_sd[r, f] = np.sqrt(ss * a / b)
            else:
                mbar = mbar / n
                acc = 0.0
                for k in range(K):
                    d = sums[r, k, f] / counts[k] - mbar
                    acc += counts[k] * (d * d)
                out_numer[r, f] = np.sqrt(a * acc)
                out_sd[r, f] = np.sqrt(ss / dof * b)


def sam_parts(sums: np.ndarray, sq: np.ndarray, counts: np.ndarray, threads: int = 1):
    """(numer, sd), each R x p, of the SAM statistic from R x K x p class sums and sums of
    squares (:func:`ssfs.methods.sam.sam_parts`): two classes d_i's numerator
    mean_2 - mean_1 and s_i = sqrt(sum_k (n_k - 1) v_k a / b), a = 1/n1 + 1/n2,
    b = n1 + n2 - 2; more, sqrt(a sum_k n_k (mean_k - mean)^2) with a = n / prod(n_k) and
    s_i = sqrt(sum_k (n_k - 1) v_k / sum_k (n_k - 1) b), b = sum_k 1/n_k."""
    counts = np.asarray(counts, dtype=float)
    R, K, p = sums.shape
    if K == 2:
        n1, n2 = counts
        a, b = 1 / n1 + 1 / n2, n1 + n2 - 2
    else:
        n = counts.sum()
        a, b = float(np.exp(np.log(n) - np.log(counts).sum())), float((1.0 / counts).sum())
    numer, sd = np.empty((R, p)), np.empty((R, p))
    _set_threads(threads)
    _sam(np.ascontiguousarray(sums), np.ascontiguousarray(sq), counts, a, b, numer, sd)
    return numer, sd

