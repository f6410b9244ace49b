rule split:
    """Train/test split and labeled subset of every repetition (one JSON per repetition)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
    output:
        splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
    log:
        f"{RESULTS}/logs/split/{{dataset}}/{{variant}}.log",
    conda:
        "../../envs/prepare.yaml"
    resources:
        runtime=10,
    params:
        sup=lambda wc: supervision_for(CFG, VARIANTS[wc.variant]),
        seed=SEED,
        reps=REPS,
    script:
        "../scripts/split.py"


rule constraints:
    """Must-link / cannot-link pairs among the labeled training samples (one TSV per repetition)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
    output:
        constraints=per_rep("{dataset}/{variant}/constraints/{rep}.tsv", REPS),
    log:
        f"{RESULTS}/logs/constraints/{{dataset}}/{{variant}}.log",
    conda:
        "../../envs/prepare.yaml"
    resources:
        runtime=10,
    params:
        sup=lambda wc: supervision_for(CFG, VARIANTS[wc.variant]),
        seed=SEED,
        reps=REPS,
    script:
        "../scripts/constraints.py"
