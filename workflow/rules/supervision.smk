# With execution.fuse_steps and one variant the prepare job writes these (rules/prepare.smk).
if not fused_prepare_supervision():

    rule supervision:
        """Train/test split and labeled subset of every repetition (one JSON each) and the must-link /
        cannot-link constraints among the labeled training samples (one TSV each), in one job."""
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        output:
            splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
            constraints=per_rep("{dataset}/{variant}/constraints/{rep}.tsv", REPS),
        log:
            f"{RESULTS}/logs/supervision/{{dataset}}/{{variant}}.log",
        conda:
            "../../envs/prepare.yaml"
        resources:
            runtime=10,
        params:
            sup=lambda wc: supervision_for(CFG, VARIANTS[wc.variant]),
            seed=SEED,
            reps=REPS,
        script:
            "../scripts/supervision.py"
