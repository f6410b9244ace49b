"""Per-class statistics from soft memberships (issue #28 item 3): a hand-computed case, hard
labels = the plain per-class computation and scanpy's rank_genes_groups, sparse = dense."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from ssfs import class_statistics
from ssfs.errors import InputError
from ssfs.methods._shared.class_stats import benjamini_hochberg, one_hot


def test_soft_memberships_by_hand():
    # feature x = (1, 2, 3, 4); class A weights (1, 1, .5, 0), class B (0, 0, .5, 1)
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    P = np.array([[1, 0], [1, 0], [0.5, 0.5], [0, 1]], dtype=float)
    st = class_statistics(X, P, ["A", "B"], scale="log")
    # A: V1 = 2.5, V2 = 2.25, mean 4.5 / 2.5 = 1.8, var (0.64 + 0.04 + 0.5 * 1.44) / (2.5 - 0.9) = 0.875
    assert st.mean[0, 0] == pytest.approx(1.8)
    assert st.var[0, 0] == pytest.approx(0.875)
    assert st.n_eff[0] == pytest.approx(2.5**2 / 2.25)
    # its rest is B: V1 = 1.5, V2 = 1.25, mean 5.5 / 1.5, var (0.5 (3 - 11/3)^2 + (4 - 11/3)^2) / (1.5 - 1.25/1.5) = 0.5
    assert st.mean_rest[0, 0] == pytest.approx(11 / 3)
    assert st.var_rest[0, 0] == pytest.approx(0.5)
    t = (1.8 - 11 / 3) / np.sqrt(0.875 / (6.25 / 2.25) + 0.5 / 1.8)
    assert st.scores[0, 0] == pytest.approx(t)
    assert st.scores[1, 0] == pytest.approx(-t)  # two classes: B against A
    assert st.logfoldchanges[0, 0] == pytest.approx(1.8 - 11 / 3)  # "log": difference of means
    assert st.pts[0, 0] == 1.0
    assert st.size.tolist() == [2.5, 1.5]


def _planted(seed=0, n=300, p=60):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.poisson(0.4, (n, p)).astype(float)
    X[:, :3] += 3.0 * (y[:, None] == np.arange(3)) * rng.poisson(1.0, (n, 3))
    return np.log1p(X), y


def test_hard_labels_equal_the_plain_per_class_computation():
    X, y = _planted()
    y_part = np.where(np.arange(y.size) % 3 == 0, y, -1)  # a third labeled
    st = class_statistics(X, one_hot(y_part, 3))
    lab = y_part >= 0
    for c in range(3):
        g, r = X[lab & (y_part == c)], X[lab & (y_part != c)]
        np.testing.assert_allclose(st.mean[c], g.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(st.mean_rest[c], r.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(st.var[c], g.var(axis=0, ddof=1), atol=1e-12)
        np.testing.assert_allclose(st.pts[c], (g != 0).mean(axis=0))
        se = np.sqrt(g.var(axis=0, ddof=1) / len(g) + r.var(axis=0, ddof=1) / len(r))
        np.testing.assert_allclose(st.scores[c], (g.mean(axis=0) - r.mean(axis=0)) / se, atol=1e-10)
    # the planted markers are first in their own class's ranking
    assert all(st.order(c)[0] == c for c in range(3))
    assert st.best_class()[:3].tolist() == [0, 1, 2]


def test_equals_scanpy_rank_genes_groups_on_full_labels():
    sc = pytest.importorskip("scanpy")
    ad = pytest.importorskip("anndata")
    import pandas as pd

    X, y = _planted(1)
    names = [f"g{j}" for j in range(X.shape[1])]
    adata = ad.AnnData(X=sparse.csr_matrix(X), obs=pd.DataFrame({"t": pd.Categorical(y.astype(str))}))
    adata.var_names = names
    sc.tl.rank_genes_groups(adata, "t", method="t-test", pts=True)
    st = class_statistics(sparse.csr_matrix(X), one_hot(y), classes=["0", "1", "2"])
    ours = st.to_frame(names).set_index(["group", "names"])
    for g in "012":
        ref = sc.get.rank_genes_groups_df(adata, g).set_index("names")
        mine = ours.loc[g].loc[ref.index]
        np.testing.assert_allclose(mine.scores, ref.scores, rtol=1e-5, atol=1e-5)  # scanpy stores float32
        np.testing.assert_allclose(mine.logfoldchanges, ref.logfoldchanges, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mine.pvals, ref.pvals, rtol=1e-8, atol=1e-300)
        np.testing.assert_allclose(mine.pvals_adj, ref.pvals_adj, rtol=1e-8, atol=1e-300)
        np.testing.assert_allclose(mine.pct_nz_group, ref.pct_nz_group)
        np.testing.assert_allclose(mine.pct_nz_reference, ref.pct_nz_reference)
    assert st.scale == "log1p"


def test_sparse_equals_dense_and_scores_ignore_a_shift():
    X, y = _planted(2)
    P = np.random.default_rng(0).dirichlet(np.ones(3), size=X.shape[0])
    dense = class_statistics(X, P)
    sp = class_statistics(sparse.csr_matrix(X), P)
    for f in ("mean", "var", "pts", "scores", "logfoldchanges", "pvals"):
        np.testing.assert_allclose(getattr(sp, f), getattr(dense, f), rtol=1e-9, atol=1e-12)
    shifted = class_statistics(X + 1e6, P)  # centred internally: no cancellation
    np.testing.assert_allclose(shifted.scores, dense.scores, rtol=1e-6, atol=1e-6)


def test_pvalues_are_scipy_stats_welch_t_to_the_bit():
    """The p-values come from scipy.special.stdtr (scipy.stats costs 0.4 s to import in every job):
    the same bits as 2 * scipy.stats.t.sf(|t|, df) with the Welch-Satterthwaite df, also where df
    or t is 0, infinite or nan (constant columns, a class of one sample)."""
    from scipy import stats

    X, y = _planted(1)
    X[:, 5] = 1.0  # constant: t = 0 / 0
    X[y == 0, 6] = 2.0  # constant within class 0
    P = np.eye(3)[y]
    P[0] = [0.0, 0.0, 1.0]
    st = class_statistics(X, P, ["a", "b", "c"])
    a, b = st.var / st.n_eff[:, None], st.var_rest / st.n_eff_rest[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        df = (a + b) ** 2 / (a**2 / (st.n_eff[:, None] - 1) + b**2 / (st.n_eff_rest[:, None] - 1))
        ref = 2.0 * stats.t.sf(np.abs(st.scores), df)
    ref = np.where(np.isnan(ref), 1.0, ref)
    assert np.array_equal(st.pvals, ref) and st.pvals[:, 5].tolist() == [1.0, 1.0, 1.0]
    assert (np.diag(st.pvals[:, :3]) < 1e-10).all()  # feature c is up in class c
    values = np.array([0.0, 1e-300, 0.5, 3.0, 40.0, 1e300, np.inf, np.nan])
    t, df = np.meshgrid(values, np.r_[values, -1.0])
    from scipy.special import stdtr

    with np.errstate(invalid="ignore"):
        assert np.array_equal(2.0 * stdtr(df, -t), 2.0 * stats.t.sf(t, df), equal_nan=True)


def test_benjamini_hochberg_by_hand():
    # sorted 0.01, 0.03, 0.04, 0.5 -> p m / rank = 0.04, 0.06, 0.0533, 0.5 -> running minimum from the top
    np.testing.assert_allclose(benjamini_hochberg([0.01, 0.04, 0.03, 0.5]), [0.04, 0.16 / 3, 0.16 / 3, 0.5])


def test_bad_memberships_are_refused():
    X = np.ones((4, 2))
    with pytest.raises(InputError, match="one row per sample"):
        class_statistics(X, np.ones((3, 2)))
    with pytest.raises(InputError, match="non-negative"):
        class_statistics(X, -np.ones((4, 2)))
    with pytest.raises(InputError, match="class names"):
        class_statistics(X, np.ones((4, 2)), ["a"])
    with pytest.raises(InputError, match="group"):
        class_statistics(X, np.ones((4, 2))).to_frame(groups=["z"])



def _floored(rng, n: int = 40):
    """A log10 array's floor (1.30103 = log10 20) on the samples of positive weight, values above it elsewhere."""
    X = rng.normal(size=(n, 2))
    kept = rng.random(n) < 0.4
    X[kept, 0] = 1.301029995663981
    X[~kept, 0] = 1.301029995663981 + rng.random((~kept).sum())
    return X, kept


def test_a_constant_feature_explains_nothing_whatever_the_rounding():
    """A feature constant over the weighted samples has R^2 NaN (ranked last), not the rounding's ratio: the weighted
    mean of twelve 1.30103 at weight 0.7 is one unit off, which made the R^2 0.9999999999999998 (GLIOMA at 3 labels
    per class, the propagated samples at weight 0: 10 of propagate's top 10 were such features, top-10 SVM accuracy
    0.24, 0.54 without them). Every path: dense, sparse, within batches, one group against the rest."""
    from ssfs.methods._shared.class_stats import one_vs_rest_explained, variance_explained

    X = np.random.default_rng(0).normal(size=(50, 2))
    X[:12, 0] = 1.301029995663981
    X[12:, 0] = 1.301029995663981 + np.linspace(0.1, 1.0, 38)
    w = np.where(np.arange(50) < 12, 0.7, 0.0)
    g = np.arange(50) % 4
    assert np.isnan(variance_explained(X, g, w)[0])
    assert variance_explained(X, g, w)[1] == pytest.approx(variance_explained(X[:12], g[:12])[1])  # weight 0.7 each
    rng = np.random.default_rng(1)
    for _ in range(100):
        X, kept = _floored(rng)
        w = np.where(kept, rng.choice([1.0, 0.5, 0.7, 1 / 3]), 0.0) * np.where(rng.random(X.shape[0]) < 0.3, 0.5, 1.0)
        g, b = rng.integers(0, 3, X.shape[0]), rng.integers(0, 2, X.shape[0])
        for A in (X, sparse.csr_matrix(X)):
            assert np.isnan(variance_explained(A, g, w)[0])
            assert np.isnan(variance_explained(A, g, w, batch=b)[0])
            assert np.isfinite(variance_explained(A, g, w)[1])
        assert np.isnan(one_vs_rest_explained(X[kept], g[kept])[:, 0]).all()


def test_a_feature_constant_only_within_batches_explains_nothing_there():
    """Constant within each batch (two floors), not overall: nothing is left of it within batches (NaN), while
    without batches it is a feature the groups do not explain (0); a feature varying within one batch keeps its R^2."""
    from ssfs.methods._shared.class_stats import variance_explained

    b = np.repeat([0, 1], 10)
    g = np.tile([0, 1], 10)
    X = np.column_stack([np.where(b == 0, 1.301029995663981, 2.7), np.where(b == 0, 0.3, 0.3 + 0.1 * g)])
    w = np.full(20, 0.7)
    assert np.isnan(variance_explained(X, g, w, batch=b)[0])
    assert np.isnan(variance_explained(sparse.csr_matrix(X), g, w, batch=b)[0])
    assert variance_explained(X, g, w)[0] == pytest.approx(0.0, abs=1e-6)  # the batches are not the groups
    # residuals 0 in batch 0 and -/+0.05 in batch 1: group means -/+0.025 over both, between 20 (0.7) 0.025^2,
    # total 10 (0.7) 0.05^2: 0.5
    assert variance_explained(X, g, w, batch=b)[1] == pytest.approx(0.5)
