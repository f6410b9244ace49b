from ssfs.workflow.pipeline import run_constraints
from ssfs.workflow.scripting import run_rule

run_rule(run_constraints, snakemake)  # noqa: F821
