"""Issue 15 (the semi-supervised scores earn their labels) and issue 16 item 1 (constraints
from labels are never built as pairs)."""

import tracemalloc

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.constraints import Constraints, LabelConstraints
from ssfs.methods._shared.cls import balanced_cls, label_share_of, mean_partner_sums
from ssfs.methods._shared.graph import heat_kernel_graph
from ssfs.methods._shared.representation import graph_space, pca_embedding, single_cell_like
from ssfs.methods.constraint_score import ml_cl_sums, pair_sq_sum
from ssfs.simulate import few_labels, simulate_singlecell


@pytest.fixture
def small():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 5))
    y = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2] + [-1] * 21)
    return X, y


def test_label_constraints_equal_the_pairs_and_count_in_closed_form(small):
    _, y = small
    lazy, pairs = Constraints.from_labels(y), Constraints.pairs_from_labels(y)
    assert isinstance(lazy, LabelConstraints) and lazy._pairs is None
    # 3 + 1 + 6 must-link, 9 * 8 / 2 - 10 cannot-link
    assert (lazy.n_ml, lazy.n_cl, len(lazy)) == (10, 26, 36) and lazy._pairs is None
    assert np.array_equal(lazy.samples(), np.arange(9)) and lazy._pairs is None
    assert np.array_equal(lazy.ml, pairs.ml) and np.array_equal(lazy.cl, pairs.cl) and lazy == pairs
    sub = lazy.subset(np.array([0, 1, 3, 20]))
    assert np.array_equal(sub.ml, pairs.subset(np.array([0, 1, 3, 20])).ml)
    assert len(Constraints.from_labels([0, -1, -1])) == 0


def test_closed_forms_equal_the_pair_sums(small):
    X, y = small
    lazy, pairs = Constraints.from_labels(y), Constraints.pairs_from_labels(y)
    ml, cl = ml_cl_sums(lazy, X)
    np.testing.assert_allclose(ml, pair_sq_sum(pairs.ml, X), rtol=1e-12)
    np.testing.assert_allclose(cl, pair_sq_sum(pairs.cl, X), rtol=1e-12)
    # by hand for feature 0: mean over partners, summed over the samples having partners
    f = X[:, 0]
    M = sum(np.mean([(f[i] - f[j]) ** 2 for j in range(9) if y[j] == y[i] and j != i]) for i in range(9))
    C = sum(np.mean([(f[i] - f[j]) ** 2 for j in range(9) if y[j] != y[i]]) for i in range(9))
    for c in (lazy, pairs):
        m, cc, n_m, n_c = mean_partner_sums(X, c)
        assert (n_m, n_c) == (9, 9)
        np.testing.assert_allclose([m[0], cc[0]], [M, C], rtol=1e-12)
    assert lazy._pairs is None


def test_cs1_is_a_function_of_fisher_for_balanced_classes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 40)) + np.repeat(np.arange(3), 20)[:, None] * rng.uniform(0, 1, 40)
    y = np.repeat(np.arange(3), 20)
    cs1 = run_method("cs1", X, y).scores
    fisher = run_method("fisher", X, y).scores
    np.testing.assert_allclose(cs1, 1.0 / (3 * fisher + 2), rtol=1e-10)  # 1 / (K B/W + K - 1)


def test_balanced_cls_reduces_to_laplacian_and_weighs_labels_by_share(small):
    X, y = small
    S, _ = heat_kernel_graph(X, k=5)
    none = balanced_cls(S, X, Constraints.from_labels(np.full(30, -1)))
    np.testing.assert_allclose(none, run_method("laplacian", X, k=5).scores, rtol=1e-10)
    assert label_share_of(9, 30, 10.0) == pytest.approx(90 / 120)
    # share 1: labels only, M / C
    m, c, n_m, n_c = mean_partner_sums(X, Constraints.from_labels(y))
    np.testing.assert_allclose(balanced_cls(S, X, Constraints.from_labels(y), label_share=1.0),
                               (m / n_m) / (c / n_c), rtol=1e-12)
    # the workflow passes the same constraints as explicit pairs: same scores, pair by pair
    np.testing.assert_allclose(run_method("cls", X, y, Constraints.pairs_from_labels(y), k=5).scores,
                               run_method("cls", X, y, k=5).scores, rtol=1e-10)
    lit = run_method("cls", X, y, k=5, weights="literal").scores
    assert not np.allclose(lit, run_method("cls", X, y, k=5).scores)


def test_label_derived_constraints_cost_linear_memory_in_n_labeled():
    """CLS, cs1, cs2, fisher with 20,000 labeled of 40,000 samples: 2 x 10^8 pairs would take
    3.2 GB; the closed forms stay within a few copies of X (6.4 MB)."""
    rng = np.random.default_rng(1)
    n, p = 40_000, 20
    X = rng.normal(size=(n, p))
    y = np.full(n, -1)
    y[:20_000] = rng.integers(0, 2, 20_000)
    ring = sparse.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")  # a given graph
    cons = Constraints.from_labels(y)
    tracemalloc.start()
    try:
        for name, kw in (("cls", {"graph": ring, "space": "raw"}), ("cs1", {}), ("cs2", {}), ("fisher", {})):
            r = run_method(name, X, y, constraints=cons, **kw)
            assert np.isfinite(r.scores).all()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cons._pairs is None  # never materialised
    assert peak < 120 * 1024**2, f"peak {peak / 1024**2:.0f} MB"


def test_pca_graph_space_for_single_cell_like_input_only():
    X, sim = simulate_singlecell(600, 120, 3, 5, rng=2)
    assert sparse.isspmatrix_csr(X) and single_cell_like(X)
    assert not single_cell_like(sim.X)  # integer counts
    assert not single_cell_like(X.toarray())  # dense
    Z = graph_space(X)
    assert Z.shape == (600, 50)
    # the randomized PCA finds the leading components: its distances match an exact SVD's
    Xd = X.toarray() - X.toarray().mean(axis=0)
    U, s, _ = np.linalg.svd(Xd, full_matrices=False)
    Z10 = pca_embedding(X, 10)
    # the randomized range finder captures the variance of the exact leading 10 components
    assert (Z10**2).sum() >= 0.99 * (s[:10] ** 2).sum()
    assert (Z10**2).sum() <= (s[:10] ** 2).sum() * (1 + 1e-9)
    np.testing.assert_allclose(Z10.mean(axis=0), 0.0, atol=1e-10)  # centred
    assert graph_space(X, "raw") is X


def test_default_semi_supervised_scores_earn_their_labels_on_the_planted_simulation():
    """Fraction of the planted markers in the top 100 as labels are added (5,000 cells): the
    default cls, c4, csfs (kNN neighbourhood: the adaptive one needs all pairs) and enscls
    improve (within noise, 0.03) and at 1 % labels (10 per type) beat the best label-free score
    (variance, laplacian) and the labels-only Fisher score. Simulation seeds 1 and 2 pass the same
    assertions (not run here: seconds each); docs/semi_supervised.md has the whole sweep.
    The PCA the default ("auto") builds is computed once and passed as ``embedding``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # thin products; 2 threads crawl on a busy machine
        _earns_its_labels(0)


def _earns_its_labels(seed):
    X, sim = simulate_singlecell(5000, 500, 5, 20, rng=seed, fold_change=3.0)
    Z = graph_space(X)
    mk = sim.markers.ravel()

    def frac(name, y=None, **kw):
        return np.isin(run_method(name, X, y, rng=0, **kw).order[:mk.size], mk).mean()

    label_free = max(frac("variance"), frac("laplacian", embedding=Z))
    # enscls: 150 members draw every gene (1 - 22/500)^150 < 0.2 %; it builds its own shared graph
    semi = {"cls": {"embedding": Z}, "c4": {"embedding": Z}, "csfs": {"neighbourhood": "knn", "embedding": Z},
            "enscls": {"n_members": 150}}
    fracs = {name: {} for name in semi}
    fisher = {}
    for per in (1, 3, 10, 20):  # 10 per type = 1 % of 5,000 cells
        y = few_labels(sim.cell_type, per, rng=1)
        # Fisher is undefined with one label per type (no within-class spread): refused
        fisher[per] = frac("fisher", y) if per > 1 else 0.0
        for name, kw in semi.items():
            fracs[name][per] = frac(name, y, **kw)
    for name, f in fracs.items():
        seq = [f[k] for k in sorted(f)]
        assert f[1] == label_free, (name, f)  # one label per class: no must-link pair, the Laplacian score
        assert all(b >= a - 0.03 for a, b in zip(seq, seq[1:], strict=False)), (name, f)
        assert f[10] > label_free and f[10] > fisher[10], (name, label_free, fisher, f)
        assert seq[-1] > seq[0], (name, f)
    # the papers' readings degrade (cls) or need many labels (c4's product: C1 = 0 with one label per type)
    lit = [frac("cls", few_labels(sim.cell_type, per, rng=1), embedding=Z, weights="literal") for per in (1, 20)]
    assert lit[1] < lit[0] - 0.1, lit
    c4 = frac("c4", few_labels(sim.cell_type, 3, rng=1), embedding=Z, weights="literal")
    assert c4 < fracs["c4"][3] - 0.2, c4


def test_negative_binomial_counts_are_overdispersed_and_normalised():
    from ssfs.simulate import generate_planted_markers
    from ssfs.singlecell import normalize_log1p

    kw = dict(depth_sd=0.0, rate_sd=0.0, mean_expression=2.0)  # every gene and cell alike outside markers
    pois = generate_planted_markers(4000, 60, 2, 5, rng=3, **kw).X.toarray()
    nb = generate_planted_markers(4000, 60, 2, 5, rng=3, dispersion=0.5, **kw)
    counts = nb.X.toarray()
    free = np.setdiff1d(np.arange(60), nb.markers.ravel())
    m, v = counts[:, free].mean(), counts[:, free].var()
    assert m == pytest.approx(2.0, rel=0.05)
    assert v == pytest.approx(m + 0.5 * m**2, rel=0.1)  # NB: mean + phi mean^2 (= 4)
    assert pois[:, free].var() == pytest.approx(2.0, rel=0.1)  # Poisson: the mean
    X = normalize_log1p(nb.X)
    assert sparse.isspmatrix_csr(X) and X.nnz == nb.X.nnz
    np.testing.assert_allclose(np.expm1(X.toarray()).sum(axis=1)[counts.sum(axis=1) > 0], 1e4, rtol=1e-10)


def test_a_given_graph_is_weighed_on_the_features_without_a_pca(monkeypatch):
    """With graph= (scanpy's connectivities), space "auto" weighs the given edges on the genes, as
    ssfs.tl documents; it used to compute a PCA only to weigh them (18 s of 35 s at 60,000 cells)."""
    from scipy import sparse

    import ssfs.methods._shared.representation as rep

    X, sim = simulate_singlecell(600, 120, 3, 8, rng=0)
    y = few_labels(sim.cell_type, 3, rng=1)
    rows = np.repeat(np.arange(600), 2)
    G = sparse.csr_matrix((np.ones(1200), (rows, (rows + np.tile([1, 2], 600)) % 600)), shape=(600, 600))
    G = G.maximum(G.T)
    raw = {m: run_method(m, X, y, graph=G, space="raw").scores for m in ("cls", "laplacian")}
    monkeypatch.setattr(rep, "pca_embedding", lambda *a, **k: (_ for _ in ()).throw(AssertionError("PCA")))
    for m in ("cls", "laplacian"):
        np.testing.assert_array_equal(run_method(m, X, y, graph=G).scores, raw[m])
