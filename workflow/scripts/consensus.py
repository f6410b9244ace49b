from ssfs.report.selection import draw_stability_path
from ssfs.workflow.pipeline import run_consensus
from ssfs.workflow.scripting import run_steps

run_steps(snakemake, run_consensus, draw_stability_path)  # noqa: F821
