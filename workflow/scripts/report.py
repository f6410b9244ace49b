import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from pathlib import Path

from ssfs.report.build import run_report
from ssfs.report.selection import run_selection_report
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    if sm.params.benchmark:
        run_report(tables_dir=Path(sm.input.datasets).parent, figures_dir=sm.input.figures, out=sm.output[0],
                   cfg=sm.params.cfg, papers_dir=sm.params.papers_dir, selection=sm.params.selection,
                   ranking_paths=list(sm.params.rankings))
    else:
        run_selection_report(out=sm.output[0], cfg=sm.params.cfg)
