"""``propagate``: labels spread over a kNN graph into classes, features ranked by the share of
their variance the classes explain, per-class markers beside (issue #28; docs/labels_that_count.md).

1. Graph space: the principal components of X (columns standardised when dense) that carry
   more variance than any component of a column-permuted copy (parallel analysis,
   :mod:`ssfs.methods._shared.signal`); for counts (``space="auto"``) those of the Pearson
   residuals of the counts behind X (Lause et al. 2021; one overdispersion for all genes,
   :mod:`ssfs.methods._shared.residuals`), where the noise of highly expressed genes no longer
   leads the components; kNN graph on them, half an average labeled class of neighbours within 5-15
   (:func:`graph_neighbours`; or the given ``graph`` / ``embedding``, e.g.
   scanpy's ``obsp['connectivities']`` / ``obsm['X_pca']``).
2. Propagation: local and global consistency (Zhou et al. 2004) or the harmonic function
   (Zhu et al. 2003), class mass normalisation, argmax: every sample gets a class; labels are
   kept (a label its held-out neighbourhood contradicts counts half); samples a class claims
   but its labels barely reach form groups of their own ("none of these":
   :func:`ssfs.methods._shared.propagation.unreached_groups`), weighing the graph's reliability
   (no label informs their mean; :func:`propagated_weight`); the parts of one such population,
   claimed by different classes, are joined by their shared markers (``joined_unreached``). The
   propagated samples count 0 where the features the labels pick alone predict the held-out labels
   better than those the propagated samples' groups explain (a discriminant of the labeled samples:
   :mod:`ssfs.methods._shared.labels_alone`; co-expressed gene modules otherwise lead the scores).
3. Score: R^2 of every feature on those groups (between-group over total sum of squares; it
   ranks as the ANOVA F; on counts without batches that of its Pearson residuals, whose means do not follow the
   cells' depth as log values do: :func:`~ssfs.methods._shared.residuals.residual_explained`); per-class
   statistics (:func:`ssfs.class_statistics`, of X's values) for the markers.
   On counts the features the groups explain (:func:`explained_features`) come first, then those of
   a population the data separate that the groups miss (:func:`unseen_populations`: a type nobody
   labeled), those the data's own k-means groups explain (:func:`cluster_parts`), and the others
   in turn by R^2 and by the label-free score (:func:`with_unexplained`, ``unexplained``); with every
   sample labeled all by R^2 (no type can hide from the labels; the label-free order ranked genes of
   large own dispersion among the markers: bulk RNA-seq of 24 samples 0.647 -> 0.725 of them,
   Splatter-like cells of 14 types 0.704 -> 0.730; docs/labels_that_count.md, "Bursty genes"). On dense
   X the explained features first and the others in turn by R^2 and by the label-free score too, where
   the label-free score's best features predict at least as many held-out labels as those the R^2
   follows (:func:`free_turns`); else all by R^2. Where the R^2 leads every group's best up-marker
   (Welch's t) then takes a turn with that order (``per_class="auto"``, :func:`class_turns`); with
   ``per_class="interleave"`` every group's up-markers, read group by group as scanpy's ``rank_genes_groups``
   (:func:`with_class_turns`).
4. Refinement (``refine`` rounds): the graph is rebuilt on the best ``genes`` features (at most one per
   sample, :func:`refine_genes`) and the
   labels spread again. Two chains start from different pilots, the graph of all features and
   the labeled samples alone (their R^2); the graph (start or chain end) that agrees best with
   held-out labels (3 folds, each refitting the chain) is kept: the data decide whether the graph
   or the labels lead (every sample labeled: both pilots are the labels' R^2, one chain runs).
   The ``genes`` are half the best by R^2, half taken in turn from every group's own up-markers
   (one-vs-rest R^2), so a rare type's markers enter the graph (:func:`top_genes`,
   ``gene_choice="balanced"``; "total": all by R^2, the former default).
   Beyond ``refine_samples`` samples the chains run on a subsample and the
   chosen genes give one graph of all samples (:func:`refinement_rows`): cost follows the work.
5. Batches (``batch``): every graph's components are centred in each batch (samples are
   neighbours for what differs within their batch) and every R^2 is taken within batches (x minus
   its batch mean: ComBat's location model, without its scale and shrinkage), so groups follow
   the classes, not the batches, and a gene that only differs between batches does not rank.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
from scipy import sparse

from ..errors import MethodError
from ..labels import current_classes
from ..params import NonNegInt, OpenFraction, PosInt
from ..registry import SelectionResult, register
from ._shared.autocorrelation import count_scale, has_count_scale, moran_i, poisson_autocorrelation
from ._shared.batches import batch_codes, centred_in_batches
from ._shared.class_stats import (
    ClassStatistics,
    benjamini_hochberg,
    centred_columns,
    class_statistics,
    explained_and_one_vs_rest,
    variance_explained,
    within_batch_total,
)
from ._shared.counts import count_like
from ._shared.crossed import crossed_sides
from ._shared.deep_counts import DEEP_DROPOUTS, read_deep
from ._shared.dropouts import read_dropouts
from ._shared.graph import knn_graph
from ._shared.invariance import distinct_columns, per_distinct_column
from ._shared.kmeans import kmeans
from ._shared.labels_alone import (
    GENES,
    labels_alone_agreement,
    labels_lead,
    labels_own_features,
    nearer_own_class,
    propagated_features,
    top_by_r2,
)
from ._shared.populations import smallest_population, unmatched_populations
from ._shared.propagation import (
    graph_agreement,
    held_out_agreement,
    joined_unreached,
    propagate,
    reach_floor,
    unreached_groups,
)
from ._shared.representation import signal_pca
from ._shared.residuals import (
    CountModel,
    binary_counts,
    residual_autocorrelation,
    residual_embedding,
    residual_explained,
    residual_variance,
)
from ._shared.signal import (
    MIN_DIMS,
    canonical_rows,
    clearly_above,
    clearly_rising,
    content_rows,
    equal_samples,
    loudness,
    rising_embedding,
    scaled,
    signal_dims,
    signal_embedding,
    standardized,
    tail_skew,
    tail_weight,
    winsorized,
)
from ._shared.unwanted import outside, outside_dispersion, rising_basis

#: folds of the held-out agreement of the refined chains (each fold refits the chain)
FOLDS = 3
#: refinement gene count "auto": 10 % of the features, within these bounds, and at most one per sample
#: (:func:`refine_genes`)
AUTO_GENES = (100, 500)
#: the kNN graphs' neighbours "auto": half an average labeled class (n / 2K) within these bounds
#: (:func:`graph_neighbours`; 15 is scanpy's default)
AUTO_K = (5, 15)
#: most samples the refinement chains and their held-out refits run on (:func:`refinement_rows`)
REFINE_SAMPLES = 10_000
#: held-out labels that measure the agreement of the graph of all samples built after a choice on a subsample
#: (:func:`_chosen_on_rows`): its folds stop once this many are held out (a standard error of at most 0.016; at
#: 1,000,000 cells with 1 % labeled the first fold holds 3,334 of them, and each fold spreads the labels over
#: every cell: 2 of the 3 spreads, 87 of 260 s CPU, saved)
HELD_OUT_ENOUGH = 1000


@dataclass
class Candidate:
    """A graph the labels may spread on: where it came from, its signal dimensions, its groups
    and the class scores they come from (:func:`~ssfs.methods._shared.propagation.propagate`),
    and its held-out agreement with the labels (accuracy, chance, predictions)."""

    name: str
    graph: Any
    dims: int
    groups: np.ndarray
    spread: np.ndarray
    agreement: tuple = (0.0, 1.0, None, None)
    genes: np.ndarray | None = None
    #: (graph, labels, content positions) of the subsample the graph was chosen on (many samples)
    sample: tuple | None = None
    #: the chain that built the graph, rerun for other labels (``rerun(y) -> Candidate | None``)
    rerun: Any = None
    #: the chain refitted without each fold's labels (:func:`_chain_agreement`; key: the fold's labels' bytes)
    folds: dict = dataclasses.field(default_factory=dict)


#: the ``extra["graph"]`` keys of :attr:`Propagation.free_head` (:func:`head_carries`)
HEAD_KEYS = ("label_free_head_features", "label_free_head_right", "label_free_head_held", "label_free_head_chance",
             "label_free_head_of")
#: ``extra["graph"]``'s keys of :attr:`Propagation.free_outside` (:func:`r2_outside_right`)
OUTSIDE_KEYS = ("label_free_outside_right", "label_free_outside_held")
#: ``extra["graph"]``'s keys of :attr:`Propagation.free_unproven`
UNPROVEN_KEYS = ("label_free_unproven_standing", "label_free_unproven_of")


@dataclass
class Propagation:
    """The fitted model: scores, group of every sample (codes; names in ``group_names``), the
    per-group statistics, the graph kept and how well the labels agree with it."""

    scores: np.ndarray
    groups: np.ndarray
    group_names: list
    statistics: ClassStatistics | None
    chosen: str
    agreement: float
    chance: float
    start_agreement: float
    dims: int
    note: str | None = None
    propagated_weight: float = float("nan")
    #: the features the groups explain (:func:`explained_features`; None: R^2 orders all)
    explained: np.ndarray | None = None
    #: whether the label-free scores beside the R^2 took the graph-free one in turn (:func:`with_graph_free`)
    graph_free: bool = False
    #: the features of the populations the groups miss (:func:`unseen_populations`; None: not looked for)
    unseen: np.ndarray | None = None
    #: those populations' sizes (samples of the rows the data's groups were cut on)
    unseen_sizes: list = dataclasses.field(default_factory=list)
    #: every sample's population (0, 1, ...; -1: none, or not among those rows; None: not looked for)
    unseen_cells: np.ndarray | None = None
    #: (lead, beyond, behind): whether the labels alone predict the held-out labels better than the
    #: graph (:func:`~ssfs.methods._shared.labels_alone.labels_lead`; the propagated samples then count 0)
    labels_alone: tuple = (False, 0, 0)
    #: the scale of the genes the kept graph was built on (:func:`gene_scales`)
    gene_scale: str = "standardized"
    #: the scale of the samples the kept graph was built on (:func:`graph_scales`)
    sample_scale: str = "as_is"
    #: the samples much louder or quieter than the others, when the kept graph scaled them alike
    #: (:func:`outlying_samples`)
    outlying: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: (turns, b, c, nearer, farther) of dense X: whether the label-free scores were taken in turn with the R^2
    #: and the held-out counts behind it (:func:`free_turns`)
    free_turns: tuple = (False, 0, 0, 0, 0)
    #: whether those label-free scores then ranked alone after the explained features (:func:`free_leads`)
    free_leads: bool = False
    #: how the groups' up-markers entered the order (:func:`class_turns`: "none", "interleave", "leaders")
    class_turns: str = "none"
    #: whether they did because the held-out labels could not judge (:func:`held_out_judges` False)
    free_unjudged: bool = False
    #: whether they did on the places of the held-out labels' own classes alone (:func:`free_leads`: the
    #: predictions' own counts b, c did not pass)
    free_by_places: bool = False
    #: whether they did because the R^2's features predicted the held-out labels no better than chance where no
    #: component rises or what rises lies in few features (:func:`label_free_at_chance`)
    free_at_chance: bool = False
    #: whether they did so where components rise whose variance lies in few features (:func:`label_free_at_chance`)
    free_concentrated: bool = False
    #: then (accuracy, chance, held-out labels) of those features (:func:`r2_at_chance`; also where the head or
    #: the unproven rule led)
    r2_held_out: tuple | None = None
    #: (features, right, held-out labels, chance, label-free scores) where the label-free order led because the head
    #: of the few features that stand out in it carries the classes (:func:`head_carries`); () where it did not
    free_head: tuple = ()
    #: (right, held-out labels) of the R^2's best features outside those that stand out, where the head led
    #: although the R^2's features predicted more because those outside predict the held-out labels not beyond chance
    #: (:func:`r2_outside_right`); () where the head led on its own share, or did not lead
    free_outside: tuple = ()
    #: (features standing out, label-free scores) where the label-free order led, the features the groups explain
    #: not first, because the R^2's features predict the held-out labels not beyond chance while few features stand
    #: out of that order (:func:`r2_unproven`); () where it did not
    free_unproven: tuple = ()
    #: whether the label-free scores were left out because X's genes were rescaled one by one where no component
    #: rises (:func:`rescaled_gene_by_gene`)
    free_rescaled: bool = False
    #: the genes' median excess kurtosis where their heavy tails were clipped before the fit (:func:`clipped_tails`)
    tail_weight: float | None = None
    #: the kNN graphs' neighbours (:func:`graph_neighbours`) and the refined graphs' genes (:func:`refine_genes`;
    #: 0: no refinement)
    neighbours: int = 0
    refined_genes: int = 0
    #: the rising components removed from X before the fit because the held-out labels rejected them
    #: (:func:`unwanted_rejected`; 0: none) and the counts behind the test: (b, c, nearer, farther) against the
    #: features the first fit ranked by, then against the label-free scores' best
    unwanted: int = 0
    unwanted_evidence: tuple = ()
    #: whether they were removed on held-out counts that only lean (:func:`leans`, not significant) because one of
    #: them was crossed (:func:`~ssfs.methods._shared.unwanted.crossed_columns`)
    unwanted_on_lean: bool = False
    #: components of the counts' residuals every group shares, whose sides the fit read as batches
    #: (:func:`crossed_batches`; 0: none)
    crossed: int = 0
    #: a first fit's basis of the components rejected (:func:`fit_propagation` fits again without them); on the
    #: fit without them, the basis removed (``extra["unwanted_basis"]``: selection mode's resamples inherit it)
    unwanted_basis: np.ndarray | None = None
    removed_basis: np.ndarray | None = None

    #: dense X whose label-free scores took turns (:func:`free_turns`): the scores before, the labels' own
    #: order (``extra["resample_scores"]``: what a resample's top list reads in selection mode,
    #: :attr:`ssfs.runner.Ranked.resample_order`)
    labels_scores: np.ndarray | None = None
    #: every sample's weight in its group (labeled: the seed weight; propagated, unreached: theirs)
    sample_weight: np.ndarray | None = None
    #: the overdispersion of deep counts read as log values (:func:`~ssfs.methods._shared.deep_counts.read_deep`;
    #: None: not deep)
    deep_theta: float | None = None
    #: the offset of a dense table with dropouts read as ln(value + offset)
    #: (:func:`~ssfs.methods._shared.dropouts.read_dropouts`; None: not so read)
    dropout_offset: float | None = None
    #: whether dense X's heavy tails were read as residuals' (:func:`read_tails`: not clipped, Moran's I label-free)
    residual_tails: bool = False

    def extra(self) -> dict:
        """What :class:`ssfs.registry.SelectionResult` carries besides the scores: per-group statistics
        (``class_statistics``, scanpy's layout), groups, ``explained``, ``unseen``, ``unseen_sizes``,
        ``unseen_cells`` (populations missed), ``outlying_samples``, the fit (``graph``), ``note``,
        ``resample_scores`` where the label-free scores took turns, and ``unwanted_basis`` (n x r) where rising
        components were removed."""
        return {"class_statistics": self.statistics, "groups": self.groups, "group_names": self.group_names,
                "explained": self.explained, "unseen": self.unseen, "unseen_sizes": list(self.unseen_sizes),
                "unseen_cells": self.unseen_cells, "outlying_samples": self.outlying,
                "graph": {"chosen": self.chosen, "agreement": self.agreement, "chance": self.chance,
                          "start_agreement": self.start_agreement, "signal_dims": self.dims,
                          "propagated_weight": self.propagated_weight, "graph_free": self.graph_free,
                          "labels_lead": bool(self.labels_alone[0]), "labels_alone_beyond": int(self.labels_alone[1]),
                          "labels_alone_behind": int(self.labels_alone[2]), "gene_scale": self.gene_scale,
                          "sample_scale": self.sample_scale, "outlying_samples": int(self.outlying.size),
                          "label_free_turns": bool(self.free_turns[0]), "label_free_leads": bool(self.free_leads),
                          "label_free_beyond": int(self.free_turns[1]), "label_free_behind": int(self.free_turns[2]),
                          "label_free_nearer": int(self.free_turns[3]), "label_free_farther": int(self.free_turns[4]),
                          "label_free_unjudged": bool(self.free_unjudged),
                          "label_free_by_places": bool(self.free_by_places),
                          "label_free_at_chance": bool(self.free_at_chance),
                          "label_free_concentrated": bool(self.free_concentrated),
                          "label_free_head": bool(self.free_head),
                          **(dict(zip(HEAD_KEYS, self.free_head, strict=True)) if self.free_head else {}),
                          **(dict(zip(OUTSIDE_KEYS, self.free_outside, strict=True)) if self.free_outside else {}),
                          "label_free_unproven": bool(self.free_unproven),
                          **(dict(zip(UNPROVEN_KEYS, self.free_unproven, strict=True)) if self.free_unproven else {}),
                          "label_free_rescaled": bool(self.free_rescaled),
                          **({"r2_held_out": self.r2_held_out[0], "r2_chance": self.r2_held_out[1]}
                             if self.r2_held_out is not None else {}),
                          "neighbours": int(self.neighbours), "refined_genes": int(self.refined_genes),
                          "unwanted_components": int(self.unwanted),
                          "unwanted_on_lean": bool(self.unwanted_on_lean), "shared_components": int(self.crossed),
                          "class_turns": self.class_turns,
                          "clipped_tails": self.tail_weight is not None, "deep_counts": self.deep_theta is not None,
                          **({"deep_theta": self.deep_theta} if self.deep_theta is not None else {}),
                          "dropouts": self.dropout_offset is not None,
                          **({"dropout_offset": self.dropout_offset} if self.dropout_offset is not None else {}),
                          "residual_tails": bool(self.residual_tails),
                          **({"tail_weight": self.tail_weight} if self.tail_weight is not None else {})},
                "note": self.note,
                **({"resample_scores": self.labels_scores} if self.labels_scores is not None else {}),
                **({"unwanted_basis": self.removed_basis} if self.removed_basis is not None else {})}


def _knn(Z: np.ndarray, k: int):
    return knn_graph(Z, max(1, min(int(k), Z.shape[0] - 1)))


def _start_graph(X, k: int, n_pcs: int, graph, embedding, batch=None, space=None,
                 counts: CountModel | None = None, standardize: bool = True, equal: bool = False) -> tuple[Any, int]:
    """(W, dims): the given graph (symmetrised, no self loops), a kNN graph of the given
    embedding, or a kNN graph of X's signal components (of X standardised, or in its own units
    without ``standardize``; every sample's profile scaled alike with ``equal``,
    :func:`~ssfs.methods._shared.signal.equal_samples`; ``counts``: of the Pearson residuals of the counts behind X,
    :func:`~ssfs.methods._shared.residuals.residual_embedding`; either centred in every ``batch``;
    the components kept in the dict ``space`` as "Z" when one is given)."""
    n = X.shape[0]
    if graph is not None:
        G = sparse.csr_matrix(graph, dtype=np.float64)
        if G.shape != (n, n):
            raise MethodError(f"propagate: graph must be {n} x {n} (one row per sample), got {G.shape}")
        G = G.maximum(G.T).tolil()
        G.setdiag(0)
        return sparse.csr_matrix(G), 0
    if embedding is not None:
        E = np.asarray(embedding, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != n:
            raise MethodError(f"propagate: embedding must have one row per sample ({n}), got shape {E.shape}")
        return _knn(centred_in_batches(E, batch), k), E.shape[1]
    Z, d = signal_embedding(X, n_pcs, standardize=standardize, equal=equal) if counts is None else residual_embedding(
        counts, n_pcs, batch)
    if space is not None:
        space["Z"] = Z
    return _knn(centred_in_batches(Z, batch), k), d


def confounded(batch: np.ndarray | None, y: np.ndarray) -> bool:
    """Several batches, labels of 2 classes or more, and no batch holding labels of 2 classes:
    every class difference the labels show is also a batch difference, which comparing within
    batches removes."""
    lab = y >= 0
    if batch is None or np.unique(batch).size < 2 or np.unique(y[lab]).size < 2:
        return False
    pairs = np.unique(np.stack([batch[lab], y[lab]]), axis=1)
    return bool(np.bincount(pairs[0]).max() < 2)


def _groups(W, y, K, prop: dict, floor=None, seed_weight=None) -> np.ndarray:
    """Group of every sample from the labels spread over W (labels kept); with a per-class
    ``floor`` of held-out reach, groups for the samples the labels barely reach."""
    return _spread_groups(propagate(W, y, K, seed_weight=seed_weight, **prop), y, floor)


def _spread_groups(F: np.ndarray, y: np.ndarray, floor=None) -> np.ndarray:
    """:func:`_groups` of class scores F already spread (labels kept; with ``floor``, groups of their own
    for the samples the labels barely reach)."""
    if floor is not None:
        return unreached_groups(F, y, floor=floor)
    return _labels_kept(F, y)


def _labels_kept(F: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The class of largest score of every sample, its label where it has one."""
    g = F.argmax(axis=1)
    g[y >= 0] = y[y >= 0]
    return g


def _candidate(name, y, K, W, dims, prop) -> Candidate:
    """The graph W with the groups the labels y give on it and their class scores (kept: a
    chain's held-out refit reads them instead of spreading the same labels again)."""
    F = propagate(W, y, K, **prop)
    return Candidate(name, W, dims, _labels_kept(F, y), F)


def _chain(name, X, y, K, start_graph, m, opts, prop) -> Candidate | None:
    """Rebuild the graph ``opts["refine"]`` times on the ``m`` best features of the current
    scores, starting from the R^2 of the groups the labels give on the start graph ("graph")
    or of the labeled samples alone ("labels"; None below 2 labeled classes)."""
    if name == "graph":
        rows, groups = None, _groups(start_graph, y, K, prop)
    else:
        rows = np.flatnonzero(y >= 0)
        groups = np.unique(y[rows], return_inverse=True)[1]
        if groups.max(initial=0) < 1 or rows.size < 3:
            return None
    cand = None
    batch = opts.get("batch")
    centred = opts.get("centred")  # (X, its centred columns): only for that very X
    for _ in range(opts["refine"]):
        on = (X, batch) if rows is None else (X[rows], None if batch is None else batch[rows])
        genes = top_genes(on[0], groups, m, opts["gene_choice"], on[1],
                          centred[1:] if centred is not None and centred[0] is on[0] else None)
        cand = _candidate(name, y, K, *_graph_on(X, genes, opts), prop)
        cand.genes = genes
        rows, groups = None, cand.groups
    return cand


#: how the refined graphs' genes are chosen (the ``gene_choice`` parameter)
GENE_CHOICES = ("total", "balanced")


def _rank(v: np.ndarray) -> np.ndarray:
    """0 for the largest value, NaN last, ties in index order."""
    return np.argsort(np.argsort(-np.nan_to_num(v, nan=-np.inf), kind="stable"), kind="stable")


def top_genes(X, groups: np.ndarray, m: int, how: str = "total", batch=None, centred=None) -> np.ndarray:
    """The ``m`` features the next graph is built on (sorted), from the samples' ``groups``.
    "total": the best by R^2 (:func:`variance_explained`). "balanced": half of them so, the other
    half taken in turn from every group's own ranking of the features higher in it than overall
    (one-vs-rest R^2, :func:`one_vs_rest_explained`): features are ordered by their best rank in
    any list, a rank r in the R^2 list counting as r / G for G groups (ties: the larger one-vs-rest
    R^2; equal values share a rank, so the choice does not follow the column order). A group of 2 %
    of the samples then gets its markers into the graph as a large group does, where their R^2 on
    all groups never ranks them. ``batch``: R^2 within batches (:func:`variance_explained`). ``centred``:
    :func:`~ssfs.methods._shared.class_stats.centred_columns` (X) when already computed (a fit's chains
    group the same X about 50 times)."""
    if how not in GENE_CHOICES:
        raise MethodError(f"propagate: gene_choice must be one of {GENE_CHOICES}, got {how!r}")
    if how == "total":
        return np.sort(top_by_r2(X, groups, m, batch=batch))
    s, R = explained_and_one_vs_rest(X, groups, up_only=True, batch=batch, centred=centred)  # one pass over X
    s, R = np.nan_to_num(s, nan=-np.inf), np.nan_to_num(R, nan=-np.inf)
    R = R[np.bincount(groups, minlength=R.shape[0]) > 0]
    in_groups = np.min([_places(-r) for r in R], axis=0)  # equal values, e.g. the 0 of every feature not up
    overall = _places(-s) / R.shape[0]                    # in a group, share a rank: not the column order
    return np.sort(np.lexsort((-R.max(axis=0), np.minimum(in_groups, overall)))[:m])


def _graph_on(X, genes: np.ndarray, opts) -> tuple[Any, int]:
    """(W, dims): the kNN graph of the signal components of X's columns ``genes`` (standardised unless
    ``opts["standardize"]`` is False; of their counts' Pearson residuals with ``opts["counts"]``;
    ``opts["fit_rows"]``: the components fitted on those samples, every sample projected), built once
    per gene set in a fit (``opts["graphs"]``, one per scale): the chains and their held-out refits
    often pick the same genes, and the graph is a function of them alone."""
    key = genes.tobytes()
    if key not in opts["graphs"]:
        counts = opts.get("counts")
        if counts is None:
            Z, d = signal_embedding(X[:, genes], opts["n_pcs"], standardize=opts.get("standardize", True),
                                    equal=opts.get("equal", False))
        else:
            Z, d = residual_embedding(counts, opts["n_pcs"], opts.get("batch"), genes.size, genes,
                                      opts.get("fit_rows"))
        opts["graphs"][key] = (_knn(centred_in_batches(Z, opts.get("batch")), opts["k"]), d)
    return opts["graphs"][key]


def count_model(X, space: str, pos: np.ndarray, most: int) -> CountModel | None:
    """The counts behind X whose Pearson residuals the graphs are built on (``space``: "residuals",
    or "auto" for counts: :func:`~ssfs.methods._shared.counts.count_like` X without negative values),
    or None for graphs on X's values ("values", or "auto" for other X). The overdispersion from at
    most ``most`` samples chosen by content (``pos``). Measured: docs/labels_that_count.md, "Residuals"."""
    return CountModel.of(X, content_rows(pos, most)) if on_residuals(X, space) else None


def on_residuals(X, space: str) -> bool:
    """Whether the graphs are built on the Pearson residuals of the counts behind X (:func:`count_model`); an
    error for ``space="residuals"`` on X that holds no counts."""
    counts = count_like(X) and has_count_scale(X)
    if space == "residuals" and not counts:
        raise MethodError("propagate: space='residuals' needs counts or log1p-normalised counts (non-negative: "
                          "sparse, half zeros, long-tailed integers or log counts); these data are not: use "
                          "space='values'")
    return counts and space != "values"


def refine_genes(genes, p: int, n: int | None = None) -> int:
    """Features the refined graphs are built on: ``genes``, or "auto" = 10 % of the ``p`` features within
    :data:`AUTO_GENES` and at most one per sample of the ``n`` (never more than p).

    The genes are chosen by their R^2 on groups the same n samples formed, so a noise gene passes the cut where it
    happens to follow those groups, errors included: each brings about the cut's R^2 of such echo, and m genes
    chosen from p >> n bring m times it, which outweighs the markers' own signal once m is several times n (60
    samples of 6,000 genes: groups 68-85 % right on 500 genes, 88-100 % on 100; docs/labels_that_count.md,
    "Neighbours and genes for small studies"). With more samples every gene's chance R^2 shrinks as 1/n."""
    if genes == "auto":
        most = AUTO_GENES[1] if n is None else min(AUTO_GENES[1], n)
        return int(min(p, max(AUTO_GENES[0], min(most, round(0.1 * p)))))
    return int(min(p, int(genes)))


def graph_neighbours(k, n: int, n_classes: int) -> int:
    """The kNN graphs' neighbours: ``k``, or "auto" = half an average labeled class, n / (2 ``n_classes``), within
    :data:`AUTO_K` (5-15; 15 from 30 samples per class on, so cells and arrays of a few hundred samples keep 15);
    never more than n - 1.

    A neighbourhood larger than half its class reaches into the others: GLIOMA's 33 training samples of 4 classes
    with 15 neighbours each (half the data) grouped 45 % of the unlabeled samples right at 3 labels per class, 60 %
    with 5 (the 8 real arrays of ../shared at 3 labels per class, with the gene bound of :func:`refine_genes`: 0.46
    -> 0.54 on average, lymphoma's 9 classes 0.30 -> 0.51; docs/labels_that_count.md, "Neighbours and genes for
    small studies")."""
    k = min(AUTO_K[1], max(AUTO_K[0], round(n / (2 * max(int(n_classes), 1))))) if k == "auto" else k
    return int(min(k, max(n - 1, 1)))  # as every kNN search clamps it


def _agreement(c: Candidate, y, K, pos, prop) -> Candidate:
    c.agreement = graph_agreement(c.graph, y, K, positions=pos, **prop)
    return c


def _chain_agreement(c: Candidate, X, y, K, start_graph, m, opts, prop, pos) -> Candidate:
    """Held-out agreement of a chain refitted without each fold's labels (the genes the graph is
    built on are chosen without them too: no selection bias)."""
    def scores_for(yy):
        refit = _chain(c.name, X, yy, K, start_graph, m, opts, prop)
        if refit is None:
            return np.zeros((y.size, K))
        c.folds[yy.tobytes()] = refit  # its graph judges the propagated samples' features (_judged_groups)
        return refit.spread  # = propagate(refit.graph, yy, K, **prop), computed by the refit

    c.agreement = held_out_agreement(scores_for, y, K, positions=pos, folds=opts["folds"])
    return c


#: prior strength, in held-out labels, of the graph's own evidence (its coherence)
PRIOR_LABELS = 5.0


def coherence(W, groups: np.ndarray) -> float:
    """How much the graph's edges keep within the groups beyond chance, in [0, 1]: (e - c) / (1 - c)
    with e the share of edge weight joining samples of one group and c = sum_g (n_g / n)^2 its
    value for groups drawn at random. Near 1 for groups that are the graph's clusters, near 0 for
    groups the graph does not see."""
    C = sparse.coo_matrix(W)
    total = float(C.data.sum())
    if total <= 0:
        return 0.0
    within = float(C.data[groups[C.row] == groups[C.col]].sum()) / total
    chance = float(((np.bincount(groups) / groups.size) ** 2).sum())
    return float(np.clip((within - chance) / (1.0 - chance), 0.0, 1.0)) if chance < 1 else 0.0


def reliability(accuracy: float, chance: float, n_labeled: int, prior: float = 1.0) -> float:
    """Weight of the propagated (unlabeled) samples: the graph's held-out agreement above chance,
    r = (accuracy - chance) / (1 - chance) in [0, 1], shrunk towards ``prior`` (the graph's
    :func:`coherence` with its groups) by a weight of :data:`PRIOR_LABELS` held-out labels:
    (m r + 5 prior) / (m + 5) for m held-out labels. A few (perhaps wrong) labels barely move a
    graph whose groups are its clusters; many labels decide. ``prior`` when nothing could be held
    out."""
    if not np.isfinite(accuracy) or chance >= 1.0:
        return float(prior)
    r = float(np.clip((accuracy - chance) / (1.0 - chance), 0.0, 1.0))
    m = max(int(n_labeled), 0)
    return (m * r + PRIOR_LABELS * prior) / (m + PRIOR_LABELS)


#: random placements of the labels whose groups give the graph's chance coherence (:func:`null_coherence`)
NULL_DRAWS = 8
#: one-sided 95 % quantile of Student's t with NULL_DRAWS - 1 = 7 degrees of freedom (:func:`excess_coherence`)
NULL_T95 = 1.894579
#: how much the propagated samples may weigh (the ``weighting`` parameter)
WEIGHTINGS = ("evidence", "kept_evidence", "coherence")


def null_coherence(W, y: np.ndarray, K: int, prop: dict, pos: np.ndarray, rerun=None) -> np.ndarray:
    """:func:`coherence` of the groups that the same labels give when they sit on other samples,
    one value per draw (:data:`NULL_DRAWS`): draw d puts the L labels (in their content order)
    on the samples at content positions d n / D, ..., d n / D + L - 1 (mod n). Labels spread over
    a kNN graph always give groups that hold together in it; this is how much they hold together
    when the labels say nothing about the graph. With ``rerun`` (the refinement chain that built W,
    :attr:`Candidate.rerun`) each draw rebuilds its own graph from its own groups' genes, as W was
    built from the labels': a graph built on the genes that separate some groups holds those
    groups together whatever they are."""
    lab = np.flatnonzero(y >= 0)
    values = y[lab][np.argsort(pos[lab], kind="stable")]
    order = np.argsort(pos, kind="stable")
    out = []
    for d in range(NULL_DRAWS):
        yy = np.full(y.size, -1)
        yy[order[(d * y.size // NULL_DRAWS + np.arange(lab.size)) % y.size]] = values
        refit = rerun(yy) if rerun is not None else None
        out.append(coherence(W, _groups(W, yy, K, prop)) if refit is None else coherence(refit.graph, refit.groups))
    return np.asarray(out)


def excess_coherence(W, y: np.ndarray, K: int, prop: dict, pos: np.ndarray, rerun=None) -> float:
    """How much better the labels' groups hold together in the graph than the groups of labels
    placed at random (:func:`null_coherence`, mean c0 over the draws), in [0, 1]:
    (c - c0) / (1 - c0). 0 when no better: the graph does not see the labeled classes (any split
    of a kNN graph into contiguous parts is coherent; a split along the classes is more so only
    when the graph carries them). With ``rerun`` (each draw rebuilds its graph as W was built) c
    must also lie above the draws' one-sided 95 % prediction bound, c0 + t s sqrt(1 + 1/D) (s their
    standard deviation, t Student's quantile with D - 1 degrees of freedom, :data:`NULL_T95`): the
    only evidence there is, so it must be significant, not merely above the mean. The bound is
    taken on the log of the share of the graph's weight between groups, log(1 - c): that share
    varies in proportion to its size, and on a graph whose groups hold together almost perfectly
    (c near 1, random labels' groups too) a bound on c itself would lie above 1. And c must exceed
    every draw's: one draw as coherent as the labels' groups is a tail the normal bound misses."""
    c = coherence(W, _groups(W, y, K, prop))
    null = null_coherence(W, y, K, prop, pos, rerun)
    c0 = float(null.mean())
    if rerun is not None:
        crossing = np.log(np.maximum(1.0 - null, CROSSING_FLOOR))
        bound = crossing.mean() - NULL_T95 * float(crossing.std(ddof=1)) * np.sqrt(1.0 + 1.0 / null.size)
        if c <= null.max() or np.log(max(1.0 - c, CROSSING_FLOOR)) > bound:
            return 0.0
    return float(np.clip((c - c0) / (1.0 - c0), 0.0, 1.0)) if c0 < 1.0 else 0.0


def evidence_weight(reliable: float, n_propagated: int, n_labeled: int) -> float:
    """Weight of the propagated samples from their :func:`reliability` r: r times the share of
    the information they carry, r^2 u / (r^2 u + l) for u propagated and l labeled samples. With
    a share r of them rightly grouped, u propagated samples inform a class mean as r^2 u labeled
    ones would (the signal falls by r, the noise does not), and weight r is the best when their
    errors are noise; but their wrong groups follow the graph's own structure, a bias that more
    of them does not average out. So they count when they are worth many labels (cells:
    r^2 u >> l, the weight stays r) and barely when they are worth a few (a microarray of 48
    samples with 21 labels and r = 0.3: 0.04)."""
    mass = reliable * reliable * max(int(n_propagated), 0)
    return float(reliable * mass / (mass + max(int(n_labeled), 1))) if mass > 0 else 0.0


def propagated_weight(agreement: tuple, y: np.ndarray, weighting: str, coherent, excess) -> tuple[float, float]:
    """Weights of the propagated samples in the labeled classes and in groups of their own
    (unreached, :func:`~ssfs.methods._shared.propagation.unreached_groups`) from the kept graph's held-out ``agreement``
    (:func:`~ssfs.methods._shared.propagation.held_out_agreement`) and ``coherent()``, the
    :func:`coherence` of the final groups in it: :func:`reliability`, the agreement above chance
    shrunk towards the coherence. ``"coherence"``: that reliability (the former weighting).
    ``"kept_evidence"``: 0 when nothing says the graph carries the classes, i.e. ``excess()`` (its
    :func:`excess_coherence`: every propagated split of a kNN graph is coherent in it, a split
    along the classes more than labels placed at random) is 0 and the held-out agreement is within
    two binomial standard errors of chance; else the reliability times :func:`evidence_weight`.
    ``"evidence"``: the same, ``excess()`` judging the start graph too (:func:`graphs_excess`). The
    samples in groups of their own weigh the reliability itself (0 with the others): no label
    informs their group's mean, so the labels' share of the evidence does not shrink it (with
    every other cell labeled, a type nobody labeled otherwise weighed nothing)."""
    acc, chance, pred = agreement[:3]
    held = int((pred >= 0).sum())
    if weighting not in WEIGHTINGS:
        raise MethodError(f"propagate: weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if weighting != "coherence" and (not np.isfinite(acc) or _no_structure(acc, chance, held)) and excess() <= 0.0:
        return 0.0, 0.0
    r = reliability(acc, chance, held, coherent())
    if weighting == "coherence":
        return r, r
    lab = y >= 0
    return evidence_weight(r, int((~lab).sum()), int(lab.sum())), r


def graphs_excess(chosen: Candidate, start: Candidate, y, K: int, prop: dict, pos, weighting: str) -> float:
    """:func:`excess_coherence` of the kept graph (with many samples: of the subsample's graph it
    was chosen on); with ``weighting="evidence"``, when it is 0 and some class has 2 labels, that
    of the start graph: either graph carrying the classes is evidence that the labels' groups are
    classes. (A refined graph is built on genes chosen from groups; the labels' groups can hold
    together in it no better than randomly placed labels' although the start graph separates
    them: 6 labels on 600 cells, ``tests/methods/test_scenario_ordering.py``. With one label per
    class, a second noisy test of 2 labels would double the false alarms: the kept graph alone.)"""
    kept = chosen.sample or (chosen.graph, y, pos)  # many samples: the subsample's graph (same cost at any n)
    rerun = chosen.rerun if weighting == "evidence" and unchecked(y) else None  # no held-out refit judged it
    excess = excess_coherence(kept[0], kept[1], K, prop, kept[2], rerun)
    if weighting != "evidence" or excess > 0.0 or unchecked(y) or start.graph is chosen.graph:
        return excess
    on = (start.graph, y, pos) if start.graph.shape[0] == y.size else (start.graph, kept[1], kept[2])
    return excess_coherence(on[0], on[1], K, prop, on[2])


def _no_structure(acc: float, chance: float, n_labeled: int) -> bool:
    """Held-out agreement within two binomial standard errors of chance (never when chance is 1:
    the held-out labels of one class leave nothing to tell apart)."""
    return chance < 1.0 and acc <= chance + 2.0 * np.sqrt(max(chance * (1.0 - chance), 1e-12) / max(n_labeled, 1))


def variance_in_span(X, Z: np.ndarray, batch=None) -> np.ndarray:
    """Share of every feature's variance in the span of the (centred, orthogonal) columns of Z:
    sum_k (z_k . x)^2 / (|z_k|^2 |x - mean|^2), the communality of the features on a PCA.
    ``batch``: Z and x centred in every batch (:func:`span_within_batches`)."""
    if batch is not None:
        return span_within_batches(X, centred_in_batches(Z, batch), batch)
    Z = Z - Z.mean(axis=0)
    zz = np.einsum("ij,ij->j", Z, Z)
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
        proj = np.asarray(X.T @ Z)
        mu = np.asarray(X.mean(axis=0)).ravel()
        total = np.asarray(X.multiply(X).sum(axis=0)).ravel() - X.shape[0] * mu**2
    else:
        Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
        proj = Xc.T @ Z
        total = np.einsum("ij,ij->j", Xc, Xc)
    share = (proj**2 / np.where(zz > 0, zz, np.inf)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, share / total, np.nan)


def span_within_batches(X, Z: np.ndarray, batch: np.ndarray) -> np.ndarray:
    """:func:`variance_in_span` of X's residuals about their batch means on Z centred in every
    batch: z . (x - m_b) = z . x then, and the residuals' sum of squares is the within-batch total
    (:func:`variance_explained`'s, one group), so sparse X stays sparse."""
    zz = np.einsum("ij,ij->j", Z, Z)
    proj = np.asarray(X.T @ Z) if sparse.issparse(X) else np.asarray(X, dtype=np.float64).T @ Z
    total = within_batch_total(X, batch)
    share = (proj**2 / np.where(zz > 0, zz, np.inf)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, share / total, np.nan)


#: the spaces the graphs are built in (the ``space`` parameter, :func:`count_model`)
SPACES = ("auto", "residuals", "values")
#: the least share of a graph's weight between groups :func:`excess_coherence` takes the log of
CROSSING_FLOOR = 1e-6
#: label-free scores (the ``label_free`` parameter)
LabelFree = Literal["auto", "clusters", "autocorrelation", "residual", "moran", "signal", "span"]
LABEL_FREE = get_args(LabelFree)
#: the autocorrelation scores: the scale X is read on, and the statistic ("residual": :func:`residual_scores`)
AUTOCORRELATION = {"autocorrelation": (count_scale, poisson_autocorrelation), "moran": (None, moran_i),
                   "residual": (None, moran_i)}
#: neighbours of the graph the label-free autocorrelation is measured on (Hotspot's default)
AUTOCORRELATION_K = 30


def signal_variance(X, Z: np.ndarray, batch=None) -> np.ndarray:
    """sqrt(c) var(x) per feature: its variance ``var(x)`` times the square root of its share in
    the span of the signal components ``Z`` (:func:`variance_in_span`, the communality c). The
    geometric mean of the total variance and the variance in the signal span: a gene ranks by its
    variance (the microarray filter), discounted when little of it is structure. ``batch``: both
    within batches."""
    share = variance_in_span(X, Z, batch)
    if batch is not None:
        return np.sqrt(share) * within_batch_total(X, batch) / X.shape[0]
    Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
    return np.sqrt(share) * np.einsum("ij,ij->j", Xc, Xc) / X.shape[0]


def resolved_label_free(how: str, counts: bool, space: str = "auto") -> str:
    """``label_free="auto"``: ``"clusters"`` for count-like X (``counts``) on the Pearson residuals'
    components (session 26), ``"autocorrelation"`` on the log values' (``space="values"``: there the
    components follow the noise of highly expressed genes, and so do their k-means groups), ``"signal"``
    for dense X (``"span"`` or ``"dispersion"`` where no component of the genes in their own units rises clearly
    above the null: :func:`dense_label_free`); any other choice as given."""
    if how != "auto":
        return how
    return ("clusters" if space != "values" else "autocorrelation") if counts else "signal"


def label_free_scores(X, n_pcs: int, how: str = "auto", batch=None, graph=None,
                      embedding=None, space: str = "auto", samples: str = "auto") -> tuple[np.ndarray, int]:
    """(scores, signal dimensions) without labels. ``"span"``: every feature's share of variance
    in the span of the signal components of X (columns standardised when dense: the former
    score). ``"signal"``: the signal components of X in its own units (its genes' variances count,
    as in a log-expression matrix they mean something); :func:`signal_variance` for dense X,
    the share alone for :func:`count_like` X (there the variance tracks the expression level;
    sparse X gets the ``"span"`` scores bit for bit). ``"autocorrelation"``: for count-like X,
    every feature's shared variance in units of its Poisson variance
    (:func:`~ssfs.methods._shared.autocorrelation.poisson_autocorrelation`) on the
    :data:`AUTOCORRELATION_K`-neighbour graph of the signal components of the counts' Pearson
    residuals (``space="values"``: of X's values, session 16-18's graph), or on the given
    ``graph`` / ``embedding``'s (:func:`autocorrelation_scores`); ``"residual"``: the residuals'
    own shared variance there (:func:`residual_scores`); ``"moran"``: Moran's I of the values
    (session 15's); dense X as ``"signal"``. ``"clusters"``: the variance explained by k-means groups
    of the same components, in turn with the autocorrelation (:func:`cluster_scores`); ``"auto"``:
    :func:`resolved_label_free`. ``batch``: every variance within batches. ``samples`` (dense X,
    "signal" and "span"): the components of every sample's profile scaled alike ("equal",
    :func:`~ssfs.methods._shared.signal.equal_samples`), of the samples as they are ("as_is"), or with
    "auto" scaled alike where :func:`unequal_samples` (5 % outlying samples: 0.044 -> 0.963 of the markers;
    docs/labels_that_count.md, "Samples scaled alike"). With ``"auto"`` on dense X, where no component of the
    genes in their own units rises clearly above the null (:func:`dense_label_free`: the loudest genes are noise
    and own every component, or nothing carries structure), the ``"span"`` scores where the standardised genes'
    component does (genes of very different noise, 0.056 -> 0.981 of the markers; docs/labels_that_count.md, "Loud
    noisy genes"), else every gene's :func:`gene_dispersion` (8 classes of 5 equal-noise markers 0.269 -> 0.675,
    heavy tails 0.087 -> 0.550; "Nothing rises"); every real array and all but one ``microarray_*`` draw of 48
    have a component rising clearly in the genes' units (the scores unchanged)."""
    return label_free_choice(X, n_pcs, how, batch, graph, embedding, space, samples)[:2]


def label_free_choice(X, n_pcs: int, how: str = "auto", batch=None, graph=None, embedding=None,
                      space: str = "auto", samples: str = "auto") -> tuple[np.ndarray, int, str]:
    """(scores, signal dimensions, how): :func:`label_free_scores` and the scores it chose ("dispersion" where
    ``"auto"`` found no component rising on dense X, :func:`dense_label_free`)."""
    if how not in LABEL_FREE:
        raise MethodError(f"propagate: label_free must be one of {LABEL_FREE}, got {how!r}")
    counts = count_like(X)
    auto, how = how == "auto", resolved_label_free(how, counts, space)
    if how == "clusters":
        return (*cluster_scores(X, n_pcs, batch, graph, embedding, space), how)
    if how == "residual" and counts and has_count_scale(X):
        return (*residual_scores(X, n_pcs, batch, graph, embedding), how)
    if how in AUTOCORRELATION and counts:
        return (*autocorrelation_scores(X, n_pcs, batch, graph, embedding, "moran" if how == "residual" else how,
                                        residuals=space != "values" and how == "autocorrelation"), how)
    if how == "moran" and graph is None and embedding is None:  # dense X: deep counts' label-free scores
        return (*dense_moran(X, n_pcs, batch), how)
    equal = not counts and (samples == "equal" or (samples == "auto" and unequal_samples(X)))
    Z, d, found, null = rising_embedding(X, n_pcs, standardize=how == "span", equal=equal)
    if auto and how == "signal" and not counts:
        how, Z, d = dense_label_free(X, n_pcs, equal, (Z, d, found, null))
    if how == "dispersion":
        return per_distinct_column(lambda A: gene_dispersion(A, batch), X), d, how
    score = variance_in_span if how == "span" or counts else signal_variance
    return per_distinct_column(lambda A: score(A, Z, batch), X), d, how  # a copy scores as its feature, bit for bit


#: dense X's label-free Moran's I (:func:`dense_moran`): a graph of one neighbour per this many samples, 3 to
#: :data:`AUTOCORRELATION_K`
MORAN_SAMPLES_PER_NEIGHBOUR = 10


def dense_moran(X, n_pcs: int, batch=None) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every gene's Moran's I on the kNN graph (one neighbour per
    :data:`MORAN_SAMPLES_PER_NEIGHBOUR` samples, 3 to :data:`AUTOCORRELATION_K`) of X's leading principal components in
    its own units, as many as the standardised genes' components rising above their permutations' (at least
    :data:`~ssfs.methods._shared.signal.MIN_DIMS`);
    each centred in its batch; beyond :data:`REFINE_SAMPLES` samples on that many chosen by content. The score of
    deep counts read as log values when no two classes are labeled (:func:`fit_propagation`; Hotspot's idea,
    DeTomaso & Yosef 2021: a gene the samples' neighbours share, with Moran's statistic of the log values), where
    the dense path's ``"signal"`` ranks the genes of most own dispersion. Planted bulk studies without labels
    (4 seeds, docs/labels_that_count.md, "Deep counts"): 24 samples 0.122 -> 0.333 of the condition genes, 60 samples
    of 4 conditions 0.254 -> 0.656, composition 0.464 -> 0.808; with labels the free turns keep ``"signal"`` (a blind
    bulk generator lost 0.04-0.05 with Moran's I there)."""
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
    V = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
    Vc = centred_in_batches(V - V.mean(axis=0), batch)
    scaled = standardized(Vc)
    d, _ = signal_dims(scaled, signal_pca(scaled, n_pcs))
    Z = signal_pca(Vc, max(d, MIN_DIMS))
    W = _knn(Z, int(np.clip(V.shape[0] // MORAN_SAMPLES_PER_NEIGHBOUR, 3, AUTOCORRELATION_K)))
    return per_distinct_column(lambda A: moran_i(A, W, batch), V), d


#: genes whose standard deviations vary less than this share of their mean are not standardised again to
#: test whether a component rises (:func:`dense_label_free`)
ALIKE_SCALES = 0.1


def dense_label_free(X, n_pcs: int, equal: bool, own: tuple) -> tuple[str, np.ndarray, int]:
    """(how, Z, d) of ``label_free="auto"`` on dense X: ``"signal"`` where X's leading component in the genes'
    own units (``own``: :func:`~ssfs.methods._shared.signal.rising_embedding` of them) rises clearly above its
    columns' permutations (:func:`~ssfs.methods._shared.signal.clearly_above` or, where that does not decide,
    :func:`~ssfs.methods._shared.signal.clearly_rising`: every real array and
    ``microarray_*`` draw); else ``"span"`` where the standardised genes' does (genes of very different noise: the
    loudest genes are noise and own every component in their units; not tested where the genes' standard
    deviations vary by less than :data:`ALIKE_SCALES` of their mean); else ``"dispersion"``
    (:func:`gene_dispersion`): no component carries structure, and a share in the span of noise components
    only blurs every gene's own dispersion (8 classes of 5 equal-noise markers: 0.269 of the markers against
    the variance's 0.675; docs/labels_that_count.md, "Nothing rises")."""
    Z, d, found, null = own
    if found and (clearly_above(Z, null) or clearly_rising(scaled(X, False, equal))):
        return "signal", Z, d
    sd = np.std(X, axis=0)
    if sd.mean() > 0 and sd.std() < ALIKE_SCALES * sd.mean():  # standardising them would change nothing
        return "dispersion", Z, d
    Zs, ds, found_s, null_s = rising_embedding(X, n_pcs, standardize=True, equal=equal)
    if found_s and (clearly_above(Zs, null_s) or clearly_rising(scaled(X, True, equal))):
        return "span", Zs, ds
    return "dispersion", Z, d


#: the genes' median excess kurtosis above which their noise counts as heavy-tailed (:func:`gene_dispersion`)
HEAVY_TAILS = 1.0


def gene_dispersion(X, batch=None) -> np.ndarray:
    """Every gene's dispersion about its (batch's) mean: its variance, or its interquartile range where the genes'
    noise has heavy tails (their median excess kurtosis above :data:`HEAVY_TAILS`: a few extreme values then
    decide a variance; Student's t with 3 degrees of freedom, 0.019 of the markers by variance, 0.55 by the
    interquartile range; Gaussian noise, 0.675 against 0.25). The label-free score where no component rises
    (:func:`dense_label_free`): the microarray filter."""
    Xc = centred_in_batches(np.asarray(X, dtype=np.float64), batch)
    Xc = Xc - Xc.mean(axis=0)
    if tail_weight(Xc) > HEAVY_TAILS:
        q1, q3 = np.quantile(Xc, [0.25, 0.75], axis=0)
        return q3 - q1
    return np.einsum("ij,ij->j", Xc, Xc) / max(Xc.shape[0], 1)


def autocorrelation_scores(X, n_pcs: int, batch=None, graph=None, embedding=None,
                           how: str = "autocorrelation", residuals: bool = False) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every feature's local autocorrelation (:data:`AUTOCORRELATION`
    ``[how]``: :func:`~ssfs.methods._shared.autocorrelation.poisson_autocorrelation` of X on the
    count scale, or :func:`~ssfs.methods._shared.autocorrelation.moran_i`) on the kNN graph
    (:data:`AUTOCORRELATION_K` neighbours) of X's signal components (``residuals``: of the Pearson
    residuals of the counts behind X, :func:`~ssfs.methods._shared.residuals.residual_embedding`,
    where the types of weak markers stand out of the noise of highly expressed genes), each
    centred in its batch, or on the given ``graph`` (e.g. scanpy's ``obsp['connectivities']``, all samples) or the kNN
    graph of the given ``embedding``. A type's markers are shared by its cells' neighbours
    however few the cells, where a type too small to own a component has no variance in their
    span. Without a graph, beyond :data:`REFINE_SAMPLES` samples on that many chosen by content
    (:func:`~ssfs.methods._shared.signal.canonical_rows`): the same cost at any n."""
    if graph is not None:
        W, d = _start_graph(X, 1, 1, graph, None)
        return _autocorrelation_on(X, W, batch, how), d
    X, batch, Z, d = label_free_space(X, n_pcs, batch, embedding, residuals)
    return _autocorrelation_on(X, _knn(Z, AUTOCORRELATION_K), batch, how), d


def _autocorrelation_on(X, W, batch, how: str) -> np.ndarray:
    """:data:`AUTOCORRELATION` ``[how]`` of every distinct feature of X on the graph W (Moran's I
    of X's values where X has no count scale)."""
    scale, statistic = AUTOCORRELATION[how]
    if scale is not None and not has_count_scale(X):  # negative values: no count scale
        scale, statistic = None, moran_i
    on = X if scale is None else scale(X)  # a copied feature does not change the scale
    return per_distinct_column(lambda A: statistic(A, W, batch), on)


def label_free_rows(X) -> np.ndarray | None:
    """The samples the label-free scores are measured on: beyond :data:`REFINE_SAMPLES`, that many chosen
    by content (:func:`~ssfs.methods._shared.signal.canonical_rows`), sorted; None: all."""
    return None if X.shape[0] <= REFINE_SAMPLES else content_rows(canonical_rows(X), REFINE_SAMPLES)


def label_free_space(X, n_pcs: int, batch=None, embedding=None, residuals: bool = False):
    """``(X, batch, Z, d)``: the samples the label-free scores are measured on
    (:func:`label_free_rows`: the same cost at any n), their batches, and their signal components Z
    (d of them) centred in every batch: of the counts' Pearson residuals (``residuals``, X with a count scale;
    :func:`~ssfs.methods._shared.residuals.residual_embedding`), of X's values, or the given ``embedding``'s
    rows."""
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
    if embedding is None and residuals and has_count_scale(X):
        Z, d = residual_embedding(CountModel.of(X), n_pcs, batch)
    elif embedding is None:
        Z, d = signal_embedding(X, n_pcs, standardize=False)
    else:
        Z = np.asarray(embedding, dtype=np.float64)
        Z = Z if rows is None else Z[rows]
        d = Z.shape[1]
    return X, batch, centred_in_batches(Z, batch), d


class DataGroups(NamedTuple):
    """What :func:`cluster_parts` finds without labels."""

    #: label-free scores: the groups' order taken in turn with the free score's
    scores: np.ndarray
    #: signal dimensions of the space the groups were cut in
    dims: int
    #: the features the groups explain (:func:`explained_features`)
    explained: np.ndarray
    #: k-means group of every sample in ``rows``
    groups: np.ndarray
    #: the samples the groups are of (indices into X; None: all)
    rows: np.ndarray | None
    #: those samples' signal components (centred in every batch)
    space: np.ndarray
    #: their kNN graph (:data:`AUTOCORRELATION_K`), when the scores built it (:meth:`graph`)
    knn: Any = None

    def graph(self):
        """The kNN graph of the samples' signal components (built here when the scores did not)."""
        return self.knn if self.knn is not None else _knn(self.space, AUTOCORRELATION_K)


def cluster_scores(X, n_pcs: int, batch=None, graph=None, embedding=None,
                   space: str = "auto") -> tuple[np.ndarray, int]:
    """(scores, signal dimensions) of ``label_free="clusters"``: those of :func:`cluster_parts`."""
    return cluster_parts(X, n_pcs, batch, graph, embedding, space)[:2]


def cluster_parts(X, n_pcs: int, batch=None, graph=None, embedding=None, space: str = "auto") -> DataGroups:
    """Scores without labels from groups the data form, taken in turn with the graph's
    autocorrelation (:func:`in_turn`), and the groups themselves (:class:`DataGroups`). The samples' signal components
    (:func:`label_free_space`; counts: the Pearson residuals' unless ``space="values"``; or the given
    ``embedding``) are cut into d + 1 groups by k-means (:func:`~ssfs.methods._shared.kmeans.kmeans`;
    d components separate at most d + 1 groups) and every feature is ranked as with labels (module
    doc, point 3): the features the groups explain (:func:`explained_features`) by their R^2, the others
    in turn by R^2 and by the label-free score ("free": counts, the shared variance over the Poisson
    variance on the components' kNN graph or on the given ``graph``, :func:`autocorrelation_scores`;
    dense X, :func:`signal_variance`, as ``"signal"``). That order and the free
    score's alone are then taken in turn. A type's markers differ between groups, where a program that
    moves genes together across every type (cell cycle, stress) is shared by neighbours as much as a
    marker is; the free score keeps what the groups miss (a group cut along a program's gradient; a
    type too small for a group of its own). With labels, the features these groups explain follow those
    the labels' groups explain, and a population they miss before them (:func:`unseen_populations`)."""
    counts = count_like(X)
    rows = label_free_rows(X)  # chosen once: label_free_space then keeps the subsample whole
    X_rows, batch_rows, embedding_rows = (X, batch, embedding) if rows is None else (
        X[rows], None if batch is None else batch[rows], None if embedding is None else np.asarray(embedding)[rows])
    X_rows, batch_rows, Z, d = label_free_space(X_rows, n_pcs, batch_rows, embedding_rows,
                                                residuals=counts and space != "values")
    knn = None
    if counts and graph is not None:  # every sample, on the given graph
        free = _autocorrelation_on(X, _start_graph(X, 1, 1, graph, None)[0], batch, "autocorrelation")
    elif counts:
        knn = _knn(Z, AUTOCORRELATION_K)
        free = _autocorrelation_on(X_rows, knn, batch_rows, "autocorrelation")
    else:
        free = per_distinct_column(lambda A: signal_variance(A, Z, batch_rows), X_rows)
    groups = kmeans(Z, d + 1)
    weight = np.ones(groups.size)
    r2 = per_distinct_column(lambda A: variance_explained(A, groups, weight, batch_rows), X_rows)
    n_batches = np.unique(batch_rows).size if batch_rows is not None else 1
    explained = explained_features(r2, weight, groups, n_batches=n_batches)
    scores = in_turn(with_unexplained(r2, free, explained), free)
    return DataGroups(scores, d, explained, groups, rows, Z, knn)


def in_turn(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Scores whose order takes the ``first`` order and the ``second`` in turn: a feature's place
    is its better rank of the two, ties by ``first``; NaN where ``first`` is NaN."""
    by_first = _rank(first)
    key = np.minimum(by_first, _rank(second)) + by_first / (2.0 * max(first.size, 1))
    return np.where(np.isfinite(first), -key, np.nan)


def residual_scores(X, n_pcs: int, batch=None, graph=None, embedding=None) -> tuple[np.ndarray, int]:
    """(scores, signal dimensions): every gene's Pearson residuals' variance shared by neighbours
    (:func:`~ssfs.methods._shared.residuals.residual_autocorrelation`; counts read back from
    log1p values, one overdispersion for all genes) on the :data:`AUTOCORRELATION_K`-neighbour
    graph of the residuals' signal components
    (:func:`~ssfs.methods._shared.residuals.residual_embedding`, Lause et al. 2021), or on the
    given ``graph`` / the given ``embedding``'s kNN graph. In log values the noise of highly
    expressed genes is a variance of its own and leads the components; in residuals every gene
    without structure has variance 1 (docs/labels_that_count.md, "Residuals"). Beyond
    :data:`REFINE_SAMPLES` samples on that many chosen by content, as :func:`autocorrelation_scores`."""
    if graph is not None:
        W, d = _start_graph(X, 1, 1, graph, None)
        return _residual_autocorrelation(CountModel.of(X), W, batch), d
    rows = label_free_rows(X)
    if rows is not None:
        X, batch = X[rows], None if batch is None else batch[rows]
        embedding = None if embedding is None else np.asarray(embedding, dtype=np.float64)[rows]
    model = CountModel.of(X)
    if embedding is None:
        Z, d = residual_embedding(model, n_pcs, batch)
    else:
        Z = np.asarray(embedding, dtype=np.float64)
        d = Z.shape[1]
    return _residual_autocorrelation(model, _knn(centred_in_batches(Z, batch), AUTOCORRELATION_K), batch), d


def _residual_autocorrelation(model: CountModel, W, batch) -> np.ndarray:
    """:func:`~ssfs.methods._shared.residuals.residual_autocorrelation` of the model's genes on W,
    computed once per distinct column (a copy scores as its feature, bit for bit)."""
    first, group = distinct_columns(model.X)
    C, of_part = model.part(cols=first)
    return residual_autocorrelation(C, W, model.theta, batch, of_part)[group]


def _label_free(X, n_pcs: int, how: str, note: str, batch=None, given=(None, None), space: str = "auto",
                samples: str = "auto") -> Propagation:
    """The model without labels: :func:`label_free_scores` (``given``: the graph and embedding)."""
    scores, d = label_free_scores(X, n_pcs, how, batch, *given, space=space, samples=samples)
    counts = count_like(X)
    how = resolved_label_free(how, counts, space)
    grouped = how == "clusters"
    how = ("autocorrelation" if counts else "signal") if how == "clusters" else how
    where = ("the given graph" if given[0] is not None else "the given embedding's kNN graph"
             if given[1] is not None else "the signal components' kNN graph")
    statistic = {"autocorrelation": "shared variance over the Poisson variance", "moran": "Moran's I",
                 "residual": "the Pearson residuals' shared variance"}
    if how in ("autocorrelation", "residual") and not has_count_scale(X):
        how = "moran"
    on_residuals = how == "residual" or (how == "autocorrelation" and space != "values")
    residuals = "the detection residuals'" if on_residuals and counts and binary_counts(X) else "the Pearson residuals'"
    if given[0] is None and given[1] is None and on_residuals:
        where = f"the kNN graph of {residuals} signal components"
    what = (f"{statistic[how]} on {where}" if how in statistic and counts else
            "Moran's I on the signal components' kNN graph" if how == "moran" and given == (None, None) else
            "the variance in the span of the signal components")
    if grouped:
        space_of = ("the given embedding" if given[1] is not None else f"{residuals} signal components"
                    if on_residuals else "the signal components")
        what = f"the variance explained by k-means groups of {space_of}, in turn with the {what}"
    return Propagation(scores, np.zeros(X.shape[0], dtype=np.int64), [], None, "label-free",
                       float("nan"), float("nan"), float("nan"), d, f"{note} ({what})")


def held_out_counts(y: np.ndarray) -> np.ndarray:
    """The label counts of the labeled classes that hold 2 labels or more: the classes whose labels can be held
    out (a class's only label never is, :func:`~ssfs.methods._shared.propagation.held_out_agreement`)."""
    counts = np.bincount(y[y >= 0])
    return counts[counts >= 2]


def unchecked(y: np.ndarray) -> bool:
    """No labeled class has 2 labeled samples: no label can be held out to judge a graph, and
    the labels alone give no within-class variance (their R^2 is 1 for every feature)."""
    return held_out_counts(y).size == 0


def _candidates(X, y, K, start, opts, prop, pos) -> list[Candidate]:
    """The graphs the labels may spread on: the ends of the chain from the start graph and of
    the chain from the labeled samples after ``refine`` rounds, each with its honest held-out
    agreement (the start graph alone when there is nothing to refine). When every sample is
    labeled the two chains start from the same R^2 (the start graph's groups are the labels), so
    only the labels' chain runs: the same graph at half the cost."""
    m = opts["genes"]
    if opts["refine"] == 0 or m >= X.shape[1]:
        return [start]
    out = []
    for name in ("labels",) if (y >= 0).all() else ("graph", "labels"):
        c = _chain(name, X, y, K, start.graph, m, opts, prop)
        if c is not None:
            c.rerun = functools.partial(_chain, name, X, K=K, start_graph=start.graph, m=m, opts=opts, prop=prop)
            out.append(_chain_agreement(c, X, y, K, start.graph, m, opts, prop, pos))
    return out


#: robust standard deviations about a gene's median beyond which heavy-tailed values are clipped (:func:`clipped_tails`)
CLIP_SDS = 3.0
#: the genes' median skewness above which the heavy tails of values of both signs are one-sided, residuals' (Pearson
#: residuals of counts: 1.35-2.04 on planted counts; Student's t noise 0.04): not clipped (:func:`clipped_tails`)
ONE_SIDED = 1.0
#: most samples (chosen by content) the genes' tails are measured on (:func:`clipped_tails`)
TAIL_ROWS = 1000
#: what is done with heavy-tailed dense values (the ``tails`` parameter)
TAILS = ("auto", "clip", "as_is")


def clipped_tails(X, how: str = "auto") -> tuple[Any, float | None]:
    """(X, its tail weight or None): :func:`read_tails` without whether X holds residuals."""
    return read_tails(X, how)[:2]


def read_tails(X, how: str = "auto") -> tuple[Any, float | None, bool]:
    """(X, its tail weight or None, whether its tails are residuals'): dense X that is not count-like with every gene's
    values clipped to its median +- :data:`CLIP_SDS` robust standard deviations
    (:func:`~ssfs.methods._shared.signal.winsorized`) where ``how`` is "clip", or "auto" and the genes' median excess
    kurtosis (:func:`~ssfs.methods._shared.signal.tail_weight`) with every sample's profile scaled alike
    (:func:`~ssfs.methods._shared.signal.equal_samples`: 5 % of the samples with 4x the noise give every gene a kurtosis
    of 6-7, which those samples' own graph handles and names) is above :data:`HEAVY_TAILS` (measured on at most
    :data:`TAIL_ROWS` samples, the first in content order: 20,000 x 2,000, 3.3 s and 1.3 GB beside X on all of them);
    else X itself (None).
    A few extreme values of a gene then decide its variance, its share of the components and its R^2: on Student's t
    noise with 3 degrees of freedom (4 seeds) 0.450 -> 0.850 of the markers at 3 labels per class, 0.775 -> 0.994 at 10,
    0.550 -> 0.637 without labels (docs/labels_that_count.md, "Heavy tails"). Values of both signs whose tails are
    one-sided (the genes' median skewness, :func:`~ssfs.methods._shared.signal.tail_skew`, above :data:`ONE_SIDED`) are
    residuals, Pearson residuals of counts (SCTransform, scanpy's ``normalize_pearson_residuals``), whose tail is the
    cells holding a gene's counts: not clipped (session 48), and the fit's label-free scores are Moran's I
    (:func:`fit_propagation`); "as_is" never clips but still says whether they are residuals (session 49: it only
    opts out of the clipping)."""
    if how not in TAILS:
        raise MethodError(f"propagate: tails must be one of {TAILS}, got {how!r}")
    if sparse.issparse(X) or count_like(X):
        return X, None, False
    D = np.asarray(X, dtype=np.float64)
    keep = None if D.shape[0] <= TAIL_ROWS else content_rows(canonical_rows(D), TAIL_ROWS)
    rows = D if keep is None else D[keep]
    E = equal_samples(rows)  # tails of a few loud samples are theirs, not the genes' (:func:`graph_scales`)
    E -= E.mean(axis=0)
    weight = tail_weight(E)
    residuals = weight > HEAVY_TAILS and D.min() < 0 and tail_skew(E) > ONE_SIDED
    if how == "as_is" or (how == "auto" and (weight <= HEAVY_TAILS or residuals)):
        return X, None, residuals
    return winsorized(D, CLIP_SDS), weight, False


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


def content_and_counts(X, space: str, most: int) -> tuple[np.ndarray, CountModel | None]:
    """(pos, counts) the fit reads X with, computed once: X's content order (:func:`canonical_rows` of X standardised:
    folds and subsamples follow neither the sample order nor a feature's unit or offset) and the counts whose
    residuals the graphs are built on (:func:`count_model`, overdispersion from ``most`` samples in that order)."""
    pos = canonical_rows(standardized(X))
    return pos, count_model(X, space, pos, most)


def crossed_batches(X, y, unwanted: str, params: dict, read: tuple | None) -> tuple[np.ndarray | None, int]:
    """(sides, found): with ``unwanted="auto"`` and graphs on the residuals of counts (no ``batch``, ``graph`` or
    ``embedding`` given), the sides of the components every group shares that labels of 2 classes or more do not
    follow (:func:`~ssfs.methods._shared.crossed.crossed_sides`: an unrecorded batch, a program of every type), which
    the fit then reads as batches; (None, 0) otherwise. Without labels (session 42) nothing can veto them: the fit
    warns. ``read``: :func:`content_and_counts` of X (None: computed here for counts). Many cells: found on
    :data:`REFINE_SAMPLES` of them chosen by content. Planted counts of 6 types (4 draws,
    ``bench_other_shapes.py``): an unrecorded batch at 2 labels per type 0.36 -> 1.00 of the markers, at 1 % 0.48 ->
    1.00, without labels 0.33 -> 0.99; a cell-cycle-like program 0.55 -> 1.00, 0.56 -> 1.00 and 0.37 -> 0.99
    (docs/labels_that_count.md, "A component every group shares")."""
    y = np.asarray(y)
    batch = batch_codes(params.get("batch"), y.size, "propagate: batch", MethodError)  # one batch is no batch
    if (unwanted != "auto" or (batch is not None and np.unique(batch).size > 1) or params.get("graph") is not None
            or params.get("embedding") is not None):
        return None, 0
    if read is None:  # a label-free fit reads neither otherwise
        if not on_residuals(X, params.get("space", "auto")):
            return None, 0
        read = content_and_counts(X, params.get("space", "auto"), params.get("refine_samples", REFINE_SAMPLES))
    pos, model = read
    rows = content_rows(pos, params.get("refine_samples", REFINE_SAMPLES))
    return (None, 0) if model is None else crossed_sides(model, params.get("n_pcs", 50), y, rows)


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


def class_turns(per_class: str, model: Propagation) -> str:
    """How the groups' up-markers enter the order (``per_class``): as given, or "auto" = "leaders" (every group's
    best up-marker, :func:`with_class_turns` at depth 1, :func:`turning_markers`) where the R^2 of the labels'
    groups leads the order on the held-out labels' evidence (not :attr:`Propagation.free_leads`, nor ranking
    alone because the genes were rescaled one by one, :attr:`Propagation.free_rescaled`) and 3 groups or more hold
    samples (of two groups every feature the R^2 ranks tells both apart; a second group's leader only took a place
    from a marker: 2 types of counts, the log-normalised genes higher in the type without markers), else "none".

    The R^2 of a one-way ANOVA ranks first whatever tells the easiest classes apart; on real arrays of many
    classes the top 20 then held markers of a few classes only (ORL's 40 faces at 3 labels per class: linear SVM
    on the top 1-20, 0.305 against ``rank_genes_groups``' 0.413; with every group's leader in turn 0.432; the
    other face sets +0.02 to +0.10, the 12 microarrays level, PBMC 0.645 -> 0.663; docs/labels_that_count.md,
    "Every group's leader"). Where the label-free order leads, the held-out labels found the groups no better than
    it (planted 8 and 20 classes at 2-3 labels per class, groups 16-23 % right): their leaders were noise there
    (recall 0.675 -> 0.594)."""
    if per_class != "auto":
        return per_class
    return "none" if model.free_leads or model.free_rescaled or np.unique(model.groups).size < 3 else "leaders"


def _free_in_turn(model: Propagation, X, y, K: int, free: tuple, ranked_by, pos, batch, explained,
                  unclipped=None, *, may_lead: bool = True, unwanted_pcs: int | None = None) -> None:
    """Dense X: the label-free scores ``free`` = (scores, how :func:`label_free_choice` chose them) in turn with the
    R^2 of ``model`` (:func:`free_turns`), or ranking alone below the explained features (``explained()``,
    :func:`with_unexplained`) where they lead: where the held-out labels cannot judge (:func:`held_out_judges`; the
    explained features then take turns with them, ``explained_in_turn``), where the R^2's features
    predict them no better than chance and nothing rises or what rises lies in few features
    (:func:`label_free_at_chance`), where what rises lies in few features whose head carries the classes
    (:func:`head_carries`, any label budget), where few features stand out of it and the R^2's features predict the
    held-out labels not beyond chance (:func:`r2_unproven`; the explained features then not first), or where
    they win :func:`free_leads` and ``may_lead`` on the held-out labels' evidence. They may where the
    labels are few (:func:`few_labels`) or where the features they were judged against are those the R^2 ranks:
    the labels' own where the labels lead, the propagated samples' where those outweigh the labeled ones. With 10
    labels per class or more and the labeled samples weighing more, the R^2 ranked is mostly the labels' own
    while the yardstick was the propagated samples' features; there the label-free order takes turns at most (20
    classes of 5 markers at 10 labels per class, 4 seeds: 0.865 -> 0.912 of the markers, `fisher` 0.905; two draws
    had led, to 0.84 and 0.80, on 39 to 20 and 52 to 23 held-out labels; every other shape at 5, 10 and 20 per
    class, the ``microarray_*`` sweeps and 15 real sets at 10 per class unchanged; docs/labels_that_count.md, "Ten
    labels per class: the label-free order takes turns", session 39), unless what rises lies in few features
    (:func:`concentrated`: 8 classes of ``make_classification`` at 10 per class, one of 4 draws 11 -> 16 of the 16
    informative features on 34 to 16 held-out places, the others unchanged; session 51). Sets the model's ``free_*``
    fields, ``explained``, ``labels_scores`` and ``scores``. Where the label-free scores are dispersions of genes
    rescaled one by one (``unclipped``, X as given, :func:`rescaled_gene_by_gene`) they neither take turns nor lead:
    their order is the rescaling's. Where they read rising components (``free[1]`` "signal") that the held-out labels
    reject (:func:`unwanted_rejected`, on ``unwanted_pcs`` components at most; None: not asked) nothing is set but
    ``model.unwanted_basis`` (and its evidence): the fit is to run again without them."""
    if free[1] == "dispersion" and rescaled_gene_by_gene(unclipped):
        model.free_rescaled = True
        return
    judged = ranked_by() if held_out_judges(y) else None
    if unwanted_pcs is not None and judged is not None and free[1] == "signal":
        model.unwanted_basis, model.unwanted_evidence, model.unwanted_on_lean = unwanted_rejected(
            X, y, K, free[0], judged, pos, batch, unwanted_pcs)
        if model.unwanted_basis is not None:
            return
    model.free_unjudged = judged is None
    model.free_at_chance, model.free_concentrated = (False, False) if judged is None else label_free_at_chance(
        free, judged, y)
    alone = model.free_unjudged or model.free_at_chance
    model.free_turns = (True, 0, 0, 0, 0) if alone else free_turns(X, y, K, free[0], judged, pos, batch)
    if not alone and (standing := standing_out(free)):
        head = head_carries(X, y, K, free[0], standing, judged, pos, batch, ranked_by.features)
        model.free_head, model.free_outside = ((*head[:4], free[1]), head[4]) if head else ((), ())
        model.free_unproven = (standing, free[1]) if not head and r2_unproven(judged, y) else ()
        if head or model.free_unproven:
            model.free_turns, alone = (True, *model.free_turns[1:]), True
    if model.free_at_chance or model.free_head or model.free_unproven:
        model.r2_held_out = (float(judged[0]), float(judged[1]), int((np.asarray(judged[2]) >= 0).sum()))
    if model.free_turns[0]:
        model.explained = explained()
        model.labels_scores = model.scores
        may_lead = may_lead or free[1] == "signal" and concentrated(free[0])
        model.free_leads = alone or (may_lead and free_leads(*model.free_turns[1:]))
        model.free_by_places = model.free_leads and not (alone or sign_test(*model.free_turns[1:3]))
        first = np.zeros_like(model.explained) if model.free_unproven else model.explained
        model.scores = with_unexplained(model.scores, free[0], first, free_first=model.free_leads,
                                        explained_in_turn=model.free_unjudged)


def unwanted_rejected(X, y, K: int, free: np.ndarray, judged: tuple, pos, batch, n_pcs: int) -> tuple:
    """(basis, evidence, on_lean): the orthonormal basis of dense X's rising components (:func:`~ssfs.methods._shared.
    unwanted.rising_basis`) where the held-out labels reject them, else None. The genes' dispersion outside those
    components (:func:`~ssfs.methods._shared.unwanted.outside_dispersion`, no label) picks its
    :data:`~ssfs.methods._shared.labels_alone.GENES` best features; evidence: (b, c, nearer, farther) for them, as
    :func:`free_turns` counts them, against the features the fit ranks by (``judged``, :func:`free_turns`'
    yardstick) and against the label-free scores' best (``free``). Rejected where both pass :func:`free_leads`
    (predictions or places, one-sided sign test at 0.05): the features outside the components carry the classes
    better than the components' own and than the groups found along them, so the components are structure the
    classes do not share (an unrecorded batch, co-expressed modules, a program; docs/labels_that_count.md,
    "Components the labels reject", session 40). Against the fit's features alone, 1,000 samples of 120 genes at
    1 % labels (4 classes of 5 markers: their components are the rising ones) lost every marker; against both, no
    shape, ``microarray_*`` draw or real array at 3 or 10 labels per class lost. Where one of the components is
    crossed (:func:`~ssfs.methods._shared.unwanted.crossed_columns`: two clear sides holding the other components'
    groups alike, an unrecorded batch) both counts need only lean to the features outside (:func:`leans`; ``on_lean``:
    rejected so, not significantly): with 2-3 labels per class the sign test cannot pass where they lean 3 to 1 (an
    unrecorded batch, 8 draws: at 3 per class 0.759 -> 1.000 of the markers, at 2 per class 0.166 -> 0.759; 672 fits
    of 42 dense shapes changed nowhere else; docs/labels_that_count.md, "A batch nobody recorded in an array",
    session 50). Where they are kept and more than one rises, each crossed component alone is asked next, by the
    same rule: two classes whose own component rises beside an unrecorded batch's are two crossed components (each
    one's sides hold the other's alike), and with both removed the features outside lost the markers and predicted
    less, so both stayed (session 50)."""
    Q, crossed = rising_basis(X, n_pcs)
    if Q.shape[1] == 0:
        return None, (), False
    agree = functools.partial(labels_alone_agreement, X, y, K, positions=pos, folds=FOLDS, batch=batch)
    free_features = agree(features=np.argsort(-np.nan_to_num(free, nan=-np.inf), kind="stable")[:GENES])
    first = None
    for basis in [Q] + ([Q[:, [j]] for j in crossed] if Q.shape[1] > 1 else []):
        best = np.argsort(-np.nan_to_num(outside_dispersion(X, basis, batch), nan=-np.inf), kind="stable")[:GENES]
        outside_features = agree(features=best)
        counts = []
        for incumbent in (judged, free_features):
            _, b, c = labels_lead(incumbent, outside_features, y)
            counts.append((b, c, *nearer_own_class(incumbent, outside_features)))
        significant = all(free_leads(*each) for each in counts)
        on_lean = not significant and crossed.size > 0 and all(leans(*each) for each in counts)
        if significant or on_lean:
            return basis, tuple(counts), on_lean
        first = tuple(counts) if first is None else first
    return None, first, False


def leans(b: int, c: int, nearer: int = 0, farther: int = 0) -> bool:
    """Whether held-out counts as :func:`free_leads` reads them lean to the first side, significant or not: it
    predicts no fewer (b >= c) and places the own class of at least :data:`LEAN_BY` more nearer than farther."""
    return b >= c and nearer - farther >= LEAN_BY


#: held-out labels placed nearer than farther by which :func:`leans` leans: one label decided nothing (two classes
#: of 200 markers at 2 sd, 3 labels per class, 20 % of them wrong: 1 to 0 removed the classes' own component, 1.00
#: -> 0.23 of the markers)
LEAN_BY = 2


#: relative spread of the genes' standard deviations (or ranges) within which they count as set gene by gene
#: (:func:`rescaled_gene_by_gene`): float32 and files of 4-6 significant digits keep a z-score's sds within 1e-6 to
#: 1e-4 of each other; measured genes' spread far wider (equal-noise simulated genes on 400 samples: 0.28)
RESCALED_WITHIN = 1e-3


def rescaled_gene_by_gene(X) -> bool:
    """Whether dense X's genes were rescaled one by one: every (non-constant) gene's standard deviation the same, or
    every gene's range (within :data:`RESCALED_WITHIN` of the largest): z-scored, min-max scaled or rank-transformed
    gene by gene, as
    many public arrays arrive. Their dispersions (:func:`gene_dispersion`, the label-free scores where no component
    rises) then measure the rescaling, not the genes: all 1 after a z-score (the order a seeded permutation of
    ties), the spread within the range after min-max scaling. Taken in turn they cost the R^2 half its places, and
    leading they cost all (8 classes z-scored at 3 labels per class 0.069 -> 0.013 of the markers, 40 samples of 2
    classes at 2 per class 0.269 -> 0.013, 8 classes min-max scaled 0.106 -> 0.019; docs/labels_that_count.md,
    "Arrays rescaled gene by gene", session 36). False for sparse X."""
    if sparse.issparse(X):
        return False
    X = np.asarray(X, dtype=np.float64)
    for scale in (X.std(axis=0), X.max(axis=0) - X.min(axis=0)):
        scale = scale[scale > 0]
        if scale.size and float(np.ptp(scale)) <= RESCALED_WITHIN * float(scale.max()):
            return True
    return False


#: labels per class (the labeled classes' median) below which an R^2 at chance yields to the genes' own dispersion
#: (:func:`r2_at_chance`) and the label-free order may lead whatever it was judged against (:func:`_free_in_turn`)
FEW_LABELS = 10


def r2_at_chance(judged: tuple, y: np.ndarray, every_budget: bool = False) -> bool:
    """Whether the features the R^2 follows predict the held-out labels no better than chance: ``judged`` (their
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`, refitted in every fold: :func:`_judged_groups`)
    right on no larger a share than chance (sum over the classes of their shares squared), with fewer than
    :data:`FEW_LABELS` labels per class. :func:`_free_in_turn` asks only where no component of the data rises above
    noise (the label-free order is every gene's :func:`gene_dispersion`): nothing the labels found then beats the
    genes' own dispersion, and the label-free order leads below the explained features. Where components rise they
    are structure the labels may not share (noise factors with 60 samples at 3 per class: 0.321 -> 0.004 of the
    markers had it asked there), and with 10 labels per class an R^2 at chance can still lead (6 classes at 1 sd: 0.22
    and 0.33 of the markers where the dispersion found 0.10). Measured, 4 seeds (docs/labels_that_count.md, "An R^2
    at chance where nothing rises", session 36): at 3 per class two-colour log ratios 0.221 -> 0.304 and weak
    markers of 6 classes 0.087 -> 0.121 (both = ``variance``: losses closed); at 2 per class 8 classes 0.513 ->
    0.675, 20 classes 0.625 -> 0.782, log ratios 0.137 -> 0.304; heavy tails at 2 per class 0.875 -> 0.825; the
    ``microarray_*`` sweeps and the real arrays unchanged (a component rises on every one)."""
    accuracy, chance = judged[0], judged[1]
    return bool((every_budget or few_labels(y)) and np.isfinite(accuracy) and chance < 1.0
                and accuracy <= chance + 1e-12)


def label_free_at_chance(free: tuple, judged: tuple, y: np.ndarray) -> tuple[bool, bool]:
    """(at_chance, concentrated): whether the label-free order ``free`` = (scores, how) leads because the R^2's
    features predict the held-out labels no better than chance (``judged``, :func:`r2_at_chance`), and whether it
    does because the rising components it reads lie in few features (:func:`concentrated`). Where nothing rises
    (the genes' dispersion) with fewer than :data:`FEW_LABELS` labels per class (session 36). Where components rise
    they may be structure the classes do not share (noise factors over 600 of 8,000 genes: with 3 labels per class
    an R^2 at chance still found 0.26 of the markers where that order found none), so only where what they read
    lies in fewer than :data:`~ssfs.methods._shared.labels_alone.GENES` features, at any label budget: the classes
    of scikit-learn's ``make_classification`` live in a few informative features of large variance (a correlated
    block), each weak alone; the R^2 of 2-3 labels per class picked noise there (0.24-0.84 of them in the means of
    4 draws, single draws 0.00; 0.28-0.85 at 10 per class, where ``variance`` and the fit without labels found most
    of them, 1.00) and predicted the held-out labels no better than chance (docs/labels_that_count.md, "Classes in a
    few features of large variance", session 51)."""
    if free[1] == "dispersion":
        return r2_at_chance(judged, y), False
    if free[1] == "signal" and concentrated(free[0]):
        at_chance = r2_at_chance(judged, y, every_budget=True)
        return at_chance, at_chance
    return False, False


#: the label-free scores' share of their largest at which the :data:`~ssfs.methods._shared.labels_alone.GENES`-th
#: counts as past a cliff (:func:`concentrated`): ``make_classification``'s 10-20 informative features of 2,000-5,000
#: put the 50th at 0.03-0.04 of the first; noise factors of 200 genes each at 0.16-0.25
CLIFF = 0.1


def concentrated(free: np.ndarray) -> bool:
    """Whether label-free scores of rising components (``free``, :func:`signal_variance`) hold what they read in
    fewer than :data:`~ssfs.methods._shared.labels_alone.GENES` features: the GENES-th largest below :data:`CLIFF`
    of the largest (a cliff, not a slope)."""
    f = np.sort(np.nan_to_num(np.asarray(free, dtype=np.float64), nan=0.0))[::-1]
    return bool(f.size > GENES and f[0] > 0 and f[GENES - 1] < CLIFF * f[0])


#: how many median absolute deviations above the median a gene's dispersion must lie to stand out (:func:`standing_out`)
STANDS_OUT = 10.0


def standing_out(free: tuple) -> int:
    """How many features of the label-free order ``free`` = (scores, how) stand out, where they are few (fewer than
    :data:`~ssfs.methods._shared.labels_alone.GENES`; else 0): where components rise ("signal") and their variance
    is :func:`concentrated`, those above the cliff (:data:`CLIFF` of the largest score); where nothing rises
    ("dispersion"), the genes whose dispersion lies more than :data:`STANDS_OUT` median absolute deviations above the
    median (100 x 5,000 ``make_classification``: its 10 informative features; 8 classes of 5 markers among 3,000
    genes: 1-2 of their 40); any other label-free score: 0."""
    f = np.nan_to_num(np.asarray(free[0], dtype=np.float64), nan=0.0)
    if free[1] == "signal":
        return int((f >= CLIFF * f.max()).sum()) if concentrated(f) else 0
    if free[1] != "dispersion":
        return 0
    median = np.median(f)
    spread = np.median(np.abs(f - median))
    count = int((f > median + STANDS_OUT * spread).sum()) if spread > 0 else 0
    return count if count < GENES else 0


def head_carries(X, y: np.ndarray, K: int, free: np.ndarray, standing: int, judged: tuple, pos, batch=None,
                 features=None) -> tuple:
    """(features, right, held, chance, outside) where the head of the label-free order carries the classes, else ():
    the head of the ``free`` scores is the first half of the ``standing`` features that stand out
    (:func:`standing_out`; at least 2, at most :data:`~ssfs.methods._shared.labels_alone.GENES`). Chosen without a
    label, the head's discriminant
    (:func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`, the same folds) predicts ``right`` of the
    ``held`` held-out labels: it carries the classes where that is beyond ``chance`` (one-sided binomial test at
    :data:`FREE_LEADS_P`) and no share below that of the features the R^2 follows (``judged``). Then the label-free
    order leads below the explained features at any label budget (:func:`_free_in_turn`). The head, not all
    before the cliff: a module of 10 genes 3 sd louder in half the samples, ranked first, and 11 markers after it
    carried the classes together (18 of 40 held-out labels, chance 0.25) where the module alone does not
    (docs/labels_that_count.md, "The head of a concentrated order", session 52). Where the head is beyond chance
    but below the R^2's share, everything that stands out is asked next, by the same two bars (``features`` then
    counts them all): classes each of whose features is weak alone are carried by all of them together, not by
    half (``make_classification``, 300 x 2,000, 4 classes of one cluster, 20 informative, 20 labels per class: the
    head predicted 37-43 of 80 held-out labels, the R^2's features 46-53, all 20 that stand out 54-59; 0.60-0.75 ->
    1.00 of the informative features; docs/labels_that_count.md, "Everything that stands out, asked second",
    session 54). Where all that stand out carry the classes but predict fewer held-out labels than the R^2's features,
    or where the head does not carry them but all that stand out do, no worse than the R^2's features (and those beyond
    chance: else :func:`r2_unproven` decides), they lead only
    where the R^2's best features outside them (``features``: :attr:`Yardstick.features`) predict the held-out labels
    not beyond chance (:func:`r2_outside_right`; ``outside``: their (right, held), else ()): nothing the R^2 follows
    then carries the classes beyond what stands out. A module ranked first that the classes do not share leaves
    markers outside, which the R^2's features find (session 52's module: unchanged at 2, 3, 10 and 20 labels per
    class; docs/labels_that_count.md, "What the R^2 finds outside what stands out", session 55)."""
    order = np.argsort(-np.nan_to_num(np.asarray(free, dtype=np.float64), nan=0.0), kind="stable")
    head = int(min(GENES, max(2, -(-int(standing) // 2))))
    carried = False
    for size in dict.fromkeys((head, int(min(GENES, max(head, standing))))):  # once where the head is all
        accuracy, chance, pred, _ = labels_alone_agreement(X, y, K, features=order[:size], positions=pos,
                                                           folds=FOLDS, batch=batch)
        right, n = held_out_right(pred, y)
        beyond = bool(np.isfinite(accuracy)) and beyond_chance(right, n, chance)
        carried = beyond if size == head else carried
        if carried and beyond and accuracy >= judged[0]:
            return (size, right, n, float(chance), ())
    if not beyond or not (carried or (accuracy >= judged[0] and not r2_unproven(judged, y))):
        return ()  # an R^2 not beyond chance is :func:`r2_unproven`'s (its explained features not first)
    outside = r2_outside_right(X, y, K, order[:size], pos, batch, features)
    return () if beyond_chance(*outside) else (size, right, n, float(chance), outside[:2])


def r2_outside_right(X, y: np.ndarray, K: int, standing: np.ndarray, pos, batch=None,
                     features=None) -> tuple[int, int, float]:
    """(right, held, chance): how many of the held-out labels the R^2's best features outside ``standing`` predict,
    and chance: the :data:`~ssfs.methods._shared.labels_alone.GENES` best of ``features(yy, genes)`` (the fit's
    :attr:`Yardstick.features`, refitted on each fold's labels ``yy``; None: the labels' own,
    :func:`~ssfs.methods._shared.labels_alone.labels_own_features`) once ``standing`` is left out, read by
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement` (the same folds and discriminant). Where that
    is not beyond chance (:func:`beyond_chance`), nothing the R^2 follows carries the classes outside the features
    that stand out, and its lead over them comes from the few of them it holds: :func:`head_carries` then lets what
    stands out lead (``make_classification``, 300 x 2,000, 4 classes of 2 clusters, 20 informative, 20 labels per
    class, one draw: all 20 that stand out predicted 33 of 80 held-out labels, the R^2's 50 features 38, its 50 best
    outside the 20 only 23 (chance 20); 5 -> 20 of the 20 informative). Where they do carry them, the R^2 keeps the
    order: a module of 10 genes 3 sd louder in half the samples, ranked first among 18 that stand out, beside 40
    markers (the R^2's 50 features outside the 18 predict the held-out labels beyond chance; the labels' own, at 10
    per class, 11 of 40, would have let the module lead: 0.900 -> 0.825 of the markers; docs/labels_that_count.md,
    "What the R^2 finds outside what stands out", session 55)."""
    best = functools.partial(labels_own_features, X, y, batch=batch) if features is None else features

    def outside(yy: np.ndarray) -> np.ndarray:
        cols = np.asarray(best(yy, GENES + standing.size))
        return cols[~np.isin(cols, standing)][:GENES]

    accuracy, chance, pred, _ = labels_alone_agreement(X, y, K, features=outside, positions=pos, folds=FOLDS,
                                                       batch=batch)
    right, held = held_out_right(pred, y)
    return (right, held, float(chance)) if np.isfinite(accuracy) else (0, 0, float(chance))


def held_out_right(pred: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """(right, held): how many of the labeled samples' held-out predictions ``pred`` (one per labeled sample, in
    their order; -1: not held out) are their labels, and how many were held out."""
    pred = np.asarray(pred)
    held = pred >= 0
    return int((pred[held] == np.asarray(y)[np.asarray(y) >= 0][held]).sum()), int(held.sum())


def beyond_chance(right: int, held: int, chance: float) -> bool:
    """Whether ``right`` of ``held`` held-out predictions are more than ``chance`` gives: one-sided binomial test
    at :data:`FREE_LEADS_P` (scipy's ``bdtrc``: P(at least ``right``) < 0.05; 5 of 6 at chance 0.5 is 0.109, 6 of 6
    0.016, 15 of 20 0.021). False without a held-out label or where chance is 1."""
    from scipy.special import bdtrc  # binomial survival function (scipy.stats costs a ranking job 0.4 s of imports)

    return held > 0 and chance < 1.0 and bool(bdtrc(right - 1, held, chance) < FREE_LEADS_P)


def r2_unproven(judged: tuple, y: np.ndarray) -> bool:
    """Whether the features the R^2 follows (``judged``: their held-out
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`) predict the held-out labels not beyond chance
    (:func:`beyond_chance`). :func:`_free_in_turn` asks where few features stand out of the label-free order
    (:func:`standing_out`) and their head does not carry the classes (:func:`head_carries`): nothing the labels
    found is then shown to beat what stands out without them, and the label-free order leads, the features the
    groups explain not first (they are explained by groups the held-out labels did not confirm). Where the labels
    show their features beyond chance the R^2 keeps its place; with more labels that is easier to show, so the rule
    fades as labels are added. Measured (docs/labels_that_count.md, "Labels that prove nothing against what stands
    out", session 53): every dense shape of ``bench_other_shapes`` at 2, 3 and 10 labels per class (636 fits, 4
    seeds), 15 fits to every informative feature (``make_classification``: docs/sklearn.md's recipe shape at 3 per
    class 0.45 -> 1.00, 100 x 5,000 at 10 per class 0.65 -> 1.00), two lower (censored intensities at 3 per class
    0.125 -> 0.000 on one draw, mixed effects at 2 per class 0.85 -> 0.80 on one); the sex-like module at 3 per
    class 0.05 -> 0.325 and 0.25 -> 0.325 on two draws, the others, the ``microarray_*`` sweeps and 14 real arrays
    unchanged."""
    right, held = held_out_right(judged[2], y)
    return held > 0 and not beyond_chance(right, held, float(judged[1]))


def few_labels(y: np.ndarray) -> bool:
    """Whether the labeled classes hold fewer than :data:`FEW_LABELS` labels each (their median; False without a
    label): an R^2 at chance then yields (:func:`r2_at_chance`), and the label-free order may lead whatever the
    held-out labels judged it against (:func:`_free_in_turn`)."""
    counts = np.bincount(np.asarray(y)[np.asarray(y) >= 0])
    return bool(counts.size) and float(np.median(counts[counts > 0])) < FEW_LABELS


def _weighted_groups(y, K, prop, floor, seed, weights, joined_in, W) -> tuple[np.ndarray, np.ndarray]:
    """The groups and sample weights a fit gives on another graph ``W`` (:func:`crossfit_pvalues`'s
    ``grouping``): the labels spread with ``seed``, the unreached parts joined in ``joined_in`` (X; None:
    not joined), labeled samples weighing their seed, propagated ones ``weights`` (classes, unreached)."""
    g = _groups(W, y, K, prop, floor, seed)
    g = joined_unreached(joined_in, g, K) if joined_in is not None else g
    lab = y >= 0
    return g, np.where(lab, seed, np.where(g < K, *weights))


def free_turns(X, y, K: int, free: np.ndarray, ranked_by: tuple, pos, batch=None) -> tuple[bool, int, int, int, int]:
    """(turns, b, c, nearer, farther): whether dense X's label-free scores ``free`` take turns with the R^2
    (:func:`with_unexplained`), judged by the held-out labels: their :data:`~ssfs.methods._shared.labels_alone.GENES`
    best features against those the R^2 follows (``ranked_by``: the propagated samples' or, when the labels lead,
    the labels' own, both refitted in every fold without its labels; :func:`_judged_groups`), paired: b the held-out
    labels the label-free features predict and those miss, c the reverse; nearer (farther) those whose own class
    the label-free features place nearer (farther) than those do
    (:func:`~ssfs.methods._shared.labels_alone.nearer_own_class`). Turns when b > c, when both predict exactly the
    same held-out labels (b = c = 0, often every one: the hedge, in turn, costs nothing the labels can see; the R^2
    keeps every other place and its explained features stay first), or when the label-free features lead
    (:func:`free_leads`). A split tie (b = c > 0) otherwise keeps the R^2: there the held-out labels cannot tell
    the two apart (often both at chance), and turning gained on 8 classes of equal-noise genes but lost 6-10 of 40
    markers on 40-sample heteroscedastic or factor-laden arrays (session 31). The label-free features are chosen
    without a label, so the held-out labels judge them fairly. Measured (docs/labels_that_count.md, "The
    label-free scores in turn on dense arrays", session 30; "A fair yardstick for the label-free turns", session
    31): 40-sample arrays 0.456 -> 0.662 of the markers at 3 labels per class, 8 classes 0.106 -> 0.175, the real
    arrays and ``microarray_*`` within -0.013 to +0.010."""
    top = np.argsort(-np.nan_to_num(free, nan=-np.inf), kind="stable")[:GENES]
    challenger = labels_alone_agreement(X, y, K, features=top, positions=pos, folds=FOLDS, batch=batch)
    _, b, c = labels_lead(ranked_by, challenger, y)
    nearer, farther = nearer_own_class(ranked_by, challenger)
    return b > c or b == c == 0 or free_leads(b, c, nearer, farther), b, c, nearer, farther


def held_out_judges(y: np.ndarray) -> bool:
    """Whether held-out labels can judge the R^2's features against the label-free ones (:func:`free_turns`): 2
    labeled classes or more hold 2 labels or more (a class's only label is never held out), and those classes hold
    :data:`JUDGE_LABELS` labels or more (fewer can never pass :func:`sign_test`). With fewer classes (1 % of 300
    samples: 3 labels, 2 in one class) every held-out label is of one class; with fewer labels (2 per class of 2
    classes, 1 % of 400-600 samples: 2 and 2) the comparison could only ever keep the R^2. Either way the R^2 of
    the propagated samples rests on a graph the labels could not check: the label-free order leads, the explained
    features taking turns with it (:func:`with_unexplained`, ``explained_in_turn``, session 49; before, they ranked
    first: ``free_first`` alone). Measured on dense arrays, 4 seeds
    (docs/labels_that_count.md, "Held-out labels of one class judge nothing", session 34; "Too few held-out labels
    to judge", session 35): 1 %, heteroscedastic 0.794 -> 0.944 of the markers (0.981 without labels), 8 classes
    0.588 -> 0.675, 20 classes 0.588 -> 0.782, heavy tails 0.450 -> 0.625; 40-sample arrays at 2 per class 0.575
    -> 0.688."""
    counts = held_out_counts(y)
    return counts.size >= 2 and int(counts.sum()) >= JUDGE_LABELS


#: one-sided sign-test level below which the label-free features lead the R^2 (:func:`free_leads`)
FREE_LEADS_P = 0.05
#: the fewest held-out labels that can pass :func:`sign_test` (5 to 0: 1/32 < 0.05; 4 to 0 is 1/16)
JUDGE_LABELS = math.ceil(math.log2(1.0 / FREE_LEADS_P))


def sign_test(wins: int, losses: int) -> bool:
    """Whether ``wins`` of the ``wins + losses`` discordant pairs are more than a fair coin gives at
    :data:`FREE_LEADS_P` (one-sided sign test: 5 to 0, 6 to 0, 7 to 1, ...): :func:`beyond_chance` at chance 1/2."""
    return beyond_chance(wins, wins + losses, 0.5)


def free_leads(b: int, c: int, nearer: int = 0, farther: int = 0) -> bool:
    """Whether the label-free features, taking turns (:func:`free_turns`), rank alone after the explained ones:
    they predict b held-out labels the R^2's features miss and miss c those predict, or they place the own class
    of ``nearer`` held-out labels nearer than those features do and of ``farther`` farther, and either count
    passes :func:`sign_test`. Then the
    R^2 of the propagated samples is what the held-out labels reject, and half the places in turn would go to its
    noise (8 classes of 5 equal-noise markers at 3 labels per class: 5-7 to 0, 0.45 of the markers in turn,
    0.55-0.73 alone; docs/labels_that_count.md, "Nothing rises"). The places count more of the held-out labels
    where the classes are many and the labels few (with 2 classes they are b and c): 8 classes, 5 to 1 right but
    15 to 1 nearer, 0.525 -> 0.775 of the markers (docs/labels_that_count.md, "Every class's place", session 35)."""
    return sign_test(b, c) or sign_test(nearer, farther)


def _graph_note(start: Candidate, chosen: Candidate, n_labeled: int, lead: tuple) -> str | None:
    """The fit's warning about its graph: the data's own graph carries no class structure (held-out
    agreement within two standard errors of chance), and the labels' own features beat those of the
    propagated samples (:func:`_judged_groups`)."""
    note = None
    acc = chosen.agreement[0]
    if np.isfinite(start.agreement[0]) and _no_structure(start.agreement[0], start.agreement[1], n_labeled):
        note = (f"the kNN graph of the data agrees with held-out labels in {start.agreement[0]:.0%} of the labeled "
                f"samples (chance {start.agreement[1]:.0%}; within two standard errors of it for {n_labeled} labels): "
                "it carries no class structure the labels can show")
        note += f"; the graph kept ({chosen.name}) agrees in {acc:.0%}" if chosen.name != "start" else ""
    if lead[0]:
        note = (f"{note}; " if note else "") + (
            f"the features the labels pick alone predict {lead[1]} held-out labels that those of the propagated "
            f"samples' groups miss, and miss {lead[2]} they predict: the propagated samples count 0 (the labeled "
            "samples' own R^2 ranks)")
    return note


def _judged_groups(X, y, K: int, chosen: Candidate, how: tuple, pos, batch, judge: bool = True,
                   may_lead: bool = True):
    """(groups, seed, lead, ranked_by): the final groups of the kept graph, every sample's seed weight,
    whether the labels lead and a function giving the held-out agreement of the features the R^2 then
    follows (None without ``judge``; :func:`free_turns`): the labels' own when they lead (refitted in
    every fold), else the propagated samples' refitted in every fold, their labels spread on the graph of
    the chain refitted without the fold's labels (:attr:`Candidate.folds`; the kept graph when it is the
    start graph, built without labels, or was chosen on a subsample of many samples). The features of all
    the labels' groups (which the held-out labels helped spread, on a graph whose genes they helped
    choose) would be judged by the labels that chose them: 8 classes at 3 labels per class, 2-8 held-out
    labels they alone predicted where refitted they predicted 0-1 (docs/labels_that_count.md, "A fair
    yardstick for the label-free turns"). Whether the labels lead is still judged against those features
    of all the labels: a prior for the graph (refitted there too, ``microarray_modules`` at 10 per class
    fell 0.867 -> 0.756, an unrecorded batch 0.812 -> 0.738).
    Seeds: :func:`contradicted_seeds`. ``how``: (prop, floor,
    unreached) of :func:`_groups` (``unreached``: the parts of a type nobody labeled joined,
    :func:`joined_unreached`). The labels lead when the features their own R^2 picks predict the
    held-out labels better than those the propagated samples' groups explain
    (:mod:`ssfs.methods._shared.labels_alone`; same folds) and are of 2 classes or more (:func:`held_out_counts`:
    4 labels at 1 %, 2 of one class, led by 2 to 0 and left the cells' R^2 to 4 samples, 0.027 -> 0.593 of a
    log2(TPM + 1) table's type genes, session 47; 2 per class of 2 classes keep their lead, colon 0.743 where it
    would fall to 0.619); the seeds are then all 1 (a graph whose
    samples the labels beat does not judge them) and the groups spread again. ``judge`` False
    (``weighting="coherence"``, the former weighting; counts, whose residual graphs are judged by the
    tiers of :func:`with_unexplained` and where a discriminant of 2-3 log-count labels per class is
    noise: counts_varied seed 2 at 3 per class, 0.06 and 0.11 of the held-out labels, where the graph
    found every marker; rare seed 1 at 10 per class, the labels would have led, 0.975 -> 0.908): the
    labels never lead. ``may_lead`` False (tables with dropouts, :func:`~ssfs.methods._shared.dropouts.read_dropouts`):
    they never lead either, and the held-out labels still judge the label-free turns; a discriminant of 2-3 labels per
    class follows each cell's dropouts there (a noisy filtered log2(TPM + 1) table at 3 per type, session 48: the
    propagated groups' 50 features, 48 type genes, predicted 1 of 15 held-out labels, the labels' own 7, whose R^2
    then found 0.063 of the type genes; 0.775 without the lead, every other fit of 6 such shapes unchanged)."""
    prop, floor, unreached = how
    seed = contradicted_seeds(y, chosen.agreement)

    def grouped(s, labels=y, W=chosen.graph, F=None):
        g = _groups(W, labels, K, prop, floor, s) if F is None else _spread_groups(F, labels, floor)
        return joined_unreached(X, g, K) if unreached else g  # a type nobody labeled, claimed in parts: one group

    groups = grouped(seed)
    top = propagated_features(X, y, groups, batch=batch) if judge else None
    if top is None:
        return groups, seed, (False, 0, 0), None
    agree = functools.partial(labels_alone_agreement, X, y, K, positions=pos, folds=FOLDS, batch=batch)
    propagated, alone = agree(features=top), agree()
    lead = labels_lead(propagated, alone, y)
    if lead[0] and (held_out_counts(y).size < 2 or not may_lead):  # held-out labels of one class judge nothing
        lead = (False, *lead[1:])
    if lead[0] and (seed < 1).any():
        seed = np.ones(y.size)
        groups = grouped(seed)

    def refitted(yy, genes=GENES, weighed=None):
        """The propagated samples' features of a fold: its labels ``yy`` spread on its refitted chain's graph, the
        R^2 of their groups over the samples unlabeled in ``weighed`` (None: in ``yy``, the held-out ones too)."""
        fold = chosen.folds.get(yy.tobytes())
        spread = fold is not None and bool((seed[yy >= 0] == 1.0).all())  # the refit spread these very seeds
        g = grouped(seed, yy, chosen.graph if fold is None else fold.graph, fold.spread if spread else None)
        found = propagated_features(X, yy if weighed is None else weighed, g, genes, batch=batch)
        if found is None:  # the fold's groups are one over its unlabeled samples: the fit's own groups'
            found = top if genes == GENES else propagated_features(X, y, groups, genes, batch=batch)
        return found

    if lead[0]:
        return groups, seed, lead, Yardstick(lambda: alone, functools.partial(labels_own_features, X, y, batch=batch))
    return groups, seed, lead, Yardstick(lambda: agree(features=refitted), functools.partial(refitted, weighed=y))


def contradicted_seeds(y: np.ndarray, agreement: tuple) -> np.ndarray:
    """Every sample's seed weight: 1, and 0.5 for a label the kept graph's held-out prediction contradicts (a wrong
    label, perhaps: its group is kept), unless that graph's held-out ``agreement`` (accuracy, chance, predictions)
    shows it at chance: within two binomial standard errors of it (:func:`_no_structure`) with enough held-out
    labels to have shown a useful graph (:func:`shows_a_useful_graph`). A graph at chance contradicts labels at
    random: halving them reweighed the labeled samples by noise (markers planted on real arrays' samples in 3
    classes, ``bench_other_shapes.py``'s ``real_background_*`` at 10 labels per class, 4 draws each: 0.16 -> 0.26 of
    the markers on TOX-171's, 0.30 -> 0.36 on GLIOMA's, 0.37 -> 0.43 on Prostate-GE's; docs/labels_that_count.md, "A
    graph at chance does not judge the labels", session 59)."""
    acc, chance, pred = agreement[:3]
    seed = np.ones(y.size)
    if pred is None or not np.isfinite(acc):
        return seed
    held = int((pred >= 0).sum())
    if _no_structure(acc, chance, held) and shows_a_useful_graph(chance, held):
        return seed
    lab = np.flatnonzero(y >= 0)
    seed[lab[(pred >= 0) & (pred != y[lab])]] = 0.5
    return seed


#: the reliability of a graph worth its contradictions (:func:`shows_a_useful_graph`): half right beyond chance
USEFUL_RELIABILITY = 0.5
#: ... which the held-out labels show when its expected agreement lies this many binomial standard errors above chance
USEFUL_STANDARD_ERRORS = 3.0


def shows_a_useful_graph(chance: float, n_held: int) -> bool:
    """Whether ``n_held`` held-out labels at ``chance`` would show a graph :data:`USEFUL_RELIABILITY` (half) right
    beyond chance, its expected agreement chance + 0.5 (1 - chance) lying :data:`USEFUL_STANDARD_ERRORS` (3)
    binomial standard errors above chance (n_held >= 36 chance / (1 - chance): 12 of 4 classes, 18 of 3, 36 of
    2): only then does an agreement within two standard errors of chance say the graph is at chance, not that the
    labels were too few to tell (2 labels per class of 3-4 classes, 6-8 held out: 0.98 -> 0.63 of the markers on
    heavy-tailed arrays, 0.27 -> 0.00 on gene modules, with the graph's contradictions ignored there). Compared
    squared, n_held (1 - chance) 0.5^2 >= 3^2 chance, to a relative 1e-9: at equality (balanced classes: 5 classes
    and 9 held-out labels) the square root's rounding does not decide."""
    if chance >= 1.0 or n_held <= 0:
        return False
    shown = n_held * (1.0 - chance) * USEFUL_RELIABILITY ** 2
    return shown >= USEFUL_STANDARD_ERRORS ** 2 * chance * (1.0 - 1e-9)


@dataclass(frozen=True)
class Yardstick:
    """The features the fit's R^2 follows, as the held-out labels judge them (:func:`_judged_groups`): ``agreement()``,
    their :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement` (computed when called), and
    ``features(yy, genes)``, the ``genes`` best of them on a fold's labels ``yy`` (its held-out ones -1), best first:
    the labels' own, or the R^2 of the propagated samples' groups over the samples unlabeled in all the labels, so
    that the fold's held-out samples, weighing 0, do not choose the features their labels then judge. Counted with
    them (as ``agreement()`` still does), the 50 best features outside the 10 informative ones of 100 x 5,000
    (``make_classification``, 2 classes, 20 labels per class), pure noise, predicted 29 of 40 held-out labels
    (chance 20), and :func:`head_carries` kept the R^2 (3 of the 10 informative features first); chosen without them,
    22, and the 10 lead (docs/labels_that_count.md, "The held-out samples do not choose the features they judge",
    session 56)."""

    agreement: Any
    features: Any

    def __call__(self) -> tuple:
        return self.agreement()


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


def _label_free_beside(X, n_pcs: int, how: str, batch, graph, embedding, rows, start_z,
                       space="auto", samples="auto") -> tuple[np.ndarray, DataGroups | None, str]:
    """The label-free scores a fit with labels interleaves (:func:`with_unexplained`) and the data's
    own groups (``"clusters"``, :func:`cluster_parts`, their rows of all samples; else None), on the
    samples the refinement ran on (``rows``; None: all) and, for sparse X, on the start graph's
    signal components ``start_z`` (the same PCA; dense X: standardised there, in its own units here;
    "residual": the residuals' own components), and how :func:`label_free_choice` chose the scores."""
    if rows is not None and graph is None:
        X, batch = X[rows], None if batch is None else batch[rows]
        embedding = None if embedding is None else np.asarray(embedding)[rows]
    if graph is None and embedding is None and sparse.issparse(X) and start_z is not None and how != "residual":
        embedding = start_z
    if resolved_label_free(how, count_like(X), space) == "clusters":
        data = cluster_parts(X, n_pcs, batch, graph, embedding, space)
        if rows is not None and graph is None:  # the groups' rows, of all samples
            data = data._replace(rows=rows if data.rows is None else rows[data.rows])
        return data.scores, data, "clusters"
    scores, _, chosen = label_free_choice(X, n_pcs, how, batch, graph, embedding, space, samples)
    return scores, None, chosen


def _data_tiers(model: Propagation, X, data: DataGroups, groups, y, batch) -> tuple:
    """The (features, key) tiers :func:`with_unexplained` puts after the labels' explained features: a
    population the groups miss (:func:`unseen_populations`, recorded in ``model``: a type nobody
    labeled), then the features the data's own groups explain, by the labels' R^2."""
    model.unseen, unseen_r2, model.unseen_sizes, model.unseen_cells = unseen_populations(
        X, data, groups, y, model.explained, batch)
    return (model.unseen, unseen_r2), (data.explained, model.scores)


def unseen_populations(X, data: DataGroups, groups: np.ndarray, y: np.ndarray, explained: np.ndarray,
                       batch=None) -> tuple[np.ndarray, np.ndarray, list[int], np.ndarray]:
    """(features, their R^2, sizes, cells) of the populations the data separate that the fit's ``groups``
    miss: the k-means groups of ``data`` (:func:`cluster_parts`) that are separated on their kNN
    graph, that no group of the fit matches and that hold no label (``y``) of the group holding most
    of their samples (:func:`~ssfs.methods._shared.populations.unmatched_populations`; at least as many samples as a
    group of its own, :func:`~ssfs.methods._shared.populations.smallest_population`): a type nobody
    labeled that the labels' graph spread over the labeled classes or held inside one. The features
    are those these populations explain against all other samples together (R^2 on ``data``'s rows,
    within batches; :func:`explained_features`), those ``explained`` (the fit's) holds too included: the
    population's markers, whatever the fit's groups explain (a type nobody labeled spread over the labeled groups
    raises their residual R^2 too; :func:`with_unexplained` ranks a feature in its first tier); ``cells``:
    every sample's population (0, 1, ...; -1 for none, and for the samples outside ``data``'s rows)."""
    rows = slice(None) if data.rows is None else data.rows
    n = data.groups.size
    found = unmatched_populations(data.graph(), data.groups, np.asarray(groups)[rows], np.asarray(y)[rows],
                                  smallest_population(n))
    cells = np.full(X.shape[0], -1, dtype=np.int64)
    if not found.any():
        return np.zeros(X.shape[1], dtype=bool), np.full(X.shape[1], np.nan), [], cells
    number = np.cumsum(found) - 1  # the populations numbered in the groups' order
    cells[rows] = np.where(found[data.groups], number[data.groups], -1)
    part = np.unique(np.where(found[data.groups], data.groups, -1), return_inverse=True)[1].ravel()
    weight = np.ones(n)
    batch_rows = None if batch is None else batch[rows]
    r2 = per_distinct_column(lambda A: variance_explained(A, part, weight, batch_rows), X[rows])
    n_batches = np.unique(batch_rows).size if batch_rows is not None else 1
    features = explained_features(r2, weight, part, n_batches=n_batches)
    return features, r2, np.bincount(data.groups)[found].tolist(), cells


def with_graph_free(free: np.ndarray, X, rows, batch, model: CountModel | None = None) -> np.ndarray:
    """Label-free scores whose order takes the graph's ``free`` and the genes' Pearson residual
    variance (graph-free: Lause et al. 2021, the statistic of scanpy's pearson-residuals highly
    variable genes) in turn: a gene's place is its better rank of the two, ties by ``free``; on the
    samples ``rows`` (None: all) as ``free``, under ``model`` (the fit's count model of X, read on
    those rows; None: the counts of the rows). X without a count scale (negative values): ``free``."""
    if not has_count_scale(X):
        return free
    if model is None:
        model = CountModel.of(X if rows is None else X[rows])
    elif rows is not None:
        model = model.subset(rows)
    C, part = model.part()
    codes = batch if batch is None or rows is None else batch[rows]
    return in_turn(free, residual_variance(C, model.theta, codes, model=part))


def held_out_reach(agreement: tuple) -> float:
    """Mean log score of the held-out labeled samples for their own class (-inf: none held out)."""
    reach = np.asarray(agreement[3], dtype=np.float64)
    reach = reach[np.isfinite(reach)]
    return float(reach.mean()) if reach.size else -np.inf


def _best(cands: list[Candidate]) -> Candidate:
    """The candidate whose graph agrees best with held-out labels; of equals, the one that reaches
    them most (:func:`held_out_reach`: with 10 labels per class both chains often predict every
    held-out label, and the graph whose labels also reach them strongly is the one that keeps a
    type nobody labeled apart); then the first."""
    def key(i):
        agreement = cands[i].agreement
        return np.nan_to_num(round(agreement[0], 9), nan=-1.0), round(held_out_reach(agreement), 9), -i

    return cands[max(range(len(cands)), key=key)]


def refinement_rows(y: np.ndarray, pos: np.ndarray, size: int) -> np.ndarray | None:
    """The samples the refinement runs on when there are more than ``size`` (None: all of them):
    the labeled ones, up to half of ``size``, then unlabeled ones, each taken in the content order
    ``pos`` (:func:`~ssfs.methods._shared.signal.canonical_rows`: a pseudo-random subsample that
    does not depend on the sample order); sorted."""
    if y.size <= size:
        return None
    order = np.argsort(pos, kind="stable")
    lab = order[y[order] >= 0][: size // 2]
    unl = order[y[order] < 0][: size - lab.size]
    return np.sort(np.concatenate([lab, unl]))


#: the dense graphs' gene scales (the ``gene_scale`` parameter; :func:`gene_scales`)
GENE_SCALES = ("auto", "standardized", "as_is")


def gene_scales(how: str, X, counts: CountModel | None, graph, embedding) -> tuple[str, ...]:
    """The gene scales whose graphs compete (:func:`fit_propagation`): "standardized" (every gene at
    unit variance: a gene is as loud as any other), "as_is" (the genes in X's units: a marker's extra
    variance counts, as in a log-expression array where the classes are the loudest structure), or
    with "auto" both on dense values that are not counts (:func:`_kept_graph` chooses). Only one where
    the graphs are not built on X's values (the counts' residuals, a given graph or embedding).
    Measured: docs/labels_that_count.md, "Shapes drawn outside ``ssfs.simulate``" (40 samples x 5,000
    genes, 2 classes, 3 labels per class: 0.287 -> 0.456 of the markers; the real arrays within 0.006)."""
    if how != "auto":
        return (how,)
    return ("standardized", "as_is") if counts is None and on_values(X, graph, embedding) else ("standardized",)


def on_values(X, graph, embedding) -> bool:
    """Whether the graphs are built on X's own values: no ``graph`` or ``embedding`` given, X not counts (whose
    graphs are built on their Pearson residuals where X holds them, :func:`count_model`)."""
    return graph is None and embedding is None and not count_like(X)


#: the dense graphs' sample scales (the ``sample_scale`` parameter; :func:`graph_scales`)
SAMPLE_SCALES = ("auto", "as_is", "equal")


def graph_scales(gene_scale: str, sample_scale: str, X, counts: CountModel | None, graph,
                 embedding) -> list[tuple[str, str]]:
    """The (gene scale, sample scale) pairs whose graphs compete, the first the incumbent
    (:func:`_kept_graph`): the :func:`gene_scales`, each with the samples "as_is" and, with
    ``sample_scale="auto"`` on dense values that are not counts whose samples differ in loudness
    (:func:`unequal_samples`), "equal" (every sample's profile scaled alike,
    :func:`~ssfs.methods._shared.signal.equal_samples`: a noisy array does not own components of its
    own). Only "as_is" where the graphs are not built on X's values."""
    genes = gene_scales(gene_scale, X, counts, graph, embedding)
    samples = ("as_is", "equal") if sample_scale == "auto" else (sample_scale,)
    if counts is not None or not on_values(X, graph, embedding) or (sample_scale == "auto" and not unequal_samples(X)):
        samples = ("as_is",)
    return [(g, s) for s in samples for g in genes]


def samples_compete(X, params: dict) -> bool:
    """Whether a fit of X with ``params`` weighs graphs on samples scaled alike against the samples as they are
    (:func:`graph_scales`): ``sample_scale`` "auto" (the default), graphs on X's values (:func:`on_values`) and
    samples of unequal loudness (:func:`unequal_samples`). Selection mode then takes the sample scale the fit on
    all samples kept for every resample (:func:`ssfs.experiment.stable_selection.inherited`)."""
    return (params.get("sample_scale", "auto") == "auto" and on_values(X, params.get("graph"), params.get("embedding"))
            and unequal_samples(X))


#: how much louder or quieter than the median sample (root mean square of its standardised profile) a
#: sample must be for the graphs on samples scaled alike to compete (:func:`unequal_samples`)
EQUAL_SPREAD = 1.1


def unequal_samples(X) -> bool:
    """Whether a sample of dense X is louder or quieter than the median one (the root mean square of
    its standardised profile) by a factor beyond :data:`EQUAL_SPREAD` and beyond 4 standard errors of
    that root mean square over p unit-noise features (1 + 4 / sqrt(2p): few features alone spread
    it). Pure noise on 2,000 genes spreads 1.03-1.04, the real arrays of ../shared 1.13-3.5 (lung_small's
    325 genes: 1.23 against 1.16), an array with 4x the noise 3.9. Below that, scaling the samples
    alike changes the graph little, and its chains are not worth their cost."""
    return not sparse.issparse(X) and outlying_samples(X).size > 0


def outlying_samples(X) -> np.ndarray:
    """The samples of dense X louder or quieter than the median one beyond :func:`unequal_samples`'s bar
    (:func:`loudness`), in order."""
    loud = loudness(X)
    factor = max(EQUAL_SPREAD, 1.0 + 4.0 / np.sqrt(2.0 * max(X.shape[1], 1)))
    return np.flatnonzero((loud > factor) | (loud * factor < 1.0))


def _kept_graph(X, y, K, rows, opts, given: tuple, gene_scale: str) -> tuple[Candidate, Candidate, dict]:
    """(chosen, start, opts of its scale): the graph kept in each of the :func:`gene_scales` (``given``:
    prop, pos, graph, embedding and the dict the start graph's components go to), another scale's
    only when it wins :func:`scale_leads`."""
    prop, pos, graph, embedding, start_space = given
    chosen, start, kept = None, None, opts
    for scale, samples in graph_scales(*gene_scale, X, opts["counts"], graph, embedding):
        on = {**opts, "standardize": scale == "standardized", "equal": samples == "equal", "graphs": {}}
        c, s = _chosen_in(X, y, K, rows, on, prop, pos, graph, embedding, start_space if chosen is None else {})
        if chosen is None or scale_leads((chosen, start), (c, s), y):
            chosen, start, kept = c, s, on
    return chosen, start, kept


def scale_leads(incumbent: tuple, challenger: tuple, y: np.ndarray) -> bool:
    """Whether the (kept graph, start graph) of another scale, ``challenger``, replaces the ``incumbent``'s: its
    kept graph predicts :data:`~ssfs.methods._shared.labels_alone.LEAD_BY` (2) more of the same held-out labels
    (:func:`~ssfs.methods._shared.labels_alone.labels_lead`, paired; with 6 labels one more is often chance: 40 x
    2,000 heteroscedastic arrays, a graph in the genes' units right on one more held-out label found 6 of 40
    markers where the standardised graph found 34); or its start graph does against the incumbent's start graph
    while its kept graph predicts at least as many as the incumbent's kept graph. The start graphs are built
    without a label, so their held-out agreement needs no refit; the kept graphs' is of chains refitted without
    each fold's labels, which at 2-3 labels per class leaves a class one training label, and both scales' chains
    then agree with held-out labels at chance where a start graph carries the classes (5 % outlying samples at 2
    labels per class, seed 3: the start graph on samples scaled alike 6 of 8 held-out labels, the genes' own 2 of
    8, both kept graphs 2; 2 -> 40 of the 40 markers; docs/labels_that_count.md, "Start graphs judge the scales",
    session 35)."""
    (kept, start), (other, other_start) = incumbent, challenger
    lead, beyond, behind = labels_lead(kept.agreement, other.agreement, y)
    return lead or (beyond >= behind and labels_lead(start.agreement, other_start.agreement, y)[0])


def _chosen_in(X, y, K, rows, opts, prop, pos, graph, embedding, start_space) -> tuple[Candidate, Candidate]:
    """(chosen, start): the kept graph among the chains' ends and the start graph, in the scale of ``opts``."""
    if rows is not None:
        return _chosen_on_rows(X, y, K, rows, opts, prop, pos, graph, embedding, start_space)
    W, d = _start_graph(X, opts["k"], opts["n_pcs"], graph, embedding, opts["batch"], start_space, opts["counts"],
                        opts["standardize"], opts.get("equal", False))
    start = _agreement(_candidate("start", y, K, W, d, prop), y, K, pos, prop)
    return _best(_candidates(X, y, K, start, opts, prop, pos)), start


def _chosen_on_rows(X, y, K, rows, opts, prop, pos, graph, embedding, space=None) -> tuple[Candidate, Candidate]:
    """(chosen, start) for many samples: the chains and their held-out refits on the samples
    ``rows`` (:func:`refinement_rows`), started from those samples' own kNN graph (or the given
    embedding's rows); the chosen chain's genes then give the graph of all samples, whose held-out
    agreement (:data:`FOLDS` folds) weighs the propagated samples. The choice costs the same
    whatever the number of samples; the final graph is built once. A given ``graph`` cannot be
    cut to the subsample: its agreement with the labels (the ``start``) is measured on all of them."""
    Xr, yr = X[rows], y[rows]
    on_rows = {**opts, "batch": None if opts["batch"] is None else opts["batch"][rows],
               "counts": None if opts["counts"] is None else opts["counts"].subset(rows)}
    Wr, dr = _start_graph(Xr, opts["k"], opts["n_pcs"], None, None if embedding is None else
                          np.asarray(embedding)[rows], on_rows["batch"], space, on_rows["counts"],
                          opts.get("standardize", True), opts.get("equal", False))
    start = _agreement(_candidate("start", yr, K, Wr, dr, prop), yr, K, pos[rows], prop)
    chosen = _best(_candidates(Xr, yr, K, start, on_rows, prop, pos[rows]))
    if graph is not None:
        start = _agreement(_candidate("start", y, K, *_start_graph(X, 1, 1, graph, None), prop), y, K, pos, prop)
    whole = _candidate(chosen.name, y, K, *_graph_on(X, chosen.genes, {**opts, "graphs": {}, "fit_rows": rows}), prop)
    whole.agreement = graph_agreement(whole.graph, y, K, positions=pos, folds=FOLDS, enough=HELD_OUT_ENOUGH, **prop)
    whole.sample, whole.rerun, whole.genes = (chosen.graph, yr, pos[rows]), chosen.rerun, chosen.genes
    return whole, start


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


#: false discovery rate of the features the groups explain (:func:`explained_features`)
EXPLAINED_FDR = 0.05
#: how the features the groups do not explain are ordered (the ``unexplained`` parameter)
UNEXPLAINED = ("interleave", "r2")
#: ``unwanted``: X's rising components removed where the held-out labels reject them ("auto",
#: :func:`unwanted_rejected`) or never ("kept")
UNWANTED = ("auto", "kept")
#: ``graph_free``: the genes' Pearson residual variance beside the graph's label-free scores ...
GRAPH_FREE = ("auto", "always", "never")
#: ... with "auto" when the propagated samples weigh less than this (the graph carries the classes little, and a
#: statistic over its edges is as unreliable). Planted counts, 3 labels per class, 6 seeds
#: (docs/labels_that_count.md, "A graph-free score where the graph carries the classes little"): Splatter-like 100
#: cells (weights 0.01-0.15) 0.188 -> 0.229, 200 cells 0.274 -> 0.288; at 0.5 a counts draw of weight 0.45 lost
#: 0.08 and a counts_nuisance one of 0.29 lost 0.05; the weights of 0.25 and below were the graphs whose shared
#: resamples listed the labels' chance patterns (session 23)
GRAPH_FREE_BELOW = 0.25
#: how the kept graph's own genes are tested (the ``explained`` parameter; :func:`crossfit_pvalues`)
EXPLAINED = ("auto", "crossfit", "same")
#: share of the kept graph's explained genes that must be explained cross-fitted too for ``explained="auto"``
#: to keep the fit's own test (measured: 0.33-0.96 on the planted scenarios, where cross-fitting cost up to
#: 0.04 of the markers below 0.45; 0.06-0.10 where the groups followed the genes' noise)
REPLICATED = 0.2


def explained_pvalues(r2: np.ndarray, weight: np.ndarray, groups: np.ndarray, n_batches: int = 1) -> np.ndarray:
    """Every feature's p-value for "the groups explain its R^2": the one-way ANOVA's F =
    R^2 / (1 - R^2) (n - G - B + 1) / (G - 1) with n the samples' total ``weight`` (labeled 1,
    propagated as weighted), G the groups holding weight and B the batches; 1 where R^2 is not
    finite or nothing can be tested (one group, no degrees of freedom)."""
    from scipy.special import fdtrc  # F survival function (scipy.stats costs a ranking job 0.4 s of imports)

    G = np.unique(groups[weight > 0]).size
    dof = float(weight.sum()) - G - (n_batches - 1)
    out = np.ones(r2.size)
    ok = np.isfinite(r2)
    if G < 2 or dof <= 0 or not ok.any():
        return out
    r = np.clip(r2[ok], 0.0, 1.0 - 1e-15)
    out[ok] = fdtrc(G - 1, dof, r / (1.0 - r) * dof / (G - 1))
    return out


def explained_features(r2: np.ndarray, weight: np.ndarray, groups: np.ndarray, q: float = EXPLAINED_FDR,
                       n_batches: int = 1, pvalues: np.ndarray | None = None) -> np.ndarray:
    """The features whose R^2 the groups explain beyond chance: :func:`explained_pvalues`
    (or the given ``pvalues``), Benjamini-Hochberg at ``q`` over the features. The groups were
    learned from the same data, so this sorts the ranking into what the labels explain and what
    they do not; it is not a test to report (:func:`crossfit_pvalues` removes the worst of that
    circularity, the refined graph's own genes)."""
    p = explained_pvalues(r2, weight, groups, n_batches) if pvalues is None else pvalues
    return benjamini_hochberg(p) <= q


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


#: how the scores take in the per-class markers (the ``per_class`` parameter; :func:`with_class_turns`)
PER_CLASS = ("auto", "none", "interleave", "leaders")


#: Benjamini-Hochberg level a group's leader must pass to take a turn (:func:`turning_markers`)
LEADER_FDR = 0.05


def turning_markers(stats: ClassStatistics, how: str) -> tuple[np.ndarray, int | None]:
    """(class_t, depth) for :func:`with_class_turns` from the fit's per-group statistics (:func:`_group_statistics`:
    Welch's t of every group that holds a sample, a type nobody labeled included, against all other samples, from
    the final groups and weights): every group's up-markers with ``how`` "interleave"; with "leaders" depth 1 and
    only the groups whose best up-marker passes :data:`LEADER_FDR` (its Benjamini-Hochberg q over the features): a
    group the graph did not find, whose best t is the largest of noise, leaves the order as it is (10 planted
    classes, one with 20 strong markers and nine with 3 weak ones, 3 labels per class: 11-13 of the top 20 were
    markers with every leader, 18-20 with those that pass, as without leaders; ORL 0.431 and 0.432)."""
    t, q = stats.scores, stats.pvals_adj
    if how != "leaders":
        return t, None
    best = np.argmax(t, axis=1)
    return t[q[np.arange(t.shape[0]), best] < LEADER_FDR], 1


def _places(*keys: np.ndarray) -> np.ndarray:
    """Place (0 = first) of every item in the lexicographic order of ``keys`` (first key first, all
    ascending), equal keys sharing the place of the first of them (a copy ties its feature)."""
    if len(keys) == 1:  # one key (refined graphs' genes, every call): a sort and a search, 6x np.unique's speed
        return np.searchsorted(np.sort(keys[0]), keys[0], side="left")
    rows, inverse, counts = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True, return_counts=True)
    return np.r_[0, np.cumsum(counts)[:-1]][inverse.ravel()]


def with_class_turns(scores: np.ndarray, class_t: np.ndarray, depth: int | None = None) -> np.ndarray:
    """Scores whose order takes in turn a feature from the ``scores`` order and one from the
    groups' marker order (a feature's place is its better place of the two; ties: ``scores``),
    the groups' order being each group's best up-marker by Welch's t (``class_t``, groups x p:
    :func:`turning_markers`, a type nobody labeled included), then each one's second, ... as scanpy's
    ``rank_genes_groups`` lists read group by group (ties: ``scores``); with ``depth`` only each group's first
    ``depth`` markers take turns, the others keep their ``scores`` place. The R^2 of a one-way ANOVA
    ranks first the features that tell the easiest class apart; with few labels on real
    multi-class arrays some classes then had no marker in the top 10 (docs/labels_that_count.md,
    "Per-class markers in the ranking"). Scores are (m - place) / m over the m features with a
    finite score (1 = first); NaN stays NaN."""
    finite = np.isfinite(scores)
    out, m = np.full(scores.shape, np.nan), int(finite.sum())
    if m == 0:
        return out
    neg = lambda v: -np.nan_to_num(np.asarray(v, dtype=np.float64)[..., finite], nan=-np.inf)  # noqa: E731
    by_score = _places(neg(scores))
    in_class = np.min([_places(t) for t in neg(class_t)], axis=0) if len(class_t) else by_score
    by_class = _places(in_class, by_score)
    if depth is not None:
        by_class = np.where(in_class < depth, by_class, m)
    out[finite] = (m - _places(np.minimum(by_score, by_class), by_score)) / m
    return out


def with_unexplained(r2: np.ndarray, label_free: np.ndarray, explained: np.ndarray, ahead=(),
                     free_first: bool = False, explained_in_turn: bool = False) -> np.ndarray:
    """Scores whose order is: the ``explained`` features by R^2, then the others taken in turn
    from their R^2 order and their ``label_free`` order (a feature's place is its better rank of
    the two; ties: R^2), as :func:`top_genes` interleaves ("balanced"). Explained features keep
    their R^2; the others get t (m - i) / (m + 1) for the i-th of m, below t = the smallest
    explained R^2 (or the largest R^2 when none is): structure the labels do not explain (a type
    nobody labeled, too rare to form a group of its own) ranks before noise the groups happen
    to separate a little. ``ahead``: (features, key) pairs, each a tier placed in that order after
    the explained features and before the others, ordered by its key (a feature in two tiers is in
    the first). Equal keys share a place (the first of theirs): a copy scores as its feature. NaN
    stays NaN. ``free_first``: the others by their ``label_free`` order alone (ties: R^2; :func:`free_leads`).
    ``explained_in_turn``: the explained features do not rank first but take turns, by their R^2, with the
    ``label_free`` order, which alone ranks the rest once they are placed (a feature's place is its better place of
    the two; ties: the explained one, then the label-free order, then the R^2): where the held-out labels cannot
    judge the groups (:func:`held_out_judges`), nothing judged either order (session 49)."""
    finite = np.isfinite(r2)
    first = explained & (not explained_in_turn)
    out = np.where(first, r2, np.nan)
    placed = first.copy()
    parts = []  # (features, their places in the order), tier after tier
    for features, key in ahead:
        tier = np.flatnonzero(features & ~placed & finite)
        parts.append((tier, _places(-np.nan_to_num(key[tier], nan=-np.inf))))
        placed |= features
    rest = np.flatnonzero(~placed & finite)
    by_r2, by_free = (_places(-np.nan_to_num(v[rest], nan=-np.inf)) for v in (r2, label_free))
    if explained_in_turn:
        turning = explained[rest]
        by_explained = np.full(rest.size, rest.size)
        by_explained[turning] = _places(-r2[rest][turning])
        parts.append((rest, _places(np.minimum(by_explained, by_free), ~turning, by_free, by_r2)))
    else:
        parts.append((rest, _places(by_free, by_r2) if free_first else _places(np.minimum(by_r2, by_free), by_r2)))
    m = sum(f.size for f, _ in parts)
    if m == 0:
        return out
    t = float(np.min(r2[explained])) if explained.any() else float(np.nanmax(r2))
    start = 0
    for features, places in parts:  # equal keys share a place: a copy scores as its feature
        out[features] = t * (m - start - places) / (m + 1)
        start += features.size
    return out


#: what ``propagate`` promises (docs/invariances.md): a shift or a unit of count-like X (sparse, half the
#: values 0, long-tailed integers or log counts, read as log1p counts) changes its count scale, and a shift
#: can make dense X count-like (the runner would move every feature's minimum to 0: scaled expression then
#: looks like counts)
INVARIANCES = ("features", "copies")


@register("propagate", higher_is_better=True, invariances=INVARIANCES, description=(
    "Labels spread over a kNN graph of the signal components (Zhou et al. 2004), unreached samples in groups "
    "of their own; features ranked by the variance the groups explain, per-class markers beside"))
def propagate_score(X, y, constraints, rng, *, k: PosInt | Literal["auto"] = "auto", n_pcs: PosInt = 50,
                    refine: NonNegInt = 2, genes: PosInt | Literal["auto"] = "auto",
                    propagation: Literal["spread", "harmonic"] = "spread", alpha: OpenFraction = 0.99,
                    class_mass: Literal["uniform", "labeled", "none"] = "uniform", unreached: bool = True,
                    refine_samples: PosInt = REFINE_SAMPLES, graph: Any = None, embedding: Any = None,
                    weighting: Literal["evidence", "kept_evidence", "coherence"] = "evidence",
                    label_free: LabelFree = "auto", gene_choice: Literal["total", "balanced"] = "balanced",
                    unexplained: Literal["interleave", "r2"] = "interleave",
                    explained: Literal["auto", "crossfit", "same"] = "auto", batch: Any = None,
                    counts: Literal["auto", "log1p", "as_is", "deep"] = "auto",
                    space: Literal["auto", "residuals", "values"] = "auto",
                    per_class: Literal["auto", "none", "interleave", "leaders"] = "auto",
                    graph_free: Literal["auto", "always", "never"] = "auto",
                    gene_scale: Literal["auto", "standardized", "as_is"] = "auto",
                    sample_scale: Literal["auto", "as_is", "equal"] = "auto",
                    tails: Literal["auto", "clip", "as_is"] = "auto", unwanted: Literal["auto", "kept"] = "auto"):
    """Semi-supervised feature scores from labels propagated over a kNN graph (module doc), higher is better.

    Parameters
    ----------
    X, y
        Samples x features, dense (standardised for the graph) or sparse (log counts); class codes, -1 unlabeled.
    constraints, rng, k, n_pcs, refine, genes
        Not used (deterministic); kNN graphs' neighbours ("auto": n / 2K for K labeled classes, 5-15); most
        components (Horn 1965); rebuilds of the graph (0: none) on ``genes`` features ("auto": 10 %, 100-500, <= n).
    propagation
        "spread": local and global consistency, F* = (1 - alpha)(I - alpha S)^-1 Y, S = D^-1/2 W
        D^-1/2 (Zhou et al. 2004, eq. 4); "harmonic": f_u = (D_uu - W_uu)^-1 W_ul f_l (Zhu et al. 2003, eq. 5).
    alpha, class_mass, unreached, refine_samples, graph, embedding
        Zhou et al.'s alpha in (0, 1) (0.99 as in the paper); class mass normalisation before the argmax
        (Zhu et al. 2003, section 4): priors q_c uniform, the labeled shares ("labeled"), or none. Samples the
        labels barely reach form groups of their own; most samples the refinement runs on. The start graph's
        connectivities (n x n, scanpy's ``obsp['connectivities']``) or embedding (``obsm['X_pca']``).
    weighting, gene_choice
        Propagated samples' weight (labeled: 1): "evidence" (:func:`propagated_weight`), "kept_evidence" (the kept
        graph's only), "coherence" (r shrunk towards the coherence). Refined graphs' ``genes``: "balanced" (half by
        R^2, half in turn from every group's up-markers; one label per class: "total") or "total" (all by R^2).
    label_free
        Without labels (:func:`label_free_scores`): "auto" (:func:`resolved_label_free`: "clusters",
        :func:`cluster_scores`, on counts), "clusters", "autocorrelation", "residual", "moran", "signal", "span".
    unexplained, graph_free
        "interleave": on counts the features the groups explain (:func:`explained_features`), a population's
        they miss (:func:`unseen_populations`), the label-free groups', then the others in turn by R^2 and
        ``label_free`` (:func:`with_unexplained`; all labeled: by R^2); dense X where :func:`free_turns`; "r2": by R^2.
        Counts: ``label_free`` taken in turn with the genes' Pearson residual variance (:func:`with_graph_free`)
        "always", "never", or "auto": when the propagated samples weigh < :data:`GRAPH_FREE_BELOW`.
    explained
        With "interleave": the kept graph's own genes tested "crossfit" (each half on a graph of the other half,
        :func:`crossfit_pvalues`), "same" (the former test) or "auto" (:func:`_explained`).
    batch, counts
        Every sample's batch or None (graphs, R^2 within batches, module doc 5); raw counts as log1p(counts per 10,000)
        ("auto"), any non-negative X so ("log1p"), "as_is"; deep counts as log2(counts / size factor + theta) ("auto";
        any counts: "deep"; ``_shared.deep_counts``), tables with dropouts as ln(TPM + m) (``_shared.dropouts``).
    space, gene_scale, sample_scale
        The graphs' space (:func:`count_model`): "residuals" (counts' Pearson residuals, Lause et al. 2021),
        "values" (the former); "auto": "residuals" for counts. Values: genes "standardized" (the former),
        "as_is"; samples "as_is" (the former), "equal" (scaled alike); "auto": all compete (:func:`graph_scales`).
    per_class, tails, unwanted
        Groups' up-markers in turn with that order: "none", all ("interleave"), each one's best ("leaders"), "auto"
        (:func:`class_turns`). Dense genes clipped to median +- 3 robust sd ("clip"; "auto": :func:`read_tails`).
        "auto": dense X fitted again without rising components the held-out labels reject (:func:`unwanted_rejected`,
        RUV's eq. 3), counts within the sides of a component all groups share (:func:`crossed_batches`); "kept".

    Returns
    -------
    SelectionResult
        ``scores``: the groups' R^2 of every feature (counts: its Pearson residuals'; labeled samples weight 1, the
        others the graph's reliability; ``unexplained``, ``per_class``); ``extra``: :meth:`Propagation.extra`.
    """
    codes = batch_codes(batch, X.shape[0], "propagate: batch", MethodError)
    model = fit_propagation(X, y, k=k, n_pcs=n_pcs, refine=refine, genes=genes, propagation=propagation,
                            alpha=alpha, class_mass=class_mass, unreached=unreached, refine_samples=refine_samples,
                            graph=graph, embedding=embedding, weighting=weighting, label_free=label_free,
                            gene_choice=gene_choice, unexplained=unexplained, explained=explained, batch=codes,
                            classes=current_classes(), counts=counts, space=space, per_class=per_class,
                            graph_free=graph_free, gene_scale=gene_scale, sample_scale=sample_scale, tails=tails,
                            unwanted=unwanted)
    for note in _notes(model, codes, np.asarray(y)):
        warnings.warn(f"propagate: {note}", UserWarning, stacklevel=2)
    return SelectionResult(scores=model.scores, extra=model.extra())


def _unwanted_note(model: Propagation) -> str:
    """The warning of a fit that ran without the rising components the held-out labels rejected
    (:func:`unwanted_rejected`)."""
    (b, c, n, f), (b2, c2, n2, f2) = model.unwanted_evidence
    them = "them" if model.unwanted > 1 else "it"
    which = "it splits" if model.unwanted == 1 else "one of them splits"
    crossed = (f" (not significantly, but {which} the samples in two sides that hold the other components' groups "
               "alike, as a batch does)" if model.unwanted_on_lean else "")
    return (f"the held-out labels reject the data's {model.unwanted} rising component"
            f"{'s' if model.unwanted > 1 else ''}{crossed}: the genes' best features outside {them} "
            f"predict {b} held-out labels that the features the groups followed miss and miss {c} (place the "
            f"own class of {n} nearer, {f} farther), against the label-free order's {b2} and {c2} ({n2}, "
            f"{f2}); the fit ran on the data without {them} (an unrecorded batch, gene modules? "
            f"unwanted='kept' keeps {them})")


def _label_free_data(rising: bool, standing: str = "") -> tuple[str, str]:
    """(what the data show, what the label-free order reads) for :func:`_free_leads_note`: components that rise
    above noise in few features (``rising``) and their variance, else no component rising (``standing``: what stood
    out instead) and every gene's dispersion."""
    if rising:
        return f"the components that rise above noise lie in fewer than {GENES} features", "their variance"
    return f"no component of the data rises above noise{standing}", "every gene's dispersion"


def _free_leads_note(model: Propagation) -> str:
    """The warning where the label-free order led (:func:`_notes`): why (held-out labels too few to judge, the R^2's
    features at chance, the head carrying the classes, the R^2's features not beyond chance, the places, else the sign
    test) and what ranks."""
    if model.free_unjudged:
        return (f"too few labels can be held out to judge the propagated samples' groups (fewer than 2 labeled "
                f"classes hold 2 labels, or those hold fewer than {JUDGE_LABELS}): the features the groups "
                "explain take turns with the label-free order, which ranks the rest (unexplained='r2' keeps the "
                "R^2's)")
    if model.free_at_chance:
        accuracy, chance, held = model.r2_held_out
        data, order = _label_free_data(model.free_concentrated)
        return (f"{data}, and the features the R^2 ranks first (refitted without them) predict {accuracy:.0%} "
                f"of {held} held-out labels, no more than chance ({chance:.0%}): below the features the groups "
                f"explain, the label-free order ({order}) ranks (unexplained='r2' keeps the R^2's)")
    if model.free_head:
        m, right, held, chance, of = model.free_head
        data, order = _label_free_data(of == "signal", f" and fewer than {GENES} genes' dispersion stands out")
        against = (f" and no fewer than the features the R^2 ranks first ({model.r2_held_out[0]:.0%})" if not
                   model.free_outside else f"; the features the R^2 ranks first predict {model.r2_held_out[0]:.0%}, "
                   f"its best features outside them only {model.free_outside[0]} of {model.free_outside[1]}, not "
                   "beyond chance")
        return (f"{data}, and the first {m} of them (chosen without labels) predict {right} of {held} held-out "
                f"labels, beyond chance ({chance:.0%}){against}: below the features the groups explain, the "
                f"label-free order ({order}) ranks (unexplained='r2' keeps the R^2's)")
    if model.free_unproven:
        standing, of = model.free_unproven
        accuracy, chance, held = model.r2_held_out
        data, order = _label_free_data(of == "signal", f" and {standing} genes' dispersion stands out")
        return (f"{data}, and the features the R^2 ranks first (refitted without them) predict {accuracy:.0%} of "
                f"{held} held-out labels, not beyond chance ({chance:.0%}; one-sided binomial test at 5%): the "
                f"label-free order ({order}) ranks, the features the groups explain among the rest "
                "(unexplained='r2' keeps the R^2's)")
    if model.free_by_places:
        nearer, farther = model.free_turns[3:]
        return (f"the label-free features place the own class of {nearer} held-out labels nearer than those of "
                f"the propagated samples' groups do, and of {farther} farther: below the features the groups "
                "explain, the label-free order ranks (unexplained='r2' keeps the R^2's)")
    beyond, behind = model.free_turns[1:3]
    return (f"the label-free features predict {beyond} held-out labels that those of the propagated "
            f"samples' groups miss, and miss {behind} they predict: below the features the groups explain, "
            "the label-free order ranks (unexplained='r2' keeps the R^2's)")


def _notes(model: Propagation, batch, y: np.ndarray) -> list[str]:
    """What the user is warned about: the model's note, batches confounded with the classes, the graph-free
    score taken in turn (:func:`with_graph_free`), populations the groups miss (:func:`unseen_populations`), the
    label-free order leading (:func:`free_leads`)."""
    notes = [model.note] if model.note else []
    if model.graph_free:
        weight = model.propagated_weight
        shown = np.floor(weight * 1000) / 1000  # rounded down: 0.2499 is not shown as 0.25
        why = (f"the propagated samples weigh {shown:.3f}, below {GRAPH_FREE_BELOW:g}: the graph carries the classes "
               "little, so" if weight < GRAPH_FREE_BELOW else "graph_free='always':")
        notes.append(f"{why} the genes' Pearson residual variance was taken in turn with the graph's label-free scores "
                     "(graph_free='never' keeps the graph's alone)")
    if model.unseen_sizes:
        sizes = ", ".join(str(v) for v in model.unseen_sizes)
        many = len(model.unseen_sizes) > 1
        what = "populations" if many else "a population"
        notes.append(f"the data separate {what} of {sizes} samples that no labeled class's group matches (a type "
                     f"nobody labeled?): {'their' if many else 'its'} {int(model.unseen.sum())} features rank "
                     "with those the labels explain or right after them (extra['unseen'], its samples "
                     "extra['unseen_cells'])")
    if model.outlying.size:  # no row numbers: a resample's rows are not the data's (selection mode)
        many = model.outlying.size > 1
        notes.append(f"{model.outlying.size} sample{'s are' if many else ' is'} much louder or quieter than the median "
                     "one (noisy or failed arrays? 'outlying_samples' in the output names them): the graph kept "
                     "compares samples by their profiles' correlation (sample_scale='equal')")
    if model.tail_weight is not None:
        notes.append(f"the genes' noise has heavy tails (median excess kurtosis {model.tail_weight:.1f}): every gene's "
                     f"values were clipped to its median +- {CLIP_SDS:g} robust standard deviations before the fit, "
                     "its statistics included (tails='as_is' keeps them)")
    if model.residual_tails:
        notes.append("the values' heavy tails are one-sided in values of both signs (Pearson residuals of counts, "
                     "SCTransform?): kept as they are, not clipped, and the label-free scores are Moran's I (the "
                     "counts themselves, where you have them, are the better input)")
    if model.dropout_offset is not None:
        notes.append(f"the table's well-expressed genes drop out (0 in more than {DEEP_DROPOUTS:.0%} of the samples: "
                     "full-length single cells?): the fit read its values undone and logged again over the median "
                     f"gene's level, ln(value + {model.dropout_offset:.4g}); the statistics are of the values given "
                     "(counts='as_is' keeps the table as it is)")
    if model.unwanted:
        notes.append(_unwanted_note(model))
    if model.crossed:
        notes.append(f"{model.crossed} component{'s' if model.crossed > 1 else ''} of the counts' residuals split"
                     f"{'' if model.crossed > 1 else 's'} the cells in sides that hold every group of the others "
                     "alike, no labeled class following them (an unrecorded batch, a program of every type?): the "
                     "fit read the sides as batches (give batch= if they are known; unwanted='kept' keeps them)")
    if model.free_leads:
        notes.append(_free_leads_note(model))
    if confounded(batch, y):
        notes.append("no batch holds labeled samples of 2 classes: batches and classes may be confounded, and "
                     "comparing within batches then removes the class differences (check the design; without "
                     "batch= the batches' genes may rank instead)")
    return notes
