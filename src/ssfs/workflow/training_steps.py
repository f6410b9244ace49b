"""The workflow's steps that train classifiers and clusterings (scikit-learn): the evaluate step
and the constrained-clustering table (thesis Table 4.3). Apart from :mod:`ssfs.workflow.pipeline`
so that the jobs which only rank features (selection mode's resamples) start without importing
scikit-learn (0.8 s of CPU a job)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._checked import read_checked_tsv
from ..experiment.constrained import compare_constrained
from ..experiment.evaluation import run_evaluation
from ..experiment.splits import read_split
from ..io.atomic import atomic_write_text, write_checked_tsv, write_tsv
from ..io.h5ad import read_prepared
from ..seeding import derive_rng
from .pipeline import by_method, components_path, is_extraction


def run_evaluation_batch(*, prepared, splits: list, constraints: list, rankings: list, scores: list, methods: dict,
                         ev: dict, seed: int, dataset: str, variant: str, reps: list[int]) -> None:
    """The workflow's ``evaluate`` step: :func:`ssfs.experiment.evaluation.run_evaluation` of every
    method of ``methods`` (label -> settings) on one dataset and variant; ``rankings`` and ``scores``
    list each method's files together (:func:`by_method`); an extraction is evaluated on its components."""
    rankings, scores = by_method(rankings, methods), by_method(scores, methods)
    for label, entry in methods.items():
        components = [components_path(r) for r in rankings[label]] if is_extraction(entry) else None
        run_evaluation(prepared=prepared, splits=splits, constraints=constraints, rankings=rankings[label],
                       components=components, scores=scores[label][0], ev=ev, seed=seed, dataset=dataset,
                       variant=variant, label=label, reps=reps)


# ------------------------------------------------------------------ constrained clustering (thesis Table 4.3)
def run_constrained_clustering(*, prepared, splits: list, table, cc: dict, seed: int, dataset: str, variant: str,
                               reps: list[int]) -> None:
    """Thesis Table 4.3 on one dataset: COP-KMeans, MPC-KMeans and wCKM on all samples, without
    and with the constraints of each repetition's labeled samples, Rand index on the samples in no
    constraint (:func:`ssfs.experiment.constrained.compare_constrained`), one row per repetition."""
    data = read_prepared(prepared)
    X, y = (data.X.toarray() if hasattr(data.X, "toarray") else data.X), data.y
    frames = []
    for rep, sp in zip(reps, splits, strict=True):
        t = compare_constrained(X, y, derive_rng(seed, dataset, "constrained_clustering", rep),
                                algorithms=cc["algorithms"], n_init=cc["n_init"], labeled=read_split(sp)["labeled"])
        frames.append(t.assign(dataset=dataset, variant=variant, rep=rep))
    cols = ["dataset", "variant", "algorithm", "setting", "rep", "rand", "n_heldout", "n_constraints"]
    write_checked_tsv(pd.concat(frames, ignore_index=True)[cols], table)


def run_constrained_table(*, tables: list, out, markdown, paper: list) -> None:
    """Mean ± sd (%) of the Rand index per dataset, algorithm and setting over the repetitions, the
    published value beside it when ``paper`` (a TSV: dataset, algorithm, setting, value in %) has one."""
    df = pd.concat([read_checked_tsv(t) for t in tables], ignore_index=True)
    keys = ["dataset", "variant", "algorithm", "setting"]
    g = df.groupby(keys, sort=False)["rand"]
    # n: repetitions with a value (a clustering that found no feasible or finite solution has none)
    res = pd.DataFrame({"mean": 100 * g.mean(), "sd": 100 * g.std(ddof=1), "n": g.count()}).reset_index()
    res["published"] = np.nan
    if paper:
        pub = pd.read_csv(paper[0], sep="\t", comment="#")
        res = res.drop(columns="published").merge(
            pub.rename(columns={"value": "published"})[["dataset", "algorithm", "setting", "published"]],
            on=["dataset", "algorithm", "setting"], how="left")
    res["difference"] = res["mean"] - res["published"]
    write_tsv(res.round(2), out)
    lines = ["| dataset | algorithm | setting | ours (%) | published (%) |", "|---|---|---|---|---|"]
    for r in res.itertuples():
        pub = "" if pd.isna(r.published) else f"{r.published:.2f}"
        sd = "" if pd.isna(r.sd) else f" ± {r.sd:.2f}"
        lines.append(f"| {r.dataset} | {r.algorithm} | {r.setting} | {r.mean:.2f}{sd} | {pub} |")
    atomic_write_text(markdown, "\n".join(lines) + "\n")
