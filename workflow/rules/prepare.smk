# With execution.fuse_steps and one variant, prepare also writes the splits and constraints of
# that variant (rules/supervision.smk then defines no supervision rule): one start-up per dataset.
_FUSED_SUP = fused_prepare_supervision()
_VARIANT = next(iter(VARIANTS), None)


rule prepare:
    """Read one dataset (h5ad, csv/tsv, arff, mat, GEO series matrix or a builtin), check and normalise it."""
    input:
        dataset_inputs,
    output:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
        splits=per_rep(f"{{dataset}}/{_VARIANT}/splits/{{rep}}.json", REPS) if _FUSED_SUP else [],
        constraints=per_rep(f"{{dataset}}/{_VARIANT}/constraints/{{rep}}.tsv", REPS) if _FUSED_SUP else [],
    log:
        f"{RESULTS}/logs/prepare/{{dataset}}.log",
    conda:
        "../../envs/prepare.yaml"
    resources:
        mem_mb=lambda wc, input: max(2000, int(20 * input.size_mb)),
        runtime=40 if _FUSED_SUP else 30,
    params:
        **(dict(sup=supervision_for(CFG, VARIANTS[_VARIANT]), seed=SEED, reps=REPS) if _FUSED_SUP else {}),
        entry=lambda wc: CFG["datasets"][wc.dataset],
        data_dir=CFG["data_dir"],
        supervision=_FUSED_SUP,
    script:
        "../scripts/prepare.py"
