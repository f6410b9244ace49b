import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.scripting import job
from ssfs.workflow.training_steps import run_evaluation_batch

with job(snakemake) as sm:  # noqa: F821
    run_evaluation_batch(prepared=sm.input.prepared, splits=list(sm.input.splits),
                         constraints=list(sm.input.constraints), rankings=list(sm.input.rankings),
                         scores=list(sm.output.scores),
                         methods=sm.params.methods, ev=sm.params.ev, seed=sm.params.seed,
                         dataset=sm.wildcards.dataset, variant=sm.wildcards.variant, reps=sm.params.reps)
