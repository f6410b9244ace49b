"""One label encoding through every door (issue #31 item 3): the same file read by ``ssfs rank``,
``ssfs.tl``, the scikit-learn selector and the workflow's steps reaches the method with the same
codes and the same class names, in natural order ('1', '2', '10'; pandas and anndata order the
categories as text, '1', '10', '2'), and every output lists the classes in that order."""

import json

import anndata
import numpy as np
import pandas as pd
import pytest
from conftest import REPO

import ssfs.runner
from ssfs import SemiSupervisedSelector, tl
from ssfs.cli import main
from ssfs.experiment.variants import supervision_for, variants
from ssfs.io.h5ad import dataset_summary, read_prepared
from ssfs.workflow.config import load_schema, validate_config
from ssfs.workflow.pipeline import run_prepare, run_selection_chunk

CELLS = ["10", "2", "1", "", "2", "10", "NA", "1"] * 3  # blank and NA cells: unlabeled
CLASSES = ["1", "2", "10"]
CODES = [{"10": 2, "2": 1, "1": 0}.get(c, -1) for c in CELLS]
COUNTS = {"1": 6, "2": 6, "10": 6}


@pytest.fixture
def seen(monkeypatch):
    """(codes, class names as text) of every labels check inside run_method, whoever called it."""
    calls = []
    real = ssfs.runner.check_labels_named

    def spy(y, n):
        codes, classes = real(y, n)
        calls.append((codes.tolist(), None if classes is None else [str(c) for c in classes]))
        return codes, classes

    monkeypatch.setattr(ssfs.runner, "check_labels_named", spy)
    return calls


@pytest.fixture
def files(tmp_path):
    """The same samples as a CSV (label column) and as an h5ad (label obs column, categorical as
    anndata writes strings: categories in text order)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(len(CELLS), 5))
    X[:, 0] += np.array([float(c) if c not in ("", "NA") else 0.0 for c in CELLS])  # a feature that separates
    ids = [f"s{i}" for i in range(len(CELLS))]
    df = pd.DataFrame(X, index=pd.Index(ids, name="id"), columns=[f"g{j}" for j in range(5)])
    df.insert(0, "label", CELLS)
    df.to_csv(tmp_path / "data.csv")
    obs = pd.DataFrame({"label": pd.Categorical([c if c not in ("", "NA") else None for c in CELLS])}, index=ids)
    assert list(obs["label"].cat.categories) == ["1", "10", "2"]
    anndata.AnnData(X, obs=obs, var=pd.DataFrame(index=df.columns[1:])).write_h5ad(tmp_path / "data.h5ad")
    return tmp_path


def _cli(path, options, capsys, tmp_path):
    assert main(["rank", str(path), *options, "--method", "fisher", "-o", str(tmp_path / "cli.tsv")]) == 0
    return json.loads(capsys.readouterr().out)["n_labeled"]


def _as_adata(path, fmt):
    if fmt == "h5ad":
        return anndata.read_h5ad(path)
    df = pd.read_csv(path, index_col=0)  # as a user reads it: numbers become floats, blank and NA NaN
    return anndata.AnnData(df.drop(columns="label").to_numpy(), obs=df[["label"]])


def _workflow(path, entry, tmp_path):
    cfg = validate_config({"datasets": {"d": {"path": str(path), **entry}}, "methods": {"fisher": None},
                           "selection": {"resamples": 2}}, load_schema(REPO / "workflow/schemas/config.schema.yaml"))
    prepared = tmp_path / "prepared.h5ad"
    run_prepare(dataset="d", entry=cfg["datasets"]["d"], data_dir=tmp_path, prepared=prepared)
    run_selection_chunk(prepared=prepared, ranks=tmp_path / "ranks.npy", settings=cfg["methods"]["fisher"],
                        sup=supervision_for(cfg, variants(cfg)["base"]), sel=cfg["selection"], seed=0, dataset="d",
                        method="fisher", chunk=[0, 1], full=[tmp_path / "full.tsv"])
    _, y, classes, _, _ = read_prepared(prepared)
    assert y.tolist() == CODES and list(classes) == CLASSES
    return dataset_summary(prepared)["class_counts"]


@pytest.mark.parametrize(("fmt", "options", "entry"), [
    ("csv", ["--label-column", "label"], {"label_column": "label"}),
    ("h5ad", ["--label-key", "label"], {"label_key": "label"}),
])
def test_every_door_gives_one_encoding(files, seen, capsys, fmt, options, entry):
    path = files / f"data.{fmt}"
    counts = {"cli": _cli(path, options, capsys, files)}
    adata = _as_adata(path, fmt)
    tl.rank_features(adata, "fisher", groupby="label")
    counts["tl"] = adata.uns["fisher"]["n_labeled"]
    selector = SemiSupervisedSelector(method="fisher").fit(adata.X, adata.obs["label"])
    assert [str(c) for c in selector.classes_] == CLASSES
    counts["workflow"] = _workflow(path, entry, files)
    for door, got in counts.items():
        assert list(got.items()) == list(COUNTS.items()), door  # names and their order
    # what reached the method, door by door: the CLI, tl, the selector, the workflow's full data
    # and its two resamples; each the same codes and names (resamples: their subset of the codes)
    assert len(seen) == 6
    for codes, classes in seen[:4]:
        assert (codes, classes) == (CODES, CLASSES)
    assert all(classes == CLASSES for _, classes in seen[4:])
