"""C3, C4/SC4 and the bagging constraint score against direct pair sums."""

import numpy as np
import pytest

from ssfs import Constraints, SupervisionError, run_method
from ssfs.ranking import rank_matrix


def _tiny(seed=0, n=14, p=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.full(n, -1)
    y[:6] = [0, 0, 1, 1, 2, 2]
    X[:6, 0] += 4 * y[:6]  # feature 0 separates the labeled classes
    return X, y


def _knn_sets(X, k):
    """Brute-force kNN by a double loop (independent of ssfs.methods._shared.graph)."""
    n = X.shape[0]
    nb = []
    for i in range(n):
        d = [(float(np.sum((X[i] - X[j]) ** 2)), j) for j in range(n) if j != i]
        nb.append({j for _, j in sorted(d)[:k]})
    return nb


def _pair_sum(X, pairs, weights=None):
    out = np.zeros(X.shape[1])
    for t, (i, j) in enumerate(pairs):
        out += (1.0 if weights is None else weights[t]) * (X[i] - X[j]) ** 2
    return out


def test_c3_matches_direct_sums():
    X, y = _tiny()
    C = Constraints.from_labels(y)
    k, gamma = 3, 100.0
    nb = _knn_sets(X, k)
    constrained = set(C.samples().tolist())
    ml = {tuple(p) for p in C.ml.tolist()}
    n = X.shape[0]
    num = np.zeros(X.shape[1])
    den = np.zeros(X.shape[1])
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            key = (min(i, j), max(i, j))
            if key in ml:
                s = gamma
            elif (i not in constrained or j not in constrained) and (j in nb[i] or i in nb[j]):
                s = 1.0
            else:
                s = 0.0
            num += s * (X[i] - X[j]) ** 2
    for i, j in C.cl:
        den += 2 * (X[i] - X[j]) ** 2  # ordered pairs (i, j) and (j, i)
    got = run_method("c3", X, y, k=k, gamma=gamma).scores  # from labels: closed form, no pair built
    np.testing.assert_allclose(got, num / den, rtol=1e-12)
    pairs = run_method("c3", X, y, Constraints(C.ml, C.cl), k=k, gamma=gamma).scores  # the same pairs, given
    np.testing.assert_allclose(pairs, num / den, rtol=1e-12)
    assert run_method("c3", X, y, k=k).order[0] == 0


def test_c3_gamma_weights_must_links():
    X, y = _tiny(1)
    a = run_method("c3", X, y, k=3, gamma=1.0).scores
    b = run_method("c3", X, y, k=3, gamma=100.0).scores
    assert not np.allclose(a, b)
    with pytest.raises(ValueError, match="gamma"):
        run_method("c3", X, y, gamma=0.0)


def _laplacian_score_direct(X, k, t):
    """He et al. eq. 2.6 with dense matrices built by loops."""
    n = X.shape[0]
    nb = _knn_sets(X, k)
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j and (j in nb[i] or i in nb[j]):
                S[i, j] = np.exp(-np.sum((X[i] - X[j]) ** 2) / t)
    D = np.diag(S.sum(1))
    L = D - S
    one = np.ones(n)
    out = []
    for r in range(X.shape[1]):
        f = X[:, r]
        ft = f - (f @ D @ one) / (one @ D @ one)
        out.append((ft @ L @ ft) / (ft @ D @ ft))
    return np.array(out)


@pytest.mark.parametrize("name", ["c4", "sc4"])
def test_c4_is_laplacian_times_c1(name):
    X, y = _tiny(2)
    C = Constraints.from_labels(y)
    t, k = 3.0, 4
    c1 = _pair_sum(X, C.ml) / _pair_sum(X, C.cl)
    expected = _laplacian_score_direct(X, k, t) * c1
    got = run_method(name, X, y, k=k, bandwidth=t, weights="literal").scores
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_c4_balanced_is_a_weighted_geometric_mean_by_hand():
    """Default reading: LS^(1-s) C1^s, C1 from one mean term per constrained sample, s the
    labels' share of cls (w m / (w m + n)); no must-link pair: the Laplacian score; the
    literal product ranks as s = 1/2."""
    X, y = _tiny(2)
    t, k = 3.0, 4
    ls = _laplacian_score_direct(X, k, t)
    lab = np.flatnonzero(y >= 0)  # 3 classes of 2: one must-link partner, 4 cannot-link partners each
    M = sum(np.mean([(X[i] - X[j]) ** 2 for j in lab if j != i and y[j] == y[i]], axis=0) for i in lab)
    C = sum(np.mean([(X[i] - X[j]) ** 2 for j in lab if y[j] != y[i]], axis=0) for i in lab)
    c1 = (M / 6) / (C / 6)
    s = 10.0 * 6 / (10.0 * 6 + 14)
    got = run_method("c4", X, y, k=k, bandwidth=t).scores
    np.testing.assert_allclose(got, ls ** (1 - s) * c1**s, rtol=1e-10)
    assert np.argmin(got) == 0  # the separating feature
    half = run_method("c4", X, y, k=k, bandwidth=t, label_share=0.5).scores
    lit = run_method("c4", X, y, k=k, bandwidth=t, weights="literal").scores
    assert np.array_equal(np.argsort(half), np.argsort(lit))
    one_each = np.where(np.isin(np.arange(14), [0, 2, 4]), y, -1)  # one label per class
    np.testing.assert_allclose(run_method("c4", X, one_each, k=k, bandwidth=t).scores, ls, rtol=1e-10)


def test_c3_c4_need_cannot_links():
    X, y = _tiny()
    y = np.where(y == 0, 0, -1)  # one class only: no cannot-link pair
    for name in ("c3", "c4"):
        with pytest.raises(SupervisionError, match="cannot-link"):
            run_method(name, X, y)


def test_bcs_single_pair_sets_equal_cs1_ranks():
    """With one ML and one CL pair every bootstrap bag is the full set: BCS = ranks of CS1."""
    X, _ = _tiny(3)
    C = Constraints(np.array([[0, 1]]), np.array([[0, 2]]))
    cs1 = ((X[0] - X[1]) ** 2) / ((X[0] - X[2]) ** 2)
    expected = np.argsort(np.argsort(cs1)) + 1.0
    got = run_method("bcs", X, constraints=C, n_bags=7).scores
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("base", ["cs1", "cs2"])
def test_bcs_matches_direct_bootstrap(base):
    X, y = _tiny(4)
    C = Constraints.from_labels(y)
    n_bags, lam = 5, 0.3
    got = run_method("bcs", X, y, constraints=C, rng=11, n_bags=n_bags, base=base, lam=lam).scores
    # replay the documented draws: ML multiplicities, then CL multiplicities
    rng = np.random.default_rng(11)
    dml = rng.integers(0, C.n_ml, size=(n_bags, C.n_ml))
    dcl = rng.integers(0, C.n_cl, size=(n_bags, C.n_cl))
    bag_scores = []
    for b in range(n_bags):
        ml = sum((X[C.ml[t, 0]] - X[C.ml[t, 1]]) ** 2 for t in dml[b])
        cl = sum((X[C.cl[t, 0]] - X[C.cl[t, 1]]) ** 2 for t in dcl[b])
        bag_scores.append(ml / cl if base == "cs1" else (ml - lam * cl) / X[:6].var(axis=0))  # scale: constrained
    expected = rank_matrix(np.array(bag_scores), higher_is_better=False).mean(axis=0)
    np.testing.assert_allclose(got, expected)


def test_bcs_reproducible_and_seed_dependent():
    X, y = _tiny(5, n=30, p=12)
    y[6:14] = [0, 1, 2, 0, 1, 2, 0, 1]
    a = run_method("bcs", X, y, rng=1, n_bags=20).scores
    b = run_method("bcs", X, y, rng=1, n_bags=20).scores
    c = run_method("bcs", X, y, rng=2, n_bags=20).scores
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(ValueError, match="base"):
        run_method("bcs", X, y, base="cs3")


# ------------------------------------------------------ shared kNN search (graph.py)
@pytest.mark.parametrize("layout", ["dense", "mostly_zero_fortran", "csr"])
def test_knn_search_matches_sklearn(layout):
    from scipy import sparse
    from sklearn.neighbors import NearestNeighbors

    from ssfs.methods._shared.graph import knn_search, sparse_if_mostly_zero

    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 30))
    if layout != "dense":
        X[rng.random(X.shape) < 0.95] = 0.0
        X = np.asfortranarray(X)
        assert sparse.issparse(sparse_if_mostly_zero(X))
        assert (sparse_if_mostly_zero(X) != sparse.csr_matrix(X)).nnz == 0
    Xin = sparse.csr_matrix(X) if layout == "csr" else X
    ind, d2 = knn_search(Xin, 5)
    dist, _ref = NearestNeighbors(n_neighbors=5).fit(X).kneighbors()
    np.testing.assert_allclose(d2, dist**2, rtol=1e-9, atol=1e-12)
    exact = ((X[:, None, :] - X[ind]) ** 2).sum(-1)
    np.testing.assert_allclose(d2, exact, rtol=1e-9, atol=1e-12)
    assert (np.diff(d2, axis=1) >= 0).all() and not (ind == np.arange(60)[:, None]).any()


def test_knn_search_exact_for_duplicates_and_all_neighbours():
    from ssfs.methods._shared.graph import knn_search

    X = np.array([[1e6, 1.0], [1e6, 1.0], [1e6, 1.0 + 1e-3], [0.0, 0.0]])
    ind, d2 = knn_search(X, 3)  # k = n - 1: every other sample, nearest first
    np.testing.assert_array_equal(ind[0], [1, 2, 3])
    assert d2[0, 0] == 0.0 and d2[0, 1] == pytest.approx(1e-6, rel=1e-6)  # not lost to cancellation


# ------------------------------------------------------------ cs2: the literal difference and its scale
def test_cs2_literal_closed_form_by_hand():
    """All pairs of K = 2 balanced classes: sum_ML = n^2 W / K, sum_CL = n^2 (T - W / K), so the
    literal cs2 = n^2 ((1 + lam) W / K - lam T) (W: mean within-class, T: total population variance)."""
    X = np.array([[0.0, 10.0], [2.0, 0.0], [10.0, 4.0], [12.0, 8.0]])
    y = np.array([0, 0, 1, 1])
    # by hand, feature 0: ML pairs (0,1), (2,3): 4 + 4 = 8; CL pairs: 100 + 144 + 64 + 100 = 408
    # feature 1: ML 100 + 16 = 116; CL 36 + 4 + 16 + 64 = 120
    lam = 0.1
    got = run_method("cs2", X, y, lam=lam, scale="none").scores
    np.testing.assert_allclose(got, [8 - lam * 408, 116 - lam * 120])
    n, K = 4, 2
    W = np.mean([X[y == c].var(axis=0) for c in (0, 1)], axis=0)
    np.testing.assert_allclose(got, n**2 * ((1 + lam) * W / K - lam * X.var(axis=0)))
    # scale="constrained" divides by the variance over the constrained (here: all) samples
    got_std = run_method("cs2", X, y, lam=lam).scores
    np.testing.assert_allclose(got_std, [(8 - lam * 408) / 26.0, (116 - lam * 120) / 14.75])


def test_cs2_scaled_ranks_as_fisher_and_ignores_unlabeled_unless_all():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 8)) * np.arange(1, 9)  # unequal scales
    y = np.repeat([0, 1, 2], 20)
    X[:, 2] += 2.0 * y
    X[:, 5] += 9.0 * y
    fisher = run_method("fisher", X, y).order
    np.testing.assert_array_equal(run_method("cs2", X, y).order, fisher)
    yp = y.copy()
    yp[::2] = -1
    Xu = X.copy()
    Xu[yp < 0] *= 50.0  # unlabeled samples change nothing under scale="constrained" ...
    np.testing.assert_array_equal(run_method("cs2", Xu, yp).scores, run_method("cs2", X, yp).scores)
    all_u, all_x = run_method("cs2", Xu, yp, scale="all").scores, run_method("cs2", X, yp, scale="all").scores
    assert not np.allclose(all_u, all_x)  # ... but do under scale="all"


def test_cs2_literal_prefers_noise_on_waveform_scaled_does_not():
    """Breiman's waveform, all labels: the literal difference ranks the low-variance noise
    features first (x15, the most informative, near the end); per unit variance all 19
    informative features (x2..x20) come first."""
    from ssfs.io.builtin import waveform

    X, y = waveform(600, rng=np.random.default_rng(0))
    informative = np.arange(1, 20)
    literal = run_method("cs2", X, y, scale="none").order
    assert np.isin(literal[:19], informative).sum() <= 2
    assert list(literal).index(14) >= 35
    scaled = run_method("cs2", X, y).order
    assert set(scaled[:19]) == set(informative)


def test_feature_constant_over_the_constrained_samples_ranks_last_for_cs1():
    """0/0 is undefined (ranked last); the pair sums' round-off used to give -0 / -7e-15 = -0,
    which ranked such a feature first (explicit pairs) while the closed form from labels ranked it last."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = np.full(30, -1)
    y[:9] = np.repeat([0, 1, 2], 3)
    X[:9, 2] = -0.21699999  # constant over every labeled sample (a scaled, unexpressed gene)
    X[:9, 0] += 3 * y[:9]
    pairs = Constraints.pairs_from_labels(y)
    for cons in (pairs, Constraints.from_labels(y)):
        r = run_method("cs1", X, y, constraints=cons)
        assert r.order[-1] == 2 and r.order[0] == 0, (type(cons), r.order)


def test_a_feature_constant_over_the_labeled_samples_is_undefined_not_first():
    """GLIOMA's floor values (log10 20) made a feature constant over the 12 labeled samples: the
    closed-form cannot-link sum was a round-off residue (7e-15) beside a must-link sum of 0, so
    C1 = 0 and c4 ranked 51 such features first (mean accuracy 0.33). Now both sums are exactly 0."""
    from ssfs.methods._shared.cls import mean_partner_sums
    from ssfs.methods.constraint_score import c1_balanced

    X, y = _tiny(5, n=30, p=6)
    X[:, 3] = 1.41  # constant over the labeled rows: the unshifted sums left M = 0 beside a residue C > 0
    X[6:, 3] += np.linspace(0, 1, 24)
    M, C, _, _ = mean_partner_sums(X, Constraints.from_labels(y))
    assert M[3] == 0.0 and C[3] == 0.0
    c1, _ = c1_balanced(X, Constraints.from_labels(y))
    assert np.isnan(c1[3])
    r = run_method("c4", X, y, k=4)
    assert r.order[0] == 0 and r.order[-1] == 3
