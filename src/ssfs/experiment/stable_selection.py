"""Selection mode in memory: every method on the full data and on resamples of it, then the
consensus table and summary (:mod:`ssfs.experiment.selection`). The workflow's selection jobs
(:func:`ssfs.workflow.pipeline.run_selection_chunk`, ``run_consensus``), ``ssfs select`` and
:func:`ssfs.tl.select_stable` all call these functions, so one seed gives the same list through
every door.

Randomness: resamples from ``(seed, dataset, "selection", "resamples")``; method ``label`` on
resample b from ``(seed, dataset, "selection", label, b)`` and on the full data from
``(..., label, "full")``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import check_labels_named
from ..errors import ConfigError
from ..labels import Labels
from ..registry import check_params, get_method
from ..runner import run_method
from ..seeding import derive_rng
from .selection import AGGREGATIONS, SCHEMES, consensus, ranks_from_order, resamples, summary


def selection_options(*, resamples: int = 20, top: int = 10, threshold: float = 0.6, scheme: str = "cpss",
                      aggregation: str = "mean_rank", where: str = "") -> dict:
    """A checked ``selection:`` entry (defaults as the workflow's); one-line errors name ``where``."""
    def bad(what):
        return ConfigError(f"{where}{what}")

    if scheme not in SCHEMES or aggregation not in AGGREGATIONS:
        raise bad(f"scheme must be one of {SCHEMES} and aggregation one of {AGGREGATIONS}, got {scheme!r}, "
                  f"{aggregation!r}")
    if int(resamples) != resamples or resamples < 2 or (scheme == "cpss" and resamples % 2):
        raise bad(f"resamples must be an integer >= 2{' and even for cpss' if scheme == 'cpss' else ''}, "
                  f"got {resamples}")
    if int(top) != top or top < 1:
        raise bad(f"top must be an integer >= 1, got {top}")
    if not 0 < threshold <= 1:
        raise bad(f"threshold must be in (0, 1], got {threshold}")
    return {"resamples": int(resamples), "top": int(top), "threshold": float(threshold), "scheme": scheme,
            "aggregation": aggregation}


def method_settings(methods, params: dict | None = None) -> dict:
    """label -> ``{"method", "params"}`` for registered method names, each one's ``params``
    (``{name: {param: value}}``) checked against its signature."""
    methods = [methods] if isinstance(methods, str) else list(methods)
    params = dict(params or {})
    if not methods or len(set(methods)) != len(methods):
        raise ConfigError(f"selection methods must be distinct registered names, got {methods}")
    unknown = sorted(set(params) - set(methods))
    if unknown:
        raise ConfigError(f"parameters given for {unknown}, which are not among the methods {methods}")
    return {m: {"method": m, "params": check_params(get_method(m), dict(params.get(m, {})))} for m in methods}


def selection_resamples(y: np.ndarray, sel: dict, seed: int, dataset: str, class_names=None) -> list[np.ndarray]:
    """Every resample of a dataset (drawn from the seed alone, identical in every job)."""
    return resamples(y, sel["resamples"], sel["scheme"], derive_rng(seed, dataset, "selection", "resamples"),
                     class_names)


def full_ranking(X, y, cons, settings: dict, *, seed: int, dataset: str, label: str):
    """Method ``settings`` (``{"method", "params"}``) of config label ``label`` on all samples
    (``y``: codes or :class:`ssfs.labels.Labels`, whose class names reach the method's messages)."""
    return run_method(settings["method"], X, y, cons, rng=derive_rng(seed, dataset, "selection", label, "full"),
                      **settings["params"])


def full_ranks(ranked, p: int) -> np.ndarray:
    """Rank (1 = best) of every feature in a full-data ranking (as its ranking table lists them)."""
    order = np.asarray(ranked.order, dtype=np.int64)
    if ranked.result.selected is None and order.size < p:
        order = np.concatenate([order, np.setdiff1d(np.arange(p), order)])
    return ranks_from_order(order, p)


def resample_ranks(X, y, cons, settings: dict, subs: list, chunk, *, seed: int, dataset: str,
                   label: str) -> np.ndarray:
    """Ranks of every feature (int32, len(chunk) x p) on the resamples ``chunk`` of ``subs``
    (``y`` as in :func:`full_ranking`)."""
    p = X.shape[1]
    codes, classes = check_labels_named(y, X.shape[0])
    out = np.zeros((len(chunk), p), dtype=np.int32)
    for i, b in enumerate(chunk):
        idx = subs[b]
        ranked = run_method(settings["method"], X[idx], Labels(codes[idx], classes), cons.subset(idx),
                            rng=derive_rng(seed, dataset, "selection", label, b), **settings["params"])
        out[i] = ranks_from_order(ranked.order, p)
    return out


def consensus_result(full: dict, res: dict, *, names, y, classes, sel: dict, dataset: str,
                     symbols=None) -> tuple[pd.DataFrame, dict]:
    """(consensus table, summary dict) from each method's full-data ranks (``full``: label ->
    length-p ranks) and resample ranks (``res``: label -> B x p), methods in the order given."""
    methods = list(full)
    table, Z = consensus(full, res, sel["top"], sel["aggregation"])
    table.insert(0, "feature", np.asarray(names)[table["index"].to_numpy()].astype(str))
    if symbols is not None:
        table.insert(1, "symbol", np.asarray(symbols)[table["index"].to_numpy()])
    table = table[[c for c in table.columns if c != "index"] + ["index"]]  # the feature's column in the input
    s = summary(table, Z, names, top=sel["top"], threshold=sel["threshold"], scheme=sel["scheme"],
                aggregation=sel["aggregation"], methods=methods)
    counts = {str(c): int((y == k).sum()) for k, c in enumerate(classes)}
    s = {"dataset": dataset, "n_samples": int(len(y)), "labeled_per_class": counts,
         "n_unlabeled": int((y < 0).sum()), **s}
    return table, s


def stable_selection(X, y, cons, methods: dict, sel: dict, *, seed: int, dataset: str, names, classes,
                     symbols=None) -> tuple[pd.DataFrame, dict]:
    """The whole selection mode in one process: ``methods`` maps labels to ``{"method", "params"}``,
    ``sel`` is a validated ``selection:`` config entry; returns what the workflow writes to
    ``consensus.tsv`` and ``summary.json``."""
    p = X.shape[1]
    subs = selection_resamples(y, sel, seed, dataset, classes)
    chunk = range(len(subs))
    full, res = {}, {}
    labels = Labels(y, classes)
    for label, settings in methods.items():
        full[label] = full_ranks(full_ranking(X, labels, cons, settings, seed=seed, dataset=dataset, label=label), p)
        res[label] = resample_ranks(X, labels, cons, settings, subs, chunk, seed=seed, dataset=dataset,
                                    label=label).astype(np.float64)
    return consensus_result(full, res, names=names, y=y, classes=classes, sel=sel, dataset=dataset,
                            symbols=symbols)
