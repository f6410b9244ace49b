# Config validation (JSON schema + method registry), wildcards and helpers.
import os
import re
import sys

from ssfs.experiment.selection_defaults import kept_per_class
from ssfs.experiment.variants import supervision_for, variants
from ssfs.workflow.config import PAPERS_DIR, run_parts, validate_config, load_schema
from ssfs.errors import SSFSError

try:
    CFG = validate_config(config, load_schema(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"))
except SSFSError as e:
    raise WorkflowError(str(e)) from None

# kill -9 resume: a lock left by a Snakemake process that no longer runs is removed here, in
# the main process, before Snakemake takes the lock (ssfs.workflow.locks; README "Interrupting")
if workflow.is_main_process:
    from ssfs.workflow.locks import clear_stale_locks

    _lock_note = clear_stale_locks(Path(".snakemake"))
    if _lock_note:
        print(f"ssfs: {_lock_note}", file=sys.stderr)

RESULTS = "results"
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


def method_resources(name, default_mem=2000, default_runtime=60):
    res = CFG["resources"].get(name, {})
    return res.get("mem_mb", default_mem), res.get("runtime", default_runtime), res.get("cpus_per_task", 1)


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


def method_batches(methods):
    """The method labels run together in one job (execution.batch_methods): every method
    without a `resources` entry in one batch (a job's start-up, seconds of imports, is paid
    once per dataset), each method with one alone; all alone when batch_methods is false."""
    alone = [m for m in methods if not BATCH_METHODS or m in CFG["resources"]]
    together = [m for m in methods if m not in alone]
    return ([together] if together else []) + [[m] for m in alone]


def batch_name(batch):
    """The log / benchmark folder of a batch: its method label, or `_batch` (no label starts with _)."""
    return batch[0] if len(batch) == 1 else "_batch"


def batch_rule(prefix, chunk, index, batches):
    """Rule name of one batch of one chunk: `select_0`, or `select_0_1` when a chunk has several batches."""
    return f"{prefix}_{chunk}" if len(batches) == 1 else f"{prefix}_{chunk}_{index}"


def batch_resources(batch, reps=1):
    """(threads, runtime, mem_mb function) of a batch: the most threads, the summed runtime of
    its methods times the repetitions, the most memory (at least 10x the input size)."""

    def mem(wildcards, input):
        return max(max(method_resources(m)[0] for m in batch), int(10 * input.size_mb))

    return max(method_resources(m)[2] for m in batch), sum(method_resources(m)[1] for m in batch) * reps, mem


def batch_params(batch, per_method):
    """The params of a batched job, read by ssfs.workflow.scripting.run_rule (the batch, which
    named inputs / outputs hold one entry, `one`, or a list, `list`, per method, and each method's settings)."""
    return dict(batch=batch, per_method=per_method, settings={m: CFG["methods"][m] for m in batch})


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


def fused_prepare_supervision():
    """prepare and supervision of a dataset in one job: one variant, and a benchmark that reads it."""
    return FUSE_STEPS and BENCHMARK and len(VARIANTS) == 1
