"""The warnings a ``propagate`` fit gives the user (:func:`_notes`): what the fit did that changes how its scores
read."""

from __future__ import annotations

import numpy as np

from .._shared.deep_counts import DEEP_DROPOUTS
from .._shared.labels_alone import (
    GENES,
)
from .graphs import confounded
from .judges import JUDGE_LABELS
from .label_free import GRAPH_FREE_BELOW
from .model import Propagation
from .reading import CLIP_SDS


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
