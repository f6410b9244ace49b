"""k-means of ``propagate``'s label-free groups (``ssfs.methods._shared.kmeans``: COP-KMeans without
constraints from the k-means++ start): Lloyd's iterations by hand, the k-means++ start, and
scikit-learn's KMeans as the reference."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs.constraints import Constraints
from ssfs.methods._shared.clustering import cop_kmeans, plus_plus_centres
from ssfs.methods._shared.kmeans import kmeans


def _blobs(rng, sizes, centres, sd=0.3):
    return np.vstack([c + sd * rng.standard_normal((n, len(c))) for n, c in zip(sizes, centres, strict=True)])


def test_lloyd_by_hand():
    """Four points on a line: whatever two centres k-means++ starts from, Lloyd's steps end at the
    two pairs' means (0.5 and 10.5); the sum of squares is 4 x 0.25. Without constraints COP-KMeans
    is plain k-means, and its random start (Wagstaff et al.) is kept as the default."""
    Z = np.array([[0.0], [1.0], [10.0], [11.0]])
    for seed in range(5):
        labels = kmeans(Z, 2, seed=seed)
        np.testing.assert_array_equal(labels, [0, 0, 1, 1])
        centres = np.array([Z[labels == g].mean(axis=0) for g in range(2)])
        assert float(((Z - centres[labels]) ** 2).sum()) == pytest.approx(1.0, rel=1e-12)
    rng = np.random.default_rng(0)
    plain = cop_kmeans(Z, 2, Constraints.empty(), rng, n_init=3)
    assert len(set(plain[:2])) == 1 and len(set(plain[2:])) == 1 and plain[0] != plain[2]


def test_plus_plus_start_draws_by_squared_distance_and_stops_at_the_distinct_rows():
    """Every start is a row of Z; with two distinct rows a third centre has nothing left to
    draw from (all squared distances 0): two centres, and kmeans numbers its two groups by
    their first row."""
    Z = np.array([[0.0, 0.0]] * 5 + [[3.0, 4.0]] * 5)
    C = plus_plus_centres(Z, 3, np.random.default_rng(0))
    assert C.shape == (2, 2)
    assert {tuple(c) for c in C} == {(0.0, 0.0), (3.0, 4.0)}
    np.testing.assert_array_equal(kmeans(Z, 3), [0] * 5 + [1] * 5)


def test_separated_groups_are_found_and_numbered_by_their_first_row():
    rng = np.random.default_rng(1)
    Z = _blobs(rng, [30, 5, 40], [(0.0, 0.0, 0.0), (6.0, 0.0, 0.0), (0.0, 6.0, 0.0)])
    perm = rng.permutation(Z.shape[0])
    truth = np.repeat([0, 1, 2], [30, 5, 40])[perm]
    labels = kmeans(Z[perm], 3)
    assert labels[0] == 0 and set(labels[: np.flatnonzero(labels == 1)[0]]) == {0}  # numbered by first row
    _, first = np.unique(truth, return_index=True)
    np.testing.assert_array_equal(labels, np.argsort(np.argsort(first))[truth])  # the planted groups exactly
    np.testing.assert_array_equal(kmeans(Z[perm], 3), labels)  # the same seed: the same groups


def test_same_partition_and_sum_of_squares_as_scikit_learn():
    """scikit-learn's KMeans (k-means++, several starts) on blobs: the same partition and
    within-cluster sum of squares (one optimum; class 2 tolerance: the same sums in another order)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(2)
    Z = _blobs(rng, [50, 20, 80, 10], [(0, 0), (4, 0), (0, 4), (4, 4)], sd=0.5)
    ours = kmeans(Z, 4)
    ref = KMeans(4, n_init=10, random_state=0).fit(Z)
    assert adjusted_rand_score(ours, ref.labels_) == 1.0
    centres = np.array([Z[ours == g].mean(axis=0) for g in range(4)])
    inertia = float(((Z - centres[ours]) ** 2).sum())
    assert inertia == pytest.approx(ref.inertia_, rel=1e-10)
