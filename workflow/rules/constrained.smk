# Thesis Table 4.3 (config section `constrained_clustering`): COP-KMeans, MPC-KMeans and wCKM as
# constrained clusterings, without feature selection, on the labeled samples of every repetition.
CC = CFG.get("constrained_clustering")
CC_TABLES = expand(f"{RESULTS}/tables/constrained_clustering.{{ext}}", ext=["tsv", "md"]) if CC else []
CC_PAPER = [str(PAPERS_DIR / f"{CC['paper']}.tsv")] if CC and CC.get("paper") else []


rule constrained_clustering:
    """Rand index of each constrained clustering, unconstrained and constrained, per repetition."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
    output:
        table=f"{RESULTS}/{{dataset}}/{{variant}}/constrained_clustering.tsv",
    log:
        f"{RESULTS}/logs/constrained_clustering/{{dataset}}/{{variant}}.log",
    conda:
        "../../envs/evaluate.yaml"
    resources:
        runtime=60,
    params:
        cc=CC,
        seed=SEED,
        reps=REPS,
    script:
        "../scripts/constrained_clustering.py"


rule constrained_table:
    """Mean ± sd over the repetitions beside the published numbers."""
    input:
        tables=expand(
            f"{RESULTS}/{{dataset}}/{{variant}}/constrained_clustering.tsv",
            dataset=DATASETS,
            variant=list(VARIANTS),
        ),
        paper=CC_PAPER,
    output:
        out=f"{RESULTS}/tables/constrained_clustering.tsv",
        markdown=f"{RESULTS}/tables/constrained_clustering.md",
    log:
        f"{RESULTS}/logs/constrained_table.log",
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/constrained_table.py"
