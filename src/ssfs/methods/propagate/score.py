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

    X is dense (standardised for the graph) or sparse (log counts); y holds class codes, -1 unlabeled; constraints
    and rng are not used (deterministic). The result's ``scores`` are the groups' R^2 of every feature (counts: its
    Pearson residuals'; labeled samples weigh 1, the others the graph's reliability; then ``unexplained`` and
    ``per_class``), its ``extra`` :meth:`Propagation.extra`. Each parameter's text is ``propagate.<name>`` in
    :data:`ssfs._docs.METHOD_TEXT` (what ``ssfs methods -v propagate`` prints); the registry renders them below.
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
