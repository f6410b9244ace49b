from ssfs.workflow.pipeline import run_selection_chunk
from ssfs.workflow.scripting import run_rule

run_rule(run_selection_chunk, snakemake)  # noqa: F821
