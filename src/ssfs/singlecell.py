"""Single-cell helpers: AnnData in, sparse all the way, scanpy's kNN graph reused.

* :func:`neighbors_graph` returns the cell-cell connectivity to pass as ``graph=``
  to the graph-based scores (``laplacian``, ``cls``): the stored
  ``adata.obsp['connectivities']`` when present, else ``scanpy.pp.neighbors`` on a
  PCA of the (sparse) expression matrix. The scores then compute their heat-kernel
  weights on the edges of that graph in gene space; no kNN search over all genes.
* :func:`generate_planted_markers` simulates sparse counts with known marker genes
  (for tests and the 100,000-cell benchmark).
* :func:`log_normalize` is scanpy's ``normalize_total`` + ``log1p`` on a CSR copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .errors import InputError


def _seed(rng) -> int:
    """An int seed for libraries that take ``random_state`` (drawn from the Generator)."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**31 - 1))
    return int(np.random.default_rng(rng).integers(2**31 - 1))


def expression_matrix(data):
    """``data.X`` for an AnnData, ``data`` otherwise; CSR float64 if sparse."""
    X = data.X if hasattr(data, "obsp") else data
    if X is None:
        raise InputError("the AnnData object has no expression matrix (adata.X is None)")
    if sparse.issparse(X):
        return sparse.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def neighbors_graph(
    data,
    rng=0,
    *,
    n_neighbors: int = 15,
    n_pcs: int | None = 50,
    use_stored: bool = True,
    key: str = "connectivities",
    transformer: str | None = "sklearn",
) -> sparse.csr_matrix:
    """Cell-cell kNN connectivity (CSR, n x n) for the ``graph=`` parameter of
    ``laplacian`` / ``cls``.

    ``data``: AnnData or a cells x genes matrix (dense or sparse; sparse stays sparse).
    With ``use_stored`` and an AnnData holding ``obsp[key]``, that graph is returned
    as is (no recomputation). Otherwise ``scanpy.pp.pca`` (``n_pcs`` components,
    sparse input handled without densifying; ``n_pcs=None`` or 0 searches the genes
    directly) and ``scanpy.pp.neighbors`` (``n_neighbors``, Euclidean, UMAP
    connectivities). ``transformer`` as in scanpy; the default "sklearn" is an exact
    search: deterministic whatever the thread count, and on this project's 2-core
    machine faster than scanpy's own choice above 4096 cells, pynndescent (about
    40 s of numba compilation in every new process; with scipy 1.17 scanpy 1.11.5
    also fails on pynndescent's csr_array output). The input object is not
    modified. Seeds come from ``rng``.
    """
    if hasattr(data, "obsp") and use_stored and key in data.obsp:
        G = sparse.csr_matrix(data.obsp[key])
        if G.shape != (data.n_obs, data.n_obs):
            raise InputError(f"adata.obsp[{key!r}] has shape {G.shape}, expected ({data.n_obs}, {data.n_obs})")
        return G
    import anndata as ad
    import scanpy as sc

    X = expression_matrix(data)
    n, p = X.shape
    if n < 3:
        raise InputError(f"a cell neighbourhood graph needs at least 3 cells, got {n}")
    seed = _seed(rng)
    tmp = ad.AnnData(X=X)
    if n_pcs:
        n_comps = int(min(n_pcs, n - 1, p - 1))
        sc.pp.pca(tmp, n_comps=n_comps, random_state=seed)
        rep = "X_pca"
    else:
        rep = "X"
    sc.pp.neighbors(tmp, n_neighbors=int(min(n_neighbors, n - 1)), use_rep=rep,
                    random_state=seed, transformer=transformer)
    return sparse.csr_matrix(tmp.obsp["connectivities"])


def log_normalize(X, target_sum: float = 1e4):
    """``scanpy.pp.normalize_total(target_sum)`` + ``log1p`` on a copy; CSR stays CSR."""
    import anndata as ad
    import scanpy as sc

    tmp = ad.AnnData(X=X.copy() if sparse.issparse(X) else np.array(X, dtype=np.float64))
    sc.pp.normalize_total(tmp, target_sum=target_sum)
    sc.pp.log1p(tmp)
    return tmp.X


@dataclass
class PlantedMarkers:
    """Simulated counts. ``X``: CSR cells x genes (float64 counts); ``cell_type``:
    int code per cell; ``markers``: (n_types, n_markers) gene indices, row t = the
    genes up-regulated in type t."""

    X: sparse.csr_matrix
    cell_type: np.ndarray
    markers: np.ndarray

    def to_anndata(self):
        import anndata as ad
        import pandas as pd

        obs = pd.DataFrame({"cell_type": pd.Categorical(self.cell_type.astype(str))},
                           index=[f"cell{i}" for i in range(self.X.shape[0])])
        var = pd.DataFrame(index=[f"gene{j}" for j in range(self.X.shape[1])])
        var["marker_of"] = -1
        for t, genes in enumerate(self.markers):
            var.iloc[genes, 0] = t
        return ad.AnnData(X=self.X, obs=obs, var=var)


def generate_planted_markers(
    n_cells: int,
    n_genes: int,
    n_types: int,
    n_markers: int,
    rng=0,
    *,
    fold_change: float = 8.0,
    mean_expression: float = 0.1,
    marker_expression: float = 0.5,
    depth_sd: float = 0.3,
    rate_sd: float = 0.7,
    chunk: int = 10000,
    dispersion: float = 0.0,
) -> PlantedMarkers:
    """Poisson (or negative-binomial) counts with planted cell-type markers, generated as
    CSR in chunks of cells.

    Gene g's base rate is log-normal with mean ``mean_expression`` (sd ``rate_sd`` on
    the log scale: most genes mostly zero); each cell has a log-normal sequencing depth
    (sd ``depth_sd``); cell types are balanced. Each type gets ``n_markers``
    distinct genes (base rate log-normal with mean ``marker_expression``, sd 0.5 on
    the log scale) multiplied by ``fold_change`` in that type's cells. Counts ~ Poisson(depth_c * rate_g * fold_tg),
    or with ``dispersion`` phi > 0 negative binomial with that mean and variance
    mean + phi mean^2 (gamma-Poisson; UMI data: phi about 0.1-1).
    """
    if not dispersion >= 0:
        raise InputError(f"dispersion must be >= 0, got {dispersion}")
    if n_types < 1 or n_markers < 1 or n_types * n_markers > n_genes:
        raise InputError(
            f"need 1 <= n_types * n_markers <= n_genes, got {n_types} x {n_markers} for {n_genes} genes"
        )
    if n_cells < n_types:
        raise InputError(f"need at least one cell per type: {n_cells} cells for {n_types} types")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rate = mean_expression * rng.lognormal(0.0, rate_sd, size=n_genes) / np.exp(rate_sd**2 / 2)
    markers = rng.permutation(n_genes)[: n_types * n_markers].reshape(n_types, n_markers)
    rate[markers.ravel()] = marker_expression * rng.lognormal(0.0, 0.5, size=markers.size) / np.exp(0.125)
    fold = np.ones((n_types, n_genes))
    for t in range(n_types):  # n_types rows: a loop over types, not over genes
        fold[t, markers[t]] = fold_change
    cell_type = rng.permutation(np.arange(n_cells) % n_types)
    depth = rng.lognormal(0.0, depth_sd, size=n_cells)
    blocks = []
    for s in range(0, n_cells, chunk):
        e = min(n_cells, s + chunk)
        lam = depth[s:e, None] * rate[None, :] * fold[cell_type[s:e]]
        if dispersion > 0:
            lam = rng.gamma(1.0 / dispersion, dispersion * lam)
        blocks.append(sparse.csr_matrix(rng.poisson(lam).astype(np.float64)))
    X = sparse.vstack(blocks, format="csr")
    return PlantedMarkers(X=X, cell_type=cell_type.astype(np.int64), markers=markers)


def normalize_log1p(X, target_sum: float = 1e4) -> sparse.csr_matrix:
    """Library-size normalisation to ``target_sum`` counts per cell, then log1p, as scanpy's
    ``normalize_total`` + ``log1p`` (:func:`log_normalize`) but without importing scanpy;
    CSR in, CSR out (cells without counts stay zero)."""
    X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
    tot = np.asarray(X.sum(axis=1)).ravel()
    scale = np.divide(target_sum, tot, out=np.zeros_like(tot), where=tot > 0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    np.log1p(X.data, out=X.data)
    return X


def simulate_singlecell(n_cells: int = 5000, n_genes: int = 1000, n_types: int = 5, n_markers: int = 20,
                        rng=0, *, dispersion: float = 0.5, fold_change: float = 4.0,
                        mean_expression: float = 0.3, marker_expression: float = 0.5,
                        depth_sd: float = 0.5, **kw) -> tuple[sparse.csr_matrix, PlantedMarkers]:
    """The project's planted single-cell simulation as an analysis would see it:
    negative-binomial counts (:func:`generate_planted_markers` with ``dispersion``),
    library-size normalised and log1p-transformed (:func:`normalize_log1p`), sparse.
    Returns (X, sim): X the CSR log-normalised matrix, sim the raw counts with the cell
    types and the planted markers (the truth)."""
    sim = generate_planted_markers(n_cells, n_genes, n_types, n_markers, rng, dispersion=dispersion,
                                   fold_change=fold_change, mean_expression=mean_expression,
                                   marker_expression=marker_expression, depth_sd=depth_sd, **kw)
    return normalize_log1p(sim.X), sim


def few_labels(cell_type: np.ndarray, per_type: int, rng=0) -> np.ndarray:
    """Label vector with ``per_type`` randomly chosen labeled cells per type, -1 elsewhere."""
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    y = np.full(cell_type.shape, -1, dtype=np.int64)
    for t in np.unique(cell_type):  # loop over types
        idx = np.flatnonzero(cell_type == t)
        pick = rng.choice(idx, size=min(per_type, idx.size), replace=False)
        y[pick] = t
    return y
