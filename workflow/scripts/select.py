import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.pipeline import run_select_batch
from ssfs.workflow.scripting import job
from ssfs.workflow.training_steps import run_evaluation_batch

with job(snakemake) as sm:  # noqa: F821
    run_select_batch(prepared=sm.input.prepared, splits=list(sm.input.splits), constraints=list(sm.input.constraints),
                     methods=sm.params.methods, rankings=list(sm.output.rankings), timing=list(sm.output.timing),
                     seed=sm.params.seed, dataset=sm.wildcards.dataset, variant=sm.wildcards.variant,
                     reps=sm.params.reps)
    if sm.params.evaluate:  # execution.fuse_steps: also evaluate, one start-up per dataset
        run_evaluation_batch(prepared=sm.input.prepared, splits=list(sm.input.splits),
                             constraints=list(sm.input.constraints), rankings=list(sm.output.rankings),
                             scores=list(sm.output.scores),
                             methods=sm.params.methods, ev=sm.params.ev, seed=sm.params.seed,
                             dataset=sm.wildcards.dataset, variant=sm.wildcards.variant, reps=sm.params.reps)
