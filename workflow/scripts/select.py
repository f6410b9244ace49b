from ssfs.workflow.pipeline import run_select_reps
from ssfs.workflow.scripting import run_steps

steps = [run_select_reps]
if snakemake.params.evaluate:  # noqa: F821 - execution.fuse_steps: also evaluate, one start-up per dataset
    from ssfs.experiment.evaluation import run_evaluation

    steps.append(run_evaluation)
run_steps(snakemake, *steps)  # noqa: F821
