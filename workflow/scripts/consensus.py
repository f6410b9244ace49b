from ssfs.report.selection import draw_stability_path
from ssfs.workflow.pipeline import run_consensus
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_consensus(prepared=sm.input.prepared, full=list(sm.input.full), ranks=list(sm.input.ranks),
                  consensus=sm.output.consensus, summary=sm.output.summary, sel=sm.params.sel,
                  methods=sm.params.methods, dataset=sm.wildcards.dataset)
    draw_stability_path(consensus=sm.output.consensus, sel=sm.params.sel, figure=sm.output.figure)
