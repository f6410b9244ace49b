"""Raw counts read as log1p(normalised counts) (``ssfs.methods._shared.counts``, ``propagate``'s
``counts`` parameter): which data are raw counts, the values by hand, and ``propagate`` giving
the same bits on raw counts as on scanpy's normalize_total + log1p of them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from ssfs.errors import MethodError
from ssfs.methods._shared.counts import TARGET_SUM, raw_counts, read_counts


def test_which_data_are_raw_counts():
    counts = np.array([[0, 3, 0, 1], [2, 0, 0, 0], [0, 0, 5, 0]], dtype=np.float64)
    assert raw_counts(counts) and raw_counts(sparse.csr_matrix(counts)) and raw_counts(counts.astype(np.int32))
    assert not raw_counts(np.minimum(counts, 1))  # binary presence data
    assert not raw_counts(counts + 0.5 * (counts > 0))  # not integers
    assert not raw_counts(np.where(counts > 0, counts, -1.0))  # negative values
    assert not raw_counts(counts + 1)  # dense without zeros: images, mass spectra
    assert not raw_counts(sparse.csr_matrix((3, 4)))  # nothing stored
    assert not raw_counts(np.log1p(counts))


def test_deep_counts_with_few_zeros_are_counts_and_fixed_range_integers_are_not():
    """Counts with 10 % zeros (gene means log-normal, 2,000 counts per cell) are counts by their
    long tail (the largest value many times the 90th percentile of the others); 8-bit images,
    scikit-learn's digits (half zeros, 0-16) and spectra clipped at 999 are not."""
    from sklearn.datasets import load_digits

    from ssfs.methods._shared.counts import COUNT_TAIL, count_like, long_tailed_counts

    rng = np.random.default_rng(0)
    means = np.exp(rng.normal(0.0, 1.5, 300))
    deep = rng.poisson(means / means.sum() * 2000.0 * np.exp(rng.normal(0, 0.3, (200, 1)))).astype(np.float64)
    assert 0.05 < np.mean(deep == 0) < 0.5
    nonzero = deep[deep > 0]
    assert nonzero.max() >= COUNT_TAIL * np.quantile(nonzero, 0.9)
    assert long_tailed_counts(deep) and count_like(deep) and raw_counts(deep) and raw_counts(deep.astype(np.int64))
    assert not raw_counts(deep + 0.5)  # not integers
    image = rng.integers(0, 256, (200, 300)).astype(np.float64)
    spectra = np.minimum(rng.exponential(100.0, (200, 300)).round(), 999.0)
    digits = load_digits().data
    for X in (image, spectra, digits):
        assert not long_tailed_counts(X) and not count_like(X) and not raw_counts(X)
    assert count_like(np.log1p(deep)) and not long_tailed_counts(np.log1p(deep))  # log counts: by their lattice
    assert not long_tailed_counts(np.zeros((3, 4))) and not long_tailed_counts(np.array([["a"]]))


def test_log_normalised_counts_are_counts_by_their_lattice():
    """Dense log1p(counts normalised per cell) with 16 % zeros, as scanpy's normalize_total + log1p
    leave them (float64 and float32, all genes or a subset), and log2(1 + CPM): every row's values
    undone are whole multiples of the row's count of 1. Images in [0, 1] (k / 255: 2e-3 off the
    lattice), uniform noise, scaled binary data, integers and the same log values rounded to 3
    decimals (a limit: read as expression values) are not."""
    import anndata as ad
    import scanpy as sc

    from ssfs.methods._shared.counts import count_like, log_normalised_counts

    rng = np.random.default_rng(3)
    means = np.exp(rng.normal(0.0, 1.5, 300))
    counts = rng.poisson(means / means.sum() * 3000.0 * np.exp(rng.normal(0, 0.3, (200, 1)))).astype(np.float64)
    assert 0.1 < np.mean(counts == 0) < 0.5
    a = ad.AnnData(counts.copy())
    sc.pp.normalize_total(a, target_sum=1e4)
    sc.pp.log1p(a)
    logn = np.asarray(a.X)
    cpm = np.log2(1.0 + counts / counts.sum(axis=1, keepdims=True) * 1e6)
    for X in (logn, logn.astype(np.float32), logn[:, 50:250], cpm):
        assert log_normalised_counts(X) and count_like(X) and not raw_counts(X)
    image = rng.integers(0, 256, (200, 300)) / 255.0
    binary = (rng.random((200, 300)) < 0.7) / 3.0
    for X in (image, rng.random((200, 300)), binary, np.round(logn, 3), logn - 1.0, logn * 100):
        assert not log_normalised_counts(X) and not count_like(X)
    assert not log_normalised_counts(counts) and count_like(counts)  # integers: counts by their tail



def test_values_far_above_a_tiny_smallest_one_are_no_lattice():
    """Methylation beta values (Beta(20 mu, 20 (1 - mu)) about CpG means Beta(0.5, 0.5), ``bench_other_shapes``'
    ``methylation``) hold values near 0 in every row: the others are 10^5 times the smallest and more, within the
    relative tolerance of some whole multiple whatever they are. Before session 45 they were read as log counts
    (their graphs built on residuals of counts no row holds: 0.733 of the markers at 1 %, the label-free scores
    0.733; read as values 1.000). Log1p(CPM) of bulk counts at 2e7 reads per sample (the largest counts 10^5-10^6
    times a count of 1) stays on its lattice by the counts below :data:`LATTICE_RATIO`."""
    from ssfs.methods._shared.counts import LATTICE_RATIO, count_like, log_normalised_counts

    rng = np.random.default_rng(0)
    mu = np.clip(rng.beta(0.5, 0.5, 2000), 0.02, 0.98)
    beta = rng.beta(mu * 20.0, (1.0 - mu) * 20.0, (100, 2000))
    row = np.expm1(beta[0])
    assert np.mean(row / row.min() > LATTICE_RATIO) > 0.5
    assert not log_normalised_counts(beta) and not count_like(beta)
    means = np.exp(rng.normal(0.0, 2.0, 5000))
    deep = rng.poisson(means / means.sum() * 2e7, (24, 5000)).astype(np.float64)
    ratio = deep.max(axis=1) / np.where(deep > 0, deep, np.inf).min(axis=1)
    assert ratio.min() > 10 * LATTICE_RATIO
    logcpm = np.log1p(deep / deep.sum(axis=1, keepdims=True) * 1e6)
    assert log_normalised_counts(logcpm) and count_like(logcpm)

def test_read_counts_by_hand():
    counts = np.array([[0, 3, 0, 1], [2, 0, 0, 0], [0, 0, 5, 0]], dtype=np.float64)
    out = read_counts(counts)
    assert sparse.issparse(out)
    want = np.log1p(counts / counts.sum(axis=1, keepdims=True) * TARGET_SUM)
    np.testing.assert_allclose(out.toarray(), want, rtol=1e-15)
    assert out.toarray()[0, 1] == pytest.approx(np.log1p(7500.0))
    assert read_counts(counts, "as_is") is counts
    dense = counts + 1
    assert read_counts(dense) is dense  # not raw counts: as it is
    np.testing.assert_allclose(read_counts(dense, "log1p").toarray(),
                               np.log1p(dense / dense.sum(axis=1, keepdims=True) * TARGET_SUM))
    with pytest.raises(MethodError, match="counts='log1p' needs non-negative data"):
        read_counts(dense - 2, "log1p")
    with pytest.raises(MethodError, match="counts must be one of"):
        read_counts(counts, "scaled")


def test_propagate_reads_raw_counts_as_log_normalised_counts():
    """Planted counts (3 types of 100 cells, markers 0-11 four-fold in one type each, 188 genes
    of log-normal means, depth varying 20-fold; 3 labels per type): raw counts and
    log1p(normalised counts) give the same scores bit for bit, the 12 markers first; read as they
    are (``as_is``) on graphs of the values (``space="values"``) the depth leads the graph and none
    of the markers is in the first 12; the Pearson residuals' graphs (the default) model the depth
    (mu = t_c m_g) and rank the markers first from raw counts too."""
    from ssfs.methods.propagate import propagate_score

    rng = np.random.default_rng(0)
    n, p = 300, 200
    t = np.repeat([0, 1, 2], n // 3)
    base = np.exp(rng.normal(-1.0, 1.5, p))
    base[:12] = 0.3
    mu = np.tile(base, (n, 1))
    for k in range(3):
        mu[t == k, 4 * k:4 * k + 4] *= 4.0
    depth = np.exp(rng.uniform(0.0, np.log(20.0), n))
    counts = rng.poisson(mu * depth[:, None]).astype(np.float64)
    y = np.full(n, -1)
    labeled = [0, 1, 2, 100, 101, 102, 200, 201, 202]
    y[labeled] = t[labeled]
    raw = propagate_score(sparse.csr_matrix(counts), y, None, None).scores
    logn = propagate_score(read_counts(counts, "log1p"), y, None, None).scores
    np.testing.assert_array_equal(raw, logn)
    assert set(np.argsort(-raw, kind="stable")[:12]) == set(range(12))
    with pytest.warns(UserWarning, match="carries no class structure"):
        as_is = propagate_score(sparse.csr_matrix(counts), y, None, None, counts="as_is", space="values").scores
    assert not set(np.argsort(-as_is, kind="stable")[:12]) & set(range(12))
    residuals = propagate_score(sparse.csr_matrix(counts), y, None, None, counts="as_is").scores
    assert set(np.argsort(-residuals, kind="stable")[:12]) == set(range(12))


def test_the_command_line_ranks_a_raw_count_h5ad_as_its_log_normalised_counts(tmp_path):
    """``ssfs rank`` on an h5ad whose X holds raw counts and on one holding scanpy's
    normalize_total(1e4) + log1p of them: the same ranking file, byte for byte; ``--param
    counts=as_is`` reads the counts as they are and ranks otherwise."""
    import anndata as ad
    import pandas as pd

    from ssfs.cli import main

    rng = np.random.default_rng(1)
    n, p = 240, 40
    t = np.repeat(["a", "b", "c"], n // 3)
    mu = np.tile(np.exp(rng.normal(-1.0, 1.5, p)), (n, 1))
    for k, c in enumerate("abc"):
        mu[t == c, 3 * k:3 * k + 3] *= 5.0
    counts = rng.poisson(mu * np.exp(rng.uniform(0.0, np.log(20.0), n))[:, None]).astype(np.float32)
    labels = np.where(np.arange(n) % 20 == 0, t, None)
    out = {}
    for name, X in (("raw", sparse.csr_matrix(counts)), ("log", read_counts(counts.astype(np.float64), "log1p"))):
        adata = ad.AnnData(X, obs=pd.DataFrame({"cell_type": labels}, index=[f"c{i}" for i in range(n)]))
        adata.var_names = [f"g{j}" for j in range(p)]
        adata.write_h5ad(tmp_path / f"{name}.h5ad")
        for extra in ([], ["--param", "counts=as_is"]):
            dest = tmp_path / f"{name}{len(extra)}.tsv"
            assert main(["rank", str(tmp_path / f"{name}.h5ad"), "--label-key", "cell_type", "--method", "propagate",
                         "--no-progress", "-o", str(dest), *extra]) == 0
            out[name, bool(extra)] = dest.read_bytes()
    assert out["raw", False] == out["log", False] == out["log", True]
    assert out["raw", True] != out["raw", False]


def test_a_dense_csv_of_deep_counts_ranks_as_its_sparse_h5ad(tmp_path):
    """The same counts with 16 % zeros (deeply sequenced) as a dense CSV (``--label-column``)
    and as a sparse h5ad (``--label-key``): one ranking, byte for byte (before session 25 the CSV
    was read as expression values and ranked otherwise), the 9 planted markers first."""
    import anndata as ad
    import pandas as pd

    from ssfs.cli import main

    rng = np.random.default_rng(2)
    n, p = 240, 40
    t = np.repeat(["a", "b", "c"], n // 3)
    base = np.exp(rng.normal(0.5, 1.5, p))
    base[:9] = 2.0
    mu = np.tile(base, (n, 1))
    for k, c in enumerate("abc"):
        mu[t == c, 3 * k:3 * k + 3] *= 5.0
    counts = rng.poisson(mu * np.exp(rng.uniform(0.0, np.log(4.0), n))[:, None]).astype(np.float64)
    assert 0.1 < np.mean(counts == 0) < 0.5
    labels = np.where(np.arange(n) % 20 == 0, t, None)
    cells, genes = [f"c{i}" for i in range(n)], [f"g{j}" for j in range(p)]
    adata = ad.AnnData(sparse.csr_matrix(counts), obs=pd.DataFrame({"cell_type": labels}, index=cells))
    adata.var_names = genes
    adata.write_h5ad(tmp_path / "counts.h5ad")
    table = pd.DataFrame(counts.astype(np.int64), index=cells, columns=genes)
    table.insert(0, "cell_type", labels)
    table.to_csv(tmp_path / "counts.csv", index_label="cell")
    for name, door in (("h5ad", ["--label-key", "cell_type"]), ("csv", ["--label-column", "cell_type"])):
        assert main(["rank", str(tmp_path / f"counts.{name}"), *door, "--method", "propagate", "--no-progress",
                     "-o", str(tmp_path / f"{name}.tsv")]) == 0
    assert (tmp_path / "csv.tsv").read_bytes() == (tmp_path / "h5ad.tsv").read_bytes()
    ranked = pd.read_csv(tmp_path / "csv.tsv", sep="\t")
    assert set(ranked.iloc[:9, 0] if ranked.columns[0] != "rank" else ranked["feature"][:9]) == set(genes[:9])


def test_dense_log_normalised_counts_rank_as_their_sparse_matrix():
    """Splatter-like counts (300 cells, 23 % zeros) log1p-normalised: the dense matrix (a CSV, a
    dense h5ad) is read as log counts, as CSR, and gives the sparse one's scores bit for bit, without
    labels (the label-free groups and autocorrelation on the Pearson residuals' components) and with
    3 per type; before session 25 it was read as expression values (no labels: recall 0.72 sparse,
    the autocorrelation alone; on 500-cell draws dense 0.57 against 0.72)."""
    import warnings

    from ssfs import run_method
    from ssfs.simulate import simulate_splatter

    sim = simulate_splatter(300, 400, 4, 15, library_size=5000, rng=np.random.default_rng(5))
    logn = read_counts(sim.X, "log1p")
    assert 0.1 < np.mean(logn.toarray() == 0) < 0.5
    unlabeled = np.full(300, -1)
    labeled = np.full(300, -1)
    for k in range(4):
        labeled[np.flatnonzero(sim.classes == k)[:3]] = k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y in (unlabeled, labeled):
            sparse_run, dense_run = (run_method("propagate", X, y, rng=0) for X in (logn, logn.toarray()))
            np.testing.assert_array_equal(sparse_run.result.scores, dense_run.result.scores)
            if y is unlabeled:
                assert sim.recall(dense_run.order) == pytest.approx(0.817, abs=0.001)  # session 25: 0.717
