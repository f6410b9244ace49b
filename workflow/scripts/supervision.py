import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.pipeline import run_supervision
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_supervision(prepared=sm.input.prepared, splits=list(sm.output.splits), constraints=list(sm.output.constraints),
                    sup=sm.params.sup, seed=sm.params.seed, dataset=sm.wildcards.dataset, reps=sm.params.reps)
