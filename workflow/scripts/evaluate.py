from ssfs.experiment.evaluation import run_evaluation
from ssfs.workflow.scripting import run_rule

run_rule(run_evaluation, snakemake)  # noqa: F821
