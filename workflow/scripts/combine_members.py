from ssfs.workflow.pipeline import run_combine
from ssfs.workflow.scripting import run_rule

run_rule(run_combine, snakemake)  # noqa: F821
