# Config validation (JSON schema + method registry), wildcards and helpers.
import os
import re
import sys

from ssfs.workflow.config import run_parts, supervision_for, validate_config, load_schema, variants
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
            files.append(str(p if p.is_absolute() else DATA_DIR / p))
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
