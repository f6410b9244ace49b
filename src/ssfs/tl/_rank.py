"""``ssfs.tl.rank_features``: one method's ranking of the genes of an AnnData."""

from __future__ import annotations

import numpy as np

from .._docs import doc_params
from ..errors import SupervisionError
from ..labels import class_counts
from ..registry import get_method
from ..runner import run_method, within_batches
from ..seeding import as_generator
from ._anndata import batch_of, cell_graph, expression, labels_of, refuse_label_aliases, store, var_positions
from ._markers import store_markers


@doc_params
def rank_features(adata, method: str = "propagate", *, groupby: str | None = None, unlabeled_values=(),
                  use_raw: bool | None = None, layer: str | None = None, key_added: str | None = None,
                  copy: bool = False, graph="auto", constraints=None, random_state=0, batch_key: str | None = None,
                  **params):
    """Rank the features (genes) of ``adata`` with the registered method ``method``.

    Parameters
    ----------
    {adata}
    {method}
    {groupby}
    {unlabeled_values}
    {use_raw}
    {layer}
    {key_added}
        Default: ``method``.
    {copy}
    {graph}
    {constraints}
    {random_state}
    {batch_key}
    {method_params}

    Returns
    -------
    anndata.AnnData or None
        The AnnData with the results when ``copy``, else None (``adata`` is updated):

        ``adata.var[f"{key}_score"]``
            The method's score (-inf/inf where undefined).
        ``adata.var[f"{key}_rank"]``
            1 = best (subset methods: unselected features share the last rank). With
            ``use_raw``, the ranks are among the genes of ``.raw``; genes of ``var`` that
            are not in ``.raw`` get NaN.
        ``adata.var[f"{key}_explained"]``
            ``propagate`` on counts (dense X: where ``label_free_turns``): True for the genes
            the labels' groups explain (an F test of their R^2, Benjamini-Hochberg 5 %), ranked
            first; the others follow in turn by R^2 and by the label-free score (structure the
            labels do not explain).
        ``adata.uns[key]``
            ``method``, ``params``, ``graph`` (which graph was used), ``random_state``,
            ``use_raw``, ``layer`` (when given), ``groupby``, ``n_labeled`` (labeled
            samples per class, by name) and ``n_unlabeled``; with ``use_raw`` and genes of
            ``.raw`` missing from ``var``, also ``names`` and ``scores`` of every ranked
            gene, best first (as :func:`scanpy.tl.rank_genes_groups` keeps its results).

    Examples
    --------
    >>> import scanpy as sc, ssfs
    >>> adata = sc.datasets.pbmc68k_reduced()   # .raw: log-normalised; X: scaled
    >>> ssfs.tl.rank_features(adata, "cls", groupby="bulk_labels", k=15)   # ranks .raw
    >>> adata.var.sort_values("cls_rank").head()
    """
    as_generator(random_state, name="random_state")
    if copy:
        adata = adata.copy()
    refuse_label_aliases(params)
    spec = get_method(method)
    labels = labels_of(adata, groupby, unlabeled_values)
    data = expression(adata, use_raw, layer)
    G, graph_used = cell_graph(adata, spec, params, graph)
    X, call = within_batches(method, data.X, dict(params), batch_of(adata, batch_key))
    if G is not None:
        call["graph"] = G
    ranked = run_method(method, X, labels, constraints, rng=random_state, **call)  # names reach the errors
    if ranked.kind == "extraction":
        raise SupervisionError(f"{method!r} extracts components; it does not rank features")
    key = key_added or method
    store(adata, key, ranked, data.var_names)
    store_markers(adata, key, ranked, data.var_names)
    adata.uns[key] = _record(adata, ranked, data, labels, groupby=groupby, unlabeled_values=unlabeled_values,
                             params=params, graph=graph_used, random_state=random_state)
    if batch_key is not None:
        adata.uns[key]["batch_key"] = batch_key
    return adata if copy else None


def _record(adata, ranked, data, labels, *, groupby, unlabeled_values, params, graph, random_state) -> dict:
    """``adata.uns[key]`` of :func:`rank_features`: what was ranked, how, with which labels."""
    info = {"method": ranked.method, "params": {k: v for k, v in params.items() if k != "graph"}, "graph": graph,
            "random_state": -1 if random_state is None else int(random_state), "use_raw": data.use_raw}
    if data.layer is not None:
        info["layer"] = data.layer
    if (var_positions(adata, data.var_names) < 0).any() and ranked.scores is not None:
        info["names"] = np.asarray(data.var_names[ranked.order], dtype=object).astype(str)
        info["scores"] = np.asarray(ranked.scores)[ranked.order]
    if labels is not None:
        info["groupby"] = groupby
        info["n_labeled"] = class_counts(*labels)
        info["n_unlabeled"] = int((labels.codes < 0).sum())
    if unlabeled_values:
        info["unlabeled_values"] = [str(v) for v in np.atleast_1d(np.asarray(unlabeled_values, dtype=object))]
    if fit := ranked.result.fit_summary():
        info["fit"] = fit
    if named := ranked.result.outlying(adata.obs_names):
        info["outlying_samples"] = named
    return info
