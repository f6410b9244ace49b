"""Populations the data separate that other groups miss: a type nobody labeled, too small or too
far from the labeled ones for the labels' graph to give it a group of its own
(docs/labels_that_count.md, "A population the labels' groups miss").

A group of samples (e.g. k-means groups of the signal components) is a *separated population*
when its samples' neighbours on a kNN graph of the same space lie inside it: the mean over its
samples of the share of their neighbours in the group, out of the most they could have there
(min(degree, size - 1)), is at least :data:`SEPARATED`. A cut through a continuum (a group across
types, cut along a program's gradient) shares its boundary with the rest and stays below (medians
0.43-0.82 on ``ssfs.simulate``'s count scenarios, k = 30); a rare type the k-means groups isolate
is above (0.90-0.96, 40 of 2,000 cells); a labeled type cut in two may be too (up to 0.91), hence
the labels' rule below. It is *unmatched* by other groups (e.g. the groups the labels spread into)
when none of them overlaps it with a Jaccard index of :data:`MATCHED` or more (the labels' groups
split it, or hold it inside a larger group) and it holds no sample labeled with the class of its
host, the group holding most of its samples (a part of a labeled type holds that type's labels).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

#: a separated population's samples have at least this mean share of their possible neighbours inside it
SEPARATED = 0.85
#: a population is matched by another group overlapping it with at least this Jaccard index
MATCHED = 0.5


def smallest_population(n: int) -> int:
    """The fewest samples of a population of its own among ``n``: max(10, 0.5 % of n)."""
    return max(10, int(0.005 * n))


def separation(W, groups: np.ndarray) -> np.ndarray:
    """Per group code 0..G-1: the mean over its samples of the share of their neighbours on the
    graph W (its nonzero pattern) inside the group, out of min(degree, group size - 1); NaN for
    an empty group or one of a single sample."""
    P = sparse.csr_matrix(W, copy=False)
    g = np.asarray(groups, dtype=np.int64)
    G = int(g.max(initial=-1)) + 1
    degree = np.diff(P.indptr)
    same = g[P.indices] == np.repeat(g, degree)
    inside = np.bincount(np.repeat(np.arange(g.size), degree), weights=same, minlength=g.size)
    size = np.bincount(g, minlength=G)
    most = np.minimum(degree, size[g] - 1).astype(np.float64)
    share = np.divide(inside, most, out=np.zeros(g.size), where=most > 0)
    with np.errstate(invalid="ignore"):
        return np.where(size > 1, np.bincount(g, weights=share, minlength=G) / size, np.nan)


def contingency(groups: np.ndarray, other: np.ndarray) -> np.ndarray:
    """G x H counts of the samples in group g of ``groups`` and group h of ``other`` (codes >= 0;
    samples of code < 0 in ``other`` belong to none of its groups; at least one column)."""
    g = np.asarray(groups, dtype=np.int64)
    o = np.asarray(other, dtype=np.int64)
    G, H = int(g.max(initial=-1)) + 1, max(int(o.max(initial=-1)) + 1, 1)
    ok = o >= 0
    return sparse.csr_matrix((np.ones(int(ok.sum())), (g[ok], o[ok])), shape=(G, H)).toarray()


def best_overlap(groups: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Per group code 0..G-1 of ``groups``: the largest Jaccard index |A ∩ B| / |A ∪ B| between it
    and a group B of ``other`` (codes >= 0; samples of code < 0 belong to none), 0 for an empty one."""
    common = contingency(groups, other)
    sizes = np.bincount(np.asarray(groups, dtype=np.int64), minlength=common.shape[0])[:, None]
    union = sizes + common.sum(axis=0)[None, :] - common
    jaccard = np.divide(common, union, out=np.zeros_like(common), where=union > 0)
    return jaccard.max(axis=1) if common.shape[0] else np.zeros(0)


def labeled_by_host(groups: np.ndarray, other: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per group code 0..G-1 of ``groups``: whether it holds a sample labeled (``labels`` >= 0) with
    the code of its host, the group of ``other`` holding most of its samples (ties: the lowest code)."""
    g = np.asarray(groups, dtype=np.int64)
    lab = np.asarray(labels, dtype=np.int64)
    host = contingency(g, other).argmax(axis=1)
    hit = (lab >= 0) & (lab == host[g])
    return np.bincount(g[hit], minlength=host.size) > 0


def unmatched_populations(W, groups: np.ndarray, other: np.ndarray, labels: np.ndarray, min_size: int) -> np.ndarray:
    """Boolean per group code of ``groups``: a separated population (:func:`separation` >=
    :data:`SEPARATED` on W) of at least ``min_size`` samples that no group of ``other`` matches
    (:func:`best_overlap` < :data:`MATCHED`) and that holds no sample labeled with its host's code
    (:func:`labeled_by_host`: a part of a labeled type, cut along a program's gradient, holds that
    type's labels; a type nobody labeled holds none of the class its cells were spread into)."""
    size = np.bincount(np.asarray(groups, dtype=np.int64))
    return ((np.nan_to_num(separation(W, groups)) >= SEPARATED) & (size >= min_size)
            & (best_overlap(groups, other) < MATCHED) & ~labeled_by_host(groups, other, labels))
