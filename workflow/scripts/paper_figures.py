from pathlib import Path

from ssfs.report.build import run_paper_figures
from ssfs.workflow.scripting import run_step


def main(sm):
    run_paper_figures(Path(sm.input.scores).parent, sm.output.figures, sm.params.cfg)


run_step(main, snakemake)  # noqa: F821
