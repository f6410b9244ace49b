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
about, not a batch). Three or four batches span two or three components read together (:func:`joint_groups`,
session 42). New here; the treatment is the batch correction of Seurat and scanpy's workflows (regress or
centre within batches) with batches inferred, as RUV's factors are (Gagnon-Bartsch & Speed 2012).
"""

from __future__ import annotations

import numpy as np

from .kmeans import kmeans
from .populations import contingency
from .propagation import otsu
from .residuals import CountModel, residual_embedding

#: Otsu's eta from which a component's cells fall in two sides (2/pi = 0.64 for normal scores)
CROSSED_ETA = 0.9
#: most Cramér's V between a component's two sides and the k-means groups of the other components
CROSSED_V = 0.1
#: least share of the cells on each side
CROSSED_SIDE = 0.05
#: most Cramér's V between a component's sides (or groups of components read together) and the k-means groups of
#: the other components with which they are still crossed when most cells are mixed (:data:`CROSSED_MIXED`)
MIXED_V = 0.3
#: least share of the cells outside their k-means group's commonest side, with which sides that hold the groups
#: of the other components unevenly (Cramér's V up to :data:`MIXED_V`) are still crossed: batches whose types'
#: shares differ (donors)
CROSSED_MIXED = 0.3
#: chi-square p-value below which the labeled samples' classes follow the sides: the component is kept
LABELS_FOLLOW_P = 0.01
#: least number of other components whose groups the sides must hold alike (one component, often a weak one, holds
#: too little: two types alone split in two sides that hold its groups alike)
CROSSED_REST = 2
#: Cramér's V between two components' sides from which they are read together (three or more batches: the batches
#: span as many components less one, whose sides each depend on the others' through the batch)
JOINT_V = 0.3
#: most components read together (up to one batch more than that)
JOINT_MOST = 3


def contingency_chi2(a: np.ndarray, b: np.ndarray) -> tuple[float, int, int]:
    """(Pearson's chi-square, rows, columns) of the :func:`~ssfs.methods._shared.populations.contingency` table of
    two codings (non-negative integers) of the same samples, its empty rows and columns dropped."""
    table = contingency(a, b)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    return float(((table - expected) ** 2 / expected).sum()), table.shape[0], table.shape[1]


def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramér's V of two codings of the same samples (0: independent, 1: one determines the other)."""
    chi2, rows, cols = contingency_chi2(a, b)
    return 0.0 if min(rows, cols) < 2 else float(np.sqrt(chi2 / a.size / (min(rows, cols) - 1)))


def labels_follow(y: np.ndarray, side: np.ndarray) -> bool:
    """Whether the labeled samples' classes depend on the side: a chi-square test of independence, p below
    :data:`LABELS_FOLLOW_P`, or every class of 2 labels or more on one side only, not all on the same (few labels:
    2 classes of 3 labels on sides of their own have p = 0.014; a batch of two even sides puts them so 1 time in
    32, 6 classes of 2 labels 1 time in 64)."""
    from scipy.special import chdtrc  # chi-square survival function (scipy.stats: 0.4 s of imports)

    lab = y >= 0
    if not lab.any():
        return False
    classes, where = np.unique(y[lab], return_inverse=True)[1], side[lab].astype(np.int64)
    chi2, rows, sides = contingency_chi2(classes, where)
    if rows < 2 or sides < 2:
        return False
    table = contingency(classes, where)[np.bincount(classes) >= 2]
    own_side = (table > 0).sum(axis=1) == 1  # the classes of 2 labels or more whose labels share a side
    pure = table.shape[0] >= 2 and own_side.all() and np.unique(table.argmax(axis=1)).size >= 2
    return bool(pure or chdtrc((rows - 1) * (sides - 1), chi2) < LABELS_FOLLOW_P)


def crossed_sides(model: CountModel, n_pcs: int, y: np.ndarray, rows=None) -> tuple[np.ndarray | None, int]:
    """(codes, found): every cell's side of each component of the counts' residuals
    (:func:`~ssfs.methods._shared.residuals.residual_embedding`) that splits in two sides (Otsu's eta at least
    :data:`CROSSED_ETA`, each side at least :data:`CROSSED_SIDE` of the cells) holding the k-means groups of the
    other components (at least :data:`CROSSED_REST`) alike (:func:`sides_hold_alike`), and every cell's group of the
    components read together (:func:`joint_groups`: three batches or more), that the labels ``y`` do not follow
    (:func:`labels_follow`), combined into one code per cell (None when none is found; ``found``: the components
    read). ``rows``: the components, sides and groups from those cells only (many cells: the cost of a subsample),
    every cell projected on the components found and sided."""
    Z, d = residual_embedding(model if rows is None else model.subset(rows), n_pcs)
    cuts = [otsu(Z[:, j]) for j in range(d)]
    sides = np.greater(Z, [threshold for _, threshold in cuts])
    taken = [((j,), threshold) for j, threshold in crossed_cuts(Z, cuts, d)] if d - 1 >= CROSSED_REST else []
    taken += joint_groups(Z, d, sides, [j for (j,), _ in taken])
    if taken and rows is not None:  # the same axes, every cell projected
        Z = residual_embedding(model, n_pcs, fit_rows=rows)[0]
    codes, found = np.zeros(Z.shape[0], dtype=np.int64), 0
    for columns, cut in taken:
        group, levels = _grouped(Z[:, columns], cut)
        if not labels_follow(y, group):
            codes, found = levels * codes + group, found + len(columns)
    return (np.unique(codes, return_inverse=True)[1] if found else None), found


def crossed_cuts(Z: np.ndarray, cuts: list, rest: int) -> list[tuple[int, float]]:
    """(j, threshold) of every leading column j of Z with a cut in ``cuts`` ((eta, threshold) of its Otsu split,
    :func:`~ssfs.methods._shared.propagation.otsu`) whose two sides are clear (eta at least :data:`CROSSED_ETA`, each
    side at least :data:`CROSSED_SIDE` of the samples) and hold the k-means groups (``rest`` of them) of Z's leading
    ``rest`` columns but j alike (:func:`sides_hold_alike`): a component every group shares, in the counts'
    residuals (:func:`crossed_sides`) or in dense X's rising components
    (:func:`~ssfs.methods._shared.unwanted.crossed_columns`)."""
    found = []
    for j, (eta, threshold) in enumerate(cuts):
        side = (Z[:, j] > threshold).astype(np.int64)
        share = float(side.mean())
        if eta < CROSSED_ETA or min(share, 1.0 - share) < CROSSED_SIDE:
            continue
        if sides_hold_alike(side, kmeans(np.delete(Z[:, :rest], j, axis=1), rest)):
            found.append((j, threshold))
    return found


def sides_hold_alike(code: np.ndarray, groups: np.ndarray) -> bool:
    """Whether the sides ``code`` (or groups of components read together) hold the k-means ``groups`` of the other
    components alike: Cramér's V at most :data:`CROSSED_V`, or at most :data:`MIXED_V` with at least
    :data:`CROSSED_MIXED` of the cells outside their group's commonest side (two batches of 5 types whose shares
    differ by batch, 4 draws: V 0.08-0.15, that share 0.42-0.45; the types' components of the count scenarios and
    shapes: V 0.29-0.85, share 0.05-0.21)."""
    v = cramers_v(code, groups)
    if v <= CROSSED_V or v > MIXED_V:
        return v <= CROSSED_V
    return float(1.0 - contingency(groups, code).max(axis=1).sum() / code.size) >= CROSSED_MIXED


def joint_groups(Z: np.ndarray, d: int, sides: np.ndarray, taken: list[int]) -> list[tuple[tuple, np.ndarray]]:
    """(columns, centres) of the components read together: b batches nobody recorded span b - 1 components, none
    of which splits in two sides holding the others' groups alike (each side of one holds the batches the others
    part). The components not ``taken`` whose ``sides`` depend on each other (Cramér's V at least :data:`JOINT_V`,
    linked in chains) form blocks; a block of 2 to :data:`JOINT_MOST` of them whose k-means in as many groups plus one
    explains at least :data:`CROSSED_ETA` of its variance (each group at least :data:`CROSSED_SIDE` of the cells) and
    whose groups hold the k-means groups of the other components alike (:func:`sides_hold_alike`) is read as one code.
    Planted counts of 5 types in 3 or 4 batches (4 draws each): its blocks explain 0.93-0.95 with V 0.04-0.15; the
    blocks of ``ssfs.simulate``'s count scenarios and of the other planted counts (44 draws) at most 0.86, with V
    0.21-0.76. Blocks of 4 (five batches) are not read: a rare-type scenario's 4 type components explain 0.86 with V
    0.09 (docs/labels_that_count.md)."""
    from scipy.sparse.csgraph import connected_components

    free = np.setdiff1d(np.arange(d), taken)
    if free.size < 2:
        return []
    with np.errstate(invalid="ignore", divide="ignore"):
        linked = np.abs(np.corrcoef(sides[:, free].T)) >= JOINT_V  # phi: Cramér's V of two sides
    _, block = connected_components(linked, directed=False)
    found = []
    for b in range(block.max() + 1):
        columns = free[block == b]
        if not 2 <= columns.size <= min(JOINT_MOST, d - CROSSED_REST):
            continue
        part = Z[:, columns]
        group = kmeans(part, columns.size + 1)
        shares = np.bincount(group) / group.size
        centres = np.array([part[group == g].mean(axis=0) for g in range(shares.size)])
        eta = 1.0 - ((part - centres[group]) ** 2).sum() / ((part - part.mean(axis=0)) ** 2).sum()
        if (shares.size == columns.size + 1 and eta >= CROSSED_ETA and shares.min() >= CROSSED_SIDE
                and sides_hold_alike(group, kmeans(np.delete(Z, columns, axis=1), d))):
            found.append((tuple(columns), centres))
    return found


def _grouped(part: np.ndarray, cut) -> tuple[np.ndarray, int]:
    """(codes, levels) of the samples' rows ``part`` of the components read: above the threshold ``cut`` (one
    component: 1, else 0) or the nearest of the centres ``cut`` (components read together)."""
    if np.ndim(cut) == 0:
        return (part[:, 0] > cut).astype(np.int64), 2
    distance = np.column_stack([((part - centre) ** 2).sum(axis=1) for centre in cut])
    return np.argmin(distance, axis=1).astype(np.int64), cut.shape[0]
