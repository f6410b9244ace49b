from ssfs.workflow.pipeline import run_prepare
from ssfs.workflow.scripting import run_step


def main(sm):
    run_prepare(sm.params.name, sm.params.entry, sm.params.data_dir, sm.output[0])


run_step(main, snakemake)  # noqa: F821
