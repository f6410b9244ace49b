from pathlib import Path

from ssfs.report.build import run_report
from ssfs.workflow.scripting import run_step


def main(sm):
    run_report(Path(sm.input.datasets).parent, sm.input.figures, sm.output[0], sm.params.cfg,
               papers_dir=sm.params.papers_dir)


run_step(main, snakemake)  # noqa: F821
