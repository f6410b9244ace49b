"""10x Genomics output (issue #29 item 7): a Cell Ranger matrix folder (v3 gzipped, v2 plain) and a
feature-barcode .h5, read through scanpy's readers, at every door (reader, config, CLI), with labels
from a barcode table; damaged inputs are one-line errors."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from tenx_files import MARKERS, planted_counts, write_10x_dir, write_10x_h5, write_labels

from ssfs import ConfigError, InputError, SupervisionError
from ssfs.cli import main
from ssfs.io import guess_format, prepare_dataset, read_dataset

pytest.importorskip("h5py")
pytest.importorskip("scanpy")


@pytest.fixture(scope="module")
def tenx(tmp_path_factory):
    root = tmp_path_factory.mktemp("tenx")
    X, bc, ids, names, types = planted_counts()
    write_10x_dir(root / "filtered_feature_bc_matrix", X, bc, ids, names, extra_antibody=True)
    write_10x_dir(root / "hg19", X, bc, ids, names, v3=False)
    write_10x_h5(root / "filtered_feature_bc_matrix.h5", X, bc, ids, names)
    write_labels(root / "labels.csv", bc, types)
    return root, X, bc, ids, names, types


@pytest.mark.parametrize("name", ["filtered_feature_bc_matrix", "hg19", "filtered_feature_bc_matrix.h5"])
def test_every_layout_reads_the_same_cells_genes_and_counts(tenx, name):
    root, X, bc, ids, names, _ = tenx
    assert guess_format(root / name) == "10x"
    a = read_dataset("pbmc", {"path": name}, root)
    assert sparse.issparse(a.X) and a.X.dtype == np.float64
    np.testing.assert_array_equal(a.X.toarray(), X)  # the Antibody Capture feature is dropped
    assert list(a.obs_names) == bc
    assert list(a.var_names[:7]) == ["G0", "G1", "G2", "G3", "G4", "G4-1", "G6"]  # symbols made unique
    assert list(a.var["gene_ids"]) == ids
    assert "label" not in a.obs  # no labels file: label-free


def test_labels_file_lists_only_the_labeled_cells(tenx):
    root, X, bc, *_ = tenx
    a = prepare_dataset("pbmc", {"path": "filtered_feature_bc_matrix", "labels_file": "labels.csv"}, root)
    lab = a.obs["label"]
    assert lab.notna().sum() == 12 and lab.isna().sum() == 28
    assert lab.iloc[0] == "A" and lab.iloc[20] == "B" and pd.isna(lab.iloc[10])
    assert a.uns["ssfs_prepare"]["format"] == "10x" and a.uns["ssfs_prepare"]["n_unlabeled"] == 28


@pytest.mark.parametrize("name", ["filtered_feature_bc_matrix", "filtered_feature_bc_matrix.h5"])
def test_ssfs_select_on_10x_output(tenx, tmp_path, capsys, name):
    root, *_ = tenx
    out = tmp_path / "sel"
    assert main(["select", str(root / name), "--labels-file", str(root / "labels.csv"), "--resamples", "4",
                 "--top", "3", "--no-progress", "--json", "-o", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert sorted(printed["features"]) == [f"G{m}" for m in MARKERS]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["labeled_per_class"] == {"A": 6, "B": 6}
    table = pd.read_csv(out / "consensus.tsv", sep="\t")
    assert set(table["feature"][:3]) == {f"G{m}" for m in MARKERS}


def test_ssfs_rank_on_10x_folder(tenx, capsys):
    root, *_ = tenx
    assert main(["rank", str(root / "hg19"), "--labels-file", str(root / "labels.csv"), "--method", "fisher",
                 "--no-progress", "-o", "-"]) == 0
    ranking = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out), sep="\t")
    assert set(ranking["feature"][:3]) == {f"G{m}" for m in MARKERS}


def _copy(src, dst, skip=()):
    dst.mkdir()
    for f in src.iterdir():
        if f.name not in skip:
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_bad_10x_folders_are_one_line_errors(tenx, tmp_path, capsys):
    root, *_ = tenx
    v3 = root / "filtered_feature_bc_matrix"
    cases = {}
    cases["no_barcodes"] = (_copy(v3, tmp_path / "no_barcodes", skip=("barcodes.tsv.gz",)),
                            "has no barcodes.tsv.gz .*found: 'features.tsv.gz', 'matrix.mtx.gz'")
    short = _copy(v3, tmp_path / "short")
    lines = gzip.decompress((short / "barcodes.tsv.gz").read_bytes()).decode().splitlines()[:-3]
    with gzip.open(short / "barcodes.tsv.gz", "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    cases["short"] = (short, r"matrix.mtx.gz has 40 columns \(cells\) but barcodes.tsv.gz lists 37")
    mixed = _copy(v3, tmp_path / "mixed", skip=("features.tsv.gz",))
    (mixed / "features.tsv").write_bytes(gzip.decompress((v3 / "features.tsv.gz").read_bytes()))
    cases["mixed"] = (mixed, r"holds Cell Ranger 3\+ files uncompressed \(features.tsv\): gzip them")
    outer = tmp_path / "outs"
    outer.mkdir()
    _copy(v3, outer / "filtered_feature_bc_matrix")
    cases["outer"] = (outer, "holds no matrix.mtx.*give that folder")
    (tmp_path / "junk.h5").write_text("not hdf5\n")
    cases["junk"] = (tmp_path / "junk.h5", "as a 10x Genomics .h5 .*not an HDF5 file")
    import h5py

    with h5py.File(tmp_path / "anndata.h5", "w") as f:
        f.create_group("X")
    cases["other_h5"] = (tmp_path / "anndata.h5", r"no /matrix group \(it holds 'X'\)")
    for name, (path, match) in cases.items():
        with pytest.raises(InputError, match=match):
            read_dataset(name, {"path": str(path)})
        assert main(["rank", str(path), "--method", "variance", "--no-progress"]) == 1, name
        err = capsys.readouterr().err
        assert err.startswith("ssfs: error: ") and err.count("\n") == 1, err


def test_labels_that_match_no_barcode(tenx, tmp_path):
    root, _, bc, *_ = tenx
    (tmp_path / "lab.csv").write_text("".join(f"{b[:-2]},A\n" for b in bc[:3]) + "".join(
        f"{b[:-2]},B\n" for b in bc[30:33]))
    with pytest.raises(SupervisionError, match="no barcode of the 10x matrix is in labels file.*lack the '-1' suffix"):
        prepare_dataset("x", {"path": str(root / "hg19"), "labels_file": str(tmp_path / "lab.csv")})
    (tmp_path / "some.csv").write_text(f"{bc[0]},A\n{bc[30]},B\nTTTTTTTTTTTT-1,B\n")
    with pytest.warns(UserWarning, match="1 of the 3 ids of labels file .* are no barcode"):
        a = prepare_dataset("x", {"path": str(root / "hg19"), "labels_file": str(tmp_path / "some.csv")})
    assert a.obs["label"].notna().sum() == 2


def test_workflow_config_takes_format_10x(tenx):
    from pathlib import Path

    from ssfs.workflow.config import load_schema, validate_config

    repo = Path(__file__).resolve().parents[2]
    cfg = {"datasets": {"pbmc": {"path": "filtered_feature_bc_matrix", "format": "10x", "labels_file": "labels.csv"},
                        "free": {"path": "hg19"}},
           "methods": {"laplacian": {}}}
    out = validate_config(cfg, load_schema(repo / "workflow/schemas/config.schema.yaml"))
    assert out["datasets"]["pbmc"]["format"] == "10x"
    root = tenx[0]
    a = prepare_dataset("pbmc", out["datasets"]["pbmc"], root)
    assert a.n_obs == 40 and a.obs["label"].notna().sum() == 12
    bad = {"datasets": {"free": {"path": "hg19"}}, "methods": {"fisher": {}}}
    with pytest.raises(ConfigError, match="no labels .*fisher"):  # a 10x folder without labels_file: label-free
        validate_config(bad, load_schema(repo / "workflow/schemas/config.schema.yaml"))

