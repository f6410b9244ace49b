from ssfs.workflow.pipeline import run_split
from ssfs.workflow.scripting import run_step


def main(sm):
    run_split(sm.input[0], list(sm.output), sm.params.sup, sm.params.seed, sm.wildcards.dataset, sm.params.reps)


run_step(main, snakemake)  # noqa: F821
