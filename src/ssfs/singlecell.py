"""Single-cell helpers: AnnData in, sparse all the way, scanpy's kNN graph reused.

* :func:`neighbors_graph` returns the cell-cell connectivity to pass as ``graph=``
  to the graph-based scores (``laplacian``, ``cls``): the stored
  ``adata.obsp['connectivities']`` when present, else ``scanpy.pp.neighbors`` on a
  PCA of the (sparse) expression matrix. The scores then compute their heat-kernel
  weights on the edges of that graph in gene space; no kNN search over all genes.
* :func:`log_normalize` is scanpy's ``normalize_total`` + ``log1p`` on a CSR copy;
  :func:`normalize_log1p` the same without importing scanpy.

Simulated counts with planted markers live in :mod:`ssfs.simulate`.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .errors import InputError
from .methods._shared.counts import normalize_log1p  # noqa: F401 (re-exported: simulations and users import it here)


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
