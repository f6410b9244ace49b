"""The workflow on a partially labelled dataset (80 % of the samples without a label), on a
label-free one, and with a dataset's own constraints file (issue #13)."""

import json

import numpy as np
import pandas as pd
import pytest
from partial_labels import PLANTED, frame, planted
from workflow_helpers import snakemake

from ssfs._checked import read_checked_tsv

N, LABELED = 100, (5, 5, 5, 5)


def _data(tmp_path):
    X, truth, labels, _ = planted(n=N, n_labeled_per_class=LABELED)
    df = frame(X)
    df.T.to_csv(tmp_path / "expr.tsv", sep="\t")  # genes as rows
    cells = ["unknown" if v is None else v for v in labels]
    pd.DataFrame({"sample": df.index, "class": cells}).to_csv(tmp_path / "labels.tsv", sep="\t", index=False)
    frame(X).to_csv(tmp_path / "nolabels.csv")
    return labels


def _config(tmp_path, datasets, methods):
    return {"seed": 2, "data_dir": str(tmp_path), "datasets": datasets, "methods": methods,
            "supervision": {"repetitions": 2, "labeled_per_class": 3}, "evaluation": {"max_features": 8}}


PARTIAL = {"path": "expr.tsv", "orientation": "features_as_rows", "labels_file": "labels.tsv",
           "unlabeled_values": ["unknown"], "constraints_file": "cons.tsv"}


@pytest.mark.slow
def test_partially_labelled_dataset(tmp_path):
    labels = _data(tmp_path)
    unl = np.flatnonzero([v is None for v in labels])
    assert unl.size == 80
    a, b = (f"s{i + 1}" for i in unl[:2])  # a must-link between two unlabeled samples
    (tmp_path / "cons.tsv").write_text(f"sample_a\tsample_b\tkind\n{a}\t{b}\tML\n")
    cfg = _config(tmp_path, {"srbct": PARTIAL}, {"cls": {}, "fisher": {}, "laplacian": {}})
    snakemake(tmp_path / "run", cfg, "results/tables/datasets.tsv", cores=2)
    base = tmp_path / "run/results/srbct/base"
    known = set(np.flatnonzero([v is not None for v in labels]).tolist())
    for rep in (0, 1):
        split = json.loads((base / f"splits/{rep}.json").read_text())
        assert set(split["test"]) <= known and set(split["labeled"]) <= known  # split/hiding among the labeled
        assert set(split["unlabeled"]) == set(unl.tolist()) <= set(split["train"])  # unlabeled: training only
        assert len(split["labeled"]) == 12
        cons = read_checked_tsv(base / f"constraints/{rep}.tsv")
        assert ((cons.i == unl[0]) & (cons.j == unl[1]) & (cons.kind == "ML")).sum() == 1
        for m in ("cls", "fisher", "laplacian"):
            r = read_checked_tsv(base / f"rankings/{m}/{rep}.tsv")
            assert set(r["index"][:8]) == set(PLANTED.tolist()), (m, rep)
    scores = read_checked_tsv(base / "scores/fisher.tsv")
    acc = scores[(scores.metric == "accuracy") & (scores.n_features == 8)]
    assert len(acc) == 2 and acc.value.notna().all() and acc.value.mean() > 0.8
    ds = pd.read_csv(tmp_path / "run/results/tables/datasets.tsv", sep="\t")
    assert ds.loc[0, "n_unlabeled"] == 80 and ds.loc[0, "n_classes"] == 4


@pytest.mark.slow
def test_label_free_dataset_runs_label_free_methods_only(tmp_path):
    _data(tmp_path)
    free = {"path": "nolabels.csv"}
    res = snakemake(tmp_path / "bad", _config(tmp_path, {"free": free}, {"laplacian": {}, "fisher": {}}),
                    "-n", check=False)
    assert res.returncode != 0
    assert ("config key datasets.free: the dataset has no labels (no label_column / labels_file), but "
            "method(s) fisher need labels") in res.stdout + res.stderr
    snakemake(tmp_path / "ok", _config(tmp_path, {"free": free}, {"laplacian": {}, "variance": {}}),
              "results/free/base/scores/laplacian.tsv", cores=2)
    base = tmp_path / "ok/results/free/base"
    assert json.loads((base / "splits/0.json").read_text())["test"] == []
    assert set(read_checked_tsv(base / "rankings/laplacian/0.tsv")["index"][:8]) == set(PLANTED.tolist())
    scores = read_checked_tsv(base / "scores/laplacian.tsv")
    assert set(scores.metric) == {"red"} and scores.value.notna().sum() == 2 * 7  # n_features 2..8 (NaN at 1)


def test_label_free_config_is_refused_before_any_job(tmp_path):
    from workflow_helpers import REPO

    from ssfs import ConfigError
    from ssfs.workflow.config import load_schema, validate_config

    schema = load_schema(REPO / "workflow/schemas/config.schema.yaml")
    free = {"path": "nolabels.csv"}
    with pytest.raises(ConfigError, match=r"^config key datasets.free: the dataset has no labels .*method\(s\) "
                                          r"fisher, cs1 need labels or constraints \(constraints_file\)"):
        validate_config(_config(tmp_path, {"free": free}, {"laplacian": {}, "fisher": {}, "cs1": {}}), schema)
    # with a constraints file, constraint methods may run; label methods still may not
    with pytest.raises(ConfigError, match=r"method\(s\) fisher need labels;"):
        validate_config(_config(tmp_path, {"free": dict(free, constraints_file="c.tsv")},
                                {"cs1": {}, "fisher": {}}), schema)
    validate_config(_config(tmp_path, {"free": dict(free, constraints_file="c.tsv")}, {"cs1": {}}), schema)
    validate_config(_config(tmp_path, {"srbct": PARTIAL}, {"fisher": {}}), schema)
