from ssfs.workflow.pipeline import run_consensus
from ssfs.workflow.scripting import run_rule

run_rule(run_consensus, snakemake)  # noqa: F821
