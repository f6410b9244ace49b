"""A component every group shares: an unrecorded batch, or a program of every type, in counts (issue #28, session 41).

The graphs of counts are built on their Pearson residuals' principal components
(:func:`~ssfs.methods._shared.residuals.residual_embedding`). A batch nobody recorded (half the cells, every gene
scaled by its own factor) or a program that moves the same genes in cells of every type (a cell cycle) is one of
those components, often the leading one: the kNN graph then splits every type in two, a type's cells on the side its
labels are not on form groups of their own, and the features of that split rank above the markers (2,000 cells of
6 types, an unrecorded batch: 0.28-0.44 of the planted markers at 2 labels per type on 4 draws, 0.30-0.32 at 1 %
on 3 of them; scanpy's seurat_v3 0.58-0.64).

Such a component has two traits together that no component of ``ssfs.simulate``'s count scenarios has (12 draws):
its cells fall in two clearly separate sides (Otsu's eta 0.96-0.97; the scenarios' components 0.46-0.88), and the
two sides hold every group of the other components alike (Cramér's V between the side and the k-means groups of the
other components 0.03-0.06; the scenarios' 0.03-0.94, and those below 0.1 have no two sides, eta 0.46-0.62).
:func:`crossed_sides` finds them without a label; ``propagate`` then reads the sides as batches (its ``batch``:
graphs, groups and scores within them, as for batches a user gives), unless the labeled samples' classes follow the
sides (a condition the labels name, such as stimulated against control cells of every type, is what the labels are
about, not a batch). New here; the treatment is the batch correction of Seurat and scanpy's workflows (regress or
centre within batches) with batches inferred, as RUV's factors are (Gagnon-Bartsch & Speed 2012).
"""

from __future__ import annotations

import numpy as np

from .kmeans import kmeans
from .propagation import _otsu
from .residuals import CountModel, residual_embedding

#: Otsu's eta from which a component's cells fall in two sides (2/pi = 0.64 for normal scores)
CROSSED_ETA = 0.9
#: most Cramér's V between a component's two sides and the k-means groups of the other components
CROSSED_V = 0.1
#: least share of the cells on each side
CROSSED_SIDE = 0.05
#: chi-square p-value below which the labeled samples' classes follow the sides: the component is kept
LABELS_FOLLOW_P = 0.01


def contingency_chi2(a: np.ndarray, b: np.ndarray) -> tuple[float, int, int]:
    """(Pearson's chi-square, rows, columns) of the contingency table of two codings (non-negative integers) of
    the same samples, its empty rows and columns dropped."""
    table = np.zeros((int(a.max()) + 1, int(b.max()) + 1))
    np.add.at(table, (a, b), 1.0)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    return float(((table - expected) ** 2 / expected).sum()), table.shape[0], table.shape[1]


def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramér's V of two codings of the same samples (0: independent, 1: one determines the other)."""
    chi2, rows, cols = contingency_chi2(a, b)
    return 0.0 if min(rows, cols) < 2 else float(np.sqrt(chi2 / a.size / (min(rows, cols) - 1)))


def labels_follow(y: np.ndarray, side: np.ndarray) -> bool:
    """Whether the labeled samples' classes depend on the side (chi-square test of independence, p below
    :data:`LABELS_FOLLOW_P`)."""
    from scipy.special import chdtrc  # chi-square survival function (scipy.stats: 0.4 s of imports)

    lab = y >= 0
    if not lab.any():
        return False
    chi2, classes, sides = contingency_chi2(np.unique(y[lab], return_inverse=True)[1], side[lab].astype(np.int64))
    return classes >= 2 and sides == 2 and bool(chdtrc(classes - 1, chi2) < LABELS_FOLLOW_P)


def crossed_sides(model: CountModel, n_pcs: int, y: np.ndarray, rows=None) -> tuple[np.ndarray | None, int]:
    """(codes, found): every cell's side of each component of the counts' residuals
    (:func:`~ssfs.methods._shared.residuals.residual_embedding`) that splits in two sides (Otsu's eta at least
    :data:`CROSSED_ETA`, each side at least :data:`CROSSED_SIDE` of the cells) holding the k-means groups of the
    other components alike (Cramér's V at most :data:`CROSSED_V`) and that the labels ``y`` do not follow
    (:func:`labels_follow`), combined into one code per cell (None when no component is found). ``rows``: the
    components, sides and groups from those cells only (many cells: the cost of a subsample), every cell projected
    on the components found and sided."""
    Z, d = residual_embedding(model if rows is None else model.subset(rows), n_pcs)
    taken = []
    for j in range(d):
        eta, threshold = _otsu(Z[:, j])
        side = Z[:, j] > threshold
        share = float(side.mean())
        if eta < CROSSED_ETA or min(share, 1.0 - share) < CROSSED_SIDE:
            continue
        if cramers_v(side.astype(np.int64), kmeans(np.delete(Z, j, axis=1), d)) > CROSSED_V:
            continue
        taken.append((j, threshold))
    if taken and rows is not None:  # the same axes, every cell projected
        Z = residual_embedding(model, n_pcs, fit_rows=rows)[0]
    codes, found = np.zeros(Z.shape[0], dtype=np.int64), 0
    for j, threshold in taken:
        side = Z[:, j] > threshold
        if not labels_follow(y, side):
            codes, found = 2 * codes + side, found + 1
    return (np.unique(codes, return_inverse=True)[1] if found else None), found
