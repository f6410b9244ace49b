"""Pearson residuals of counts: every gene in units of its noise, for the graphs of ``propagate``.

Under a negative binomial with depth-proportional means, count x_cg of cell c and gene g has
mean mu_cg = t_c m_g (t_c the cell's total, m_g the gene's share of all counts) and variance
mu_cg + mu_cg^2 / theta. Its Pearson residual z_cg = (x_cg - mu_cg) / sqrt(mu_cg + mu_cg^2 / theta),
clipped to +-sqrt(n), has variance 1 for a gene without structure whatever its expression level
(Lause, Berens & Kobak 2021, eq. 2-3, the residuals of scanpy's
``experimental.pp.normalize_pearson_residuals``; Hafemeister & Satija 2019 for the model). In
log1p values, by contrast, a highly expressed gene's biological noise (constant coefficient of
variation) is a variance of its own, and on a Splatter-like model such genes lead the principal
components and the kNN graph of the log values joins cells by their noise
(docs/labels_that_count.md, "Residuals").

One overdispersion for all genes: theta is the median over the expressed genes of each gene's
moment estimate with depth-adjusted means (the estimator of Hotspot's ``danb`` model, DeTomaso &
Yosef 2021). A gene-wise theta would absorb a marker's cell-type variance into its own noise (its
residuals would have variance 1, like noise); one theta for all leaves a gene whose variance
exceeds the typical gene's with residual variance above 1: its structure, what the components follow.
Lause et al. fix theta = 100; the estimate follows data whose noise is far larger (UMI data:
theta about 2-10; Splatter's biological CV 0.55: theta about 3).

Counts are read back from log1p-normalised values (:func:`counts_of`): in every cell, a count
of 1 is the smallest stored value, so expm1(x) divided by the row's smallest positive expm1(x)
gives the counts (exactly for scanpy's ``normalize_total`` + ``log1p`` of counts whenever the
cell holds a count of 1).

Dense residuals are formed by blocks of :data:`BLOCK` genes, never the whole n x p matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .autocorrelation import row_normalized, shared_variance
from .batches import centred_in_batches
from .class_stats import variance_explained, within_batch_total
from .detection import detection_rates, detection_residuals, is_binary
from .representation import signal_pca
from .signal import signal_dims, standardized

#: genes whose residuals are formed at once (dense n x BLOCK; 10,000 cells: 10 MB an array)
BLOCK = 128
#: genes of highest residual variance the residual graph's components are computed on
RESIDUAL_GENES = 500
#: bounds of the overdispersion estimate (Hotspot's: below, no overdispersion is Poisson)
THETA_BOUNDS = (1e-10, 1e9)
#: how many times the loudest gene's residual variance the first residual component must hold to be more than
#: that gene (:func:`residual_axes`)
ONE_GENE = 1.3
#: most columns whose covariance :func:`_axes` decomposes (beyond: no p x p matrix)
COVARIANCE_COLUMNS = 2000
#: cells whose residuals are formed at once when every cell is projected on fitted axes
ROW_BLOCK = 8192
#: binary counts: the most often detected genes the residual graph's components are computed on (planted
#: peaks, 20,000 of them: 500 -> 0.37 of the markers, 2,000 -> 0.97, 5,000 -> 0.99, all -> 0.99;
#: docs/labels_that_count.md, "Binary counts")
BINARY_GENES = 5000


def _integers(X: sparse.csr_matrix) -> bool:
    """Whether every stored value of X is an integer (checked by blocks, stopping at the first
    other value)."""
    step = 1 << 22
    return all(np.array_equal(X.data[i: i + step], np.round(X.data[i: i + step])) for i in range(0, X.nnz, step))


def _count_unit(X: sparse.csr_matrix) -> np.ndarray | None:
    """Every row's value of one count in expm1(X) (expm1 of its smallest positive value; rows
    without one: 1), or None when X holds integers (counts already)."""
    if not X.nnz or _integers(X):
        return None
    low = np.full(X.shape[0], np.inf)
    filled = np.flatnonzero(np.diff(X.indptr) > 0)
    positive = X.data if np.all(X.data > 0) else np.where(X.data > 0, X.data, np.inf)
    low[filled] = np.minimum.reduceat(positive, X.indptr[filled])
    return np.where(np.isfinite(low), np.expm1(low.astype(np.float64)), 1.0)


def _as_counts(part: sparse.csr_matrix, unit: np.ndarray | None) -> sparse.csr_matrix:
    """Rows of X read as counts: expm1 over the rows' ``unit`` (None: X itself)."""
    C = sparse.csr_matrix(part, dtype=np.float64, copy=True)
    if unit is not None:
        np.expm1(C.data, out=C.data)
        C.data /= np.repeat(unit, np.diff(C.indptr))
    return C


def counts_of(X) -> sparse.csr_matrix:
    """Counts behind X (CSR, float64): integer X as it is; other X read as log1p of normalised
    counts, expm1(X) divided in every row by its smallest positive value (a count of 1 there).
    Rows without counts stay 0."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    return _as_counts(X, _count_unit(X))


def binary_counts(X) -> bool:
    """Whether the counts behind X (:func:`counts_of`, a copy: X is not changed) are binary, as
    :class:`CountModel` finds them (:func:`~.detection.is_binary`): raw 0 / 1 or log1p-normalised binary counts."""
    return is_binary(counts_of(X).data)


def _moments(C: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cell totals t, gene totals, gene shares m) of counts C."""
    t = np.asarray(C.sum(axis=1), dtype=np.float64).ravel()
    genes = np.asarray(C.sum(axis=0), dtype=np.float64).ravel()
    total = float(t.sum())
    return t, genes, genes / total if total > 0 else np.zeros_like(genes)


def overdispersion(C) -> float:
    """One theta for all genes: the median over the expressed genes of the moment estimate of each
    gene's NB size with means t_c m_g (Hotspot's ``danb`` fit: size_g = (T_g^2 / T) (sum t_c^2 / T)
    / ((n - 1) v_g - T_g), v_g the variance of x - mu around the depth-adjusted means, T_g the
    gene's total, T all counts; a gene no more variable than Poisson: the upper bound)."""
    C = sparse.csr_matrix(C, dtype=np.float64)
    n = C.shape[0]
    t, genes, m = _moments(C)
    total = float(t.sum())
    expressed = genes > 0
    if n < 2 or not expressed.any():
        return THETA_BOUNDS[1]
    squares = np.asarray(C.multiply(C).sum(axis=0)).ravel()
    cross = np.asarray(C.T @ t).ravel()
    v = (squares - 2.0 * m * cross + m * m * float(t @ t)) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = (genes ** 2 / total) * (float(t @ t) / total) / ((n - 1) * v - genes)
    size = np.where(np.isfinite(size) & (size > 0), size, THETA_BOUNDS[1])
    return float(np.clip(np.median(size[expressed]), *THETA_BOUNDS))


@dataclass(frozen=True)
class CountModel:
    """The NB model of the counts behind X (module doc): every cell's total t, every gene's share m,
    one ``theta``, the residuals' clip sqrt(n); X is read as counts a part at a time
    (:meth:`part`), so many cells never need a second copy of X."""

    X: sparse.csr_matrix
    unit: np.ndarray | None
    totals: np.ndarray
    shares: np.ndarray
    theta: float
    clip: float
    #: binary counts (every stored value 1): every cell's and gene's detection rate (t, m),
    #: :func:`~.detection.detection_rates`; None for other counts
    detection: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, X, theta_rows=None) -> CountModel:
        """The model of X (cell totals and gene shares by blocks of :data:`ROW_BLOCK` cells);
        theta from the cells ``theta_rows`` (None: all)."""
        X = X if sparse.issparse(X) and X.format == "csr" else sparse.csr_matrix(X)  # its dtype: no float64 copy
        n = X.shape[0]
        unit = _count_unit(X)
        t, genes = np.zeros(n), np.zeros(X.shape[1])
        binary = X.nnz > 0
        for i in range(0, n, ROW_BLOCK):
            block = _as_counts(X[i: i + ROW_BLOCK], None if unit is None else unit[i: i + ROW_BLOCK])
            t[i: i + ROW_BLOCK] = np.asarray(block.sum(axis=1)).ravel()
            genes += np.asarray(block.sum(axis=0)).ravel()
            binary = binary and (not block.nnz or is_binary(block.data))
        total = float(t.sum())
        rows = slice(None) if theta_rows is None else np.asarray(theta_rows)
        theta = overdispersion(_as_counts(X[rows], None if unit is None else unit[rows]))
        return cls(X, unit, t, genes / total if total > 0 else genes, theta, float(np.sqrt(n)),
                   detection_rates(t, genes) if binary else None)

    def subset(self, rows) -> CountModel:
        """The same model read on the cells ``rows`` only (their t; m, theta and the clip of all)."""
        detection = None if self.detection is None else (self.detection[0][rows], self.detection[1])
        return CountModel(self.X[rows], None if self.unit is None else self.unit[rows], self.totals[rows],
                          self.shares, self.theta, self.clip, detection)

    def part(self, rows=slice(None), cols=slice(None)) -> tuple[sparse.csr_matrix, tuple]:
        """(the counts of X's ``rows`` x ``cols``, their (t, m, clip) for :func:`residual_blocks`)."""
        unit = None if self.unit is None else self.unit[rows]
        return _as_counts(self.X[rows][:, cols], unit), (self.totals[rows], self.shares[cols], self.clip)

    def residuals(self, rows=slice(None), cols=slice(None)) -> np.ndarray:
        """The clipped Pearson residuals of ``rows`` x ``cols``, dense (a few hundred genes, or a
        block of rows)."""
        C, model = self.part(rows, cols)
        if not C.shape[1]:
            return np.zeros((C.shape[0], 0))
        return np.hstack([Z for _, Z in residual_blocks(C, self.theta, model=model)])

    def embedding_residuals(self, rows=slice(None), cols=slice(None)) -> np.ndarray:
        """The residuals the components are computed on: binary counts' of their detection model
        (:func:`~.detection.detection_residuals`), other counts' clipped Pearson residuals (:meth:`residuals`)."""
        if self.detection is None:
            return self.residuals(rows, cols)
        C, _ = self.part(rows, cols)
        return detection_residuals(C, self.detection[0][rows], self.detection[1][cols], self.clip)


def residual_blocks(C, theta: float, block: int = BLOCK, model: tuple | None = None):
    """Yield (columns, dense clipped Pearson residuals n x len(columns)) of counts C by blocks of
    genes (module doc; clipped to +-sqrt(n), Lause et al. 2021; a gene without counts: 0).
    ``model``: (cell totals t, gene shares m, clip) when C is a part of the counts (some rows or
    genes: :meth:`CountModel.part`), so that the residuals are those of the whole."""
    C = sparse.csc_matrix(C, dtype=np.float64)
    n, p = C.shape
    if model is None:
        t, _, m = _moments(C)
        model = (t, m, np.sqrt(n))
    t, m, clip = model
    for start in range(0, p, block):
        cols = np.arange(start, min(start + block, p))
        mu = np.outer(t, m[cols])
        sd = np.square(mu)  # in place from here: three n x block arrays at most
        sd /= theta
        sd += mu
        np.sqrt(sd, out=sd)
        Z = C[:, cols].toarray()
        Z -= mu  # 0 where sd is 0 (a cell or a gene without counts)
        del mu
        np.divide(Z, sd, out=Z, where=sd > 0)
        yield cols, np.clip(Z, -clip, clip, out=Z)


def residual_variance(C, theta: float, batch=None, model: tuple | None = None) -> np.ndarray:
    """Every gene's variance of its clipped Pearson residuals (within batches when given;
    ``model``: as :func:`residual_blocks`'s)."""
    n = C.shape[0]
    codes = np.zeros(n, dtype=np.int64) if batch is None else np.asarray(batch, dtype=np.int64)
    out = np.zeros(C.shape[1])
    for cols, Z in residual_blocks(C, theta, model=model):
        out[cols] = within_batch_total(Z, codes) / n
    return out


def residual_explained(model: CountModel, groups: np.ndarray, weight: np.ndarray, batch=None,
                       rows: np.ndarray | None = None) -> np.ndarray:
    """Every gene's R^2 of the ``groups`` (samples weighted ``weight``, within ``batch`` when given:
    :func:`~ssfs.methods._shared.class_stats.variance_explained`) on its clipped Pearson residuals, by
    blocks of genes; on the cells ``rows`` only when given (their groups, weights and batches). NaN for a
    gene without counts there.

    The mean of log1p-normalised counts depends on the cell's depth as well as on the gene's share (Lun
    2018, "Overcoming systematic errors caused by log-transformation of normalized single-cell RNA
    sequencing data"): where groups differ in depth, the log values of every moderately expressed gene
    differ between them and their R^2 rivals a marker's. The residuals' means follow the share alone
    (mu_cg = t_c m_g). Planted counts of 5 types, one at 4x and one at 0.4x the others' depth
    (docs/labels_that_count.md, "Groups that differ in depth"): 0.87 of the markers ranked by the R^2
    of the log values with the true types as groups, 1.00 by the residuals'."""
    part = model if rows is None else model.subset(rows)
    if rows is not None:
        groups, weight = groups[rows], weight[rows]
        batch = None if batch is None else np.asarray(batch)[rows]
    C, parts = part.part()
    out = np.full(C.shape[1], np.nan)
    for cols, Z in residual_blocks(C, part.theta, model=parts):
        out[cols] = variance_explained(Z, groups, weight, batch)
    return out


def residual_autocorrelation(C, W, theta: float, batch=None, model: tuple | None = None) -> np.ndarray:
    """z_c^T W z_c / n for every gene's clipped Pearson residuals z (centred in every ``batch``; W
    row-normalised): the Moran numerator of the residuals (module doc), their variance shared by
    neighbours, in units of the typical gene's noise (``model``: as :func:`residual_blocks`'s).
    NaN for a gene without counts."""
    n = C.shape[0]
    W = row_normalized(W)
    out = np.empty(C.shape[1])
    for cols, Z in residual_blocks(C, theta, model=model):
        out[cols] = shared_variance(Z, W, batch) / n
    genes = np.asarray(C.sum(axis=0)).ravel()
    return np.where(genes > 0, out, np.nan)


def _axes(M: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column means, p x d leading principal axes, their component variances) of M, from the eigenvectors of
    its covariance when M has at most :data:`COVARIANCE_COLUMNS` columns (the residual graphs' few hundred
    genes); else from :func:`~.representation.signal_pca`'s scores Z = M_c V as V = M_c^T Z / diag(Z^T Z),
    never a p x p matrix (a ``genes`` parameter of thousands)."""
    from scipy.linalg import eigh

    mean = M.mean(axis=0)
    Mc = M - mean
    n, p = M.shape
    d = int(max(1, min(d, p, n - 1)))
    if p > COVARIANCE_COLUMNS:
        Z = signal_pca(M, d)
        return mean, (Mc.T @ Z) / np.maximum((Z * Z).sum(axis=0), np.finfo(float).tiny), Z.var(axis=0)
    w, V = eigh(Mc.T @ Mc, subset_by_index=[p - d, p - 1])
    return mean, V[:, ::-1], w[::-1] / n


def residual_axes(M: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(column means, p x d axes) the residuals ``M`` (cells x genes) are projected on: the leading principal
    axes of M as it is (Lause et al. 2021: a gene's residual variance above 1 is its structure), unless the
    first of them holds less than :data:`ONE_GENE` times the variance of M's loudest column alone: then genes
    whose residuals vary far more than the model allows and with no other gene (transcriptional bursts; a
    negative binomial of size 0.1 where the model's is 100) lead that spectrum one gene each, and the axes are
    those of the residuals scaled to unit variance, where such a gene is one direction among many and
    co-varying markers rise. The projection is then of the unscaled residuals on the scaled axes divided by the
    genes' standard deviations (the same scores). Measured (docs/labels_that_count.md, "Bursty genes", session
    44): 5 types of 15 markers with 150 bursty genes among 2,000, 4 seeds, 0.02-0.26 -> 1.00 of the markers
    at 2-10 labels per type and 1 % (Hotspot 0.65, label spreading + F 0.52-0.86); the first component there
    holds 1.10-1.23 times the loudest gene's variance (all cells or half of them: a loud gene and chance
    partners), on every other count shape 1.38 (Splatter-like) to 19."""
    mean, V, variances = _axes(M, d)
    if variances[0] >= ONE_GENE * float(M.var(axis=0).max()):
        return mean, V
    sd = M.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    mean, V, _ = _axes(M / sd, d)
    return mean * sd, V / sd[:, None]


def most_detected(model: CountModel, among: np.ndarray, genes: int) -> np.ndarray:
    """The ``genes`` columns of ``among`` detected most often (all of them tied with the last one too; in their
    order; those tied with it left out where they would double the count): binary counts' genes for the residual
    components, as scATAC-seq workflows keep the most accessible peaks (Signac's ``FindTopFeatures``, ArchR's top
    tiles)."""
    if among.size <= genes:
        return among
    detected = model.shares[among]
    last = np.sort(detected)[-genes]
    chosen = detected >= last
    return among[chosen if chosen.sum() <= 2 * genes or not (detected > last).any() else detected > last]


def residual_embedding(model: CountModel, n_pcs: int, batch=None, genes: int = RESIDUAL_GENES,
                       among: np.ndarray | None = None, fit_rows: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(Z, d): principal components of the clipped Pearson residuals of the ``genes`` genes of
    largest residual variance (every gene tied with the last one too: the genes' order does not
    matter; ``among``: of those columns only), the space of Lause et al.'s (2021) workflow, cut to
    d components. d is counted on the residuals with every gene scaled to variance 1
    (:func:`~.signal.signal_dims`: parallel analysis against a column-permuted copy's first
    component): a gene whose residuals vary more than the typical gene's is one direction there,
    not a structure, where unscaled it leads the permuted copy's spectrum and the count follows it.
    The components themselves are those of the unscaled residuals, whose variance above 1 is the
    genes' structure, unless one gene leads them (:func:`residual_axes`: bursty genes). Binary counts
    (``model.detection``): the residuals of their detection model (:mod:`.detection`) of the
    ``max(genes, BINARY_GENES)`` genes detected most often (:func:`most_detected`). ``batch``:
    the residuals centred in every batch. ``fit_rows``: the genes, axes and d from those cells only,
    every cell projected on the axes by blocks of :data:`ROW_BLOCK` (many cells: never all residuals
    at once)."""
    among = np.arange(model.X.shape[1]) if among is None else np.asarray(among)
    rows = slice(None) if fit_rows is None else np.asarray(fit_rows)
    fit_batch = None if batch is None else np.asarray(batch)[rows]
    if model.detection is not None:  # binary counts: every residual variance is about 1 (.detection)
        among = most_detected(model, among, max(genes, BINARY_GENES))
    elif among.size > genes:
        part, of_part = model.part(rows, among)
        var = residual_variance(part, model.theta, fit_batch, of_part)
        among = among[var >= np.sort(var)[-genes]]
    M = centred_in_batches(model.embedding_residuals(rows, among), fit_batch)
    scaled = standardized(M)
    d, _ = signal_dims(scaled, signal_pca(scaled, n_pcs))
    mean, V = residual_axes(M, d)
    if fit_rows is None:
        return (M - mean) @ V, V.shape[1]
    Z = np.vstack([(model.embedding_residuals(slice(i, i + ROW_BLOCK), among) - mean) @ V
                   for i in range(0, model.X.shape[0], ROW_BLOCK)])
    return centred_in_batches(Z, batch), V.shape[1]

