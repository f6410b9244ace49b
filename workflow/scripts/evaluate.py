from ssfs.experiment.evaluation import run_evaluation
from ssfs.workflow.scripting import run_step


def main(sm):
    run_evaluation(sm.input.prepared, list(sm.input.splits), list(sm.input.rankings), list(sm.input.components),
                   list(sm.input.constraints), sm.output[0], sm.params.ev, sm.params.seed, sm.wildcards.dataset,
                   sm.wildcards.variant, sm.wildcards.method, sm.params.reps)


run_step(main, snakemake)  # noqa: F821
