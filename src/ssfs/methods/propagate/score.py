"""``propagate`` as a registered method (:func:`propagate_score`): its parameters, the fit, its warnings."""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from ...errors import MethodError
from ...labels import current_classes
from ...params import NonNegInt, OpenFraction, PosInt
from ...registry import SelectionResult, register
from .._shared.batches import batch_codes
from .fit import fit_propagation
from .label_free import LabelFree
from .model import REFINE_SAMPLES
from .notes import _notes

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
