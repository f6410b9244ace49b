"""The steps of the workflow as library functions (the Snakemake scripts are thin
wrappers around these), so every step can also be run and tested without Snakemake.

Randomness: each step derives its generator from ``(seed, dataset, step, ...,
rep)`` (see :mod:`ssfs.seeding`); no step depends on another job's random state.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .._checked import incomplete, load_checked_npz, read_checked_tsv
from .._progress import track
from ..constraints import Constraints, check_consistent
from ..errors import SupervisionError
from ..experiment.constrained import compare_constrained
from ..experiment.splits import make_split, partial_labels, read_split, write_split
from ..experiment.stable_selection import (
    MethodRuns,
    consensus_result,
    run_one_method,
    selection_labels,
    selection_resamples,
)
from ..io import prepare_dataset, write_prepared
from ..io.atomic import atomic_path, atomic_write_text, write_checked_tsv, write_tsv
from ..io.h5ad import read_prepared
from ..labels import Labels
from ..ranking import ranking_table
from ..registry import get_method
from ..runner import combine_member_chunks, run_method
from ..runner import run_member_chunk as member_chunk
from ..seeding import derive_rng
from .peak_memory import PeakMemory


# ----------------------------------------------------------------------------- data
def run_prepare(*, dataset: str, entry: dict, data_dir, prepared) -> None:
    adata = prepare_dataset(dataset, entry, data_dir)
    write_prepared(adata, prepared)


# ------------------------------------------------------------------------ supervision
def run_split(*, prepared, splits: list, sup: dict, seed: int, dataset: str, reps: list[int]) -> None:
    _, y, classes, _, _ = read_prepared(prepared)
    for rep, out in zip(reps, splits, strict=True):
        if sup["protocol"] == "kfold":
            rng_split = derive_rng(seed, dataset, "folds")
        else:
            rng_split = derive_rng(seed, dataset, "split", rep)
        rng_lab = derive_rng(seed, dataset, "labeled", str(sup["labeled_per_class"]), rep)
        split = make_split(
            y, rep, rng_split, rng_lab,
            protocol=sup["protocol"], test_size=sup["test_size"], n_folds=sup["n_folds"],
            labeled_per_class=sup["labeled_per_class"], small_classes=sup["small_classes"], dataset=dataset,
            class_names=classes,
        )
        write_split(split, out)


def make_constraints(y: np.ndarray, split: dict, csup: dict, seed: int, dataset: str, rep: int,
                     user: Constraints | None = None, sample_names=None) -> Constraints:
    """Constraints among the labeled training samples (global sample indices), plus the
    dataset's own constraints (``user``: its ``constraints_file``) among the training
    samples, which are neither thinned nor made noisy; a contradiction between the two
    names the samples."""
    yl = np.full(y.size, -1, dtype=np.int64)
    yl[split["labeled"]] = y[split["labeled"]]
    if csup["mode"] == "all_pairs":
        c = Constraints.from_labels(yl)
    else:
        rng = derive_rng(seed, dataset, "constraints", csup["n_ml"], csup["n_cl"], rep)
        c = Constraints.sample(yl, csup["n_ml"], csup["n_cl"], rng)
    if csup["closure"]:
        c = c.transitive_closure(y.size)
    if csup["noise"] > 0:
        c = c.with_noise(csup["noise"], derive_rng(seed, dataset, "noise", str(csup["noise"]), rep))
    if user is not None and len(user):
        train = np.asarray(split["train"], dtype=np.int64)
        mine = user.subset(train).remap(train)
        c = Constraints(np.vstack([c.ml, mine.ml]), np.vstack([c.cl, mine.cl]))
        check_consistent(c, sample_names, where=f"dataset {dataset!r}: constraints_file with the labels")
    return c


def user_constraints(adata) -> Constraints | None:
    """The dataset's ``constraints_file`` pairs stored by prepare (``uns['ssfs_constraints']``)."""
    u = adata.uns.get("ssfs_constraints")
    if u is None:
        return None
    return Constraints(np.asarray(u["ml"]).reshape(-1, 2), np.asarray(u["cl"]).reshape(-1, 2))


def run_supervision(*, prepared, splits: list, constraints: list, sup: dict, seed: int, dataset: str,
                    reps: list[int]) -> None:
    """The workflow's supervision step: :func:`run_split` then :func:`run_constraints` in one process."""
    run_split(prepared=prepared, splits=splits, sup=sup, seed=seed, dataset=dataset, reps=reps)
    run_constraints(prepared=prepared, splits=splits, constraints=constraints, sup=sup, seed=seed, dataset=dataset,
                    reps=reps)


def run_constraints(*, prepared, splits: list, constraints: list, sup: dict, seed: int, dataset: str,
                    reps: list[int]) -> None:
    _, y, _, _, adata = read_prepared(prepared)
    user = user_constraints(adata)
    for rep, sp, out in zip(reps, splits, constraints, strict=True):
        c = make_constraints(y, read_split(sp), sup["constraints"], seed, dataset, rep, user,
                             np.asarray(adata.obs_names))
        write_checked_tsv(c.tsv_frame(), out)


# ---------------------------------------------------------------------------- select
def _timed(fn):
    """(fn(), wall-clock seconds, peak resident memory added in MiB; :mod:`ssfs.workflow.peak_memory`)."""
    import time

    with PeakMemory() as pm:
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
    return out, seconds, pm.mib


def _write_timing(key: dict, rep: int, seconds: float, peak: float, out, first_call: bool = True) -> None:
    """One selection run's timing row; ``first_call``: the first selection of its process,
    whose time includes the one-off costs (lazy imports, JIT compilation, BLAS thread
    start-up) that the report shows apart from the median of the other runs. ``key``: the run's
    ``dataset``, ``variant`` and ``method`` (the file carries its own keys)."""
    write_checked_tsv(pd.DataFrame({**{k: [v] for k, v in key.items()}, "rep": [rep], "seconds": [seconds],
                                    "peak_mb": [peak], "first_call": [bool(first_call)]}), out)


def run_select_reps(*, prepared, splits: list, constraints: list, rankings: list, components: list, timing: list,
                    settings: dict, seed: int, dataset: str, method: str, reps: list[int],
                    variant: str = "base") -> None:
    """Run one method (config label ``method``, its config entry ``settings``) on several
    repetitions in one process (saves the start-up cost), recording each repetition's
    in-process time and peak memory; the first repetition of the process is marked
    ``first_call`` (its time includes imports, JIT and BLAS start-up)."""
    data = read_prepared(prepared)
    jobs = zip(reps, splits, constraints, rankings, components, timing, strict=True)
    todo = track(jobs, f"{method} on {dataset}: repetitions", total=len(reps))
    for i, (rep, sp, cp, out, comp, tout) in enumerate(todo):
        _, seconds, peak = _timed(partial(run_select, data, sp, cp, out, settings, seed, dataset, method, rep,
                                          components_out=comp))
        _write_timing({"dataset": dataset, "variant": variant, "method": method}, rep, seconds, peak, tout,
                      first_call=i == 0)


def _training(prepared, split_path, constraints_path):
    """(X, training X, partial training labels with the class names, training constraints, feature
    names) of one repetition."""
    X, y, classes, names, _ = read_prepared(prepared) if isinstance(prepared, (str, Path)) else prepared
    split = read_split(split_path)
    train = np.asarray(split["train"], dtype=np.int64)
    cons = Constraints.from_tsv(constraints_path, checked=True).subset(train)
    return X, X[train], Labels(partial_labels(y, split), classes), cons, names


def _check_supervision(name: str, ytr: Labels, dataset: str, label: str) -> None:
    if "labels" in get_method(name).needs and not (ytr.codes >= 0).any():
        raise SupervisionError(
            f"dataset {dataset!r} has no labeled sample: method {label!r} needs labels; "
            "run label-free methods on it (variance, laplacian, pca, scanpy_hvg, ...) or give labels"
        )


def _select_rng(seed, dataset, label, rep):
    return derive_rng(seed, dataset, "select", label, rep)


def run_select(prepared, split_path, constraints_path, out, method: dict, seed: int, dataset: str,
               label: str, rep: int, components_out=None) -> None:
    """Run one method on the training part of one repetition and write its ranking.

    The ranking's ``index`` column indexes the dataset's features. Extraction methods
    (PCA, SSDR) also write the components of every sample (fitted on the training
    part only) to ``components_out`` (.npy). ``prepared`` is a path or the tuple
    returned by :func:`read_prepared`.
    """
    X, Xtr, ytr, cons, names = _training(prepared, split_path, constraints_path)
    _check_supervision(method["method"], ytr, dataset, label)
    ranked = run_method(method["method"], Xtr, ytr, cons, rng=_select_rng(seed, dataset, label, rep),
                        **method["params"])
    _write_ranked(ranked, X, names, out, components_out)


def _write_ranked(ranked, X, names, out, components_out=None) -> None:
    if ranked.kind == "extraction":
        Z = np.asarray(ranked.result.transform(X), dtype=float)
        if components_out is not None:
            save_npy(Z, components_out)
        table = pd.DataFrame({"feature": [f"component{i + 1}" for i in range(Z.shape[1])],
                              "index": np.arange(Z.shape[1]), "score": np.nan,
                              "rank": np.arange(1, Z.shape[1] + 1)})
    else:
        table = ranking_table(names, ranked.scores, ranked.order, selected_only=ranked.result.selected is not None,
                              by_size=ranked.by_size)
    if components_out is not None and ranked.kind != "extraction":
        save_npy(np.zeros((0, 0)), components_out)
    write_checked_tsv(table, out)


def run_member_chunk(*, prepared, split, constraints, members, settings: dict, seed: int, dataset: str,
                     method: str, rep: int, chunk: int, n_chunks: int) -> None:
    """One chunk of the members of an ensemble method on one repetition (``.npz`` of its
    arrays plus the chunk's ``_seconds`` and ``_peak_mb``); see :func:`run_combine`."""
    X, Xtr, ytr, cons, _ = _training(prepared, split, constraints)
    parts, seconds, peak = _timed(lambda: member_chunk(
        settings["method"], Xtr, ytr, cons, rng=_select_rng(seed, dataset, method, rep), chunk=chunk,
        n_chunks=n_chunks, **settings["params"]))
    with atomic_path(members) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, _seconds=seconds, _peak_mb=peak, **parts)


def run_combine(*, prepared, split, constraints, chunks: list, ranking, components, timing,
                settings: dict, seed: int, dataset: str, method: str, rep: int, variant: str = "base") -> None:
    """The ranking of an ensemble from its member chunks (in chunk order): identical to
    :func:`run_select` on the same repetition. Timing: the chunks' seconds summed plus the
    combination's, peak = the largest of the chunks' and the combination's; every chunk is
    a process of its own, so the run is a ``first_call``."""
    X, Xtr, ytr, cons, names = _training(prepared, split, constraints)
    parts, seconds, peaks = [], 0.0, []
    for cp in chunks:
        z = load_checked_npz(cp)
        parts.append({k: v for k, v in z.items() if not k.startswith("_")})
        seconds += float(z["_seconds"])
        peaks.append(float(z["_peak_mb"]))
    ranked, sec, peak = _timed(lambda: combine_member_chunks(
        settings["method"], Xtr, ytr, cons, rng=_select_rng(seed, dataset, method, rep), parts=parts,
        **settings["params"]))
    _write_ranked(ranked, X, names, ranking, components)
    known = [v for v in peaks + [peak] if np.isfinite(v)]
    _write_timing({"dataset": dataset, "variant": variant, "method": method}, rep, seconds + sec,
                  max(known) if known else float("nan"), timing)


def save_npy(arr, path) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:  # a file handle: np.save would append ".npy"
        np.save(fh, arr)


def write_json(obj, path) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(obj, indent=1, default=str) + "\n")


# ------------------------------------------------------------------ selection mode (#14)
def _selection_data(prepared):
    """(X, y with -1 = unlabeled, class names, feature names, AnnData) of a prepared dataset."""
    return read_prepared(prepared)


def run_selection_chunk(*, prepared, ranks, settings: dict, sup: dict, sel: dict, seed: int, dataset: str,
                        method: str, chunk: list[int], full=None) -> None:
    """One method on the resamples ``chunk`` and, when ``full`` is given, on the full data
    (ranking TSV; no rows when the method could not run there). ``ranks`` (.npz): ``ranks``
    (int32, len(chunk) x p, zeros where the method could not run), ``failed`` (per resample ''
    or why), ``full_failed`` and the full-data class memberships (``memberships``, when the
    method propagates labels). Labels and constraints are used as given: constraints are built
    once on all labeled samples (``supervision.constraints``) and restricted to each resample
    (:mod:`ssfs.experiment.stable_selection`)."""
    X, y, classes, names, _ = _selection_data(prepared)
    y = selection_labels(y, sel, seed, dataset, classes)
    cons = make_constraints(y, {"labeled": np.flatnonzero(y >= 0)}, sup["constraints"], seed, dataset, "selection")
    full = (full[0] if full else None) if isinstance(full, list) else full  # the rule gives [] or [path]
    subs = selection_resamples(y, sel, seed, dataset, classes)
    runs, ranked = run_one_method(X, Labels(y, classes), cons, settings, subs, chunk, seed=seed, dataset=dataset,
                                  label=method,
                                  with_full=full is not None, classes=classes)
    if full is not None:
        if ranked is None:
            write_checked_tsv(pd.DataFrame(columns=["feature", "index", "score", "rank"]), full)
        else:
            _write_ranked(ranked, X, names, full)
    arrays = {"ranks": runs.resamples, "failed": np.asarray(runs.failed, dtype=str),
              "full_failed": np.asarray(runs.full_failed, dtype=str)}
    if runs.memberships is not None:
        arrays["memberships"] = runs.memberships
    with atomic_path(ranks) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def run_consensus(*, prepared, full: list, ranks: list, consensus, summary, sel: dict, methods: list,
                  dataset: str, seed: int, path=None) -> None:
    """consensus.tsv, summary.json and the stability path (``path``, TSV) of one dataset from every
    method's full ranking and resample ranks (``full`` and ``ranks`` ordered like ``methods``;
    ``ranks`` chunk files in chunk order per method); the labels of ``sel`` (every label, or
    ``labeled_per_class`` of each class: :func:`ssfs.experiment.stable_selection.selection_labels`)."""
    X, given, classes, names, adata = _selection_data(prepared)
    y = selection_labels(given, sel, seed, dataset, classes)
    p = X.shape[1]
    per = len(ranks) // len(methods)
    runs = {}
    for i, m in enumerate(methods):
        parts = [load_checked_npz(f) for f in ranks[i * per:(i + 1) * per]]
        for f, z in zip(ranks[i * per:(i + 1) * per], parts, strict=True):
            if z["ranks"].ndim != 2 or z["ranks"].shape[1] != p:
                shape = " x ".join(map(str, z["ranks"].shape))
                raise incomplete(f, f"its resample ranks hold an array of shape {shape}, expected any x {p} "
                                    "(the data's features)")
        first = parts[0]
        t = read_checked_tsv(full[i])
        r = None
        if len(t):
            r = np.full(p, len(t) + 1, dtype=np.float64)
            r[t["index"].to_numpy()] = t["rank"].to_numpy()
        runs[m] = MethodRuns(r, np.concatenate([z["ranks"] for z in parts]),
                             [str(f) for z in parts for f in z["failed"]], str(first["full_failed"]),
                             first.get("memberships"))
        if runs[m].resamples.shape[0] != sel["resamples"]:
            raise incomplete(ranks[i * per], f"the resample ranks of {m} hold {runs[m].resamples.shape[0]} rows "
                                             f"in all, expected {sel['resamples']} resamples")
    res = consensus_result(runs, X=X, names=names, y=y, classes=classes, sel=sel, dataset=dataset,
                           symbols=_symbol_column(adata), given=given)
    write_tsv(res.table, consensus)
    write_json(res.summary, summary)
    if path is not None:
        write_tsv(res.path, path)


#: var columns holding gene symbols, in order of preference
SYMBOL_COLUMNS = ("gene_symbol", "symbol", "gene_symbols", "gene_name", "gene_names", "Gene Symbol", "GENE_SYMBOL")


def _symbol_column(adata):
    """Gene symbols of the features when the AnnData var has a symbol column, else None."""
    for c in SYMBOL_COLUMNS:
        if c in adata.var.columns:
            return adata.var[c].astype(str).to_numpy()
    return None


# ------------------------------------------------------------------ constrained clustering (thesis Table 4.3)
def run_constrained_clustering(*, prepared, splits: list, table, cc: dict, seed: int, dataset: str, variant: str,
                               reps: list[int]) -> None:
    """Thesis Table 4.3 on one dataset: COP-KMeans, MPC-KMeans and wCKM on all samples, without
    and with the constraints of each repetition's labeled samples, Rand index on the samples in no
    constraint (:func:`ssfs.experiment.constrained.compare_constrained`), one row per repetition."""
    X, y, _, _, _ = read_prepared(prepared)
    X = X.toarray() if hasattr(X, "toarray") else X
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
