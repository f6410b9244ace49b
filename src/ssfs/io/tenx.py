"""10x Genomics output, read with scanpy's readers: a Cell Ranger matrix folder
(``filtered_feature_bc_matrix/``: ``matrix.mtx.gz``, ``barcodes.tsv.gz``, ``features.tsv.gz``;
Cell Ranger 2: ``matrix.mtx``, ``barcodes.tsv``, ``genes.tsv``) through
:func:`scanpy.read_10x_mtx`, or a feature-barcode matrix ``.h5`` through
:func:`scanpy.read_10x_h5`.

Cells are named by their barcode, genes by their symbol (made unique as scanpy does:
``GENE``, ``GENE-1``), with the Ensembl ids in ``var['gene_ids']``; only ``Gene Expression``
features are kept (antibody capture and CRISPR guides are dropped). Labels come from a
separate table ``barcode -> label`` (``labels_file``, csv or tsv as for the other formats);
cells absent from it are unlabeled, so a table of the few annotated cells is enough.

A damaged folder or file is one line naming what is wrong: a missing file (and what the
folder holds), a matrix whose size disagrees with its barcode or feature list, a file that
is not a 10x ``.h5``.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from anndata import AnnData

from ..errors import InputError, SupervisionError
from .common import examples, make_adata
from .delimited import labels_table

#: the three files of a matrix folder, by Cell Ranger version: (matrix, barcodes, features)
LAYOUTS = {
    "Cell Ranger 3+": ("matrix.mtx.gz", "barcodes.tsv.gz", "features.tsv.gz"),
    "Cell Ranger 2": ("matrix.mtx", "barcodes.tsv", "genes.tsv"),
}


def is_10x_dir(path: Path) -> bool:
    """Whether ``path`` is a folder holding a 10x matrix (``matrix.mtx`` or ``matrix.mtx.gz``)."""
    return path.is_dir() and any((path / f).is_file() for f in ("matrix.mtx", "matrix.mtx.gz"))


def _layout(path: Path, where: str) -> str:
    """The Cell Ranger layout of folder ``path``, or a one-line InputError naming what is wrong."""
    found = sorted(p.name for p in path.iterdir())
    for name, files in LAYOUTS.items():
        if all((path / f).is_file() for f in files):
            return name
    if not any(f.startswith("matrix.mtx") for f in found):
        inner = [p for p in path.iterdir() if is_10x_dir(p)]
        hint = f"; the 10x matrix is in {inner[0]}: give that folder" if len(inner) == 1 else ""
        raise InputError(f"{where}: {path} holds no matrix.mtx(.gz), so it is not a 10x matrix folder "
                         f"(it holds: {examples(found, 6) or 'nothing'}){hint}")
    v3 = any(f.startswith("features.tsv") for f in found) or "matrix.mtx.gz" in found
    layout = "Cell Ranger 3+" if v3 else "Cell Ranger 2"
    files = LAYOUTS[layout]
    missing = [f for f in files if not (path / f).is_file()]
    other = [f.removesuffix(".gz") if v3 else f + ".gz" for f in missing]
    wrong = [f for f in other if (path / f).is_file()]
    if wrong:
        fix = "gzip them, as Cell Ranger writes them" if v3 else "gunzip them, as Cell Ranger 2 writes them"
        raise InputError(f"{where}: 10x folder {path} holds {layout} files {'un' if v3 else ''}compressed "
                         f"({', '.join(wrong)}): {fix} (scanpy reads them so)")
    raise InputError(f"{where}: 10x folder {path} has no {missing[0]} (a {layout} matrix folder holds "
                     f"{', '.join(files)}; found: {examples(found, 6)})")


def _lines(path: Path) -> int:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _size_mismatch(path: Path, layout: str) -> str | None:
    """What disagrees between the matrix header and the barcode / feature lists, or None."""
    from scipy.io import mminfo

    matrix, barcodes, features = (path / f for f in LAYOUTS[layout])
    try:
        n_features, n_cells, *_ = mminfo(str(matrix))
    except Exception as e:  # noqa: BLE001 - scipy raises ValueError, OSError, EOFError ... on damaged files
        return f"{matrix.name} is not a readable Matrix Market file ({str(e).strip() or type(e).__name__})"
    for f, n, what in ((barcodes, n_cells, "columns (cells)"), (features, n_features, "rows (features)")):
        got = _lines(f)
        if got != n:
            return f"{matrix.name} has {n} {what} but {f.name} lists {got}"
    return None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def read_10x_dir(path: Path, *, where: str) -> AnnData:
    """The 10x matrix folder ``path`` as an AnnData (cells x genes, CSR counts)."""
    import scanpy as sc

    layout = _layout(path, where)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adata = sc.read_10x_mtx(path, var_names="gene_symbols", make_unique=True)
    except Exception as e:  # noqa: BLE001 - scanpy/pandas raise many types on damaged folders
        why = _size_mismatch(path, layout) or _first_line(e)
        raise InputError(f"{where}: cannot read 10x folder {path} ({layout}): {why}") from None
    return adata


def _h5_problem(path: Path) -> str:
    """Why ``path`` is not a 10x feature-barcode ``.h5``: not HDF5, or the datasets missing."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            if "matrix" not in f:
                groups = list(f.keys())
                return f"no /matrix group (it holds {examples(groups, 5) or 'nothing'})"
            have = set(f["matrix"].keys()) | {f"features/{k}" for k in f["matrix"].get("features", {})}
    except OSError as e:
        return f"not an HDF5 file ({_first_line(e)})"
    need = ("barcodes", "data", "indices", "indptr", "shape", "features/id", "features/name", "features/feature_type")
    missing = [d for d in need if d not in have]
    return f"/matrix has no {', '.join(missing)}" if missing else ""


def read_10x_h5_file(path: Path, *, where: str) -> AnnData:
    """The 10x feature-barcode matrix ``.h5`` ``path`` as an AnnData (cells x genes, CSR counts)."""
    import scanpy as sc

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adata = sc.read_10x_h5(path)
    except Exception as e:  # noqa: BLE001 - h5py/scanpy raise OSError, KeyError, ValueError, Exception
        why = _h5_problem(path) or _first_line(e)
        raise InputError(f"{where}: cannot read {path} as a 10x Genomics .h5 (Cell Ranger feature-barcode "
                         f"matrix): {why}") from None
    adata.var_names_make_unique()  # as read_10x_mtx does: symbols repeat (GENE, GENE-1)
    return adata


def _labels(path: Path, barcodes: pd.Index, column: str | None, where: str) -> np.ndarray:
    """Labels of ``barcodes`` from a labels table that may list only some cells (the others
    are unlabeled); a table matching no barcode is a SupervisionError, ids that are no
    barcode of the matrix are warned."""
    table = labels_table(path, barcodes, column, where)
    hit = table.index.isin(barcodes)
    if not hit.any():
        stripped = barcodes.str.replace(r"-\d+$", "", regex=True)
        hint = "; its ids lack the '-1' suffix of the barcodes" if table.index.isin(stripped).any() else ""
        raise SupervisionError(f"{where}: no barcode of the 10x matrix is in labels file {path} (its ids look like "
                               f"{examples(table.index, 2)}, the barcodes like {examples(barcodes, 2)}){hint}")
    if not hit.all():
        warnings.warn(f"{where}: {int((~hit).sum())} of the {hit.size} ids of labels file {path} are no barcode of "
                      f"the 10x matrix (e.g. {examples(table.index[~hit], 2)}); their labels are not used",
                      stacklevel=3)
    return table.reindex(barcodes).to_numpy(dtype=object)


def read_10x(path: Path, *, where: str, labels_file: Path | None = None,
             labels_file_column: str | None = None) -> AnnData:
    """A 10x folder or ``.h5`` as ssfs's AnnData: X cells x genes (float64 CSR), barcodes as
    ``obs_names``, gene symbols as ``var_names`` (``var['gene_ids']`` kept), ``obs['label']``
    from ``labels_file`` when given (cells not in it unlabeled)."""
    src = read_10x_dir(path, where=where) if path.is_dir() else read_10x_h5_file(path, where=where)
    if src.n_obs == 0 or src.n_vars == 0:
        raise InputError(f"{where}: 10x matrix {path} has {src.n_obs} cells and {src.n_vars} gene expression "
                         "features; nothing to rank")
    labels = None
    if labels_file is not None:
        labels = _labels(labels_file, src.obs_names, labels_file_column, where)
    var = src.var[[c for c in ("gene_ids", "feature_types", "genome") if c in src.var.columns]].copy()
    return make_adata(src.X, where=where, labels=labels, obs_names=src.obs_names, var_names=src.var_names, var=var)
