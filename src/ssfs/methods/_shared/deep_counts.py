"""Deep counts (bulk RNA-seq) read as log expression values, the way their analyses read them.

A count of mean mu and negative binomial size theta varies by mu + mu^2 / theta: the Poisson part mu
leads where mu < theta (single cells: most genes' mean counts 0.02-1 against theta 0.5-5), the
biological part mu^2 / theta where mu > theta (bulk libraries of 10^7 reads: the median gene's mean
count in the hundreds against theta 5-20). Pearson residuals (Lause et al. 2021) are built for the first;
for the second the log of the counts stabilises the variance (limma-voom's log-CPM, Law et al. 2014;
DESeq2's ``vst``), and a bulk study is analysed as a microarray is.

:func:`depth_theta` calls counts deep where at most half of the expressed genes' counts are 0 and at least
:data:`DEEP_SHARE` of those genes' mean counts exceed :data:`DEEP_RATIO` x theta (Hotspot's ``danb`` moment
estimate, :func:`~ssfs.methods._shared.residuals.overdispersion`): planted bulk studies at 2e7 reads 0.78-0.82;
every single-cell shape of ``bench_other_shapes.py`` and ``ssfs.simulate`` and pbmc68k_reduced's counts 0 (more
than half their values 0) or at most 0.013 (Splatter-like); Splatter-like cells of 400 genes at 5,000 counts per
cell 0.24 and planted cells of 2,000 genes at 10^5 0.41-0.44, where the count path finds more (1.000 against 0.751
at 2 labels per type). :meth:`DeepCounts.values` then reads them as log2 of the counts over DESeq2's size factors
(:func:`size_factors`) plus theta: by the delta method a gene of mean mu varies by mu / (theta (mu + theta)) < 1 /
theta there, so a gene of few counts is quieter than a deep one, never louder (voom's prior of 0.5 counts gave the
low genes' Poisson noise the top of every variance: 0.25 of the planted condition genes at 2 labels per condition
against 0.52); the values are dense and read as an expression matrix (not
:func:`~ssfs.methods._shared.counts.count_like`). Measured: docs/labels_that_count.md, "Deep counts: bulk RNA-seq
read as log values (session 45)".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .autocorrelation import has_count_scale
from .counts import COUNTS, TAIL_ROWS, ZERO_SHARE, count_like, read_counts
from .residuals import counts_of, overdispersion

#: least share of the expressed genes whose mean count exceeds :data:`DEEP_RATIO` x theta for counts to be deep
#: (:func:`depth_theta`)
DEEP_SHARE = 0.5
#: a gene's counts are deep where their mean is this many times theta: the biological part of their variance
#: (mu^2 / theta) at least 5 times the Poisson part (mu)
DEEP_RATIO = 5.0
#: most share of zeros in the median deep gene's counts (genes of mean above :data:`DEEP_RATIO` x theta) for counts
#: to be deep (:func:`depth_theta`): bulk libraries hold almost none there (planted studies 0; heterogeneous cohorts
#: of theta 1-2 0-0.01; genes silent in some tissues leave the median gene at 0), full-length single cells
#: (Smart-seq2) lose 0.12-0.27 of every deep gene's counts to dropouts, which the log reading turns into those genes'
#: loudest variance (session 47)
DEEP_DROPOUTS = 0.05
#: how propagate reads X (its ``counts`` parameter): :data:`~ssfs.methods._shared.counts.COUNTS` and "deep"
#: (:meth:`DeepCounts.values` of any counts)
READINGS = (*COUNTS, "deep")


def _evenly_spaced(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, TAIL_ROWS)).astype(np.intp))


def depth_theta(X) -> tuple[float, float] | None:
    """(theta, share): the overdispersion of the counts behind count-like X
    (:func:`~ssfs.methods._shared.residuals.counts_of`: raw counts, or log1p-normalised counts undone) and the share
    of its expressed genes whose mean count exceeds :data:`DEEP_RATIO` x theta (0 where more than
    :data:`~ssfs.methods._shared.counts.ZERO_SHARE` of the expressed genes' counts are 0: a small theta of on / off
    genes, or of full-length single cells' dropouts, does not make sparse counts deep; 0 too where more than
    :data:`DEEP_DROPOUTS` of the median deep gene's counts are 0: dropouts of full-length single cells), read on at most
    :data:`~ssfs.methods._shared.counts.TAIL_ROWS` evenly spaced samples; None for X that holds no counts (not
    count-like, or negative values)."""
    if not (X.shape[0] >= 2 and count_like(X) and has_count_scale(X)):
        return None
    C = counts_of(X[_evenly_spaced(X.shape[0])])
    mean = np.asarray(C.mean(axis=0)).ravel()
    expressed = mean > 0
    if not expressed.any():
        return None
    theta = overdispersion(C)
    filled = C.count_nonzero() / (C.shape[0] * np.count_nonzero(expressed))
    if filled < 1.0 - ZERO_SHARE:
        return theta, 0.0
    above = mean > DEEP_RATIO * theta
    if above.any() and np.median(dropouts(C)[above]) > DEEP_DROPOUTS:
        return theta, 0.0
    return theta, float(np.mean(above[expressed]))


def dropouts(C: sparse.csr_matrix) -> np.ndarray:
    """Every gene's share of samples without a count (stored zeros counted as zeros)."""
    counted = np.bincount(C.indices[C.data != 0], minlength=C.shape[1])
    return 1.0 - counted / C.shape[0]


def size_factors(C) -> np.ndarray:
    """Every sample's size factor by the median of ratios (Anders & Huber 2010, eq. 5, DESeq2's): s_i = median over
    the genes counted in every sample of c_ij / (the gene's geometric mean); a few genes far up in one condition
    (composition) move the totals but not this median. Where no gene is counted in every sample: the totals over
    their median. Samples without counts: 0."""
    D = C.toarray() if sparse.issparse(C) else np.asarray(C, dtype=np.float64)
    totals = D.sum(axis=1)
    counted = totals > 0  # samples without counts: 0
    everywhere = np.all(D[counted] > 0, axis=0)
    if not everywhere.any():
        return totals / (float(np.median(totals[counted])) if counted.any() else 1.0)
    logs = np.log(D[np.ix_(counted, everywhere)])
    s = np.zeros_like(totals)
    s[counted] = np.exp(np.median(logs - logs.mean(axis=0), axis=1))
    return s


@dataclass(frozen=True)
class DeepCounts:
    """The counts behind X (:func:`~ssfs.methods._shared.residuals.counts_of`, dense), every sample's size factor
    (:func:`size_factors`) and theta, read once: the values the fit ranks on (:meth:`values`) and those its
    per-class statistics read (:meth:`log1p`)."""

    counts: np.ndarray
    size_factors: np.ndarray
    theta: float

    @classmethod
    def of(cls, X, theta: float) -> DeepCounts:
        D = counts_of(X).toarray()
        return cls(D, size_factors(D), float(theta))

    def _normalised(self, unit: float) -> np.ndarray:
        """c_ij / (s_i unit) (samples without counts: 0)."""
        s = self.size_factors[:, None] * unit
        return np.divide(self.counts, s, out=np.zeros_like(self.counts), where=s > 0)

    def values(self) -> np.ndarray:
        """log2(c_ij / s_i + theta), dense (samples without counts: log2 theta)."""
        return np.log2(self._normalised(1.0) + self.theta)

    def log1p(self) -> sparse.csr_matrix:
        """ln(1 + c_ij / (s_i theta)) (CSR): :meth:`values` as log1p-normalised counts, zeros kept, for the
        per-class statistics' fold changes and fractions expressing (scanpy's reading)."""
        out = sparse.csr_matrix(self._normalised(self.theta))
        np.log1p(out.data, out=out.data)
        return out


def read_deep(X, counts: str = "auto") -> tuple[object, DeepCounts | None]:
    """(X as propagate reads it, its :class:`DeepCounts` or None): deep counts (``counts="auto"`` and
    :func:`depth_theta`'s share at least :data:`DEEP_SHARE`, or ``counts="deep"`` and any counts) as
    :meth:`DeepCounts.values`; else :func:`~ssfs.methods._shared.counts.read_counts` (None)."""
    if counts not in READINGS:
        raise MethodError(f"counts must be one of {READINGS}, got {counts!r}")
    if counts in ("auto", "deep"):
        depth = depth_theta(X)
        if depth is not None and (counts == "deep" or depth[1] >= DEEP_SHARE):
            deep = DeepCounts.of(X, depth[0])
            return deep.values(), deep
        if counts == "deep":
            raise MethodError("counts='deep' needs counts or log1p-normalised counts (non-negative, count-like); "
                              "these data are not: use counts='auto'")
    return read_counts(X, counts), None
