"""The defaults of selection mode, one source for every door: the workflow's ``selection:``
config (the schema's defaults are tested equal), ``ssfs select`` and
:func:`ssfs.tl.select_stable`. No imports: the command line reads them before loading anything."""

#: resamples (even: complementary pairs), top (q; ``auto``: from the error bound), threshold (pi),
#: max_false (expected false selections ``top: auto`` allows), assumption of that bound, scheme,
#: aggregation across methods, aggregation weights by each method's own stability
SELECTION_DEFAULTS = {"resamples": 20, "top": "auto", "threshold": 0.8, "max_false": 1.0, "assumption": "r_concave",
                      "scheme": "cpss", "aggregation": "stability_weighted"}


def kept_per_class(sel: dict, dataset: str) -> int | None:
    """The labels per class the answer keeps on ``dataset`` (``selection.labeled_per_class``: one
    number for every dataset, or dataset name -> number; None = every label)."""
    k = sel.get("labeled_per_class")
    return k.get(dataset) if isinstance(k, dict) else k
