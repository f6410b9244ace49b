"""Building blocks of ``propagate`` (issue #28): parallel analysis on a column-permuted copy,
label spreading and the harmonic function against their closed forms and scikit-learn,
class mass normalisation, held-out agreement, groups for unreached samples, R^2."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from ssfs.methods._shared.class_stats import variance_explained
from ssfs.methods._shared.propagation import (
    class_mass_normalize,
    graph_agreement,
    harmonic,
    held_out_agreement,
    joined_unreached,
    normalized_affinities,
    one_hot_labels,
    propagate,
    reach_floor,
    spread,
    unreached_groups,
)
from ssfs.methods._shared.representation import pca_embedding
from ssfs.methods._shared.signal import canonical_rows, permuted_columns, signal_dims, standardized


def _clusters(sizes=(30, 30, 30), p=20, sep=6.0, seed=0):
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(len(sizes)), sizes)
    centres = rng.normal(0, sep, (len(sizes), p))
    return centres[t] + rng.normal(size=(t.size, p)), t


def _knn(X, k=5):
    from ssfs.methods._shared.graph import knn_graph

    return knn_graph(X, k)


# ----------------------------------------------------------------------- parallel analysis
def test_permuted_columns_keep_values_and_ignore_the_order_of_samples_and_features():
    X, _ = _clusters()
    P = permuted_columns(X)
    np.testing.assert_array_equal(np.sort(P, axis=0), np.sort(X, axis=0))  # every column keeps its values
    assert abs(np.corrcoef(P.T)[np.triu_indices(X.shape[1], 1)]).mean() < 0.2  # co-variation gone
    rows, cols = np.random.default_rng(1).permutation(X.shape[0]), np.random.default_rng(2).permutation(X.shape[1])
    Q = permuted_columns(X[rows][:, cols])  # the same matrix up to the order of its rows
    np.testing.assert_array_equal(Q[np.lexsort(Q.T[::-1])], P[:, cols][np.lexsort(P[:, cols].T[::-1])])
    S = permuted_columns(sparse.csr_matrix(X))
    np.testing.assert_array_equal(S.toarray(), P)
    assert sorted(canonical_rows(X)) == list(range(X.shape[0]))


def test_row_moments_by_blocks_by_hand_and_unit_free(monkeypatch):
    from ssfs.methods._shared import signal

    X = np.array([[0.0, 2.0, -1.0], [3.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    expected = [[1.0, 5.0, 7.0], [3.0, 9.0, 27.0], [1.0, 0.5, 0.25]]  # sums of x, x x, x x x per row
    monkeypatch.setattr(signal, "MOMENT_BLOCK", 2)  # one row per block
    for A in (X, sparse.csr_matrix(X)):
        np.testing.assert_array_equal(signal._row_moments(A), expected)
        np.testing.assert_array_equal(signal._row_moments(A, 0.25), np.multiply(expected, [0.25, 0.0625, 0.015625]))
    assert signal.unit_factor(X) == 0.25 and signal.unit_factor(sparse.csr_matrix(-X)) == 0.25
    assert signal.unit_factor(np.zeros((2, 2))) == 1.0
    Y = np.random.default_rng(3).gamma(1.0, size=(40, 12))
    np.testing.assert_array_equal(canonical_rows(Y * 1024.0), canonical_rows(Y))  # X's unit does not count


@pytest.mark.parametrize("block", [1 << 20, 40, 1])
def test_row_moments_are_sequential_sums_in_sorted_order_whatever_the_block(block, monkeypatch):
    """Every row's sums of x, x^2, x^3 add its sorted values one after the other (not numpy's pairwise
    sums along memory), bit for bit, whether a block holds many rows, a few or one (``block`` // 40
    values: rows of 40)."""
    from ssfs.methods._shared import signal

    X = np.random.default_rng(5).standard_normal((7, 40)) * np.logspace(-3, 3, 40)
    monkeypatch.setattr(signal, "MOMENT_BLOCK", block)
    expected = np.zeros((7, 3))
    for i, row in enumerate(np.sort(X, axis=1)):
        for v in row:
            expected[i] += [v, v * v, v * v * v]
    assert signal._row_moments(X).tobytes() == expected.tobytes()


def test_column_shifts_hash_each_columns_weighted_sum_in_canonical_order():
    """A column's shift hashes sum_r w_r x_(r) over its values in canonical row order, added row after
    row (a cumulative sum's last row, bit for bit), with a fixed weight sequence w: X and X * 2^k alike."""
    from ssfs.methods._shared import signal

    X = np.random.default_rng(6).standard_normal((50, 9)) * np.logspace(-2, 2, 9)
    pos = canonical_rows(X)
    w = np.random.default_rng(20261127).standard_normal(50)
    c = np.cumsum(signal.unit_free(X)[np.argsort(pos)] * w[:, None], axis=0)[-1]
    expected = (signal._mix(c) % np.uint64(50)).astype(np.int64)
    np.testing.assert_array_equal(signal._column_shifts(X, pos), expected)
    np.testing.assert_array_equal(signal._column_shifts(X * 8.0, pos), expected)
    assert np.unique(expected).size > 5  # the columns move by different amounts


def test_signal_dims_finds_the_planted_components():
    rng = np.random.default_rng(0)
    n, p = 300, 200
    X = rng.normal(size=(n, 3)) @ (3.0 * rng.normal(size=(3, p))) / np.sqrt(p) * 4 + rng.normal(size=(n, p))
    Xs = standardized(X)
    d, null = signal_dims(Xs, pca_embedding(Xs, 20))
    assert d == 3
    assert 2.8 < null < 4.2  # Marchenko-Pastur edge of unit noise (1 + sqrt(p / n))^2 = 3.3, plus its fluctuation
    d_noise, _ = signal_dims(standardized(rng.normal(size=(n, p))), pca_embedding(rng.normal(size=(n, p)), 20))
    assert d_noise == 2  # nothing above noise: the minimum


# ----------------------------------------------------------------------- propagation
def test_spread_is_zhou_et_al_closed_form_and_scikit_learns_label_spreading():
    X, t = _clusters(seed=1)
    W = _knn(X, 6)
    y = np.full(t.size, -1)
    y[[0, 1, 30, 31, 60, 61]] = t[[0, 1, 30, 31, 60, 61]]
    Y = one_hot_labels(y, 3)
    F = spread(W, Y, alpha=0.9, tol=1e-12)
    d = np.asarray(W.sum(axis=1)).ravel()
    S = W.toarray() / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(F, 0.1 * np.linalg.solve(np.eye(t.size) - 0.9 * S, Y), atol=1e-10)
    from sklearn.semi_supervised import LabelSpreading

    ls = LabelSpreading(kernel=lambda a, b: W.toarray(), alpha=0.9, max_iter=5000, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(F / F.sum(axis=1, keepdims=True), ls.label_distributions_, atol=1e-8)


def _spread_by_products(W, Y, alpha, tol=1e-6):
    """spread as it was written before issue 32's reuse of its buffers: D^-1/2 W D^-1/2 by two sparse
    products, every conjugate-gradient step in new arrays (the reference for the same bits)."""
    W = sparse.csr_matrix(W, dtype=np.float64)
    d = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)
    S = sparse.csr_matrix(sparse.diags(inv) @ W @ sparse.diags(inv))
    X, R = np.zeros_like(Y), (1.0 - alpha) * Y
    Pd, rr = R.copy(), np.einsum("ij,ij->j", R, R)
    stop = (tol**2) * np.maximum(rr, 1e-300)
    for _ in range(2000):
        if np.all(rr <= stop):
            break
        MP = Pd - alpha * (S @ Pd)
        pmp = np.einsum("ij,ij->j", Pd, MP)
        a = np.divide(rr, pmp, out=np.zeros_like(rr), where=pmp > 0)
        X += Pd * a
        R -= MP * a
        rr_new = np.einsum("ij,ij->j", R, R)
        b = np.divide(rr_new, rr, out=np.zeros_like(rr), where=rr > 0)
        Pd = R + Pd * b
        rr = rr_new
    return X


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spread_gives_the_bits_of_the_two_products_and_fresh_arrays(seed):
    """The scaled graph built entry by entry and the solver's reused buffers change no bit: weighted
    graphs with an isolated sample, a non-canonical graph (duplicate entries: the products sum them)."""
    rng = np.random.default_rng(seed)
    X, t = _clusters(seed=seed)
    W = sparse.csr_matrix(_knn(X, 6).multiply(rng.uniform(0.1, 3.0, (t.size, t.size))))
    W = sparse.csr_matrix(W.maximum(W.T))
    W = sparse.lil_matrix(W)
    W[5, :] = 0
    W[:, 5] = 0  # an isolated sample
    W = sparse.csr_matrix(W)
    y = np.full(t.size, -1)
    y[rng.choice(t.size, 9, replace=False)] = t[rng.choice(t.size, 9, replace=False)]
    Y = one_hot_labels(y, 3)
    assert spread(W, Y, 0.99).tobytes() == _spread_by_products(W, Y, 0.99).tobytes()
    d = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)
    S, ref = normalized_affinities(W, inv), sparse.csr_matrix(sparse.diags(inv) @ W @ sparse.diags(inv))
    assert S.data.tobytes() == ref.data.tobytes() and np.array_equal(S.indices, ref.indices)
    assert np.array_equal(S.indptr, ref.indptr) and S.nnz == ref.nnz
    dup = sparse.csr_matrix((np.r_[W.data, 0.5, 0.25], np.r_[W.indices, 1, 1], W.indptr.copy()), shape=W.shape)
    dup.indptr[1:] += 2  # row 0 holds two more entries in column 1 (not canonical)
    dup = sparse.csr_matrix((np.r_[0.5, 0.25, W.data], np.r_[1, 1, W.indices], dup.indptr), shape=W.shape)
    assert not dup.has_canonical_format
    assert spread(dup, Y, 0.9).tobytes() == _spread_by_products(dup, Y, 0.9).tobytes()


def test_harmonic_is_the_closed_form_with_labels_clamped():
    X, t = _clusters(seed=2)
    W = _knn(X, 6).toarray()
    lab = np.zeros(t.size, dtype=bool)
    lab[[0, 30, 60]] = True
    Y = one_hot_labels(np.where(lab, t, -1), 3)
    F = harmonic(sparse.csr_matrix(W), Y, lab, tol=1e-12)
    u, l_ = ~lab, lab
    L = np.diag(W.sum(axis=1)) - W
    np.testing.assert_allclose(F[u], np.linalg.solve(L[np.ix_(u, u)], W[np.ix_(u, l_)] @ Y[l_]), atol=1e-6)
    np.testing.assert_array_equal(F[lab], Y[lab])
    assert (F[u].argmax(axis=1) == t[u]).mean() == 1.0


def test_class_mass_normalisation_by_hand():
    F = np.array([[2.0, 1.0], [2.0, 1.0], [0.0, 2.0]])  # masses 4 and 4
    np.testing.assert_allclose(class_mass_normalize(F, np.array([0, -1, -1])), F / 8)
    y = np.array([0, 0, 1])  # labeled shares 2/3, 1/3
    np.testing.assert_allclose(class_mass_normalize(F, y, "labeled"), F * np.array([2 / 3, 1 / 3]) / 4)


def test_held_out_agreement_high_on_clusters_chance_on_noise():
    X, t = _clusters((40, 40), seed=3)
    y = np.full(t.size, -1)
    y[::4] = t[::4]
    acc, chance, pred, _ = graph_agreement(_knn(X, 5), y, 2)
    assert acc == 1.0 and chance == pytest.approx(0.5) and (pred == t[::4]).all()
    noise = np.random.default_rng(0).normal(size=X.shape)
    acc_noise = graph_agreement(_knn(noise, 5), y, 2)[0]
    assert acc_noise < 0.75


def test_held_out_agreement_stops_once_enough_labels_are_held_out():
    """``enough``: the folds after the one that held out that many labels are not run; their samples are
    not predicted (-1) and their reach is not measured (NaN); the folds run are those of every fold."""
    X, t = _clusters((40, 40), seed=3)
    y = np.full(t.size, -1)
    y[::2] = t[::2]  # 40 labels, 3 folds of 14, 13, 13
    W = _knn(X, 5)
    calls = []

    def scores_for(yy):
        calls.append(yy)
        return propagate(W, yy, 2)

    every = held_out_agreement(scores_for, y, 2, folds=3)
    assert len(calls) == 3 and (every[2] >= 0).all()
    calls.clear()
    acc, chance, pred, reach = held_out_agreement(scores_for, y, 2, folds=3, enough=10)
    first = pred >= 0
    assert len(calls) == 1 and first.sum() == 14 and np.isnan(reach[~first]).all()
    assert (pred[first] == every[2][first]).all() and np.array_equal(reach[first], every[3][first])
    assert acc == (pred[first] == y[y >= 0][first]).mean() and chance == every[1]
    calls.clear()
    held_out_agreement(scores_for, y, 2, folds=3, enough=20)
    assert len(calls) == 2  # 14 held out after the first fold, fewer than 20: a second fold
    floor = reach_floor(reach, y[y >= 0], 2)
    assert np.array_equal(floor, reach_floor(np.where(first, reach, np.nan), y[y >= 0], 2))
    assert np.isfinite(floor).all()  # NaN (not measured) never the floor
    assert reach_floor(np.array([np.nan, np.nan, -1.0]), np.array([0, 0, 1]), 2)[0] == -np.inf  # none measured


def _floor(W, y, K):
    """Per class, the low end of its labeled samples' log reach when held out."""
    return reach_floor(graph_agreement(W, y, K)[3], y[y >= 0], K)


def test_reach_floor_is_the_lowest_up_to_20_labels_then_the_5_percent_tail():
    reach = np.concatenate([-np.arange(1.0, 11.0), -np.arange(1.0, 41.0), [-np.inf]])
    y_lab = np.repeat([0, 1, 3], [10, 40, 1])
    floor = reach_floor(reach, y_lab, 4)
    assert floor[0] == -10.0  # 10 labels: the lowest
    assert floor[1] == -39.0  # 40 labels: the 2nd lowest (ceil(0.05 * 40) = 2), not an outlier's -40
    assert floor[2] == np.inf and floor[3] == -np.inf  # no label; a class's only label is never held out


def test_parts_of_one_type_nobody_labeled_are_joined_by_their_markers_two_types_are_not():
    rng = np.random.default_rng(0)
    groups = np.repeat([0, 1, 2, 3, 4], [30, 30, 10, 15, 12])  # 2 labeled classes, 3 groups of their own
    X = rng.normal(0.0, 0.1, size=(groups.size, 60))
    X[np.isin(groups, [2, 3]), :20] += 3.0  # parts 2 and 3: one type (features 0-19)
    X[groups == 4, 20:40] += 3.0  # part 4: another type
    out = joined_unreached(X, groups, 2)
    assert (out[groups < 2] == groups[groups < 2]).all()
    assert set(out[np.isin(groups, [2, 3])]) == {2} and set(out[groups == 4]) == {3}
    assert (joined_unreached(X, np.minimum(groups, 2), 2) == np.minimum(groups, 2)).all()  # one part: as it was
    assert (joined_unreached(sparse.csr_matrix(X), groups, 2) == out).all()


def test_a_few_labeled_samples_in_the_low_mode_do_not_hide_a_group_when_labels_are_many():
    high, low = np.array([0.9, 0.1]), np.array([0.006, 0.004])  # log reach -0.1 and -5.1
    F = np.vstack([np.tile(high, (150, 1)), np.tile(low, (50, 1))])
    y = np.full(200, -1)
    y[:59] = 0
    y[150] = 0  # one of the 60 labeled samples among the barely reached ones (an outlier)
    g = unreached_groups(F, y, floor=np.array([-1.0, -1.0]))
    assert (g[151:] == 2).all() and g[150] == 0 and (g[:150] == 0).all()
    y[19:59] = -1  # 20 labels: none of them may be in the low mode (as before labels were many)
    assert (unreached_groups(F, y, floor=np.array([-1.0, -1.0])) == 0).all()


def test_a_class_nobody_labeled_gets_a_group_of_its_own():
    X, t = _clusters((60, 60, 60), sep=8.0, seed=4)
    W = _knn(X, 8)
    y = np.full(t.size, -1)
    y[[0, 1, 2, 60, 61, 62]] = t[[0, 1, 2, 60, 61, 62]]  # class 2 never labeled
    g = unreached_groups(propagate(W, y, 2), y, floor=_floor(W, y, 2))
    assert set(g[t == 2]) == {2} and (g[t < 2] == t[t < 2]).all()
    every = np.where(np.isin(np.arange(t.size), [0, 1, 2, 60, 61, 62, 120, 121, 122]), t, -1)
    g_all = unreached_groups(propagate(W, every, 3), every, floor=_floor(W, every, 3))
    assert (g_all == t).all()  # every class labeled: no group added


# ----------------------------------------------------------------------- R^2
def test_variance_explained_is_the_anova_r2_and_ranks_as_f():
    from sklearn.feature_selection import f_classif

    X, t = _clusters((10, 15, 20), p=8, sep=1.0, seed=5)
    r2 = variance_explained(X, t)
    mu = X.mean(axis=0)
    between = sum((t == g).sum() * (X[t == g].mean(axis=0) - mu) ** 2 for g in range(3))
    np.testing.assert_allclose(r2, between / ((X - mu) ** 2).sum(axis=0))
    F, _ = f_classif(X, t)
    np.testing.assert_allclose(F, r2 / (1 - r2) * (45 - 3) / 2)
    np.testing.assert_allclose(variance_explained(sparse.csr_matrix(X), t), r2)
    w = (np.arange(45) % 2).astype(float)  # 0/1 weights: the computation on the weighted samples alone
    np.testing.assert_allclose(variance_explained(X, t, w), variance_explained(X[w > 0], t[w > 0]))
    np.testing.assert_allclose(variance_explained(sparse.csr_matrix(X), t, w), variance_explained(X[w > 0], t[w > 0]))
