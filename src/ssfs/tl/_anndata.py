"""What ``ssfs.tl`` reads from an AnnData (labels, the matrix: ``X``, a layer or ``.raw``; a
stored cell graph) and how it writes a ranking back (``var`` columns by feature name)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.neighbors import kneighbors_graph

from ..errors import InputError, SupervisionError
from ..labels import Labels, encode_labels
from ..methods._shared.batches import batch_codes
from ..ranking import ranks_from_order

#: keywords analysts reach for where ``ssfs.tl`` (as scanpy) names the labels' obs column ``groupby``
LABEL_KEY_ALIASES = ("labels_key", "label_key", "labels", "obs_key", "label_column", "labels_column")


def refuse_label_aliases(params: dict) -> None:
    """One line, before any work, where a method's ``**params`` hold a label-column keyword other than ``groupby``
    (else the method would refuse it as an unknown parameter, naming its own parameters but not ``groupby``)."""
    given = [k for k in params if k in LABEL_KEY_ALIASES]
    if given:
        raise SupervisionError(f"{given[0]}= is not a parameter here: the labels' obs column is groupby= (as in "
                               f"scanpy's rank_genes_groups), e.g. groupby={params[given[0]]!r}")


def labels_of(adata, groupby, unlabeled_values) -> Labels | None:
    """The :class:`ssfs.labels.Labels` of ``adata.obs[groupby]`` (None without ``groupby``)."""
    if groupby is None:
        return None
    if groupby not in adata.obs.columns:
        cols = ", ".join(map(repr, list(adata.obs.columns)[:20])) or "none"
        raise SupervisionError(f"groupby {groupby!r} is not an obs column; obs columns: {cols}")
    return encode_labels(adata.obs[groupby], unlabeled_values, n=adata.n_obs)


def batch_of(adata, batch_key) -> np.ndarray | None:
    """Every cell's batch code from ``adata.obs[batch_key]`` (None without ``batch_key``;
    :func:`ssfs.methods._shared.batches.batch_codes`)."""
    if batch_key is None:
        return None
    if batch_key not in adata.obs.columns:
        cols = ", ".join(map(repr, list(adata.obs.columns)[:20])) or "none"
        raise InputError(f"batch_key {batch_key!r} is not an obs column; obs columns: {cols}")
    return batch_codes(adata.obs[batch_key].to_numpy(dtype=object), adata.n_obs, f"batch_key {batch_key!r}")


class Expression(NamedTuple):
    """The matrix a tool ranks, its feature names and where it came from."""

    X: np.ndarray | sparse.csr_matrix
    var_names: pd.Index
    use_raw: bool
    layer: str | None

    @property
    def source(self) -> str:
        """``adata.raw.X``, ``adata.layers['counts']`` or ``adata.X``."""
        return "adata.raw.X" if self.use_raw else f"adata.layers[{self.layer!r}]" if self.layer else "adata.X"


def resolve_use_raw(adata, use_raw: bool | None, layer: str | None) -> bool:
    """scanpy's rule (``scanpy._utils._check_use_raw``): a given ``use_raw`` is kept; None
    means False with a ``layer``, else whether ``adata.raw`` exists. ``use_raw=True`` needs
    a ``.raw`` and no ``layer``."""
    if use_raw is not None and not isinstance(use_raw, (bool, np.bool_)):
        raise InputError(f"use_raw must be True, False or None, got {use_raw!r}")
    if use_raw and layer is not None:
        raise InputError(f"use_raw=True and layer={layer!r} name two matrices; give one (use_raw=False with a layer)")
    if use_raw and adata.raw is None:
        raise InputError("use_raw=True but adata.raw is empty (None); use_raw=False ranks adata.X")
    if use_raw is None:
        return layer is None and adata.raw is not None
    return bool(use_raw)


def expression(adata, use_raw: bool | None = None, layer: str | None = None) -> Expression:
    """The matrix to rank (``adata.raw.X``, ``adata.layers[layer]`` or ``adata.X``, see
    :func:`resolve_use_raw`) as CSR or a dense ndarray, with its feature names."""
    raw = resolve_use_raw(adata, use_raw, layer)
    if raw:
        X, names = adata.raw.X, adata.raw.var_names
    elif layer is not None:
        if layer not in adata.layers:
            raise InputError(f"layer {layer!r} is not in adata.layers ({', '.join(adata.layers) or 'none'})")
        X, names = adata.layers[layer], adata.var_names
    else:
        X, names = adata.X, adata.var_names
    if X is None:
        raise InputError("the AnnData has no expression matrix (adata.X is None)")
    X = sparse.csr_matrix(X) if sparse.issparse(X) else np.asarray(X)
    return Expression(X, pd.Index(names), raw, layer)


def cell_graph(adata, spec, params: dict, graph):
    """(graph matrix or None, description) for methods with a ``graph`` parameter: see
    :func:`ssfs.tl.rank_features`."""
    if "graph" not in spec.defaults or "graph" in params or graph is None or graph is False:
        return None, "method's own kNN graph" if "graph" in spec.defaults else "none"
    if graph != "auto":
        if graph not in adata.obsp:
            raise InputError(f"graph {graph!r} is not in adata.obsp ({', '.join(adata.obsp) or 'none'})")
        return sparse.csr_matrix(adata.obsp[graph]), f"obsp[{graph!r}]"
    if "connectivities" in adata.obsp:
        return sparse.csr_matrix(adata.obsp["connectivities"]), "obsp['connectivities']"
    if "X_pca" in adata.obsm:
        Z = np.asarray(adata.obsm["X_pca"], dtype=np.float64)
        k = min(int(params.get("k", spec.defaults.get("k", 10))), adata.n_obs - 1)
        G = kneighbors_graph(Z, n_neighbors=max(k, 1), mode="connectivity", include_self=False)
        return sparse.csr_matrix(G.maximum(G.T)), f"kNN (k={k}) on obsm['X_pca']"
    return None, "method's own kNN graph"


def var_positions(adata, names) -> np.ndarray:
    """For each feature of ``names``, its position in ``adata.var`` (-1: not there, e.g. a
    gene of ``.raw`` outside the highly variable ones)."""
    names = pd.Index(names)
    if names.equals(adata.var_names):
        return np.arange(adata.n_vars)
    if not adata.var_names.is_unique:
        raise InputError("adata.var_names are not unique, so the genes of .raw cannot be placed in adata.var; "
                         "call adata.var_names_make_unique() first")
    return adata.var_names.get_indexer(names)


def store(adata, key: str, ranked, names=None) -> None:
    """``var[f"{key}_score"]`` and ``var[f"{key}_rank"]`` (1 = best) of a :class:`ssfs.runner.Ranked`
    (and ``var[f"{key}_explained"]`` / ``var[f"{key}_unseen"]`` when its result marks the features the
    groups explain / those of the populations the data separate and the groups miss: ``propagate``).

    ``names``: the ranked features' names (default: ``adata.var_names``, in order); each is
    written to the ``var`` row of that name, features not in ``var`` are left out (their
    ranks still count) and ``var`` rows not ranked get NaN. Ranks are integers when every
    ``var`` row has one."""
    p = adata.n_vars
    q = ranked.scores.size if ranked.scores is not None else int(np.max(ranked.order, initial=-1)) + 1
    pos = np.arange(p) if names is None else var_positions(adata, names)
    hit = pos >= 0
    scores = np.full(p, np.nan)
    ranks = np.full(p, np.nan)
    if ranked.scores is not None:
        scores[pos[hit]] = np.asarray(ranked.scores)[hit]
    ranks[pos[hit]] = ranks_from_order(ranked.order, q)[hit]
    adata.var[f"{key}_score"] = scores
    adata.var[f"{key}_rank"] = ranks.astype(np.int64) if not np.isnan(ranks).any() else ranks
    extra = getattr(ranked.result, "extra", {})
    # propagate on counts: the features the labels' groups explain, and those of populations they miss
    for name in ("explained", "unseen"):
        if extra.get(name) is not None:
            column = np.zeros(p, dtype=bool)
            column[pos[hit]] = np.asarray(extra[name], dtype=bool)[hit]
            adata.var[f"{key}_{name}"] = column
