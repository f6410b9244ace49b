from ssfs.report.selection import draw_selection_figures
from ssfs.workflow.pipeline import run_all_labels_selection, run_consensus, run_selection_chunk
from ssfs.workflow.scripting import run_steps

# execution.fuse_steps: the job also writes the consensus (one start-up per dataset) and, in the
# analyst's case (selection.labeled_per_class), the list every label gives
fused = [run_consensus, draw_selection_figures] if snakemake.params.fuse_consensus else []  # noqa: F821
fused += [run_all_labels_selection] if hasattr(snakemake.output, "all_labels_summary") else []  # noqa: F821
run_steps(snakemake, run_selection_chunk, *fused)  # noqa: F821
