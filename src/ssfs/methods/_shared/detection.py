"""Binary counts (a feature detected or not in each cell): residuals of the detection model.

scATAC-seq peak or tile matrices are often binarised (ArchR, SnapATAC, episcanpy): every stored value is 1.
A binary feature's variance is q(1 - q) whatever its structure (a mixture of Bernoulli variables is a
Bernoulli variable), so no feature's Pearson residual variance rises above the model's: the negative
binomial's residual variance picks noise (planted peaks: 5 of 900 markers among the 500 genes of highest
residual variance) and the graph on it carries no type (ARI 0.00; docs/labels_that_count.md, "Binary
counts"). Structure is only in what the features share.

The model: count x of cell c and feature g is Poisson with rate t_c m_g and only x > 0 is recorded, so
P(detected) = p_cg = 1 - exp(-t_c m_g), the Poisson probability of a count. The rates are fitted so that
every cell's and every feature's expected detections equal the observed ones (the margins: sum_g p_cg = r_c,
sum_c p_cg = k_g; maximum likelihood's score equations for this complementary log-log model with
log-additive rates would weight them differently; the margins make its linear reading p = t_c m_g, the
Poisson's, the first step). The residual (x - p) / sqrt(p (1 - p)) has variance 1 for a feature without
structure at any detection rate, as the negative binomial's Pearson residuals do for counts (Lause, Berens &
Kobak 2021), and the components of many features' residuals follow what they share.

Cells with the same number of detections have the same rate (and so do features), so the margins are fitted
on the distinct numbers, beyond :data:`GROUPS` of them on that many groups spaced evenly in log (each the
mean of its members, weighted by how many), by alternating Newton steps (each side's equations are
increasing and concave in its rate); every distinct number's rate is then solved against the other side's
groups.
"""

from __future__ import annotations

import numpy as np

#: distinct margins fitted at once (beyond: groups evenly spaced in log of the margin)
GROUPS = 512
#: alternations of the two sides' Newton steps (they converge to 1e-10 in 5-8 on planted peaks)
ALTERNATIONS = 30
#: Newton steps per side and alternation
NEWTON_STEPS = 4
#: relative change of every rate below which the alternation stops
TOLERANCE = 1e-10
#: detection probabilities are kept this far from 0 and 1 (a feature detected in every cell has no residual)
EDGE = 1e-9


def is_binary(data: np.ndarray) -> bool:
    """Whether counts stored as ``data`` (a sparse matrix's stored values) are all 1 (stored zeros aside), one at
    least."""
    ones = data == 1
    return bool(ones.any()) and bool(np.all(ones | (data == 0)))


def _grouped(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group values, group sizes, group of every distinct value, distinct values) of positive ``values``:
    the distinct values, or beyond :data:`GROUPS` of them groups evenly spaced in log, each the mean of its
    members."""
    distinct, sizes = np.unique(values, return_counts=True)
    if distinct.size <= GROUPS:
        return distinct, sizes.astype(np.float64), np.arange(distinct.size), distinct
    logs = np.log(distinct)
    edges = np.linspace(logs[0], logs[-1], GROUPS + 1)[1:-1]
    group = np.searchsorted(edges, logs, side="right")
    weight = np.bincount(group, weights=sizes, minlength=GROUPS)
    mean = np.bincount(group, weights=sizes * distinct, minlength=GROUPS) / np.maximum(weight, 1)
    used = weight > 0
    renumber = np.cumsum(used) - 1
    return mean[used], weight[used], renumber[group], distinct


def _solve(rate: np.ndarray, target: np.ndarray, other: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Rates x with sum_j weight_j (1 - exp(-x other_j)) = target, by :data:`NEWTON_STEPS` Newton steps from
    ``rate`` (from below the root they rise to it monotonically: the left side is concave and increasing)."""
    reachable = weight.sum() * (1.0 - EDGE)
    target = np.minimum(target, reachable)
    for _ in range(NEWTON_STEPS):
        E = np.exp(-np.outer(rate, other))
        value = (1.0 - E) @ weight - target
        slope = (E * other) @ weight
        rate = np.maximum(rate - value / np.maximum(slope, np.finfo(float).tiny), 0.1 * rate)
    return rate


def detection_rates(detected_cells: np.ndarray, detected_features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t, m): every cell's and every feature's Poisson rate whose detection probabilities
    p_cg = 1 - exp(-t_c m_g) match the margins (module doc): ``detected_cells`` r_c, the features each cell
    holds, and ``detected_features`` k_g, the cells each feature is detected in. 0 for a cell or feature
    never detected."""
    r = np.asarray(detected_cells, dtype=np.float64)
    k = np.asarray(detected_features, dtype=np.float64)
    t, m = np.zeros(r.size), np.zeros(k.size)
    total = float(r.sum())
    if total <= 0:
        return t, m
    cells, features = r > 0, k > 0
    r_groups, r_weight, r_of, r_distinct = _grouped(r[cells])
    k_groups, k_weight, k_of, k_distinct = _grouped(k[features])
    tr, mk = r_groups / np.sqrt(total), k_groups / np.sqrt(total)  # the Poisson's linear reading p = t m
    for _ in range(ALTERNATIONS):
        before = np.r_[tr, mk]
        tr = _solve(tr, r_groups, mk, k_weight)
        mk = _solve(mk, k_groups, tr, r_weight)
        if np.all(np.abs(np.r_[tr, mk] - before) <= TOLERANCE * np.abs(before)):
            break
    t_distinct = _solve(tr[r_of], r_distinct, mk, k_weight)  # every distinct margin against the groups
    m_distinct = _solve(mk[k_of], k_distinct, tr, r_weight)
    t[cells] = t_distinct[np.searchsorted(r_distinct, r[cells])]
    m[features] = m_distinct[np.searchsorted(k_distinct, k[features])]
    return t, m


def detection_residuals(C, t: np.ndarray, m: np.ndarray, clip: float) -> np.ndarray:
    """Dense residuals (x - p) / sqrt(p (1 - p)) of binary counts C (cells x features, t and m their rates;
    :func:`detection_rates`), clipped to +-``clip``; 0 for a feature or cell never detected."""
    X = np.asarray(C.todense() if hasattr(C, "todense") else C, dtype=np.float64)
    p = np.outer(t, m)
    np.negative(p, out=p)
    np.expm1(p, out=p)
    np.negative(p, out=p)
    np.clip(p, EDGE, 1.0 - EDGE, out=p)
    X -= p
    p *= 1.0 - p
    np.sqrt(p, out=p)
    X /= p
    X[:, m == 0] = 0.0
    X[t == 0, :] = 0.0
    return np.clip(X, -clip, clip, out=X)
