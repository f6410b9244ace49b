"""Tiny 10x Genomics outputs written as Cell Ranger lays them out (the tests of the 10x door).

A matrix folder: ``matrix.mtx.gz`` (Matrix Market, features x cells, integer counts),
``barcodes.tsv.gz`` (one barcode a line), ``features.tsv.gz`` (id, symbol, feature type);
Cell Ranger 2: the same uncompressed with ``genes.tsv`` (id, symbol). A feature-barcode
``.h5``: group ``/matrix`` with ``barcodes``, ``data``, ``indices``, ``indptr`` (CSC of the
features x cells matrix), ``shape`` and ``features/{id,name,feature_type,genome,_all_tag_keys}``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import scipy.io
from scipy import sparse

#: markers of type A (rows of the first half of the cells get +8 counts)
MARKERS = (0, 1, 2)


def planted_counts(n_cells: int = 40, n_genes: int = 30, seed: int = 0):
    """``(counts cells x genes, barcodes, gene ids, symbols, cell types)``: genes ``MARKERS``
    are high in type A (the first half of the cells); symbol ``G4`` is used twice (genes 4 and
    5), as real annotations repeat symbols."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n_cells, n_genes))
    types = np.where(np.arange(n_cells) < n_cells // 2, "A", "B")
    X[np.ix_(types == "A", list(MARKERS))] += 8
    barcodes = [f"AAACCTGAGAAA{i:04d}-1" for i in range(n_cells)]
    ids = [f"ENSG{j:011d}" for j in range(n_genes)]
    names = [f"G{j}" for j in range(n_genes)]
    names[5] = "G4"
    return X, barcodes, ids, names, types


def _text(path: Path, lines, gz: bool) -> None:
    body = "".join(f"{line}\n" for line in lines)
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(body)
    else:
        path.write_text(body)


def write_10x_dir(path, X, barcodes, ids, names, *, v3: bool = True, extra_antibody: bool = False) -> Path:
    """A Cell Ranger matrix folder (v3: gzipped with features.tsv.gz; else v2: plain with genes.tsv);
    ``extra_antibody`` adds one 'Antibody Capture' feature (v3), which readers of expression drop."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    types = ["Gene Expression"] * len(ids)
    if extra_antibody:
        X = np.hstack([X, np.full((X.shape[0], 1), 50)])
        ids, names, types = [*ids, "CD3_TotalSeqB"], [*names, "CD3"], [*types, "Antibody Capture"]
    M = sparse.coo_matrix(np.asarray(X).T)
    if v3:
        with gzip.open(path / "matrix.mtx.gz", "wb") as fh:
            scipy.io.mmwrite(fh, M, field="integer")
        _text(path / "features.tsv.gz", [f"{i}\t{n}\t{t}" for i, n, t in zip(ids, names, types, strict=True)], True)
    else:
        scipy.io.mmwrite(str(path / "matrix.mtx"), M, field="integer")
        _text(path / "genes.tsv", [f"{i}\t{n}" for i, n in zip(ids, names, strict=True)], False)
    _text(path / ("barcodes.tsv.gz" if v3 else "barcodes.tsv"), barcodes, v3)
    return path


def write_10x_h5(path, X, barcodes, ids, names) -> Path:
    """A Cell Ranger 3+ feature-barcode matrix .h5."""
    import h5py

    M = sparse.csc_matrix(np.asarray(X).T)  # features x cells, stored by cell (column)
    with h5py.File(path, "w") as f:
        g = f.create_group("matrix")
        g["barcodes"] = np.array(barcodes, dtype="S")
        g["data"] = M.data.astype(np.int32)
        g["indices"] = M.indices.astype(np.int64)
        g["indptr"] = M.indptr.astype(np.int64)
        g["shape"] = np.array(M.shape, dtype=np.int32)
        ft = g.create_group("features")
        ft["id"] = np.array(ids, dtype="S")
        ft["name"] = np.array(names, dtype="S")
        ft["feature_type"] = np.array(["Gene Expression"] * len(ids), dtype="S")
        ft["genome"] = np.array(["GRCh38"] * len(ids), dtype="S")
        ft["_all_tag_keys"] = np.array([b"genome"])
    return Path(path)


def write_labels(path, barcodes, types, per_type: int = 6) -> Path:
    """A labels table ``barcode,cell_type`` listing only ``per_type`` cells of each type."""
    rows = ["barcode,cell_type"]
    for t in sorted(set(types)):
        rows += [f"{barcodes[i]},{t}" for i in np.flatnonzero(np.asarray(types) == t)[:per_type]]
    Path(path).write_text("\n".join(rows) + "\n")
    return Path(path)
