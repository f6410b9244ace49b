rule split:
    """Train/test split and labeled subset of every repetition (one JSON per repetition)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
    output:
        splits=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/splits/{{rep}}.json", rep=REPS),
    params:
        sup=lambda wc: supervision_for(CFG, VARIANTS[wc.variant]),
        seed=SEED,
        reps=REPS,
    log:
        f"{RESULTS}/logs/split/{{dataset}}/{{variant}}.log",
    resources:
        runtime=10,
    conda:
        "../../envs/prepare.yaml"
    script:
        "../scripts/split.py"


rule constraints:
    """Must-link / cannot-link pairs among the labeled training samples (one TSV per repetition)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/splits/{{rep}}.json", rep=REPS),
    output:
        constraints=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/constraints/{{rep}}.tsv", rep=REPS),
    params:
        sup=lambda wc: supervision_for(CFG, VARIANTS[wc.variant]),
        seed=SEED,
        reps=REPS,
    log:
        f"{RESULTS}/logs/constraints/{{dataset}}/{{variant}}.log",
    resources:
        runtime=10,
    conda:
        "../../envs/prepare.yaml"
    script:
        "../scripts/constraints.py"
