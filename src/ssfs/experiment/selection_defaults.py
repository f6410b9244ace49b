"""The defaults of selection mode, one source for every door: the workflow's ``selection:``
config (the schema's defaults are tested equal), ``ssfs select`` and
:func:`ssfs.tl.select_stable`. No imports: the command line reads them before loading anything."""

#: resamples (even: complementary pairs), top (q; ``auto``: from the error bound), threshold (pi),
#: max_false (expected false selections ``top: auto`` allows), assumption of that bound, scheme,
#: aggregation across methods, aggregation weights by each method's own stability; labeled: how the
#: labeled samples enter the resamples (``split`` between the halves, ``rotated``: in most resamples, a few of
#: each class left out in turn, ``shared`` by every resample, ``auto``)
SELECTION_DEFAULTS = {"resamples": 20, "top": "auto", "threshold": 0.8, "max_false": 1.0, "assumption": "r_concave",
                      "scheme": "cpss", "aggregation": "stability_weighted", "labeled": "auto"}


#: selection mode's methods on fully labeled or unlabeled dense data and on few samples: the committee that
#: selected the most planted markers on half-samples of the analyst's CSV with the labels split (session 12;
#: docs/labels_that_count.md, "Selection mode")
COMMITTEE = ("propagate", "laplacian", "fisher", "cls")
#: on count-like data (single cells) ``propagate`` alone: there the committee's graph members rank the
#: noise of highly expressed genes and pull the consensus off the markers (same section)
COUNTS_COMMITTEE = ("propagate",)
#: fewest samples for ``propagate`` alone on count-like data: on fewer the committee. Planted counts at 3
#: labels per class (docs/labels_that_count.md, "Selection mode"): the committee ahead at 200 cells (0.84,
#: 0.89 vs 0.83, 0.83), propagate alone at 400 (0.93, 0.91 vs 0.85, 0.84); on 40 cells (half-samples of
#: 20 under a 15-neighbour graph) alone selected nothing where the committee found every marker
COUNTS_MIN_SAMPLES = 300
#: labeled data (some labels, partly or fully labeled) of at least this many samples: ``methods: auto`` takes
#: ``propagate`` alone there (planted arrays at 10 and 20 labels per class, 16 draws: ahead of the committee or
#: level in all, none false; at 100 samples and 3-5 labels per class the committee's graph members listed the
#: arrays' gene modules; real microarrays of 50-102 samples at 3 labels per class: ahead on 3 of 6, level on
#: the others; fully labeled arrays: ahead or level on 6 draws; docs/labels_that_count.md "Selection mode").
#: On 40 cells (half-samples of 20 under a 15-neighbour graph) ``propagate`` alone selected nothing where the
#: committee found every marker
PROPAGATE_MIN_SAMPLES = 50
#: partly labeled data of at least this many samples: ``labeled: auto`` may share few labels. On fewer samples
#: the same few labels weigh so much in every resample that their chance patterns were selected every time
#: (arrays of independent genes, 100 samples, 3-5 labels per class: 13-20 false selections of 23-36; split:
#: 0-2 selected, none false; session 23: also on graphs that carry the classes, 5-21 false), so there it
#: rotates them or splits them; at 150 shared lists held 14 false selections in 8 draws, split ones 83
PARTIAL_MIN_SAMPLES = 150
#: ``labeled: auto`` rotates the labeled samples (in most resamples, a few of each class left out in turn) of
#: partly labeled data when the smallest labeled class has fewer labels than this: split, half-samples of 3-5
#: labels per class hold 1-2 per class, too few for ``propagate`` to use them, and the list was mostly modules
#: (planted arrays at 3 per class: 1-9 of 28-52 selected were markers; shared: 72-73 of 72-73). Shared (every
#: label in every resample, session 21), Splatter-like counts of 200 cells listed 3-17 chance patterns of the
#: labels (rotated: none; docs/labels_that_count.md, "Labels left out in turn")
SHARED_BELOW = 10
#: ``labeled: auto`` with few labels (``SHARED_BELOW``) shares them when ``propagate`` on all samples gives the
#: propagated samples at least this weight (its ``evidence`` weighting: the graph's reliability times their share
#: of the information), else rotates them; on fewer than ``PARTIAL_MIN_SAMPLES`` it rotates them at this weight
#: and splits them below it (rotated there, 2 labels per class on a graph that does not carry the classes
#: listed an array's modules: 33 false of 34). 42 planted draws at 200-300 samples (docs/labels_that_count.md,
#: "Labels left out in turn"): the shared lists that held the labels' chance patterns (3-25 each) came from
#: weights 0.03-0.25 (Splatter-like counts, an array of 158 samples); every draw of 0.5 or more listed 0-2
SHARED_MIN_WEIGHT = 0.5
#: how the labeled samples enter the resamples (``selection.labeled``, ``--labeled``, ``labeled=``)
LABELED = ("auto", "split", "rotated", "shared")
#: the value of ``methods`` (``--methods``, ``selection.methods``) that chooses between the two from the data
AUTO = "auto"


def kept_per_class(sel: dict, dataset: str) -> int | None:
    """The labels per class the answer keeps on ``dataset`` (``selection.labeled_per_class``: one
    number for every dataset, or dataset name -> number; None = every label)."""
    k = sel.get("labeled_per_class")
    return k.get(dataset) if isinstance(k, dict) else k


#: the methods with which ``labeled: auto`` may share the labeled samples: they spread the labels over
#: the unlabeled samples before scoring, so a resample's other unlabeled samples change the scores
SHARES_LABELS_WITH = ("propagate",)


def labeled_for(labeled: str, methods) -> str:
    """The ``labeled`` setting for ``methods`` (registered names, or ``"auto"``): ``"auto"`` stays
    auto (decided on the labels, :func:`ssfs.experiment.selection.labeled_resampling`) with methods auto or
    :data:`SHARES_LABELS_WITH` alone, else it is ``"split"``: ``fisher`` scores the labeled samples
    alone and ``cls`` their pairs, so with the same few labels in every resample they would select
    the same chance patterns of them every time, stable in look and counted by no bound (pure
    noise, fisher and laplacian: 3 noise features at frequency 1)."""
    if labeled != "auto" or methods == AUTO:
        return labeled
    names = [methods] if isinstance(methods, str) else list(methods)
    return "auto" if set(names) <= set(SHARES_LABELS_WITH) else "split"
