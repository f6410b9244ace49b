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

The package, in the order a fit runs (each module imports only those above it):

- :mod:`.model`: the fitted model (:class:`Propagation`), a candidate graph, the fit's sizes;
- :mod:`.reading`: X as the fit reads it (tails, counts, content order, crossed batches);
- :mod:`.ordering`: the orders of the features (explained first, tiers, turns, the groups' leaders);
- :mod:`.graphs`: the start graph, the refinement chains and the graph kept (steps 1, 2 and 4);
- :mod:`.weights`: what each sample counts in the groups (the propagated samples' weight, the labels' seeds);
- :mod:`.label_free`: the scores without labels and the populations the labels' groups miss;
- :mod:`.judges`: whether the label-free order takes turns with the R^2 or leads, on the held-out labels;
- :mod:`.fit`: :func:`fit_propagation`, which runs all of the above (step 3: the R^2 and the order);
- :mod:`.notes`, :mod:`.score`: the user's warnings and the registered method :func:`propagate_score`.
"""

from .fit import (
    PER_FEATURE,
    crossfit_pvalues,
    fit_propagation,
)
from .graphs import (
    gene_scales,
    graph_neighbours,
    graph_scales,
    held_out_counts,
    held_out_reach,
    refine_genes,
    refinement_rows,
    samples_compete,
    scale_leads,
    top_genes,
    unequal_samples,
)
from .judges import (
    CLIFF,
    FEW_LABELS,
    FREE_LEADS_P,
    beyond_chance,
    concentrated,
    few_labels,
    free_leads,
    free_turns,
    head_carries,
    held_out_judges,
    held_out_right,
    label_free_at_chance,
    leans,
    r2_at_chance,
    r2_outside_right,
    r2_unproven,
    rescaled_gene_by_gene,
    standing_out,
)
from .label_free import (
    AUTOCORRELATION_K,
    DataGroups,
    autocorrelation_scores,
    cluster_parts,
    cluster_scores,
    dense_moran,
    gene_dispersion,
    label_free_choice,
    label_free_scores,
    label_free_space,
    residual_scores,
    signal_variance,
    unseen_populations,
    with_graph_free,
)
from .model import (
    AUTO_GENES,
    AUTO_K,
    FOLDS,
    Candidate,
    Propagation,
    Yardstick,
)
from .ordering import (
    class_turns,
    explained_features,
    explained_pvalues,
    in_turn,
    turning_markers,
    with_class_turns,
    with_unexplained,
)
from .reading import (
    clipped_tails,
    read_tails,
)
from .score import (
    propagate_score,
)
from .weights import (
    NULL_DRAWS,
    NULL_T95,
    coherence,
    contradicted_seeds,
    evidence_weight,
    excess_coherence,
    null_coherence,
    reliability,
    shows_a_useful_graph,
)

__all__ = [
    "AUTO_GENES",
    "AUTO_K",
    "AUTOCORRELATION_K",
    "autocorrelation_scores",
    "beyond_chance",
    "Candidate",
    "class_turns",
    "CLIFF",
    "clipped_tails",
    "cluster_parts",
    "cluster_scores",
    "coherence",
    "concentrated",
    "contradicted_seeds",
    "crossfit_pvalues",
    "DataGroups",
    "dense_moran",
    "evidence_weight",
    "excess_coherence",
    "explained_features",
    "explained_pvalues",
    "FEW_LABELS",
    "few_labels",
    "fit_propagation",
    "FOLDS",
    "free_leads",
    "FREE_LEADS_P",
    "free_turns",
    "gene_dispersion",
    "gene_scales",
    "graph_neighbours",
    "graph_scales",
    "head_carries",
    "held_out_counts",
    "held_out_judges",
    "held_out_reach",
    "held_out_right",
    "in_turn",
    "label_free_at_chance",
    "label_free_choice",
    "label_free_scores",
    "label_free_space",
    "leans",
    "null_coherence",
    "NULL_DRAWS",
    "NULL_T95",
    "PER_FEATURE",
    "propagate_score",
    "Propagation",
    "r2_at_chance",
    "r2_outside_right",
    "r2_unproven",
    "read_tails",
    "refine_genes",
    "refinement_rows",
    "reliability",
    "rescaled_gene_by_gene",
    "residual_scores",
    "samples_compete",
    "scale_leads",
    "shows_a_useful_graph",
    "signal_variance",
    "standing_out",
    "top_genes",
    "turning_markers",
    "unequal_samples",
    "unseen_populations",
    "with_class_turns",
    "with_graph_free",
    "with_unexplained",
    "Yardstick",
]
