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
