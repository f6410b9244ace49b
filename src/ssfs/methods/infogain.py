"""Information gain of each feature after discretisation (the R filter used by EFSIS:
FSelectorRcpp::information_gain, type "infogain" = H(class) + H(A) - H(class, A)).

Discretisation (``discretize``):

- ``"mdl"`` (default, as FSelectorRcpp / Weka): Fayyad & Irani (1993) recursive
  entropy minimisation with the MDL stopping rule: the best boundary cut T of an
  interval S (N samples, k classes) is accepted iff
  Gain(T; S) > log2(N - 1)/N + [log2(3^k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2))]/N.
  A feature left with a single interval has gain 0.
- ``"equal_width"``: ``n_bins`` equal-width bins between the feature's min and max.

All features of a block are discretised together: each recursion level evaluates
every candidate cut of every open interval of every feature in one vectorized pass,
in O(samples) whatever the number of classes (running sums of x log2 x over class
ranks along the per-feature sort; see ``_mdl_block``). Entropies in bits. Ties
between equally good cuts go to the lowest cut, exactly (cut entropies are compared
in fixed point, where equal class-count multisets give equal sums).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from ..errors import InputError
from ..params import Range
from ..registry import SelectionResult, register
from ._labeled import labeled

#: samples x features per block (bounds the work arrays: ~90 bytes per element, Isolet peak 23 MB)
MAX_BLOCK_ELEMENTS = 1 << 18


def _xlogx_table(n: int) -> np.ndarray:
    c = np.arange(n + 1, dtype=np.float64)
    return np.where(c > 0, c * np.log2(np.maximum(c, 1)), 0.0)


def _ent_times_n(counts: np.ndarray, tab: np.ndarray, tab_tot=None) -> np.ndarray:
    """N * Ent(S) from integer class counts (first axis = classes, summed elementwise);
    ``tab_tot`` = tab[N] when the totals are known (broadcastable)."""
    acc = tab[counts[0]]
    tot = counts[0].copy() if tab_tot is None else None
    for c in range(1, counts.shape[0]):  # loop over classes
        acc += tab[counts[c]]
        if tot is not None:
            tot += counts[c]
    return (tab[tot] if tab_tot is None else tab_tot) - acc


def _mdl_test(Ctot, left, right, e, tab):
    """Fayyad-Irani MDL acceptance of the best cut of each interval (columns; classes first)."""
    NS = Ctot.sum(axis=0).astype(float)
    entS = _ent_times_n(Ctot, tab) / NS
    gain = entS - e / NS
    k = (Ctot > 0).sum(axis=0)
    k1 = (left > 0).sum(axis=0)
    k2 = (right > 0).sum(axis=0)
    e1 = _ent_times_n(left, tab) / np.maximum(left.sum(axis=0), 1)
    e2 = _ent_times_n(right, tab) / np.maximum(right.sum(axis=0), 1)
    delta = np.log2(3.0**k - 2) - (k * entS - k1 * e1 - k2 * e2)
    return gain > (np.log2(np.maximum(NS - 1, 1)) + delta) / NS


def _fixed_point_table(tab: np.ndarray) -> np.ndarray:
    """x log2 x as unsigned 64-bit fixed point (largest entry < 2^60): sums of table entries
    are exact, so cuts whose class counts are equal as multisets tie exactly (the first one
    wins) and running sums along the sorted samples carry no rounding. Arithmetic on it wraps
    modulo 2^64 (defined for unsigned integers); every quantity read off it is a difference
    whose true value lies in [0, 2^62), so the wrapped result is exact."""
    scale = 2.0 ** (60 - int(np.ceil(np.log2(max(tab[-1], 1.0) + 1.0))))
    return np.rint(tab * scale).astype(np.uint64)


def _sorted_class_ranks(Xb: np.ndarray, codes: np.ndarray, K: int):
    """Per feature (rows), along its sorted samples: the class codes ``ys``, each sample's
    1-based rank within its class ``rank``, the candidate cuts ``cand`` (between distinct
    values) and the class sizes ``n_c``; ranks from a stable radix sort of the class codes."""
    n, q = Xb.shape
    # feature-major layout: feature f's sorted samples are a contiguous row
    XT = np.ascontiguousarray(Xb.T)
    # ties: cuts only fall between distinct values, so the order within ties is irrelevant
    order = np.argsort(XT, axis=1)
    xs = np.take_along_axis(XT, order, axis=1)
    cand = np.zeros((q, n), dtype=bool)  # cand[f, t]: a cut between sorted positions t and t + 1
    cand[:, :-1] = xs[:, 1:] != xs[:, :-1]
    del XT, xs
    cdt = np.int8 if K <= 127 else np.int16 if K <= 32767 else np.int64
    ys = codes.astype(cdt)[order]
    del order
    n_c = np.bincount(codes, minlength=K)
    start = np.concatenate([[0], np.cumsum(n_c)[:-1]])
    by_class = np.argsort(ys, axis=1, kind="stable")  # radix sort: positions grouped by class
    cls_sorted = np.repeat(np.arange(K), n_c)  # the same for every feature
    rank = np.empty((q, n), dtype=np.intp)
    np.put_along_axis(rank, by_class, (np.arange(n) - start[cls_sorted] + 1)[None, :], axis=1)
    del by_class
    return ys, rank, cand, n_c


def _first_cuts(ys, rank, cand, n_c, tabI, dI):
    """Level 0 (one interval per feature, all of [0, n)): the features with a candidate cut
    ``bseg`` and their first best cut ``cut`` (the minimum of N_l Ent(S_l) + N_r Ent(S_r))."""
    n = ys.shape[1]
    tot = n_c[ys]
    G = np.cumsum(dI[rank - 1] - dI[tot - rank], axis=1)  # uint64, wraps for negative sums
    del tot
    sum_tot = tabI[n_c].sum(dtype=np.uint64)
    i = np.arange(1, n)
    e = (tabI[i] + tabI[n - i] - sum_tot)[None, :] - G[:, :-1]
    e = np.where(cand[:, :-1], e.view(np.int64), np.iinfo(np.int64).max)
    del G
    bseg = np.flatnonzero(cand.any(axis=1))
    cut = np.argmin(e[bseg], axis=1) + 1 if bseg.size else np.zeros(0, dtype=np.intp)  # first minimum
    return bseg, cut


def _mdl_block(Xb: np.ndarray, codes: np.ndarray, K: int) -> np.ndarray:
    """Information gain after MDL discretisation, for a block of features (n x q).

    Each recursion level handles all open intervals of all features at once, in O(samples)
    per interval whatever the number of classes: along the sorted samples of an interval,
    sum_c xlog2x(left count of c) grows by xlog2x(r) - xlog2x(r - 1) at a sample whose class
    occurs for the r-th time (and the right side's sum shrinks likewise), so
    N_l Ent(S_l) + N_r Ent(S_r) of every cut is one running sum (exact, in fixed point).
    A sample's rank within its class along the sort comes from a stable radix sort of the
    small class codes (no K x n x q cumulative count array)."""
    n, q = Xb.shape
    tab = _xlogx_table(n)
    tabI = _fixed_point_table(tab)
    dI = tabI[1:] - tabI[:-1]  # dI[m] = xlog2x(m + 1) - xlog2x(m), nonnegative
    H_class = float(_ent_times_n(np.bincount(codes, minlength=K)[:, None], tab)[0]) / n
    ys, rank, cand, n_c = _sorted_class_ranks(Xb, codes, K)
    bseg, cut = _first_cuts(ys, rank, cand, n_c, tabI, dI)
    f_open = np.arange(q)
    lo = np.zeros(q, dtype=np.intp)
    hi = np.full(q, n, dtype=np.intp)
    Clo = np.zeros((q, K), dtype=np.int64)
    Chi = np.broadcast_to(n_c, (q, K)).copy()
    ys = ys.ravel()
    rank = rank.ravel()
    cand = cand.ravel()
    cond = np.zeros(q)  # sum over final intervals of N_I * Ent(I)
    first_level = True
    while f_open.size:
        m = f_open.size
        Ctot = Chi - Clo
        entS = _ent_times_n(Ctot.T, tab)
        lengths = hi - lo
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        if first_level:
            seg = np.repeat(np.arange(q), n)
            pos = np.tile(np.arange(n), q)
            cls = ys
        else:
            seg = np.repeat(np.arange(m), lengths)
            pos = lo[seg] + (np.arange(seg.size) - starts[seg])
            fi = f_open[seg] * n + pos
            cls = ys[fi]
            r = rank[fi] - Clo[seg, cls]  # rank among the interval's samples of that class
            tot = Ctot[seg, cls]
            cs = np.cumsum(dI[r - 1] - dI[tot - r])
            base = np.zeros(m, dtype=np.uint64)
            base[1:] = cs[starts[1:] - 1]
            nl = pos - lo[seg] + 1  # samples left of a cut after position pos
            e = tabI[nl] + tabI[lengths[seg] - nl] - tabI[Ctot].sum(axis=1, dtype=np.uint64)[seg] - (cs - base[seg])
            valid = cand[fi] & (nl < lengths[seg])
            e = np.where(valid, e.view(np.int64), np.iinfo(np.int64).max)
            emin = np.minimum.reduceat(e, starts)
            hit = np.flatnonzero(valid & (e == emin[seg]))
            hs = seg[hit]
            first = np.ones(hit.size, dtype=bool)
            first[1:] = hs[1:] != hs[:-1]
            bseg = hs[first]  # intervals with a candidate cut, and their first best cut
            cut = pos[hit[first]] + 1
        accept = np.zeros(m, dtype=bool)
        cuts = np.zeros(m, dtype=np.intp)
        Ccut = np.zeros_like(Clo)
        if bseg.size:
            cuts[bseg] = cut
            left_of = pos < cuts[seg]  # class counts left of each interval's cut
            Ccut = Clo + np.bincount(seg[left_of] * K + cls[left_of], minlength=m * K).reshape(m, K)
            left = (Ccut[bseg] - Clo[bseg]).T
            right = (Chi[bseg] - Ccut[bseg]).T
            eb = _ent_times_n(left, tab) + _ent_times_n(right, tab)
            accept[bseg] = _mdl_test(Ctot[bseg].T, left, right, eb, tab)
        done = ~accept
        np.add.at(cond, f_open[done], entS[done])
        fa, la, ha, ca = f_open[accept], lo[accept], hi[accept], cuts[accept]
        f_open = np.concatenate([fa, fa])
        lo = np.concatenate([la, ca])
        hi = np.concatenate([ca, ha])
        Clo, Chi = np.concatenate([Clo[accept], Ccut[accept]]), np.concatenate([Ccut[accept], Chi[accept]])
        first_level = False
    return H_class - cond / n


def _equal_width_block(Xb, codes, K, n_bins):
    n, q = Xb.shape
    w = np.ones(n)
    mn = Xb.min(axis=0)
    mx = Xb.max(axis=0)
    width = np.where(mx > mn, (mx - mn) / n_bins, 1.0)
    b = np.clip(np.floor((Xb - mn) / width).astype(np.int64), 0, n_bins - 1)
    idx = (np.arange(q)[None, :] * n_bins + b) * K + codes[:, None]
    cnt = np.bincount(idx.ravel(), weights=np.broadcast_to(w[:, None], (n, q)).ravel(),
                      minlength=q * n_bins * K).reshape(q, n_bins, K)
    N = w.sum()

    def H(c):
        with np.errstate(divide="ignore", invalid="ignore"):
            pr = c / c.sum(axis=-1, keepdims=True)
            return -np.nansum(np.where(pr > 0, pr * np.log2(pr), 0.0), axis=-1)

    hc = H(cnt.sum(axis=(0, 1)))
    nb = cnt.sum(axis=2)
    return hc - (nb / N * H(cnt)).sum(axis=1)


def information_gain(X: np.ndarray, codes: np.ndarray, *, discretize: str = "mdl", n_bins: int = 10) -> np.ndarray:
    """Information gain (bits) of every column of dense X for class codes 0..K-1."""
    n, p = X.shape
    K = int(codes.max()) + 1
    step = max(1, MAX_BLOCK_ELEMENTS // max(1, n))
    out = np.empty(p)
    for a in range(0, p, step):  # feature blocks bound memory
        sl = slice(a, min(a + step, p))
        if discretize == "mdl":
            out[sl] = _mdl_block(X[:, sl], codes, K)
        elif discretize == "equal_width":
            out[sl] = _equal_width_block(X[:, sl], codes, K, int(n_bins))
        else:
            raise InputError(f"infogain: discretize must be 'mdl' or 'equal_width', got {discretize!r}")
    return np.maximum(out, 0.0)


@register("infogain", higher_is_better=True, needs=("labels",))
def infogain_score(X, y, constraints, rng, *, discretize: Literal["mdl", "equal_width"] = "mdl",
                   n_bins: Annotated[int, Range(2)] = 10):
    """Information gain after Fayyad-Irani MDL (or equal-width) discretisation (FSelectorRcpp)."""
    if int(n_bins) < 2:
        raise InputError(f"infogain: n_bins must be >= 2, got {n_bins}")
    XL, codes, _ = labeled(X, y, method="infogain")
    return SelectionResult(scores=information_gain(XL, codes, discretize=discretize, n_bins=n_bins))
