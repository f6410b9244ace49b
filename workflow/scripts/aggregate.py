from pathlib import Path

from ssfs.report.build import run_aggregate
from ssfs.workflow.scripting import run_step


def main(sm):
    run_aggregate(list(sm.input.scores), list(sm.input.benchmarks), list(sm.input.prepared),
                  list(sm.input.rankings), Path(sm.output.scores).parent, sm.output.figures, sm.params.cfg,
                  papers_dir=sm.params.papers_dir)


run_step(main, snakemake)  # noqa: F821
