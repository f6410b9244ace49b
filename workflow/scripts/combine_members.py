import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from ssfs.runner import method_configs
from ssfs.workflow.pipeline import run_combine
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    (settings,) = method_configs(sm.params.methods)
    run_combine(prepared=sm.input.prepared, split=sm.input.split, constraints=sm.input.constraints,
                chunks=list(sm.input.chunks), ranking=sm.output.ranking,
                timing=sm.output.timing, settings=settings, seed=sm.params.seed, dataset=sm.wildcards.dataset,
                rep=int(sm.wildcards.rep), variant=sm.wildcards.variant)
