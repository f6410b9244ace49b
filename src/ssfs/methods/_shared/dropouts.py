"""Dense tables of normalised single-cell expression with dropouts, read on a log scale whose offset is the median
gene's level.

Full-length single-cell studies (Smart-seq2) publish log2(TPM + 1): reads over gene length, scaled to 10^6 a cell.
Those are not counts (the count model's Poisson part would be off by every gene's length), and where the reads were
counts their dropouts already decide the path (:data:`~ssfs.methods._shared.deep_counts.DEEP_DROPOUTS`): a
dropout of a gene expressed at 100 TPM is 6.7 log2 units below its cells' values, the loudest variance of every
such gene, and the kNN graphs of the table follow which genes dropped out in which cell. :func:`read_dropouts`
undoes the log (its base is the one whose rows then sum alike, :func:`normalised_base`, or summed alike before genes
were filtered, :func:`filtered_base`) and takes the log again with the median expressed gene's mean as the offset,
ln(x + m): the offset of log-CPM (Law et al. 2014) and of log2(TPM + 1) is one unit, below which a value is noise;
with dropouts, values below the median gene's level are as uncertain, and the offset says so. Measured:
docs/labels_that_count.md, "Full-length single cells".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .counts import TAIL_ROWS, count_like
from .deep_counts import DEEP_DROPOUTS

#: what a normalised table's values may be: not logged (1), or log_b(1 + value) of these bases b
BASES = (1.0, 2.0, math.e, 10.0)
#: most relative spread of the rows' sums (max - min over their median) for the rows to sum alike: log2(TPM + 1)
#: published to two decimals still sums alike to 0.09 %, to one decimal to 0.7 % (planted full-length cells)
EQUAL_SUMS = 0.01
#: the largest total a sample's normalised values hold: per million (TPM, CPM); 10^4 (CP10k) and the median library
#: size lie below it. A logged table whose genes were filtered after the normalisation sums to less (session 48)
PER_MILLION = 1e6
#: most coefficient of variation of the undone rows' sums of a table whose genes were filtered after the normalisation
#: (planted full-length cells as log2(TPM + 1): 0.03-0.08 with the 2 % most expressed genes or all but 2,000 of 6,000
#: dropped; min-max-scaled images 0.33-0.39)
FILTERED_SUMS = 0.25
#: most ratio of the smallest non-zero value to the median one where zeros continue the values (a gene's first read:
#: 0.008-0.125 in planted full-length cells) rather than stand for values missing (proteomics 0.75, genotypes 1)
CONTINUED_ZEROS = 0.25


def _rows(X: np.ndarray) -> np.ndarray:
    """At most :data:`~ssfs.methods._shared.counts.TAIL_ROWS` evenly spaced rows of X, as float64."""
    picked = np.unique(np.linspace(0, X.shape[0] - 1, min(X.shape[0], TAIL_ROWS)).astype(np.intp))
    return np.asarray(X[picked], dtype=np.float64)


def undone(X: np.ndarray, base: float) -> np.ndarray:
    """The values X holds as log_base(1 + value) (``base`` 1: X itself)."""
    D = np.asarray(X, dtype=np.float64)
    return D if base == 1.0 else np.expm1(D * math.log(base))


def normalised_base(X: np.ndarray) -> float | None:
    """The first of :data:`BASES` whose undone values' rows (:func:`undone`, at most
    :data:`~ssfs.methods._shared.counts.TAIL_ROWS` of them) sum alike within :data:`EQUAL_SUMS`: X holds values
    normalised per sample (TPM, CPM) as they are or logged; None where no base makes the rows sum alike (genes
    filtered after the normalisation, or values not normalised)."""
    rows = _rows(X)
    for base in BASES:
        if base > 1.0 and rows.max() * math.log(base) > 700.0:  # exp would overflow: not log values of this base
            continue
        sums = undone(rows, base).sum(axis=1)
        middle = float(np.median(sums))
        if middle > 0 and (sums.max() - sums.min()) <= EQUAL_SUMS * middle:
            return base
    return None


def filtered_base(X: np.ndarray) -> float | None:
    """The base of a logged table normalised per sample whose genes were filtered afterwards (its rows no longer sum
    alike, :func:`normalised_base`): the largest of 10, e and 2 whose undone rows' median sum is at most
    :data:`PER_MILLION`, where their sums vary by at most :data:`FILTERED_SUMS` of their mean and the zeros continue
    the values (:data:`CONTINUED_ZEROS`); None otherwise, and for tables not logged.

    The largest base: a table undone in a base below its own is read with its high values compressed (log10 tables
    undone in base e lost 0.6 of the type genes), in a base above it with them spread (ln tables undone in base 10
    kept them: docs/labels_that_count.md, session 48)."""
    rows = _rows(X)
    values = rows[rows > 0]
    if values.size == 0 or values.min() > CONTINUED_ZEROS * np.median(values):
        return None
    for base in BASES[:0:-1]:
        if rows.max() * math.log(base) > 700.0:
            continue
        sums = undone(rows, base).sum(axis=1)
        if np.median(sums) <= PER_MILLION * (1.0 + EQUAL_SUMS):
            return base if sums.std() <= FILTERED_SUMS * sums.mean() else None
    return None


def dropout_share(X: np.ndarray) -> float:
    """Share of samples without a value (0) in the median gene of the expressed genes' upper half (by mean), read on
    at most :data:`~ssfs.methods._shared.counts.TAIL_ROWS` evenly spaced samples: dropouts reach every gene of
    full-length single cells (0.1-0.4), bulk tables hold none there."""
    rows = _rows(X)
    mean = rows.mean(axis=0)
    expressed = mean > 0
    if not expressed.any():
        return 0.0
    upper = expressed & (mean >= np.median(mean[expressed]))
    return float(np.median(np.mean(rows[:, upper] == 0, axis=0)))


@dataclass(frozen=True)
class Dropouts:
    """How :func:`read_dropouts` read a table: the base it was logged in (1: not logged) and the offset, the
    median expressed gene's mean of the undone values."""

    base: float
    offset: float

    def values(self, X: np.ndarray) -> np.ndarray:
        """ln(x + offset) of the undone values x (:func:`undone`)."""
        return self.logged(undone(X, self.base))

    def logged(self, undone_values: np.ndarray) -> np.ndarray:
        """ln(x + offset) of values already undone (a new array)."""
        return np.log(undone_values + self.offset)


def dropout_base(X) -> float | None:
    """The base of a table :func:`read_dropouts` reads (:func:`normalised_base`, else :func:`filtered_base`): dense
    non-negative X with zeros that is not :func:`~ssfs.methods._shared.counts.count_like` (counts take the count
    path), whose rows sum alike undone (or did before its genes were filtered) and whose upper genes drop out
    (:func:`dropout_share` above :data:`~ssfs.methods._shared.deep_counts.DEEP_DROPOUTS`); None for any other X."""
    if sparse.issparse(X) or np.asarray(X).dtype.kind != "f" or np.asarray(X).ndim != 2 or X.shape[0] < 2:
        return None
    D = np.asarray(X)
    if D.min() != 0 or not np.isfinite(D).all() or count_like(D):  # the minimum first: one pass, no temporary
        return None
    base = normalised_base(D) or filtered_base(D)
    return None if base is None or dropout_share(D) <= DEEP_DROPOUTS else base


def read_dropouts(X) -> tuple[object, Dropouts | None]:
    """(X as propagate reads it, its :class:`Dropouts` or None): a table with dropouts (:func:`dropout_base`) as
    :meth:`Dropouts.values`; else X itself (None)."""
    base = dropout_base(X)
    if base is None:
        return X, None
    values = undone(np.asarray(X), base)  # once: the offset's means and the reading
    mean = values.mean(axis=0)
    reading = Dropouts(base, float(np.median(mean[mean > 0])))
    return reading.logged(values), reading
