"""The steps of the workflow as library functions (the Snakemake scripts are thin
wrappers around these), so every step can also be run and tested without Snakemake.

Randomness: each step derives its generator from ``(seed, dataset, step, ...,
rep)`` (see :mod:`ssfs.seeding`); no step depends on another job's random state.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .._checked import incomplete, load_checked_npz, read_checked_tsv
from .._progress import track
from ..constraints import Constraints, check_consistent
from ..errors import SupervisionError
from ..experiment.selection import labeled_resampling, partly_labeled
from ..experiment.splits import make_split, partial_labels, read_split, write_split
from ..experiment.stable_selection import (
    MethodRuns,
    batch_summary,
    consensus_result,
    decided_labeled,
    methods_for,
    run_one_method,
    selection_labels,
    selection_resamples,
)
from ..io import prepare_dataset, write_prepared
from ..io.atomic import atomic_path, save_npy, write_checked_tsv, write_json, write_tsv
from ..io.h5ad import Prepared, gene_symbols, read_prepared
from ..labels import Labels
from ..ranking import ranking_table
from ..registry import get_method
from ..runner import MethodConfig, combine_member_chunks, method_configs, run_method, within_batches
from ..runner import run_member_chunk as member_chunk
from ..seeding import derive_rng
from .peak_memory import PeakMemory


# ----------------------------------------------------------------------------- data
def run_prepare(*, dataset: str, entry: dict, data_dir, prepared) -> None:
    """The workflow's ``prepare`` step: dataset ``dataset`` (its config ``entry``) read, checked
    and preprocessed (:func:`ssfs.io.prepare_dataset`), written to ``prepared`` (h5ad)."""
    adata = prepare_dataset(dataset, entry, data_dir)
    write_prepared(adata, prepared)


# ------------------------------------------------------------------------ supervision
def run_split(*, prepared, splits: list, sup: dict, seed: int, dataset: str, reps: list[int]) -> None:
    data = read_prepared(prepared)
    y, classes = data.labels
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
    data = read_prepared(prepared)
    user = user_constraints(data.adata)
    for rep, sp, out in zip(reps, splits, constraints, strict=True):
        c = make_constraints(data.y, read_split(sp), sup["constraints"], seed, dataset, rep, user,
                             np.asarray(data.adata.obs_names))
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


def _write_timing(key: dict, rep: int, seconds: float, peak: float, out, first_call: bool = True,
                  fit: dict | None = None) -> None:
    """One selection run's timing row; ``first_call``: the first selection of its process,
    whose time includes the one-off costs (lazy imports, JIT compilation, BLAS thread
    start-up) that the report shows apart from the median of the other runs. ``key``: the run's
    ``dataset``, ``variant`` and ``method`` (the file carries its own keys); ``fit``: the run's graph
    diagnostics (:meth:`ssfs.registry.SelectionResult.fit_summary`, JSON in the ``fit`` column; ''
    for a method that propagates no labels)."""
    write_checked_tsv(pd.DataFrame({**{k: [v] for k, v in key.items()}, "rep": [rep], "seconds": [seconds],
                                    "peak_mb": [peak], "first_call": [bool(first_call)],
                                    "fit": [json.dumps(fit, sort_keys=True) if fit else ""]}), out)


def by_method(files, methods) -> dict[str, list[str]]:
    """``files`` of a batched rule split into each method's share: the rule lists the files of
    every method together, methods in the order of ``methods`` (labels, or the label ->
    settings mapping), so each gets an equal run of consecutive files."""
    labels, files = list(methods), [str(f) for f in files]
    if len(files) % max(len(labels), 1):
        raise ValueError(f"{len(files)} files cannot be shared equally by the methods {labels}")
    k = len(files) // max(len(labels), 1)
    return {label: files[i * k:(i + 1) * k] for i, label in enumerate(labels)}


def components_path(ranking) -> str:
    """Where an extraction method's components of one repetition go: beside its ranking
    (``{rep}.tsv`` -> ``{rep}.components.npy``); score methods write none."""
    ranking = str(ranking)
    return (ranking[:-4] if ranking.endswith(".tsv") else ranking) + ".components.npy"


def is_extraction(settings) -> bool:
    """Whether a configured method (a :class:`MethodConfig` or a config entry) builds components."""
    method = settings.method if isinstance(settings, MethodConfig) else settings["method"]
    return get_method(method).kind == "extraction"


def run_select_batch(*, prepared, splits: list, constraints: list, methods: dict, rankings: list, timing: list,
                     seed: int, dataset: str, variant: str, reps: list[int]) -> None:
    """The workflow's ``select`` step: every method of ``methods`` (label -> ``{"method", "params"}``)
    on the repetitions ``reps`` of one dataset and variant, one method after the other in this
    process (:func:`run_select_reps`); ``rankings`` and ``timing`` list each method's files
    together (:func:`by_method`); an extraction also writes its components (:func:`components_path`)."""
    data = read_prepared(prepared)
    rankings, timing = by_method(rankings, methods), by_method(timing, methods)
    for settings in method_configs(methods):
        run_select_reps(data, splits=splits, constraints=constraints, settings=settings,
                        rankings=rankings[settings.label], timing=timing[settings.label], seed=seed, dataset=dataset,
                        variant=variant, reps=reps)


def run_select_reps(data: Prepared, *, splits: list, constraints: list, settings: MethodConfig, rankings: list,
                    timing: list, seed: int, dataset: str, reps: list[int], variant: str = "base") -> None:
    """One configured method on several repetitions in one process (saves the start-up cost),
    recording each repetition's in-process time and peak memory; the first repetition of the
    process is marked ``first_call`` (its time includes imports, JIT and BLAS start-up)."""
    jobs = zip(reps, splits, constraints, rankings, timing, strict=True)
    todo = track(jobs, f"{settings.label} on {dataset}: repetitions", total=len(reps))
    for i, (rep, sp, cp, out, tout) in enumerate(todo):
        call = dict(split=sp, constraints=cp, ranking=out, settings=settings, seed=seed, dataset=dataset, rep=rep)
        fit, seconds, peak = _timed(lambda: run_select(data, **call))  # noqa: B023 - called at once
        _write_timing({"dataset": dataset, "variant": variant, "method": settings.label}, rep, seconds, peak, tout,
                      first_call=i == 0, fit=fit)


def _training(data: Prepared, split_path, constraints_path, settings: MethodConfig):
    """(training X, partial training labels with the class names, training constraints, the
    method's parameters) of one repetition; with the dataset's batches, X and the parameters with
    which the method compares samples within them (:func:`ssfs.runner.within_batches`)."""
    split = read_split(split_path)
    train = np.asarray(split["train"], dtype=np.int64)
    cons = Constraints.from_tsv(constraints_path, checked=True).subset(train)
    X, params = within_batches(settings.method, data.X[train], settings.params,
                               None if data.batch is None else data.batch[train])
    return X, Labels(partial_labels(data.y, split), data.classes), cons, params


def _check_supervision(settings: MethodConfig, ytr: Labels, dataset: str) -> None:
    if "labels" in get_method(settings.method).needs and not (ytr.codes >= 0).any():
        raise SupervisionError(
            f"dataset {dataset!r} has no labeled sample: method {settings.label!r} needs labels; "
            "run label-free methods on it (variance, laplacian, pca, scanpy_hvg, ...) or give labels"
        )


def _select_rng(seed: int, dataset: str, settings: MethodConfig, rep: int):
    return derive_rng(seed, dataset, "select", settings.label, rep)


def run_select(data: Prepared, *, split, constraints, ranking, settings: MethodConfig, seed: int, dataset: str,
               rep: int) -> dict:
    """One configured method on the training part of one repetition; writes its ranking and returns
    its fit's graph diagnostics ({} for a method that propagates no labels).

    The ranking's ``index`` column indexes the dataset's features. Extraction methods
    (PCA, SSDR) also write the components of every sample (fitted on the training
    part only) beside it (:func:`components_path`).
    """
    Xtr, ytr, cons, params = _training(data, split, constraints, settings)
    _check_supervision(settings, ytr, dataset)
    ranked = run_method(settings.method, Xtr, ytr, cons, rng=_select_rng(seed, dataset, settings, rep), **params)
    _write_ranked(ranked, data, ranking)
    summary = getattr(ranked.result, "fit_summary", None)
    return summary() if summary is not None else {}


def _write_ranked(ranked, data: Prepared, out) -> None:
    if ranked.kind == "extraction":
        Z = np.asarray(ranked.result.transform(data.X), dtype=float)
        save_npy(Z, components_path(out))
        table = pd.DataFrame({"feature": [f"component{i + 1}" for i in range(Z.shape[1])],
                              "index": np.arange(Z.shape[1]), "score": np.nan,
                              "rank": np.arange(1, Z.shape[1] + 1)})
    else:
        table = ranking_table(data.features, ranked.scores, ranked.order,
                              selected_only=ranked.result.selected is not None, by_size=ranked.by_size)
    write_checked_tsv(table, out)


def run_member_chunk(*, prepared, split, constraints, members, settings: MethodConfig, seed: int, dataset: str,
                     rep: int, chunk: int, n_chunks: int) -> None:
    """The workflow's ``select_members`` step: one chunk of the members of an ensemble on one
    repetition (``.npz`` of its arrays plus the chunk's ``_seconds`` and ``_peak_mb``); see
    :func:`run_combine`."""
    Xtr, ytr, cons, params = _training(read_prepared(prepared), split, constraints, settings)
    parts, seconds, peak = _timed(lambda: member_chunk(
        settings.method, Xtr, ytr, cons, rng=_select_rng(seed, dataset, settings, rep), chunk=chunk,
        n_chunks=n_chunks, **params))
    with atomic_path(members) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, _seconds=seconds, _peak_mb=peak, **parts)


def run_combine(*, prepared, split, constraints, chunks: list, ranking, timing,
                settings: MethodConfig, seed: int, dataset: str, rep: int, variant: str = "base") -> None:
    """The workflow's ``combine_members`` step: the ranking of an ensemble from its member
    chunks (in chunk order), identical to :func:`run_select` on the same repetition. Timing:
    the chunks' seconds summed plus the combination's, peak = the largest of the chunks' and
    the combination's; every chunk is a process of its own, so the run is a ``first_call``."""
    data = read_prepared(prepared)
    Xtr, ytr, cons, params = _training(data, split, constraints, settings)
    parts, seconds, peaks = [], 0.0, []
    for cp in chunks:
        z = load_checked_npz(cp)
        parts.append({k: v for k, v in z.items() if not k.startswith("_")})
        seconds += float(z["_seconds"])
        peaks.append(float(z["_peak_mb"]))
    ranked, sec, peak = _timed(lambda: combine_member_chunks(
        settings.method, Xtr, ytr, cons, rng=_select_rng(seed, dataset, settings, rep), parts=parts,
        **params))
    _write_ranked(ranked, data, ranking)
    known = [v for v in peaks + [peak] if np.isfinite(v)]
    _write_timing({"dataset": dataset, "variant": variant, "method": settings.label}, rep, seconds + sec,
                  max(known) if known else float("nan"), timing)


# ------------------------------------------------------------------ selection mode (#14)
def run_selection_batch(*, prepared, ranks: list, full: list, methods: dict, sup: dict, sel: dict, seed: int,
                        dataset: str, chunk: list[int]) -> None:
    """The workflow's ``selection`` step: every method of ``methods`` (label -> ``{"method",
    "params"}``) on the resamples ``chunk`` of one dataset (:func:`run_selection_chunk`);
    ``ranks`` (one file per method) and ``full`` (one per method, or none: only chunk 0 ranks
    the full data) list the methods' files in the order of ``methods``."""
    data = read_prepared(prepared)
    ranks, full = by_method(ranks, methods), by_method(full, methods)
    configs = method_configs(methods)
    y = selection_labels(data.y, sel, seed, dataset, data.classes)
    kept = [c for c in configs if auto_keeps(sel, data.X, c.method, y)]
    sel, first = decided_labeled(data.X, Labels(y, data.classes), selection_constraints(y, sup, seed, dataset),
                                 kept, sel, seed=seed, dataset=dataset, batch=data.batch)
    for settings in configs:
        run_selection_chunk(data, ranks=ranks[settings.label][0], settings=settings, sup=sup, sel=sel, seed=seed,
                            dataset=dataset, chunk=chunk, full=(full[settings.label] or [None])[0],
                            ranked=first if kept and settings is kept[0] else None)


def selection_constraints(y: np.ndarray, sup: dict, seed: int, dataset: str):
    """The constraints of the selection: built once on all labeled samples (``supervision.constraints``)."""
    return make_constraints(y, {"labeled": np.flatnonzero(y >= 0)}, sup["constraints"], seed, dataset, "selection")


def run_selection_chunk(data: Prepared, *, ranks, settings: MethodConfig, sup: dict, sel: dict, seed: int,
                        dataset: str, chunk: list[int], full=None, ranked=None) -> None:
    """One configured method on the resamples ``chunk`` and, when ``full`` is a path, on the full
    data (ranking TSV; no rows when the method could not run there). ``ranks`` (.npz): ``ranks``
    (int32, len(chunk) x p, zeros where the method could not run), ``failed`` (per resample ''
    or why), ``full_failed`` and the full-data class memberships (``memberships``, n x G, and
    the names of its columns, ``membership_groups``: the classes, then propagated groups of no
    labeled class; when the method propagates labels) and how the labeled samples entered the resamples
    (``labeled_resampling``, ``labeled_weight``: ``sel`` as :func:`~ssfs.experiment.stable_selection.decided_labeled`
    decided it; ``ranked``: the full-data result computed for that). Labels and constraints are used as given:
    constraints are built once on all labeled samples (``supervision.constraints``) and restricted to each
    resample (:mod:`ssfs.experiment.stable_selection`)."""
    y = selection_labels(data.y, sel, seed, dataset, data.classes)
    subs = selection_resamples(y, sel, seed, dataset, data.classes)
    decided = {"labeled_resampling": np.asarray(labeled_resampling(y, sel.get("labeled", "split"),
                                                                  sel.get("labeled_weight"))),
               "labeled_weight": np.asarray(np.nan if sel.get("labeled_weight") is None else sel["labeled_weight"]),
               "graph_free": np.asarray(bool(sel.get("graph_free")))}
    if not auto_keeps(sel, data.X, settings.method, y):  # methods auto did not choose it on this data: no run
        if full is not None:
            write_checked_tsv(pd.DataFrame(columns=["feature", "index", "score", "rank"]), full)
        _save_ranks(ranks, {"ranks": np.zeros((len(chunk), data.X.shape[1]), dtype=np.int32),
                            "failed": np.asarray([NOT_CHOSEN] * len(chunk), dtype=str),
                            "full_failed": np.asarray(NOT_CHOSEN), **decided})
        return
    cons = selection_constraints(y, sup, seed, dataset)
    runs, ranked = run_one_method(data.X, Labels(y, data.classes), cons, settings, subs, chunk, seed=seed,
                                  dataset=dataset, with_full=full is not None, classes=data.classes,
                                  batch=data.batch, ranked=ranked)
    if full is not None:
        if ranked is None:
            write_checked_tsv(pd.DataFrame(columns=["feature", "index", "score", "rank"]), full)
        else:
            _write_ranked(ranked, data, full)
    arrays = {"ranks": runs.resamples, "failed": np.asarray(runs.failed, dtype=str),
              "full_failed": np.asarray(runs.full_failed, dtype=str),
              "label_free": np.asarray(runs.label_free_rows, dtype=bool), **decided}  # per resample of the chunk
    if runs.memberships is not None:
        arrays["memberships"] = runs.memberships
        arrays["membership_groups"] = np.asarray(runs.groups, dtype=str)
    if runs.fit:
        arrays["fit"] = np.asarray(json.dumps(runs.fit))
    if runs.outlying:
        arrays["outlying_samples"] = np.asarray(runs.outlying, dtype=np.int64)
    if runs.populations is not None:
        arrays["population_samples"] = np.asarray(runs.populations["samples"], dtype=np.int64)
        arrays["population_features"] = np.asarray(runs.populations["features"], dtype=np.int64)
    _save_ranks(ranks, arrays)


def _save_ranks(path, arrays: dict) -> None:
    """A selection job's resample-ranks file (.npz), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


#: why a method of ``selection.methods: auto`` has no runs on a dataset (not chosen for its kind of data)
NOT_CHOSEN = "not chosen by selection.methods: auto for this data"


def auto_keeps(sel: dict, X, method: str, y) -> bool:
    """Whether registered ``method`` takes part in the selection of X: always, unless
    ``selection.methods`` is ``auto`` (:func:`ssfs.workflow.config.selection_methods`) and
    :func:`~ssfs.experiment.stable_selection.methods_for` does not choose it for X."""
    return not sel.get("auto") or method in methods_for("auto", X, y=y)[0]


def _label_free(parts: list) -> tuple:
    """``(count, per-resample flags or None)`` of the resamples a method ranked without its labels,
    from its chunks' rank files (a file of an earlier version holds the count alone: no flags)."""
    flags = [np.asarray(z.get("label_free", np.zeros(len(z["ranks"]), dtype=bool))) for z in parts]
    if any(f.ndim == 0 for f in flags):
        return sum(int(f.sum()) for f in flags), None
    rows = np.concatenate(flags).astype(bool)
    return int(rows.sum()), rows


def _decided(parts: list, y: np.ndarray, sel: dict) -> dict:
    """``labeled`` (and ``labeled_weight``, ``graph_free``) as the selection jobs decided it (their rank files);
    a file of an earlier version holds neither: ``labeled: auto`` then shared few labels on 150
    samples or more and split them on fewer."""
    z = parts[0]
    if "labeled_resampling" not in z:
        labeled = sel.get("labeled", "split")
        return {"labeled": labeled_resampling(y, labeled, 1.0) if partly_labeled(y) or labeled != "auto" else "split"}
    weight = float(z["labeled_weight"])
    free = {"graph_free": True} if "graph_free" in z and bool(z["graph_free"]) else {}
    return {"labeled": str(z["labeled_resampling"]), **({"labeled_weight": weight} if np.isfinite(weight) else {}),
            **free}


def _populations(npz) -> dict | None:
    """The populations (:func:`ssfs.experiment.stable_selection.populations_of`) of a method's first
    resample-ranks file, the one that ranked all samples; None when it found none."""
    if "population_samples" not in npz:
        return None
    return {"samples": npz["population_samples"].tolist(), "features": npz["population_features"].tolist()}


def _outlying(npz) -> list:
    """The rows of the samples the full-data fit found much louder or quieter than the median one
    (:meth:`ssfs.registry.SelectionResult.outlying`) of a method's first resample-ranks file; [] for none."""
    return np.asarray(npz["outlying_samples"]).tolist() if "outlying_samples" in npz else []


def _fit(npz) -> dict:
    """The full-data fit's graph diagnostics (:meth:`ssfs.registry.SelectionResult.fit_summary`) of a
    method's first resample-ranks file, {} when it has none (or is of an earlier version)."""
    return json.loads(str(npz["fit"])) if "fit" in npz else {}


def _memberships(npz, classes) -> tuple:
    """``(memberships, group names)`` of a method's first resample-ranks file, or ``(None, None)``
    (a file without ``membership_groups``: the classes name the columns)."""
    P = npz.get("memberships")
    if P is None:
        return None, None
    names = npz.get("membership_groups")
    return P, [str(c) for c in classes] if names is None else [str(g) for g in names]


def run_consensus(*, prepared, full: list, ranks: list, consensus, summary, sel: dict, methods: dict,
                  dataset: str, seed: int, path=None) -> None:
    """The workflow's ``consensus`` step: consensus.tsv, summary.json and the stability path
    (``path``, TSV) of one dataset from every method's full ranking and resample ranks (``full``
    and ``ranks`` list the methods' files in the order of ``methods``, label -> settings;
    ``ranks`` in chunk order per method); the labels of ``sel`` (every label, or
    ``labeled_per_class`` of each class: :func:`ssfs.experiment.stable_selection.selection_labels`)."""
    data = read_prepared(prepared)
    y = selection_labels(data.y, sel, seed, dataset, data.classes)
    p = data.X.shape[1]
    full, ranks = by_method(full, methods), by_method(ranks, methods)
    runs = {}
    used = {label: entry for label, entry in methods.items() if auto_keeps(sel, data.X, entry["method"], y)}
    for label in used:
        parts = [load_checked_npz(f) for f in ranks[label]]
        for f, z in zip(ranks[label], parts, strict=True):
            if z["ranks"].ndim != 2 or z["ranks"].shape[1] != p:
                shape = " x ".join(map(str, z["ranks"].shape))
                raise incomplete(f, f"its resample ranks hold an array of shape {shape}, expected any x {p} "
                                    "(the data's features)")
        t = read_checked_tsv(full[label][0])
        r = None
        if len(t):
            r = np.full(p, len(t) + 1, dtype=np.float64)
            r[t["index"].to_numpy()] = t["rank"].to_numpy()
        runs[label] = MethodRuns(r, np.concatenate([z["ranks"] for z in parts]),
                                 [str(f) for z in parts for f in z["failed"]], str(parts[0]["full_failed"]),
                                 *_memberships(parts[0], data.classes),
                                 *_label_free(parts), populations=_populations(parts[0]), fit=_fit(parts[0]),
                                 outlying=_outlying(parts[0]))
        if runs[label].resamples.shape[0] != sel["resamples"]:
            raise incomplete(ranks[label][0], f"the resample ranks of {label} hold "
                                              f"{runs[label].resamples.shape[0]} rows in all, expected "
                                              f"{sel['resamples']} resamples")
    sel = {**sel, **_decided(parts, y, sel)} if used else sel
    res = consensus_result(runs, X=data.X, names=data.features, y=y, classes=data.classes, sel=sel,
                           dataset=dataset, symbols=gene_symbols(data.adata), given=data.y,
                           batches=batch_summary(data.batch, used, data.X),
                           rule=methods_for("auto", data.X, y=y)[1] if sel.get("auto") else "",
                           samples=np.asarray(data.adata.obs_names))
    write_tsv(res.table, consensus)
    write_json(res.summary, summary)
    if path is not None:
        write_tsv(res.path, path)


def run_consensus_step(*, prepared, full: list, ranks: list, outputs, sel: dict, methods: dict, dataset: str,
                       seed: int, draw_figures=None) -> None:
    """The selection's consensus as a rule runs it (the ``consensus`` rule, or the one job of
    ``execution.fuse_steps``): :func:`run_consensus` into the rule's ``outputs`` (``consensus``,
    ``summary`` and, for the analyst's list, ``path``, ``figure``, ``dotplot``; the list of every
    label beside it has neither path nor figures), then, when there is a path,
    ``draw_figures(summary=, consensus=, path=, figure=, dotplot=)``: the script passes
    :func:`ssfs.report.selection.draw_selection_figures` (the workflow does not import the report)."""
    path = getattr(outputs, "path", None)
    run_consensus(prepared=prepared, full=full, ranks=ranks, consensus=outputs.consensus, summary=outputs.summary,
                  path=path, sel=sel, methods=methods, dataset=dataset, seed=seed)
    if path is not None and draw_figures is not None:
        draw_figures(summary=outputs.summary, path=path, consensus=outputs.consensus,
                     figure=getattr(outputs, "figure", None), dotplot=getattr(outputs, "dotplot", None))
