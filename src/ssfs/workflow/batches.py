"""The jobs of the workflow's batched rules, computed from the config alone.

A Python process that imports the scientific stack costs seconds, so the ``select`` and
``selection`` rules run several methods, one after the other, on a chunk of repetitions (or
resamples) in one job. :func:`batched_jobs` lists those jobs; ``workflow/rules/select.smk`` and
``workflow/rules/selection.smk`` define one rule per :class:`Batch`, which passes its
:attr:`Batch.methods` (label -> config entry) in its params and lists each method's files
together in that order (:func:`ssfs.workflow.pipeline.by_method` hands each method its share).

Config keys read: ``execution.batch_methods`` (false: every method alone), ``resources``
(a method with an entry runs alone, with its threads, runtime and memory) and ``methods``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: memory (MB) and runtime (min) of a method without a ``resources`` entry; its threads: 1
DEFAULT_MEM_MB = 2000
DEFAULT_RUNTIME = 60


def method_resources(cfg: dict, label: str) -> tuple[int, int, int]:
    """(mem_mb, runtime, threads) of method ``label`` from the config's ``resources``."""
    res = cfg["resources"].get(label, {})
    return res.get("mem_mb", DEFAULT_MEM_MB), res.get("runtime", DEFAULT_RUNTIME), res.get("cpus_per_task", 1)


def method_batches(cfg: dict, labels) -> list[list[str]]:
    """The method labels run together in one job: every method without a ``resources`` entry in
    one batch (a job's start-up is paid once per dataset), each method with one alone; every
    method alone when ``execution.batch_methods`` is false."""
    alone = [m for m in labels if not cfg["execution"]["batch_methods"] or m in cfg["resources"]]
    together = [m for m in labels if m not in alone]
    return ([together] if together else []) + [[m] for m in alone]


def methods_of(cfg: dict, labels) -> dict:
    """The explicit per-method mapping a rule passes in its params: label -> its validated config
    entry ``{"method": registered name, "params": {...}}``, in the order of ``labels``."""
    return {label: cfg["methods"][label] for label in labels}


@dataclass(frozen=True)
class Batch:
    """One job of a batched rule: the methods it runs one after the other on a chunk of items.

    Attributes
    ----------
    name : str
        The rule's name: ``select_0``, or ``select_0_1`` when a chunk has several batches.
    chunk : int
        The index of the chunk of items.
    items : list of int
        The repetitions (or selection resamples) of the chunk.
    methods : dict
        Label -> config entry (:func:`methods_of`), in the order the rule lists their files.
    folder : str
        Its log and benchmark folder: the method's label, or ``_batch`` (no label starts with _).
    threads : int
        The most threads of its methods.
    runtime : int
        The summed runtime (min) of its methods times the number of items.
    mem_floor : int
        The most memory (MB) of its methods; :meth:`mem_mb` raises it to 10x the input size.
    """

    name: str
    chunk: int
    items: list
    methods: dict
    folder: str
    threads: int
    runtime: int
    mem_floor: int

    def mem_mb(self, wildcards, input) -> int:  # noqa: A002 - Snakemake passes the input by this name
        """The job's memory (a Snakemake resource function): the most of its methods', at least
        10x its input's size."""
        return max(self.mem_floor, int(10 * input.size_mb))


def batched_jobs(cfg: dict, prefix: str, labels, chunks) -> list[Batch]:
    """Every job of a batched rule family: each chunk of items (``chunks``, e.g. the repetitions
    in groups of ``execution.reps_per_job``) times each batch of methods (:func:`method_batches`)."""
    jobs = []
    for chunk, items in enumerate(chunks):
        batches = method_batches(cfg, labels)
        for index, batch in enumerate(batches):
            res = [method_resources(cfg, m) for m in batch]
            jobs.append(Batch(name=f"{prefix}_{chunk}" if len(batches) == 1 else f"{prefix}_{chunk}_{index}",
                              chunk=chunk, items=list(items), methods=methods_of(cfg, batch),
                              folder=batch[0] if len(batch) == 1 else "_batch",
                              threads=max(r[2] for r in res), runtime=sum(r[1] for r in res) * len(items),
                              mem_floor=max(r[0] for r in res)))
    return jobs
