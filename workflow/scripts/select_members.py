from ssfs.workflow.pipeline import run_member_chunk
from ssfs.workflow.scripting import run_rule

run_rule(run_member_chunk, snakemake)  # noqa: F821
