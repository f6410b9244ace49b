rule evaluate:
    """Every configured evaluation metric on the top-i features of every repetition's ranking (tidy long table)."""
    input:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
        constraints=per_rep("{dataset}/{variant}/constraints/{rep}.tsv", REPS),
        rankings=per_rep("{dataset}/{variant}/rankings/{method}/{rep}.tsv", REPS),
        components=per_rep("{dataset}/{variant}/rankings/{method}/{rep}.components.npy", REPS),
    output:
        scores=f"{RESULTS}/{{dataset}}/{{variant}}/scores/{{method}}.tsv",
    log:
        f"{RESULTS}/logs/evaluate/{{dataset}}/{{variant}}/{{method}}.log",
    conda:
        "../../envs/evaluate.yaml"
    resources:
        runtime=30,
    params:
        ev=CFG["evaluation"],
        seed=SEED,
        reps=REPS,
    script:
        "../scripts/evaluate.py"
