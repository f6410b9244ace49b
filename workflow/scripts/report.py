from pathlib import Path

from ssfs.report.build import run_report
from ssfs.report.selection import run_selection_report
from ssfs.workflow.scripting import run_step


def main(sm):
    if sm.params.benchmark:
        run_report(Path(sm.input.datasets).parent, sm.input.figures, sm.output[0], sm.params.cfg,
                   papers_dir=sm.params.papers_dir, selection=sm.params.selection,
                   ranking_paths=list(sm.input.rankings))
    else:
        run_selection_report(sm.output[0], sm.params.cfg)


run_step(main, snakemake)  # noqa: F821
