from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    # every label's list beside the analyst's case (consensus_all_labels) has no path and no figures
    path = getattr(sm.output, "path", None)
    run_consensus(prepared=sm.input.prepared, full=list(sm.input.full), ranks=list(sm.input.ranks),
                  consensus=sm.output.consensus, summary=sm.output.summary, path=path, sel=sm.params.sel,
                  methods=sm.params.methods, dataset=sm.wildcards.dataset, seed=sm.params.seed)
    if path is not None:
        draw_selection_figures(summary=sm.output.summary, path=path, consensus=sm.output.consensus,
                               figure=sm.output.figure, dotplot=sm.output.dotplot)
