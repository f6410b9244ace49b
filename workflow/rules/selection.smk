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
# selection.labeled_per_class (the analyst's case): the answer from a few labels per class, and beside it
# the list every label gives (selection/all_labels/: consensus and summary only, for the overlap), for the
# datasets it names (or every dataset when it is one number).
SEL_COMPANIONS = [ds for ds in DATASETS if SEL and kept_per_class(SEL, ds)]
SELECTION_OUTPUTS = (
    expand(f"{RESULTS}/{{dataset}}/selection/{{name}}", dataset=DATASETS, name=SELECTION_FILES) if SEL else []
) + expand(
    f"{RESULTS}/{{dataset}}/selection/all_labels/{{name}}",
    dataset=SEL_COMPANIONS,
    name=["consensus.tsv", "summary.json"],
)

# With execution.fuse_steps, one chunk and one batch (the default) that job also writes the
# consensus (no consensus rule): one process start-up per dataset; a dataset that also gets the
# list every label gives computes it in the same job (its own rule, constrained to those datasets).
_SEL_FUSED = FUSE_STEPS and len(SEL_CHUNKS) == 1 and len(method_batches(SEL_METHODS)) == 1
# (folder under selection/, rule name suffix, selection entry, outputs of the consensus)
_SEL_SETS = [("", "", SEL, SELECTION_FILES)]
if SEL_COMPANIONS:  # every label: labeled shared or rotated would leave nothing to resample on fully labeled data
    _ALL_LABELS = {**SEL, "labeled_per_class": None, "labeled": "split" if SEL["labeled"] == "split" else "auto"}
    _SEL_SETS.append(("all_labels/", "_all_labels", _ALL_LABELS, ["consensus.tsv", "summary.json"]))
_CONSENSUS_KEYS = {
    "consensus.tsv": "consensus",
    "summary.json": "summary",
    "stability_path.tsv": "path",
    "stability_path.svg": "figure",
    "dotplot.svg": "dotplot",
}


# (rule name prefix, the sets one job computes, the datasets it serves: a wildcard constraint)
if _SEL_FUSED and SEL_COMPANIONS:
    _others = [ds for ds in DATASETS if ds not in SEL_COMPANIONS]
    _SEL_RULES = [("selection_and_all_labels", _SEL_SETS, SEL_COMPANIONS)]
    _SEL_RULES += [("selection", _SEL_SETS[:1], _others)] if _others else []
else:
    _SEL_RULES = [(f"selection{entry[1]}", [entry], DATASETS) for entry in _SEL_SETS]

for _prefix, _sets, _datasets in _SEL_RULES:
    for _job in batched_jobs(_prefix, SEL_METHODS, SEL_CHUNKS):

        rule:
            name:
                _job.name
            input:
                prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            output:
                **selection_outputs(_job, _sets, _SEL_FUSED, _CONSENSUS_KEYS),
            log:
                f"{RESULTS}/logs/selection/{{dataset}}/{_sets[0][0]}{_job.folder}/chunk{_job.chunk}.log",
            benchmark:
                f"{RESULTS}/{{dataset}}/selection/{_sets[0][0]}benchmarks/{_job.folder}/chunk{_job.chunk}.tsv"
            wildcard_constraints:
                dataset=labels_regex(_datasets),
            conda:
                "../../envs/select.yaml"
            threads: _job.threads
            resources:
                mem_mb=_job.mem_mb,
                runtime=_job.runtime,
            params:
                methods=_job.methods,
                sup=CFG["supervision"],
                # per set: the prefix of its output keys and its selection entry
                sets=[("" if i == 0 else "all_labels_", entry[2]) for i, entry in enumerate(_sets)],
                seed=SEED,
                chunk=_job.items,
                fuse_consensus=_SEL_FUSED,
            script:
                "../scripts/selection_rank.py"


for _dir, _suffix, _sel, _files in _SEL_SETS:
    _consensus = {_CONSENSUS_KEYS[f]: f"{RESULTS}/{{dataset}}/selection/{_dir}{f}" for f in _files}

    if not _SEL_FUSED:

        rule:
            """One dataset's consensus table, summary (selected features, stability, error bound, verdict),
            stability path and dot plot."""
            name:
                f"consensus{_suffix}"
            input:
                prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
                full=expand(f"{RESULTS}/{{{{dataset}}}}/selection/{_dir}full/{{method}}.tsv", method=SEL_METHODS),
                ranks=expand(
                    f"{RESULTS}/{{{{dataset}}}}/selection/{_dir}ranks/{{method}}/chunk{{chunk}}.npz",
                    method=SEL_METHODS,
                    chunk=range(len(SEL_CHUNKS)),
                ),
            output:
                **_consensus,
            log:
                f"{RESULTS}/logs/selection/{{dataset}}/{_dir}consensus.log",
            conda:
                "../../envs/report.yaml"
            params:
                sel=_sel,
                methods=methods_of(SEL_METHODS),
                seed=SEED,
            script:
                "../scripts/consensus.py"
