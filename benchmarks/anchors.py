"""The anchors: what a user picks instead of ssfs, each used the way its documentation says.

    pip install -e ".[anchors]"        # triku, hotspotsc, scikit-misc (scanpy's seurat_v3)

Every anchor has one signature, ``anchor(X, y, rng) -> scores`` (one per gene, higher =
better, NaN = no score: ranked last) or ``-> order`` (gene indices, best first; marked
``returns="order"``). ``X`` is cells x genes in the input the tool expects (``ANCHORS[name].input``):

* ``"counts"``: raw counts (CSR or dense, non-negative integers);
* ``"log"``: library-size normalised + log1p (scanpy's ``normalize_total`` + ``log1p``);
* ``"any"``: whatever an analysis reads (log-normalised cells, microarray log-expression).

``y`` holds integer classes with -1 for unlabeled cells; ``rng`` a numpy Generator (seeds for
the tools that take one). Anchors that need labels return None when there are too few.

=================== ============================================================== =========
name                tool, as its documentation shows it                           input
=================== ============================================================== =========
hvg_seurat          sc.pp.highly_variable_genes(flavor="seurat"): dispersions_norm log
hvg_seurat_v3       the same, flavor="seurat_v3", on counts: variances_norm        counts
hvg_pearson         sc.experimental.pp.highly_variable_genes(flavor=               counts
                    "pearson_residuals"): residual_variances
triku               normalize_total, log1p, sc.pp.pca, sc.pp.neighbors(metric=      counts
                    "cosine", n_neighbors=0.5 sqrt(n)), tk.tl.triku: triku_distance
hotspot             hotspot.Hotspot(counts layer, model="danb", X_pca latent,      counts
                    total counts), kNN 30, compute_autocorrelations: Z
rank_genes_groups   sc.tl.rank_genes_groups (t-test) on the labeled cells; the     log / any
                    groups' rankings interleaved
label_spreading_f   TruncatedSVD(30), LabelSpreading(kernel="knn"), f_classif on   log / any
                    the propagated labels
label_propagation_f the same with LabelPropagation(kernel="knn")                   log / any
=================== ============================================================== =========
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse

os.environ.setdefault("TQDM_DISABLE", "1")  # Hotspot's progress bars


def _seed(rng) -> int:
    return int(np.random.default_rng(rng).integers(2**31 - 1)) if not isinstance(rng, np.random.Generator) \
        else int(rng.integers(2**31 - 1))


def _adata(X):
    import anndata as ad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ad.AnnData(X=sparse.csr_matrix(X, dtype=np.float32) if sparse.issparse(X) else np.asarray(X, np.float32))
    a.var_names = [f"g{j}" for j in range(a.n_vars)]
    return a


def _expressed(X) -> np.ndarray:
    """Genes with at least one count (the tools refuse or skip the others)."""
    return np.asarray((X != 0).sum(axis=0)).ravel() > 0


def _on_expressed(fn, X, *args):
    """``fn`` on the expressed genes only; NaN for the others."""
    keep = _expressed(X)
    out = np.full(X.shape[1], np.nan)
    out[keep] = fn(X[:, keep], *args)
    return out


#: the largest value read as a log (scanpy's seurat flavor takes expm1 of the values: float32 overflows above ~88)
LOG_AT_MOST = 50.0


def hvg_seurat(X, y, rng):
    """Normalised dispersion (Satija et al. 2015), scanpy's default flavor, on log-normalised cells. Values above
    :data:`LOG_AT_MOST` cannot be logs (unlogged intensities: their expm1 overflows and the flavor raises): they are
    log1p-transformed first (negative values set to 0), as a user would before calling it."""
    import scanpy as sc

    if X.shape[0] * X.shape[1] and float(X.max()) > LOG_AT_MOST:
        X = X.log1p() if sparse.issparse(X) else np.log1p(np.maximum(np.asarray(X, dtype=np.float64), 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = sc.pp.highly_variable_genes(_adata(X), flavor="seurat", inplace=False)
    return np.asarray(df["dispersions_norm"], dtype=float)


def _seurat_v3(X):
    import scanpy as sc

    a = _adata(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = sc.pp.highly_variable_genes(a, flavor="seurat_v3", n_top_genes=min(2000, a.n_vars), inplace=False)
    return np.asarray(df["variances_norm"], dtype=float)


def hvg_seurat_v3(X, y, rng):
    """Variance of the counts standardised by a loess fit of variance on mean (Stuart et al. 2019)."""
    return _on_expressed(_seurat_v3, X)


def _pearson(X):
    import scanpy as sc

    a = _adata(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = sc.experimental.pp.highly_variable_genes(a, flavor="pearson_residuals",
                                                      n_top_genes=min(2000, a.n_vars), inplace=False)
    return np.asarray(df["residual_variances"], dtype=float)


def hvg_pearson(X, y, rng):
    """Variance of analytic Pearson residuals of a NB model (Lause et al. 2021), theta 100."""
    return _on_expressed(_pearson, X)


def _triku(X, seed):
    import scanpy as sc
    import triku as tk

    a = _adata(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.pp.normalize_total(a)  # scanpy's standard log-normalisation (see triku's docstring)
        sc.pp.log1p(a)
        sc.pp.pca(a, random_state=seed)
        sc.pp.neighbors(a, metric="cosine", n_neighbors=max(2, int(0.5 * a.n_obs**0.5)), random_state=seed,
                        transformer="sklearn")
        tk.tl.triku(a, use_raw=False, verbose="error")
    return np.asarray(a.var["triku_distance"], dtype=float)


def triku(X, y, rng):
    """triku (Ascensión et al. 2022): Wasserstein distance between a gene's expression in each
    cell's kNN and its expected distribution, corrected for mean expression.

    Run on log-normalised counts with triku's recommended graph (PCA, cosine kNN of 0.5 sqrt(n)
    cells). Its pages allow raw or log-transformed counts ("scores tend to be better in
    log-transformed matrices"); on the quick ``counts`` scenario (seed 0) log-normalised gave
    0.74, log1p of the raw counts (the usage page's lines) 0.58, raw counts on the log-normalised
    graph 0.67: the anchor takes the strongest."""
    return _on_expressed(_triku, X, _seed(rng))


def _hotspot(X, seed):
    import hotspot
    import scanpy as sc

    a = _adata(X)
    a.layers["counts"] = sparse.csc_matrix(a.X)
    a.obs["total_counts"] = np.asarray(a.X.sum(axis=1)).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.pp.normalize_total(a)
        sc.pp.log1p(a)
        sc.pp.pca(a, n_comps=min(30, a.n_obs - 1, a.n_vars - 1), random_state=seed)
        hs = hotspot.Hotspot(a, layer_key="counts", model="danb", latent_obsm_key="X_pca",
                             umi_counts_obs_key="total_counts")
        hs.create_knn_graph(weighted_graph=False, n_neighbors=30, approx_neighbors=False)
        res = hs.compute_autocorrelations(jobs=1)
    return res["Z"].reindex(a.var_names).to_numpy(dtype=float)


def hotspot(X, y, rng):
    """Hotspot (DeTomaso & Yosef 2021): autocorrelation Z of each gene on the cells' kNN graph
    (PCA of the log-normalised counts, 30 neighbours), depth-adjusted NB null."""
    return _on_expressed(_hotspot, X, _seed(rng))


def rank_genes_groups(X, y, rng):
    """scanpy ``rank_genes_groups`` (t-test, each labeled group against the other labeled cells)
    on the labeled cells; groups with fewer than 2 labeled cells are left out (scanpy refuses
    them). The order interleaves the groups' rankings: each group's best gene, then each
    group's second ... (how one reads "the top markers of every type")."""
    import pandas as pd
    import scanpy as sc

    groups, counts = np.unique(y[y >= 0], return_counts=True)
    keep = groups[counts >= 2]
    if keep.size < 2:
        return None
    cells = np.flatnonzero(np.isin(y, keep))
    a = _adata(X[cells])
    a.obs["group"] = pd.Categorical(y[cells].astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.tl.rank_genes_groups(a, "group", method="t-test", n_genes=a.n_vars, use_raw=False)
    names = a.uns["rank_genes_groups"]["names"]
    ranked = np.stack([np.asarray(names[g]) for g in names.dtype.names], axis=1)  # rank x group
    flat = np.char.lstrip(ranked.ravel().astype(str), "g").astype(np.int64)
    _, first = np.unique(flat, return_index=True)
    return flat[np.sort(first)]


def _propagated_f(X, y, rng, model):
    """The six lines: TruncatedSVD(30) -> kNN label propagation -> f_classif on the transduction."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_selection import f_classif

    if np.unique(y[y >= 0]).size < 2:
        return None
    Z = TruncatedSVD(n_components=min(30, X.shape[1] - 1), random_state=_seed(rng)).fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = model.fit(Z, y).transduction_
        F, _ = f_classif(X, labels)
    return np.asarray(F, dtype=float)


def label_spreading_f(X, y, rng):
    """Label spreading (Zhou et al. 2004) on a kNN graph of a 30-d TruncatedSVD, then the ANOVA F
    of every gene on the propagated labels (scikit-learn defaults: 7 neighbours, alpha 0.2)."""
    from sklearn.semi_supervised import LabelSpreading

    return _propagated_f(X, y, rng, LabelSpreading(kernel="knn"))


def label_propagation_f(X, y, rng):
    """Label propagation (Zhu & Ghahramani 2002) on the same graph, then the ANOVA F."""
    from sklearn.semi_supervised import LabelPropagation

    return _propagated_f(X, y, rng, LabelPropagation(kernel="knn", max_iter=3000))


@dataclass(frozen=True)
class Anchor:
    """An anchor: its function, the input it expects, whether it needs labels and what it returns."""

    fn: Callable
    input: str  # "counts" | "log" | "any"
    labels: bool = False
    returns: str = "scores"  # "scores" | "order"
    package: str = "scanpy"


ANCHORS: dict[str, Anchor] = {
    "hvg_seurat": Anchor(hvg_seurat, "log"),
    "hvg_seurat_v3": Anchor(hvg_seurat_v3, "counts", package="skmisc"),
    "hvg_pearson": Anchor(hvg_pearson, "counts"),
    "triku": Anchor(triku, "counts", package="triku"),
    "hotspot": Anchor(hotspot, "counts", package="hotspot"),
    "rank_genes_groups": Anchor(rank_genes_groups, "any", labels=True, returns="order"),
    "label_spreading_f": Anchor(label_spreading_f, "any", labels=True, package="sklearn"),
    "label_propagation_f": Anchor(label_propagation_f, "any", labels=True, package="sklearn"),
}


def anchor_order(name: str, X, y, rng) -> np.ndarray | None:
    """The anchor's gene order (best first; NaN scores last, ties by lower index), or None
    when it cannot run on these labels."""
    anchor = ANCHORS[name]
    if anchor.labels and not (y >= 0).any():
        return None
    out = anchor.fn(X, y, rng)
    if out is None or anchor.returns == "order":
        return out
    scores = np.where(np.isfinite(out), out, -np.inf)
    return np.argsort(-scores, kind="stable")


def anchor_input(name: str, sim):
    """The input of a simulation that anchor ``name`` expects (:data:`ANCHORS`' ``input``): the raw
    counts, or what an analysis reads (``sim.expression()``: log1p-normalised counts, microarray
    values as they are)."""
    return sim.X if ANCHORS[name].input == "counts" else sim.expression()


def available(name: str) -> bool:
    """Whether the anchor's package is installed (``pip install -e ".[anchors]"``)."""
    import importlib.util

    return importlib.util.find_spec(ANCHORS[name].package) is not None


def warm_up(names) -> None:
    """Run each anchor once on tiny counts, so that imports and numba compilation are not timed
    with the first real call."""
    from ssfs.simulate import labels_per_class, simulate_counts

    sim = simulate_counts(300, 120, 3, 5, rng=0)
    y = labels_per_class(sim.classes, 5, 0)
    for name in names:
        if name in ANCHORS and available(name):
            anchor_order(name, anchor_input(name, sim), y, 0)
