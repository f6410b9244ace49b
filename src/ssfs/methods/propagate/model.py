"""The fitted model of ``propagate`` (:class:`Propagation`), a graph the labels may spread on (:class:`Candidate`),
the yardstick the held-out labels judge the fit's features by (:class:`Yardstick`), and the fit's sizes (folds,
neighbours, refinement genes, subsample)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._shared.class_stats import (
    ClassStatistics,
)

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
