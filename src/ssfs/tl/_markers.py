"""Per-class markers of a method that gives them (``propagate``), stored and read back in
scanpy's ``rank_genes_groups`` layout."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError


def store_markers(adata, key: str, ranked, names=None) -> None:
    """``uns[f"{key}_markers"]`` in scanpy's ``rank_genes_groups`` layout and every sample's
    group in ``obs[f"{key}_group"]``, for a method that gives per-class markers (``propagate``); with
    ``propagate`` on counts also ``obs[f"{key}_population"]``: "population 1", ... for the samples of a
    population the data separate that no labeled class's group matches (NaN elsewhere).

    Parameters
    ----------
    adata
        The AnnData the ranking came from.
    key
        Prefix of the stored entries (the method's name or ``key_added``).
    ranked
        A :class:`ssfs.runner.Ranked`; nothing is stored unless its result has
        ``class_statistics`` (other methods).
    names
        The ranked features' names (default ``adata.var_names``), e.g. those of ``adata.raw``.

    Returns
    -------
    None
        ``scanpy.get.rank_genes_groups_df(adata, group, key=f"{key}_markers")`` and
        :func:`markers_df` read the markers; groups are the labeled classes (propagated) and
        "unlabeled 1", ... for the samples no labeled class reaches.
    """
    extra = ranked.result.extra
    stats = extra.get("class_statistics")
    if stats is None:
        return
    names = np.asarray(adata.var_names if names is None else names)
    adata.uns[f"{key}_markers"] = stats.to_rank_genes_groups(names, {"groupby": f"{key}_group",
                                                                     "ssfs_method": ranked.method})
    group_names = np.asarray(extra["group_names"], dtype=object)
    if len(extra["groups"]) == adata.n_obs:
        adata.obs[f"{key}_group"] = pd.Categorical(group_names[extra["groups"]], categories=list(group_names))
    cells = extra.get("unseen_cells")
    if cells is not None and len(cells) == adata.n_obs:  # populations no labeled class's group matches
        populations = [f"population {j + 1}" for j in range(len(extra.get("unseen_sizes", [])))]
        adata.obs[f"{key}_population"] = pd.Categorical.from_codes(np.asarray(cells), categories=populations)


def markers_df(adata, group=None, *, key: str = "propagate", **kwargs) -> pd.DataFrame:
    """The per-class markers stored by :func:`ssfs.tl.rank_features` under ``key`` as one long
    table, as ``scanpy.get.rank_genes_groups_df`` gives it.

    Parameters
    ----------
    adata
        An AnnData ranked by a method with per-class markers.
    group
        One group, a list of groups, or None for all.
    key
        The ``key_added`` (or method name) of the ranking.
    **kwargs
        scanpy's filters (``pval_cutoff``, ``log2fc_min``, ...).

    Returns
    -------
    pandas.DataFrame
        group, names, scores, logfoldchanges, pvals, pvals_adj, pct_nz_group, pct_nz_reference.
    """
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
