"""GeoDE characteristic direction (Clark et al. 2014, BMC Bioinformatics 15:79), as R's GeoDE::chdirSig.

1. PCA of the pooled labeled samples (centred by the pooled mean); keep the
   components whose share of the total variance exceeds ``min_var_share``
   (GeoDE: 0.001).
2. In PC space the covariance estimate is Dd = (R1'R1 + R2'R2)/(n1 + n2 - 2)
   with R the PC scores, i.e. diag(lambda)/(n - 2) since the scores are
   centred by the pooled mean (GeoDE's choice, kept); shrinkage
   S = gamma Dd + (1 - gamma) sigma I with sigma = mean(diag(Dd)) (gamma = 1
   by default, as in EFSIS).
3. b = V S^-1 V' (mean_2 - mean_1), normalised to unit length; features are
   ranked by |b|.

Everything is computed from the n x n Gram matrix (or the p x p covariance when
p < n), never a dense p x p matrix for large p.

More than two classes (GeoDE itself is two-class only): one-vs-rest
directions b_c (class c as group 2, all others as group 1) share the pooled
PCA; the score is max_c |b_c| (``multiclass="max"``, default) or the root mean
square over classes (``multiclass="rms"``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import InputError
from ..params import Fraction
from ..registry import SelectionResult, register
from ._labeled import labeled


def pooled_pca(X: np.ndarray, min_var_share: float = 0.001):
    """(Xc, U, lam): centred data, left singular vectors and eigenvalues of the kept components."""
    Xc = X - X.mean(axis=0)
    n, p = Xc.shape
    if n <= p:
        lam, U = np.linalg.eigh(Xc @ Xc.T)
        lam, U = lam[::-1], U[:, ::-1]
    else:
        lam, V = np.linalg.eigh(Xc.T @ Xc)
        lam, V = lam[::-1], V[:, ::-1]
        U = None
        pos = lam > 0
        U = np.zeros((n, lam.size))
        U[:, pos] = (Xc @ V[:, pos]) / np.sqrt(lam[pos])
    total = np.clip(lam, 0, None).sum()
    if total <= 0:
        return Xc, U[:, :0], lam[:0]
    keep = int(np.sum(lam / total > min_var_share))
    return Xc, U[:, :keep], lam[:keep]


def chdir_directions(X: np.ndarray, groups: np.ndarray, n_pooled: int | None = None,
                     *, gamma: float = 1.0, min_var_share: float = 0.001) -> np.ndarray:
    """Unit-length characteristic directions, one column per contrast.

    ``groups`` is an n x c matrix of 0/1 indicators of "group 2" (the rest is group 1).
    """
    Xc, U, lam = pooled_pca(X, min_var_share)
    n = X.shape[0]
    if lam.size == 0:
        return np.full((X.shape[1], groups.shape[1]), np.nan)
    G = np.asarray(groups, dtype=float)
    n2 = G.sum(axis=0)
    n1 = n - n2
    # mean difference of each contrast as a combination of samples: m = Xc' a
    A = G / n2 - (1 - G) / n1
    Dd = lam / (n - 2)
    sigma = Dd.mean()
    shrunk = gamma * Dd + (1 - gamma) * sigma
    s = np.sqrt(lam)
    # V' m = U' Xc m / s with Xc m = (Xc Xc') a = U diag(lam) U' a (restricted to the kept PCs)
    vtm = (U.T @ (Xc @ (Xc.T @ A))) / s[:, None]
    coef = vtm / shrunk[:, None]
    b = Xc.T @ (U @ (coef / s[:, None]))  # V coef with V = Xc' U / s
    norm = np.sqrt((b * b).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return b / norm


@register("geode", higher_is_better=True, needs=("labels",))
def geode_score(X, y, constraints, rng, *, gamma: Fraction = 1.0, min_var_share: Fraction = 0.001,
                multiclass: Literal["max", "rms"] = "max"):
    """GeoDE characteristic direction |b| (Clark et al. 2014); one-vs-rest for > 2 classes."""
    if not 0 <= gamma <= 1:
        raise InputError(f"geode: gamma must be in [0, 1], got {gamma}")
    if multiclass not in ("max", "rms"):
        raise InputError(f"geode: multiclass must be 'max' or 'rms', got {multiclass!r}")
    XL, codes, counts = labeled(X, y, method="geode")
    K = counts.size
    if K == 2:
        G = (codes == 1)[:, None]
    else:
        G = codes[:, None] == np.arange(K)[None, :]
    B = chdir_directions(XL, G, gamma=gamma, min_var_share=min_var_share)
    if K == 2:
        return SelectionResult(scores=np.abs(B[:, 0]), extra={"direction": B[:, 0]})
    A = np.abs(B)
    score = A.max(axis=1) if multiclass == "max" else np.sqrt((A * A).mean(axis=1))
    return SelectionResult(scores=score)
