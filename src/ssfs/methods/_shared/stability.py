"""Stability of feature selection across runs (folds, bootstraps).

Every function takes either a list of selected-index collections (one per run)
or a binary run x feature matrix ``Z`` (``Z[m, f] = 1`` if run ``m`` selected
feature ``f``) plus the number of features ``p`` where the measure needs it.

- :func:`efsis_stability`  EFSIS eq. 1 (Zhang & Jonassen; after Dernoncourt et al.):
  mean relative frequency of the features selected at least once.
- :func:`kuncheva`          Kuncheva (2007) consistency index, mean over run pairs
  (equal subset sizes required).
- :func:`jaccard`           mean pairwise Jaccard index.
- :func:`nogueira`          Nogueira, Sechidis & Brown (JMLR 2018) estimator (their
  Definition 4) with its asymptotic variance and normal confidence interval (Theorem 9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError


def selection_matrix(sets, p: int | None = None) -> np.ndarray:
    """Boolean run x feature matrix from a list of index collections (or a matrix)."""
    if isinstance(sets, np.ndarray) and sets.ndim == 2 and sets.dtype == bool:
        Z = sets
    elif isinstance(sets, np.ndarray) and sets.ndim == 2 and np.isin(sets, (0, 1)).all() and p is None:
        Z = sets.astype(bool)
    else:
        idx = [np.asarray(s, dtype=np.int64).ravel() for s in sets]
        if p is None:
            p = 1 + max((int(i.max()) for i in idx if i.size), default=-1)
        Z = np.zeros((len(idx), int(p)), dtype=bool)
        for m, i in enumerate(idx):  # loop over runs, not features
            if i.size and (i.min() < 0 or i.max() >= p):
                raise InputError(f"selected feature index out of range 0..{p - 1} in run {m}")
            if np.unique(i).size != i.size:
                raise InputError(f"run {m} selects a feature more than once")
            Z[m, i] = True
    if p is not None and Z.shape[1] != p:
        raise InputError(f"selection matrix has {Z.shape[1]} columns, expected p = {p}")
    if Z.shape[0] < 2:
        raise InputError(f"stability needs at least 2 runs, got {Z.shape[0]}")
    return Z


def efsis_stability(sets, p: int | None = None) -> float:
    """EFSIS eq. 1: S = sum_{f in F} (freq(f)/M) / |F|, F = features selected in >= 1 run."""
    Z = selection_matrix(sets, p)
    freq = Z.sum(axis=0)
    F = freq > 0
    if not F.any():
        return float("nan")
    return float(freq[F].mean() / Z.shape[0])


def efsis_stability_of_ranks(R: np.ndarray, sizes) -> list[float]:
    """EFSIS eq. 1 of the top-t sets of every run, for each t in ``sizes``, from a run x
    feature matrix of 1-based ranks: run m selects the features it ranks <= t (t of them
    when its ranks are a permutation; fewer when a tie straddles t, as average ranks do),
    S = (sum_m |S_m| / |F|) / M with F the features some run selects (no M x p set matrix);
    0 when no run selects any (a tie straddles t at the top of every run)."""
    R = np.atleast_2d(R)
    M = R.shape[0]
    if M < 2:
        raise InputError(f"stability needs at least 2 runs, got {M}")
    best = np.sort(R.min(axis=0))  # each feature's best rank over the runs
    whole = R.dtype.kind in "iu"  # permutations: each run selects exactly t
    out = []
    for t in sizes:
        n_f = int(np.searchsorted(best, t, side="right"))
        chosen = M * int(t) if whole else int(np.count_nonzero(t >= R))
        out.append(chosen / n_f / M if n_f else 0.0)
    return out


def _pair_counts(Z: np.ndarray):
    Zf = Z.astype(np.float64)
    inter = Zf @ Zf.T
    size = Zf.sum(axis=1)
    iu = np.triu_indices(Z.shape[0], 1)
    return inter[iu], size[iu[0]], size[iu[1]]


def kuncheva(sets, p: int | None = None) -> float:
    """Kuncheva index, mean over run pairs of (r p - k^2) / (k (p - k)); all runs must select k features."""
    Z = selection_matrix(sets, p)
    p = Z.shape[1]
    k = Z.sum(axis=1)
    if np.unique(k).size != 1:
        raise InputError(f"the Kuncheva index needs subsets of equal size, got sizes {sorted(set(k.tolist()))}")
    k = float(k[0])
    if k == 0 or k == p:
        return float("nan")
    r, _, _ = _pair_counts(Z)
    return float(np.mean((r * p - k * k) / (k * (p - k))))


def jaccard(sets, p: int | None = None) -> float:
    """Mean pairwise Jaccard index |A & B| / |A | B| (pairs of two empty sets are skipped)."""
    Z = selection_matrix(sets, p)
    r, a, b = _pair_counts(Z)
    union = a + b - r
    ok = union > 0
    return float(np.mean(r[ok] / union[ok])) if ok.any() else float("nan")


@dataclass(frozen=True)
class NogueiraResult:
    stability: float
    variance: float
    lower: float
    upper: float
    alpha: float


def nogueira(sets, p: int | None = None, alpha: float = 0.05) -> NogueiraResult:
    """Nogueira et al. (2018) stability estimate (Def. 4), its variance and (1-alpha) CI.

    phi = 1 - mean_f s_f^2 / (kbar/p (1 - kbar/p)),  s_f^2 = M/(M-1) pf (1 - pf).
    The variance is their asymptotic estimate 4/M^2 sum_i (phi_i - mean phi)^2.
    """
    Z = selection_matrix(sets, p)
    M, d = Z.shape
    Zf = Z.astype(np.float64)
    pf = Zf.mean(axis=0)
    kbar = pf.sum()
    denom = (kbar / d) * (1 - kbar / d)
    if denom <= 0:
        return NogueiraResult(float("nan"), float("nan"), float("nan"), float("nan"), alpha)
    stab = 1 - (M / (M - 1)) * np.mean(pf * (1 - pf)) / denom
    k = Zf.sum(axis=1)
    phi = (Zf @ pf / d - k * kbar / d**2 + (stab / 2) * (2 * k * kbar / d**2 - k / d - kbar / d + 1)) / denom
    var = 4 / M**2 * np.sum((phi - phi.mean()) ** 2)
    from scipy.special import ndtri  # = scipy.stats.norm.ppf (same values); scipy.stats costs ~0.5 s to import

    z = ndtri(1 - alpha / 2)
    half = z * np.sqrt(var)
    return NogueiraResult(float(stab), float(var), float(stab - half), float(stab + half), alpha)


def top_sets(orders, t: int) -> list[np.ndarray]:
    """The first ``t`` features of each ordering (best first)."""
    return [np.asarray(o, dtype=np.int64)[:t] for o in orders]


def n_top(p: int, percent: float) -> int:
    """Number of features for a threshold given in percent of p (at least 1, rounded)."""
    if not 0 < percent <= 100:
        raise InputError(f"feature percentage must be in (0, 100], got {percent}")
    return max(1, round(p * percent / 100.0))


def all_measures(sets, p: int, alpha: float = 0.05) -> dict:
    """Every measure at once (NaN where undefined), for reporting."""
    Z = selection_matrix(sets, p)
    sizes = Z.sum(axis=1)
    nog = nogueira(Z, p, alpha)
    return {
        "efsis": efsis_stability(Z, p),
        "kuncheva": kuncheva(Z, p) if np.unique(sizes).size == 1 else float("nan"),
        "jaccard": jaccard(Z, p),
        "nogueira": nog.stability,
        "nogueira_lower": nog.lower,
        "nogueira_upper": nog.upper,
    }
