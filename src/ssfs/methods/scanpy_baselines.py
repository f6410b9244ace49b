"""scanpy's own gene selections as baselines (single-cell comparisons of issue 7).

* ``scanpy_hvg``: unsupervised highly-variable-gene ranking,
  ``scanpy.pp.highly_variable_genes`` normalized dispersion (``dispersions_norm``).
* ``scanpy_rank_genes``: supervised ``scanpy.tl.rank_genes_groups`` on the labeled
  cells only (each class against the rest); a gene's score is its best score over
  the classes (one-vs-rest up-regulation statistic).

Both take X as given (dense or CSR, never densified here): like scanpy, they expect
log-normalized expression (``normalize_total`` + ``log1p``). Higher is better;
genes scanpy gives no score (constant, alone in their mean-expression bin for
``scanpy_hvg``, below its mean filter) are undefined: the worst value, ranked last.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from scipy import sparse

from ..errors import InputError, SupervisionError
from ..labels import current_class_name
from ..params import PosInt
from ..registry import register
from ._shared.invariance import EVERY


def _anndata(X, obs=None):
    import anndata as ad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ad.AnnData(X=X, obs=obs)


@register("scanpy_hvg", higher_is_better=True, requires="scanpy", invariances=("samples", "features", "copies"))
def scanpy_hvg(X, y, constraints, rng, *, flavor: Literal["seurat", "cell_ranger"] = "seurat",
               n_bins: PosInt = 20):
    """scanpy highly-variable genes: normalized dispersion per gene (unsupervised).

    ``flavor``: "seurat" (log data; expm1 inside) or "cell_ranger" (scanpy's options
    that need no extra package). Deterministic.
    """
    import scanpy as sc

    if flavor not in ("seurat", "cell_ranger"):
        raise InputError(f"scanpy_hvg flavor must be 'seurat' or 'cell_ranger', got {flavor!r}")
    vals = X.data if sparse.issparse(X) else np.asarray(X)
    if vals.size and vals.min() < 0:
        raise InputError(f"scanpy_hvg needs non-negative expression (counts, normalised and log1p-transformed): "
                         f"X has {int((vals < 0).sum())} negative value(s), minimum {vals.min():.4g}; "
                         "use a score that accepts centred data (e.g. variance)")
    adata = _anndata(X)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = sc.pp.highly_variable_genes(adata, flavor=flavor, n_bins=int(n_bins), inplace=False)
    except ValueError as e:  # e.g. infinite means of unlogged huge values
        raise InputError(f"scanpy_hvg cannot bin the genes by mean expression (is X log-normalized?): {e}") from None
    return np.asarray(df["dispersions_norm"], dtype=float)


@register("scanpy_rank_genes", higher_is_better=True, needs=("labels",), requires="scanpy", invariances=EVERY)
def scanpy_rank_genes(X, y, constraints, rng, *,
                      method: Literal["t-test", "t-test_overestim_var", "wilcoxon"] = "t-test",
                      tie_correct: bool = False):
    """scanpy rank_genes_groups on the labeled cells: max over classes of the
    one-vs-rest score (t statistic for "t-test"/"t-test_overestim_var", z score for
    "wilcoxon"). Deterministic.
    """
    import pandas as pd
    import scanpy as sc

    if method not in ("t-test", "t-test_overestim_var", "wilcoxon"):
        raise InputError(
            f"scanpy_rank_genes method must be 't-test', 't-test_overestim_var' or 'wilcoxon', got {method!r}"
        )
    lab = np.flatnonzero(y >= 0)
    classes, counts = np.unique(y[lab], return_counts=True)
    if (counts < 2).any():
        raise SupervisionError(
            f"scanpy_rank_genes needs at least 2 labeled cells per class; class(es) "
            f"{', '.join(current_class_name(c) for c in classes[counts < 2])} have 1"
        )
    Xl = X[lab]
    if sparse.issparse(Xl):
        Xl = sparse.csr_matrix(Xl)
    groups = pd.Categorical(y[lab].astype(str))
    adata = _anndata(Xl, obs=pd.DataFrame({"group": groups}, index=[str(i) for i in lab]))
    p = X.shape[1]
    adata.var_names = [str(j) for j in range(p)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.tl.rank_genes_groups(adata, "group", method=method, use_raw=False, n_genes=p,
                                tie_correct=bool(tie_correct))
    res = adata.uns["rank_genes_groups"]
    names = res["names"]
    scores = res["scores"]
    best = np.full(p, -np.inf)
    for g in names.dtype.names:  # one pass per class, vectorized over genes
        idx = np.asarray(names[g]).astype(np.int64)
        val = np.asarray(scores[g], dtype=float)
        val = np.where(np.isfinite(val), val, -np.inf)
        np.maximum.at(best, idx, val)
    return np.where(np.isfinite(best), best, np.nan)
