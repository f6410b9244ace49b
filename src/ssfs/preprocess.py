"""Preprocessing of a dataset before feature selection: missing values, normalisation, filtering.

Applied by :func:`preprocess` in this order (config keys of a dataset entry):

1. ``missing``: ``refuse`` (default: any NaN is an InputError naming the count and
   the first cells) or ``median`` (each NaN replaced by its feature's median over
   the observed samples). Infinite values are always refused.
2. ``normalize``:

   - ``none`` (default).
   - ``microarray``: the classic Golub / Singh preprocessing as specified by Dudoit,
     Fridlyand & Speed 2002 (JASA 97:77, sec. 3.1): threshold at ``floor`` (100) and
     ``ceiling`` (16000); keep features with max/min >= ``min_fold`` (5) and
     max - min >= ``min_range`` (500); take logarithms to base ``log_base``
     (10 as in Dudoit et al.). Dudoit et al. word the filter as *excluding*
     max/min <= 5 or max - min <= 500, i.e. strict inequalities for the kept
     genes; ``strict_filter: true`` gives that, the default keeps features exactly
     at the thresholds (only such boundary features differ).
   - ``log2``: log2(x + ``log_offset``) (offset 1.0); values <= 0 after the offset
     are refused (count and minimum in the message).
   - ``quantile``: quantile normalisation across samples (Bolstad et al. 2003):
     each sample's sorted values are replaced by the mean sorted profile; tied
     values get the average of the profile values over their tied positions.
   - ``minmax``: each feature scaled to [0, 1] (constant features -> 0).
   - ``zscore``: each feature centred and divided by its population standard
     deviation (ddof 0, as scikit-learn's StandardScaler; constant features -> 0).

3. ``top_variable``: keep the N features of largest variance (ddof 0, after
   normalisation; ties broken by lower feature index), in their original order.

Sparse (CSR) input stays sparse for ``none``, ``top_variable`` and ``log2`` with
``log_offset: 1`` (log2(1 + x) maps stored zeros to zero, so only stored values
change); every other normalisation, and median imputation, densify through
:func:`ssfs.runner.dense`, which refuses matrices too large for memory.
Constant features are kept (ssfs methods rank them last) with a warning giving
their count.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from anndata import AnnData
from scipy import sparse

from ._validation import constant_features, dense
from .errors import ConfigError, InputError

MISSING = ("refuse", "median")
NORMALIZATIONS = ("none", "microarray", "log2", "quantile", "minmax", "zscore")

#: defaults of the preprocessing keys of a dataset entry
DEFAULTS = {
    "missing": "refuse",
    "normalize": "none",
    "floor": 100.0,
    "ceiling": 16000.0,
    "min_fold": 5.0,
    "min_range": 500.0,
    "log_base": 10.0,
    "strict_filter": False,
    "log_offset": 1.0,
    "top_variable": None,
}
#: keys that only make sense with one normalisation
NORMALIZE_KEYS = {
    "microarray": ("floor", "ceiling", "min_fold", "min_range", "log_base", "strict_filter"),
    "log2": ("log_offset",),
}


# --------------------------------------------------------------------------- missing values


def _nonfinite_cells(X):
    """(rows, cols, is_nan) of the non-finite entries, row-major order."""
    if sparse.issparse(X):
        coo = sparse.coo_matrix(X)
        bad = ~np.isfinite(coo.data)
        r, c, v = coo.row[bad], coo.col[bad], coo.data[bad]
        o = np.lexsort((c, r))
        return r[o], c[o], np.isnan(v[o])
    bad = ~np.isfinite(X)
    r, c = np.nonzero(bad)
    return r, c, np.isnan(X[r, c])


def check_finite(X, obs_names, var_names, *, missing: str, where: str) -> None:
    """Refuse infinite values always, NaN unless ``missing == 'median'``."""
    r, c, isnan = _nonfinite_cells(X)
    inf = ~isnan
    if inf.any():
        i = np.flatnonzero(inf)[0]
        raise InputError(
            f"{where}: {int(inf.sum())} infinite value(s), first at sample {obs_names[r[i]]!r}, "
            f"feature {var_names[c[i]]!r}"
        )
    if isnan.any() and missing == "refuse":
        cells = ", ".join(f"({obs_names[a]!r}, {var_names[b]!r})" for a, b in zip(r[:3], c[:3], strict=True))
        raise InputError(
            f"{where}: {int(isnan.sum())} missing value(s) in {np.unique(r).size} sample(s), first at "
            f"(sample, feature) {cells}; set missing: median to impute them or fix the file"
        )


def impute_median(X, var_names=None, *, where: str = "impute"):
    """Replace NaN by the median of the feature's observed values (sparse input comes back CSR)."""
    was_sparse = sparse.issparse(X)
    X = dense(X, method="missing: median").copy()
    nan = np.isnan(X)
    if not nan.any():
        return sparse.csr_matrix(X) if was_sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns reported below
        med = np.nanmedian(X, axis=0)
    empty = np.flatnonzero(np.isnan(med))
    if empty.size:
        name = var_names[empty[0]] if var_names is not None else empty[0]
        raise InputError(
            f"{where}: {empty.size} feature(s) have no observed value (e.g. {name!r}); cannot impute a median"
        )
    X[nan] = np.broadcast_to(med, X.shape)[nan]
    return sparse.csr_matrix(X) if was_sparse else X


# --------------------------------------------------------------------------- normalisations


def microarray(
    X,
    *,
    floor: float = 100.0,
    ceiling: float = 16000.0,
    min_fold: float = 5.0,
    min_range: float = 500.0,
    log_base: float = 10.0,
    strict_filter: bool = False,
    where: str = "normalize: microarray",
):
    """Threshold, filter, log (Dudoit et al. 2002, sec. 3.1). Returns ``(X_kept, keep_mask)``."""
    if not 0 < floor < ceiling:
        raise ConfigError(f"{where}: need 0 < floor < ceiling, got floor={floor}, ceiling={ceiling}")
    if log_base <= 0 or log_base == 1:
        raise ConfigError(f"{where}: log_base must be positive and not 1, got {log_base}")
    X = np.clip(dense(X, method="normalize: microarray"), floor, ceiling)
    hi, lo = X.max(axis=0), X.min(axis=0)
    fold, spread = hi / lo, hi - lo
    if strict_filter:
        keep = (fold > min_fold) & (spread > min_range)
    else:
        keep = (fold >= min_fold) & (spread >= min_range)
    if not keep.any():
        raise InputError(
            f"{where}: the filter (max/min >= {min_fold:g} and max-min >= {min_range:g} after thresholding at "
            f"[{floor:g}, {ceiling:g}]) removed all {X.shape[1]} features; is the data already log-transformed?"
        )
    return np.log(X[:, keep]) / np.log(log_base), keep


def log2(X, *, offset: float = 1.0, where: str = "normalize: log2"):
    """log2(x + offset); refuses values <= 0 after the offset. CSR stays CSR when offset == 1."""
    if sparse.issparse(X) and offset == 1.0:
        X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
        vals = X.data + 1.0
        if vals.size and vals.min() <= 0:
            _refuse_log(vals, offset, where)
        X.data = np.log1p(X.data) / np.log(2.0)
        return X
    X = dense(X, method=f"normalize: log2 with log_offset {offset:g}") + offset
    if X.size and X.min() <= 0:
        _refuse_log(X, offset, where)
    return np.log2(X)


def _refuse_log(vals, offset, where):
    bad = vals <= 0
    raise InputError(
        f"{where}: {int(bad.sum())} value(s) are <= 0 after adding log_offset {offset:g} (minimum "
        f"value + offset = {float(vals.min()):g}); use normalize: microarray (floor) or a larger log_offset"
    )


def quantile_normalize(X):
    """Quantile normalisation across samples (rows); ties get the average of their profile values."""
    X = dense(X, method="normalize: quantile")
    profile = np.sort(X, axis=1).mean(axis=0)  # mean sorted profile, length p
    from scipy.stats import rankdata  # lazy: scipy.stats costs 0.4 s at every job's start

    lo = rankdata(X, axis=1, method="min").astype(np.int64) - 1  # first tied position (0-based)
    hi = rankdata(X, axis=1, method="max").astype(np.int64)  # one past the last tied position
    out = profile[lo]
    tie = hi - lo > 1
    if tie.any():
        csum = np.concatenate([[0.0], np.cumsum(profile)])
        out[tie] = (csum[hi[tie]] - csum[lo[tie]]) / (hi[tie] - lo[tie])
    return out


def minmax(X):
    """Each feature scaled to [0, 1]; constant features -> 0."""
    X = dense(X, method="normalize: minmax")
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    return (X - lo) / np.where(span > 0, span, 1.0)


def zscore(X):
    """Each feature centred and scaled to unit population sd (ddof 0); constant features -> 0."""
    X = dense(X, method="normalize: zscore")
    centred = X - X.mean(axis=0)
    sd = np.sqrt((centred**2).mean(axis=0))
    sd = np.where(sd > 0, sd, 1.0)
    out = centred / sd
    out[:, np.ptp(X, axis=0) == 0] = 0.0
    return out


def feature_variances(X) -> np.ndarray:
    """Population variance (ddof 0) of every feature; CSR input is not densified."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        mean = np.asarray(X.mean(axis=0)).ravel()
        sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
        return np.maximum(sq - mean**2, 0.0)
    return np.var(X, axis=0)


def top_variable(X, n: int) -> np.ndarray:
    """Indices (ascending) of the ``n`` most variable features; ties by lower index."""
    var = feature_variances(X)
    order = np.lexsort((np.arange(var.size), -var))
    return np.sort(order[: min(n, var.size)])


# --------------------------------------------------------------------------- options + driver


def _number(entry, key, where, *, positive=False):
    v = entry[key]
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ConfigError(f"{where}: {key} must be a number, got {v!r}")
    if positive and v <= 0:
        raise ConfigError(f"{where}: {key} must be > 0, got {v!r}")
    return float(v)


def preprocess_options(entry: dict, *, where: str) -> dict:
    """The preprocessing options of a dataset entry, defaults filled in, checked."""
    opts = {k: entry.get(k, d) for k, d in DEFAULTS.items()}
    if opts["missing"] not in MISSING:
        raise ConfigError(f"{where}: missing must be one of {', '.join(MISSING)}, got {opts['missing']!r}")
    norm = "none" if opts["normalize"] in (None, False) else opts["normalize"]
    if norm not in NORMALIZATIONS:
        raise ConfigError(
            f"{where}: normalize must be one of {', '.join(NORMALIZATIONS)}, got {opts['normalize']!r}"
        )
    opts["normalize"] = norm
    for method, keys in NORMALIZE_KEYS.items():
        stray = [k for k in keys if k in entry and norm != method]
        if stray:
            raise ConfigError(f"{where}: key {stray[0]!r} applies only to normalize: {method} (got {norm})")
    for key in ("floor", "ceiling", "min_fold", "min_range", "log_base", "log_offset"):
        opts[key] = _number(opts, key, where)
    if not isinstance(opts["strict_filter"], bool):
        raise ConfigError(f"{where}: strict_filter must be true or false, got {opts['strict_filter']!r}")
    tv = opts["top_variable"]
    if tv is not None and (isinstance(tv, bool) or not isinstance(tv, numbers.Integral) or tv < 1):
        raise ConfigError(f"{where}: top_variable must be a positive integer, got {tv!r}")
    # keep only what applies, so the record says what was done
    used = {"missing": opts["missing"], "normalize": norm}
    for key in NORMALIZE_KEYS.get(norm, ()):
        used[key] = opts[key]
    if tv is not None:
        used["top_variable"] = int(tv)
    return used


def preprocess(adata: AnnData, opts: dict, *, where: str) -> AnnData:
    """Apply checked options (see :func:`preprocess_options`) in the documented order."""
    obs_names, var_names = adata.obs_names, adata.var_names
    X = adata.X
    check_finite(X, obs_names, var_names, missing=opts["missing"], where=where)
    if opts["missing"] == "median":
        X = impute_median(X, var_names, where=where)
    keep = None
    norm = opts["normalize"]
    if norm == "microarray":
        args = {k: opts[k] for k in NORMALIZE_KEYS["microarray"]}
        X, keep = microarray(X, **args, where=f"{where}: normalize: microarray")
    elif norm == "log2":
        X = log2(X, offset=opts["log_offset"], where=f"{where}: normalize: log2")
    elif norm == "quantile":
        X = quantile_normalize(X)
    elif norm == "minmax":
        X = minmax(X)
    elif norm == "zscore":
        X = zscore(X)
    out = adata if keep is None else adata[:, keep]
    out = AnnData(X=X, obs=out.obs.copy(), var=out.var.copy())
    if opts.get("top_variable"):
        out = out[:, top_variable(out.X, opts["top_variable"])].copy()
    const = constant_features(out.X)
    if const.any():
        warnings.warn(
            f"{where}: {int(const.sum())} constant feature(s) kept (e.g. {out.var_names[np.argmax(const)]!r}); "
            "ssfs methods rank them last",
            UserWarning,
            stacklevel=2,
        )
    return out
