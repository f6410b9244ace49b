"""Information gain of each feature after discretisation (the R filter used by EFSIS:
FSelectorRcpp::information_gain, type "infogain" = H(class) + H(A) - H(class, A)).

Discretisation (``discretize``):

- ``"mdl"`` (default, as FSelectorRcpp / Weka): Fayyad & Irani (1993) recursive
  entropy minimisation with the MDL stopping rule: the best boundary cut T of an
  interval S (N samples, k classes) is accepted iff
  Gain(T; S) > log2(N - 1)/N + [log2(3^k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2))]/N.
  A feature left with a single interval has gain 0.
- ``"equal_width"``: ``n_bins`` equal-width bins between the feature's min and max.

The MDL recursion runs compiled (:mod:`ssfs.methods._shared.ranker_kernels`) over each
feature's distinct values, for the data itself or for many bootstrap resamples at once
(:func:`bootstrap_scores`: one sort per feature serves every resample, the samples
weighted by their multiplicities). Entropies in bits. Ties between equally good cuts go to
the lowest cut, exactly (cut entropies are compared in fixed point, where equal
class-count multisets give equal sums).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from .._threads import job_threads
from ..errors import InputError
from ..params import Range
from ..registry import SelectionResult, register
from ._labeled import labeled, resample_counts
from ._shared.invariance import EVERY

#: samples x features per block (bounds the sorted copies: 24 bytes per element)
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


def _fixed_point_table(tab: np.ndarray) -> np.ndarray:
    """x log2 x as 64-bit fixed point (largest entry < 2^60): sums of table entries are
    exact, so cuts whose class counts are equal as multisets tie exactly (the first one
    wins) and running sums along the sorted samples carry no rounding."""
    scale = 2.0 ** (60 - int(np.ceil(np.log2(max(tab[-1], 1.0) + 1.0))))
    return np.rint(tab * scale).astype(np.int64)


def _mdl_gain(X: np.ndarray, codes: np.ndarray, W: np.ndarray, threads: int = 1) -> np.ndarray:
    """(M x p) information gain after MDL discretisation of every column of X (n x p) for
    every row of sample multiplicities ``W`` (M x n, each summing to N: a bootstrap resample
    is the samples with multiplicities, so every resample shares one sort per feature), in
    feature blocks that bound memory."""
    from ._shared.ranker_kernels import mdl_conditional_entropy  # lazy: numba (about 1 s) when it runs

    n, p = X.shape
    K = int(codes.max()) + 1
    N = int(W[0].sum())
    tab = _xlogx_table(N)
    tab_fixed = _fixed_point_table(tab)
    H_class = _ent_times_n((W @ (codes[:, None] == np.arange(K))).T, tab) / N  # per resample
    step = max(1, MAX_BLOCK_ELEMENTS // max(1, n))
    out = np.empty((W.shape[0], p))
    for a in range(0, p, step):  # feature blocks
        sl = slice(a, min(a + step, p))
        out[:, sl] = H_class[:, None] - mdl_conditional_entropy(X[:, sl], codes, K, W, tab, tab_fixed, threads).T / N
    return np.maximum(out, 0.0)


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


def information_gain(X: np.ndarray, codes: np.ndarray, *, discretize: str = "mdl", n_bins: int = 10,
                     threads: int | None = None) -> np.ndarray:
    """Information gain (bits) of every column of dense X for class codes 0..K-1."""
    codes = np.asarray(codes, dtype=np.int64)
    n, p = X.shape
    if discretize == "mdl":
        return _mdl_gain(X, codes, np.ones((1, n), dtype=np.int64), job_threads(threads))[0]
    if discretize != "equal_width":
        raise InputError(f"infogain: discretize must be 'mdl' or 'equal_width', got {discretize!r}")
    K = int(codes.max()) + 1
    step = max(1, MAX_BLOCK_ELEMENTS // max(1, n))
    out = np.empty(p)
    for a in range(0, p, step):  # feature blocks bound memory
        sl = slice(a, min(a + step, p))
        out[sl] = _equal_width_block(X[:, sl], codes, K, int(n_bins))
    return np.maximum(out, 0.0)


def bootstrap_scores(X, codes, boots: np.ndarray, seeds=None, *, discretize: str = "mdl", n_bins: int = 10,
                     threads: int = 1):
    """Information gain of every bootstrap resample ``X[boots[m]]`` (M x n index matrix) at once
    (M x p), equal to ``information_gain(X[b], codes[b])`` per resample. Returns None for
    ``discretize="equal_width"`` (the per-resample path)."""
    if discretize != "mdl":
        return None
    codes = np.asarray(codes, dtype=np.int64)
    return _mdl_gain(np.asarray(X, dtype=np.float64), codes, resample_counts(boots, codes)[0], threads)


@register("infogain", higher_is_better=True, needs=("labels",), invariances=EVERY)
def infogain_score(X, y, constraints, rng, *, discretize: Literal["mdl", "equal_width"] = "mdl",
                   n_bins: Annotated[int, Range(2)] = 10):
    """Information gain after Fayyad-Irani MDL (or equal-width) discretisation (FSelectorRcpp)."""
    if int(n_bins) < 2:
        raise InputError(f"infogain: n_bins must be >= 2, got {n_bins}")
    XL, codes, _ = labeled(X, y, method="infogain")
    return SelectionResult(scores=information_gain(XL, codes, discretize=discretize, n_bins=n_bins))
