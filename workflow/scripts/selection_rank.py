from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_consensus, run_selection_chunk
from ssfs.workflow.scripting import run_steps

# execution.fuse_steps: the job also writes the consensus (one start-up per dataset)
fused = [run_consensus, draw_selection_figures] if snakemake.params.fuse_consensus else []  # noqa: F821
run_steps(snakemake, run_selection_chunk, *fused)  # noqa: F821
