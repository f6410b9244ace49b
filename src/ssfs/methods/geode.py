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
from ._labeled import labeled, resample_counts
from ._shared.invariance import EVERY


def _kept_components(lam: np.ndarray, vecs: np.ndarray, min_var_share: float):
    """Eigenpairs in decreasing order, cut to the components whose variance share exceeds
    ``min_var_share`` (GeoDE's rule)."""
    lam, vecs = lam[::-1], vecs[:, ::-1]
    total = np.clip(lam, 0, None).sum()
    keep = int(np.sum(lam / total > min_var_share)) if total > 0 else 0
    return lam[:keep], vecs[:, :keep]


def pooled_pca(X: np.ndarray, min_var_share: float = 0.001):
    """(Xc, U, lam): centred data, left singular vectors and eigenvalues of the kept components."""
    Xc = X - X.mean(axis=0)
    n, p = Xc.shape
    if n <= p:
        lam, U = _kept_components(*np.linalg.eigh(Xc @ Xc.T), min_var_share)
        return Xc, U, lam
    lam, V = _kept_components(*np.linalg.eigh(Xc.T @ Xc), min_var_share)
    U = np.zeros((n, lam.size))
    pos = lam > 0
    U[:, pos] = (Xc @ V[:, pos]) / np.sqrt(lam[pos])
    return Xc, U, lam


def _contrasts(groups: np.ndarray) -> np.ndarray:
    """a with m = Xc' a the mean difference (group 2 minus group 1) of each contrast."""
    G = np.asarray(groups, dtype=float)
    n2 = G.sum(axis=0)
    return G / n2 - (1 - G) / (G.shape[0] - n2)


def _sample_weights(U, lam, gram_a, n, gamma):
    """v with b = Xc' v: V S^-1 V' m in the sample space (V = Xc' U / s, S the shrunk
    covariance of the kept components, ``gram_a`` = Xc Xc' a)."""
    Dd = lam / (n - 2)
    shrunk = gamma * Dd + (1 - gamma) * Dd.mean()
    s = np.sqrt(lam)
    coef = (U.T @ gram_a) / s[:, None] / shrunk[:, None]
    return U @ (coef / s[:, None])


def chdir_directions(X: np.ndarray, groups: np.ndarray, n_pooled: int | None = None,
                     *, gamma: float = 1.0, min_var_share: float = 0.001) -> np.ndarray:
    """Unit-length characteristic directions, one column per contrast.

    ``groups`` is an n x c matrix of 0/1 indicators of "group 2" (the rest is group 1).
    """
    Xc, U, lam = pooled_pca(X, min_var_share)
    if lam.size == 0:
        return np.full((X.shape[1], groups.shape[1]), np.nan)
    A = _contrasts(groups)
    # V' m = U' Xc m / s with Xc m = (Xc Xc') a = U diag(lam) U' a (restricted to the kept PCs)
    b = Xc.T @ _sample_weights(U, lam, Xc @ (Xc.T @ A), X.shape[0], gamma)
    norm = np.sqrt((b * b).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return b / norm


def _one_vs_rest(codes: np.ndarray, K: int) -> np.ndarray:
    return (codes == 1)[:, None] if K == 2 else codes[:, None] == np.arange(K)[None, :]


def _direction_scores(B: np.ndarray, K: int, multiclass: str) -> np.ndarray:
    if K == 2:
        return np.abs(B[:, 0])
    A = np.abs(B)
    return A.max(axis=1) if multiclass == "max" else np.sqrt((A * A).mean(axis=1))


def bootstrap_scores(X, codes, boots: np.ndarray, seeds=None, *, gamma: float = 1.0, min_var_share: float = 0.001,
                     multiclass: str = "max", threads: int = 1):
    """GeoDE scores of every bootstrap resample ``X[boots[m]]`` (M x n index matrix) at once
    (M x p), equal to :func:`geode_score` per resample up to rounding: every resample's Gram
    matrix is a block of one n x n product, and all directions come from one p x (M c)
    product. None when n > p or a resample misses a class (the per-resample path)."""
    X = np.asarray(X, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    boots = np.asarray(boots, dtype=np.int64)
    n, p = X.shape
    K = int(codes.max()) + 1
    every_class = (resample_counts(boots, codes)[1] > 0).all()
    if n > p or not every_class or not 0 <= gamma <= 1 or multiclass not in ("max", "rms"):
        return None
    Xg = X - X.mean(axis=0)  # centred once (precision); each resample is re-centred below
    gram = Xg @ Xg.T
    M, c = boots.shape[0], 1 if K == 2 else K
    weights = np.zeros((n, M * c))  # b = Xg' weights, per resample and contrast
    dead = np.zeros(M, dtype=bool)
    for m, b in enumerate(boots):  # loop over resamples: n x n work each
        Gb = gram[np.ix_(b, b)]
        mu = Gb.mean(axis=0)
        Gc = Gb - mu[None, :] - mu[:, None] + mu.mean()  # C Gb C, C = I - 11'/n
        lam, U = _kept_components(*np.linalg.eigh(Gc), min_var_share)
        if lam.size == 0:
            dead[m] = True
            continue
        v = _sample_weights(U, lam, Gc @ _contrasts(_one_vs_rest(codes[b], K)), b.size, gamma)
        v -= v.mean(axis=0)  # Xc' v = Xg' S' C v
        for j in range(c):  # loop over contrasts: fold duplicates onto the original samples
            weights[:, m * c + j] = np.bincount(b, weights=v[:, j], minlength=n)
    Bm = (Xg.T @ weights).reshape(p, M, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        Bm = Bm / np.sqrt((Bm * Bm).sum(axis=0))
    Bm[:, dead] = np.nan
    return np.stack([_direction_scores(Bm[:, m], K, multiclass) for m in range(M)])


@register("geode", higher_is_better=True, needs=("labels",), invariances=EVERY - {"scale"})
def geode_score(X, y, constraints, rng, *, gamma: Fraction = 1.0, min_var_share: Fraction = 0.001,
                multiclass: Literal["max", "rms"] = "max"):
    """GeoDE characteristic direction |b| (Clark et al. 2014); one-vs-rest for > 2 classes."""
    if not 0 <= gamma <= 1:
        raise InputError(f"geode: gamma must be in [0, 1], got {gamma}")
    if multiclass not in ("max", "rms"):
        raise InputError(f"geode: multiclass must be 'max' or 'rms', got {multiclass!r}")
    XL, codes, counts = labeled(X, y, method="geode")
    K = counts.size
    B = chdir_directions(XL, _one_vs_rest(codes, K), gamma=gamma, min_var_share=min_var_share)
    extra = {"direction": B[:, 0]} if K == 2 else {}
    return SelectionResult(scores=_direction_scores(B, K, multiclass), extra=extra)
