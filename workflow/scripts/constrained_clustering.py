import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.scripting import job
from ssfs.workflow.training_steps import run_constrained_clustering

with job(snakemake) as sm:  # noqa: F821
    run_constrained_clustering(prepared=sm.input.prepared, splits=list(sm.input.splits), table=sm.output.table,
                               cc=sm.params.cc, seed=sm.params.seed, dataset=sm.wildcards.dataset,
                               variant=sm.wildcards.variant, reps=sm.params.reps)
