from ssfs.workflow.pipeline import run_constrained_clustering
from ssfs.workflow.scripting import run_rule

run_rule(run_constrained_clustering, snakemake)  # noqa: F821
