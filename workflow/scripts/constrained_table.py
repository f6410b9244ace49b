from ssfs.workflow.pipeline import run_constrained_table
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_constrained_table(tables=list(sm.input.tables), out=sm.output.out, markdown=sm.output.markdown,
                          paper=list(sm.input.paper))
