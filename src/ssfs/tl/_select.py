"""``ssfs.tl.select_stable``: the stable consensus list of several methods (selection mode)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._docs import doc_params
from ..constraints import Constraints
from ..errors import MethodError
from ..experiment.selection_defaults import SELECTION_DEFAULTS as _SEL
from ..experiment.stable_selection import (
    method_settings,
    methods_for,
    selection_options,
    stable_selection,
)
from ._anndata import batch_of, expression, labels_of, var_positions


@doc_params
def select_stable(adata, methods="auto", *, groupby: str | None = None,
                  unlabeled_values=(), use_raw: bool | None = None, layer: str | None = None,
                  params: dict | None = None, resamples: int = _SEL["resamples"], top="auto",
                  threshold: float = _SEL["threshold"], max_false: float = _SEL["max_false"],
                  assumption: str = _SEL["assumption"], scheme: str = _SEL["scheme"],
                  aggregation: str = _SEL["aggregation"], labeled: str = _SEL["labeled"], constraints=None,
                  key_added: str = "ssfs_selection", random_state: int = 0, copy: bool = False,
                  batch_key: str | None = None):
    """The stable consensus list of ``methods`` over resamples: the workflow's selection mode
    (:mod:`ssfs.experiment.stable_selection`), the same list as ``ssfs select`` and the
    workflow give for the same matrix, labels, seed and dataset name ``key_added``.

    Parameters
    ----------
    {adata}
    methods
        Registered method names, or ``"auto"``: propagate alone on counts and labeled data, else
        a committee (:func:`ssfs.experiment.stable_selection.methods_for`; ``uns`` ``methods_rule``).
    {groupby}
    {unlabeled_values}
    {use_raw}
    {layer}
    params
        ``{method: {parameter: value}}``, e.g. ``{"cls": {"k": 15}}``.
    resamples
        Number of resamples (``scheme="cpss"``: an even number, complementary pairs of
        half-samples).
    top, threshold, max_false, assumption
        q, the features each resample selects, or ``"auto"``: the largest q whose error bound
        (``assumption``: ``"r_concave"``, ``"unimodal"`` or ``"none"``, Shah & Samworth 2013) at
        ``threshold`` (the frequency that selects a feature) is at most ``max_false``.
    scheme
        ``"cpss"`` (complementary pairs of half-samples, Shah & Samworth 2013) or
        ``"bootstrap"``.
    aggregation
        Across methods: ``"stability_weighted"`` (by each method's own stability, squared),
        ``"mean_rank"``, ``"rank_product"`` or ``"median_rank"``.
    {labeled}
    {constraints}
    {key_added}
    {random_state}
    {copy}
    {batch_key}

    Returns
    -------
    anndata.AnnData or None
        The AnnData with the results when ``copy``, else None (``adata`` is updated):

        ``adata.var[f"{key_added}_frequency"]``
            The selection frequency over the resamples.
        ``adata.var[f"{key_added}_rank"]``
            The consensus rank, 1 = best.
        ``adata.var[f"{key_added}_selected"]``
            frequency >= ``threshold``.
        ``adata.var[f"{key_added}_marks"]``, ``_direction``, ``_log_fold_change``
            With labels: the class each feature marks, up or down, its log fold change.
        ``adata.uns[key_added]``
            summary.json's content (features, ``verdict``, stability, error bound), ``use_raw``,
            ``groupby``, ``random_state``; DataFrames ``class_means``, ``class_fractions``
            (features x classes) and ``stability_path``. With nothing selected, ``note`` is warned.
    """
    seed = _seed(random_state)
    method_settings(methods, params)  # checked before the data is read
    sel = selection_options(resamples=resamples, top=top, threshold=threshold, max_false=max_false,
                            assumption=assumption, scheme=scheme, aggregation=aggregation, labeled=labeled)
    adata = adata.copy() if copy else adata
    y, classes = labels_of(adata, groupby, unlabeled_values) or (np.full(adata.n_obs, -1, dtype=np.int64), [])
    data = expression(adata, use_raw, layer)
    cons = constraints if constraints is not None else Constraints.from_labels(y)
    settings, rule = methods_for(methods, data.X, params, y)
    res = stable_selection(data.X, y, cons, settings, sel, seed=seed, dataset=key_added, rule=rule, classes=classes,
                           names=np.asarray(data.var_names), batch=batch_of(adata, batch_key), samples=adata.obs_names)
    _store(adata, key_added, res.table, data.var_names, threshold)
    adata.uns[key_added] = {**res.summary, **_uns_frames(res, data.var_names), "groupby": groupby,
                            "random_state": seed, "use_raw": data.use_raw,
                            **{k: v for k, v in (("batch_key", batch_key), ("layer", layer)) if v is not None}}
    if res.summary["note"]:
        warnings.warn(f"select_stable: {res.summary['note']}", UserWarning, stacklevel=2)
    return adata if copy else None


def _seed(random_state) -> int:
    """``random_state`` as the seed of the selection (a one-line error unless an integer >= 0)."""
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise MethodError(f"random_state must be an integer >= 0 (a seed), got {random_state!r}")
    return int(random_state)


def _uns_frames(res, names) -> dict:
    """``class_means``, ``class_fractions`` (features x classes, the ranked matrix's features) and
    ``stability_path`` of a selection result, as DataFrames for ``uns``."""
    out = {"stability_path": res.path}
    att = res.summary.get("attribution")
    if att is not None:
        by = res.table.set_index("index").sort_index()
        for what in ("mean", "fraction"):
            out[f"class_{what}s"] = pd.DataFrame({c: by[f"{what}_{c}"].to_numpy() for c in att["classes"]},
                                                 index=pd.Index(np.asarray(names).astype(str)))
    return out


def _store(adata, key: str, table, names, threshold: float) -> None:
    """``var[f"{key}_frequency"]``, ``_rank``, ``_selected`` and, with labels, ``_marks``,
    ``_direction`` and ``_log_fold_change`` of the consensus ``table`` (rows by position in
    ``names``, the ranked matrix's features), by feature name."""
    pos = var_positions(adata, names)[table["index"].to_numpy()]
    hit = pos >= 0
    freq = np.zeros(adata.n_vars)
    rank = np.zeros(adata.n_vars, dtype=np.int64)
    freq[pos[hit]] = table["frequency"].to_numpy()[hit]
    rank[pos[hit]] = table["consensus_rank"].to_numpy()[hit]
    adata.var[f"{key}_frequency"] = freq
    adata.var[f"{key}_rank"] = rank
    adata.var[f"{key}_selected"] = freq >= threshold
    if "marks" in table.columns:
        for col, empty in (("marks", ""), ("direction", ""), ("log_fold_change", np.nan)):
            values = np.full(adata.n_vars, empty, dtype=object if empty == "" else np.float64)
            values[pos[hit]] = table[col].to_numpy()[hit]
            adata.var[f"{key}_{col}"] = values
