import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.workflow.scripting import job
from ssfs.workflow.training_steps import run_constrained_table

with job(snakemake) as sm:  # noqa: F821
    run_constrained_table(tables=list(sm.input.tables), out=sm.output.out, markdown=sm.output.markdown,
                          paper=list(sm.input.paper))
