from ssfs.workflow.pipeline import run_prepare, run_supervision
from ssfs.workflow.scripting import run_steps

# execution.fuse_steps: the job also writes the splits and constraints (one start-up per dataset)
run_steps(snakemake, run_prepare, *([run_supervision] if snakemake.params.supervision else []))  # noqa: F821
