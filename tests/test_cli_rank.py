"""`ssfs rank` with partially labelled data: labels used as given, unlabeled values,
label-free methods, constraints by sample id, .h5ad output."""

import json

import numpy as np
import pandas as pd
import pytest
from partial_labels import PLANTED, frame, planted

from ssfs import run_method
from ssfs.cli import build_parser, main


@pytest.fixture
def srbct(tmp_path, monkeypatch):
    """63 samples x 120 genes (genes as rows), labels known for 13 samples (blank cells elsewhere)."""
    monkeypatch.chdir(tmp_path)
    X, truth, labels, _ = planted()
    df = frame(X)
    df.T.to_csv("data.tsv", sep="\t")
    cells = ["" if v is None else v for v in labels]
    pd.DataFrame({"sample": df.index, "class": cells}).to_csv("labels.tsv", sep="\t", index=False)
    pd.DataFrame({"sample": df.index, "class": ["unknown" if c == "" else c for c in cells]}).to_csv(
        "labels_unknown.tsv", sep="\t", index=False)
    return X, labels


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _top(path, m=8):
    return set(pd.read_csv(path, sep="\t")["index"][:m])


@pytest.mark.parametrize("method", ["cls", "fisher"])
def test_partially_labelled_file_uses_every_given_label(srbct, capsys, method):
    X, labels = srbct
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows",
                          "--labels-file", "labels.tsv", "--method", method, "-o", "r.tsv")
    assert code == 0, err
    info = json.loads(out)
    assert info["n_labeled"] == {"BL": 3, "EWS": 4, "NB": 3, "RMS": 3} and info["n_unlabeled"] == 50
    assert _top("r.tsv") == set(PLANTED.tolist())
    # exactly the library call with y = -1 for the unlabeled samples
    ref = run_method(method, X, labels, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(pd.read_csv("r.tsv", sep="\t")["index"], ref.order)
    # "unknown" cells: the same once named with --unlabeled-value
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows",
                          "--labels-file", "labels_unknown.tsv", "--unlabeled-value", "unknown",
                          "--method", method, "-o", "u.tsv")
    assert code == 0 and json.loads(out)["n_unlabeled"] == 50
    assert pd.read_csv("u.tsv", sep="\t").equals(pd.read_csv("r.tsv", sep="\t"))


def test_unlisted_unknown_warns_and_hiding_only_on_request(srbct, capsys):
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows",
                          "--labels-file", "labels_unknown.tsv", "--method", "fisher", "-o", "r.tsv")
    assert code == 0 and "ssfs: warning:" in err and "--unlabeled-value unknown" in err
    assert json.loads(out)["n_labeled"]["unknown"] == 50
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows", "--labels-file",
                          "labels.tsv", "--method", "fisher", "--labeled-per-class", "2", "-o", "r.tsv")
    assert code == 0 and json.loads(out)["n_labeled"] == {"BL": 2, "EWS": 2, "NB": 2, "RMS": 2}
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows", "--labels-file",
                          "labels.tsv", "--method", "fisher", "--labeled-per-class", "4", "-o", "r.tsv")
    assert code == 1 and err.strip().startswith("ssfs: error: data.tsv: class 'BL' has 3 training sample(s)")
    assert build_parser().parse_args(["rank", "x.csv"]).labeled_per_class is None


def test_label_free_methods_without_labels(srbct, capsys):
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows", "--method", "laplacian",
                          "-o", "r.tsv")
    assert code == 0, err
    assert _top("r.tsv") == set(PLANTED.tolist()) and json.loads(out)["n_unlabeled"] == 63
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows", "--method", "fisher")
    assert code == 1 and err == "ssfs: error: method 'fisher' needs labels but no sample is labeled\n"


def test_constraints_by_sample_id(srbct, capsys):
    pd.DataFrame({"sample_a": ["s1", "s2"], "sample_b": ["s3", "s9"], "kind": ["ML", "CL"]}).to_csv(
        "c.tsv", sep="\t", index=False)
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows",
                          "--constraints", "c.tsv", "--method", "cs1", "-o", "r.tsv")
    assert code == 0, err
    pd.DataFrame({"sample_a": ["s1"], "sample_b": ["nobody"], "kind": ["ML"]}).to_csv("c.tsv", sep="\t", index=False)
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows",
                          "--constraints", "c.tsv", "--method", "cs1")
    assert code == 1 and "unknown sample id(s) in sample_b (e.g. 'nobody')" in err and err.count("\n") == 1
    # a user must-link between two samples the labels put in different classes: named
    _, labels = srbct
    a, b = (f"s{int(np.flatnonzero(labels == c)[0]) + 1}" for c in ("EWS", "NB"))
    pd.DataFrame({"sample_a": [a], "sample_b": [b], "kind": ["ML"]}).to_csv("c.tsv", sep="\t", index=False)
    code, out, err = _run(capsys, "rank", "data.tsv", "--orientation", "features_as_rows", "--labels-file",
                          "labels.tsv", "--constraints", "c.tsv", "--method", "cls")
    assert code == 1 and f"contradictory constraints: '{a}' and '{b}' are cannot-link but must-link directly" in err


def test_h5ad_in_and_out(tmp_path, capsys, monkeypatch):
    ad = pytest.importorskip("anndata")
    monkeypatch.chdir(tmp_path)
    X, _, labels, _ = planted()
    a = ad.AnnData(X, obs=pd.DataFrame({"ct": pd.Categorical(labels)}, index=[f"c{i}" for i in range(63)]))
    a.obsm["X_umap"] = np.zeros((63, 2))
    a.write_h5ad("cells.h5ad")
    code, out, err = _run(capsys, "rank", "cells.h5ad", "--label-key", "ct", "--method", "cls", "-o", "ranked.h5ad")
    assert code == 0, err
    b = ad.read_h5ad("ranked.h5ad")
    assert "X_umap" in b.obsm  # the input AnnData, not the prepared matrix
    assert set(np.flatnonzero(b.var["cls_rank"].to_numpy() <= 8).tolist()) == set(PLANTED.tolist())
    assert dict(b.uns["cls"]["n_labeled"]) == {"BL": 3, "EWS": 4, "NB": 3, "RMS": 3}


def test_help_documents_unlabeled_values_and_constraints(capsys):
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--unlabeled-value VALUE" in text and "blank and NA cells always mean unlabeled" in text
    assert "sample_a, sample_b, kind" in text and "--labeled-per-class N" in text


@pytest.mark.shared
@pytest.mark.parametrize("method", ["fisher", "cls"])
def test_shared_glioma_13_labels_blank_cells(shared_data, tmp_path, monkeypatch, capsys, method):
    """The issue's case on a public 4-class microarray (GLIOMA, 50 samples): 13 labels, blank
    cells elsewhere. The CLI's top 20 is the library call's (y = -1 for unlabeled); with
    'unknown' cells taken for a fifth class it is not."""
    import scipy.io

    monkeypatch.chdir(tmp_path)
    d = scipy.io.loadmat(shared_data / "asu" / "GLIOMA.mat")
    X, cls = d["X"].astype(float), d["Y"].ravel()
    names = np.array(["c1", "c2", "c3", "c4"], dtype=object)[cls - 1]
    rng = np.random.default_rng(0)
    lab = set(np.concatenate([rng.choice(np.flatnonzero(cls == k), 4 if k == 1 else 3, replace=False)
                              for k in range(1, 5)]))
    ids = [f"s{i + 1}" for i in range(cls.size)]
    pd.DataFrame(X, index=ids).to_csv("x.csv")
    for fill in ("", "unknown"):
        pd.DataFrame({"sample": ids, "class": [names[i] if i in lab else fill for i in range(cls.size)]}).to_csv(
            f"labels{fill}.csv", index=False)
    y = np.array([names[i] if i in lab else None for i in range(cls.size)], dtype=object)
    ref = set(run_method(method, X, y, rng=np.random.default_rng(0)).order[:20].tolist())
    assert _run(capsys, "rank", "x.csv", "--labels-file", "labels.csv", "--method", method, "-o", "a.tsv")[0] == 0
    assert _top("a.tsv", 20) == ref
    code = _run(capsys, "rank", "x.csv", "--labels-file", "labelsunknown.csv", "--method", method, "-o", "b.tsv")[0]
    assert code == 0
    assert len(_top("b.tsv", 20) & ref) < 10
