"""How ``propagate`` reads X before the fit: heavy tails clipped or read as residuals' (:func:`read_tails`), the
space its graphs are built in (:func:`count_model`), its content order (:func:`content_and_counts`) and the sides of a
component of counts every group shares, read as batches (:func:`crossed_batches`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .._shared.autocorrelation import has_count_scale
from .._shared.batches import batch_codes
from .._shared.counts import count_like
from .._shared.crossed import crossed_sides
from .._shared.residuals import (
    CountModel,
)
from .._shared.signal import (
    canonical_rows,
    content_rows,
    equal_samples,
    standardized,
    tail_skew,
    tail_weight,
    winsorized,
)
from .model import REFINE_SAMPLES


def count_model(X, space: str, pos: np.ndarray, most: int) -> CountModel | None:
    """The counts behind X whose Pearson residuals the graphs are built on (``space``: "residuals",
    or "auto" for counts: :func:`~ssfs.methods._shared.counts.count_like` X without negative values),
    or None for graphs on X's values ("values", or "auto" for other X). The overdispersion from at
    most ``most`` samples chosen by content (``pos``). Measured: docs/labels_that_count.md, "Residuals"."""
    return CountModel.of(X, content_rows(pos, most)) if on_residuals(X, space) else None


def on_residuals(X, space: str) -> bool:
    """Whether the graphs are built on the Pearson residuals of the counts behind X (:func:`count_model`); an
    error for ``space="residuals"`` on X that holds no counts."""
    counts = count_like(X) and has_count_scale(X)
    if space == "residuals" and not counts:
        raise MethodError("propagate: space='residuals' needs counts or log1p-normalised counts (non-negative: "
                          "sparse, half zeros, long-tailed integers or log counts); these data are not: use "
                          "space='values'")
    return counts and space != "values"


#: the spaces the graphs are built in (the ``space`` parameter, :func:`count_model`)
SPACES = ("auto", "residuals", "values")


#: the genes' median excess kurtosis above which their noise counts as heavy-tailed (:func:`gene_dispersion`)
HEAVY_TAILS = 1.0


#: robust standard deviations about a gene's median beyond which heavy-tailed values are clipped (:func:`clipped_tails`)
CLIP_SDS = 3.0
#: the genes' median skewness above which the heavy tails of values of both signs are one-sided, residuals' (Pearson
#: residuals of counts: 1.35-2.04 on planted counts; Student's t noise 0.04): not clipped (:func:`clipped_tails`)
ONE_SIDED = 1.0
#: most samples (chosen by content) the genes' tails are measured on (:func:`clipped_tails`)
TAIL_ROWS = 1000
#: what is done with heavy-tailed dense values (the ``tails`` parameter)
TAILS = ("auto", "clip", "as_is")


def clipped_tails(X, how: str = "auto") -> tuple[Any, float | None]:
    """(X, its tail weight or None): :func:`read_tails` without whether X holds residuals."""
    return read_tails(X, how)[:2]


def read_tails(X, how: str = "auto") -> tuple[Any, float | None, bool]:
    """(X, its tail weight or None, whether its tails are residuals'): dense X that is not count-like with every gene's
    values clipped to its median +- :data:`CLIP_SDS` robust standard deviations
    (:func:`~ssfs.methods._shared.signal.winsorized`) where ``how`` is "clip", or "auto" and the genes' median excess
    kurtosis (:func:`~ssfs.methods._shared.signal.tail_weight`) with every sample's profile scaled alike
    (:func:`~ssfs.methods._shared.signal.equal_samples`: 5 % of the samples with 4x the noise give every gene a kurtosis
    of 6-7, which those samples' own graph handles and names) is above :data:`HEAVY_TAILS` (measured on at most
    :data:`TAIL_ROWS` samples, the first in content order: 20,000 x 2,000, 3.3 s and 1.3 GB beside X on all of them);
    else X itself (None).
    A few extreme values of a gene then decide its variance, its share of the components and its R^2: on Student's t
    noise with 3 degrees of freedom (4 seeds) 0.450 -> 0.850 of the markers at 3 labels per class, 0.775 -> 0.994 at 10,
    0.550 -> 0.637 without labels (docs/labels_that_count.md, "Heavy tails"). Values of both signs whose tails are
    one-sided (the genes' median skewness, :func:`~ssfs.methods._shared.signal.tail_skew`, above :data:`ONE_SIDED`) are
    residuals, Pearson residuals of counts (SCTransform, scanpy's ``normalize_pearson_residuals``), whose tail is the
    cells holding a gene's counts: not clipped (session 48), and the fit's label-free scores are Moran's I
    (:func:`fit_propagation`); "as_is" never clips but still says whether they are residuals (session 49: it only
    opts out of the clipping)."""
    if how not in TAILS:
        raise MethodError(f"propagate: tails must be one of {TAILS}, got {how!r}")
    if sparse.issparse(X) or count_like(X):
        return X, None, False
    D = np.asarray(X, dtype=np.float64)
    keep = None if D.shape[0] <= TAIL_ROWS else content_rows(canonical_rows(D), TAIL_ROWS)
    rows = D if keep is None else D[keep]
    E = equal_samples(rows)  # tails of a few loud samples are theirs, not the genes' (:func:`graph_scales`)
    E -= E.mean(axis=0)
    weight = tail_weight(E)
    residuals = weight > HEAVY_TAILS and D.min() < 0 and tail_skew(E) > ONE_SIDED
    if how == "as_is" or (how == "auto" and (weight <= HEAVY_TAILS or residuals)):
        return X, None, residuals
    return winsorized(D, CLIP_SDS), weight, False


def content_and_counts(X, space: str, most: int) -> tuple[np.ndarray, CountModel | None]:
    """(pos, counts) the fit reads X with, computed once: X's content order (:func:`canonical_rows` of X standardised:
    folds and subsamples follow neither the sample order nor a feature's unit or offset) and the counts whose
    residuals the graphs are built on (:func:`count_model`, overdispersion from ``most`` samples in that order)."""
    pos = canonical_rows(standardized(X))
    return pos, count_model(X, space, pos, most)


def crossed_batches(X, y, unwanted: str, params: dict, read: tuple | None) -> tuple[np.ndarray | None, int]:
    """(sides, found): with ``unwanted="auto"`` and graphs on the residuals of counts (no ``batch``, ``graph`` or
    ``embedding`` given), the sides of the components every group shares that labels of 2 classes or more do not
    follow (:func:`~ssfs.methods._shared.crossed.crossed_sides`: an unrecorded batch, a program of every type), which
    the fit then reads as batches; (None, 0) otherwise. Without labels (session 42) nothing can veto them: the fit
    warns. ``read``: :func:`content_and_counts` of X (None: computed here for counts). Many cells: found on
    :data:`REFINE_SAMPLES` of them chosen by content. Planted counts of 6 types (4 draws,
    ``bench_other_shapes.py``): an unrecorded batch at 2 labels per type 0.36 -> 1.00 of the markers, at 1 % 0.48 ->
    1.00, without labels 0.33 -> 0.99; a cell-cycle-like program 0.55 -> 1.00, 0.56 -> 1.00 and 0.37 -> 0.99
    (docs/labels_that_count.md, "A component every group shares")."""
    y = np.asarray(y)
    batch = batch_codes(params.get("batch"), y.size, "propagate: batch", MethodError)  # one batch is no batch
    if (unwanted != "auto" or (batch is not None and np.unique(batch).size > 1) or params.get("graph") is not None
            or params.get("embedding") is not None):
        return None, 0
    if read is None:  # a label-free fit reads neither otherwise
        if not on_residuals(X, params.get("space", "auto")):
            return None, 0
        read = content_and_counts(X, params.get("space", "auto"), params.get("refine_samples", REFINE_SAMPLES))
    pos, model = read
    rows = content_rows(pos, params.get("refine_samples", REFINE_SAMPLES))
    return (None, 0) if model is None else crossed_sides(model, params.get("n_pcs", 50), y, rows)
