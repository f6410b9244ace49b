# One evaluate job per dataset and variant for every method (execution.batch_methods: true,
# the default), or one per method; each method still gets its own scores table.
# With execution.fuse_steps the select job evaluates (rules/select.smk) and no rule is defined here.
_EVAL_BATCHES = [] if fused_select_evaluate() else [METHODS] if BATCH_METHODS else [[m] for m in METHODS]

for _b, _batch in enumerate(_EVAL_BATCHES):

    rule:
        """Every configured evaluation metric on the top-i features of every repetition's ranking (tidy long table)."""
        name:
            "evaluate" if len(_EVAL_BATCHES) == 1 else f"evaluate_{_b}"
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            splits=per_rep("{dataset}/{variant}/splits/{rep}.json", REPS),
            constraints=per_rep("{dataset}/{variant}/constraints/{rep}.tsv", REPS),
            rankings=per_method_rep("{dataset}/{variant}/rankings/{method}/{rep}.tsv", _batch, REPS),
            components=per_method_rep(
                "{dataset}/{variant}/rankings/{method}/{rep}.components.npy", extraction_labels(_batch), REPS
            ),
        output:
            scores=per_method("{dataset}/{variant}/scores/{method}.tsv", _batch),
        log:
            f"{RESULTS}/logs/evaluate/{{dataset}}/{{variant}}/{_batch[0] if len(_batch) == 1 else '_batch'}.log",
        conda:
            "../../envs/evaluate.yaml"
        resources:
            runtime=30 * len(_batch),
        params:
            methods=methods_of(_batch),
            ev=CFG["evaluation"],
            seed=SEED,
            reps=REPS,
        script:
            "../scripts/evaluate.py"
