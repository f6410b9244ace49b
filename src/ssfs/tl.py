"""scanpy-style tools: ``ssfs.tl.rank_features(adata, "cls", groupby="cell_type")`` and
``ssfs.tl.select_stable(adata, groupby="cell_type")`` (methods: ``("propagate",)`` by default).

Labels come from ``adata.obs[groupby]``; NaN (a missing category), and the values
of ``unlabeled_values``, mean "unlabeled" (:func:`ssfs.labels.encode_labels`). The
result is stored in the AnnData as scanpy does:

* ``adata.var[f"{key}_score"]``: the method's score (``-inf``/``inf`` where undefined),
* ``adata.var[f"{key}_rank"]``: 1 = best (subset methods: unselected features share
  the last rank),
* ``adata.uns[key]``: method, params, groupby, graph used, labeled samples per class
  (by name) and the number of unlabeled samples,

with ``key = key_added or method``. A sparse ``X`` (or layer) stays sparse.

Graphs. The graph-based scores (``laplacian``, ``cls``: the methods with a
``graph`` parameter) take a precomputed cell graph. ``graph="auto"`` (default) uses
``adata.obsp["connectivities"]`` (``scanpy.pp.neighbors``) when present, else a kNN
graph (``k`` neighbours, the method's own ``k``) on ``adata.obsm["X_pca"]`` when
present, else none: the method builds its kNN graph in feature space. Give an
``obsp`` key to use another graph, or ``graph=None`` for the method's own. The heat
kernel weights are always computed in feature space on the graph's edges.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from .constraints import Constraints
from .errors import InputError, MethodError, SupervisionError
from .experiment.stable_selection import method_settings, selection_options, stable_selection
from .labels import class_counts, encode_labels
from .ranking import ranks_from_order
from .registry import get_method
from .runner import run_method
from .seeding import as_generator

__all__ = ["markers_df", "rank_features", "select_stable"]


def _labels(adata, groupby, unlabeled_values):
    if groupby is None:
        return None, None
    if groupby not in adata.obs.columns:
        cols = ", ".join(map(repr, list(adata.obs.columns)[:20])) or "none"
        raise SupervisionError(f"groupby {groupby!r} is not an obs column; obs columns: {cols}")
    return encode_labels(adata.obs[groupby], unlabeled_values, n=adata.n_obs)


def _matrix(adata, layer):
    if layer is None:
        X = adata.X
    else:
        if layer not in adata.layers:
            raise InputError(f"layer {layer!r} is not in adata.layers ({', '.join(adata.layers) or 'none'})")
        X = adata.layers[layer]
    if X is None:
        raise InputError("the AnnData has no expression matrix (adata.X is None)")
    return sparse.csr_matrix(X) if sparse.issparse(X) else np.asarray(X)


def _graph(adata, spec, params, graph):
    """(graph matrix or None, description) for methods with a ``graph`` parameter."""
    if "graph" not in spec.defaults or "graph" in params or graph is None or graph is False:
        return None, "method's own kNN graph" if "graph" in spec.defaults else "none"
    if graph != "auto":
        if graph not in adata.obsp:
            raise InputError(f"graph {graph!r} is not in adata.obsp ({', '.join(adata.obsp) or 'none'})")
        return sparse.csr_matrix(adata.obsp[graph]), f"obsp[{graph!r}]"
    if "connectivities" in adata.obsp:
        return sparse.csr_matrix(adata.obsp["connectivities"]), "obsp['connectivities']"
    if "X_pca" in adata.obsm:
        from sklearn.neighbors import kneighbors_graph

        Z = np.asarray(adata.obsm["X_pca"], dtype=np.float64)
        k = min(int(params.get("k", spec.defaults.get("k", 10))), adata.n_obs - 1)
        G = kneighbors_graph(Z, n_neighbors=max(k, 1), mode="connectivity", include_self=False)
        return sparse.csr_matrix(G.maximum(G.T)), f"kNN (k={k}) on obsm['X_pca']"
    return None, "method's own kNN graph"


def rank_features(adata, method: str, *, groupby: str | None = None, unlabeled_values=(),
                  key_added: str | None = None, layer: str | None = None, copy: bool = False,
                  graph="auto", constraints=None, random_state=0, **params):
    """Rank the features (genes) of ``adata`` with registered method ``method``.

    ``groupby``: obs column of the class labels (None: label-free methods only);
    ``unlabeled_values``: label values meaning "unlabeled" besides NaN; ``layer``:
    use ``adata.layers[layer]`` instead of ``X``; ``graph``: see the module doc;
    ``constraints``: a :class:`ssfs.Constraints` (indices of obs); ``random_state``:
    the seed; ``params``: the method's parameters (``ssfs methods -v``). Writes
    ``var[f"{key}_score"]``, ``var[f"{key}_rank"]`` and ``uns[key]``; returns the
    AnnData when ``copy`` else None.
    """
    as_generator(random_state, name="random_state")
    if copy:
        adata = adata.copy()
    spec = get_method(method)
    y, classes = _labels(adata, groupby, unlabeled_values)
    X = _matrix(adata, layer)
    G, graph_used = _graph(adata, spec, params, graph)
    call = dict(params)
    if G is not None:
        call["graph"] = G
    labels = None if y is None else pd.Categorical.from_codes(y, categories=pd.Index(classes, dtype=object))
    ranked = run_method(method, X, labels, constraints, rng=random_state, **call)  # names reach the errors
    if ranked.kind == "extraction":
        raise SupervisionError(f"{method!r} extracts components; it does not rank features")
    key = key_added or method
    store(adata, key, ranked)
    store_markers(adata, key, ranked)
    info = {"method": method, "params": {k: v for k, v in params.items() if k != "graph"}, "graph": graph_used,
            "random_state": -1 if random_state is None else int(random_state)}
    if groupby is not None:
        info["groupby"] = groupby
        info["n_labeled"] = class_counts(y, classes)
        info["n_unlabeled"] = int((y < 0).sum())
    if unlabeled_values:
        info["unlabeled_values"] = [str(v) for v in np.atleast_1d(np.asarray(unlabeled_values, dtype=object))]
    adata.uns[key] = info
    return adata if copy else None


def store(adata, key: str, ranked, var_index=None) -> None:
    """``var[f"{key}_score"]`` and ``var[f"{key}_rank"]`` (1 = best) of a :class:`ssfs.runner.Ranked`.

    ``var_index``: positions in ``adata.var`` of the ranked features when they are a
    subset (others get NaN); default all features in order."""
    p = adata.n_vars
    q = ranked.scores.size if ranked.scores is not None else int(np.max(ranked.order, initial=-1)) + 1
    idx = np.arange(p) if var_index is None else np.asarray(var_index, dtype=np.int64)
    scores = np.full(p, np.nan)
    ranks = np.full(p, np.nan)
    if ranked.scores is not None:
        scores[idx] = ranked.scores
    ranks[idx] = ranks_from_order(ranked.order, q)
    adata.var[f"{key}_score"] = scores
    adata.var[f"{key}_rank"] = ranks if var_index is not None else ranks.astype(np.int64)


def store_markers(adata, key: str, ranked, var_index=None) -> None:
    """Per-class markers of a method that gives them (``propagate``): ``uns[f"{key}_markers"]``
    in scanpy's ``rank_genes_groups`` layout (``scanpy.get.rank_genes_groups_df(adata, group,
    key=f"{key}_markers")``, :func:`markers_df` and scanpy's plots read it) and every sample's
    group in ``obs[f"{key}_group"]`` (labeled classes, propagated; "unlabeled 1", ... for the
    samples no labeled class reaches). Nothing for other methods. ``var_index``: as :func:`store`."""
    extra = ranked.result.extra
    stats = extra.get("class_statistics")
    if stats is None:
        return
    names = np.asarray(adata.var_names)
    if var_index is not None:  # a subset of adata's features was ranked: its names, in its order
        names = names[np.asarray(var_index, dtype=np.int64)]
    adata.uns[f"{key}_markers"] = stats.to_rank_genes_groups(names, {"groupby": f"{key}_group", "ssfs_method":
                                                                     ranked.method})
    group_names = np.asarray(extra["group_names"], dtype=object)
    if len(extra["groups"]) == adata.n_obs:
        adata.obs[f"{key}_group"] = pd.Categorical(group_names[extra["groups"]], categories=list(group_names))


def markers_df(adata, group=None, *, key: str = "propagate", **kwargs) -> pd.DataFrame:
    """The per-class markers stored by :func:`rank_features` under ``key`` as one long table
    (``scanpy.get.rank_genes_groups_df``: group, names, scores, logfoldchanges, pvals, pvals_adj,
    pct_nz_group, pct_nz_reference); ``group``: one group, a list, or None for all; ``kwargs``:
    scanpy's filters (``pval_cutoff``, ``log2fc_min``, ...)."""
    import scanpy as sc

    where = f"{key}_markers"
    if where not in adata.uns:
        have = [k[: -len("_markers")] for k in adata.uns if str(k).endswith("_markers")]
        raise InputError(f"no per-class markers under key {key!r} (adata.uns[{where!r}]); rank with a method that "
                         f"gives them, e.g. ssfs.tl.rank_features(adata, 'propagate', groupby=...); keys with "
                         f"markers: {', '.join(have) or 'none'}")
    groups = list(adata.uns[where]["names"].dtype.names)
    asked = [group] if isinstance(group, str) else ([] if group is None else list(group))
    unknown = [g for g in asked if g not in groups]
    if unknown:
        raise InputError(f"no group {unknown[0]!r} in the markers under key {key!r}; groups: {', '.join(groups)}")
    return sc.get.rank_genes_groups_df(adata, group, key=where, **kwargs)


def select_stable(adata, methods=("propagate",), *, groupby: str | None = None,
                  unlabeled_values=(), layer: str | None = None, params: dict | None = None, resamples: int = 20,
                  top: int = 10, threshold: float = 0.6, scheme: str = "cpss", aggregation: str = "mean_rank",
                  constraints=None, key_added: str = "ssfs_selection", random_state: int = 0,
                  copy: bool = False):
    """The stable consensus list of ``methods`` over resamples (the workflow's selection mode,
    :mod:`ssfs.experiment.stable_selection`; same list as ``ssfs select`` and the workflow for
    the same data, seed and dataset name ``key_added``).

    ``params``: ``{method: {parameter: value}}``; labels, ``unlabeled_values``, ``layer``,
    ``constraints`` (replacing those of the labels) as in :func:`rank_features`; each method
    builds its own graph on every resample (a stored ``obsp`` graph covers all cells only).
    Writes ``var[f"{key}_frequency"]`` (selection frequency), ``var[f"{key}_rank"]`` (consensus
    rank, 1 = best), ``var[f"{key}_selected"]`` (frequency >= ``threshold``) and ``uns[key]``
    (summary.json's content: features, stability, error bound; with nothing selected, its
    ``note`` is also warned); returns the AnnData when ``copy`` else None."""
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise MethodError(f"random_state must be an integer >= 0 (a seed), got {random_state!r}")
    settings = method_settings(methods, params)
    sel = selection_options(resamples=resamples, top=top, threshold=threshold, scheme=scheme,
                            aggregation=aggregation)
    if copy:
        adata = adata.copy()
    y, classes = _labels(adata, groupby, unlabeled_values)
    if y is None:
        y, classes = np.full(adata.n_obs, -1, dtype=np.int64), []
    cons = constraints if constraints is not None else Constraints.from_labels(y)
    table, summary = stable_selection(_matrix(adata, layer), y, cons, settings, sel, seed=int(random_state),
                                      dataset=key_added, names=np.asarray(adata.var_names), classes=classes)
    idx = table["index"].to_numpy()
    freq = np.zeros(adata.n_vars)
    rank = np.zeros(adata.n_vars, dtype=np.int64)
    freq[idx] = table["frequency"].to_numpy()
    rank[idx] = table["consensus_rank"].to_numpy()
    adata.var[f"{key_added}_frequency"] = freq
    adata.var[f"{key_added}_rank"] = rank
    adata.var[f"{key_added}_selected"] = freq >= threshold
    adata.uns[key_added] = {**summary, "groupby": groupby, "random_state": int(random_state)}
    if summary["note"]:
        import warnings

        warnings.warn(f"select_stable: {summary['note']}", UserWarning, stacklevel=2)
    return adata if copy else None
