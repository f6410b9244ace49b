"""Feature-extraction baselines: PCA and SSDR-CMU (thesis 2.7.3, eq. 2.11-2.16,
Algorithm 3). Both return ``SelectionResult(transform=...)`` mapping a matrix
(n' x p) to its components (n' x d), best component first."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .._validation import dense
from ..errors import MethodError
from ..params import PosInt
from ..registry import SelectionResult, register
from ._shared.graph import pairs_matrix

#: above this many features SSDR works in the row space of X (economy SVD) instead of p x p
_SSDR_MAX_DENSE_P = 2000


def _fix_signs(V: np.ndarray) -> np.ndarray:
    """Columns with their largest-magnitude entry positive (deterministic eigenvectors)."""
    big = np.argmax(np.abs(V), axis=0)
    s = np.sign(V[big, np.arange(V.shape[1])])
    s[s == 0] = 1.0
    return V * s


def _linear_map(G: np.ndarray, center: np.ndarray | None):
    def transform(Z):
        Z = Z.toarray() if sparse.issparse(Z) else np.asarray(Z, dtype=np.float64)
        return (Z - center) @ G if center is not None else Z @ G

    return transform


@register("pca", higher_is_better=True, kind="extraction")
def pca_extraction(X, y, constraints, rng, *, n_components: PosInt = 200):
    """Principal component analysis on all samples (unsupervised baseline): the first
    ``n_components`` (at most min(n - 1, p): centred data have no more) principal
    axes; scikit-learn's PCA, its randomized solver seeded from ``rng``."""
    from sklearn.decomposition import PCA

    Xd = dense(X, method="pca")
    d = int(min(n_components, Xd.shape[0] - 1, Xd.shape[1]))
    if d < 1:
        raise MethodError(f"pca: n_components must be >= 1, got {n_components}")
    pca = PCA(n_components=d, random_state=int(rng.integers(2**31 - 1))).fit(Xd)
    G = _fix_signs(pca.components_.T)
    return SelectionResult(transform=_linear_map(G, pca.mean_),
                           extra={"explained_variance": pca.explained_variance_, "n_components": d})


def ssdr_laplacian_parts(n: int, constraints, alpha: float, beta: float) -> sparse.csr_matrix:
    """Sparse constraint part L_c of the SSDR-CMU Laplacian: with S of eq. 2.13,
    L = (1/n) (I - 11^T / n) + L_c where S_c = alpha/|CL| on CL pairs, -beta/|ML| on ML
    pairs (no dense n x n matrix)."""
    parts = []
    if constraints.n_cl:
        parts.append(pairs_matrix(constraints.cl, n, np.full(constraints.n_cl, alpha / constraints.n_cl)))
    if constraints.n_ml:
        parts.append(pairs_matrix(constraints.ml, n, np.full(constraints.n_ml, -beta / constraints.n_ml)))
    Sc = sum(parts) if parts else sparse.csr_matrix((n, n))
    return (sparse.diags(np.asarray(Sc.sum(axis=1)).ravel()) - Sc).tocsr()


@register("ssdr", higher_is_better=True, kind="extraction")
def ssdr_cmu(X, y, constraints, rng, *, n_components: PosInt = 200, alpha: float = 1.0, beta: float = 20.0):
    """SSDR-CMU (Zhang et al. 2007; thesis eq. 2.11-2.14, Algorithm 3): projections g
    maximising J(g) = 1/2 sum_ij (g^T x_i - g^T x_j)^2 S_ij with S of eq. 2.13, i.e. the
    top eigenvectors of X^T L X (eq. 2.14); components y = g^T x, largest eigenvalue
    first. alpha = 1, beta = 20 are the SSDR paper's settings.

    X^T L X = (1/n) Xc^T Xc + X^T L_c X (Xc centred). For p <= 2000 it is formed
    (p x p); otherwise the eigenproblem is solved in the row space of X through its
    economy SVD X = U s V^T: eig(s U^T L U s) = Q, g = V Q (no p x p matrix).
    """
    Xd = dense(X, method="ssdr")
    n, p = Xd.shape
    Lc = ssdr_laplacian_parts(n, constraints, alpha, beta)
    Xc = Xd - Xd.mean(axis=0)
    if p <= _SSDR_MAX_DENSE_P:
        M = Xc.T @ Xc / n + Xd.T @ (Lc @ Xd)
        w, V = np.linalg.eigh((M + M.T) / 2)
    else:
        U, s, Vt = np.linalg.svd(Xd, full_matrices=False)
        r = int(np.sum(s > s[0] * max(n, p) * np.finfo(float).eps)) if s.size else 0
        U, s, Vt = U[:, :r], s[:r], Vt[:r]
        Uc = U - U.mean(axis=0)
        B = Uc.T @ Uc / n + U.T @ (Lc @ U)
        B = s[:, None] * B * s[None, :]
        w, Q = np.linalg.eigh((B + B.T) / 2)
        V = Vt.T @ Q
    order = np.argsort(w)[::-1]
    d = int(min(n_components, V.shape[1]))
    if d < 1:
        raise MethodError(f"ssdr: n_components must be >= 1, got {n_components}")
    G = _fix_signs(V[:, order[:d]])
    return SelectionResult(transform=_linear_map(G, None), extra={"eigenvalues": w[order[:d]], "n_components": d})
