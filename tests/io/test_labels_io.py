"""Reading partially labelled and label-free datasets; constraints files by sample id (issue #13)."""

import numpy as np
import pandas as pd
import pytest
from partial_labels import frame, planted

from ssfs import InputError, SupervisionError
from ssfs.constraints import read_sample_constraints
from ssfs.io import prepare_dataset, read_prepared, write_prepared


def _write(tmp_path, labels, *, blank="", name="data.tsv"):
    X, truth, _, _ = planted()
    df = frame(X)
    df.T.to_csv(tmp_path / name, sep="\t")  # genes as rows, as GEO-style microarray tables
    cells = ["" if v is None else v for v in labels]
    cells = [blank if c == "" else c for c in cells]
    (tmp_path / "labels.tsv").write_text("sample\tclass\n" + "".join(f"{i}\t{c}\n" for i, c in zip(df.index, cells,
                                                                                                    strict=True)))
    return df, truth


ENTRY = {"path": "data.tsv", "orientation": "features_as_rows", "labels_file": "labels.tsv"}


@pytest.mark.parametrize(("blank", "extra"), [("", None), ("NA", None), ("unknown", ["unknown"]), ("-1", [-1])])
def test_blank_na_and_unlabeled_values_are_unlabeled(tmp_path, blank, extra):
    _, _, labels, _ = planted()
    _write(tmp_path, labels, blank=blank)
    entry = dict(ENTRY, **({"unlabeled_values": extra} if extra else {}))
    a = prepare_dataset("srbct", entry, tmp_path)
    lab = a.obs["label"]
    assert int(lab.isna().sum()) == 50 and list(lab.cat.categories) == ["BL", "EWS", "NB", "RMS"]
    assert lab.value_counts().to_dict() == {"EWS": 4, "BL": 3, "NB": 3, "RMS": 3}
    assert a.uns["ssfs_prepare"]["n_unlabeled"] == 50
    # through the prepared file: names survive, unlabeled samples are -1
    write_prepared(a, tmp_path / "p.h5ad")
    back = read_prepared(tmp_path / "p.h5ad")
    assert list(back.classes) == ["BL", "EWS", "NB", "RMS"] and int((back.y == -1).sum()) == 50
    assert back.adata.obs["label"].isna().sum() == 50


def test_unlisted_marker_becomes_a_class_with_a_warning(tmp_path):
    _, _, labels, _ = planted()
    _write(tmp_path, labels, blank="unknown")
    with pytest.warns(UserWarning, match=r"class\(es\) 'unknown' \(50 samples\) look like a 'no label' marker"):
        a = prepare_dataset("srbct", ENTRY, tmp_path)
    assert "unknown" in a.obs["label"].cat.categories


def test_label_free_dataset(tmp_path):
    X, _, _, _ = planted()
    frame(X).to_csv(tmp_path / "m.csv")
    a = prepare_dataset("m", {"path": "m.csv"}, tmp_path)
    assert a.obs["label"].isna().all() and a.uns["ssfs_prepare"]["n_unlabeled"] == 63


def test_unlabeled_values_must_be_a_list(tmp_path):
    _, _, labels, _ = planted()
    _write(tmp_path, labels)
    from ssfs import ConfigError

    with pytest.raises(ConfigError, match="unlabeled_values must be a list"):
        prepare_dataset("srbct", dict(ENTRY, unlabeled_values={"a": 1}), tmp_path)


# ------------------------------------------------------------------- constraints by id
IDS = ["s1", "s2", "s3", "s4", "s5"]


def _cons(tmp_path, text):
    p = tmp_path / "cons.tsv"
    p.write_text(text)
    return p


def test_constraints_by_sample_id(tmp_path):
    c = read_sample_constraints(_cons(tmp_path, "sample_a\tsample_b\tkind\ns1\ts3\tML\ns4\ts2\tcl\n"), IDS)
    np.testing.assert_array_equal(c.ml, [[0, 2]])
    np.testing.assert_array_equal(c.cl, [[1, 3]])
    c = read_sample_constraints(_cons(tmp_path, "sample_a,sample_b,kind\ns1,s2,ML\n"), IDS)  # comma works too
    assert c.n_ml == 1


@pytest.mark.parametrize(("text", "err", "message"), [
    ("sample_a\tsample_b\tkind\ns1\ts9\tML\ns1\ts8\tCL\n", SupervisionError,
     r"2 unknown sample id\(s\) in sample_b \(e.g. 's9', 's8'\)"),
    ("sample_a\tsample_b\tkind\ns1\ts2\tML\ns2\ts1\tCL\n", SupervisionError,
     "contradictory constraints: 's1' and 's2' are cannot-link but must-link directly"),
    ("sample_a\tsample_b\tkind\ns1\ts2\tML\ns2\ts3\tML\ns3\ts1\tCL\n", SupervisionError,
     r"'s1' and 's3' are cannot-link but must-link through the must-link closure \(group 's1', 's2', 's3'\)"),
    ("sample_a\tsample_b\tkind\ns1\ts2\tmaybe\n", InputError, "line 2: kind must be ML or CL, got 'maybe'"),
    ("a\tb\tkind\ns1\ts2\tML\n", InputError, "lacks column.s. sample_a, sample_b"),
    ("sample_a\tsample_b\tkind\ns1\ts1\tML\n", SupervisionError, "pairs sample 's1' with itself"),
])
def test_constraints_file_errors_name_them(tmp_path, text, err, message):
    with pytest.raises(err, match=message) as info:
        read_sample_constraints(_cons(tmp_path, text), IDS)
    assert "\n" not in str(info.value)


def test_constraints_file_key_is_checked_at_prepare(tmp_path):
    _, _, labels, _ = planted()
    _write(tmp_path, labels)
    _cons(tmp_path, "sample_a\tsample_b\tkind\ns1\ts2\tML\ns3\ts4\tCL\n")
    a = prepare_dataset("srbct", dict(ENTRY, constraints_file="cons.tsv"), tmp_path)
    np.testing.assert_array_equal(a.uns["ssfs_constraints"]["ml"], [[0, 1]])
    _cons(tmp_path, "sample_a\tsample_b\tkind\ns1\tnobody\tML\n")
    with pytest.raises(SupervisionError, match="dataset 'srbct': constraints file .*'nobody'"):
        prepare_dataset("srbct", dict(ENTRY, constraints_file="cons.tsv"), tmp_path)
    assert pd.isna(a.obs["label"]).sum() == 50
