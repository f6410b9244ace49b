"""ssfs.labels.encode_labels and the Python door (run_method) with partially labelled data."""

import numpy as np
import pandas as pd
import pytest
from partial_labels import PLANTED, planted, top

from ssfs import InputError, SupervisionError, run_method
from ssfs.experiment.splits import check_classes, draw_labeled
from ssfs.labels import Labels, class_counts, decode, encode_labels


@pytest.mark.parametrize(("values", "extra", "codes", "classes"), [
    (["MLL", "", None, "AML", np.nan, "unknown"], ["unknown"], [1, -1, -1, 0, -1, -1], ["AML", "MLL"]),
    (np.array([0, 2, -1]), (), [0, 1, -1], [0, 2]),                      # codes re-encoded, names = values
    (np.array([0.0, 2.0, np.nan, -1.0]), (), [0, 1, -1, -1], [0, 2]),    # NaN and -1 unlabeled
    (["1", "10", "2", "-1"], ["-1"], [0, 2, 1, -1], ["1", "2", "10"]),   # numeric text sorted as numbers
    (pd.Categorical(["a", None, "b"], categories=["b", "a", "c"]), (), [0, -1, 1], ["a", "b"]),  # natural order
    (pd.Categorical(["a", None, "b"], categories=["b", "a", "c"], ordered=True), (), [1, -1, 0], ["b", "a"]),
    (pd.Categorical(["1", "10", "2"]), (), [0, 2, 1], ["1", "2", "10"]),  # pandas' categories are '1', '10', '2'
    (["type10", "type2", "Type1"], (), [2, 1, 0], ["Type1", "type2", "type10"]),  # digit runs as numbers
    (pd.Series(["x", "?", " y ", "NA", "unknown"]), ["unknown"], [0, -1, 1, -1, -1], ["x", "y"]),  # NA, ? missing
    ([b"T", b"B", b""], (), [1, 0, -1], ["B", "T"]),                     # bytes (ARFF) decoded
])
def test_encode_labels(values, extra, codes, classes):
    got, names = encode_labels(values, extra)
    np.testing.assert_array_equal(got, codes)
    assert list(names) == classes
    assert got.dtype == np.int64


def test_encode_labels_refuses():
    with pytest.raises(SupervisionError, match=r"labels have shape \(3,\), expected \(4,\)"):
        encode_labels(["a", "b", "c"], n=4)
    with pytest.raises(SupervisionError, match="got -2"):
        encode_labels(np.array([0, 1, -2]))
    with pytest.raises(SupervisionError, match="not complex"):
        encode_labels(np.array([1 + 1j, 0j]))


def test_counts_and_decode_keep_names():
    codes, classes = encode_labels(pd.Categorical(["EWS", None, "NB"], categories=["EWS", "NB", "RMS"]))
    assert class_counts(codes, classes) == {"EWS": 1, "NB": 1}  # a category without a sample is no class
    assert decode(codes, classes).tolist() == ["EWS", None, "NB"]
    assert class_counts(np.array([0, -1, 0]), ["EWS", "NB"]) == {"EWS": 2, "NB": 0}


def test_labels_pass_through_with_their_names():
    labels = Labels(np.array([1, -1, 1]), np.array(["EWS", "MLL"], dtype=object))
    assert encode_labels(labels) is not None and encode_labels(labels).classes is labels.classes
    codes, classes = encode_labels(labels)  # unpacks as a pair
    np.testing.assert_array_equal(codes, [1, -1, 1])
    with pytest.raises(SupervisionError, match="label code 2 has no class name"):
        run_method("fisher", np.ones((3, 2)), Labels(np.array([2, 0, 1]), np.array(["a", "b"])))


@pytest.mark.parametrize("method", ["fisher", "cls", "laplacian"])
def test_run_method_string_labels_80_percent_unlabeled(method):
    X, _, labels, planted_idx = planted()
    assert np.mean([v is None for v in labels]) > 0.79
    by_name = run_method(method, X, labels)
    assert top(by_name.order) == set(planted_idx.tolist())
    # the same ranking as the library convention (codes, -1 = unlabeled)
    codes, _ = encode_labels(labels)
    np.testing.assert_array_equal(by_name.order, run_method(method, X, codes).order)
    # NaN and a categorical with a missing category mean the same
    as_nan = np.array([np.nan if v is None else v for v in labels], dtype=object)
    np.testing.assert_array_equal(by_name.order, run_method(method, X, as_nan).order)
    np.testing.assert_array_equal(by_name.order, run_method(method, X, pd.Categorical(labels)).order)


def test_errors_name_the_classes():
    X, _, labels, _ = planted()
    one = np.where(labels == "EWS", "EWS", None)
    with pytest.raises(SupervisionError, match=r"^method 'fisher' needs labeled samples of at least 2 classes, "
                                               r"got 1 \(class 'EWS' with 4 labeled sample\(s\)\)$"):
        run_method("fisher", X, one)
    codes, classes = encode_labels(labels)
    named = Labels(codes, np.append(classes, "MLL"))  # a class whose samples are all unlabeled (a split's)
    with pytest.raises(SupervisionError, match="^method 'fisher': class 'MLL' has 0 labeled sample"):
        run_method("fisher", X, named)
    with pytest.raises(SupervisionError, match="^method 'fisher' needs labels but no sample is labeled$"):
        run_method("fisher", X, [None] * X.shape[0])
    # a label-free method runs without labels
    assert top(run_method("laplacian", X).order) == set(PLANTED.tolist())


def test_split_errors_name_the_classes():
    y = np.array([0] * 5 + [1] * 2 + [-1] * 10)
    names = np.array(["EWS", "MLL"])
    with pytest.raises(SupervisionError, match="class 'MLL' has 2 training sample"):
        draw_labeled(y, np.arange(y.size), 3, np.random.default_rng(0), dataset="d", class_names=names)
    with pytest.raises(SupervisionError, match=r"class\(es\) 'MLL' have fewer than 3 labeled samples"):
        check_classes(y, dataset="d", min_per_class=3, class_names=names)
    # unlabeled samples are never drawn
    lab = draw_labeled(y, np.arange(y.size), 2, np.random.default_rng(0), class_names=names)
    assert (y[lab] >= 0).all() and lab.size == 4


def test_anndata_to_run_method_points_to_tl():
    ad = pytest.importorskip("anndata")
    with pytest.raises(InputError, match=r"not an AnnData; use ssfs.tl.rank_features\(adata, 'cls'"):
        run_method("cls", ad.AnnData(np.ones((3, 2))))


def test_method_errors_name_the_class():
    pytest.importorskip("scanpy")
    X, _, labels, _ = planted()
    one = labels.copy()
    one[np.flatnonzero(one == "NB")[1:]] = None  # NB keeps 1 labeled sample
    with pytest.raises(SupervisionError, match=r"at least 2 labeled cells per class; class\(es\) 'NB' have 1"):
        run_method("scanpy_rank_genes", np.abs(X), one)
