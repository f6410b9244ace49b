import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from types import SimpleNamespace

from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus_step, run_selection_batch
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    for key, sel in sm.params.sets:  # the answer, then (fused) the list every label gives: one start-up
        ranks, full = list(getattr(sm.output, key + "ranks")), list(getattr(sm.output, key + "full"))
        run_selection_batch(prepared=sm.input.prepared, ranks=ranks, full=full, methods=sm.params.methods,
                            sup=sm.params.sup, sel=sel, seed=sm.params.seed, dataset=sm.wildcards.dataset,
                            chunk=sm.params.chunk)
        if sm.params.fuse_consensus:  # execution.fuse_steps: one chunk, one batch: also the consensus
            outputs = SimpleNamespace(**{k: getattr(sm.output, key + k, None)
                                         for k in ("consensus", "summary", "path", "figure", "dotplot")})
            run_consensus_step(prepared=sm.input.prepared, full=full, ranks=ranks, outputs=outputs, sel=sel,
                               methods=sm.params.methods, dataset=sm.wildcards.dataset, seed=sm.params.seed,
                               draw_figures=draw_selection_figures)
