"""MATLAB ``.mat`` files (v4-v7.2, ``scipy.io.loadmat``) holding ``X`` (n x p) and ``Y`` (n x 1).

X is cast to float64 (integer types such as uint8 would wrap in arithmetic) and
kept sparse if stored sparse; Y is raveled and its integer codes become the
label strings (``-1``, ``1``, ...). The files carry no names: samples are
``s1..sn``, features ``f1..fp``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from anndata import AnnData
from scipy import io as sio
from scipy import sparse

from ..errors import InputError
from .common import make_adata


def read_mat_file(path: Path, *, where: str) -> AnnData:
    try:
        m = sio.loadmat(path)
    except NotImplementedError:
        raise InputError(
            f"{where}: {path} is a MATLAB v7.3 (HDF5) file; save it with -v7 or convert it to h5ad"
        ) from None
    except Exception as e:  # noqa: BLE001 - scipy raises ValueError/TypeError/OSError on damaged files
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{where}: cannot read MATLAB file {path}: {msg}") from None
    variables = sorted(k for k in m if not k.startswith("__"))
    missing = [v for v in ("X", "Y") if v not in m]
    if missing:
        raise InputError(
            f"{where}: {path} lacks variable(s) {', '.join(missing)} (need X: samples x features and Y: "
            f"labels); it has: {', '.join(variables) or 'none'}"
        )
    X, Y = m["X"], m["Y"]
    if sparse.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y).ravel()
    if np.asarray(X).ndim != 2 and not sparse.issparse(X):
        raise InputError(f"{where}: X in {path} has shape {np.shape(X)}; expected samples x features")
    if not sparse.issparse(X) and not np.issubdtype(np.asarray(X).dtype, np.number):
        raise InputError(f"{where}: X in {path} is not numeric (MATLAB class {np.asarray(X).dtype})")
    n = X.shape[0]
    if Y.size != n:
        hint = " (X may be stored features x samples)" if Y.size == X.shape[1] else ""
        raise InputError(f"{where}: Y in {path} has {Y.size} entries but X has {n} rows{hint}")
    if np.issubdtype(Y.dtype, np.number):
        Yf = Y.astype(np.float64)
        finite = np.isfinite(Yf)
        if np.any(Yf[finite] != np.round(Yf[finite])):
            raise InputError(f"{where}: Y in {path} holds non-integer values; expected integer class codes")
        labels = np.array([str(int(v)) if ok else None for v, ok in zip(Yf, finite, strict=True)], dtype=object)
    else:
        labels = np.array([str(v) for v in Y], dtype=object)
    X = sparse.csr_matrix(X, dtype=np.float64) if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    return make_adata(X, where=where, labels=labels)
