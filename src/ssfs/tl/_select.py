"""``ssfs.tl.select_stable``: the stable consensus list of several methods (selection mode)."""

from __future__ import annotations

import warnings

import numpy as np

from .._docs import doc_params
from ..constraints import Constraints
from ..errors import MethodError
from ..experiment.stable_selection import method_settings, selection_options, stable_selection
from ._anndata import expression, labels_of, var_positions


@doc_params
def select_stable(adata, methods=("propagate",), *, groupby: str | None = None,
                  unlabeled_values=(), use_raw: bool | None = None, layer: str | None = None,
                  params: dict | None = None, resamples: int = 20, top: int = 10, threshold: float = 0.6,
                  scheme: str = "cpss", aggregation: str = "mean_rank", constraints=None,
                  key_added: str = "ssfs_selection", random_state: int = 0, copy: bool = False):
    """The stable consensus list of ``methods`` over resamples: the workflow's selection mode
    (:mod:`ssfs.experiment.stable_selection`), the same list as ``ssfs select`` and the
    workflow give for the same matrix, labels, seed and dataset name ``key_added``.

    Parameters
    ----------
    {adata}
    methods
        Registered method names (``ssfs methods``); their rankings are aggregated on every
        resample. Default ``("propagate",)``: the semi-supervised score that led the scenarios of
        docs/labels_that_count.md (it runs label-free without labels).
        Each method builds its own graph on every resample (a stored ``obsp``
        graph covers all cells only).
    {groupby}
    {unlabeled_values}
    {use_raw}
    {layer}
    params
        ``{method: {parameter: value}}``, e.g. ``{"cls": {"k": 15}}``.
    resamples
        Number of resamples (``scheme="cpss"``: an even number, complementary pairs of
        half-samples).
    top
        q: the features each resample selects (its consensus top ``top``).
    threshold
        Selection frequency at or above which a feature is selected.
    scheme
        ``"cpss"`` (complementary pairs of half-samples, Shah & Samworth 2013) or
        ``"bootstrap"``.
    aggregation
        Rank aggregation across methods: ``"mean_rank"``, ``"rank_product"`` or
        ``"median_rank"``.
    {constraints}
    {key_added}
    {random_state}
    {copy}

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
        ``adata.uns[key_added]``
            summary.json's content: the selected features (by name, ``.raw``'s genes with
            ``use_raw``), the stability and the error bound, ``use_raw``, ``groupby`` and
            ``random_state``. With nothing selected its ``note`` says why, and is warned.
    """
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise MethodError(f"random_state must be an integer >= 0 (a seed), got {random_state!r}")
    settings = method_settings(methods, params)
    sel = selection_options(resamples=resamples, top=top, threshold=threshold, scheme=scheme,
                            aggregation=aggregation)
    if copy:
        adata = adata.copy()
    y, classes = labels_of(adata, groupby, unlabeled_values) or (np.full(adata.n_obs, -1, dtype=np.int64), [])
    data = expression(adata, use_raw, layer)
    cons = constraints if constraints is not None else Constraints.from_labels(y)
    table, summary = stable_selection(data.X, y, cons, settings, sel, seed=int(random_state),
                                      dataset=key_added, names=np.asarray(data.var_names), classes=classes)
    _store(adata, key_added, table, data.var_names, threshold)
    adata.uns[key_added] = {**summary, "groupby": groupby, "random_state": int(random_state),
                            "use_raw": data.use_raw, **({"layer": layer} if layer is not None else {})}
    if summary["note"]:
        warnings.warn(f"select_stable: {summary['note']}", UserWarning, stacklevel=2)
    return adata if copy else None


def _store(adata, key: str, table, names, threshold: float) -> None:
    """``var[f"{key}_frequency"]``, ``_rank`` and ``_selected`` of the consensus ``table``
    (rows by position in ``names``, the ranked matrix's features), by feature name."""
    pos = var_positions(adata, names)[table["index"].to_numpy()]
    hit = pos >= 0
    freq = np.zeros(adata.n_vars)
    rank = np.zeros(adata.n_vars, dtype=np.int64)
    freq[pos[hit]] = table["frequency"].to_numpy()[hit]
    rank[pos[hit]] = table["consensus_rank"].to_numpy()[hit]
    adata.var[f"{key}_frequency"] = freq
    adata.var[f"{key}_rank"] = rank
    adata.var[f"{key}_selected"] = freq >= threshold
