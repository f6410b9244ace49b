"""The defaults of selection mode, one source for every door: the workflow's ``selection:``
config (the schema's defaults are tested equal), ``ssfs select`` and
:func:`ssfs.tl.select_stable`. No imports: the command line reads them before loading anything."""

#: resamples (even: complementary pairs), top (q; ``auto``: from the error bound), threshold (pi),
#: max_false (expected false selections ``top: auto`` allows), assumption of that bound, scheme,
#: aggregation across methods, aggregation weights by each method's own stability
SELECTION_DEFAULTS = {"resamples": 20, "top": "auto", "threshold": 0.8, "max_false": 1.0, "assumption": "r_concave",
                      "scheme": "cpss", "aggregation": "stability_weighted"}


#: selection mode's methods on dense data (microarrays): the committee that selected the most planted
#: markers on half-samples of the analyst's CSV (docs/labels_that_count.md, "Selection mode")
COMMITTEE = ("propagate", "laplacian", "fisher", "cls")
#: on count-like data (single cells) ``propagate`` alone: there the committee's graph members rank the
#: noise of highly expressed genes and pull the consensus off the markers (same section)
COUNTS_COMMITTEE = ("propagate",)
#: fewest samples for ``propagate`` alone on count-like data: on fewer the committee. Planted counts at 3
#: labels per class (docs/labels_that_count.md, "Selection mode"): the committee ahead at 200 cells (0.84,
#: 0.89 vs 0.83, 0.83), propagate alone at 400 (0.93, 0.91 vs 0.85, 0.84); on 40 cells (half-samples of
#: 20 under a 15-neighbour graph) alone selected nothing where the committee found every marker
COUNTS_MIN_SAMPLES = 300
#: the value of ``methods`` (``--methods``, ``selection.methods``) that chooses between the two from the data
AUTO = "auto"


def kept_per_class(sel: dict, dataset: str) -> int | None:
    """The labels per class the answer keeps on ``dataset`` (``selection.labeled_per_class``: one
    number for every dataset, or dataset name -> number; None = every label)."""
    k = sel.get("labeled_per_class")
    return k.get(dataset) if isinstance(k, dict) else k
