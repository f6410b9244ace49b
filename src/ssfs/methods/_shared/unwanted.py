"""Components the labels reject: structure of the data that is not the classes' (issue #28, session 40).

The label-free scores of a dense array read its rising principal components (Horn's parallel analysis,
:func:`~ssfs.methods._shared.signal.rising_embedding`) as its structure. Often they are the classes. Where
they are something else, a batch nobody recorded, co-expressed gene modules, a program such as the cell
cycle, they own the kNN graph and the label-free order, and the propagated samples are grouped along them.
Removing such factors is what RUV does with control genes (Gagnon-Bartsch & Speed 2012, "Using control
genes to correct for unwanted variation", eq. 3: Y = X beta + W alpha + epsilon, W estimated from the
controls and regressed out) and SVA with the residuals of a model of the labels (Leek & Storey 2007). With
a handful of labels neither a model of the labels nor control genes are at hand; what is new here is the
test: **the held-out labels decide**. The genes' dispersion outside the rising components
(:func:`outside_dispersion`) picks its best features without a label; where those predict significantly
more held-out labels than both the features the fit ranks by and the label-free scores' best features
(``propagate``'s sign test on the same folds), the components are the labels' noise, and the fit runs again
on X without them (:func:`outside`). Where the components carry the classes, the features outside them
predict less, and nothing changes.

An unrecorded batch that moves every gene is often the only component that rises, and its two sides hold the
groups of the components below it (the classes') alike: the traits :mod:`~ssfs.methods._shared.crossed` reads in
counts. Where one rising component has them (:func:`rising_basis`' ``crossed``), the held-out labels need only lean
to the features outside (``propagate``'s :func:`~ssfs.methods.propagate.unwanted_rejected`; session 50).
"""

from __future__ import annotations

import numpy as np

from .batches import centred_in_batches
from .crossed import crossed_cuts
from .propagation import otsu
from .representation import signal_pca
from .signal import rising_dims

#: leading principal components whose k-means groups (as many as components) a rising component's two sides must
#: hold alike to be crossed (:func:`crossed_columns`; the component itself left out): a batch nobody recorded is
#: often the only component that rises, the classes' components below it
CROSSED_PCS = 4


def rising_basis(X, n_pcs: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q, crossed): the orthonormal n x r basis of the sample scores of the r principal components of dense X (genes
    in their own units, as the label-free "signal" scores read them) that rise above a column-permuted copy of X
    (:func:`~ssfs.methods._shared.signal.rising_dims`; the permutation follows X's contents, so X is read as
    given, not centred first), r = 0 when none does; and the columns of Q whose components are crossed
    (:func:`crossed_columns`; the scores are orthogonal, so Q[:, crossed] is their own basis)."""
    X = np.asarray(X, dtype=np.float64)
    Z = signal_pca(X, n_pcs)
    found, _ = rising_dims(X, Z)
    if found < 1:
        return np.zeros((X.shape[0], 0)), np.zeros(0, dtype=np.int64)
    Q, _ = np.linalg.qr(Z[:, :found] - Z[:, :found].mean(axis=0))
    return Q, crossed_columns(Z, found)


def crossed_columns(Z: np.ndarray, found: int) -> np.ndarray:
    """The ``found`` rising columns of the PCA scores ``Z`` that split the samples in two clear sides
    (Otsu's eta at least :data:`~ssfs.methods._shared.crossed.CROSSED_ETA`, each side at least
    :data:`~ssfs.methods._shared.crossed.CROSSED_SIDE` of them) holding the k-means groups of the other leading
    components (:data:`CROSSED_PCS` at least) alike (:func:`~ssfs.methods._shared.crossed.crossed_cuts`): a
    batch nobody recorded, as :func:`~ssfs.methods._shared.crossed.crossed_sides` finds it in counts (eta 1.00, V
    0.01-0.08). Also crossed (4 draws of every dense shape of ``bench_other_shapes.py``, 12 of the ``microarray_*``
    scenarios, the real arrays of ``../shared/data``): ``microarray_varied``'s planted batches on 3 draws, and one
    class far from three quiet ones on 3 of 4 (its sides hold the quiet classes' groups alike: crossed is not enough
    alone, ``propagate``'s held-out labels still decide); no real array."""
    rest = min(max(found, CROSSED_PCS), Z.shape[1])
    if rest < 2:
        return np.zeros(0, dtype=np.int64)
    cuts = [otsu(Z[:, j]) for j in range(found)]
    return np.asarray([j for j, _ in crossed_cuts(Z, cuts, rest)], dtype=np.int64)


def centred(X, batch=None) -> np.ndarray:
    """Dense X as float64 with every column centred (within every batch when ``batch`` is given)."""
    X = np.asarray(X, dtype=np.float64)
    return centred_in_batches(X, batch) if batch is not None else X - X.mean(axis=0)


def outside(X, Q: np.ndarray, batch=None) -> np.ndarray:
    """X without the components spanned by the orthonormal columns of ``Q`` (:func:`rising_basis`):
    X - Q Q^T (X - M), M the columns' (batches') means, which stay as they were (RUV's regression of
    the unwanted factors W = Q out of every gene, Gagnon-Bartsch & Speed 2012, eq. 3)."""
    X = np.asarray(X, dtype=np.float64)
    return X - Q @ (Q.T @ centred(X, batch))


def outside_dispersion(X, Q: np.ndarray, batch=None) -> np.ndarray:
    """Every gene's variance outside the components of ``Q``: |(I - Q Q^T)(x - m)|^2 / n."""
    R = centred(X, batch)
    R -= Q @ (Q.T @ R)
    return np.einsum("ij,ij->j", R, R) / max(R.shape[0], 1)
