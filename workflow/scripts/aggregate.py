import gc

gc.disable()  # no collections during the imports below (0.2 s of CPU a job); job() turns them back on

from pathlib import Path

from ssfs.report.build import run_aggregate, run_report
from ssfs.workflow.scripting import job

with job(snakemake) as sm:  # noqa: F821
    run_aggregate(score_paths=list(sm.input.scores), bench_paths=list(sm.params.benchmarks),
                  prepared_paths=list(sm.input.prepared), ranking_paths=list(sm.params.rankings),
                  tables_dir=Path(sm.output.scores).parent, figures_dir=sm.output.figures, cfg=sm.params.cfg,
                  papers_dir=sm.params.papers_dir)
    if sm.params.report:  # execution.fuse_steps: also the report, one start-up fewer
        run_report(tables_dir=Path(sm.output.scores).parent, figures_dir=sm.output.figures, out=sm.output.report,
                   cfg=sm.params.cfg, papers_dir=sm.params.papers_dir, selection=sm.params.selection,
                   ranking_paths=list(sm.params.rankings) if not sm.params.selection else [])
