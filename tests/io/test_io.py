"""Reading every input format into AnnData, the prepare entry point, and atomic writing."""

from __future__ import annotations

import gzip
import os
import warnings
from pathlib import Path

import anndata
import numpy as np
import pandas as pd
import pytest
import scipy.io
from scipy import sparse

from ssfs.errors import ConfigError, InputError, OutputError, SupervisionError
from ssfs.io import guess_format, prepare_dataset, read_dataset, write_prepared

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- csv / tsv

CSV = "id,g1,g2,g3,cls\ns1,1.5,2,-3,A\ns2,4,5.25,6,B\ns3,7,8,9e2,A\n"


def test_csv_samples_as_rows_with_label_column(tmp_path):
    write(tmp_path / "m.csv", CSV)
    a = prepare_dataset("toy", {"path": "m.csv", "label_column": "cls"}, tmp_path)
    assert a.X.dtype == np.float64 and isinstance(a.X, np.ndarray)
    np.testing.assert_array_equal(a.X, [[1.5, 2, -3], [4, 5.25, 6], [7, 8, 900]])
    assert list(a.obs_names) == ["s1", "s2", "s3"]
    assert list(a.var_names) == ["g1", "g2", "g3"]
    assert list(a.obs["label"]) == ["A", "B", "A"]
    assert list(a.obs["label"].cat.categories) == ["A", "B"]
    rec = a.uns["ssfs_prepare"]
    assert rec["format"] == "csv" and rec["path"] == "m.csv" and rec["label_column"] == "cls"
    assert rec["normalize"] == "none" and rec["n_features"] == 3


def test_tsv_features_as_rows_with_labels_file_header(tmp_path):
    write(tmp_path / "m.tsv", "gene\ts1\ts2\ts3\ts4\ng1\t1\t2\t3\t4\ng2\t10\t20\t30\t40\n")
    write(tmp_path / "lab.tsv", "sample\tgroup\ns3\tT\ns1\tN\ns2\tN\ns4\tT\n")
    a = prepare_dataset("toy", {"path": "m.tsv", "orientation": "features_as_rows", "labels_file": "lab.tsv"},
                        tmp_path)
    np.testing.assert_array_equal(a.X, [[1, 10], [2, 20], [3, 30], [4, 40]])
    assert list(a.obs_names) == ["s1", "s2", "s3", "s4"] and list(a.var_names) == ["g1", "g2"]
    assert list(a.obs["label"]) == ["N", "N", "T", "T"]


def test_labels_file_without_header_and_named_column(tmp_path):
    write(tmp_path / "m.csv", "id,g1\ns1,1\ns2,2\ns3,3\n")
    write(tmp_path / "lab.csv", "s2,y\ns1,x\ns3,x\n")
    a = read_dataset("toy", {"path": "m.csv", "labels_file": "lab.csv"}, tmp_path)
    assert list(a.obs["label"]) == ["x", "y", "x"]
    write(tmp_path / "lab3.tsv", "id\tbatch\tdisease\ns1\tb1\tAML\ns2\tb1\tALL\ns3\tb2\tAML\n")
    a = read_dataset("toy", {"path": "m.csv", "labels_file": "lab3.tsv", "labels_file_column": "disease"}, tmp_path)
    assert list(a.obs["label"]) == ["AML", "ALL", "AML"]
    with pytest.raises(InputError, match="3 columns.*labels_file_column"):
        read_dataset("toy", {"path": "m.csv", "labels_file": "lab3.tsv"}, tmp_path)
    with pytest.raises(SupervisionError, match="'subtype' is not in the header"):
        read_dataset("toy", {"path": "m.csv", "labels_file": "lab3.tsv", "labels_file_column": "subtype"}, tmp_path)


def test_labels_file_names_must_match(tmp_path):
    write(tmp_path / "m.csv", "id,g1\ns1,1\ns2,2\ns3,3\ns4,4\n")
    write(tmp_path / "lab.csv", "sample,label\ns1,a\ns2,b\nS3,a\nS4,b\n")
    with pytest.raises(SupervisionError, match=r"2 of 4 sample\(s\).*'s3', 's4'.*2 not in the matrix.*'S3'"):
        read_dataset("toy", {"path": "m.csv", "labels_file": "lab.csv"}, tmp_path)


def test_gzipped_csv_and_format_guessing(tmp_path):
    with gzip.open(tmp_path / "m.csv.gz", "wt") as fh:
        fh.write(CSV)
    a = read_dataset("toy", {"path": str(tmp_path / "m.csv.gz"), "label_column": "cls"})  # absolute path
    np.testing.assert_array_equal(a.X[:, 2], [-3, 6, 900])
    assert guess_format(Path("GSE1_series_matrix.txt.gz")) == "geo"
    assert guess_format(Path("GSE1_series_matrix.txt")) == "geo"
    assert guess_format(Path("x.txt")) == "tsv"
    assert guess_format(Path("x.tsv.gz")) == "tsv"
    assert guess_format(Path("x.h5ad")) == "h5ad"
    assert guess_format(Path("x.xlsx")) is None


def test_index_col_none_generates_sample_names(tmp_path):
    write(tmp_path / "m.csv", "g1,g2,y\n1,2,a\n3,4,b\n")
    a = read_dataset("toy", {"path": "m.csv", "index_col": None, "label_column": "y"}, tmp_path)
    assert list(a.obs_names) == ["s1", "s2"]
    np.testing.assert_array_equal(a.X, [[1, 2], [3, 4]])
    with pytest.raises(InputError, match="index_col is 3 but the header .* has 3 field"):
        read_dataset("toy", {"path": "m.csv", "index_col": 3}, tmp_path)


def test_auto_index_never_takes_the_label_column(tmp_path):
    """The analyst's file with the labels first and most of them blank: the automatic row-id
    column would have swallowed the labels ('label_column is not a column')."""
    write(tmp_path / "m.csv", "label,g1,g2\ntumour,1,2\n,3,4\nnormal,5,6\n,7,8\n")
    a = read_dataset("toy", {"path": "m.csv", "label_column": "label"}, tmp_path)
    np.testing.assert_array_equal(a.X, [[1, 2], [3, 4], [5, 6], [7, 8]])
    assert list(a.obs_names) == ["s1", "s2", "s3", "s4"]
    assert a.obs["label"].isna().sum() == 2 and list(a.obs["label"].dropna()) == ["tumour", "normal"]


@pytest.mark.parametrize(
    "text, match",
    [
        (
            "id,g1,g2\ns1,1,2\ns2,3,x7\ns3,5,6\n",
            r"column 'g2' mixes numbers and text: .*row 's2', column 'g2' \(line 3\): 'x7'",
        ),
        ("id,g1,g2\ns1,1,a\ns2,3,b\n", r"column 'g2' is not numeric: .*row 's1'"),
        ("id,g1,g2\n", "header but no data rows"),
        ("", "is empty"),
        ("id,g1,g1\ns1,1,2\ns2,3,4\n", r"column name 'g1' occurs 2 times"),
        ("id,g1,g2\ns1,1,2\ns1,3,4\n", r"sample name 's1' occurs 2 times"),
        ("id,g1\ns1,1\ns2,3,4,5\n", r"cannot parse"),
    ],
)
def test_bad_delimited_files(tmp_path, text, match):
    write(tmp_path / "m.csv", text)
    with pytest.raises(InputError, match=match):
        read_dataset("toy", {"path": "m.csv"}, tmp_path)


def test_wrong_delimiter(tmp_path):
    write(tmp_path / "m.tsv", "id,g1,g2\ns1,1,2\ns2,3,4\n")
    with pytest.raises(InputError, match="single column with delimiter tab.*commas"):
        read_dataset("toy", {"path": "m.tsv"}, tmp_path)


def test_label_column_errors(tmp_path):
    write(tmp_path / "m.csv", CSV)
    with pytest.raises(SupervisionError, match="label_column 'class' is not a column.*'g1'"):
        read_dataset("toy", {"path": "m.csv", "label_column": "class"}, tmp_path)
    with pytest.raises(ConfigError, match="label_column needs orientation samples_as_rows"):
        read_dataset("toy", {"path": "m.csv", "label_column": "cls", "orientation": "features_as_rows"}, tmp_path)
    with pytest.raises(ConfigError, match="orientation must be one of"):
        read_dataset("toy", {"path": "m.csv", "orientation": "rows"}, tmp_path)


def test_missing_values_refused_or_imputed(tmp_path):
    write(tmp_path / "m.csv", "id,g1,g2,y\ns1,1,NA,a\ns2,,4,b\ns3,5,8,a\ns4,7,10,b\n")
    with pytest.raises(InputError, match=r"2 missing value\(s\) in 2 sample\(s\).*\('s1', 'g2'\), \('s2', 'g1'\)"):
        prepare_dataset("toy", {"path": "m.csv", "label_column": "y"}, tmp_path)
    a = prepare_dataset("toy", {"path": "m.csv", "label_column": "y", "missing": "median"}, tmp_path)
    np.testing.assert_array_equal(a.X, [[1, 8, ], [5, 4], [5, 8], [7, 10]])  # medians 5 and 8


# --------------------------------------------------------------------------- h5ad


def _adata(X, labels, key="cell_type"):
    a = anndata.AnnData(X=X)
    a.obs_names = [f"c{i}" for i in range(X.shape[0])]
    a.var_names = [f"gene{j}" for j in range(X.shape[1])]
    a.obs[key] = pd.Categorical(labels)
    a.obs["depth"] = np.arange(X.shape[0], dtype=float)
    return a


def test_h5ad_dense_and_sparse(tmp_path):
    X = np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 3.25]], dtype=np.float32)
    _adata(X, ["T", "B", "T"]).write_h5ad(tmp_path / "d.h5ad")
    a = read_dataset("toy", {"path": "d.h5ad", "label_key": "cell_type"}, tmp_path)
    assert isinstance(a.X, np.ndarray) and a.X.dtype == np.float64
    np.testing.assert_array_equal(a.X, X)
    assert list(a.obs["label"]) == ["T", "B", "T"] and list(a.var_names) == ["gene0", "gene1", "gene2"]
    assert list(a.obs["depth"]) == [0, 1, 2]
    _adata(sparse.csr_matrix(X), ["T", "B", "T"]).write_h5ad(tmp_path / "s.h5ad")
    s = read_dataset("toy", {"path": "s.h5ad", "label_key": "cell_type"}, tmp_path)
    assert sparse.isspmatrix_csr(s.X) and s.X.dtype == np.float64
    np.testing.assert_array_equal(s.X.toarray(), X)


def test_h5ad_use_raw(tmp_path):
    a = _adata(np.array([[1.0, 2.0], [3.0, 4.0]]), ["x", "y"], key="label")
    a.raw = a.copy()
    a.X = a.X * 10
    a.write_h5ad(tmp_path / "d.h5ad")
    np.testing.assert_array_equal(read_dataset("t", {"path": "d.h5ad"}, tmp_path).X, [[10, 20], [30, 40]])
    np.testing.assert_array_equal(read_dataset("t", {"path": "d.h5ad", "use_raw": True}, tmp_path).X,
                                  [[1, 2], [3, 4]])


def test_h5ad_label_key_missing_lists_obs_columns(tmp_path):
    _adata(np.eye(3), ["T", "B", "T"]).write_h5ad(tmp_path / "d.h5ad")
    with pytest.raises(SupervisionError, match="label_key 'label'.*available obs columns: 'cell_type', 'depth'"):
        read_dataset("toy", {"path": "d.h5ad", "label_key": "label"}, tmp_path)
    # without label_key and without a 'label' column the dataset is label-free
    a = prepare_dataset("toy", {"path": "d.h5ad"}, tmp_path)
    assert a.obs["label"].isna().all() and a.uns["ssfs_prepare"]["n_unlabeled"] == 3


def test_h5ad_truncated(tmp_path):
    _adata(np.eye(50), ["T", "B"] * 25).write_h5ad(tmp_path / "d.h5ad")
    data = (tmp_path / "d.h5ad").read_bytes()
    (tmp_path / "d.h5ad").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot read h5ad file.*truncated or corrupt"):
        read_dataset("toy", {"path": "d.h5ad", "label_key": "cell_type"}, tmp_path)


def test_h5ad_duplicated_var_names(tmp_path):
    a = _adata(np.eye(3), ["T", "B", "T"])
    a.var_names = ["ACTB", "GAPDH", "ACTB"]
    a.write_h5ad(tmp_path / "d.h5ad")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # anndata's own complaint about the names
        with pytest.raises(InputError, match="feature name 'ACTB' occurs 2 times"):
            read_dataset("toy", {"path": "d.h5ad", "label_key": "cell_type"}, tmp_path)


# --------------------------------------------------------------------------- arff

ARFF = """% tiny test file
@relation tiny
@attribute g1 numeric
@attribute 'g 2' numeric
@attribute g3 real
@attribute CLASS {0,1}
@data
1.5,2,-3,0
4,5.25,6,1
7,?,9,1
"""


def test_arff(tmp_path):
    write(tmp_path / "t.arff", ARFF)
    a = read_dataset("toy", {"path": "t.arff"}, tmp_path)
    np.testing.assert_array_equal(a.X, [[1.5, 2, -3], [4, 5.25, 6], [7, np.nan, 9]])
    assert list(a.var_names) == ["g1", "g 2", "g3"] and list(a.obs_names) == ["s1", "s2", "s3"]
    assert list(a.obs["label"]) == ["0", "1", "1"]


def test_arff_class_must_be_last_and_nominal(tmp_path):
    write(tmp_path / "t.arff", ARFF.replace("@attribute CLASS {0,1}", "@attribute CLASS numeric"))
    with pytest.raises(InputError, match="must be the last one and nominal.*'CLASS', is numeric"):
        read_dataset("toy", {"path": "t.arff"}, tmp_path)
    text = ARFF.replace("@attribute g1 numeric", "@attribute g1 {a,b}").replace("1.5,2", "a,2")
    text = text.replace("4,5.25", "b,5.25").replace("7,?", "a,?")
    write(tmp_path / "t.arff", text)
    with pytest.raises(InputError, match=r"1 feature attribute\(s\).*not numeric.*'g1'"):
        read_dataset("toy", {"path": "t.arff"}, tmp_path)


def test_arff_missing_class_is_an_unlabeled_sample(tmp_path):
    write(tmp_path / "t.arff", ARFF.replace("7,?,9,1", "7,8,9,?"))
    a = prepare_dataset("toy", {"path": "t.arff"}, tmp_path)
    assert a.obs["label"].isna().tolist() == [False, False, True]


# --------------------------------------------------------------------------- mat


def test_mat_uint8_is_cast_and_labels_are_codes(tmp_path):
    X = np.array([[200, 10], [100, 250], [0, 5]], dtype=np.uint8)
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "Y": np.array([[-1], [1], [1]], dtype=np.int16)})
    a = read_dataset("toy", {"path": "d.mat"}, tmp_path)
    assert a.X.dtype == np.float64
    assert a.X[1, 0] - a.X[0, 0] == -100.0  # uint8 would wrap to 156
    np.testing.assert_array_equal(a.X, X.astype(float))
    assert list(a.obs["label"]) == ["-1", "1", "1"]
    assert list(a.obs["label"].cat.categories) == ["-1", "1"]
    assert list(a.var_names) == ["f1", "f2"] and list(a.obs_names) == ["s1", "s2", "s3"]


def test_mat_sparse_and_numeric_label_order(tmp_path):
    X = sparse.csc_matrix(np.array([[0, 1.0], [2, 0], [0, 0]]))
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "Y": np.array([[10.0], [2.0], [1.0]])})
    a = read_dataset("toy", {"path": "d.mat"}, tmp_path)
    assert sparse.isspmatrix_csr(a.X)
    np.testing.assert_array_equal(a.X.toarray(), [[0, 1], [2, 0], [0, 0]])
    assert list(a.obs["label"].cat.categories) == ["1", "2", "10"]  # numeric, not text order


def test_mat_errors(tmp_path):
    scipy.io.savemat(tmp_path / "d.mat", {"X": np.eye(3), "labels": np.arange(3)})
    with pytest.raises(InputError, match="lacks variable.*Y.*it has: X, labels"):
        read_dataset("toy", {"path": "d.mat"}, tmp_path)
    scipy.io.savemat(tmp_path / "d.mat", {"X": np.ones((4, 3)), "Y": np.arange(3)})
    with pytest.raises(InputError, match="Y in .* has 3 entries but X has 4 rows .*features x samples"):
        read_dataset("toy", {"path": "d.mat"}, tmp_path)
    (tmp_path / "bad.mat").write_bytes(b"not a matlab file at all" * 10)
    with pytest.raises(InputError, match="cannot read MATLAB file"):
        read_dataset("toy", {"path": "bad.mat"}, tmp_path)


# --------------------------------------------------------------------------- GEO series matrix

GEO = """!Series_title\t"Expression profiling of acute leukemia"
!Series_geo_accession\t"GSE99999"
!Series_platform_id\t"GPL570"
!Sample_title\t"patient 1"\t"patient 2"\t"patient 3"\t"patient 4"
!Sample_geo_accession\t"GSM1000001"\t"GSM1000002"\t"GSM1000003"\t"GSM1000004"
!Sample_source_name_ch1\t"bone marrow"\t"bone marrow"\t"peripheral blood"\t"bone marrow"
!Sample_characteristics_ch1\t"tissue: bone marrow"\t"tissue: bone marrow"\t"tissue: peripheral blood"\t"age: 12"
!Sample_characteristics_ch1\t"disease state: AML"\t"disease state: ALL"\t"disease state: AML"\t"Disease State: ALL"
!Sample_characteristics_ch1\t"age: 54"\t"age: 33"\t"age: 61"\t"tissue: bone marrow"
!Sample_data_processing\t"MAS5.0 signal"\t"MAS5.0 signal"\t"MAS5.0 signal"\t"MAS5.0 signal"
!series_matrix_table_begin
"ID_REF"\t"GSM1000001"\t"GSM1000002"\t"GSM1000003"\t"GSM1000004"
"1007_s_at"\t5.1\t6.2\t4.8\t7
"1053_at"\t8.25\tnull\t8.1\t7.9
"117_at"\t3.3\t3.1\t3.6\t3.2
!series_matrix_table_end
"""


@pytest.mark.parametrize("compressed", [False, True])
def test_geo_series_matrix(tmp_path, compressed):
    if compressed:
        name = "GSE99999_series_matrix.txt.gz"
        with gzip.open(tmp_path / name, "wt") as fh:
            fh.write(GEO)
    else:
        name = "GSE99999_series_matrix.txt"
        write(tmp_path / name, GEO)
    a = read_dataset("geo", {"path": name, "geo_characteristic": "disease state"}, tmp_path)
    assert list(a.obs_names) == ["GSM1000001", "GSM1000002", "GSM1000003", "GSM1000004"]
    assert list(a.var_names) == ["1007_s_at", "1053_at", "117_at"]
    np.testing.assert_array_equal(a.X, [[5.1, 8.25, 3.3], [6.2, np.nan, 3.1], [4.8, 8.1, 3.6], [7, 7.9, 3.2]])
    assert list(a.obs["label"]) == ["AML", "ALL", "AML", "ALL"]  # GSM1000004's key sits on another line
    p = prepare_dataset("geo", {"path": name, "geo_characteristic": "tissue", "missing": "median"}, tmp_path)
    assert list(p.obs["label"]) == ["bone marrow", "bone marrow", "peripheral blood", "bone marrow"]
    assert p.X[1, 1] == 8.1  # median of 8.25, 8.1, 7.9


def test_geo_characteristic_errors(tmp_path):
    write(tmp_path / "GSE1_series_matrix.txt", GEO)
    with pytest.raises(SupervisionError, match="'subtype' not found.*keys: 'age', 'disease state', 'tissue'"):
        read_dataset("geo", {"path": "GSE1_series_matrix.txt", "geo_characteristic": "subtype"}, tmp_path)
    with pytest.raises(SupervisionError, match="set geo_characteristic.*'age', 'disease state'"):
        read_dataset("geo", {"path": "GSE1_series_matrix.txt"}, tmp_path)
    write(tmp_path / "GSE2_series_matrix.txt", GEO.split("!series_matrix_table_end")[0])
    with pytest.raises(InputError, match="truncated"):
        read_dataset("geo", {"path": "GSE2_series_matrix.txt", "geo_characteristic": "tissue"}, tmp_path)
    write(tmp_path / "GSE3_series_matrix.txt", GEO.replace("\t3.6\t", "\tn/d\t"))
    with pytest.raises(InputError, match=r"row '117_at', column 'GSM1000003' \(line 15\): 'n/d'"):
        read_dataset("geo", {"path": "GSE3_series_matrix.txt", "geo_characteristic": "tissue"}, tmp_path)


# --------------------------------------------------------------------------- prepare_dataset: config and labels


def test_prepare_config_errors(tmp_path):
    write(tmp_path / "m.csv", CSV)
    with pytest.raises(ConfigError, match="unknown key.*lable_column"):
        prepare_dataset("toy", {"path": "m.csv", "lable_column": "cls"}, tmp_path)
    with pytest.raises(ConfigError, match="'label_key' applies to format h5ad, not to format csv"):
        prepare_dataset("toy", {"path": "m.csv", "label_key": "cls"}, tmp_path)
    with pytest.raises(ConfigError, match="'path' applies to source: file"):
        prepare_dataset("toy", {"source": "builtin", "name": "iris", "path": "m.csv"}, tmp_path)
    with pytest.raises(ConfigError, match="needs path"):
        prepare_dataset("toy", {}, tmp_path)
    with pytest.raises(ConfigError, match="cannot tell the format of m.xlsx"):
        prepare_dataset("toy", {"path": "m.xlsx"}, tmp_path)
    with pytest.raises(ConfigError, match="format must be one of"):
        prepare_dataset("toy", {"path": "m.csv", "format": "excel"}, tmp_path)
    with pytest.raises(InputError, match="file not found: .*nope.csv"):
        prepare_dataset("toy", {"path": "nope.csv"}, tmp_path)
    with pytest.raises(ConfigError, match="normalize must be one of"):
        prepare_dataset("toy", {"path": "m.csv", "label_column": "cls", "normalize": "log"}, tmp_path)


def test_prepare_label_checks(tmp_path):
    write(tmp_path / "num.csv", "id,g1,g2\ns1,1,2\ns2,3,4\n")
    label_free = prepare_dataset("num", {"path": "num.csv", "format": "csv"}, tmp_path)
    assert label_free.obs["label"].isna().all()
    write(tmp_path / "one.csv", "id,g1,g2,y\ns1,1,2,A\ns2,3,4,A\n")
    with pytest.raises(SupervisionError, match=r"dataset 'one' has one class \('A'\)"):
        prepare_dataset("one", {"path": "one.csv", "label_column": "y"}, tmp_path)
    write(tmp_path / "gap.csv", "id,g1,y\ns1,1,A\ns2,3,\ns3,4,B\n")
    gap = prepare_dataset("gap", {"path": "gap.csv", "label_column": "y"}, tmp_path)
    assert gap.obs["label"].astype(object).where(gap.obs["label"].notna(), None).tolist() == ["A", None, "B"]


def test_prepare_text_matrix_without_labels_config(tmp_path):
    # without label_column the text column is a non-numeric feature: named in the error
    write(tmp_path / "m.csv", CSV)
    with pytest.raises(InputError, match="column 'cls' is not numeric"):
        prepare_dataset("toy", {"path": "m.csv"}, tmp_path)


def test_prepare_records_options_and_normalises(tmp_path):
    write(tmp_path / "m.csv", "id,g1,g2,g3,g4,y\ns1,1,0,5,1,a\ns2,3,8,5,1,b\ns3,7,24,5,2,a\n")
    a = prepare_dataset("toy", {"path": "m.csv", "label_column": "y", "normalize": "log2", "log_offset": 1,
                                "top_variable": 2}, tmp_path)
    np.testing.assert_allclose(a.X, np.log2(np.array([[1, 0], [3, 8], [7, 24]]) + 1))
    assert list(a.var_names) == ["g1", "g2"]
    rec = a.uns["ssfs_prepare"]
    assert rec == {"source": "file", "path": "m.csv", "format": "csv", "orientation": "samples_as_rows",
                   "index_col": "auto", "label_column": "y", "missing": "refuse", "normalize": "log2",
                   "log_offset": 1.0, "top_variable": 2, "n_samples": 3, "n_features_read": 4, "n_features": 2}


def test_prepare_warns_about_constant_features(tmp_path):
    write(tmp_path / "m.csv", "id,g1,g2,g3,g4,y\ns1,1,0,5,0,a\ns2,3,8,5,0,b\ns3,7,24,5,0,a\n")
    with pytest.warns(UserWarning, match=r"2 constant feature\(s\) kept \(e.g. 'g3'\)"):
        a = prepare_dataset("toy", {"path": "m.csv", "label_column": "y"}, tmp_path)
    assert a.n_vars == 4


# --------------------------------------------------------------------------- write_prepared


def test_write_prepared_roundtrip_and_atomic(tmp_path, monkeypatch):
    write(tmp_path / "m.csv", CSV)
    a = prepare_dataset("toy", {"path": "m.csv", "label_column": "cls"}, tmp_path)
    out = tmp_path / "out" / "toy.h5ad"
    write_prepared(a, out)
    b = anndata.read_h5ad(out)
    np.testing.assert_array_equal(b.X, a.X)
    assert list(b.obs["label"]) == ["A", "B", "A"] and b.uns["ssfs_prepare"]["label_column"] == "cls"
    assert os.listdir(out.parent) == ["toy.h5ad"]
    # a write failing half-way leaves neither the target nor the partial temp file behind
    real = Path.write_bytes

    def partial_write(self, data):
        real(self, data[:100])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", partial_write)
    with pytest.raises(OutputError, match="bad.h5ad: no space left on the device"):
        write_prepared(a, tmp_path / "out" / "bad.h5ad")
    assert os.listdir(out.parent) == ["toy.h5ad"]


# --------------------------------------------------------------------------- shared benchmark files


@pytest.mark.shared
@pytest.mark.parametrize("name", ["colon", "cns"])
def test_shared_files_have_documented_shapes(name):
    if not (SHARED / "datasets.tsv").is_file():
        pytest.skip("../shared/data not present")
    info = pd.read_csv(SHARED / "datasets.tsv", sep="\t", index_col="name").loc[name]
    a = prepare_dataset(name, {"path": info["path"]}, SHARED)
    assert a.shape == (info["n_samples"], info["n_features"])
    names, sizes = str(info["class_labels"]).split(":"), map(int, str(info["class_counts"]).split(":"))
    counts = dict(zip(names, sizes, strict=True))
    assert a.obs["label"].value_counts().to_dict() == counts
    assert a.X.min() == info["min"] and a.X.max() == info["max"]
