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
from ..registry import SelectionResult, register
from ._labeled import labeled

S0_PERCENTILES = np.round(np.arange(0, 21) * 0.05, 10)


def sam_parts(X: np.ndarray, codes: np.ndarray, counts: np.ndarray):
    """Numerator r_i and standard deviation s_i of the SAM statistic (samr ttest.func / multiclass.func)."""
    K = counts.size
    onehot = np.zeros((K, codes.size))
    onehot[codes, np.arange(codes.size)] = 1.0
    sums = onehot @ X
    means = sums / counts[:, None]
    ss = onehot @ (X * X) - counts[:, None] * means**2  # (n_k - 1) v_k
    ss = np.maximum(ss, 0.0)
    if K == 2:
        n1, n2 = counts
        sd = np.sqrt(ss.sum(axis=0) * (1 / n1 + 1 / n2) / (n1 + n2 - 2))
        numer = means[1] - means[0]
    else:
        n = counts.sum()
        mbar = sums.sum(axis=0) / n
        fac = np.exp(np.log(n) - np.log(counts).sum())
        numer = np.sqrt(fac * (counts[:, None] * (means - mbar) ** 2).sum(axis=0))
        sd = np.sqrt(ss.sum(axis=0) / (counts - 1).sum() * (1.0 / counts).sum())
    return numer, sd


def _bin_mad(values: np.ndarray, bins: np.ndarray, nbins: int) -> np.ndarray:
    """MAD (without the 1.4826 factor, which cancels in the CV) of each row of ``values``
    within each bin; NaN values are ignored, as samr's mad(na.rm = TRUE)."""
    R, p = values.shape
    order = np.argsort(bins, kind="stable")
    b = bins[order]
    sizes = np.bincount(b, minlength=nbins)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    width = int(sizes.max())
    pos = np.arange(p) - start[b]  # position of each value inside its bin
    box = np.full((R, nbins, width), np.nan)
    box[:, b, pos] = values[:, order]

    def median(a):
        a = np.sort(a, axis=2)  # NaN last
        cnt = np.isfinite(a).sum(axis=2)
        lo = np.clip((cnt - 1) // 2, 0, width - 1)
        hi = np.clip(cnt // 2, 0, width - 1)
        m = 0.5 * (np.take_along_axis(a, lo[..., None], 2)[..., 0] + np.take_along_axis(a, hi[..., None], 2)[..., 0])
        return np.where(cnt > 0, m, np.nan)

    med = median(box)
    return median(np.abs(box - med[..., None]))


def estimate_s0(numer: np.ndarray, sd: np.ndarray, percentiles=S0_PERCENTILES) -> tuple[float, float]:
    """samr's est.s0: returns (s0, chosen percentile)."""
    perc = np.asarray(percentiles, dtype=float)
    br = np.unique(np.quantile(sd, np.linspace(0, 1, 101)))
    nb = br.size - 1
    if nb < 1 or not np.any(sd > 0):
        return 0.0, 0.0
    # cut(sd, br): right-closed bins 1..nb, the minimum (NA in R) goes to bin 1
    a = np.clip(np.searchsorted(br, sd, side="left"), 1, nb) - 1
    w = np.quantile(sd, perc)
    w[0] = 0.0  # samr: w[j == 1] <- 0
    with np.errstate(divide="ignore", invalid="ignore"):
        tt2 = numer[None, :] / (sd[None, :] + w[:, None])
    tt2[~np.isfinite(tt2)] = np.nan
    mads = _bin_mad(tt2, a, nb)
    with np.errstate(invalid="ignore"):
        cv = np.nanstd(mads, axis=1, ddof=1) / np.nanmean(mads, axis=1)
    if not np.any(np.isfinite(cv)):
        return 0.0, 0.0
    o = int(np.nanargmin(cv))
    return float(np.quantile(sd[sd != 0], perc[o])), float(perc[o])


def sam_statistic(X, codes, counts, s0="auto") -> tuple[np.ndarray, float, float]:
    """The SAM d statistic of every feature, with the s0 used and its percentile (NaN if given)."""
    numer, sd = sam_parts(X, codes, counts)
    if isinstance(s0, str):
        if s0 != "auto":
            raise InputError(f"sam: s0 must be 'auto' or a number >= 0, got {s0!r}")
        s0v, perc = estimate_s0(numer, sd)
    else:
        s0v, perc = float(s0), float("nan")
        if not s0v >= 0:
            raise InputError(f"sam: s0 must be 'auto' or a number >= 0, got {s0!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        d = numer / (sd + s0v)
    return d, s0v, perc


@register("sam", higher_is_better=True, needs=("labels",))
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
