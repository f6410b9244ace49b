"""AnnData ``.h5ad`` files: reading (labels from an obs column) and atomic writing.

Only X, obs and var are kept (layers, obsm, uns ... are dropped: the prepared
dataset is the matrix the methods see). A sparse X stays sparse (CSR).
"""

from __future__ import annotations

from pathlib import Path

import anndata
import numpy as np
from anndata import AnnData

from .._checked import incomplete
from ..errors import ConfigError, InputError, SupervisionError
from ..labels import encode_labels
from .atomic import atomic_write_bytes
from .common import examples, make_adata


def read_h5ad_file(path: Path, *, where: str, label_key: str | None = None, use_raw: bool = False,
                   layer: str | None = None) -> AnnData:
    """``label_key``: obs column of the labels (NaN = unlabeled); None: ``label`` when
    present, else no labels (a label-free dataset). ``use_raw``: read ``.raw.X``; ``layer``:
    read ``layers[layer]`` (not both)."""
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


def read_prepared(path):
    """(X, y codes, class names, feature names, AnnData) of a prepared .h5ad."""
    import anndata as ad

    try:
        adata = ad.read_h5ad(path)
    except Exception as e:  # noqa: BLE001 - truncated / not HDF5: h5py raises OSError, KeyError ...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise incomplete(path, f"the prepared data cannot be read ({first})") from None
    if "label" not in adata.obs:
        raise InputError(f"{path} has no obs['label'] column")
    y, classes = encode_labels(adata.obs["label"])
    return adata.X, y, classes, np.asarray(adata.var_names), adata


def dataset_summary(prepared) -> dict:
    X, y, classes, _, _ = read_prepared(prepared)
    counts = np.bincount(y[y >= 0], minlength=classes.size)
    return {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "n_classes": int(classes.size),
            "n_unlabeled": int((y < 0).sum()),
            "class_counts": {str(c): int(k) for c, k in zip(classes, counts, strict=True)}}
