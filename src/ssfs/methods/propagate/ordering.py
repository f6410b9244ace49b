"""How ``propagate`` orders the features from its scores: the features the groups explain first
(:func:`explained_features`), tiers and turns of two orders (:func:`with_unexplained`, :func:`in_turn`), and the groups'
up-markers in turn (:func:`class_turns`, :func:`with_class_turns`)."""

from __future__ import annotations

import numpy as np

from .._shared.class_stats import (
    ClassStatistics,
    benjamini_hochberg,
)
from .model import Propagation


def _rank(v: np.ndarray) -> np.ndarray:
    """0 for the largest value, NaN last, ties in index order."""
    return np.argsort(np.argsort(-np.nan_to_num(v, nan=-np.inf), kind="stable"), kind="stable")


def in_turn(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Scores whose order takes the ``first`` order and the ``second`` in turn: a feature's place
    is its better rank of the two, ties by ``first``; NaN where ``first`` is NaN."""
    by_first = _rank(first)
    key = np.minimum(by_first, _rank(second)) + by_first / (2.0 * max(first.size, 1))
    return np.where(np.isfinite(first), -key, np.nan)


def class_turns(per_class: str, model: Propagation) -> str:
    """How the groups' up-markers enter the order (``per_class``): as given, or "auto" = "leaders" (every group's
    best up-marker, :func:`with_class_turns` at depth 1, :func:`turning_markers`) where the R^2 of the labels'
    groups leads the order on the held-out labels' evidence (not :attr:`Propagation.free_leads`, nor ranking
    alone because the genes were rescaled one by one, :attr:`Propagation.free_rescaled`) and 3 groups or more hold
    samples (of two groups every feature the R^2 ranks tells both apart; a second group's leader only took a place
    from a marker: 2 types of counts, the log-normalised genes higher in the type without markers), else "none".

    The R^2 of a one-way ANOVA ranks first whatever tells the easiest classes apart; on real arrays of many
    classes the top 20 then held markers of a few classes only (ORL's 40 faces at 3 labels per class: linear SVM
    on the top 1-20, 0.305 against ``rank_genes_groups``' 0.413; with every group's leader in turn 0.432; the
    other face sets +0.02 to +0.10, the 12 microarrays level, PBMC 0.645 -> 0.663; docs/labels_that_count.md,
    "Every group's leader"). Where the label-free order leads, the held-out labels found the groups no better than
    it (planted 8 and 20 classes at 2-3 labels per class, groups 16-23 % right): their leaders were noise there
    (recall 0.675 -> 0.594)."""
    if per_class != "auto":
        return per_class
    return "none" if model.free_leads or model.free_rescaled or np.unique(model.groups).size < 3 else "leaders"


#: false discovery rate of the features the groups explain (:func:`explained_features`)
EXPLAINED_FDR = 0.05
#: how the features the groups do not explain are ordered (the ``unexplained`` parameter)
UNEXPLAINED = ("interleave", "r2")


def explained_pvalues(r2: np.ndarray, weight: np.ndarray, groups: np.ndarray, n_batches: int = 1) -> np.ndarray:
    """Every feature's p-value for "the groups explain its R^2": the one-way ANOVA's F =
    R^2 / (1 - R^2) (n - G - B + 1) / (G - 1) with n the samples' total ``weight`` (labeled 1,
    propagated as weighted), G the groups holding weight and B the batches; 1 where R^2 is not
    finite or nothing can be tested (one group, no degrees of freedom)."""
    from scipy.special import fdtrc  # F survival function (scipy.stats costs a ranking job 0.4 s of imports)

    G = np.unique(groups[weight > 0]).size
    dof = float(weight.sum()) - G - (n_batches - 1)
    out = np.ones(r2.size)
    ok = np.isfinite(r2)
    if G < 2 or dof <= 0 or not ok.any():
        return out
    r = np.clip(r2[ok], 0.0, 1.0 - 1e-15)
    out[ok] = fdtrc(G - 1, dof, r / (1.0 - r) * dof / (G - 1))
    return out


def explained_features(r2: np.ndarray, weight: np.ndarray, groups: np.ndarray, q: float = EXPLAINED_FDR,
                       n_batches: int = 1, pvalues: np.ndarray | None = None) -> np.ndarray:
    """The features whose R^2 the groups explain beyond chance: :func:`explained_pvalues`
    (or the given ``pvalues``), Benjamini-Hochberg at ``q`` over the features. The groups were
    learned from the same data, so this sorts the ranking into what the labels explain and what
    they do not; it is not a test to report (:func:`crossfit_pvalues` removes the worst of that
    circularity, the refined graph's own genes)."""
    p = explained_pvalues(r2, weight, groups, n_batches) if pvalues is None else pvalues
    return benjamini_hochberg(p) <= q


#: how the scores take in the per-class markers (the ``per_class`` parameter; :func:`with_class_turns`)
PER_CLASS = ("auto", "none", "interleave", "leaders")


#: Benjamini-Hochberg level a group's leader must pass to take a turn (:func:`turning_markers`)
LEADER_FDR = 0.05


def turning_markers(stats: ClassStatistics, how: str) -> tuple[np.ndarray, int | None]:
    """(class_t, depth) for :func:`with_class_turns` from the fit's per-group statistics (:func:`_group_statistics`:
    Welch's t of every group that holds a sample, a type nobody labeled included, against all other samples, from
    the final groups and weights): every group's up-markers with ``how`` "interleave"; with "leaders" depth 1 and
    only the groups whose best up-marker passes :data:`LEADER_FDR` (its Benjamini-Hochberg q over the features): a
    group the graph did not find, whose best t is the largest of noise, leaves the order as it is (10 planted
    classes, one with 20 strong markers and nine with 3 weak ones, 3 labels per class: 11-13 of the top 20 were
    markers with every leader, 18-20 with those that pass, as without leaders; ORL 0.431 and 0.432)."""
    t, q = stats.scores, stats.pvals_adj
    if how != "leaders":
        return t, None
    best = np.argmax(t, axis=1)
    return t[q[np.arange(t.shape[0]), best] < LEADER_FDR], 1


def _places(*keys: np.ndarray) -> np.ndarray:
    """Place (0 = first) of every item in the lexicographic order of ``keys`` (first key first, all
    ascending), equal keys sharing the place of the first of them (a copy ties its feature)."""
    if len(keys) == 1:  # one key (refined graphs' genes, every call): a sort and a search, 6x np.unique's speed
        return np.searchsorted(np.sort(keys[0]), keys[0], side="left")
    rows, inverse, counts = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True, return_counts=True)
    return np.r_[0, np.cumsum(counts)[:-1]][inverse.ravel()]


def with_class_turns(scores: np.ndarray, class_t: np.ndarray, depth: int | None = None) -> np.ndarray:
    """Scores whose order takes in turn a feature from the ``scores`` order and one from the
    groups' marker order (a feature's place is its better place of the two; ties: ``scores``),
    the groups' order being each group's best up-marker by Welch's t (``class_t``, groups x p:
    :func:`turning_markers`, a type nobody labeled included), then each one's second, ... as scanpy's
    ``rank_genes_groups`` lists read group by group (ties: ``scores``); with ``depth`` only each group's first
    ``depth`` markers take turns, the others keep their ``scores`` place. The R^2 of a one-way ANOVA
    ranks first the features that tell the easiest class apart; with few labels on real
    multi-class arrays some classes then had no marker in the top 10 (docs/labels_that_count.md,
    "Per-class markers in the ranking"). Scores are (m - place) / m over the m features with a
    finite score (1 = first); NaN stays NaN."""
    finite = np.isfinite(scores)
    out, m = np.full(scores.shape, np.nan), int(finite.sum())
    if m == 0:
        return out
    neg = lambda v: -np.nan_to_num(np.asarray(v, dtype=np.float64)[..., finite], nan=-np.inf)  # noqa: E731
    by_score = _places(neg(scores))
    in_class = np.min([_places(t) for t in neg(class_t)], axis=0) if len(class_t) else by_score
    by_class = _places(in_class, by_score)
    if depth is not None:
        by_class = np.where(in_class < depth, by_class, m)
    out[finite] = (m - _places(np.minimum(by_score, by_class), by_score)) / m
    return out


def with_unexplained(r2: np.ndarray, label_free: np.ndarray, explained: np.ndarray, ahead=(),
                     free_first: bool = False, explained_in_turn: bool = False) -> np.ndarray:
    """Scores whose order is: the ``explained`` features by R^2, then the others taken in turn
    from their R^2 order and their ``label_free`` order (a feature's place is its better rank of
    the two; ties: R^2), as :func:`top_genes` interleaves ("balanced"). Explained features keep
    their R^2; the others get t (m - i) / (m + 1) for the i-th of m, below t = the smallest
    explained R^2 (or the largest R^2 when none is): structure the labels do not explain (a type
    nobody labeled, too rare to form a group of its own) ranks before noise the groups happen
    to separate a little. ``ahead``: (features, key) pairs, each a tier placed in that order after
    the explained features and before the others, ordered by its key (a feature in two tiers is in
    the first). Equal keys share a place (the first of theirs): a copy scores as its feature. NaN
    stays NaN. ``free_first``: the others by their ``label_free`` order alone (ties: R^2; :func:`free_leads`).
    ``explained_in_turn``: the explained features do not rank first but take turns, by their R^2, with the
    ``label_free`` order, which alone ranks the rest once they are placed (a feature's place is its better place of
    the two; ties: the explained one, then the label-free order, then the R^2): where the held-out labels cannot
    judge the groups (:func:`held_out_judges`), nothing judged either order (session 49)."""
    finite = np.isfinite(r2)
    first = explained & (not explained_in_turn)
    out = np.where(first, r2, np.nan)
    placed = first.copy()
    parts = []  # (features, their places in the order), tier after tier
    for features, key in ahead:
        tier = np.flatnonzero(features & ~placed & finite)
        parts.append((tier, _places(-np.nan_to_num(key[tier], nan=-np.inf))))
        placed |= features
    rest = np.flatnonzero(~placed & finite)
    by_r2, by_free = (_places(-np.nan_to_num(v[rest], nan=-np.inf)) for v in (r2, label_free))
    if explained_in_turn:
        turning = explained[rest]
        by_explained = np.full(rest.size, rest.size)
        by_explained[turning] = _places(-r2[rest][turning])
        parts.append((rest, _places(np.minimum(by_explained, by_free), ~turning, by_free, by_r2)))
    else:
        parts.append((rest, _places(by_free, by_r2) if free_first else _places(np.minimum(by_r2, by_free), by_r2)))
    m = sum(f.size for f, _ in parts)
    if m == 0:
        return out
    t = float(np.min(r2[explained])) if explained.any() else float(np.nanmax(r2))
    start = 0
    for features, places in parts:  # equal keys share a place: a copy scores as its feature
        out[features] = t * (m - start - places) / (m + 1)
        start += features.size
    return out
