import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from pathlib import Path

from ssfs.report.build import run_paper_figures
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_paper_figures(tables_dir=Path(sm.input.scores).parent, figures_dir=sm.output.figures, cfg=sm.params.cfg)
