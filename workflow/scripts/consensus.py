from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus
from ssfs.workflow.scripting import run_steps

run_steps(snakemake, run_consensus, draw_selection_figures)  # noqa: F821
