"""Batch self-organizing map used to compress the unlabeled samples (thesis 3.3.2).

The thesis replaces the unlabeled part X_U by the reference vectors of a SOM
(eq. 3.14) whose size comes from Kohonen's PCA-based heuristic (as in the SOM
Toolbox the thesis used: ``som_topol_struct`` / ``som_lininit`` /
``som_batchtrain``), capped at sqrt(u) nodes (Lemma 2), with the reference
vectors initialised linearly along the two principal axes of X_U.

A vectorized batch SOM of our own rather than a package (minisom trains online,
sample by sample, from a random initialisation): batch training from a linear
initialisation is a deterministic function of the data, one BLAS product per
iteration.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...errors import InputError


def map_size(X, *, max_nodes: int | None = None, rng: np.random.Generator | None = None):
    """Grid shape (rows, cols) by Kohonen's heuristic (SOM Toolbox ``som_topol_struct``):
    munits = 5 u^0.54321 nodes, side ratio sqrt(e1 / e2) of the two largest
    eigenvalues of the covariance; at most ``max_nodes`` (default floor(sqrt(u))) nodes."""
    ev, _, _ = _principal_axes(X, 2, rng)
    return _map_shape(X.shape[0], ev, max_nodes)


def _map_shape(u: int, ev: np.ndarray, max_nodes) -> tuple[int, int]:
    cap = int(np.floor(np.sqrt(u))) if max_nodes is None else int(max_nodes)
    if cap < 1:
        raise InputError(f"som_compress: max_nodes must be >= 1, got {max_nodes}")
    munits = int(min(np.ceil(5 * u**0.54321), cap))
    if ev.size < 2 or ev[0] <= 0 or ev[1] * munits < ev[0]:
        ratio = 1.0
    else:
        ratio = float(np.sqrt(ev[0] / ev[1]))
    cols = int(min(munits, max(1, round(np.sqrt(munits / ratio)))))
    rows = int(max(1, munits // cols))  # floor: never more than munits nodes
    return rows, cols


def _centered_dense(X):
    Xd = X.toarray() if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    mean = Xd.mean(axis=0)
    return Xd - mean, mean


def _principal_axes(X, n_comp: int, rng):
    """Top ``n_comp`` covariance eigenvalues, unit eigenvectors (rows) and the mean.

    Exact eigen-decomposition on the smaller Gram side when min(u, p) <= 500, else
    scikit-learn's randomized SVD seeded from ``rng``. Signs are fixed so the
    largest-magnitude loading is positive (deterministic output)."""
    Xc, mean = _centered_dense(X)
    u, p = Xc.shape
    if u < 2:
        return np.zeros(0), np.zeros((0, p)), mean
    if min(u, p) <= 500:
        if u <= p:
            w, V = np.linalg.eigh(Xc @ Xc.T)
            idx = np.argsort(w)[::-1][:n_comp]
            comps = V[:, idx].T @ Xc
            norms = np.linalg.norm(comps, axis=1)
            comps = np.divide(comps, norms[:, None], out=np.zeros_like(comps), where=norms[:, None] > 0)
        else:
            w, V = np.linalg.eigh(Xc.T @ Xc)
            idx = np.argsort(w)[::-1][:n_comp]
            comps = V[:, idx].T
        w = np.maximum(w[idx], 0.0)
    else:
        from sklearn.utils.extmath import randomized_svd

        seed = int((rng if rng is not None else np.random.default_rng(0)).integers(2**31 - 1))
        _, sv, comps = randomized_svd(Xc, n_comp, n_oversamples=10, n_iter=7, random_state=seed)
        w = sv**2
    big = np.argmax(np.abs(comps), axis=1)
    signs = np.sign(comps[np.arange(comps.shape[0]), big])
    signs[signs == 0] = 1.0
    return w / (u - 1), comps * signs[:, None], mean


def _grid(rows: int, cols: int) -> np.ndarray:
    """Unit coordinates of a rectangular lattice, (rows*cols) x 2."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return np.column_stack([r.ravel(), c.ravel()]).astype(float)


def _sq_dist_to_nodes(X, C) -> np.ndarray:
    """u x m squared Euclidean distances between samples and nodes (one BLAS product)."""
    if sparse.issparse(X):
        xx = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        xc = np.asarray(X @ C.T)
    else:
        xx = np.einsum("ij,ij->i", X, X)
        xc = X @ C.T
    return np.maximum(xx[:, None] - 2 * xc + np.einsum("ij,ij->i", C, C)[None, :], 0.0)


def som_compress(X, rng: np.random.Generator, *, max_nodes: int | None = None, n_iter: int = 20,
                 radius: tuple[float, float] | None = None):
    """Compress samples X (u x p) into SOM reference vectors (thesis 3.3.2, eq. 3.14).

    Map size: Kohonen's PCA heuristic, at most ``max_nodes`` nodes (default
    floor(sqrt(u)), thesis Lemma 2). Linear initialisation along the two principal
    axes (``som_lininit``), then ``n_iter`` batch updates c_z = sum_i tau_{v(i) z} x_i /
    sum_i tau_{v(i) z} with a Gaussian neighbourhood tau = exp(-Delta^2 / (2 T^2)) in
    grid distance Delta, the radius T decreasing linearly from ``radius[0]`` (default
    max(1, longest side / 4)) to ``radius[1]`` (default 1), as in ``som_batchtrain``.

    Returns ``(prototypes, counts)``: every node's reference vector (m x p, empty
    nodes included, as in the thesis) and the number of samples it is the best
    matching unit of. ``rng`` is accepted for interface stability; the result is a
    deterministic function of X.
    """
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise InputError(f"som_compress needs a non-empty samples x features matrix, got shape {X.shape}")
    u = X.shape[0]
    if n_iter < 1:
        raise InputError(f"som_compress: n_iter must be >= 1, got {n_iter}")
    if u == 1:
        Xd = X.toarray() if sparse.issparse(X) else X.copy()
        return Xd, np.ones(1, dtype=np.int64)
    ev, axes, mean = _principal_axes(X, 2, rng)
    rows, cols = _map_shape(u, ev, max_nodes)
    m = rows * cols
    coords = _grid(rows, cols)
    # som_lininit: coordinates scaled to [-1, 1] along each used axis, axes scaled by sqrt(eigenvalue);
    # the longer side of the map goes along the first principal axis
    C = np.tile(mean, (m, 1))
    sides = [(cols, 1), (rows, 0)] if cols >= rows else [(rows, 0), (cols, 1)]
    for a, (side, dim) in enumerate(sides):
        if side > 1 and a < axes.shape[0]:
            t = coords[:, dim] / (side - 1) * 2.0 - 1.0
            C += np.outer(t, axes[a] * np.sqrt(ev[a]))
    grid_d2 = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1)  # m x m, m <= sqrt(u)
    r0, r1 = radius if radius is not None else (max(1.0, max(rows, cols) / 4.0), 1.0)
    radii = np.linspace(r0, r1, n_iter) if n_iter > 1 else np.array([r1])
    for T in radii:
        bmu = np.argmin(_sq_dist_to_nodes(X, C), axis=1)
        onehot = sparse.csr_matrix((np.ones(u), (bmu, np.arange(u))), shape=(m, u))
        sums = onehot @ X
        sums = sums.toarray() if sparse.issparse(sums) else np.asarray(sums)
        counts = np.bincount(bmu, minlength=m).astype(float)
        H = np.exp(-grid_d2 / (2.0 * T * T))
        num = H @ sums
        den = H @ counts
        ok = den > 1e-300
        C[ok] = num[ok] / den[ok, None]
    bmu = np.argmin(_sq_dist_to_nodes(X, C), axis=1)
    return C, np.bincount(bmu, minlength=m).astype(np.int64)


def compress_unlabeled(X, keep: np.ndarray, rng: np.random.Generator, *, max_nodes=None, n_iter: int = 20):
    """X with the samples outside ``keep`` (boolean mask) replaced by SOM prototypes.

    Returns ``(X_new, index)`` where X_new stacks the kept samples (in their original
    order) over the prototypes and ``index`` maps the kept samples' original indices to
    their rows in X_new (-1 for compressed samples), for re-indexing constraints.
    """
    n = X.shape[0]
    kept = np.flatnonzero(keep)
    rest = np.flatnonzero(~keep)
    index = np.full(n, -1, dtype=np.int64)
    index[kept] = np.arange(kept.size)
    if rest.size < 2:
        return X, np.arange(n)
    protos, _ = som_compress(X[rest], rng, max_nodes=max_nodes, n_iter=n_iter)
    XL = X[kept]
    if sparse.issparse(X):
        XL = XL.toarray()
    return np.vstack([np.asarray(XL, dtype=np.float64).reshape(kept.size, X.shape[1]), protos]), index
