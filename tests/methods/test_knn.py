"""knn_search: exact as documented (ties to the lower index on exactly tied data),
bounded-memory blocks, float32 blocks and NN-descent for large n."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_iris

from ssfs.errors import InputError
from ssfs.methods._shared.graph import knn_search


def _reference(X, k):
    """Exact brute force: integer-valued data, so float64 distances are exact; order (d2, index)."""
    X = np.asarray(X, dtype=float)
    n = len(X)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    o = np.lexsort((np.broadcast_to(np.arange(n), (n, n)), D), axis=1)[:, :k]
    return o, np.take_along_axis(D, o, axis=1)


def _tied_iris():
    # iris x 10 is integer-valued (exact arithmetic in float64) and has duplicated rows;
    # adding 20 more duplicates makes many distances exactly tied, including zeros
    X = load_iris().data * 10
    return np.vstack([X, X[:20]]) + 1000.0  # a large offset stresses the Gram trick


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("as_sparse", [False, True])
@pytest.mark.parametrize("block_bytes", [1 << 12, 16 * 1024**2])
def test_ties_exact_on_tied_data(precision, as_sparse, block_bytes):
    X = _tied_iris()
    ref_i, ref_d = _reference(X, 10)
    A = sparse.csr_matrix(X) if as_sparse else X
    ind, d2 = knn_search(A, 10, block_bytes=block_bytes, precision=precision, method="exact")
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(d2, ref_d)


def test_duplicates_are_each_others_nearest_lower_index_first():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    ind, d2 = knn_search(X, 2, method="exact")
    np.testing.assert_array_equal(ind, [[2, 4], [3, 0], [0, 4], [1, 0], [0, 2]])
    np.testing.assert_array_equal(d2, [[0, 0], [0, 2], [0, 0], [0, 2], [0, 0]])


def test_all_others_when_k_is_n_minus_1():
    X = np.arange(5.0)[:, None] ** 2
    ind, d2 = knn_search(X, 4)
    np.testing.assert_array_equal(ind[0], [1, 2, 3, 4])
    np.testing.assert_array_equal(d2[0], [1, 16, 81, 256])


def test_float32_blocks_identical_on_random_data():
    X = np.random.default_rng(0).normal(size=(700, 60)) * 3 + 50
    a = knn_search(X, 7, precision="float64", block_bytes=1 << 16)
    b = knn_search(X, 7, precision="float32")
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def _tied_fractions(n=2400, p=12, seed=0):
    """Non-integer data with exactly tied distances: multiples of 1/4 (exact in binary), duplicated
    rows; n and p where precision="auto" takes float32 Gram blocks."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-8, 8, size=(n, p)) / 4.0 + 0.25
    X[n // 2:n // 2 + 200] = X[:200]
    return X


def test_auto_precision_float32_blocks_exact_on_tied_fractions():
    from ssfs.methods._shared.graph import _center, _gram_dtype

    X = _tied_fractions()
    assert _gram_dtype(_center(X), None) == np.float32
    ind, d2 = knn_search(X, 10)  # auto: float32 blocks
    ref_i, ref_d = knn_search(X, 10, precision="float64", block_bytes=1 << 20)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(d2, ref_d)
    for i in (0, 1, 1300):  # ties to the lower index, against the direct distances of every sample
        d = ((X - X[i]) ** 2).sum(axis=1)
        d[i] = np.inf
        np.testing.assert_array_equal(ind[i], np.lexsort((np.arange(len(X)), d))[:10])


def test_float32_refused_outside_its_safe_range():
    """Magnitudes whose float32 products would overflow or leave the normal range are searched
    in float64 (same neighbours as the unscaled data: scaling by a power of two is exact)."""
    from ssfs.methods._shared.graph import _center, _gram_dtype

    X = np.random.default_rng(3).normal(size=(300, 6))
    ref = knn_search(X, 5, precision="float64")
    for scale in (2.0**60, 2.0**-60):
        assert _gram_dtype(_center(X * scale), np.float32) == np.float64
        ind, d2 = knn_search(X * scale, 5, precision="float32")
        np.testing.assert_array_equal(ind, ref[0])
        np.testing.assert_array_equal(d2, ref[1] * scale**2)


def test_pair_distances_do_not_depend_on_layout_or_block():
    """The exact re-measure gathers rows of a C-ordered copy in cache-sized blocks; each pair's sum
    is over its own row of differences, so Fortran order (scipy.io.loadmat) and the block size
    change nothing."""
    from ssfs.methods._shared.graph import _sq_dists_of_pairs

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3000))
    rows, cols = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    ref = np.einsum("ij,ij->i", X[rows] - X[cols], X[rows] - X[cols])
    for A in (X, np.asfortranarray(X)):
        for block in (None, 1, 7, 4096):
            np.testing.assert_array_equal(_sq_dists_of_pairs(A, rows, cols, block=block), ref)
    both, mirror = np.concatenate([rows, cols]), np.concatenate([cols, rows])  # mutual pairs: measured once
    np.testing.assert_array_equal(_sq_dists_of_pairs(X, both, mirror), np.concatenate([ref, ref]))
    few = X[:, :8]  # below MIRROR_MIN_FEATURES both directions are measured: the same bits
    ref_few = np.einsum("ij,ij->i", few[rows] - few[cols], few[rows] - few[cols])
    assert _sq_dists_of_pairs(few, both, mirror).tobytes() == np.concatenate([ref_few, ref_few]).tobytes()


@pytest.mark.slow  # numba compiles pynndescent on first use (~20 s idle)
def test_nndescent_finds_planted_neighbours():
    # 400 tight pairs far apart: each sample's nearest neighbour is its twin
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(400, 8)) * 100
    X = np.repeat(centres, 2, axis=0) + rng.normal(size=(800, 8)) * 0.01
    ind, d2 = knn_search(X, 1, method="nndescent")
    np.testing.assert_array_equal(ind[:, 0], np.arange(800) ^ 1)
    assert np.all(np.diff(knn_search(X, 5, method="nndescent")[1], axis=1) >= 0)
    # seeded: identical reruns
    np.testing.assert_array_equal(knn_search(X, 5, method="nndescent")[0], knn_search(X, 5, method="nndescent")[0])


def test_bad_search_options():
    X = np.zeros((5, 2))
    with pytest.raises(InputError):
        knn_search(X, 5)
    with pytest.raises(InputError):
        knn_search(X, 2, method="annoy")
    with pytest.raises(InputError):
        knn_search(X, 2, precision="float16")


def _counts_with_duplicates(seed, n=400, p=12):
    """Text counts on a few words (an EnsCLS member of PCMAC): most rows all-zero or repeated."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.08, size=(n, p)).astype(float)
    X[rng.random(n) < 0.1] *= 3.0
    return X


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("as_sparse", [False, True])
@pytest.mark.parametrize("k", [1, 10])
def test_duplicated_count_rows_searched_once(seed, as_sparse, k, monkeypatch):
    """Issue #16: with many duplicated rows only the distinct rows are searched (k + 1 including
    themselves) and integer data take the exact Gram trick; the neighbours, ties to the lower index
    among hundreds of tied all-zero rows included, are those of brute force."""
    from ssfs.methods._shared import graph

    X = _counts_with_duplicates(seed)
    reps, where = graph._distinct_rows(X)
    assert reps.size < 0.5 * len(X) and np.array_equal(X[reps][where], X)
    calls = []
    real = graph._knn_queries
    monkeypatch.setattr(graph, "_knn_queries", lambda X, q, *a: calls.append(q) or real(X, q, *a))
    ind, d2 = knn_search(sparse.csr_matrix(X) if as_sparse else X, k, method="exact")
    assert calls and calls[0] is not None and len(calls[0]) == reps.size
    ref_i, ref_d = _reference(X, k)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(d2, ref_d)


@pytest.mark.parametrize("k", [1, 5])
def test_duplicated_real_rows_as_brute_force(k):
    """Non-integer rows with duplicates: the distinct rows' candidate search, re-measured."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    X = np.vstack([X, X[:40], X[:40], X[:5]])
    ind, d2 = knn_search(X, k, method="exact")
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    n = len(X)
    ref = np.lexsort((np.broadcast_to(np.arange(n), (n, n)), D), axis=1)[:, :k]
    # equal distances of copies are exact (the same row measured), so the order is brute force's
    np.testing.assert_array_equal(ind, ref)
    np.testing.assert_allclose(d2, np.take_along_axis(D, ref, axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("values", [1000, 3])
def test_integer_rows_strided_bound(values):
    """Integer data, few duplicates: the k-th smallest of every step-th column bounds the candidates
    (step = 800 // (32 k) = 5); with values < 3 most distances tie and the full partition runs."""
    X = np.random.default_rng(4).integers(0, values, size=(800, 6)).astype(float)
    ind, d2 = knn_search(X, 5, method="exact")
    ref_i, ref_d = _reference(X, 5)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(d2, ref_d)


@pytest.mark.parametrize("seed", [0, 1])
def test_refine_of_candidates_row_by_row_is_the_lexsort_of_all(seed):
    """The search's candidates (row by row, columns ascending) ordered per row by a stable sort on
    their distances: the same neighbours and distances as one lexsort on (row, distance, column),
    ties (values on a grid of halves: many equal distances) to the lower column; candidates in
    another order (NN-descent's) take the lexsort."""
    from ssfs.methods._shared.graph import _exact_refine, _sq_dists_of_pairs

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(40, 3)) / 2.0 + 0.25
    queries = np.sort(rng.choice(40, 25, replace=False))
    k = 4
    mask = rng.random((queries.size, 40)) < 0.5
    mask[:, :k + 1] = True  # at least k candidates other than the query itself
    mask[np.arange(queries.size), queries] = False
    rows, cols = np.nonzero(mask)
    rows = queries[rows]
    d = _sq_dists_of_pairs(X, rows, cols)
    o = np.lexsort((cols, d, rows))
    first = np.searchsorted(rows[o], queries)[:, None] + np.arange(k)
    ind, d2 = _exact_refine(X, rows, cols, queries, k)
    np.testing.assert_array_equal(ind, cols[o][first])
    assert d2.tobytes() == d[o][first].tobytes()
    assert len(np.unique(d)) < d.size / 4  # ties were there to break
    shuffled = rng.permutation(rows.size)
    ind_s, d2_s = _exact_refine(X, rows[shuffled], cols[shuffled], queries, k)
    np.testing.assert_array_equal(ind_s, ind)
    np.testing.assert_array_equal(d2_s, d2)


def test_subset_step_follows_the_size():
    """The first bound's columns: about sqrt(2 n k) of them (every column below 4.5 k samples)."""
    from ssfs.methods._shared.graph import _subset_step

    assert [_subset_step(n, 15) for n in (60, 67, 68, 350, 700, 2000, 20_000)] == [1, 1, 2, 3, 5, 8, 26]


@pytest.mark.parametrize("step", [1, 2, 7, 40])
def test_subset_step_changes_the_cost_not_the_neighbours(step, monkeypatch):
    """Whatever columns give the first bound on each row's k-th distance, the neighbours and their
    distances are those of brute force, exact ties to the lower index (quarters: many equal distances,
    200 duplicated rows; a non-integer grid, so the Gram-trick bound path runs, not the integer one)."""
    from ssfs.methods._shared import graph

    X = _tied_fractions(n=600, p=5, seed=2)
    monkeypatch.setattr(graph, "_subset_step", lambda n, k: step)
    ind, d2 = knn_search(X, 9, precision="float64")
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.lexsort((np.broadcast_to(np.arange(len(X)), D.shape), D), axis=1)[:, :9]
    np.testing.assert_array_equal(ind, ref)
    np.testing.assert_array_equal(d2, np.take_along_axis(D, ref, axis=1))
