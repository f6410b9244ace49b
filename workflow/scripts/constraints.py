from ssfs.workflow.pipeline import run_constraints
from ssfs.workflow.scripting import run_step


def main(sm):
    run_constraints(sm.input.prepared, list(sm.input.splits), list(sm.output), sm.params.sup, sm.params.seed,
                    sm.wildcards.dataset, sm.params.reps)


run_step(main, snakemake)  # noqa: F821
