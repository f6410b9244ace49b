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
"""

from __future__ import annotations

import numpy as np

from .batches import centred_in_batches
from .signal import rising_embedding


def rising_basis(X, n_pcs: int) -> np.ndarray:
    """Orthonormal n x r basis of the sample scores of the r principal components of dense X (genes in their own
    units, as the label-free "signal" scores read them) that rise above a column-permuted copy of X
    (:func:`~ssfs.methods._shared.signal.rising_embedding`; the permutation follows X's contents, so X is read as
    given, not centred first); r = 0 when none does."""
    X = np.asarray(X, dtype=np.float64)
    Z, _, found, _ = rising_embedding(X, n_pcs, standardize=False, equal=False)
    if found < 1:
        return np.zeros((X.shape[0], 0))
    Z = Z[:, :found] - Z[:, :found].mean(axis=0)
    Q, _ = np.linalg.qr(Z)
    return Q


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
