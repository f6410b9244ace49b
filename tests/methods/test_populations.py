"""Populations the data separate that other groups miss (:mod:`ssfs.methods._shared.populations`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from ssfs.methods._shared.graph import knn_graph
from ssfs.methods._shared.populations import (
    MATCHED,
    SEPARATED,
    best_overlap,
    labeled_by_host,
    separation,
    smallest_population,
    unmatched_populations,
)


def _graph(edges, n):
    i, j = np.array(edges).T
    return sparse.csr_matrix((np.ones(i.size), (i, j)), shape=(n, n))


def test_separation_by_hand():
    """Group 0 = samples 0-2, group 1 = 3-5. Sample 0's neighbours 1, 2 (2 of at most min(2, 2) inside: 1);
    sample 1's 0, 3 (1 of 2: 1/2); sample 2's 0 (1 of min(1, 2): 1) -> group 0: (1 + 1/2 + 1) / 3. Group 1:
    sample 3's 1, 4, 5 (2 of min(3, 2): 1), 4's 3 (1), 5's 0, 1 (0 of 2: 0) -> 2/3. A group of one sample: NaN."""
    W = _graph([(0, 1), (0, 2), (1, 0), (1, 3), (2, 0), (3, 1), (3, 4), (3, 5), (4, 3), (5, 0), (5, 1), (6, 0)], 7)
    got = separation(W, np.array([0, 0, 0, 1, 1, 1, 2]))
    np.testing.assert_allclose(got[:2], [2.5 / 3, 2.0 / 3], rtol=0, atol=1e-15)
    assert np.isnan(got[2])


def test_best_overlap_by_hand():
    """Group 0 = {0, 1, 2, 3} against other groups {0, 1, 2} (Jaccard 3/4) and {3, 4, 5} (1/6);
    group 1 = {4, 5} against {3, 4, 5}: 2/3; samples of code -1 belong to no other group."""
    groups = np.array([0, 0, 0, 0, 1, 1, 2])
    other = np.array([0, 0, 0, 1, 1, 1, -1])
    np.testing.assert_allclose(best_overlap(groups, other), [0.75, 2 / 3, 0.0], rtol=0, atol=1e-15)


def test_labeled_by_host_by_hand():
    """Group 0 = {0, 1, 2}: host 0 (2 of its 3 samples), sample 1 labeled 0 -> True. Group 1 = {3, 4, 5}:
    host 1, its only label (sample 3) is 0 -> False. Group 2 = {6}: no label -> False."""
    groups = np.array([0, 0, 0, 1, 1, 1, 2])
    other = np.array([0, 0, 1, 1, 1, 0, 1])
    labels = np.array([-1, 0, -1, 0, -1, -1, -1])
    np.testing.assert_array_equal(labeled_by_host(groups, other, labels), [True, False, False])


def test_smallest_population():
    assert smallest_population(100) == 10 and smallest_population(2000) == 10 and smallest_population(10_000) == 50


def test_a_separate_small_cluster_the_other_groups_split_is_found_and_a_cut_of_a_continuum_is_not():
    """Planted: a 40-point cluster far from a 400-point blob; k-means-like groups cut the blob in
    two halves and keep the cluster. The other groups (labels' groups) split the cluster between
    two groups of the blob: it is separated (share of neighbours inside ~1) and unmatched; the
    halves are cuts of one continuum (their boundary points have neighbours across: separation
    below SEPARATED) and are matched anyway. A label of the class holding most of the cluster inside
    it makes it a part of that class."""
    rng = np.random.default_rng(0)
    blob = rng.normal(size=(400, 5))
    cluster = rng.normal(size=(40, 5)) * 0.5 + 8.0
    Z = np.vstack([blob, cluster])
    groups = np.r_[(blob[:, 0] > 0).astype(int), np.full(40, 2)]
    labels = np.r_[(blob[:, 0] > 0).astype(int), np.arange(40) % 2]  # the cluster split over both
    W = knn_graph(Z, 30)
    sep = separation(W, groups)
    assert sep[2] >= 0.99 and sep[:2].max() < SEPARATED, sep
    overlap = best_overlap(groups, labels)
    assert overlap[2] < 0.1 and overlap[:2].min() > MATCHED
    y = np.full(440, -1)
    y[[0, 1, 2, 3]] = labels[[0, 1, 2, 3]]  # labels in the blob only
    np.testing.assert_array_equal(unmatched_populations(W, groups, labels, y, 10), [False, False, True])
    assert not unmatched_populations(W, groups, labels, y, 41).any()  # too small
    labels_kept = np.r_[(blob[:, 0] > 0).astype(int), np.full(40, 2)]  # a group of its own matches it
    assert not unmatched_populations(W, groups, labels_kept, y, 10).any()
    host = np.bincount(labels[400:]).argmax()
    y[400 + np.flatnonzero(labels[400:] == host)[0]] = host  # a label of its host class inside: a part of that class
    assert not unmatched_populations(W, groups, labels, y, 10).any()


@pytest.mark.parametrize("k", [15, 30])
def test_separation_allows_for_groups_smaller_than_the_neighbourhood(k):
    """A 12-point cluster far from the rest: each point can have at most 11 neighbours inside, so
    its share is counted out of min(degree, 11): separation 1, at any k."""
    rng = np.random.default_rng(1)
    Z = np.vstack([rng.normal(size=(200, 4)), rng.normal(size=(12, 4)) * 0.3 + 10.0])
    groups = np.r_[np.zeros(200, dtype=int), np.ones(12, dtype=int)]
    assert separation(knn_graph(Z, k), groups)[1] == pytest.approx(1.0, abs=1e-12)
