# Selection jobs. Repetitions are grouped into chunks of `execution.reps_per_job`
# (default: all repetitions in one job) and methods into batches (`execution.batch_methods`,
# default: every method without a `resources` entry in one job per dataset): starting a
# Python process that imports the scientific stack costs seconds, so one job per method and
# repetition wastes a laptop run, while on a cluster reps_per_job: 1 and batch_methods:
# false spread the work. One rule per chunk and batch (rules cannot compute their outputs
# from a wildcard); every method still writes its own files.
#
# Ensembles listed in `execution.member_chunks` (label -> n) run instead as n member
# jobs per repetition (select_members) and one job combining them (combine_members);
# the ranking is identical to the one-job run. The method wildcard of each family of
# rules is constrained to its own labels, so every ranking has exactly one producer.
# REP_CHUNKS, MEMBER_CHUNKS, WHOLE_METHODS, labels_regex and method_mem: rules/common.smk

# With execution.fuse_steps (one chunk, one batch: the default) the job also evaluates every
# ranking (rules/evaluate.smk then defines no evaluate rule): one process start-up per dataset.
_FUSED = fused_select_evaluate()
for _job in batched_jobs("select", WHOLE_METHODS, REP_CHUNKS if WHOLE_METHODS else []):

    rule:
        name:
            _job.name
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            splits=per_rep("{dataset}/{variant}/splits/{rep}.json", _job.items),
            constraints=per_rep("{dataset}/{variant}/constraints/{rep}.tsv", _job.items),
        output:
            rankings=per_method_rep("{dataset}/{variant}/rankings/{method}/{rep}.tsv", _job.methods, _job.items),
            components=per_method_rep(
                "{dataset}/{variant}/rankings/{method}/{rep}.components.npy",
                extraction_labels(_job.methods),
                _job.items,
            ),
            timing=per_method_rep("{dataset}/{variant}/timing/{method}/{rep}.tsv", _job.methods, _job.items),
            scores=per_method("{dataset}/{variant}/scores/{method}.tsv", _job.methods) if _FUSED else [],
        log:
            f"{RESULTS}/logs/select/{{dataset}}/{{variant}}/{_job.folder}/chunk{_job.chunk}.log",
        benchmark:
            f"{RESULTS}/{{dataset}}/{{variant}}/benchmarks/{_job.folder}/chunk{_job.chunk}.tsv"
        conda:
            "../../envs/select.yaml"
        threads: _job.threads
        resources:
            mem_mb=_job.mem_mb,
            runtime=_job.runtime + (30 * len(_job.methods) if _FUSED else 0),
        params:
            methods=_job.methods,
            ev=CFG["evaluation"] if _FUSED else None,
            seed=SEED,
            reps=_job.items,
            evaluate=_FUSED,
        script:
            "../scripts/select.py"


if MEMBER_CHUNKS:

    rule select_members:
        """One chunk of an ensemble's members on one repetition (arrays for combine_members)."""
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            split=f"{RESULTS}/{{dataset}}/{{variant}}/splits/{{rep}}.json",
            constraints=f"{RESULTS}/{{dataset}}/{{variant}}/constraints/{{rep}}.tsv",
        output:
            members=temp(f"{RESULTS}/{{dataset}}/{{variant}}/members/{{method}}/{{rep}}/chunk{{chunk}}.npz"),
        log:
            f"{RESULTS}/logs/select/{{dataset}}/{{variant}}/{{method}}/rep{{rep}}_members{{chunk}}.log",
        benchmark:
            f"{RESULTS}/{{dataset}}/{{variant}}/benchmarks/{{method}}/rep{{rep}}_members{{chunk}}.tsv"
        wildcard_constraints:
            method=labels_regex(MEMBER_CHUNKS),
            chunk=r"\d+",
        conda:
            "../../envs/select.yaml"
        threads: lambda wc: method_resources(wc.method)[2]
        resources:
            mem_mb=method_mem,
            runtime=lambda wc: max(1, -(-method_resources(wc.method)[1] // MEMBER_CHUNKS[wc.method])),
        params:
            methods=lambda wc: methods_of([wc.method]),
            seed=SEED,
            n_chunks=lambda wc: MEMBER_CHUNKS[wc.method],
        script:
            "../scripts/select_members.py"

    rule combine_members:
        """An ensemble's ranking from all its member chunks of one repetition."""
        input:
            prepared=f"{RESULTS}/{{dataset}}/prepared.h5ad",
            split=f"{RESULTS}/{{dataset}}/{{variant}}/splits/{{rep}}.json",
            constraints=f"{RESULTS}/{{dataset}}/{{variant}}/constraints/{{rep}}.tsv",
            chunks=lambda wc: expand(
                f"{RESULTS}/{wc.dataset}/{wc.variant}/members/{wc.method}/{wc.rep}/chunk{{chunk}}.npz",
                chunk=range(MEMBER_CHUNKS[wc.method]),
            ),
        output:
            ranking=f"{RESULTS}/{{dataset}}/{{variant}}/rankings/{{method}}/{{rep}}.tsv",
            timing=f"{RESULTS}/{{dataset}}/{{variant}}/timing/{{method}}/{{rep}}.tsv",
        log:
            f"{RESULTS}/logs/select/{{dataset}}/{{variant}}/{{method}}/rep{{rep}}_combine.log",
        wildcard_constraints:
            method=labels_regex(MEMBER_CHUNKS),
        conda:
            "../../envs/select.yaml"
        resources:
            mem_mb=method_mem,
        params:
            methods=lambda wc: methods_of([wc.method]),
            seed=SEED,
        script:
            "../scripts/combine_members.py"
