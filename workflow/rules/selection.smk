# Selection mode (issue #14): every selection method on the full data and on
# `selection.resamples` resamples of each dataset, then one consensus per dataset.
# Resamples are grouped into chunks of `execution.reps_per_job` like the benchmark's
# repetitions (null = all in one job per dataset and method); chunk 0 also ranks the full
# data. Resamples and method generators come from the seed alone, so the consensus is
# byte-identical whatever --cores and whatever the chunking.
SEL_RESAMPLES = list(range(SEL["resamples"])) if SEL else []
_SRPJ = CFG["execution"]["reps_per_job"] or max(1, len(SEL_RESAMPLES))
SEL_CHUNKS = [SEL_RESAMPLES[i : i + _SRPJ] for i in range(0, len(SEL_RESAMPLES), _SRPJ)]
SEL_METHODS = SEL["methods"] if SEL else []
SELECTION_FILES = ["consensus.tsv", "summary.json", "stability_path.tsv", "stability_path.svg", "dotplot.svg"]
SELECTION_OUTPUTS = (
    expand(f"{RESULTS}/{{dataset}}/selection/{{name}}", dataset=DATASETS, name=SELECTION_FILES) if SEL else []
)


# With execution.fuse_steps, one chunk and one batch (the default) that job also writes the
# consensus (no consensus rule): one process start-up per dataset.
_SEL_FUSED = FUSE_STEPS and len(SEL_CHUNKS) == 1 and len(method_batches(SEL_METHODS)) == 1
_CONSENSUS = dict(
    consensus=f"{RESULTS}/{{dataset}}/selection/consensus.tsv",
    summary=f"{RESULTS}/{{dataset}}/selection/summary.json",
    path=f"{RESULTS}/{{dataset}}/selection/stability_path.tsv",
    figure=f"{RESULTS}/{{dataset}}/selection/stability_path.svg",
    dotplot=f"{RESULTS}/{{dataset}}/selection/dotplot.svg",
)

for _chunk, _res in enumerate(SEL_CHUNKS):
    _batches = method_batches(SEL_METHODS)
    for _b, _batch in enumerate(_batches):
        _threads, _runtime, _mem = batch_resources(_batch, len(_res))

        rule:
            name:
                batch_rule("selection", _chunk, _b, _batches)
            input:
                prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            output:
                **(_CONSENSUS if _SEL_FUSED else {}),
                ranks=per_method(f"{{dataset}}/selection/ranks/{{method}}/chunk{_chunk}.npz", _batch),
                # chunk 0 also ranks the full data
                full=per_method("{dataset}/selection/full/{method}.tsv", _batch) if _chunk == 0 else [],
            log:
                f"{RESULTS}/logs/selection/{{dataset}}/{batch_name(_batch)}/chunk{_chunk}.log",
            benchmark:
                f"{RESULTS}/{{dataset}}/selection/benchmarks/{batch_name(_batch)}/chunk{_chunk}.tsv"
            conda:
                "../../envs/select.yaml"
            threads: _threads
            resources:
                mem_mb=_mem,
                runtime=_runtime,
            params:
                **batch_params(_batch, {"ranks": "one", "full": "list"}),
                sup=CFG["supervision"],
                sel=SEL,
                seed=SEED,
                chunk=_res,
                fuse_consensus=_SEL_FUSED,
                methods=SEL_METHODS,
            script:
                "../scripts/selection_rank.py"


if not _SEL_FUSED:

    rule consensus:
        """One dataset's consensus table, summary (selected features, stability, error bound, verdict), stability
        path and dot plot."""
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            full=expand(f"{RESULTS}/{{{{dataset}}}}/selection/full/{{method}}.tsv", method=SEL_METHODS),
            ranks=expand(
                f"{RESULTS}/{{{{dataset}}}}/selection/ranks/{{method}}/chunk{{chunk}}.npz",
                method=SEL_METHODS,
                chunk=range(len(SEL_CHUNKS)),
            ),
        output:
            **_CONSENSUS,
        log:
            f"{RESULTS}/logs/selection/{{dataset}}/consensus.log",
        conda:
            "../../envs/report.yaml"
        params:
            sel=SEL,
            methods=SEL_METHODS,
        script:
            "../scripts/consensus.py"
