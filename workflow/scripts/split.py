from ssfs.workflow.pipeline import run_split
from ssfs.workflow.scripting import run_rule

run_rule(run_split, snakemake)  # noqa: F821
