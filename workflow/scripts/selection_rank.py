import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus_step, run_selection_batch
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_selection_batch(prepared=sm.input.prepared, ranks=list(sm.output.ranks), full=list(sm.output.full),
                        methods=sm.params.methods, sup=sm.params.sup, sel=sm.params.sel, seed=sm.params.seed,
                        dataset=sm.wildcards.dataset, chunk=sm.params.chunk)
    if sm.params.fuse_consensus:  # execution.fuse_steps: one chunk, one batch: also the consensus
        run_consensus_step(prepared=sm.input.prepared, full=list(sm.output.full), ranks=list(sm.output.ranks),
                           outputs=sm.output, sel=sm.params.sel, methods=sm.params.methods,
                           dataset=sm.wildcards.dataset, seed=sm.params.seed, draw_figures=draw_selection_figures)
