from ssfs.workflow.pipeline import run_supervision
from ssfs.workflow.scripting import run_rule

run_rule(run_supervision, snakemake)  # noqa: F821
