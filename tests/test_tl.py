"""ssfs.tl.rank_features: the scanpy-style door (labels from obs, NaN = unlabeled)."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

import ssfs
from ssfs import SupervisionError
from ssfs.simulate import few_labels, generate_planted_markers

ad = pytest.importorskip("anndata")

NAMES = np.array(["T cell", "B cell", "NK"], dtype=object)


@pytest.fixture(scope="module")
def cells():
    """300 sparse cells, 3 named types with 5 planted markers each; 20 labeled cells per type (80 % NaN)."""
    pm = generate_planted_markers(300, 200, 3, 5, rng=0)
    a = pm.to_anndata()
    y = few_labels(pm.cell_type, 20, rng=1)
    a.obs["ct"] = pd.Categorical([NAMES[c] if c >= 0 else None for c in y], categories=list(NAMES))
    return a, set(pm.markers.ravel().tolist())


@pytest.mark.parametrize("method", ["fisher", "cls", "laplacian"])
def test_planted_markers_rank_first_sparse_stays_sparse(cells, method):
    a, markers = cells
    assert a.obs["ct"].isna().mean() == pytest.approx(0.8)
    groupby = None if method == "laplacian" else "ct"
    out = ssfs.tl.rank_features(a, method, groupby=groupby, copy=True)
    assert sparse.issparse(out.X) and "ct" in out.obs and f"{method}_rank" not in a.var  # copy: input untouched
    rank = out.var[f"{method}_rank"].to_numpy()
    assert sorted(rank.tolist()) == list(range(1, 201))
    assert set(np.flatnonzero(rank <= 15).tolist()) == markers
    score = out.var[f"{method}_score"].to_numpy()
    best = np.argmin(rank)
    assert score[best] == (score.max() if method == "fisher" else score.min())
    info = out.uns[method]
    assert info["method"] == method
    if groupby:
        assert info["n_labeled"] == {"T cell": 20, "B cell": 20, "NK": 20} and info["n_unlabeled"] == 240


def test_in_place_key_added_params_and_names_in_errors(cells):
    a, _ = cells
    a = a.copy()
    assert ssfs.tl.rank_features(a, "cls", groupby="ct", key_added="cls15", k=15) is None
    assert {"cls15_score", "cls15_rank"} <= set(a.var) and a.uns["cls15"]["params"] == {"k": 15}
    one = a.copy()
    one.obs["ct"] = one.obs["ct"].where(one.obs["ct"] == "NK")
    with pytest.raises(SupervisionError, match="class 'NK' with 20 labeled"):
        ssfs.tl.rank_features(one, "fisher", groupby="ct")
    with pytest.raises(SupervisionError,
                       match="^groupby 'celltype' is not an obs column; obs columns: 'cell_type', 'ct'"):
        ssfs.tl.rank_features(a, "fisher", groupby="celltype")
    with pytest.raises(SupervisionError, match=r"^labels_key= is not a parameter here: the labels' obs column is "
                                               r"groupby= \(as in scanpy's rank_genes_groups\), e.g. groupby='ct'$"):
        ssfs.tl.rank_features(a, labels_key="ct")  # the analyst's guess: named, not refused as a method parameter


def test_unlabeled_values_and_layer(cells):
    a, markers = cells
    a = a.copy()
    a.obs["txt"] = a.obs["ct"].astype(object).where(a.obs["ct"].notna(), "unknown").astype(str)
    a.layers["counts"] = a.X.copy()
    a.X = sparse.csr_matrix(a.X.shape)  # X empty: the layer is used
    ssfs.tl.rank_features(a, "fisher", groupby="txt", unlabeled_values=["unknown"], layer="counts")
    assert a.uns["fisher"]["n_labeled"] == {"B cell": 20, "NK": 20, "T cell": 20}
    assert set(np.flatnonzero(a.var["fisher_rank"].to_numpy() <= 15).tolist()) == markers


def test_stored_graph_is_used(cells):
    a, markers = cells
    a = a.copy()
    # a graph that only links cells of the same type: the graph scores must then find the markers
    from sklearn.neighbors import kneighbors_graph

    rng = np.random.default_rng(0)
    a.obsm["X_pca"] = rng.normal(size=(a.n_obs, 5)) + 10 * np.eye(3)[generate_planted_markers(300, 200, 3, 5, rng=0)
                                                                        .cell_type][:, [0, 1, 2, 0, 1]]
    ssfs.tl.rank_features(a, "laplacian", key_added="pca")
    assert a.uns["pca"]["graph"].endswith("obsm['X_pca']")
    a.obsp["connectivities"] = kneighbors_graph(a.obsm["X_pca"], 10)
    ssfs.tl.rank_features(a, "laplacian", key_added="obsp")
    assert a.uns["obsp"]["graph"] == "obsp['connectivities']"
    ssfs.tl.rank_features(a, "laplacian", key_added="own", graph=None)
    assert a.uns["own"]["graph"] == "method's own kNN graph"
    for key in ("pca", "obsp", "own"):
        assert set(np.flatnonzero(a.var[f"{key}_rank"].to_numpy() <= 15).tolist()) == markers, key


def _raw_and_scaled(cells):
    """The planted cells as scanpy leaves them after ``sc.pp.scale`` on highly variable genes:
    ``.raw`` all 200 genes (log-normalised), ``X`` 150 of them scaled and with noise added
    where the markers were (so that X and .raw rank differently); two markers of each type
    are left out of X."""
    a, markers = cells
    rng = np.random.default_rng(3)
    full = a.copy()
    full.X = np.log1p(full.X.toarray())
    full.raw = full
    out_of_x = sorted(markers)[::2][:6]
    keep = np.setdiff1d(np.arange(200), out_of_x)[:150]
    sub = full[:, keep].copy()
    sub.X = rng.normal(size=sub.shape)  # scaled X with the signal gone: only .raw has it
    return sub, markers, out_of_x


def test_use_raw_defaults_to_raw_as_scanpy(cells):
    sub, markers, out_of_x = _raw_and_scaled(cells)
    assert sub.raw is not None and sub.raw.n_vars == 200 and sub.n_vars == 150
    ssfs.tl.rank_features(sub, "fisher", groupby="ct")  # default: .raw exists -> use_raw
    info = sub.uns["fisher"]
    assert info["use_raw"] is True
    y = ssfs.labels.encode_labels(sub.obs["ct"])
    direct = ssfs.run_method("fisher", sub.raw.X, y)  # the same numbers as ranking .raw directly
    pos = sub.raw.var_names.get_indexer(sub.var_names)
    np.testing.assert_array_equal(sub.var["fisher_score"].to_numpy(), direct.scores[pos])
    ranks = np.empty(200)
    ranks[direct.order] = np.arange(1, 201)
    np.testing.assert_array_equal(sub.var["fisher_rank"].to_numpy(), ranks[pos])  # ranks among .raw's 200
    # every ranked gene, best first, in uns: the markers that are not in var are there
    names = list(info["names"])
    assert set(names[:15]) == {sub.raw.var_names[m] for m in markers}
    assert {sub.raw.var_names[m] for m in out_of_x} <= set(names[:15])
    np.testing.assert_array_equal(info["scores"], direct.scores[direct.order])
    # use_raw=False ranks the scaled X: no marker signal left there
    ssfs.tl.rank_features(sub, "fisher", groupby="ct", use_raw=False, key_added="x")
    assert sub.uns["x"]["use_raw"] is False and "names" not in sub.uns["x"]
    np.testing.assert_array_equal(sub.var["x_score"].to_numpy(), ssfs.run_method("fisher", sub.X, y).scores)


def test_layer_and_use_raw_follow_scanpy_rules(cells):
    sub, _, _ = _raw_and_scaled(cells)
    sub.layers["counts"] = np.expm1(sub.raw[:, sub.var_names].X)
    ssfs.tl.rank_features(sub, "fisher", groupby="ct", layer="counts")  # a layer: use_raw defaults to False
    assert sub.uns["fisher"]["use_raw"] is False and sub.uns["fisher"]["layer"] == "counts"
    y = ssfs.labels.encode_labels(sub.obs["ct"])
    np.testing.assert_array_equal(sub.var["fisher_score"].to_numpy(),
                                  ssfs.run_method("fisher", sub.layers["counts"], y).scores)
    with pytest.raises(ssfs.InputError, match="^use_raw=True and layer='counts' name two matrices"):
        ssfs.tl.rank_features(sub, "fisher", groupby="ct", layer="counts", use_raw=True)
    with pytest.raises(ssfs.InputError, match="^layer 'nope' is not in adata.layers \\(counts\\)"):
        ssfs.tl.rank_features(sub, "fisher", groupby="ct", layer="nope")
    bare = sub.copy()
    del bare.raw
    with pytest.raises(ssfs.InputError, match="^use_raw=True but adata.raw is empty"):
        ssfs.tl.rank_features(bare, "fisher", groupby="ct", use_raw=True)
    with pytest.raises(ssfs.InputError, match="^use_raw must be True, False or None"):
        ssfs.tl.rank_features(bare, "fisher", groupby="ct", use_raw="yes")
    ssfs.tl.rank_features(bare, "fisher", groupby="ct")  # no .raw: X, as scanpy
    assert bare.uns["fisher"]["use_raw"] is False


def test_select_stable_reads_raw(cells):
    sub, markers, out_of_x = _raw_and_scaled(cells)
    out = ssfs.tl.select_stable(sub, ("fisher",), groupby="ct", resamples=4, top=15, copy=True)
    info = out.uns["ssfs_selection"]
    assert info["use_raw"] is True
    chosen = set(info["features"])
    raw_names = sub.raw.var_names
    assert {raw_names[m] for m in out_of_x} <= chosen  # genes of .raw outside var are selected too
    in_var = out.var_names[out.var["ssfs_selection_selected"].to_numpy()]
    assert set(in_var) == chosen & set(out.var_names)


def test_pbmc68k_reduced_ranks_raw():
    sc = pytest.importorskip("scanpy")
    pbmc = sc.datasets.pbmc68k_reduced()
    ssfs.tl.rank_features(pbmc, "fisher", groupby="bulk_labels")
    assert pbmc.uns["fisher"]["use_raw"] is True
    y = ssfs.labels.encode_labels(pbmc.obs["bulk_labels"])
    raw_scores = ssfs.run_method("fisher", pbmc.raw.X, y).scores
    np.testing.assert_array_equal(pbmc.var["fisher_score"].to_numpy(), raw_scores)
    assert not np.allclose(raw_scores, ssfs.run_method("fisher", pbmc.X, y).scores)  # X (scaled) differs


def test_tl_exports_only_its_functions():
    public = [n for n in dir(ssfs.tl) if not n.startswith("_")]
    assert public == ["markers_df", "rank_features", "select_stable"] == sorted(ssfs.tl.__all__)
