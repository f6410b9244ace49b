from ssfs.workflow.pipeline import run_select_reps
from ssfs.workflow.scripting import run_step


def main(sm):
    run_select_reps(sm.input.prepared, list(sm.input.splits), list(sm.input.constraints), list(sm.output.rankings),
                    list(sm.output.components), list(sm.output.timing), sm.params.method, sm.params.seed,
                    sm.wildcards.dataset, sm.wildcards.method, sm.params.reps)


run_step(main, snakemake)  # noqa: F821
