"""The ``propagate`` fit (:func:`fit_propagation`, :func:`_fitted`): X read, the graph kept, the groups and their
weights, the R^2 and the order, the per-group statistics."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .._shared.autocorrelation import has_count_scale
from .._shared.batches import batch_codes
from .._shared.class_stats import (
    ClassStatistics,
    centred_columns,
    class_statistics,
    variance_explained,
)
from .._shared.counts import count_like
from .._shared.deep_counts import read_deep
from .._shared.dropouts import read_dropouts
from .._shared.invariance import distinct_columns, per_distinct_column
from .._shared.propagation import (
    reach_floor,
)
from .._shared.residuals import (
    residual_explained,
)
from .._shared.signal import (
    content_rows,
)
from .._shared.unwanted import outside
from .graphs import (
    GENE_CHOICES,
    GENE_SCALES,
    SAMPLE_SCALES,
    _graph_on,
    _kept_graph,
    graph_neighbours,
    outlying_samples,
    refine_genes,
    refinement_rows,
    unchecked,
)
from .judges import _free_in_turn, few_labels
from .label_free import GRAPH_FREE, GRAPH_FREE_BELOW, _data_tiers, _label_free, _label_free_beside, with_graph_free
from .model import FOLDS, REFINE_SAMPLES, Propagation
from .ordering import (
    PER_CLASS,
    UNEXPLAINED,
    class_turns,
    explained_features,
    explained_pvalues,
    turning_markers,
    with_class_turns,
    with_unexplained,
)
from .reading import SPACES, content_and_counts, crossed_batches, read_tails
from .weights import _graph_note, _judged_groups, _weighted_groups, coherence, graphs_excess, propagated_weight


def fit_propagation(X, y, *, counts: str = "auto", tails: str = "auto", unwanted: str = "auto",
                    **params) -> Propagation:
    """The whole model (module doc, :func:`_fitted`) of X read as counts where it holds them
    (:func:`~ssfs.methods._shared.counts.read_counts`), as log values where they are deep (bulk RNA-seq,
    :func:`~ssfs.methods._shared.deep_counts.read_deep`; the groups' statistics then of their log1p-normalised
    counts, :meth:`~ssfs.methods._shared.deep_counts.DeepCounts.log1p`) or a dense table with dropouts
    (:func:`~ssfs.methods._shared.dropouts.read_dropouts`; the statistics of the values given) with its heavy tails
    clipped (:func:`clipped_tails`), fitted again on X without its rising components where the held-out labels reject
    them (``unwanted="auto"``, :func:`unwanted_rejected`; "kept": never), and on counts within the sides of a
    residual component every group shares (:func:`crossed_batches`)."""
    if unwanted not in UNWANTED:
        raise MethodError(f"propagate: unwanted must be one of {UNWANTED}, got {unwanted!r}")
    table = X
    given, deep = read_deep(X, counts)
    given, dropped = read_dropouts(given) if deep is None and counts == "auto" else (given, None)
    X, weight, residuals = read_tails(given, tails)
    codes, space = np.asarray(y), params.get("space", "auto")
    _check_choices(space=space)
    labeled = np.unique(codes[codes >= 0]).size >= 2  # else label-free scores, which need neither
    if (dropped is not None or residuals or deep is not None and not labeled) and params.get("label_free",
                                                                                             "auto") == "auto":
        params = {**params, "label_free": "moran"}  # deep counts without labels, tables with dropouts or of residuals
    read = content_and_counts(X, space, params.get("refine_samples", REFINE_SAMPLES)) if labeled else None
    sides, found = crossed_batches(X, y, unwanted, params, read)
    if sides is not None:
        params = {**params, "batch": sides}
    model = _fitted(X, y, unclipped=given, unwanted=unwanted, read=read, labels_may_lead=dropped is None, **params)
    model.crossed = found
    if model.unwanted_basis is not None:
        basis, evidence, on_lean = model.unwanted_basis, model.unwanted_evidence, model.unwanted_on_lean
        batch = batch_codes(params.get("batch"), np.asarray(y).size, "propagate: batch", MethodError)
        model = _fitted(outside(X, basis, batch), y, unclipped=given, unwanted="kept", labels_may_lead=dropped is None,
                        **params)
        model.unwanted, model.unwanted_evidence, model.removed_basis = int(basis.shape[1]), evidence, basis
        model.unwanted_on_lean = on_lean
    model.tail_weight = weight
    model.deep_theta = None if deep is None else deep.theta
    model.dropout_offset = None if dropped is None else dropped.offset
    model.residual_tails = residuals
    if (deep is not None or dropped is not None) and model.statistics is not None:
        P, present = _memberships(model.groups, model.sample_weight, len(model.group_names))
        # deep counts: fold changes, fractions expressing of the counts; tables with dropouts: of the values given
        model.statistics = _group_statistics(table if deep is None else deep.log1p(), P,
                                             np.asarray(model.group_names, dtype=object)[present])
    return model


def _fitted(X, y, *, k="auto", n_pcs: int = 50, refine: int = 2, genes="auto",
            propagation: str = "spread", alpha: float = 0.99, class_mass: str = "uniform",
            unreached: bool = True, refine_samples: int = REFINE_SAMPLES, graph=None, embedding=None,
            weighting: str = "evidence", label_free: str = "auto", gene_choice: str = "balanced",
            unexplained: str = "interleave", explained: str = "auto", batch=None, classes=None,
            space: str = "auto", per_class: str = "auto",
            graph_free: str = "auto", gene_scale: str = "auto", sample_scale: str = "auto",
            unclipped=None, unwanted: str = "kept", read=None, labels_may_lead: bool = True) -> Propagation:
    """The model of X as it is read (:func:`fit_propagation`; ``read``: its :func:`content_and_counts`); ``classes``:
    label codes' names; ``space``: the graphs' (:func:`count_model`); ``unclipped``: X before its tails were clipped;
    ``labels_may_lead``: :func:`_judged_groups`' ``may_lead``; ``unwanted`` "auto": an unfinished model where held-out
    labels reject X's rising components (:attr:`Propagation.unwanted_basis`, :func:`unwanted_rejected`: refitted)."""
    y = np.asarray(y, dtype=np.int64)
    lab = y >= 0
    prop = {"method": propagation, "alpha": alpha, "class_mass": class_mass}
    batch = batch_codes(batch, y.size, "propagate: batch", MethodError)
    if batch is not None and np.unique(batch).size < 2:
        batch = None  # one batch is no batch, bit for bit
    _check_choices(gene_choice=gene_choice, unexplained=unexplained, explained=explained, per_class=per_class,
                   graph_free=graph_free, gene_scale=gene_scale, sample_scale=sample_scale, space=space)
    if np.unique(y[lab]).size < 2:
        return _label_free(X, n_pcs, label_free, "fewer than 2 labeled classes: label-free scores", batch,
                           (graph, embedding), space, sample_scale)
    K = int(y.max()) + 1 if classes is None else max(len(classes), int(y.max()) + 1)
    pos, counts = content_and_counts(X, space, refine_samples) if read is None else read  # computed once
    opts = {"k": graph_neighbours(k, X.shape[0], np.unique(y[lab]).size), "n_pcs": n_pcs, "refine": int(refine),
            "genes": refine_genes(genes, X.shape[1], X.shape[0]), "folds": FOLDS, "graphs": {},
            "batch": batch, "counts": counts, "r2_rows": content_rows(pos, refine_samples),
            "gene_choice": "total" if unchecked(y) else gene_choice}  # no held-out check of a new choice
    chains = opts["refine"] and opts["genes"] < X.shape[1]
    rows = refinement_rows(y, pos, refine_samples) if chains else None
    if chains and rows is None and opts["gene_choice"] == "balanced" and batch is None and not sparse.issparse(X):
        opts["centred"] = (X, *centred_columns(X))  # the chains group X itself (a subsample: X[rows], not this)
    start_space = {}  # the start graph's signal components (sparse X: those of the label-free scores too)
    chosen, start, opts = _kept_graph(X, y, K, rows, opts, (prop, pos, graph, embedding, start_space),
                                      (gene_scale, sample_scale))
    floor = reach_floor(chosen.agreement[3], y[lab], K) if unreached else None
    groups, seed, lead, ranked_by = _judged_groups(X, y, K, chosen, (prop, floor, unreached), pos, batch,
                                                   weighting != "coherence" and not count_like(X), labels_may_lead)
    w_propagated, w_unreached = (0.0, 0.0) if lead[0] else propagated_weight(
        chosen.agreement, y, weighting, lambda: coherence(chosen.graph, groups),
        lambda: graphs_excess(chosen, start, y, K, prop, pos, weighting))
    if w_propagated <= 0.0 and unchecked(y):
        return _label_free(X, n_pcs, label_free, "one label per class and nothing says the graph carries the "
                                                 "classes (the propagated samples count 0): the labels alone rank "
                                                 "nothing; label-free scores", batch, (graph, embedding), space,
                           sample_scale)
    weight = np.where(lab, seed, np.where(groups < K, w_propagated, w_unreached))
    note = _graph_note(start, chosen, int(lab.sum()), lead)
    model = _model(X, y, K, groups, weight, classes, chosen, start, note, batch, (opts["counts"], opts["r2_rows"]))
    model.propagated_weight, model.labels_alone = w_propagated, lead
    model.gene_scale = "standardized" if opts["standardize"] else "as_is"
    model.sample_scale = "equal" if opts.get("equal") else "as_is"
    model.outlying = outlying_samples(X) if opts.get("equal") else np.zeros(0, dtype=np.int64)
    model.neighbours, model.refined_genes = opts["k"], opts["genes"] if chains else 0
    grouping = functools.partial(_weighted_groups, y, K, prop, floor, seed, (w_propagated, w_unreached),
                                 X if unreached else None)  # the groups and weights this fit gives on another graph
    if unexplained == "interleave" and count_like(X) and not lab.all():  # every sample labeled: R^2 alone
        how = "same" if explained == "auto" and rows is not None else explained  # cost: 2 graphs of all samples
        model.explained = _explained(X, model.scores, weight, groups, chosen.genes, how, (opts, grouping))
        free, data, _ = _label_free_beside(X, n_pcs, label_free, batch, graph, embedding, rows,
                                           start_space.get("Z") if opts["counts"] is None else None, space)
        if graph_free == "always" or (graph_free == "auto" and w_propagated < GRAPH_FREE_BELOW):
            free, model.graph_free = with_graph_free(free, X, rows, batch, opts["counts"]), has_count_scale(X)
        ahead = () if data is None else _data_tiers(model, X, data, groups, y, batch)
        model.scores = with_unexplained(model.scores, free, model.explained, ahead)
    elif unexplained == "interleave" and ranked_by is not None and not count_like(X):
        free, _, free_how = _label_free_beside(X, n_pcs, label_free, batch, graph, embedding, rows, None, space,
                                               sample_scale)
        _free_in_turn(model, X, y, K, (free, free_how), ranked_by, pos, batch,
                      lambda: _explained(X, model.scores, weight, groups, chosen.genes, explained, (opts, grouping)),
                      X if unclipped is None else unclipped,
                      may_lead=bool(few_labels(y) or lead[0] or weight[~lab].sum() >= weight[lab].sum()),
                      unwanted_pcs=n_pcs if unwanted == "auto" else None)
        if model.unwanted_basis is not None:
            return model  # fitted again without them (fit_propagation)
    model.class_turns = class_turns(per_class, model)
    if model.class_turns != "none":
        model.scores = with_class_turns(model.scores, *turning_markers(model.statistics, model.class_turns))
    return model


def _check_choices(**given: str) -> None:
    """One line when a choice among named options is not one of them (the fit's own calls; the
    registry checks ``propagate``'s parameters first)."""
    options = {"gene_choice": GENE_CHOICES, "unexplained": UNEXPLAINED, "explained": EXPLAINED,
               "per_class": PER_CLASS, "graph_free": GRAPH_FREE, "gene_scale": GENE_SCALES,
               "sample_scale": SAMPLE_SCALES, "space": SPACES}
    for name, value in given.items():
        if value not in options[name]:
            raise MethodError(f"propagate: {name} must be one of {options[name]}, got {value!r}")


def _explained(X, r2, weight, groups, genes, how: str, refit) -> np.ndarray:
    """:func:`explained_features` of the fit. ``genes``: those of the kept (refined) graph, or
    None (the start graph kept: nothing to cross-fit). ``how`` (the ``explained`` parameter):
    "same", every feature on the fit's groups; "crossfit", the graph's genes cross-fitted
    (:func:`crossfit_pvalues`; ``refit``: its arguments after ``r2``); "auto", cross-fitted when
    fewer than :data:`REPLICATED` of the graph's genes explained on the fit's groups are explained
    cross-fitted too (the groups then follow the genes' noise), else on the fit's groups."""
    batch = refit[0].get("batch")
    n_batches = np.unique(batch).size if batch is not None else 1
    p = explained_pvalues(r2, weight, groups, n_batches)
    same = explained_features(r2, weight, groups, pvalues=p)
    if genes is None or how == "same" or (how == "auto" and not same[genes].any()):
        return same
    p[genes] = crossfit_pvalues(X, genes, r2, *refit)
    crossed = explained_features(r2, weight, groups, pvalues=p)
    if how == "auto" and crossed[genes].sum() >= REPLICATED * same[genes].sum():
        return same
    return crossed


def _memberships(groups: np.ndarray, weight: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P, present)``: every sample's weight in its group (n x the groups that hold a sample, the
    memberships :func:`ssfs.class_statistics` reads) and those groups' codes."""
    P = np.zeros((groups.size, n_groups))
    P[np.arange(groups.size), groups] = weight
    present = np.flatnonzero(P.sum(axis=0) > 0)
    return P[:, present], present


#: the fields of :class:`~ssfs.methods._shared.class_stats.ClassStatistics` that hold a value per group and feature
PER_FEATURE = ("mean", "mean_rest", "var", "var_rest", "pts", "pts_rest", "scores", "pvals", "pvals_adj",
               "logfoldchanges")


def _group_statistics(X, P: np.ndarray, names: np.ndarray) -> ClassStatistics:
    """:func:`ssfs.class_statistics` of the groups' memberships ``P`` on X's distinct columns, copied to their
    duplicates (a copy gets its feature's bits, as :func:`~ssfs.methods._shared.invariance.per_distinct_column`;
    the Benjamini-Hochberg adjustment over the distinct features): the statistics the fit reports and the groups'
    leaders it takes in turn (:func:`turning_markers`) read."""
    first, group = distinct_columns(X)
    if first.size == X.shape[1]:
        return class_statistics(X, P, names)
    stats = class_statistics(X[:, first], P, names)
    return dataclasses.replace(stats, **{f: getattr(stats, f)[:, group] for f in PER_FEATURE})


def _model(X, y, K, groups, weight, classes, chosen, start, note, batch=None, counts=(None, None)) -> Propagation:
    """Scores, group names and per-group statistics of the final groups. The scores: every feature's R^2 on the
    groups; on counts whose residuals the graphs are built on (``counts``: (:func:`count_model`, the cells
    :func:`~ssfs.methods._shared.signal.content_rows` chooses beyond ``refine_samples``, None: all)) that of its
    Pearson residuals (:func:`~ssfs.methods._shared.residuals.residual_explained`: groups of different depths
    would rank every moderately expressed gene's log values), NaN where X's feature is constant. With batches the
    log values' within batches, as before: one model's residuals carry every batch's own gene shares (3 or 4 batches
    of ``ssfs.simulate``, batch given: 0.96-0.98 of the markers against 1.00)."""
    names = [str(classes[c]) if classes is not None and c < len(classes) else str(c) for c in range(K)]
    names += [f"unlabeled {j + 1}" for j in range(int(groups.max()) + 1 - K)]
    P, present = _memberships(groups, weight, len(names))
    stats = _group_statistics(X, P, np.asarray(names, dtype=object)[present])
    acc, chance = chosen.agreement[:2]
    scores = per_distinct_column(lambda A: variance_explained(A, groups, weight, batch), X)  # copies: same bits
    if counts[0] is not None and batch is None:
        scores = np.where(np.isfinite(scores), residual_explained(counts[0], groups, weight, batch, counts[1]),
                          np.nan)
    return Propagation(scores, groups, names, stats, chosen.name, float(acc),
                       float(chance), float(start.agreement[0]), chosen.dims, note, sample_weight=weight)


#: ``unwanted``: X's rising components removed where the held-out labels reject them ("auto",
#: :func:`unwanted_rejected`) or never ("kept")
UNWANTED = ("auto", "kept")
#: how the kept graph's own genes are tested (the ``explained`` parameter; :func:`crossfit_pvalues`)
EXPLAINED = ("auto", "crossfit", "same")
#: share of the kept graph's explained genes that must be explained cross-fitted too for ``explained="auto"``
#: to keep the fit's own test (measured: 0.33-0.96 on the planted scenarios, where cross-fitting cost up to
#: 0.04 of the markers below 0.45; 0.06-0.10 where the groups followed the genes' noise)
REPLICATED = 0.2


def crossfit_pvalues(X, genes: np.ndarray, r2: np.ndarray, opts: dict, grouping) -> np.ndarray:
    """:func:`explained_pvalues` of the ``genes`` the kept graph was built on, each half tested on
    the groups of a graph built on the other half. A refined graph's groups follow its genes'
    noise as well as the classes, so its own genes pass the F test by construction (measured on a
    Splatter-like model outside the project, one type unlabeled, 1 % labels: 76 of the 77 non-marker
    genes called explained were among the 200 genes of the graph; cross-fitted, none was). The halves
    alternate down the genes' distinct R^2 values (copies of a feature share a half; the order of
    the features does not matter). ``opts``: the fit's graph options (``_graph_on``; ``batch``);
    ``grouping(W) -> (groups, weight)``: the fit's groups and sample weights on another graph.
    Returns the p-values of ``genes``, in their order."""
    batch = opts.get("batch")
    n_batches = np.unique(batch).size if batch is not None else 1
    half = np.unique(np.nan_to_num(r2[genes], nan=-np.inf), return_inverse=True)[1] % 2 == 0
    out = np.ones(genes.size)
    for part in (half, ~half):
        other = genes[~part]
        if not part.any() or other.size < 2:
            continue
        groups, weight = grouping(_graph_on(X, np.sort(other), opts)[0])
        r2_part = per_distinct_column(lambda A, g=groups, w=weight: variance_explained(A, g, w, batch),
                                      X[:, genes[part]])
        out[part] = explained_pvalues(r2_part, weight, groups, n_batches)
    return out
