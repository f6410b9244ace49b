"""ssfs.experiment.metrics: RED (thesis eq. 3.33), k-means clustering quality (Rand / ARI) and
the semi-supervised evaluation of the constraint-score paper (Section 3.2)."""

import itertools

import numpy as np
import pytest
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from ssfs.constraints import Constraints
from ssfs.errors import ConfigError, InputError, SupervisionError
from ssfs.experiment import metrics as M


# -------------------------------------------------------------------- RED
def _red_by_pairs(X, sel, absolute=False, denom="paper"):
    """Eq. 3.33 literally: loop over pairs i > j, Pearson rho of the two columns."""
    m = len(sel)
    tot = 0.0
    for i, j in itertools.combinations(sel, 2):
        a, b = X[:, i], X[:, j]
        rho = 0.0 if a.std() == 0 or b.std() == 0 else np.corrcoef(a, b)[0, 1]
        tot += abs(rho) if absolute else rho
    return tot / (m * (m - 1) if denom == "paper" else m * (m - 1) / 2)


def test_red_matches_pair_sum(rng):
    X = rng.normal(size=(40, 8))
    X[:, 3] = X[:, 1] * 2 + 0.1 * rng.normal(size=40)  # correlated
    X[:, 5] = -X[:, 1] + 0.3 * rng.normal(size=40)  # anti-correlated
    sel = [1, 3, 5, 6]
    assert M.redundancy_rate(X, sel) == pytest.approx(_red_by_pairs(X, sel), abs=1e-12)
    assert M.redundancy_rate(X, sel, absolute=True) == pytest.approx(_red_by_pairs(X, sel, True), abs=1e-12)
    assert M.redundancy_rate(X, sel, normalization="pairs") == pytest.approx(
        _red_by_pairs(X, sel, denom="pairs"), abs=1e-12)
    # all columns when selected is None; sparse input gives the same number
    assert M.redundancy_rate(X[:, sel]) == pytest.approx(M.redundancy_rate(X, sel))
    assert M.redundancy_rate(sparse.csr_matrix(X), sel) == pytest.approx(M.redundancy_rate(X, sel))


def test_red_known_values(rng):
    x = rng.normal(size=30)
    X = np.column_stack([x, 3 * x + 1, x - 2])  # three perfectly correlated copies
    # 3 pairs of rho = 1 divided by m(m-1) = 6 (as printed in eq. 3.33) -> 0.5
    assert M.redundancy_rate(X) == pytest.approx(0.5)
    assert M.redundancy_rate(X, normalization="pairs") == pytest.approx(1.0)
    Y = np.column_stack([x, -x])
    assert M.redundancy_rate(Y) == pytest.approx(-0.5)
    assert M.redundancy_rate(Y, absolute=True) == pytest.approx(0.5)
    # a constant feature is uncorrelated with everything: only the (x, x) pair counts
    Z = np.column_stack([x, np.full(30, 0.1), x])
    assert M.redundancy_rate(Z) == pytest.approx(1.0 / 6.0)
    assert np.isnan(M.redundancy_rate(X, [0]))
    with pytest.raises(InputError, match="out of range"):
        M.redundancy_rate(X, [0, 7])
    with pytest.raises(ConfigError):
        M.redundancy_rate(X, normalization="bogus")


def test_red_absolute_blocks(rng, monkeypatch):
    X = rng.normal(size=(25, 11))
    X[:, 4] = X[:, 0] - X[:, 9]
    full = M.redundancy_rate(X, absolute=True)
    monkeypatch.setattr(M, "_RED_BLOCK", 3)  # several column blocks, one ragged
    assert M.redundancy_rate(X, absolute=True) == pytest.approx(full, abs=1e-12)
    assert full == pytest.approx(_red_by_pairs(X, list(range(11)), True), abs=1e-12)


# ------------------------------------------------------- clustering quality
def _rand_by_pairs(a, b):
    pairs = list(itertools.combinations(range(len(a)), 2))
    agree = sum((a[i] == a[j]) == (b[i] == b[j]) for i, j in pairs)
    return agree / len(pairs)


def test_clustering_quality_matches_kmeans_and_pair_count(rng):
    X = np.vstack([rng.normal(0, 1.0, (15, 4)), rng.normal(2.0, 1.0, (15, 4)), rng.normal(-2, 1.0, (15, 4))])
    X = np.hstack([X, rng.normal(size=(45, 6))])  # noise features
    y = np.repeat([0, 1, 2], 15)
    sel = [0, 1, 2, 3]
    q = M.clustering_quality(X, y, np.random.default_rng(7), selected=sel)
    # reference: sklearn KMeans with the seed the function draws from the same generator
    seed = int(np.random.default_rng(7).integers(0, 2**31 - 1))
    km = KMeans(n_clusters=3, n_init=20, random_state=seed).fit(X[:, sel])
    assert q["inertia"] == pytest.approx(km.inertia_)
    assert q["rand"] == pytest.approx(_rand_by_pairs(y, km.labels_))
    assert q["ari"] == pytest.approx(adjusted_rand_score(y, km.labels_))
    # reproducible for the same seed, whatever the number of threads
    assert M.clustering_quality(X, y, np.random.default_rng(7), selected=sel) == q
    with threadpool_limits(1):
        assert M.clustering_quality(X, y, np.random.default_rng(7), selected=sel) == q


def test_clustering_quality_separated_blobs_and_unlabeled(rng):
    X = np.vstack([rng.normal(0, 0.1, (10, 2)), rng.normal(5, 0.1, (10, 2))])
    y = np.repeat([0, 1], 10)
    q = M.clustering_quality(X, y, rng)
    assert q["rand"] == 1.0 and q["ari"] == 1.0
    y2 = y.copy()
    y2[[0, 15]] = -1  # unlabeled samples are clustered but not scored
    assert M.clustering_quality(X, y2, rng)["rand"] == 1.0
    # a worse subset: pure noise feature -> lower Rand
    Xn = np.column_stack([X, rng.normal(size=20)])
    assert M.clustering_quality(Xn, y, rng, selected=[2])["ari"] < 0.5
    with pytest.raises(InputError, match="labels"):
        M.clustering_quality(X, y[:5], rng)


# -------------------------------------------- semi-supervised evaluation
class FakeCopKMeans:
    """Stand-in for ssfs.methods._shared.clustering.cop_kmeans returning fixed labels and recording its call."""

    def __init__(self, labels):
        self.labels = np.asarray(labels)
        self.calls = []

    def __call__(self, X, n_clusters, constraints, rng, *, n_init=10, max_iter=100):
        self.calls.append(dict(X=X.copy(), k=n_clusters, constraints=constraints, rng=rng,
                               n_init=n_init, max_iter=max_iter))
        return self.labels.copy()


@pytest.fixture
def fake_cop(monkeypatch):
    def install(labels):
        fake = FakeCopKMeans(labels)
        monkeypatch.setattr("ssfs.experiment.metrics.cop_kmeans", fake)
        return fake
    return install


# training samples on a line (feature 0), feature 1 is noise that would change the 1-NN
XTR = np.array([[0.0, 50], [0.1, -50], [0.2, 10], [5.0, -20], [5.1, 40], [5.2, 0]])
YTR = np.array([0, 0, 1, 1, 1, 0])
XTE = np.array([[0.05, -50], [5.05, 50], [0.15, 0]])
YTE = np.array([0, 1, 1])


def _nn_by_hand(Xtr, Xte):
    d = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1)
    return d.argmin(1)


def test_semisupervised_accuracy_matching_rules(fake_cop):
    clusters = np.array([0, 0, 0, 1, 1, 1])  # cluster ids as COP-KMeans would return them
    fake = fake_cop(clusters)
    cons = Constraints(ml=[], cl=[[2, 5]])  # samples 2 (class 1) and 5 (class 0)
    rng = np.random.default_rng(0)
    nn = _nn_by_hand(XTR[:, [0]], XTE[:, [0]])  # test -> training samples 1, 4, 1 or 2
    pred_cluster = clusters[nn]
    assert list(pred_cluster) == [0, 1, 0]
    # train: cluster 0 holds classes {0, 0, 1} -> class 0; cluster 1 {1, 1, 0} -> class 1
    acc = M.semisupervised_accuracy(XTR, cons, XTE, YTE, 2, rng, y_train=YTR, selected=[0])
    assert acc == pytest.approx(np.mean(np.array([0, 1, 0]) == YTE))  # 2/3
    call = fake.calls[-1]
    assert call["k"] == 2 and call["constraints"] is cons and call["rng"] is rng
    assert call["X"].shape == (6, 1) and (call["n_init"], call["max_iter"]) == (10, 100)
    # constrained: only samples 2 (cluster 0, class 1) and 5 (cluster 1, class 0) -> swapped map
    acc_c = M.semisupervised_accuracy(XTR, cons, XTE, YTE, 2, rng, y_train=YTR, matching="constrained",
                                      selected=[0])
    assert acc_c == pytest.approx(np.mean(np.array([1, 0, 1]) == YTE))  # 1/3
    # test: best relabelling of the test predictions [0, 1, 0] against [0, 1, 1] -> 2/3
    acc_t = M.semisupervised_accuracy(XTR, cons, XTE, YTE, 2, rng, matching="test", selected=[0],
                                      n_init=3, max_iter=7)
    assert acc_t == pytest.approx(2 / 3)
    assert (fake.calls[-1]["n_init"], fake.calls[-1]["max_iter"]) == (3, 7)


def test_semisupervised_accuracy_uses_selected_space(fake_cop):
    fake_cop(np.array([1, 1, 1, 0, 0, 0]))
    cons = Constraints(ml=[[0, 1]], cl=[[0, 3]])
    # with both features the noise feature decides the nearest neighbour
    nn_all = _nn_by_hand(XTR, XTE)
    nn_sel = _nn_by_hand(XTR[:, [0]], XTE[:, [0]])
    assert list(nn_all) != list(nn_sel)
    y_tr = np.array([0, 0, 0, 1, 1, 1])
    y_te = np.array([0, 1, 0])
    a_sel = M.semisupervised_accuracy(XTR, cons, XTE, y_te, 2, np.random.default_rng(1), y_train=y_tr, selected=[0])
    assert a_sel == 1.0
    a_all = M.semisupervised_accuracy(XTR, cons, XTE, y_te, 2, np.random.default_rng(1), y_train=y_tr)
    mapped = np.array([0, 0, 0, 1, 1, 1])  # cluster 1 -> class 0, cluster 0 -> class 1
    assert a_all == pytest.approx(np.mean(mapped[nn_all] == y_te))


def test_semisupervised_accuracy_errors(fake_cop):
    fake_cop(np.zeros(6, dtype=int))
    cons = Constraints(ml=[[0, 1]], cl=[])
    rng = np.random.default_rng(0)
    with pytest.raises(SupervisionError, match="y_train"):
        M.semisupervised_accuracy(XTR, cons, XTE, YTE, 2, rng)
    with pytest.raises(ConfigError, match="matching"):
        M.semisupervised_accuracy(XTR, cons, XTE, YTE, 2, rng, matching="oracle")
    with pytest.raises(InputError, match="class codes"):
        M.semisupervised_accuracy(XTR, cons, XTE, np.array([0, 1, 2]), 2, rng, matching="test")
    with pytest.raises(SupervisionError, match="outside"):
        M.semisupervised_accuracy(XTR, Constraints(ml=[[0, 9]], cl=[]), XTE, YTE, 2, rng, matching="test")
    with pytest.raises(InputError, match="features"):
        M.semisupervised_accuracy(XTR, cons, XTE[:, :1], YTE, 2, rng, matching="test")


def test_match_clusters_hungarian_by_hand():
    # counts: cluster0 -> class2 (3), cluster1 -> class0 (2), cluster2 -> class1 (2)
    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    classes = np.array([2, 2, 2, 0, 0, 1, 1, 0])
    mapping = M.match_clusters(clusters, classes, 3)
    assert list(mapping) == [2, 0, 1]
    # exhaustive check: no permutation agrees on more samples
    best = max(sum(p[c] == y for c, y in zip(clusters, classes, strict=True)) for p in itertools.permutations(range(3)))
    assert sum(mapping[clusters] == classes) == best


def test_semisupervised_accuracy_with_real_cop_kmeans(rng):
    centers = np.array([[0, 0], [6, 0], [0, 6]], dtype=float)
    Xtr = np.vstack([c + rng.normal(0, 0.3, (12, 2)) for c in centers])
    ytr = np.repeat([0, 1, 2], 12)
    Xte = np.vstack([c + rng.normal(0, 0.3, (5, 2)) for c in centers])
    yte = np.repeat([0, 1, 2], 5)
    cons = Constraints.sample(ytr, 3, 3, rng)
    acc = M.semisupervised_accuracy(Xtr, cons, Xte, yte, 3, np.random.default_rng(0), y_train=ytr)
    assert acc == 1.0
