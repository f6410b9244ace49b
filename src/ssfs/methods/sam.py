"""SAM: Significance Analysis of Microarrays (Tusher, Tibshirani & Chu 2001), as in R's samr.

Two classes ("Two class unpaired"): d_i = (mean_2 - mean_1) / (s_i + s0) with
s_i = sqrt((1/n1 + 1/n2) * ((n1-1) v1 + (n2-1) v2) / (n1 + n2 - 2)), class 2 being
the larger class code. More classes ("Multiclass"): d_i = r_i / (s_i + s0) with
r_i = sqrt(n / prod(n_k) * sum_k n_k (mean_k - mean)^2) and
s_i = sqrt(sum_k (n_k-1) v_k / sum_k (n_k-1) * sum_k 1/n_k).

The exchangeability factor s0 follows samr's ``est.s0``: for each percentile
alpha in 0, 0.05, ..., 1 of the s_i (alpha = 0 meaning s0 = 0), the statistic
r_i/(s_i + s0(alpha)) is split into the (up to) 100 quantile bins of s_i, the
median absolute deviation is taken in every bin and the alpha minimising the
coefficient of variation of those MADs is chosen; s0 is then that percentile
of the non-zero s_i. No permutations are needed for the ranking (the EFSIS code
ranked genes by samr's Score(d) with the sign of down-regulated genes flipped,
i.e. by |d|, which is ``score="abs"``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import InputError
from ..params import NonNegFloat
from ..ranking import stable_argsort
from ..registry import SelectionResult, register
from ._labeled import labeled, resample_counts
from ._shared.invariance import EVERY

S0_PERCENTILES = np.round(np.arange(0, 21) * 0.05, 10)


def sam_parts(X: np.ndarray, codes: np.ndarray, counts: np.ndarray, weights: np.ndarray | None = None,
              threads: int = 1):
    """Numerator r_i and standard deviation s_i of the SAM statistic (samr ttest.func / multiclass.func;
    formulas in :func:`ssfs.methods._shared.ranker_kernels.sam_parts`).

    ``weights``: R x n sample multiplicities (e.g. bootstrap resamples, each holding
    ``counts`` of every class); then both are R x p, one row per weighting, each row's
    values independent of the others (:func:`~ssfs.methods._shared.ranker_kernels.class_sums`)."""
    from ._shared import ranker_kernels  # lazy: numba (about 1 s) when it runs

    W = np.ones((1, codes.size)) if weights is None else weights
    sums, sq = ranker_kernels.class_sums(X, codes, counts.size, W, threads)
    numer, sd = ranker_kernels.sam_parts(sums, sq, counts, threads)
    return (numer[0], sd[0]) if weights is None else (numer, sd)


def sorted_quantiles(ss: np.ndarray, q) -> np.ndarray:
    """``np.quantile(ss, q, axis=1).T`` for rows already sorted ascending (no NaN), numpy's
    default 'linear' rule term by term, without numpy's partition of every row."""
    n = ss.shape[1]
    virtual = (n - 1) * np.asarray(q, dtype=float)
    prev = np.floor(virtual)
    nxt = prev + 1
    prev[virtual >= n - 1] = nxt[virtual >= n - 1] = -1
    prev[virtual < 0] = nxt[virtual < 0] = 0
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = virtual - prev
    a, b = ss[:, prev], ss[:, nxt]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def estimate_s0(numer: np.ndarray, sd: np.ndarray, percentiles=S0_PERCENTILES, threads: int = 1):
    """samr's est.s0: (s0, chosen percentile); for R x p inputs (one row per resample), arrays
    of R of each. The per-bin MADs are :func:`ssfs.methods._shared.ranker_kernels.binned_mad_cv`."""
    from ._shared.ranker_kernels import binned_mad_cv  # lazy: numba (about 1 s) when it runs

    rows = np.ndim(sd) == 2
    numer, sd = np.atleast_2d(numer), np.atleast_2d(sd)
    R, p = sd.shape
    perc = np.asarray(percentiles, dtype=float)
    order = stable_argsort(sd)  # sorted s_i: each quantile bin is a run of positions
    ss = np.stack([s.take(o) for s, o in zip(sd, order, strict=True)])
    breaks = sorted_quantiles(ss, np.linspace(0, 1, 101))
    nbins = np.zeros(R, dtype=np.int64)
    starts = np.full((R, 101), p, dtype=np.int64)
    for r in range(R):  # loop over resamples: samr's breaks of cut(sd, br), right-closed bins
        br = np.unique(breaks[r])  # (the minimum, NA in R, goes to bin 1)
        nbins[r] = br.size - 1
        starts[r, 0] = 0
        starts[r, 1:br.size - 1] = np.searchsorted(ss[r], br[1:-1], side="right")
    s0, chosen = np.zeros(R), np.zeros(R)
    live = np.flatnonzero((nbins >= 1) & (ss[:, -1] > 0))
    if live.size:
        w = sorted_quantiles(ss[live], perc)
        w[:, 0] = 0.0  # samr: w[j == 1] <- 0
        with np.errstate(divide="ignore", invalid="ignore"):
            cv = binned_mad_cv(np.stack([numer[r].take(order[r]) for r in live]), ss[live], w,
                               starts[live, :nbins.max() + 1], threads)
        for r, c in zip(live, cv, strict=True):
            if np.any(np.isfinite(c)):
                o = int(np.nanargmin(c))
                s0[r], chosen[r] = float(sorted_quantiles(ss[r:r + 1, ss[r] != 0], perc[o:o + 1])[0, 0]), perc[o]
    return (s0, chosen) if rows else (float(s0[0]), float(chosen[0]))


def sam_statistic(X, codes, counts, s0="auto", weights=None, threads: int = 1) -> tuple[np.ndarray, float, float]:
    """The SAM d statistic of every feature, with the s0 used and its percentile (NaN if given);
    with ``weights`` (R x n multiplicities, see :func:`sam_parts`) R x p, R and R."""
    numer, sd = sam_parts(X, codes, counts, weights, threads)
    if isinstance(s0, str):
        if s0 != "auto":
            raise InputError(f"sam: s0 must be 'auto' or a number >= 0, got {s0!r}")
        s0v, perc = estimate_s0(numer, sd, threads=threads)
    else:
        s0v, perc = float(s0), float("nan")
        if not s0v >= 0:
            raise InputError(f"sam: s0 must be 'auto' or a number >= 0, got {s0!r}")
        if weights is not None:
            s0v, perc = np.full(sd.shape[0], s0v), np.full(sd.shape[0], perc)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = numer / (sd + (s0v[:, None] if weights is not None else s0v))
    return d, s0v, perc


def bootstrap_scores(X, codes, boots: np.ndarray, seeds=None, *, score: str = "abs", s0="auto", threads: int = 1):
    """SAM scores of every bootstrap resample ``X[boots[m]]`` (M x n index matrix) at once,
    equal to :func:`sam_score` per resample up to rounding (class sums weighted by the
    multiplicities; a resample's scores do not depend on the others). None when the
    resamples' class sizes differ or one is < 2 (the per-resample path, which explains the
    error)."""
    X = np.asarray(X, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    boots = np.asarray(boots, dtype=np.int64)
    W, counts = resample_counts(boots, codes)
    if score not in ("abs", "signed") or (counts != counts[0]).any() or (counts[0] < 2).any():
        return None
    d, _, _ = sam_statistic(X, codes, counts[0], s0, weights=W, threads=threads)
    return np.abs(d) if score == "abs" else d


def _sam_invariances(params: dict) -> frozenset:
    """s0 is a percentile of every feature's s_i: a feature's scale moves the others'
    scores; a given s0 is in the unit of X."""
    return EVERY - {"scale"} - (set() if params.get("s0", "auto") == "auto" else {"unit"})


@register("sam", higher_is_better=True, needs=("labels",), invariances=_sam_invariances)
def sam_score(X, y, constraints, rng, *, score: Literal["abs", "signed"] = "abs",
              s0: Literal["auto"] | NonNegFloat = "auto"):
    """SAM d statistic (Tusher et al. 2001; samr two-class / multiclass), ranked by |d| or signed d."""
    if score not in ("abs", "signed"):
        raise InputError(f"sam: score must be 'abs' or 'signed', got {score!r}")
    XL, codes, counts = labeled(X, y, method="sam")
    if (counts < 2).any():
        raise InputError(f"sam needs at least 2 labeled samples per class, got class sizes {counts.tolist()}")
    d, s0v, perc = sam_statistic(XL, codes, counts, s0)
    return SelectionResult(scores=np.abs(d) if score == "abs" else d, extra={"s0": s0v, "s0_percentile": perc})
