"""Per-class markers of ``propagate`` at every door (issue #28 item 3): ``ssfs.tl`` (scanpy's
``rank_genes_groups`` layout, read by scanpy's own helper), ``ssfs rank`` (TSV and h5ad), and the
default committee of ``ssfs select`` / ``ssfs.tl.select_stable``; ``propagate`` in a scikit-learn
Pipeline and in the workflow config."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ssfs
from ssfs.simulate import few_labels, simulate_singlecell


@pytest.fixture(scope="module")
def planted():
    X, sim = simulate_singlecell(600, 120, 3, 10, 0)
    y = few_labels(sim.cell_type, 3, 1)
    names = np.array(["B", "NK", "T"], dtype=object)
    return X, sim, pd.Categorical(np.where(y >= 0, names[np.maximum(y, 0)], None), categories=list(names))


def _adata(X, labels):
    import anndata as ad

    a = ad.AnnData(X=X.copy(), obs=pd.DataFrame({"cell_type": labels}, index=[f"c{i}" for i in range(X.shape[0])]))
    a.var_names = [f"g{j}" for j in range(X.shape[1])]
    return a


def test_tl_stores_markers_scanpy_reads(planted):
    sc = pytest.importorskip("scanpy")
    X, sim, labels = planted
    a = _adata(X, labels)
    ssfs.tl.rank_features(a, "propagate", groupby="cell_type")
    assert list(a.obs["propagate_group"].cat.categories) == ["B", "NK", "T"]
    assert (a.obs["propagate_group"].cat.codes.to_numpy() == sim.cell_type).mean() > 0.9  # propagated classes
    explained, rank = a.var["propagate_explained"].to_numpy(), a.var["propagate_rank"].to_numpy()
    assert explained.dtype == bool and rank[explained].max() < rank[~explained].min()  # explained genes first
    assert explained[sim.markers].all() and explained.sum() <= sim.markers.size + 5
    for c, name in enumerate(["B", "NK", "T"]):
        ours = ssfs.tl.markers_df(a, name)
        theirs = sc.get.rank_genes_groups_df(a, name, key="propagate_markers")
        pd.testing.assert_frame_equal(ours, theirs)
        top = ours["names"].str[1:].astype(int).to_numpy()[:10]
        assert np.isin(top, sim.markers_of(c)).mean() >= 0.9
    with pytest.raises(ssfs.InputError, match="no group 'X'"):
        ssfs.tl.markers_df(a, "X")
    with pytest.raises(ssfs.InputError, match="no per-class markers under key 'cls'"):
        ssfs.tl.markers_df(a, key="cls")


def test_ssfs_rank_writes_markers_next_to_the_ranking(planted, tmp_path, capsys):
    import anndata as ad

    from ssfs.cli import main

    X, sim, labels = planted
    d = pd.DataFrame(X.toarray(), index=[f"c{i}" for i in range(X.shape[0])],
                     columns=[f"g{j}" for j in range(X.shape[1])])
    d.insert(0, "type", labels.astype(object))
    d.to_csv(tmp_path / "cells.csv")
    assert main(["rank", str(tmp_path / "cells.csv"), "--label-column", "type", "--method", "propagate",
                 "-o", str(tmp_path / "r.tsv")]) == 0
    info = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert info["markers"] == str(tmp_path / "r.markers.tsv") and set(info["groups"]) == {"B", "NK", "T"}
    m = pd.read_csv(tmp_path / "r.markers.tsv", sep="\t")
    assert list(m.columns[:4]) == ["group", "rank", "feature", "index"]
    first = m[m["rank"] == 1].set_index("group")["index"]
    assert all(first[name] in sim.markers_of(c) for c, name in enumerate(["B", "NK", "T"]))
    assert main(["rank", str(tmp_path / "cells.csv"), "--label-column", "type", "--method", "propagate",
                 "-o", str(tmp_path / "r.h5ad")]) == 0
    a = ad.read_h5ad(tmp_path / "r.h5ad")
    assert ssfs.tl.markers_df(a, "NK")["names"].iloc[0] == f"g{first['NK']}"
    assert a.var["propagate_explained"].to_numpy()[sim.markers].all()


def test_select_stable_defaults_to_auto(planted):
    """methods "auto" (the default): on these counts propagate alone, and the summary says so."""
    X, sim, labels = planted
    a = _adata(X, labels)
    ssfs.tl.select_stable(a, groupby="cell_type", resamples=4, top=10, threshold=0.5)
    info = a.uns["ssfs_selection"]
    assert info["methods"] == ["propagate"] and info["left_out"] == {}
    assert info["methods_rule"] == "methods auto: propagate on count-like data (single cells)"
    assert info["labeled_resampling"] == "shared"  # 3 labels per class, a graph that carries the classes
    chosen = np.flatnonzero(a.var["ssfs_selection_selected"].to_numpy())
    assert chosen.size >= 5 and np.isin(chosen, sim.markers).all()


def test_propagate_in_a_scikit_learn_pipeline(planted):
    """The scikit-learn door: ``SemiSupervisedSelector("propagate")`` in a Pipeline, string labels
    with None for unlabeled cells; the kept genes are planted markers and the classifier fits on
    the labeled cells only."""
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from ssfs.selector import LabeledOnly, SemiSupervisedSelector

    X, sim, labels = planted
    y = np.array([None if pd.isna(v) else v for v in labels], dtype=object)
    pipe = make_pipeline(SemiSupervisedSelector("propagate", n_features=10, k=10), LabeledOnly(LinearSVC()))
    pipe.fit(X, y)
    kept = pipe[0].get_support(indices=True)
    assert np.isin(kept, sim.markers).all() and kept.size == 10
    pred = pipe.predict(X)  # a linear SVM on the 9 labeled cells: above chance (1/3), class names kept
    truth = np.array(["B", "NK", "T"], dtype=object)[sim.cell_type]
    assert set(pred) <= {"B", "NK", "T"} and (pred == truth).mean() > 0.5


def test_propagate_in_the_workflow_config():
    """The workflow door: ``methods: {propagate: {...}}`` is a valid config (parameters checked
    against the method's signature), a bad value is one line naming it."""
    from pathlib import Path

    from ssfs import ConfigError
    from ssfs.workflow.config import load_schema, validate_config

    schema = load_schema(Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml")
    base = {"datasets": {"wine": {"source": "builtin", "name": "wine"}}}
    cfg = validate_config({**base, "methods": {"propagate": {"k": 10, "propagation": "harmonic"}}}, schema)
    assert cfg["methods"]["propagate"] == {"method": "propagate", "params": {"k": 10, "propagation": "harmonic"}}
    with pytest.raises(ConfigError, match="propagation"):
        validate_config({**base, "methods": {"propagate": {"propagation": "diffuse"}}}, schema)
