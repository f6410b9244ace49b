import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.pipeline import run_prepare, run_supervision
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_prepare(dataset=sm.wildcards.dataset, entry=sm.params.entry, data_dir=sm.params.data_dir,
                prepared=sm.output.prepared)
    if sm.params.supervision:  # execution.fuse_steps: also the splits and constraints, one start-up per dataset
        run_supervision(prepared=sm.output.prepared, splits=list(sm.output.splits),
                        constraints=list(sm.output.constraints), sup=sm.params.sup, seed=sm.params.seed,
                        dataset=sm.wildcards.dataset, reps=sm.params.reps)
