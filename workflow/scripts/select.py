from ssfs.workflow.pipeline import run_select_reps
from ssfs.workflow.scripting import run_rule

run_rule(run_select_reps, snakemake)  # noqa: F821
