rule evaluate:
    """Every configured evaluation metric on the top-i features of every repetition's ranking (tidy long table)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/splits/{{rep}}.json", rep=REPS),
        constraints=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/constraints/{{rep}}.tsv", rep=REPS),
        rankings=expand(f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/rankings/{{{{method}}}}/{{rep}}.tsv", rep=REPS),
        components=expand(
            f"{RESULTS}/{{{{dataset}}}}/{{{{variant}}}}/rankings/{{{{method}}}}/{{rep}}.components.npy", rep=REPS
        ),
    output:
        scores=f"{RESULTS}/{{dataset}}/{{variant}}/scores/{{method}}.tsv",
    params:
        ev=CFG["evaluation"],
        seed=SEED,
        reps=REPS,
    log:
        f"{RESULTS}/logs/evaluate/{{dataset}}/{{variant}}/{{method}}.log",
    resources:
        runtime=30,
    conda:
        "../../envs/evaluate.yaml"
    script:
        "../scripts/evaluate.py"
