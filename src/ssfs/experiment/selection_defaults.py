"""The defaults of selection mode, one source for every door: the workflow's ``selection:``
config (the schema's defaults are tested equal), ``ssfs select`` and
:func:`ssfs.tl.select_stable`. No imports: the command line reads them before loading anything."""

#: resamples (even: complementary pairs), top (q; ``auto``: from the error bound), threshold (pi),
#: max_false (expected false selections ``top: auto`` allows), assumption of that bound, scheme,
#: aggregation across methods, aggregation weights by each method's own stability
SELECTION_DEFAULTS = {"resamples": 20, "top": "auto", "threshold": 0.8, "max_false": 1.0, "assumption": "r_concave",
                      "scheme": "cpss", "aggregation": "stability_weighted"}
