from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus, run_selection_batch
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_selection_batch(prepared=sm.input.prepared, ranks=list(sm.output.ranks), full=list(sm.output.full),
                        methods=sm.params.methods, sup=sm.params.sup, sel=sm.params.sel, seed=sm.params.seed,
                        dataset=sm.wildcards.dataset, chunk=sm.params.chunk)
    if sm.params.fuse_consensus:  # execution.fuse_steps: one chunk, one batch: also the consensus
        path = getattr(sm.output, "path", None)  # every label's list (selection_all_labels): no path, no figures
        run_consensus(prepared=sm.input.prepared, full=list(sm.output.full), ranks=list(sm.output.ranks),
                      consensus=sm.output.consensus, summary=sm.output.summary, path=path, sel=sm.params.sel,
                      methods=sm.params.methods, dataset=sm.wildcards.dataset, seed=sm.params.seed)
        if path is not None:
            draw_selection_figures(summary=sm.output.summary, path=path, consensus=sm.output.consensus,
                                   figure=sm.output.figure, dotplot=sm.output.dotplot)
