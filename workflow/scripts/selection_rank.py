from ssfs.workflow.pipeline import run_consensus, run_selection_chunk
from ssfs.workflow.scripting import run_steps

# execution.fuse_steps: the job also writes the consensus (one start-up per dataset)
run_steps(snakemake, run_selection_chunk, *([run_consensus] if snakemake.params.fuse_consensus else []))  # noqa: F821
