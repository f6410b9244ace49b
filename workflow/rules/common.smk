# Config validation (JSON schema + method registry), wildcards and helpers.
import os
import re
import sys

from ssfs.experiment.selection_defaults import kept_per_class
from ssfs.experiment.variants import supervision_for, variants
from ssfs.workflow import batches
from ssfs.workflow.config import PAPERS_DIR, run_parts, validate_config, load_schema
from ssfs.errors import SSFSError
from ssfs.registry import get_method

try:
    CFG = validate_config(config, load_schema(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"))
except SSFSError as e:
    raise WorkflowError(str(e)) from None

# kill -9 resume: a lock left by a Snakemake process that no longer runs is removed here, in
# the main process, before Snakemake takes the lock (ssfs.workflow.locks; docs/getting_started.md "Running on your own data")
if workflow.is_main_process:
    from ssfs.workflow.locks import clear_stale_locks

    _lock_note = clear_stale_locks(Path(".snakemake"))
    if _lock_note:
        print(f"ssfs: {_lock_note}", file=sys.stderr)

# results_dir (default `results`) holds every result of this config; named configs keep their own folder
RESULTS = os.path.normpath(CFG["results_dir"])
# what runs (config/README.md "Selection mode"): the benchmark, the selection, or both
BENCHMARK, SELECTION = run_parts(config)
SEL = CFG.get("selection")
SEED = CFG["seed"]
DATASETS = sorted(CFG["datasets"])
METHODS = sorted(CFG["methods"])
VARIANTS = variants(CFG)
SUP = CFG["supervision"]
REPS = list(range(SUP["repetitions"]))
DATA_DIR = Path(CFG["data_dir"])


def _missing_files():
    missing = []
    for name, entry in CFG["datasets"].items():
        if entry.get("source", "file") == "file":
            for key in ("path", "labels_file", "constraints_file"):
                if key in entry:
                    p = Path(entry[key])
                    p = p if p.is_absolute() else DATA_DIR / p
                    if not p.exists():
                        missing.append(f"{name}: {p}")
    return missing


_miss = _missing_files()
if _miss:
    raise WorkflowError(
        "input data file(s) not found (paths are relative to data_dir = "
        f"{CFG['data_dir']!r}):\n  " + "\n  ".join(_miss)
    )

SAFE = r"[A-Za-z0-9][A-Za-z0-9_.+\-]*"


wildcard_constraints:
    dataset=SAFE,
    variant=SAFE,
    method=SAFE,
    rep=r"\d+",


def dataset_inputs(wildcards):
    entry = CFG["datasets"][wildcards.dataset]
    if entry.get("source", "file") != "file":
        return []
    files = []
    for key in ("path", "labels_file", "constraints_file"):
        if key in entry:
            p = Path(entry[key])
            p = p if p.is_absolute() else DATA_DIR / p
            files += sorted(str(f) for f in p.iterdir() if f.is_file()) if p.is_dir() else [str(p)]  # 10x folder
    return files


def method_resources(name):
    """(mem_mb, runtime, threads) of method `name` (config `resources`, ssfs.workflow.batches)."""
    return batches.method_resources(CFG, name)


SUMMARY_TABLES = expand(f"{RESULTS}/tables/{{table}}.{{ext}}", table=["summary", "top_k"], ext=["tsv", "md", "tex"])


# Selection jobs (rules/select.smk): repetitions in chunks of execution.reps_per_job, and
# the ensembles split into member jobs.
_RPJ = CFG["execution"]["reps_per_job"] or len(REPS)
REP_CHUNKS = [REPS[i : i + _RPJ] for i in range(0, len(REPS), _RPJ)]
MEMBER_CHUNKS = {m: n for m, n in CFG["execution"]["member_chunks"].items() if n > 1}
WHOLE_METHODS = [m for m in METHODS if m not in MEMBER_CHUNKS]


BATCH_METHODS = CFG["execution"]["batch_methods"]
# execution.fuse_steps: consecutive steps of one dataset in one job (one start-up) where each has one job
FUSE_STEPS = CFG["execution"]["fuse_steps"]


def method_batches(labels):
    """The method labels run together in one job (ssfs.workflow.batches.method_batches)."""
    return batches.method_batches(CFG, labels)


def methods_of(labels):
    """Label -> validated config entry of each method in `labels`, the mapping batched jobs get in params."""
    return batches.methods_of(CFG, labels)


def extraction_labels(labels):
    """The labels among `labels` whose method builds components (pca, ssdr): only they write a
    `{rep}.components.npy` beside each ranking (ssfs.workflow.pipeline.components_path)."""
    return [m for m in labels if get_method(CFG["methods"][m]["method"]).kind == "extraction"]


def batched_jobs(prefix, labels, chunks):
    """One Batch per rule of a batched family (ssfs.workflow.batches.batched_jobs)."""
    return batches.batched_jobs(CFG, prefix, labels, chunks)


def selection_outputs(job, sets, fused, consensus_keys):
    """The outputs of one selection job over ``sets`` (the answer, maybe with the list every label
    gives; selection.smk): per set, its ranks, full-data rankings (chunk 0) and, fused, its consensus
    files (their keys: ``consensus_keys``); the keys of the sets after the first start with ``all_labels_``."""
    out = {}
    for i, (folder, _, _, files) in enumerate(sets):
        key = "" if i == 0 else "all_labels_"
        if fused:
            out.update({f"{key}{consensus_keys[f]}": f"{RESULTS}/{{dataset}}/selection/{folder}{f}" for f in files})
        out[f"{key}ranks"] = per_method(
            f"{{dataset}}/selection/{folder}ranks/{{method}}/chunk{job.chunk}.npz", job.methods
        )
        # chunk 0 also ranks the full data
        out[f"{key}full"] = (
            per_method(f"{{dataset}}/selection/{folder}full/{{method}}.tsv", job.methods) if job.chunk == 0 else []
        )
    return out


def per_method_rep(pattern, methods, reps):
    """:func:`per_rep` of ``pattern`` for every method (method outer, repetition inner)."""
    return [f for m in methods for f in per_rep(pattern.replace("{method}", m), reps)]


def per_method(pattern, methods):
    """``pattern`` under RESULTS once per method; the other wildcards stay wildcards."""
    kept = re.sub(r"\{(?!method\})(\w+)\}", r"{{\1}}", pattern)
    return [f"{RESULTS}/{kept.replace('{method}', m).format()}" for m in methods]


def per_rep(pattern, reps):
    """The results path ``pattern`` once per repetition; every other wildcard stays a wildcard:
    ``per_rep("{dataset}/{variant}/splits/{rep}.json", REPS)``."""
    kept = re.sub(r"\{(?!rep\})(\w+)\}", r"{{\1}}", pattern)
    return expand(f"{RESULTS}/{kept}", rep=reps)


def labels_regex(labels):
    """A wildcard constraint matching exactly the given method labels."""
    return "|".join(re.escape(m) for m in labels)


def method_mem(wc, input):
    return max(method_resources(wc.method)[0], int(10 * input.size_mb))


# envs/*.post-deploy.sh installs ssfs from this repository into each conda env (Snakemake runs them
# from its copies of the env files, which cannot locate the repository by themselves)
os.environ.setdefault("SSFS_REPO", str(Path(workflow.basedir).resolve()))

# `snakemake --verbose` also makes the jobs' logging verbose (ssfs.workflow.scripting.log_level)
if workflow.output_settings is not None and workflow.output_settings.verbose:
    os.environ.update(SSFS_LOG_LEVEL="DEBUG")


def fused_select_evaluate():
    """select and evaluate of a dataset in one job: one repetition chunk and every method in one batch."""
    return FUSE_STEPS and len(REP_CHUNKS) == 1 and method_batches(WHOLE_METHODS) == [METHODS]


def fused_aggregate_report():
    """aggregate and report in one job: a benchmark (the report then waits for the selection and
    constrained outputs too)."""
    return FUSE_STEPS and BENCHMARK


def fused_prepare_supervision():
    """prepare and supervision of a dataset in one job: one variant, and a benchmark that reads it."""
    return FUSE_STEPS and BENCHMARK and len(VARIANTS) == 1
