"""Selection mode: from rankings on resamples of the user's data to one consensus feature list
with selection frequencies, its stability and an error bound (issue #14).

* Resamples (:func:`resamples`): complementary pairs of half-samples (CPSS, Shah & Samworth 2013,
  Sec. 2.2) or bootstrap samples, drawn *within groups*: every labeled class and the unlabeled
  samples are split separately, so each half keeps labels of every class; or, with few labels
  (``labeled="rotated"``, :func:`labeled_resampling`, :func:`rotated_labels`), the unlabeled samples
  alone are split and every resample holds the labeled samples but a few of each class, left out in
  turn, so that no one labeled sample is in a share ``threshold`` of the resamples; or
  (``labeled="shared"``) every labeled sample is in every resample.
* Aggregation across methods (:func:`aggregate`): ``mean_rank`` (default; the Borda count of
  complete rankings, linear in the ranks, so one method cannot veto a feature), ``rank_product``
  (geometric mean of the ranks, Breitling et al. 2004: rewards features ranked very high by some
  method) or ``median_rank`` (robust to one dissenting method).
* Frequency (:func:`consensus`): fraction of resamples in which a feature is in the top ``top``
  of the aggregated ranking: its estimated selection probability (Meinshausen & Bühlmann 2010,
  eq. 7). The consensus rank puts the stable features first (frequency at least the threshold), by
  frequency, then every other feature by its aggregated rank on the full data; ties by column. Below
  the threshold a frequency counts a few half-samples' top lists, each ranked with half the labels: on
  real microarrays with 3 labels per class that order was the worse one on all 6 sets
  (docs/labels_that_count.md, "The order below the stable list").
* Error bound (:func:`error_bound`): Meinshausen & Bühlmann (2010) Theorem 1 and Shah & Samworth
  (2013) Theorem 1, eq. (8) (unimodal) and eq. (9)-(10) (r-concave), with the constants, ranges and
  algorithm of the R package stabs (Hofner & Hothorn; checked against its saved test outputs).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from ..methods._shared.stability import nogueira
from .error_bound import bound_of, error_bound
from .selection_defaults import (
    LABELED,
    PARTIAL_MIN_SAMPLES,
    PROPAGATE_MIN_SAMPLES,
    SHARED_BELOW,
    SHARED_MIN_WEIGHT,
)

SCHEMES = ("cpss", "bootstrap")
AGGREGATIONS = ("stability_weighted", "mean_rank", "rank_product", "median_rank")


def _groups(y: np.ndarray) -> list[np.ndarray]:
    """Sample indices of each labeled class (in class order), then the unlabeled ones."""
    y = np.asarray(y)
    groups = [np.flatnonzero(y == c) for c in np.unique(y[y >= 0])]
    unl = np.flatnonzero(y < 0)
    return groups + ([unl] if unl.size else [])


def partly_labeled(y: np.ndarray, min_samples: int = PARTIAL_MIN_SAMPLES) -> bool:
    """Whether ``y`` (-1 unlabeled) holds some labels, at least as many unlabeled samples as labeled
    ones and ``min_samples`` samples or more (default
    :data:`~ssfs.experiment.selection_defaults.PARTIAL_MIN_SAMPLES`: the data where ``labeled: auto``
    may share few labels)."""
    y = np.asarray(y)
    labeled = int((y >= 0).sum())
    return 0 < labeled <= y.size - labeled and y.size >= min_samples


def too_few_to_split(y: np.ndarray) -> bool:
    """Partly labeled data of :data:`~ssfs.experiment.selection_defaults.PROPAGATE_MIN_SAMPLES` samples
    or more (:func:`partly_labeled`) whose smallest labeled class has fewer than
    :data:`~ssfs.experiment.selection_defaults.SHARED_BELOW` labels: split between the halves, a
    half-sample would hold one or two per class, so ``labeled: auto`` weighs keeping them in the
    resamples (:func:`labeled_resampling`)."""
    y = np.asarray(y)
    return (partly_labeled(y, PROPAGATE_MIN_SAMPLES)
            and np.unique(y[y >= 0], return_counts=True)[1].min() < SHARED_BELOW)


def labeled_resampling(y: np.ndarray, labeled: str = "auto", propagated_weight: float | None = None) -> str:
    """``"split"``, ``"rotated"`` or ``"shared"``: how the labeled samples of ``y`` (-1 unlabeled)
    enter the resamples under ``labeled`` (:data:`LABELED`). ``"auto"`` splits them unless
    :func:`too_few_to_split` (with labeled samples the majority a resample would be mostly the same
    samples); with few labels it decides on ``propagated_weight``, the weight ``propagate`` gave the
    propagated samples on all samples (None: not known), and the size: with
    :data:`~ssfs.experiment.selection_defaults.PARTIAL_MIN_SAMPLES` samples or more it shares them
    when the weight is at least :data:`~ssfs.experiment.selection_defaults.SHARED_MIN_WEIGHT` (the
    graph carries the classes, so every resample's ranking rests on many samples), else rotates
    them; on fewer samples it rotates them when the weight is that high, else splits them (shared,
    the labels weigh so much there that their chance patterns were listed even on graphs that carry
    the classes; rotated on graphs that do not, 2 labels per class in a resample gave lists of the
    arrays' modules).

    Shared, the halves of a complementary pair overlap in the labeled samples only, so they are
    independent *given the labeled samples*: Shah & Samworth's (2013) bounds hold conditionally on
    them and count features that the unlabeled samples choose by chance, not those a chance pattern
    of the few labels chooses. Where the graph carries the classes little, the rankings rest on the
    labeled samples and such patterns were listed: Splatter-like counts of 200 cells at 3 labels per
    class (weights 0.09-0.25), 3-17 of a shared list's 14-22 features. Rotated (:func:`rotated_labels`),
    each labeled sample sits out of enough resamples that a pattern it brings alone cannot reach
    the threshold (none listed), at the price of shorter lists where the labels were safe to share
    (planted arrays, 2 of 3 labels per class in each resample: 16 markers listed of 72).
    docs/labels_that_count.md, "Labels left out in turn"."""
    if labeled not in LABELED:
        raise InputError(f"selection labeled must be one of {', '.join(LABELED)}, got {labeled!r}")
    y = np.asarray(y)
    if labeled in ("shared", "rotated") and not (y < 0).any():
        raise InputError(f"selection labeled: {labeled} resamples the unlabeled samples alone, and every sample is "
                         "labeled (use split or auto)")
    if labeled != "auto":
        return labeled
    if not too_few_to_split(y):
        return "split"
    carries = propagated_weight is not None and propagated_weight >= SHARED_MIN_WEIGHT
    if partly_labeled(y):
        return "shared" if carries else "rotated"
    return "rotated" if carries else "split"


def resamples_sat_out(n: int, threshold: float) -> int:
    """Fewest of ``n`` resamples a labeled sample must sit out of for a feature in the top lists
    of only the others to stay below frequency ``threshold``: n - ceil(threshold n) + 1."""
    return n - int(np.ceil(threshold * n - 1e-9)) + 1


def rotation_window(m: int, n: int, threshold: float) -> int:
    """Labels d that a class of ``m`` leaves out of each of ``n`` resamples under ``labeled="rotated"``
    (:func:`rotated_labels`): ceil(a m / n) for a = :func:`resamples_sat_out`, at most m - 2 (0 for a
    class of 1 or 2). Each of its labels then sits out of floor(n d / m) resamples or more, at least a
    unless the cap held d lower."""
    return min(-(-resamples_sat_out(n, threshold) * m // n), m - 2) if m > 2 else 0


def rotated_labels(y: np.ndarray, n: int, threshold: float, rng: np.random.Generator) -> list[np.ndarray]:
    """The labeled samples of each of ``n`` resamples under ``labeled="rotated"``: every class of m
    labels, in a random order, leaves out d consecutive ones in each resample, the window moving
    by d from one resample to the next (so each sample sits out of floor(n d / m) or one more).
    d (:func:`rotation_window`) is the fewest that keeps every sample out of at least
    a = n - ceil(threshold n) + 1 resamples, ceil(a m / n), at most m - 2: a feature that one labeled
    sample's chance pattern ranks high is then in the top list of fewer than a share ``threshold`` of
    the resamples, while a class keeps 2 labels or more in each (a class of 1 or 2 labels is in every
    resample, and at a low threshold a class of 3 sits out less than a: their chance patterns stay
    those that a :func:`labeled_resampling` "shared" counts by no bound; the verdict names them).
    Complementary pairs are resamples 2j and 2j + 1, so the two halves of a pair leave out
    different samples."""
    y = np.asarray(y)
    out: list[list[np.ndarray]] = [[] for _ in range(n)]
    for c in np.unique(y[y >= 0]):
        members = rng.permutation(np.flatnonzero(y == c))
        m = members.size
        d = rotation_window(m, n, threshold)
        for r in range(n):
            keep = np.ones(m, dtype=bool)
            keep[(r * d + np.arange(d)) % m] = False
            out[r].append(members[keep])
    return [np.concatenate(parts) if parts else np.empty(0, dtype=np.int64) for parts in out]


def resamples(y: np.ndarray, n: int, scheme: str, rng: np.random.Generator, class_names=None,
              labeled: str = "split", threshold: float = 0.8) -> list[np.ndarray]:
    """``n`` sorted index arrays of samples. ``cpss``: n/2 complementary pairs; each group of
    size m is permuted and its first floor(m/2) samples go to one half, the next floor(m/2) to the
    other (one sample of an odd group sits out, as in CPSS); the one labeled sample of a class
    that has one (:func:`one_label_classes`) is drawn with the unlabeled samples, so it is in one
    half of a pair or sits out, and the other half sees that class unlabeled (a warning names it).
    ``bootstrap``: n draws with replacement of each group's size within each group.
    ``labeled`` (:func:`labeled_resampling`): ``"shared"`` puts every labeled sample in every
    resample and resamples the unlabeled ones alone; ``"rotated"`` the same but the labeled samples
    that :func:`rotated_labels` leaves out of each resample for ``threshold`` (the selection's pi).
    ``class_names`` (by code) name the classes in the warning."""
    if scheme not in SCHEMES:
        raise InputError(f"selection scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if scheme == "cpss" and n % 2:
        raise InputError(f"selection.resamples must be even with scheme cpss (complementary pairs), got {n}")
    y = np.asarray(y)
    how = labeled_resampling(y, labeled)
    if how == "split":
        fixed, groups = [np.empty(0, dtype=np.int64)] * n, _split_groups(y, scheme, class_names)
    else:
        fixed = rotated_labels(y, n, threshold, rng) if how == "rotated" else [np.flatnonzero(y >= 0)] * n
        groups = [np.flatnonzero(y < 0)]
    out: list[np.ndarray] = []
    if scheme == "cpss":
        for j in range(n // 2):
            a, b = [fixed[2 * j]], [fixed[2 * j + 1]]
            for g in groups:
                perm = rng.permutation(g)
                h = g.size // 2
                a.append(perm[:h])
                b.append(perm[h:2 * h])
            out += [np.sort(np.concatenate(a)), np.sort(np.concatenate(b))]
    else:
        for r in range(n):
            out.append(np.sort(np.concatenate([fixed[r]] + [rng.choice(g, size=g.size, replace=True) for g in groups])))
    return out


def _split_groups(y: np.ndarray, scheme: str, class_names) -> list[np.ndarray]:
    """The groups resampled separately when the labeled samples are split (:func:`_groups`); with
    cpss a class of one labeled sample joins the unlabeled samples (with a warning)."""
    groups = _groups(y)
    single = one_label_classes(y) if scheme == "cpss" else []
    if not single:
        return groups
    names = ", ".join(repr(str(class_names[c])) if class_names is not None else str(c) for c in single)
    warnings.warn(f"selection scheme cpss: class(es) {names} have one labeled sample, in one half of a pair "
                  "at most: the other half sees the class unlabeled (label a second sample of it, or use "
                  "scheme bootstrap)", UserWarning, stacklevel=3)
    lone = np.isin(y, single)
    return [g for g in groups if not lone[g[0]] and y[g[0]] >= 0] + [np.flatnonzero((y < 0) | lone)]


def one_label_classes(y: np.ndarray) -> list[int]:
    """The codes of the classes with exactly one labeled sample in ``y`` (-1 unlabeled)."""
    y = np.asarray(y)
    codes, counts = np.unique(y[y >= 0], return_counts=True)
    return [int(c) for c in codes[counts == 1]]


def ranks_from_order(order, p: int) -> np.ndarray:
    """Rank (1 = best) of every feature from an ordering best first; features absent from a
    partial ordering share the rank after the last listed one."""
    order = np.asarray(order, dtype=np.int64)
    r = np.full(p, order.size + 1, dtype=np.float64)
    r[order] = np.arange(1, order.size + 1)
    return r


def aggregate(ranks: np.ndarray, how: str = "mean_rank", weights=None) -> np.ndarray:
    """Aggregated score (lower = better) of each feature from ``ranks`` (methods first: M x p,
    or M x B x p for B resamples at once). ``stability_weighted``: the mean rank weighted by
    ``weights`` (one per method, :func:`method_weights`; equal when None)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if how == "mean_rank" or (how == "stability_weighted" and weights is None):
        return ranks.mean(axis=0)
    if how == "stability_weighted":
        return np.tensordot(np.asarray(weights, dtype=np.float64) / np.sum(weights), ranks, axes=1)
    if how == "rank_product":
        return np.exp(np.log(ranks).mean(axis=0))
    if how == "median_rank":
        return np.median(ranks, axis=0)
    raise InputError(f"selection aggregation must be one of {', '.join(AGGREGATIONS)}, got {how!r}")


def order_by(score: np.ndarray) -> np.ndarray:
    """Feature indices by increasing score, ties by column (stable)."""
    return np.argsort(np.asarray(score), kind="stable")


def positions_of(agg: np.ndarray) -> np.ndarray:
    """Place (1 = first, int32) of every feature in each row's order by increasing score (ties by column)."""
    agg = np.atleast_2d(agg)
    pos = np.empty(agg.shape, dtype=np.int32)
    np.put_along_axis(pos, np.argsort(agg, axis=1, kind="stable"), np.arange(1, agg.shape[1] + 1, dtype=np.int32)[None],
                      axis=1)
    return pos


def method_stability(resample_ranks: dict, top: int, alpha: float = 0.05) -> dict:
    """Each method's own stability: Nogueira's estimator of its top-``top`` lists over the
    resamples, with its (1 - alpha) confidence interval (``{"value", "ci_low", "ci_high"}``)."""
    out = {}
    for m, R in resample_ranks.items():
        R = np.asarray(R)
        nog = nogueira(top >= R, R.shape[1], alpha)
        out[m] = {"value": _finite(nog.stability), "ci_low": _finite(nog.lower), "ci_high": _finite(nog.upper)}
    return out


def method_weights(stability: dict) -> dict:
    """Weights of ``stability_weighted`` aggregation: each method's own stability
    (:func:`method_stability`) squared, 0 where it is no better than chance (<= 0 or undefined),
    so a method whose rankings do not reproduce across the resamples has next to no vote (EFSIS's
    stability-weighted function perturbation, Zhang & Jonassen, eq. 3, with Nogueira's
    chance-corrected measure). Squared because a ranking's noise enters a mean rank at the scale
    of the number of features: with weights proportional to the stability, methods at 0.04-0.09
    beside one at 0.32 (few labels) still pushed the planted markers out of the top q; squared,
    the consensus keeps what the reproducible method finds and gains where several agree
    (``benchmarks/bench_selection.py``). Equal weights when no method is better than chance. Sum 1."""
    w = {m: max(s["value"], 0.0) ** 2 if s["value"] is not None else 0.0 for m, s in stability.items()}
    total = sum(w.values())
    return {m: (v / total if total > 0 else 1.0 / len(w)) for m, v in w.items()}


def _finite(v) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


@dataclass
class Consensus:
    """The consensus of several methods over resamples (:func:`consensus`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per feature, by consensus rank: ``index`` (column in the data),
        ``consensus_rank``, ``frequency`` (share of the resamples whose top ``top`` of the
        aggregated ranking holds the feature), ``aggregated_rank`` (on the full data), each
        method's ``rank_<m>`` on the full data and ``frequency_<m>`` on its own.
    positions : numpy.ndarray
        B x p: place of every feature in each resample's aggregated ranking (1 = first).
    top : int
        q: the features each resample selects.
    stability : dict
        Each method's own stability (:func:`method_stability`).
    weights : dict
        Each method's weight in the aggregation (equal unless ``stability_weighted``).
    """

    table: pd.DataFrame
    positions: np.ndarray
    top: int
    stability: dict
    weights: dict

    @property
    def selected(self) -> np.ndarray:
        """B x p: True where the feature is in the top ``top`` of a resample."""
        return self.positions <= self.top


def consensus(full_ranks: dict, resample_ranks: dict, top: int, how: str = "mean_rank",
              threshold: float | None = None, silent=None) -> Consensus:
    """The consensus of methods over resamples (:class:`Consensus`).

    ``full_ranks``: method -> ranks (p,) on the full data; ``resample_ranks``: method -> ranks
    (B, p) on the B resamples (same resamples for every method). The table orders the features
    whose frequency is at least ``threshold`` (pi, the stable list) by frequency (descending), then
    every other feature by its aggregated full-data rank, ties by column; ``threshold=None``: every
    feature by frequency, then by aggregated full-data rank (the stability path's own order).
    ``silent``: per resample, True where it selects nothing (ranked without its labels,
    :func:`ssfs.experiment.stable_selection.without_labels`): its top ``top`` is empty.
    """
    methods = sorted(full_ranks)
    R = np.stack([np.asarray(resample_ranks[m], dtype=np.float64) for m in methods])  # (M, B, p)
    p = R.shape[2]
    top = min(int(top), p)
    stability = method_stability({m: resample_ranks[m] for m in methods}, top)
    weights = method_weights(stability) if how == "stability_weighted" else {m: 1.0 / len(methods) for m in methods}
    w = [weights[m] for m in methods]
    positions = positions_of(aggregate(R, how, w))  # (B, p)
    if silent is not None:
        positions[np.asarray(silent, dtype=bool)] = p + 1  # past every top q: selects nothing
    freq = (positions <= top).mean(axis=0)
    full_agg = aggregate(np.stack([full_ranks[m] for m in methods]), how, w)
    first = -freq if threshold is None else np.where(freq >= threshold, -freq, 1.0)  # 1: below the list
    order = np.lexsort((np.arange(p), full_agg, first))
    table = pd.DataFrame({"index": order, "consensus_rank": np.arange(1, p + 1), "frequency": freq[order],
                          "aggregated_rank": full_agg[order]})
    for m in methods:
        table[f"rank_{m}"] = np.asarray(full_ranks[m])[order].astype(np.int64)
    for m in methods:
        table[f"frequency_{m}"] = (np.asarray(resample_ranks[m]) <= top).mean(axis=0)[order]
    return Consensus(table=table, positions=positions, top=top, stability=stability, weights=weights)


def stability_path(cons: Consensus, names, *, n_features: int = 40, q_max: int | None = None) -> pd.DataFrame:
    """The stability path of the first ``n_features`` consensus features: their selection
    frequency at every q in 1..``q_max`` (default max(2 top, top + 10), at most p) from the
    same resamples and aggregation: long table ``feature, q, frequency``."""
    B, p = cons.positions.shape
    q_max = min(p, q_max or max(2 * cons.top, cons.top + 10))
    idx = cons.table["index"].to_numpy()[: min(n_features, p)]
    qs = np.arange(1, q_max + 1)
    pos = np.sort(cons.positions[:, idx], axis=0)  # (B, k)
    freq = np.stack([np.searchsorted(pos[:, j], qs, side="right") for j in range(idx.size)]) / B  # (k, Q)
    return pd.DataFrame({"feature": np.repeat(np.asarray(names)[idx].astype(str), qs.size),
                         "q": np.tile(qs, idx.size), "frequency": freq.ravel()})


def summary(cons: Consensus, names, *, sel: dict, methods, alpha: float = 0.05) -> dict:
    """summary.json content: the selected features, the stability of the procedure (Nogueira,
    top-q lists of the aggregated rankings) and of the list (top-n lists, n = its length),
    each method's own stability and weight, and the error bound of ``sel["assumption"]``
    (:func:`ssfs.experiment.error_bound.bound_of`; every bound in ``error_bound``)."""
    B, p = cons.positions.shape
    table, top, threshold = cons.table, cons.top, float(sel["threshold"])
    chosen = table[table["frequency"] >= threshold]
    nog = nogueira(cons.selected, p, alpha)
    n = int(len(chosen))
    listed = nogueira(cons.positions <= n, p, alpha) if 0 < n < p else None
    eb = error_bound(top, p, threshold, B, sel["scheme"])
    value, held = bound_of(eb, sel.get("assumption", "r_concave"))
    asked = top if sel.get("top", "auto") == "auto" else int(sel["top"])  # before capping at p
    return {
        "features": [str(names[i]) for i in chosen["index"]],
        "n_selected": n,
        "threshold": threshold, "top": int(top), "top_auto": sel.get("top") == "auto",
        "max_false": float(sel.get("max_false", 1.0)), "assumption": sel.get("assumption", "r_concave"),
        "resamples": int(B), "scheme": sel["scheme"], "aggregation": sel["aggregation"], "methods": list(methods),
        "n_features": int(p),
        "stability": {"measure": "nogueira", "value": _finite(nog.stability), "ci_low": _finite(nog.lower),
                      "ci_high": _finite(nog.upper), "alpha": alpha,
                      "of": f"the top {top} of the aggregated ranking over the {B} resamples"},
        "list_stability": None if listed is None else {
            "value": _finite(listed.stability), "ci_low": _finite(listed.lower), "ci_high": _finite(listed.upper),
            "of": f"the top {n} of the aggregated ranking over the {B} resamples"},
        "method_stability": cons.stability, "weights": cons.weights,
        "error_bound": {**eb, "bound": value, "bound_assumption": held},
        "note": (top_covers_all(asked, p) if asked >= p else None if n else
                 nothing_selected(table, names, top=top, threshold=threshold, resamples=B,
                                  stability=_finite(nog.stability))),
    }


def top_covers_all(top: int, p: int) -> str:
    """The note when ``top`` (q) is not below the number of features: every feature is in the
    top q of every resample, so all are 'selected' and the list says nothing."""
    return (f"top = {top} is not below the {p} features: every feature is in the top {top} of every resample, so "
            f"all {p} are selected and the selection frequencies carry no information; set top below {p} "
            "(e.g. a tenth of the features, or top: auto)")


def nothing_selected(table: pd.DataFrame, names, *, top: int, threshold: float, resamples: int,
                     stability: float | None) -> str:
    """Why no feature reached the threshold, and what to try: the consensus's most frequent
    feature, each method's own best frequency (methods that disagree dilute the consensus)."""
    best = table.iloc[int(np.argmax(table["frequency"].to_numpy()))]
    alone = []
    for col in [c for c in table.columns if c.startswith("frequency_")]:
        i = int(np.argmax(table[col].to_numpy()))
        alone.append(f"{col.removeprefix('frequency_')} {table[col].iloc[i]:.2f} ({names[table['index'].iloc[i]]})")
    stab = "undefined" if stability is None else f"{stability:.2f}"
    return (f"no feature reached selection frequency {threshold:g}: the most frequent, {names[best['index']]}, "
            f"was in the top {top} in a share {best['frequency']:.2f} of the {resamples} resamples"
            + (f"; each method alone reaches at most {', '.join(alone)}" if alone else "")
            + f". Stability (Nogueira) {stab}. More labeled samples, the methods that agree, or a lower threshold "
            "may give a list; the ranking is in consensus.tsv")
