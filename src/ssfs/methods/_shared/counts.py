"""Raw counts read as an analysis reads them: library-size normalised and log1p-transformed.

A single-cell matrix straight from Cell Ranger or an h5ad whose ``X`` holds the counts differs
from cell to cell mostly by its depth: a kNN graph of raw counts joins cells of like depth and
the highly expressed genes lead every variance. Scanpy's tutorials normalise every cell to the
same total and take log1p before the PCA (``sc.pp.normalize_total`` + ``sc.pp.log1p``);
:func:`read_counts` does the same for the methods that compare cells (``propagate``'s
``counts`` parameter), without importing scanpy (:func:`normalize_log1p`).

Which data are raw counts (:func:`raw_counts`): non-negative integers, some of them 2 or more
(binary presence data stay as they are), in a matrix that is sparse, at least half zeros, or
long-tailed (:func:`count_like`): deeply sequenced counts have few zeros, but their largest
values are many times their typical ones (:func:`long_tailed_counts`), where the integers of
an instrument with a fixed range (8-bit images, digitised spectra, scikit-learn's digits) stay
within a few times theirs and are read as they are. Dense log1p-normalised counts are count-like
too, by the lattice every cell's values keep (:func:`log_normalised_counts`). Measured (planted counts, 3 labels per
class): ``propagate`` on raw counts 0.82 of the planted markers, on log1p-normalised counts
1.00; on a Splatter-like model outside the project 0.01 against 0.61; a dense table of
Splatter-like counts with 34 % zeros was read as expression values before session 25 (0.10
of the markers against 0.85 for the same counts as a sparse matrix).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ...errors import MethodError

#: how raw counts are read (the ``counts`` parameter): "auto" normalises what :func:`raw_counts`
#: recognises, "log1p" any non-negative data, "as_is" nothing
COUNTS = ("auto", "log1p", "as_is")
#: counts per sample after normalisation (scanpy's tutorials' ``target_sum``)
TARGET_SUM = 1e4
#: share of zero values from which dense X counts as counts
ZERO_SHARE = 0.5
#: dense non-negative integers whose largest value is at least this many times the 90th percentile
#: of their non-zero values are counts whatever their zeros (:func:`long_tailed_counts`). Measured:
#: count models 22-100 (Splatter-like at 1,000-100,000 counts per cell, negative binomial with
#: mean 0.3-30), fixed-range instruments 1.0-2.9 (images of ../shared/data 1.3-1.4, arcene's
#: spectra 2.9, madelon 1.9, scikit-learn's digits 1.0)
COUNT_TAIL = 5.0
#: rows (evenly spaced) :func:`long_tailed_counts` looks at
TAIL_ROWS = 1000


#: share of a dense matrix's non-zero values (on the rows :func:`log_normalised_counts` looks at) that
#: must sit on their row's lattice of counts
LATTICE_SHARE = 0.9
#: relative distance to the nearest whole multiple within which a value is on its row's lattice (float32
#: storage of log1p(10,000) moves the ratio by ~1e-6 of it; 8-bit images in [0, 1] are ~2e-3 off)
LATTICE_TOLERANCE = 1e-5
#: the largest multiple of a row's smallest value :func:`log_normalised_counts` reads as evidence of a lattice
#: (within the tolerance a value takes 2 x ``LATTICE_TOLERANCE`` x 5,000 = a tenth of the gaps between multiples)
LATTICE_RATIO = 5000.0
#: rows :func:`log_normalised_counts` looks at first (the others only when these are on the lattice)
LATTICE_FIRST = 16
#: the largest log value :func:`log_normalised_counts` reads (log2(1 + 10^9): no count scale reaches it)
LOG_MAX = 30.0


def count_like(X) -> bool:
    """Sparse, at least :data:`ZERO_SHARE` of the values 0, :func:`long_tailed_counts` or
    :func:`log_normalised_counts`: counts (or log counts), whose variance follows the expression level
    more than the structure."""
    if sparse.issparse(X):
        return True
    if not X.size:
        return False
    return (np.count_nonzero(X) <= (1.0 - ZERO_SHARE) * X.size or long_tailed_counts(X)
            or log_normalised_counts(X))


def _sample_rows(X) -> np.ndarray:
    """The (at most :data:`TAIL_ROWS`) evenly spaced rows of dense X the checks look at."""
    return np.unique(np.linspace(0, X.shape[0] - 1, min(X.shape[0], TAIL_ROWS)).astype(np.intp))


def log_normalised_counts(X) -> bool:
    """Dense X that holds log1p (or log2(1 + x)) of counts scaled per sample, as scanpy's
    ``normalize_total`` + ``log1p``, Seurat's ``LogNormalize`` or CPM leave them, genes subset or not:
    on every row (at most :data:`TAIL_ROWS` evenly spaced ones) the values undone (``expm1``) are whole
    multiples of the row's smallest (its count of 1), for at least :data:`LATTICE_SHARE` of the
    non-zero values within :data:`LATTICE_TOLERANCE`; a log compresses the long tail
    :func:`long_tailed_counts` reads, but not this lattice. Negative values: not counts."""
    X = np.asarray(X)
    if X.dtype.kind != "f" or X.ndim != 2 or not X.size:
        return False
    picked = _sample_rows(X)
    undoes = LOG_UNDO
    for rows in (picked[::max(1, picked.size // LATTICE_FIRST)], picked):  # most data fail on a few rows
        rows = X[rows].astype(np.float64)
        if not (np.isfinite(rows).all() and rows.min() >= 0 and rows.max() <= LOG_MAX):
            return False
        undoes = [undo for undo in undoes if _on_lattice(rows, undo)]
        if not undoes:
            return False
    return not np.all(np.floor(rows) == rows)


#: the logs :func:`log_normalised_counts` undoes: log1p, log2(1 + x)
LOG_UNDO = (np.expm1, lambda v: np.exp2(v) - 1.0)


def _on_lattice(rows: np.ndarray, undo) -> bool:
    """Whether at least :data:`LATTICE_SHARE` of the non-zero values of ``rows``, undone by ``undo``,
    are whole multiples of their row's smallest (:func:`log_normalised_counts`), a tenth of them at
    least twice it (rows whose values are all alike are no counts). Only multiples up to
    :data:`LATTICE_RATIO` tell: above it the tolerance (``LATTICE_TOLERANCE`` x the ratio) takes in a tenth of
    every value or more, and a row whose smallest value is tiny (methylation beta values near 0: ratios of 10^5
    and more) would sit on a lattice of any values; at least half of the values must be of those."""
    on, total, values_seen, above = 0, 0, 0, 0
    for row in rows:
        values = undo(row[row > 0])
        if values.size < 2:
            continue
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = values / values.min()
        telling = ratio[ratio <= LATTICE_RATIO]
        on += int(np.count_nonzero(np.abs(telling - np.rint(telling)) <= LATTICE_TOLERANCE * telling))
        above += int(np.count_nonzero(telling > 1.5))
        total += telling.size
        values_seen += values.size
    return (bool(total) and total >= 0.5 * values_seen and on >= LATTICE_SHARE * total
            and above >= 0.1 * total)


def long_tailed_counts(X) -> bool:
    """Dense X whose values (on at most :data:`TAIL_ROWS` evenly spaced rows) are non-negative
    integers, the largest at least 2 and :data:`COUNT_TAIL` times the 90th percentile of the
    non-zero ones: deeply sequenced counts, whose genes' means span orders of magnitude, unlike the
    integers of an instrument with a fixed range."""
    X = np.asarray(X)
    if X.dtype.kind not in "iuf" or X.ndim != 2 or not X.size:
        return False
    picked = _sample_rows(X)
    few = X[picked[::max(1, picked.size // LATTICE_FIRST)]]
    if few.min() < 0 or not np.all(np.floor(few) == few):  # most data fail on a few rows
        return False
    values = X[picked].ravel()
    values = values[values != 0]
    if not values.size or values.min() < 0 or not np.all(np.floor(values) == values):
        return False
    largest = values.max()
    return bool(largest >= 2 and largest >= COUNT_TAIL * np.quantile(values, 0.9))


def raw_counts(X) -> bool:
    """:func:`count_like` X whose values are non-negative integers with at least one of 2 or more
    (all of them: :func:`long_tailed_counts` looks at some rows)."""
    if not count_like(X):
        return False
    values = sparse.csr_matrix(X).data if sparse.issparse(X) else np.asarray(X)
    if not values.size or values.dtype.kind not in "iuf":
        return False
    return bool(values.min() >= 0 and values.max() >= 2 and np.all(np.floor(values) == values))


def normalize_log1p(X, target_sum: float = TARGET_SUM) -> sparse.csr_matrix:
    """Library-size normalisation to ``target_sum`` counts per sample, then log1p, as scanpy's
    ``normalize_total`` + ``log1p`` (:func:`ssfs.singlecell.log_normalize`) but without importing
    scanpy; CSR in, CSR out (samples without counts stay zero)."""
    X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
    tot = np.asarray(X.sum(axis=1)).ravel()
    scale = np.divide(target_sum, tot, out=np.zeros_like(tot), where=tot > 0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    np.log1p(X.data, out=X.data)
    return X


def read_counts(X, counts: str = "auto"):
    """X as the methods read it: log1p of the counts normalised to :data:`TARGET_SUM` per sample
    (CSR) when ``counts`` is "log1p", or "auto" and X holds :func:`raw_counts`; other dense
    :func:`count_like` X without negative values as CSR with "auto" (one table read alike whether
    it came dense, from a CSV, or sparse, from an h5ad: the same bits); else X itself."""
    if counts not in COUNTS:
        raise MethodError(f"counts must be one of {COUNTS}, got {counts!r}")
    if counts == "as_is":
        return X
    if counts == "auto" and not raw_counts(X):
        dense_counts = not sparse.issparse(X) and count_like(X) and np.asarray(X).min() >= 0
        return sparse.csr_matrix(X) if dense_counts else X
    values = X.data if sparse.issparse(X) else np.asarray(X)
    if values.size and values.min() < 0:
        raise MethodError("counts='log1p' needs non-negative data (counts); these hold negative values")
    return normalize_log1p(X, TARGET_SUM)
