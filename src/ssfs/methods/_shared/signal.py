"""How many principal components carry structure: parallel analysis on a column-permuted copy.

A kNN graph built on too many components joins samples by noise: on planted counts
(2,000 cells, 5 types) the share of a cell's neighbours of its own type falls from 0.85 on
the 5 components above noise to 0.57 on 50, and every graph score with it
(docs/labels_that_count.md, "graph space"). Horn's parallel analysis (Horn 1965) keeps the
leading components whose variance exceeds what the data give once every column is moved to
other rows independently (same marginals, no co-variation); we compare with the largest
null component, the conservative reading.

The permutation is a function of the data's contents, not of their order: rows are relabelled
by a canonical order (sorted by row statistics that do not depend on the feature order) and
each column is cyclically shifted by an amount hashed from its own values in that order. The
dimension chosen is therefore the same whatever the order of the samples and of the features.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .representation import signal_pca, top_variance

#: fewest components kept, however weak the structure (a graph needs some space)
MIN_DIMS = 2
#: permuted copies whose largest component variances make the null of :func:`clearly_rising`: the first
#: number, and the second where the first leaves the answer within reach of their noise
NULL_PERMUTATIONS = (8, 16, 32)
#: how many of their standard deviations above their mean a component clearly rises (:func:`clearly_rising`)
RISE_Z = 3.0
#: a leading component this many times :func:`rising_dims`' null rises clearly without more permutations
#: (:func:`clearly_above`)
CLEARLY = 2.0
#: most samples :func:`clearly_rising` draws its permutations on (chosen by content beyond that)
CLEAR_ROWS = 500


def standardized(X):
    """Dense X with every column centred and scaled to unit variance (constant columns:
    centred only); sparse X unchanged (log-normalised counts are not scaled, as in scanpy,
    and scaling would densify)."""
    if sparse.issparse(X):
        return X
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def unit_factor(X) -> float:
    """The power of two that puts X's largest |value| in [0.5, 1) (1 for an empty, all-zero or
    non-finite X); read from the stored values, no copy of X."""
    values = X.data if sparse.issparse(X) else np.asarray(X)
    if not values.size:
        return 1.0
    top = float(max(values.max(), -values.min()))
    if not np.isfinite(top) or top <= 0.0:
        return 1.0
    return float(np.ldexp(1.0, -np.frexp(top)[1]))


def unit_free(X):
    """X times :func:`unit_factor` (X): exact, so X and c X (c a power of two) give the same
    bits, and the hashes below do not depend on the unit of X."""
    factor = unit_factor(X)
    return X * factor if sparse.issparse(X) else np.asarray(X, dtype=np.float64) * factor


#: stored values per block of rows in :func:`_row_moments` (memory bounded whatever the size)
MOMENT_BLOCK = 1 << 20


def _row_moments(X, factor: float = 1.0) -> np.ndarray:
    """n x 3 row sums of x, x x, x x x for x the values of ``factor`` X, each summed over the
    row's values in sorted order (so they are bit for bit the same whatever the feature order),
    by blocks of rows (no copy of X)."""
    n = X.shape[0]
    out = np.zeros((n, 3))
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        per_row = max(1, MOMENT_BLOCK * n // max(X.nnz, 1))
    else:
        X = np.asarray(X)
        per_row = max(1, MOMENT_BLOCK // max(X.shape[1], 1))
    for a in range(0, n, per_row):
        out[a:a + per_row] = _block_moments(X[a:a + per_row], factor)
    return out


def _block_moments(X, factor: float) -> np.ndarray:
    """:func:`_row_moments` of one block of rows."""
    out = np.zeros((X.shape[0], 3))
    if sparse.issparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        data = X.data * factor
        data = data[np.lexsort((data, rows))]
        nonempty = np.diff(X.indptr) > 0
        if data.size:
            starts = X.indptr[:-1][nonempty]
            out[nonempty, 0] = np.add.reduceat(data, starts)
            square = data * data
            out[nonempty, 1] = np.add.reduceat(square, starts)
            out[nonempty, 2] = np.add.reduceat(square * data, starts)
        return out
    ST = np.ascontiguousarray(np.sort(np.asarray(X, dtype=np.float64) * factor, axis=1).T)
    out[:, 0] = sequential_column_sums(ST)  # each row's sorted values added one after the other
    power = ST * ST
    out[:, 1] = sequential_column_sums(power)
    power *= ST
    out[:, 2] = sequential_column_sums(power)
    return out


def sequential_column_sums(M: np.ndarray) -> np.ndarray:
    """Every column's sum of the C-ordered 2-d ``M``, its rows added one after the other (bit for bit
    whatever the memory alignment; numpy's sums along memory are pairwise): numpy's sum over the rows
    for 2 columns or more (it adds row after row), the last row of the running sums for one."""
    if M.shape[0] == 0:
        return np.zeros(M.shape[1])
    return M.sum(axis=0) if M.shape[1] >= 2 else np.cumsum(M, axis=0)[-1]


def _mix(values: np.ndarray) -> np.ndarray:
    """A 64-bit hash of values rounded to float32 (so sums that differ in their last bits by the
    order of summation, e.g. sparse against dense, hash alike), by multiplicative mixing."""
    bits = np.ascontiguousarray(values, dtype=np.float32).astype(np.float64).view(np.uint64)
    return (bits * np.uint64(0x9E3779B97F4A7C15)) ^ (bits >> np.uint64(29))


def canonical_rows(X) -> np.ndarray:
    """Position of every row in a pseudo-random order given by its contents: rows sorted by a
    hash of their sums of x, x^2 and x^3 (so the order does not depend on the sample or the
    feature order, nor on X's unit, :func:`unit_free`, and neighbouring positions share
    nothing); exact duplicates keep their index order."""
    m = _row_moments(X, unit_factor(X))
    h = _mix(m[:, 0]) ^ (_mix(m[:, 1]) >> np.uint64(7)) ^ (_mix(m[:, 2]) >> np.uint64(13))
    order = np.lexsort((np.arange(X.shape[0]), h))
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return pos


def content_rows(pos: np.ndarray, most: int) -> np.ndarray | None:
    """The first ``most`` samples in the content order ``pos`` (:func:`canonical_rows`), sorted: a pseudo-random
    subsample that does not depend on the sample order; None when there are at most ``most`` (all of them)."""
    if pos.size <= most:
        return None
    return np.sort(np.argsort(pos, kind="stable")[:most])


def _column_shifts(X, pos: np.ndarray, draw: int = 0) -> np.ndarray:
    """A shift in [0, n) per column, hashed from the column's values weighted by a fixed
    sequence (one per ``draw``) and summed in canonical row order (the same bits whatever the
    sample or feature order; a column's copy gets its shift)."""
    n = X.shape[0]
    order = np.argsort(pos)
    w = np.random.default_rng(20261127 + int(draw)).standard_normal(n)
    if sparse.issparse(X):
        c = np.asarray(sparse.csr_matrix(unit_free(X))[order].T @ w).ravel()
    else:
        ordered = np.asarray(X, dtype=np.float64)[order]
        ordered *= unit_factor(X)  # unit_free's exact scaling, in place
        ordered *= w[:, None]
        c = sequential_column_sums(ordered)  # (350 x 765: 4.6 -> 0.3 ms against a running sum)
    return (_mix(c) % np.uint64(max(n, 1))).astype(np.int64)


def permuted_columns(X, draw: int = 0, pos: np.ndarray | None = None):
    """A copy of X whose columns are each moved to other rows (row i of column j goes to row
    (pos_i + s_j) mod n: :func:`canonical_rows`, :func:`_column_shifts` of ``draw``, each draw
    its own shifts): every column keeps its values, the columns no longer co-vary. Sparse stays
    sparse (O(nnz)). ``pos``: X's canonical rows when already known."""
    n, p = X.shape
    pos = canonical_rows(X) if pos is None else pos
    s = _column_shifts(X, pos, draw)
    if sparse.issparse(X):
        C = sparse.coo_matrix(X)
        return sparse.csr_matrix((C.data, ((pos[C.row] + s[C.col]) % n, C.col)), shape=(n, p))
    X = np.asarray(X)
    out = np.empty_like(X, dtype=np.float64)
    out[(pos[:, None] + s[None, :]) % n, np.arange(p)[None, :]] = X
    return out


def signal_dims(X, Z: np.ndarray) -> tuple[int, float]:
    """(d, null variance): the number of leading columns of the PCA scores ``Z`` of X whose
    variance exceeds the largest component variance of :func:`permuted_columns` (X), at least
    :data:`MIN_DIMS` (and at most Z's columns)."""
    found, top = rising_dims(X, Z)
    return int(min(max(found, MIN_DIMS), Z.shape[1])), top


def rising_dims(X, Z: np.ndarray) -> tuple[int, float]:
    """(found, null variance): how many leading columns of the PCA scores ``Z`` of X have a variance
    above the largest component variance of :func:`permuted_columns` (X) (Horn's parallel analysis,
    one permutation; 0 when none has)."""
    null = signal_pca(permuted_columns(X), 1)
    top = float(null[:, 0].var()) if null.size else 0.0
    above = Z.var(axis=0) > top
    return (int(np.argmin(above)) if not above.all() else above.size), top


def clearly_above(Z: np.ndarray, null: float) -> bool:
    """Whether the leading column of the PCA scores ``Z`` has over :data:`CLEARLY` times the variance ``null`` of
    :func:`rising_dims`' single permutation: it rises clearly without more permutations (every real array of
    ``../shared/data``: 6-19 x; 47 of the 48 ``microarray_*`` draws)."""
    return Z.shape[1] > 0 and float(Z[:, 0].var()) > CLEARLY * null


def clearly_rising(X) -> bool:
    """Whether the leading component of dense X rises clearly above its columns' permutations: its variance
    (:func:`~ssfs.methods._shared.representation.top_variance`, exact) exceeds the mean of the largest component
    variances of permuted copies (:func:`permuted_columns`, one draw each) by :data:`RISE_Z` of their standard
    deviations: 8 copies, 32 where the 8 leave the data's largest within -2 to +4 of those standard deviations of
    the threshold (8 estimate the spread to about a quarter: on 8 classes of 5 equal-noise markers one draw sat
    4.9 of them above the 8's mean, 2.1 above the 32's). :func:`rising_dims`' test is a coin flip where X holds no
    component above the noise (both numbers are then the largest eigenvalue of a noise matrix), and its
    randomized null falls short of the exact one where the spectrum is flat: on those 8 classes (a class's
    covariance 1.2 against the noise's 14) it finds 3-6 rising components, where the data's largest sits -1.2 to
    2.1 of the 32 permutations' standard deviations above their mean; on 40-sample arrays of 20 markers 3.6-4.8
    (docs/labels_that_count.md, "Nothing rises"). Call it where :func:`clearly_above` has not decided. Beyond
    :data:`CLEAR_ROWS` samples the test runs on that many, the first in content order (:func:`canonical_rows`):
    5,000 x 2,000 weak classes 20 s -> 2 s."""
    if min(X.shape) < 3:
        return False
    X = X.toarray() if sparse.issparse(X) else np.asarray(X, dtype=np.float64)
    pos = canonical_rows(X)
    keep = content_rows(pos, CLEAR_ROWS)  # the cost of a draw stays bounded
    if keep is not None:
        X = X[keep]
        pos = np.argsort(np.argsort(pos[keep], kind="stable"), kind="stable")
    top = top_variance(X)
    tops = np.zeros(0)
    for draws in NULL_PERMUTATIONS:
        tops = np.r_[tops, [top_variance(permuted_columns(X, d, pos)) for d in range(tops.size, draws)]]
        z = (top - tops.mean()) / max(float(tops.std(ddof=1)), 1e-12 * float(tops.mean()))
        if not RISE_Z - 2.0 < z < RISE_Z + 4.0:  # far from the threshold: more draws would not change it
            break
    return bool(z > RISE_Z)


def _varying_moments(Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the second moments, the columns) of the varying columns of the dense, column-centred ``Xc``."""
    m2 = np.einsum("ij,ij->j", Xc, Xc) / max(Xc.shape[0], 1)
    varying = m2 > 0
    return m2[varying], Xc[:, varying]


def tail_weight(Xc: np.ndarray) -> float:
    """The median over the varying columns of the dense, column-centred ``Xc`` of their excess kurtosis
    (m4 / m2^2 - 3: 0 for Gaussian noise, -1.2 for uniform values, 6 or more for Student's t with 3 degrees of
    freedom); 0 without a varying column."""
    m2, V = _varying_moments(Xc)
    if not m2.size:
        return 0.0
    V = V ** 2
    return float(np.median(np.einsum("ij,ij->j", V, V) / max(Xc.shape[0], 1) / m2 ** 2 - 3.0))


def tail_skew(Xc: np.ndarray) -> float:
    """The median over the varying columns of the dense, column-centred ``Xc`` of their skewness (m3 / m2^1.5: 0 for
    symmetric noise, about 2 for the Pearson residuals of sparse counts, whose long tail is the cells holding a gene's
    counts); 0 without a varying column."""
    m2, V = _varying_moments(Xc)
    if not m2.size:
        return 0.0
    return float(np.median(np.einsum("ij,ij,ij->j", V, V, V) / max(Xc.shape[0], 1) / m2 ** 1.5))


def winsorized(X: np.ndarray, sds: float) -> np.ndarray:
    """Dense X with every column's values clipped to its median +- ``sds`` robust standard deviations
    (interquartile range / 1.349; a column of zero range unchanged)."""
    q1, med, q3 = np.quantile(X, [0.25, 0.5, 0.75], axis=0)
    reach = sds * (q3 - q1) / 1.349
    return np.where(reach > 0, np.clip(X, med - reach, med + reach), X)


def equal_samples(X) -> np.ndarray:
    """Dense X with its columns centred and every sample's profile scaled to unit mean square (a sample
    of all column means stays 0): Euclidean distances between samples are then those of their profiles'
    correlations, and a sample whose values vary more than the others' (a noisy array) weighs as much
    as any in a PCA. Sparse X unchanged."""
    if sparse.issparse(X):
        return X
    Xc = np.asarray(X, dtype=np.float64) - np.mean(X, axis=0)
    rms = row_rms(Xc)
    return Xc / np.where(rms > 0, rms, 1.0)[:, None]


def row_rms(X: np.ndarray) -> np.ndarray:
    """Every row's root mean square (dense X)."""
    return np.sqrt(np.einsum("ij,ij->i", X, X) / max(X.shape[1], 1))


def loudness(X) -> np.ndarray:
    """Every sample's loudness: the root mean square of its :func:`standardized` profile over the
    median sample's (1 = as loud; dense X)."""
    rms = row_rms(standardized(X))
    mid = float(np.median(rms))
    return rms / mid if mid > 0 else np.ones(rms.size)


def signal_embedding(X, n_pcs: int = 50, *, standardize: bool = True, equal: bool = False) -> tuple[np.ndarray, int]:
    """(Z, d): PCA scores of :func:`standardized` X (of X in its own units with
    ``standardize=False``; with ``equal`` every sample's profile then scaled alike, :func:`equal_samples`;
    at most ``n_pcs``; exact where that is cheaper,
    :func:`~ssfs.methods._shared.representation.signal_pca`) cut to their :func:`signal_dims`."""
    return rising_embedding(X, n_pcs, standardize=standardize, equal=equal)[:2]


def scaled(X, standardize: bool, equal: bool):
    """X as :func:`rising_embedding` reads it: :func:`standardized` (or in its own units), every sample's
    profile then scaled alike with ``equal`` (:func:`equal_samples`)."""
    Xs = standardized(X) if standardize else X
    return equal_samples(Xs) if equal else Xs


def rising_embedding(X, n_pcs: int = 50, *, standardize: bool = True, equal: bool = False) -> tuple:
    """(Z, d, found, null): :func:`signal_embedding`, how many of its components rise above the null
    (:func:`rising_dims`; d is at least :data:`MIN_DIMS` whatever that number) and the null's variance."""
    Xs = scaled(X, standardize, equal)
    Z = signal_pca(Xs, n_pcs)
    found, null = rising_dims(Xs, Z)
    d = int(min(max(found, MIN_DIMS), Z.shape[1]))
    return Z[:, :d], d, found, null
