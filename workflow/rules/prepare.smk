rule prepare:
    """Read one dataset (h5ad, csv/tsv, arff, mat, GEO series matrix or a builtin), check and normalise it."""
    input:
        dataset_inputs,
    output:
        prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
    log:
        f"{RESULTS}/logs/prepare/{{dataset}}.log",
    conda:
        "../../envs/prepare.yaml"
    resources:
        mem_mb=lambda wc, input: max(2000, int(20 * input.size_mb)),
        runtime=30,
    params:
        entry=lambda wc: CFG["datasets"][wc.dataset],
        data_dir=CFG["data_dir"],
    script:
        "../scripts/prepare.py"
