ALL_SCORES = expand(
    f"{RESULTS}/{{dataset}}/{{variant}}/scores/{{method}}.tsv", dataset=DATASETS, variant=list(VARIANTS), method=METHODS
)
ALL_BENCH = expand(
    f"{RESULTS}/{{dataset}}/{{variant}}/timing/{{method}}/{{rep}}.tsv",
    dataset=DATASETS,
    variant=list(VARIANTS),
    method=METHODS,
    rep=REPS,
)
ALL_RANKINGS = expand(
    f"{RESULTS}/{{dataset}}/{{variant}}/rankings/{{method}}/{{rep}}.tsv",
    dataset=DATASETS,
    variant=list(VARIANTS),
    method=METHODS,
    rep=REPS,
)
PREPARED = expand(f"{RESULTS}/{{dataset}}/prepared.h5ad", dataset=DATASETS)
FIGURES = f"{RESULTS}/figures"
TABLES = f"{RESULTS}/tables"
PAPER = CFG["report"].get("paper")
PAPER_TSV = [str(PAPERS_DIR / f"{PAPER}.tsv")] if PAPER and (PAPERS_DIR / f"{PAPER}.tsv").exists() else []
STATS_TABLES = expand(
    f"{TABLES}/stats_{{name}}.tsv", name=["best", "per_dataset", "friedman", "ranks", "wilcoxon", "win_tie_loss"]
)
STABILITY_TABLES = expand(f"{TABLES}/stability.{{ext}}", ext=["md", "tex"])


# With execution.fuse_steps and a benchmark the aggregate job also writes the report (no report
# rule below): one process start-up fewer.
_REPORT_FUSED = fused_aggregate_report()
REPORT_HTML = report(f"{RESULTS}/report.html", caption="../report/report.rst", category="Report")


rule aggregate:
    """Summary, stability and statistics tables, published numbers, figures (and the report: fuse_steps)."""
    input:
        # each scores table is written by the job that wrote (or read) every repetition's ranking
        # and timing file, so those are complete when it is; they are read by path (params): the
        # DAG holds one file per dataset, variant and method, not one per repetition
        scores=ALL_SCORES,
        prepared=PREPARED,
        paper=PAPER_TSV,
        selection=SELECTION_OUTPUTS if _REPORT_FUSED else [],
        constrained=CC_TABLES if _REPORT_FUSED else [],
    output:
        **({"report": REPORT_HTML} if _REPORT_FUSED else {}),
        tables=SUMMARY_TABLES,
        scores=f"{TABLES}/scores.tsv",
        runtime=report(f"{TABLES}/runtime.tsv", caption="../report/runtime.rst", category="Tables"),
        datasets=f"{TABLES}/datasets.tsv",
        stability=report(f"{TABLES}/stability.tsv", caption="../report/stability.rst", category="Tables"),
        stability_views=STABILITY_TABLES,
        stats=STATS_TABLES,
        stats_html=f"{TABLES}/stats.html",
        paper=f"{TABLES}/paper_comparison.tsv",
        figures=report(
            directory(FIGURES),
            caption="../report/figures.rst",
            category="Figures",
            patterns=["{name}.svg"],
            labels={"figure": "{name}"},
        ),
    log:
        f"{RESULTS}/logs/aggregate.log",
    conda:
        "../../envs/report.yaml"
    params:
        cfg=CFG,
        papers_dir=str(PAPERS_DIR),
        benchmarks=ALL_BENCH,
        rankings=ALL_RANKINGS,
        report=_REPORT_FUSED,
        selection=SELECTION,
    script:
        "../scripts/aggregate.py"


rule paper_figures:
    """The aggregate's figures again as PDF (for a paper) and PNG, drawn from its tables on demand:
    snakemake --cores 2 paper_figures (the default run draws each figure once, as SVG)."""
    input:
        scores=f"{TABLES}/scores.tsv",
        stability=f"{TABLES}/stability.tsv",
        runtime=f"{TABLES}/runtime.tsv",
        datasets=f"{TABLES}/datasets.tsv",
    output:
        figures=directory(f"{RESULTS}/paper_figures"),
    log:
        f"{RESULTS}/logs/paper_figures.log",
    conda:
        "../../envs/report.yaml"
    params:
        cfg=CFG,
    script:
        "../scripts/paper_figures.py"


REPORT_BENCHMARK_INPUTS = dict(
    tables=SUMMARY_TABLES,
    scores=f"{TABLES}/scores.tsv",
    runtime=f"{TABLES}/runtime.tsv",
    datasets=f"{TABLES}/datasets.tsv",
    stability=f"{TABLES}/stability.tsv",
    stats_html=f"{TABLES}/stats.html",
    paper=f"{TABLES}/paper_comparison.tsv",
    figures=FIGURES,
)


if not _REPORT_FUSED:

    rule report:
        """One self-contained HTML page: the summary (the answer) first, then configuration, versions, tables,
        figures, statistics. Selection-only runs (no benchmark): summary and configuration."""
        input:
            **(REPORT_BENCHMARK_INPUTS if BENCHMARK else {"prepared": PREPARED}),
            selection=SELECTION_OUTPUTS,
            constrained=CC_TABLES if BENCHMARK else [],
        output:
            REPORT_HTML,
        log:
            f"{RESULTS}/logs/report.log",
        conda:
            "../../envs/report.yaml"
        params:
            cfg=CFG,
            papers_dir=str(PAPERS_DIR),
            benchmark=BENCHMARK,
            selection=SELECTION,
            rankings=ALL_RANKINGS if BENCHMARK and not SELECTION else [],  # complete: see rule aggregate
        script:
            "../scripts/report.py"
