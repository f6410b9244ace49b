from ssfs.workflow.pipeline import run_member_chunk
from ssfs.workflow.scripting import run_step


def main(sm):
    run_member_chunk(sm.input.prepared, sm.input.split, sm.input.constraints, sm.output[0], sm.params.method,
                     sm.params.seed, sm.wildcards.dataset, sm.wildcards.method, int(sm.wildcards.rep),
                     int(sm.wildcards.chunk), sm.params.n_chunks)


run_step(main, snakemake)  # noqa: F821
