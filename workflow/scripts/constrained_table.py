from ssfs.workflow.pipeline import run_constrained_table
from ssfs.workflow.scripting import run_rule

run_rule(run_constrained_table, snakemake)  # noqa: F821
