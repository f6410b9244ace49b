"""AnnData ``.h5ad`` files: reading (labels from an obs column) and atomic writing.

Only X, obs and var are kept (layers, obsm, uns ... are dropped: the prepared
dataset is the matrix the methods see). A sparse X stays sparse (CSR).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anndata
import numpy as np
from anndata import AnnData

from .._checked import incomplete
from ..errors import ConfigError, InputError, SupervisionError
from ..labels import Labels, class_counts, encode_labels
from .atomic import atomic_write_bytes
from .common import examples, make_adata


def read_h5ad_file(path: Path, *, where: str, label_key: str | None = None, use_raw: bool = False,
                   layer: str | None = None, batch_key: str | None = None) -> AnnData:
    """``label_key``: obs column of the labels (NaN = unlabeled); None: ``label`` when
    present, else no labels (a label-free dataset). ``use_raw``: read ``.raw.X``; ``layer``:
    read ``layers[layer]`` (not both). ``batch_key``: an obs column that must be there."""
    try:
        src = anndata.read_h5ad(path)
    except Exception as e:  # noqa: BLE001 - h5py/anndata raise OSError, KeyError, ValueError ... on damaged files
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{where}: cannot read h5ad file {path} (truncated or corrupt?): {msg}") from None
    if label_key is None:
        label_key = "label" if "label" in src.obs.columns else None
    elif str(label_key) not in src.obs.columns:
        cols = list(src.obs.columns)
        raise SupervisionError(
            f"{where}: label_key {label_key!r} is not an obs column of {path}; "
            f"available obs columns: {examples(cols, 20) if cols else 'none'}"
        )
    if batch_key is not None and str(batch_key) not in src.obs.columns:
        raise InputError(f"{where}: batch_key {batch_key!r} is not an obs column of {path}; available obs columns: "
                         f"{examples(list(src.obs.columns), 20) if len(src.obs.columns) else 'none'}")
    X, var = _matrix_of(src, path, where, use_raw=use_raw, layer=layer)
    if X is None:
        raise InputError(f"{where}: {path} has no X matrix")
    if not hasattr(X, "dtype") or not np.issubdtype(X.dtype, np.number):
        raise InputError(f"{where}: X of {path} is not numeric")
    labels = None if label_key is None else src.obs[str(label_key)]  # a categorical keeps its declared order
    obs = src.obs.drop(columns=[c for c in (label_key, "label") if c is not None], errors="ignore")
    return make_adata(
        X, where=where, labels=labels, obs_names=src.obs_names, var_names=var.index, obs=obs, var=var.copy()
    )


def _matrix_of(src: AnnData, path: Path, where: str, *, use_raw: bool, layer: str | None):
    """(matrix, var) of the h5ad ``src``: ``X``, ``.raw.X`` or ``layers[layer]``."""
    if use_raw and layer is not None:
        raise ConfigError(f"{where}: use_raw and layer name two matrices of {path}; give one")
    if layer is not None:
        if str(layer) not in src.layers:
            have = examples(list(src.layers), 10) or "none"
            raise InputError(f"{where}: layer {layer!r} is not in {path} (layers: {have})")
        return src.layers[str(layer)], src.var
    if use_raw:
        if src.raw is None:
            raise InputError(f"{where}: use_raw is true but {path} has no .raw")
        return src.raw.X, src.raw.var
    return src.X, src.var


def write_prepared(adata: AnnData, path, *, what: str = "") -> Path:
    """Write ``adata`` to ``path`` (h5ad) atomically: temp file in the same folder, then ``os.replace``.

    The file is built in memory (:func:`h5ad_bytes`) and written with ordinary file writes:
    HDF5 meeting a full disk or the file-size limit in the middle of a file can crash the
    process (a segmentation fault in h5py's clean-up), while a plain write fails with one
    :class:`~ssfs.errors.OutputError` naming ``path`` and the cause."""
    path = Path(path)
    atomic_write_bytes(path, h5ad_bytes(adata), what=what)
    return path


def h5ad_bytes(adata: AnnData) -> bytes:
    """The ``.h5ad`` file of ``adata`` as bytes (string columns stored as categoricals, as
    :meth:`anndata.AnnData.write_h5ad` does; the same bytes on every call)."""
    import io

    import h5py
    from anndata.io import write_elem

    adata.strings_to_categoricals()
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        write_elem(f, "/", adata)
    return buf.getvalue()


@dataclass(frozen=True)
class Prepared:
    """A prepared dataset, as the workflow's ``prepare`` step writes it (:func:`read_prepared`).

    Attributes
    ----------
    X : ndarray or CSR matrix
        Samples x features.
    labels : ssfs.labels.Labels
        Class codes (-1 = unlabeled) and class names.
    features : ndarray
        Feature names (``var_names``).
    adata : anndata.AnnData
        The whole prepared AnnData (``uns`` holds the preparation record and the user's constraints).
    batch : ndarray or None
        Every sample's batch (``obs['batch']``, from the dataset's ``batch_key``), or None.
    """

    X: Any
    labels: Labels
    features: np.ndarray
    adata: AnnData

    @property
    def y(self) -> np.ndarray:
        """The class codes, -1 for unlabeled samples."""
        return self.labels.codes

    @property
    def classes(self) -> np.ndarray:
        """The class names (``classes[c]`` names code ``c``)."""
        return self.labels.classes

    @property
    def batch(self) -> np.ndarray | None:
        return None if self.adata is None else prepared_batch(self.adata)


#: obs column of a prepared AnnData holding every sample's batch (from the dataset's ``batch_key``)
BATCH = "ssfs_batch"


def prepared_batch(adata) -> np.ndarray | None:
    """Every sample's batch in a prepared AnnData (obs :data:`BATCH`), or None."""
    return adata.obs[BATCH].to_numpy(dtype=str) if BATCH in adata.obs else None


def read_prepared(path) -> Prepared:
    """The :class:`Prepared` dataset of a prepared ``.h5ad`` (labels encoded by
    :func:`ssfs.labels.encode_labels`, as at every other door)."""
    try:
        adata = anndata.read_h5ad(path)
    except Exception as e:  # noqa: BLE001 - truncated / not HDF5: h5py raises OSError, KeyError ...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise incomplete(path, f"the prepared data cannot be read ({first})") from None
    if "label" not in adata.obs:
        raise InputError(f"{path} has no obs['label'] column")
    return Prepared(adata.X, encode_labels(adata.obs["label"]), np.asarray(adata.var_names), adata)


def dataset_summary(prepared) -> dict:
    """Samples, features, classes, unlabeled samples, batches (1 when the dataset gives no
    ``batch_key``) and labeled samples per class of a prepared dataset."""
    data = read_prepared(prepared)
    batch = data.batch
    return {"n_samples": int(data.X.shape[0]), "n_features": int(data.X.shape[1]),
            "n_classes": int(data.classes.size), "n_unlabeled": int((data.y < 0).sum()),
            "n_batches": 1 if batch is None else int(np.unique(np.asarray(batch, dtype=str)).size),
            "class_counts": class_counts(*data.labels)}


#: var columns holding gene symbols, in order of preference
SYMBOL_COLUMNS = ("gene_symbol", "symbol", "gene_symbols", "gene_name", "gene_names", "Gene Symbol", "GENE_SYMBOL")


def gene_symbols(adata) -> np.ndarray | None:
    """Gene symbols of the features when the AnnData's ``var`` has a symbol column
    (:data:`SYMBOL_COLUMNS`), else None."""
    for c in SYMBOL_COLUMNS:
        if c in adata.var.columns:
            return adata.var[c].astype(str).to_numpy()
    return None
