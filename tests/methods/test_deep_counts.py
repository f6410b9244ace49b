"""Deep counts (bulk RNA-seq) read as log values (``methods/_shared/deep_counts.py``, ``propagate``'s
``counts="auto"`` / ``"deep"``): which counts are deep, the readings by hand, and planted bulk studies whose
condition genes the count path (Pearson residuals) missed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse

from ssfs import run_method
from ssfs.errors import MethodError
from ssfs.methods._shared import deep_counts as D
from ssfs.methods._shared.residuals import overdispersion


def _recall(order, markers) -> int:
    return int(np.isin(np.asarray(order)[:markers.size], markers).sum())


def test_the_readings_by_hand():
    """Counts of 3 samples x 3 genes and one without counts: size factors by the median of ratios to the genes'
    geometric means (DESeq2's), log2(c / s + theta) and ln(1 + c / (s theta)) (the empty sample: log2 theta and 0),
    read alike from log1p(CPM) of the counts; one gene 10 x higher in a sample moves its total, not its factor."""
    from scipy.stats import gmean

    C = np.array([[1.0, 5.0, 4.0], [10.0, 1.0, 9.0], [1.0, 15.0, 14.0], [0.0, 0.0, 0.0]])
    s = np.r_[np.median(C[:3] / gmean(C[:3], axis=0), axis=1), 0.0]
    np.testing.assert_allclose(D.size_factors(C), s, rtol=1e-12)
    normalised = np.vstack([C[:3] / s[:3, None], np.zeros(3)])
    theta = 4.0
    np.testing.assert_allclose(D.DeepCounts.of(C, theta).values(), np.log2(normalised + theta), rtol=1e-12)
    np.testing.assert_allclose(D.DeepCounts.of(C, theta).log1p().toarray(), np.log1p(normalised / theta), rtol=1e-12)
    logn = np.log1p(C / np.maximum(C.sum(axis=1, keepdims=True), 1) * 1e6)  # log1p(CPM): the counts read back
    np.testing.assert_allclose(D.DeepCounts.of(logn, theta).values(), np.log2(normalised + theta), rtol=1e-9)
    rng = np.random.default_rng(0)
    B = rng.poisson(rng.lognormal(4.0, 1.0, 200), (6, 200)).astype(float) + 1.0
    composed = B.copy()
    composed[0, :5] *= 10.0
    assert composed[0].sum() > 1.1 * B[0].sum()
    np.testing.assert_allclose(D.size_factors(composed)[0] / D.size_factors(B)[0], 1.0, atol=0.05)
    no_gene_everywhere = np.array([[0.0, 2.0], [3.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(D.size_factors(no_gene_everywhere), [1.0, 1.5, 1.0])


def test_which_counts_are_deep(other_shapes):
    """theta is Hotspot's moment estimate of the counts; the share counts the expressed genes whose mean count
    exceeds 5 theta. Planted bulk counts (24 samples at 2e7 reads): 0.80, deep, as raw counts and as log1p(CPM)
    alike. Single cells (planted counts of 5 types, more than half their values 0) and sparse counts: 0, not deep;
    Splatter-like counts of 400 genes at 5,000 per cell (22 % zeros): 0.24; arrays and negative values: None."""
    X, C, _, _ = other_shapes.SHAPES["bulk_counts"](0)
    theta, share = D.depth_theta(C)
    assert theta == pytest.approx(overdispersion(C), rel=1e-12) and 10.0 < theta < 12.0
    mean = C.mean(axis=0)
    assert share == pytest.approx(np.mean(mean[mean > 0] > D.DEEP_RATIO * theta)) and share > 0.75
    assert D.depth_theta(X) == pytest.approx((theta, share), rel=1e-6)
    Xs, Cs, _, _ = other_shapes.SHAPES["low_expressed_markers_counts"](0)
    assert D.depth_theta(Cs)[1] == 0.0 and D.depth_theta(sparse.csr_matrix(Cs))[1] == 0.0
    assert D.depth_theta(Xs)[1] == 0.0
    from ssfs.simulate import simulate_splatter

    deep_cells = simulate_splatter(300, 400, 4, 15, library_size=5000, rng=np.random.default_rng(5)).X
    assert D.depth_theta(deep_cells)[1] == pytest.approx(0.241, abs=0.001)
    G, _, _, _ = other_shapes.SHAPES["heteroscedastic"](0)
    assert D.depth_theta(G) is None and D.depth_theta(np.log2(C + 0.5) - 3.0) is None


def test_full_length_single_cells_are_not_deep(other_shapes):
    """Smart-seq2-like reads of single cells (400 cells, a third of the counts 0) pass both bulk tests (two thirds
    of the expressed genes above 5 theta), but the median deep gene loses about a sixth of its counts to dropouts
    (bulk: none), which the log reading turns into every deep gene's loudest variance: they keep the count path,
    which finds 128 of the 150 type genes without labels and all 150 with 3 labels per type, against 20 and 77 read as
    log values (session 47). The rule by hand: the median deep gene's share of zeros above ``DEEP_DROPOUTS``; bulk
    genes silent in one condition (a third of them) leave that median at 0 and the counts deep."""
    X, C, cls, markers = other_shapes.SHAPES["full_length_counts"](0)
    theta, share = D.depth_theta(C)
    mean = C.mean(axis=0)
    above = mean > D.DEEP_RATIO * theta
    assert np.mean(above[mean > 0]) > D.DEEP_SHARE and np.mean(C != 0) > 1.0 - 0.5  # the two bulk tests pass
    median = np.median(np.mean(C[:, above] == 0, axis=0))
    assert median == pytest.approx(0.1725, abs=1e-4) and median > D.DEEP_DROPOUTS
    np.testing.assert_array_equal(np.rint(D.dropouts(sparse.csr_matrix(C)) * C.shape[0]), np.sum(C == 0, axis=0))
    assert share == 0.0 and D.depth_theta(X)[1] == 0.0
    _, B, bulk_cls, _ = other_shapes.SHAPES["bulk_counts"](0)
    silenced = B.copy()
    silenced[np.ix_(bulk_cls == 0, np.arange(0, B.shape[1], 3))] = 0.0
    bulk_theta, bulk_share = D.depth_theta(silenced)
    assert np.mean(silenced[:, silenced.mean(axis=0) > D.DEEP_RATIO * bulk_theta] == 0) > D.DEEP_DROPOUTS
    assert bulk_share > D.DEEP_SHARE
    y = other_shapes.per_class_labels(cls, 3, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", X, y, rng=0)
        assert not fit.result.extra["graph"]["deep_counts"]
        found = {(b, reading): _recall(run_method("propagate", X, labels, rng=0, counts=reading).order, markers)
                 for b, labels in (("none", np.full_like(y, -1)), ("3", y)) for reading in ("auto", "deep")}
    assert _recall(fit.order, markers) == found["3", "auto"] == 150
    assert found["none", "auto"] >= 120 and found["none", "deep"] <= 30 and found["3", "deep"] <= 90


def test_propagate_reads_deep_counts_as_log_values(other_shapes):
    """The deep reading is what ``propagate`` ranks on (same bits as its log values given as an array), whether the
    counts come raw or as log1p(CPM); ``counts="log1p"`` keeps the count path; single cells keep it by default."""
    X, C, cls, _ = other_shapes.SHAPES["bulk_counts"](1)
    y = other_shapes.per_class_labels(cls, 3, 1)
    theta = D.depth_theta(C)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        deep = run_method("propagate", C, y, rng=0)
        graph = deep.result.extra["graph"]
        assert graph["deep_counts"] and graph["deep_theta"] == pytest.approx(theta)
        values = D.DeepCounts.of(C, theta).values()
        np.testing.assert_array_equal(deep.order, run_method("propagate", values, y, rng=0).order)
        np.testing.assert_array_equal(deep.order, run_method("propagate", C, y, rng=0, counts="deep").order)
        assert not run_method("propagate", C, y, rng=0, counts="log1p").result.extra["graph"]["deep_counts"]
        Xs, _, cs, _ = other_shapes.SHAPES["low_expressed_markers_counts"](0)
        single = run_method("propagate", Xs, other_shapes.per_class_labels(cs, 3, 0), rng=0)
    assert not single.result.extra["graph"]["deep_counts"] and "deep_theta" not in single.result.extra["graph"]


def test_the_groups_statistics_are_of_the_counts(other_shapes):
    """Per-class statistics of deep counts are those of their log1p-normalised counts (over size factor x
    theta): fractions expressing count the samples with a count (a gene without counts in a group: 0,
    not the 1 of its log2 theta), and the condition genes' log fold changes carry their planted sign."""
    _, C, cls, markers = other_shapes.SHAPES["bulk_counts"](0)
    C = C.copy()
    C[cls == 0, 7] = 0.0  # gene 7 silent in condition 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = run_method("propagate", C, cls, rng=0).result.extra["class_statistics"]
    first = list(stats.classes).index("0")
    assert stats.pts[first, 7] == 0.0 and stats.pts_rest[first, 7] > 0.9 and stats.scale == "log1p"
    rate = C / C.sum(axis=1, keepdims=True)
    for c in range(3):
        genes = markers[c * 30:(c + 1) * 30]
        truth = np.sign(np.log(rate[cls == c][:, genes].mean(axis=0) / rate[cls != c][:, genes].mean(axis=0)))
        row = list(stats.classes).index(str(c))
        assert np.mean(np.sign(stats.logfoldchanges[row, genes]) == truth) >= 0.9


def test_deep_counts_needs_counts_and_the_choices_are_checked():
    with pytest.raises(MethodError, match="counts='deep' needs counts"):
        D.read_deep(np.random.default_rng(0).normal(size=(20, 5)), "deep")
    with pytest.raises(MethodError, match="counts must be one of"):
        D.read_deep(np.ones((3, 3)), "vst")


@pytest.mark.parametrize("shape, budget, before, least", [
    ("bulk_counts_four_conditions", 3, 91, 106),  # 60 samples of 4 conditions; fisher 25, label spreading + F 20
    ("bulk_counts_large", 2, 48, 88),  # 200 samples, 1.5-fold; fisher 2, label spreading + F 11
    ("bulk_counts_large", 0, 2, 78),  # no label (session 45's label-free scores: 84)
    ("bulk_counts_composition", 0, 43, 75),  # no label: 90 genes, Moran's I of session 46 (session 45: 43)
])
def test_planted_bulk_studies_find_their_condition_genes(other_shapes, shape, budget, before, least):
    """Planted bulk studies (``bench_other_shapes.py``, seed 0), ``budget`` labels per condition: the condition
    genes in the top 120 / 90 read as log values (at least ``least``) against the count path's before session 45
    (``before``: the graphs on Pearson residuals)."""
    X, _, cls, markers = other_shapes.SHAPES[shape](0)
    y = other_shapes.per_class_labels(cls, budget, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _recall(run_method("propagate", X, y, rng=0).order, markers) >= least > before


def test_the_anndata_and_scikit_learn_doors_read_bulk_counts_alike(other_shapes):
    """Raw bulk counts in an AnnData's ``X`` (60 samples, 3 labeled per condition, the others NaN in ``obs``):
    ``ssfs.tl.rank_features`` ranks as ``run_method`` (106 of the 120 condition genes first, as the planted-study
    test) and ``SemiSupervisedSelector`` keeps the same top 120."""
    import anndata as ad
    import pandas as pd

    import ssfs
    from ssfs.selector import SemiSupervisedSelector

    _, C, cls, markers = other_shapes.SHAPES["bulk_counts_four_conditions"](0)
    y = other_shapes.per_class_labels(cls, 3, 0)
    names = pd.Categorical([f"cond{c}" if c >= 0 else np.nan for c in y])
    adata = ad.AnnData(C.copy(), obs=pd.DataFrame({"condition": names}, index=[f"s{i}" for i in range(C.shape[0])]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ssfs.tl.rank_features(adata, groupby="condition")
        expected = run_method("propagate", C, y, rng=0).order
        selector = SemiSupervisedSelector(n_features=markers.size).fit(C, y)
    ranked = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")
    np.testing.assert_array_equal(ranked[:markers.size], expected[:markers.size])
    assert _recall(ranked, markers) >= 106
    assert set(np.flatnonzero(selector.get_support())) == set(expected[:markers.size])


def test_the_command_line_ranks_a_bulk_count_table_and_refuses_a_bad_reading(tmp_path, other_shapes, capsys):
    """``ssfs rank`` on a CSV of raw bulk counts (24 samples, 3 labeled per condition, blank label cells): the
    ranking ``run_method`` gives; ``--param counts=vst`` is refused in one line before anything runs."""
    import pandas as pd

    from ssfs.cli import main

    _, C, cls, markers = other_shapes.SHAPES["bulk_counts"](2)
    y = other_shapes.per_class_labels(cls, 3, 2)
    table = pd.DataFrame(C.astype(np.int64), columns=[f"g{j}" for j in range(C.shape[1])])
    table.insert(0, "condition", [f"c{c}" if c >= 0 else "" for c in y])
    table.to_csv(tmp_path / "bulk.csv", index=False)
    door = ["rank", str(tmp_path / "bulk.csv"), "--label-column", "condition", "--index-column", "none",
            "--method", "propagate", "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*door, "-o", str(tmp_path / "ranked.tsv")]) == 0
        expected = run_method("propagate", C, y, rng=0).order
    ranked = pd.read_csv(tmp_path / "ranked.tsv", sep="\t")
    features = ranked["feature"] if "feature" in ranked else ranked.iloc[:, 0]
    assert list(features[:markers.size]) == [f"g{j}" for j in expected[:markers.size]]
    capsys.readouterr()
    assert main([*door, "--param", "counts=vst", "-o", str(tmp_path / "bad.tsv")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "counts" in err[0] and "deep" in err[0] and not (tmp_path / "bad.tsv").exists()


def test_deep_counts_without_labels_rank_by_moran_i():
    """Deep counts' label-free scores (``dense_moran``): Moran's I of every gene on the kNN graph of the leading
    components (at least 2; one neighbour per 10 samples, at least 3). Two conditions of 20 samples apart on 2 genes
    among 30 of Gaussian noise: those 2 genes' I 0.93 (every sample's 4 neighbours in its condition), Moran's I of
    them by hand on that graph; the noise genes' at most 0.36 (those loading on the second, noise component)."""
    from ssfs.methods._shared.autocorrelation import moran_i
    from ssfs.methods._shared.graph import knn_graph
    from ssfs.methods._shared.representation import signal_pca
    from ssfs.methods.propagate import dense_moran

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 30))
    X[:20, :2] += 6.0
    scores, d = dense_moran(X, 10)
    assert d >= 1 and set(np.argsort(-scores)[:2]) == {0, 1}
    assert scores[:2].min() > 0.9 and scores[2:].max() < 0.4
    W = knn_graph(signal_pca(X - X.mean(axis=0), max(d, 2)), 4)
    np.testing.assert_allclose(scores, moran_i(X, W), rtol=1e-10)
    Xc = X - X.mean(axis=0)
    R = sparse.diags(1.0 / np.asarray(W.sum(axis=1)).ravel()) @ W
    by_hand = np.einsum("ij,ij->j", Xc, R @ Xc) / np.einsum("ij,ij->j", Xc, Xc)
    np.testing.assert_allclose(scores, by_hand, rtol=1e-10)


def test_a_deep_fit_without_labels_names_its_scores(other_shapes):
    _, C, cls, _ = other_shapes.SHAPES["bulk_counts_composition"](0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", C, np.full(cls.size, -1), rng=0)
    assert fit.result.extra["graph"]["deep_counts"]
    assert "Moran's I on the signal components' kNN graph" in fit.result.extra["note"]
