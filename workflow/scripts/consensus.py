import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus_step
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_consensus_step(prepared=sm.input.prepared, full=list(sm.input.full), ranks=list(sm.input.ranks),
                       outputs=sm.output, sel=sm.params.sel, methods=sm.params.methods, dataset=sm.wildcards.dataset,
                       seed=sm.params.seed, draw_figures=draw_selection_figures)
