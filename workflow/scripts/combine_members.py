from ssfs.workflow.pipeline import run_combine
from ssfs.workflow.scripting import run_step


def main(sm):
    run_combine(sm.input.prepared, sm.input.split, sm.input.constraints, list(sm.input.chunks), sm.output.ranking,
                sm.output.components, sm.output.timing, sm.params.method, sm.params.seed, sm.wildcards.dataset,
                sm.wildcards.method, int(sm.wildcards.rep))


run_step(main, snakemake)  # noqa: F821
