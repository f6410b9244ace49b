"""Selection mode in memory: every method on the full data and on resamples of it, then the
consensus table and summary (:mod:`ssfs.experiment.selection`). The workflow's selection jobs
(:func:`ssfs.workflow.pipeline.run_selection_chunk`, ``run_consensus``), ``ssfs select`` and
:func:`ssfs.tl.select_stable` all call these functions, so one seed gives the same list through
every door.

A method that cannot run on a resample or on the full data (an :class:`ssfs.errors.SSFSError`,
e.g. fisher on half-samples holding one label of a class) is left out of the consensus and
named with its reason in the summary (``left_out``); only when no method can run is it an error.

Randomness: resamples from ``(seed, dataset, "selection", "resamples")``; method ``label`` on
resample b from ``(seed, dataset, "selection", label, b)`` and on the full data from
``(..., label, "full")``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._validation import check_labels_named
from ..errors import ConfigError, SSFSError, SupervisionError
from ..labels import Labels
from ..methods._shared.batches import batch_codes
from ..methods._shared.counts import count_like
from ..methods._shared.dropouts import dropout_base
from ..methods._shared.unwanted import outside
from ..methods.propagate import samples_compete
from ..registry import check_params, get_method, named_rows
from ..runner import MethodConfig, batch_handling, method_configs
from ..seeding import derive_rng
from .attribution import attribution, memberships_of
from .error_bound import ASSUMPTIONS, choose_top
from .selection import (
    AGGREGATIONS,
    SCHEMES,
    consensus,
    labeled_resampling,
    one_label_classes,
    ranks_from_order,
    resamples,
    stability_path,
    summary,
    too_few_to_split,
)
from .selection_defaults import (
    AUTO,
    COMMITTEE,
    COUNTS_COMMITTEE,
    COUNTS_MIN_SAMPLES,
    LABELED,
    PROPAGATE_MIN_SAMPLES,
    SELECTION_DEFAULTS,
    kept_per_class,
    labeled_for,
)
from .splits import draw_labeled
from .verdict import verdict

DEFAULTS = SELECTION_DEFAULTS


def selection_options(*, resamples: int = DEFAULTS["resamples"], top: int | str = DEFAULTS["top"],
                      threshold: float = DEFAULTS["threshold"], max_false: float = DEFAULTS["max_false"],
                      assumption: str = DEFAULTS["assumption"], scheme: str = DEFAULTS["scheme"],
                      aggregation: str = DEFAULTS["aggregation"], labeled: str = DEFAULTS["labeled"],
                      where: str = "") -> dict:
    """A checked ``selection:`` entry (:data:`DEFAULTS`); one-line errors name ``where``."""
    def bad(what):
        return ConfigError(f"{where}{what}")

    if scheme not in SCHEMES or aggregation not in AGGREGATIONS or assumption not in ASSUMPTIONS:
        raise bad(f"scheme must be one of {SCHEMES}, aggregation one of {AGGREGATIONS} and assumption one of "
                  f"{ASSUMPTIONS}, got {scheme!r}, {aggregation!r}, {assumption!r}")
    if labeled not in LABELED:
        raise bad(f"labeled must be one of {', '.join(LABELED)}, got {labeled!r}")
    if int(resamples) != resamples or resamples < 2 or (scheme == "cpss" and resamples % 2):
        raise bad(f"resamples must be an integer >= 2{' and even for cpss' if scheme == 'cpss' else ''}, "
                  f"got {resamples}")
    if top != "auto" and (isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1):
        raise bad(f"top must be an integer >= 1, got {top!r} (or 'auto': from the error bound)")
    if not 0 < threshold <= 1:
        raise bad(f"threshold must be in (0, 1], got {threshold}")
    if not (isinstance(max_false, int | float) and max_false > 0):
        raise bad(f"max_false must be a number > 0 (expected false selections that top: auto allows), "
                  f"got {max_false!r}")
    return {"resamples": int(resamples), "top": top if top == "auto" else int(top), "threshold": float(threshold),
            "max_false": float(max_false), "assumption": assumption, "scheme": scheme, "aggregation": aggregation,
            "labeled": labeled}


def top_for(sel: dict, p: int) -> int:
    """q of a ``selection:`` entry on ``p`` features: ``top``, or with ``top: auto`` the largest q
    whose error bound stays at most ``max_false`` (:func:`ssfs.experiment.error_bound.choose_top`)."""
    if sel["top"] != "auto":
        return int(sel["top"])
    return choose_top(p, sel["threshold"], sel["resamples"], max_false=sel.get("max_false", 1.0),
                      assumption=sel.get("assumption", "r_concave"))


def method_settings(methods, params: dict | None = None) -> dict:
    """label -> ``{"method", "params"}`` for registered method names, each one's ``params``
    (``{name: {param: value}}``) checked against its signature; ``"auto"``: those of
    :data:`~ssfs.experiment.selection_defaults.COMMITTEE` (checked before the data is read;
    :func:`methods_for` chooses on the data)."""
    methods = list(COMMITTEE) if methods == AUTO else [methods] if isinstance(methods, str) else list(methods)
    params = dict(params or {})
    if not methods or len(set(methods)) != len(methods):
        raise ConfigError(f"selection methods must be distinct registered names, got {methods}")
    unknown = sorted(set(params) - set(methods))
    if unknown:
        raise ConfigError(f"parameters given for {unknown}, which are not among the methods {methods}")
    built = [m for m in methods if get_method(m).kind == "extraction"]
    if built:  # components have no feature ranks: the consensus would count component numbers as features
        raise ConfigError(f"selection method {built[0]!r} builds components, not a feature ranking; choose methods "
                          "that rank features (ssfs methods)")
    return {m: {"method": m, "params": check_params(get_method(m), dict(params.get(m, {})))} for m in methods}


def methods_for(methods, X, params: dict | None = None, y=None) -> tuple[dict, str]:
    """(label -> ``{"method", "params"}``, the rule the summary states) of selection mode on X
    with labels ``y`` (-1 unlabeled; None: not known): ``methods`` as given (rule ""), or for
    ``"auto"`` (the default of ``ssfs select`` and :func:`ssfs.tl.select_stable`) ``propagate``
    alone when X is count-like (:func:`~ssfs.methods._shared.counts.count_like`: single cells) or a table with
    dropouts (:func:`~ssfs.methods._shared.dropouts.dropout_base`: full-length single cells' log2(TPM + 1)) with
    at least :data:`~ssfs.experiment.selection_defaults.COUNTS_MIN_SAMPLES` samples or ``y``
    holds labels on at least :data:`~ssfs.experiment.selection_defaults.PROPAGATE_MIN_SAMPLES`
    samples (partly or fully labeled), else the committee ``propagate, laplacian, fisher, cls``
    (data without labels, fewer samples); the parameters of a method not chosen are dropped. On
    counts the committee's graph members (log values) rank highly expressed genes' noise and their
    stable lists outvote ``propagate``'s; on labeled arrays ``propagate`` alone listed more markers
    at every budget, and with few labels, shared by every resample, ``fisher`` would select the
    same labels' chance patterns every time (docs/labels_that_count.md, "Selection mode")."""
    if methods != AUTO:
        return method_settings(methods, params), ""
    n = X.shape[0]
    counts = (count_like(X) or dropout_base(X) is not None) and n >= COUNTS_MIN_SAMPLES
    labeled = y is not None and bool((np.asarray(y) >= 0).any()) and n >= PROPAGATE_MIN_SAMPLES
    chosen = COUNTS_COMMITTEE if counts or labeled else COMMITTEE
    params = {m: p for m, p in (params or {}).items() if m in chosen}
    return method_settings(chosen, params), f"methods auto: {', '.join(chosen)} on {_kind(X, y, counts, labeled)}"


def _kind(X, y, counts: bool, labeled: bool) -> str:
    """The data :func:`methods_for` chose on, in words (the summary's ``methods_rule``)."""
    if counts:
        return "count-like data (single cells)" if count_like(X) else "a table with dropouts (single cells)"
    if labeled:
        return f"labeled data ({PROPAGATE_MIN_SAMPLES} samples or more)"
    if y is not None and X.shape[0] >= PROPAGATE_MIN_SAMPLES:
        return "data without labels"
    if count_like(X):
        return f"count-like data of fewer than {COUNTS_MIN_SAMPLES} samples"
    return f"dense data of fewer than {PROPAGATE_MIN_SAMPLES} samples" if y is not None else "dense data"


def selection_labels(y: np.ndarray, sel: dict, seed: int, dataset: str, class_names=None) -> np.ndarray:
    """The labels the selection uses: ``y`` itself, or with ``sel["labeled_per_class"]`` = k for
    ``dataset`` (:func:`~ssfs.experiment.selection_defaults.kept_per_class`; the analyst's case of
    the default run) k labels of every class drawn from the seed (a class with fewer keeps all of
    them, with a warning), the other samples unlabeled (-1)."""
    k = kept_per_class(sel, dataset)
    y = np.asarray(y, dtype=np.int64)
    if k is None:
        return y
    keep = draw_labeled(y, np.arange(y.size), int(k), derive_rng(seed, dataset, "selection", "labels", int(k)),
                        dataset=dataset, small_classes="all", class_names=class_names)
    out = np.full(y.size, -1, dtype=np.int64)
    out[keep] = y[keep]
    return out


def selection_resamples(y: np.ndarray, sel: dict, seed: int, dataset: str, class_names=None) -> list[np.ndarray]:
    """Every resample of a dataset (drawn from the seed alone, identical in every job)."""
    return resamples(y, sel["resamples"], sel["scheme"], derive_rng(seed, dataset, "selection", "resamples"),
                     class_names, labeled=sel.get("labeled", "split"), threshold=sel["threshold"])


def decided_labeled(X, y, cons, configs: list, sel: dict, *, seed: int, dataset: str,
                    batch=None) -> tuple[dict, object]:
    """``(sel, ranked)``: ``sel`` with ``labeled`` decided on the data (:func:`labeled_resampling`:
    ``"auto"`` with :func:`too_few_to_split` needs the weight ``propagate`` gives the propagated samples
    on all samples, kept as ``labeled_weight``, and whether it took the graph-free score in turn,
    ``graph_free``) and the full-data result computed for it (the first of
    ``configs``, whose ranking on all samples is then not run again; computed also where its resamples inherit
    its sample scale, :func:`inherits_sample_scale`), or None. ``y`` as in
    :func:`full_ranking`; every door (``ssfs select``, :func:`ssfs.tl.select_stable`, each of the
    workflow's selection jobs) decides the same from the seed."""
    codes = np.asarray(getattr(y, "codes", y))
    split = sel.get("labeled", "split") != "auto" or not too_few_to_split(codes)
    if not configs or split and not inherits_sample_scale(configs[0], X):
        return {**sel, "labeled": labeled_resampling(codes, sel.get("labeled", "split"))}, None
    try:
        ranked = full_ranking(X, y, cons, configs[0], seed=seed, dataset=dataset, batch=batch)
    except SSFSError:
        ranked = None
    if split:
        return {**sel, "labeled": labeled_resampling(codes, sel.get("labeled", "split"))}, ranked
    graph = (getattr(getattr(ranked, "result", None), "extra", None) or {}).get("graph")
    weight = graph.get("propagated_weight") if isinstance(graph, dict) else None
    weight = float(weight) if weight is not None and np.isfinite(weight) else None
    free = {"graph_free": True} if isinstance(graph, dict) and graph.get("graph_free") else {}
    return {**sel, "labeled": labeled_resampling(codes, "auto", weight), "labeled_weight": weight, **free}, ranked


def full_ranking(X, y, cons, settings: MethodConfig, *, seed: int, dataset: str, batch=None):
    """One configured method on all samples (``y``: codes or :class:`ssfs.labels.Labels`, whose
    class names reach the method's messages; ``batch``: every sample's batch, or None)."""
    return settings.run(X, y, cons, rng=derive_rng(seed, dataset, "selection", settings.label, "full"), batch=batch)


def full_ranks(ranked, p: int) -> np.ndarray:
    """Rank (1 = best) of every feature in a full-data ranking (as its ranking table lists them)."""
    order = np.asarray(ranked.order, dtype=np.int64)
    if ranked.result.selected is None and order.size < p:
        order = np.concatenate([order, np.setdiff1d(np.arange(p), order)])
    return ranks_from_order(order, p)


def resample_ranks(X, y, cons, settings: MethodConfig, subs: list, chunk, *, seed: int,
                   dataset: str, batch=None, label_free: list | None = None) -> tuple[np.ndarray, list[str]]:
    """``(ranks, failed)``: ranks of every feature (int32, len(chunk) x p; a row of zeros where the
    method could not run) on the resamples ``chunk`` of ``subs``, and per resample '' or why it
    could not run. After the first failure the method is out of the consensus anyway: the
    resamples after it are not run (their reason says so). ``y`` and ``batch`` as in :func:`full_ranking`;
    ``label_free``: a list that gets, per resample run, whether the method ranked it without its labels
    (:func:`ranked_without_labels`)."""
    p = X.shape[1]
    codes, classes = check_labels_named(y, X.shape[0])
    out = np.zeros((len(chunk), p), dtype=np.int32)
    failed = [""] * len(chunk)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, b in enumerate(chunk):
            idx = subs[b]
            try:
                ranked = settings.run(X[idx], Labels(codes[idx], classes), cons.subset(idx),
                                      rng=derive_rng(seed, dataset, "selection", settings.label, b),
                                      batch=None if batch is None else np.asarray(batch)[idx])
            except SSFSError as e:
                failed[i:] = [f"resample {b}: {e}"] + [f"not run after resample {b} failed"] * (len(chunk) - i - 1)
                break
            out[i] = ranks_from_order(ranked.resample_order, p)
            if label_free is not None:
                label_free.append(ranked_without_labels(ranked.result, codes[idx]))
    warn_once_per_kind(caught, len(chunk), "resamples")
    return out, failed


def ranked_without_labels(result, y: np.ndarray) -> bool:
    """Whether a method that uses labels ranked a resample holding some without them: ``propagate``
    falls back to label-free scores when the labels pass no test (one per class, a graph they do
    not agree with; its ``extra["graph"]["chosen"]`` is "label-free")."""
    graph = (getattr(result, "extra", None) or {}).get("graph")
    return bool(isinstance(graph, dict) and graph.get("chosen") == "label-free" and (np.asarray(y) >= 0).any())


def warn_once_per_kind(caught: list, runs: int, what: str) -> None:
    """Re-issue recorded warnings once per kind (the same text up to its numbers), the first of
    each with how many of the ``runs`` gave one like it: a warning of every resample would bury
    the answer under as many lines."""
    kinds: dict[tuple, list] = {}
    for w in caught:
        kinds.setdefault((w.category, re.sub(r"\d+(\.\d+)?", "#", str(w.message))), []).append(w)
    for (category, _), ws in kinds.items():
        more = f" (and alike in {len(ws) - 1} more of {runs} {what})" if len(ws) > 1 else ""
        warnings.warn(f"{ws[0].message}{more}", category, stacklevel=2)


@dataclass
class MethodRuns:
    """One method's share of selection mode: its full-data ranks and resample ranks, why any run
    failed, and the class memberships its full-data result carries (a propagation), if any."""

    full: np.ndarray | None
    resamples: np.ndarray
    failed: list = field(default_factory=list)
    full_failed: str = ""
    memberships: np.ndarray | None = None
    groups: list | None = None
    label_free: int = 0  #: resamples ranked without their labels (:func:`ranked_without_labels`)
    #: per resample, whether it was ranked without its labels (None: not known)
    label_free_rows: np.ndarray | None = None
    #: populations the full-data result found that no labeled class's group matches (:func:`populations_of`)
    populations: dict | None = None
    #: the full-data fit's graph diagnostics (:meth:`ssfs.registry.SelectionResult.fit_summary`; {} for none)
    fit: dict = field(default_factory=dict)
    #: rows of the samples the full-data fit found much louder or quieter than the median one
    #: (:meth:`ssfs.registry.SelectionResult.outlying`)
    outlying: list = field(default_factory=list)

    def reason(self) -> str:
        """'' when every run succeeded, else why the method is left out."""
        if self.full_failed:
            return f"on all samples: {self.full_failed}"
        bad = [f for f in self.failed if f and not f.startswith("not run")]
        return f"could not run on {bad[0]}" if bad else ""


def run_one_method(X, y, cons, settings: MethodConfig, subs: list, chunk, *, seed: int, dataset: str,
                   with_full: bool = True, classes=(), batch=None, ranked=None) -> tuple[MethodRuns, object]:
    """``(runs, full-data ranked result or None)`` of one method on the resamples ``chunk`` and,
    with ``with_full``, on all samples (``batch``: every sample's batch, or None; ``ranked``: that
    result when already computed, :func:`decided_labeled`); failures are recorded, not raised."""
    full, full_failed, P = None, "", None
    X_resampled, resampled = inherited(X, ranked, settings, batch)  # the decided fit's, the same in every job
    if with_full:
        try:
            ranked = ranked if ranked is not None else full_ranking(X, y, cons, settings, seed=seed, dataset=dataset,
                                                                    batch=batch)
            full = full_ranks(ranked, X.shape[1])
            P = memberships_of(ranked.result, X.shape[0], classes) if len(classes) > 1 else None
        except SSFSError as e:
            full_failed = str(e)
    free: list = []
    ranks, failed = resample_ranks(X_resampled, y, cons, resampled, subs, chunk, seed=seed, dataset=dataset,
                                   batch=batch, label_free=free)
    rows = np.zeros(len(chunk), dtype=bool)
    rows[:len(free)] = free
    fit = ranked.result.fit_summary() if ranked is not None else {}
    took = {k for k, v in resampled.params.items() if settings.params.get(k) != v}  # from the decided fit
    if "unwanted" in took:
        fit["unwanted_inherited"] = True
    if "sample_scale" in took:
        fit["sample_scale_inherited"] = True
    return MethodRuns(full, ranks, failed, full_failed, *(P or (None, None)), label_free=sum(free),
                      label_free_rows=rows, populations=populations_of(ranked), fit=fit,
                      outlying=ranked.result.outlying() if ranked is not None else []), ranked


def inherited(X, ranked, settings: MethodConfig, batch=None) -> tuple:
    """``(X, settings)`` the resamples are ranked with: where the full-data fit :func:`decided_labeled` computed
    (``ranked``, the same in every job) removed rising components the held-out labels rejected
    (``extra["unwanted_basis"]``, ``propagate``'s ``unwanted``), X without them (:func:`~ssfs.methods._shared.
    unwanted.outside`, as a batch correction before resampling) and the method keeping what is left
    (``unwanted="kept"``); else both as given. A resample's own test, with a few of each class's labels left out,
    rejected an unrecorded batch's component in 2 and 12 of 20 resamples (3 labels per class): no list, and 9 of the
    40 markers listed; inherited, the 40 on both (docs/labels_that_count.md, "Components the labels reject"). The
    sample scale that fit kept is inherited too where the method weighs one (:func:`kept_sample_scale`)."""
    extra = getattr(getattr(ranked, "result", None), "extra", None) or {}
    extra = extra if isinstance(extra, dict) else {}
    params = {**settings.params, **kept_sample_scale(X, extra.get("graph"), settings)}
    if extra.get("unwanted_basis") is not None:
        X = outside(X, extra["unwanted_basis"], batch_codes(batch, X.shape[0], "batch", ConfigError))
        params["unwanted"] = "kept"
    return X, settings if params == settings.params else replace(settings, params=params)


def inherits_sample_scale(settings: MethodConfig, X) -> bool:
    """Whether the resamples of ``settings`` take the sample scale from the fit on all samples
    (:func:`inherited`): a method with a ``sample_scale`` parameter that weighs its choices on X
    (:func:`~ssfs.methods.propagate.samples_compete`: noisy or failed arrays)."""
    defaults = get_method(settings.method).defaults
    return "sample_scale" in defaults and samples_compete(X, {**defaults, **settings.params})


def kept_sample_scale(X, graph, settings: MethodConfig) -> dict:
    """``{"sample_scale": ...}``: the sample scale the fit on all samples kept its graph in (its ``extra["graph"]``)
    where :func:`inherits_sample_scale`; {} where it does not or that fit kept no graph (label-free scores).

    Whether noisy arrays own their components is the samples' property, which every half of them shares: weighed
    once on all labels, each resample builds its chains on that scale alone (half the graphs of a fit). The gene
    scale is weighed again in every resample: its choice follows how many labels judge it (6 classes at 6 labels per
    class, ``benchmarks/bench_select_shapes.py`` seed 5, labels split: all samples kept the genes' units, 17 of 19
    halves the standardised genes; inherited, 34 of the 80 markers listed instead of 80)."""
    if not isinstance(graph, dict) or graph.get("chosen") in (None, "label-free") or "sample_scale" not in graph:
        return {}
    return {"sample_scale": graph["sample_scale"]} if inherits_sample_scale(settings, X) else {}


def populations_of(ranked) -> dict | None:
    """``{"samples": sizes, "features": indices}`` of the populations a full-data result found that no
    labeled class's group matches (``propagate``'s ``extra["unseen_sizes"]``, ``extra["unseen"]``; the
    features in ranking order), or None."""
    extra = getattr(getattr(ranked, "result", None), "extra", None) or {}
    if not extra.get("unseen_sizes"):
        return None
    order = np.asarray(ranked.order)
    return {"samples": [int(v) for v in extra["unseen_sizes"]],
            "features": order[np.asarray(extra["unseen"])[order]].tolist()}


@dataclass
class SelectionResult:
    """What selection mode writes: ``table`` (consensus.tsv), ``summary`` (summary.json) and
    ``path`` (the stability path, stability_path.tsv)."""

    table: pd.DataFrame
    summary: dict
    path: pd.DataFrame


def _usable(runs: dict) -> tuple[dict, dict]:
    """(label -> runs of the methods that ran everywhere, label -> why the others are left out);
    a one-line error when no method ran everywhere."""
    left = {m: r.reason() for m, r in runs.items() if r.reason()}
    ok = {m: r for m, r in runs.items() if m not in left}
    if not ok:
        raise SupervisionError("selection: no method could run on every resample: "
                               + "; ".join(f"{m} {why}" for m, why in left.items()))
    return ok, left


def consensus_result(runs: dict, *, X, names, y, classes, sel: dict, dataset: str, symbols=None,
                     given=None, batches: dict | None = None, rule: str = "", samples=None) -> SelectionResult:
    """Consensus table, summary and stability path from each method's :class:`MethodRuns`
    (label -> runs, methods in the order given), with the per-class attribution of every
    feature (:mod:`ssfs.experiment.attribution`) and the verdict (:mod:`ssfs.experiment.verdict`).
    ``y``: the labels the selection used; ``given``: the data's labels when some were hidden
    (:func:`selection_labels`), counted in the summary's ``labels_given``; ``batches``: the
    summary's record of them (:func:`batch_summary`), or None; ``rule``: how the methods were
    chosen (:func:`methods_for`), the summary's ``methods_rule`` when not empty; ``samples``: the
    samples' names (the summary's ``outlying_samples``; row numbers without them)."""
    ok, left = _usable(runs)
    p = X.shape[1]
    silent = without_labels(ok, y)
    cons = consensus({m: r.full for m, r in ok.items()}, {m: r.resamples.astype(np.float64) for m, r in ok.items()},
                     top_for(sel, p), sel["aggregation"], sel["threshold"], silent=silent)
    table = cons.table
    table.insert(0, "feature", np.asarray(names)[table["index"].to_numpy()].astype(str))
    if symbols is not None:
        table.insert(1, "symbol", np.asarray(symbols)[table["index"].to_numpy()])
    table.insert(2 if symbols is not None else 1, "selected", table["frequency"] >= sel["threshold"])
    s = summary(cons, names, sel=sel, methods=list(ok))
    counts = {str(c): int((y == k).sum()) for k, c in enumerate(classes)}
    s = {"dataset": dataset, "n_samples": int(len(y)), "labeled_per_class": counts,
         "n_unlabeled": int((y < 0).sum()), **s, "left_out": left,
         "labels_kept_per_class": kept_per_class(sel, dataset),
         "labels_given": int((np.asarray(y if given is None else given) >= 0).sum()),
         **({"batches": batches} if batches else {})}
    free = {m: r.label_free for m, r in ok.items() if r.label_free}
    if free:
        s["label_free_resamples"] = free
    if silent is not None and silent.any():
        s["resamples_without_labels"] = int(silent.sum())
    s["labeled_resampling"] = labeled_resampling(y, sel.get("labeled", "split"), sel.get("labeled_weight"))
    s.update({k: sel[k] for k in ("labeled_weight", "graph_free") if k in sel})
    populations = {m: _named_populations(r.populations, names) for m, r in ok.items() if r.populations}
    if populations:
        s["populations"] = populations
    fits = {m: r.fit for m, r in ok.items() if r.fit}
    if fits:
        s["fit"] = fits
    outlying = {m: [str(v) for v in named_rows(r.outlying, samples)] for m, r in ok.items() if r.outlying}
    if outlying:
        s["outlying_samples"] = outlying
    single = one_label_classes(y) if sel["scheme"] == "cpss" and s["labeled_resampling"] == "split" else []
    if single:
        s["one_label_classes"] = [str(classes[c]) for c in single]
    if rule:
        s["methods_rule"] = rule
    table, s["attribution"] = _attributed(table, X, y, classes, ok)
    table = table[[c for c in table.columns if c != "index"] + ["index"]]  # the feature's column in the input
    s["verdict"] = verdict(s)
    n_path = int(min(p, max(s["n_selected"] + 10, 30)))
    return SelectionResult(table, s, stability_path(cons, names, n_features=n_path))


def _named_populations(found: dict, names, shown: int = 10) -> dict:
    """A method's :func:`populations_of` for the summary: each population's samples by name
    ("population 1", ...) and its ``shown`` best features by name."""
    return {"samples": {f"population {j + 1}": int(v) for j, v in enumerate(found["samples"])},
            "features": [str(f) for f in np.asarray(names)[np.asarray(found["features"][:shown], dtype=np.int64)]]}


def without_labels(runs: dict, y) -> np.ndarray | None:
    """Per resample, whether every method ranked it without its labels although it held some
    (:func:`ranked_without_labels`; a method that never does, e.g. ``laplacian``, keeps it
    False): such a resample selects nothing in the consensus. With 3 labels per class split
    between the halves ``propagate`` ranks 16-20 of 20 halves so, and their stable lists were the
    data's gene modules (planted arrays at 100 samples: 30-61 false of 34-69 selected; then none:
    docs/labels_that_count.md, "Resamples ranked without their labels"). None when no labels or
    no record."""
    rows = [r.label_free_rows for r in runs.values()]
    if not (np.asarray(y) >= 0).any() or any(f is None for f in rows):
        return None
    return np.logical_and.reduce([np.asarray(f, dtype=bool) for f in rows])


def _attributed(table: pd.DataFrame, X, y, classes, runs: dict) -> tuple[pd.DataFrame, dict | None]:
    """The consensus table with the attribution columns (None info when there are no labels)."""
    if len(classes) < 2 or not (np.asarray(y) >= 0).any():
        return table, None
    source = next((m for m, r in runs.items() if r.memberships is not None), None)
    used = runs.get(source)
    att, info = attribution(X, y, classes, memberships=getattr(used, "memberships", None),
                            groups=getattr(used, "groups", None), source=source)
    att = att.iloc[table["index"].to_numpy()].reset_index(drop=True)
    return pd.concat([table.reset_index(drop=True), att], axis=1), info


def stable_selection(X, y, cons, methods: dict, sel: dict, *, seed: int, dataset: str, names, classes,
                     symbols=None, batch=None, rule: str = "", samples=None) -> SelectionResult:
    """The whole selection mode in one process: ``methods`` maps labels to ``{"method", "params"}``,
    ``sel`` is a validated ``selection:`` config entry, ``batch`` every sample's batch (or None:
    samples compared within batches, :func:`ssfs.runner.within_batches`), ``rule`` how the methods
    were chosen (:func:`methods_for`; kept in the summary as ``methods_rule``), ``samples`` the samples'
    names (the summary's ``outlying_samples``); returns what the
    workflow writes to ``consensus.tsv``, ``summary.json`` and ``stability_path.tsv``."""
    sel = {**sel, "labeled": labeled_for(sel.get("labeled", "split"), [e["method"] for e in methods.values()])}
    labels, configs = Labels(y, classes), method_configs(methods)
    sel, first = decided_labeled(X, labels, cons, configs, sel, seed=seed, dataset=dataset, batch=batch)
    subs = selection_resamples(y, sel, seed, dataset, classes)
    chunk = range(len(subs))
    runs = {settings.label: run_one_method(X, labels, cons, settings, subs, chunk, seed=seed, dataset=dataset,
                                           classes=classes, batch=batch, ranked=first if i == 0 else None)[0]
            for i, settings in enumerate(configs)}
    return consensus_result(runs, X=X, names=names, y=y, classes=classes, sel=sel, dataset=dataset, symbols=symbols,
                            batches=batch_summary(batch, methods, X), rule=rule, samples=samples)


def batch_summary(batch, methods: dict, X) -> dict | None:
    """``{"n": number of batches, "methods": the labels of the methods that compared samples within
    them}`` (:func:`ssfs.runner.batch_handling`) for the summary (None without batches);
    ``methods``: label -> ``{"method", "params"}``."""
    if batch is None:
        return None
    took = [label for label, entry in methods.items()
            if batch_handling(entry["method"], entry.get("params") or {}, X) != "as given"]
    return {"n": int(np.unique(np.asarray(batch, dtype=str)).size), "methods": took}
