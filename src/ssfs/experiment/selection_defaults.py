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
#: fewest samples for ``propagate`` alone on count-like data: on fewer the committee (a half-sample of 20
#: cells gives a kNN graph of 15 neighbours no structure, and propagate alone selected nothing where the
#: committee found every marker: tests/io/test_tenx.py's 40 cells; alone was measured ahead from 700)
COUNTS_MIN_SAMPLES = 200
#: the value of ``methods`` (``--methods``, ``selection.methods``) that chooses between the two from the data
AUTO = "auto"


def kept_per_class(sel: dict, dataset: str) -> int | None:
    """The labels per class the answer keeps on ``dataset`` (``selection.labeled_per_class``: one
    number for every dataset, or dataset name -> number; None = every label)."""
    k = sel.get("labeled_per_class")
    return k.get(dataset) if isinstance(k, dict) else k
