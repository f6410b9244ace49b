import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.runner import method_configs
from ssfs.workflow.pipeline import run_member_chunk
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    (settings,) = method_configs(sm.params.methods)
    run_member_chunk(prepared=sm.input.prepared, split=sm.input.split, constraints=sm.input.constraints,
                     members=sm.output.members, settings=settings, seed=sm.params.seed, dataset=sm.wildcards.dataset,
                     rep=int(sm.wildcards.rep), chunk=int(sm.wildcards.chunk), n_chunks=sm.params.n_chunks)
