"""Single-cell helpers (ssfs.singlecell) and the scanpy baselines, on small generated data."""

import numpy as np
import pytest
from scipy import sparse

from ssfs import list_methods, run_method
from ssfs.errors import InputError, MethodError, SupervisionError
from ssfs.simulate import few_labels, generate_planted_markers
from ssfs.singlecell import log_normalize, neighbors_graph

ad = pytest.importorskip("anndata")
sc = pytest.importorskip("scanpy")


@pytest.fixture(scope="module")
def sim():
    return generate_planted_markers(1200, 200, 4, 8, rng=7)


@pytest.fixture(scope="module")
def logX(sim):
    return log_normalize(sim.X)


def recovered(order, markers, top=None):
    top = markers.size if top is None else top
    return len(set(order[:top].tolist()) & set(markers.ravel().tolist())) / markers.size


def test_generated_counts_are_sparse_reproducible_with_planted_markers(sim):
    assert sparse.isspmatrix_csr(sim.X) and sim.X.shape == (1200, 200)
    assert 0.02 < sim.X.nnz / (1200 * 200) < 0.5
    assert np.array_equal(sim.X.data, np.round(sim.X.data)) and sim.X.data.min() >= 1
    again = generate_planted_markers(1200, 200, 4, 8, rng=7)
    assert (again.X != sim.X).nnz == 0 and np.array_equal(again.membership, sim.membership)
    assert (generate_planted_markers(1200, 200, 4, 8, rng=8).X != sim.X).nnz > 0
    assert sim.membership.shape == (4, 200) and (sim.membership.sum(axis=1) == 8).all() and sim.markers.size == 32
    assert np.array_equal(np.bincount(sim.cell_type), [300] * 4)
    dense = sim.X.toarray()
    for t in range(4):  # each marker's mean count in its type is several-fold its mean elsewhere
        inside = dense[sim.cell_type == t][:, sim.markers_of(t)].mean(axis=0)
        outside = dense[sim.cell_type != t][:, sim.markers_of(t)].mean(axis=0)
        assert np.all(inside > 3 * outside)
    with pytest.raises(InputError, match="n_types \\* n_markers"):
        generate_planted_markers(10, 5, 3, 2)


def test_log_normalize_matches_formula_and_stays_sparse(sim):
    X = log_normalize(sim.X)
    assert sparse.issparse(X) and X.nnz == sim.X.nnz
    d = sim.X.toarray()
    expect = np.log1p(d / d.sum(axis=1, keepdims=True) * 1e4)
    np.testing.assert_allclose(X.toarray(), expect, rtol=1e-6)


def test_stored_connectivities_are_used(logX):
    n = logX.shape[0]
    rng = np.random.default_rng(0)
    # a deliberately unusual graph: each cell linked to 4 random others
    i = np.repeat(np.arange(n), 4)
    j = rng.integers(0, n, size=i.size)
    G = sparse.csr_matrix((np.ones(i.size), (i, j)), shape=(n, n))
    G = G.maximum(G.T).tocsr()
    adata = ad.AnnData(X=logX)
    adata.obsp["connectivities"] = G
    got = neighbors_graph(adata)
    assert (got != G).nnz == 0
    recomputed = neighbors_graph(adata, use_stored=False, n_neighbors=5, n_pcs=10)
    assert (recomputed != G).nnz > 0
    s_stored = run_method("laplacian", logX, graph=got).scores
    s_knn = run_method("laplacian", logX, graph=recomputed).scores
    assert not np.allclose(s_stored, s_knn)


def test_laplacian_on_stored_graph_equals_direct_pair_sums():
    rng = np.random.default_rng(3)
    X = sparse.random(25, 6, density=0.4, random_state=1, format="csr") * 5
    P = sparse.random(25, 25, density=0.15, random_state=2, format="csr")
    P = (P + P.T).tocsr()
    adata = ad.AnnData(X=X)
    adata.obsp["connectivities"] = P
    scores = run_method("laplacian", X, graph=neighbors_graph(adata), rng=rng).scores
    # direct: heat kernel on the stored edges, t = mean squared distance over the edges
    D = X.toarray()
    coo = sparse.coo_matrix(P)
    pairs = [(a, b) for a, b in zip(coo.row, coo.col, strict=True) if a != b]
    d2 = {(a, b): float(((D[a] - D[b]) ** 2).sum()) for a, b in pairs}
    t = np.mean([v for v in d2.values() if v > 0])
    S = np.zeros((25, 25))
    for (a, b), v in d2.items():
        S[a, b] = S[b, a] = np.exp(-v / t)
    deg = S.sum(axis=1)
    expect = []
    for r in range(6):
        f = D[:, r]
        num = sum(S[a, b] * (f[a] - f[b]) ** 2 for a in range(25) for b in range(25)) / 2
        mu = (f * deg).sum() / deg.sum()
        expect.append(num / (deg * (f - mu) ** 2).sum())
    np.testing.assert_allclose(scores, expect, rtol=1e-9)


def test_computed_graph_is_scanpys_and_reproducible(logX):
    G = neighbors_graph(logX, 11, n_neighbors=10, n_pcs=20)
    assert sparse.isspmatrix_csr(G) and G.shape == (1200, 1200)
    assert abs(G - G.T).max() < 1e-6 and G.diagonal().sum() == 0
    assert (neighbors_graph(logX, 11, n_neighbors=10, n_pcs=20) != G).nnz == 0
    # reference: scanpy called directly with the same seed
    seed = int(np.random.default_rng(11).integers(2**31 - 1))
    ref = ad.AnnData(X=logX.copy())
    sc.pp.pca(ref, n_comps=20, random_state=seed)
    sc.pp.neighbors(ref, n_neighbors=10, use_rep="X_pca", random_state=seed, transformer="sklearn")
    assert abs(G - ref.obsp["connectivities"]).max() < 1e-12
    # n_pcs=None searches the genes directly
    assert (neighbors_graph(logX, 11, n_neighbors=10, n_pcs=None) != G).nnz > 0


def test_sparse_input_never_densified(logX, sim, monkeypatch):
    """No cells-sized sparse matrix is turned dense (small per-group results may be)."""
    n = logX.shape[0]
    y = few_labels(sim.cell_type, 3, 0)
    G = neighbors_graph(logX, 0, n_neighbors=10, n_pcs=20)
    densified = []
    for cls in (sparse.csr_matrix, sparse.csc_matrix, sparse.coo_matrix):
        for attr in ("toarray", "todense"):
            original = getattr(cls, attr)

            def guarded(self, *a, _original=original, **k):
                if max(self.shape) >= n:
                    densified.append(self.shape)
                return _original(self, *a, **k)

            monkeypatch.setattr(cls, attr, guarded)
    X = logX.copy()
    for name, yy in (("laplacian", None), ("cls", y)):
        scores = run_method(name, X, yy, graph=G).scores
        assert scores.shape == (logX.shape[1],) and np.isfinite(scores).all()
    assert densified == [] and sparse.issparse(X)


def test_planted_markers_ranked_top_with_three_labels_per_type(sim, logX):
    y = few_labels(sim.cell_type, 3, rng=1)
    assert np.array_equal(np.bincount(y[y >= 0]), [3] * 4) and (y >= 0).sum() == 12
    G = neighbors_graph(logX, 0, n_neighbors=15, n_pcs=20)
    for name in ("cls", "laplacian"):
        order = run_method(name, logX, y, graph=G).order
        assert recovered(order, sim.markers) >= 0.9, name
    # the 3-cell supervised baseline is clearly worse than CLS here
    sup = run_method("scanpy_rank_genes", logX, y).order
    assert recovered(sup, sim.markers) < recovered(run_method("cls", logX, y, graph=G).order, sim.markers)


def test_scanpy_baselines_registered_and_equal_to_direct_formulas(logX, sim):
    assert {"scanpy_hvg", "scanpy_rank_genes"} <= set(list_methods())
    # rank_genes_groups t-test (Welch, one vs rest), best over groups, computed directly
    y = sim.cell_type.copy()
    y[::2] = -1  # half the cells unlabeled: only labeled cells are used
    r = run_method("scanpy_rank_genes", logX, y)
    assert r.higher_is_better
    D = logX.toarray()[y >= 0]
    yl = y[y >= 0]
    best = np.full(D.shape[1], -np.inf)
    for g in range(4):
        a, b = D[yl == g], D[yl != g]
        t = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
        best = np.maximum(best, np.where(np.isfinite(t), t, -np.inf))
    np.testing.assert_allclose(r.scores, np.where(np.isfinite(best), best, np.nan), rtol=1e-4)
    assert recovered(r.order, sim.markers) == 1.0
    with pytest.raises(SupervisionError):
        run_method("scanpy_rank_genes", logX, None)

    # highly variable genes: scanpy's normalized dispersion, called directly as reference
    h = run_method("scanpy_hvg", logX)
    ref = sc.pp.highly_variable_genes(ad.AnnData(X=logX.copy()), flavor="seurat", inplace=False)
    np.testing.assert_allclose(h.scores, ref["dispersions_norm"].to_numpy(dtype=float), equal_nan=True)
    assert h.higher_is_better and np.isfinite(h.scores).sum() > 150
    w = run_method("scanpy_rank_genes", logX, sim.cell_type, method="wilcoxon")
    assert recovered(w.order, sim.markers) == 1.0
    with pytest.raises(MethodError, match="parameter flavor: expected one of 'seurat', 'cell_ranger'"):
        run_method("scanpy_hvg", logX, flavor="seurat_v3")
