from ssfs.workflow.pipeline import run_prepare
from ssfs.workflow.scripting import run_rule

run_rule(run_prepare, snakemake)  # noqa: F821
