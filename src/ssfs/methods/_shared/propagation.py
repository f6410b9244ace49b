"""Labels spread over a kNN graph into class memberships (sparse; never an n x n dense matrix).

* :func:`spread`: local and global consistency (Zhou et al. 2004): the fixed point
  F* = (1 - alpha) (I - alpha S)^-1 Y of their iteration F <- alpha S F + (1 - alpha) Y (eq. 1-2,
  Theorem: eq. 4), S = D^-1/2 W D^-1/2; solved by conjugate gradients (I - alpha S is symmetric
  positive definite for alpha < 1), all classes at once.
* :func:`harmonic`: the harmonic function of Zhu, Ghahramani & Lafferty 2003 (eq. 5):
  f_u = (D_uu - W_uu)^-1 W_ul f_l, labeled rows clamped; unlabeled samples with no path to a
  labeled one get no mass.
* :func:`class_mass_normalize`: Zhu et al.'s class mass normalisation (section 4): class c's
  column scaled so that its total mass is the class's prior q_c before taking the argmax.
* :func:`held_out_agreement`: how well a graph carries the labels, measured on the labeled
  samples themselves: each fold of them is hidden, spread from the others and compared
  (the share agreeing, against the share two random labeled samples agree by chance).
* :func:`unreached_groups`: "none of these": within the samples a class claims, those the
  labels reach far less than the class's own (a bimodal reach, the low mode free of labels:
  with many labels, holding under 5 % of them) form a group of their own, so a type nobody
  labeled is not forced into a labeled class; :func:`reach_floor`, how little the class's own
  labels are reached when held out; :func:`joined_unreached`, the parts of one such type joined.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ...errors import MethodError
from . import kernels
from .populations import smallest_population

PROPAGATIONS = ("spread", "harmonic")
CLASS_MASS = ("uniform", "labeled", "none")


def one_hot_labels(y: np.ndarray, n_classes: int, weight=None) -> np.ndarray:
    """n x K seeds: ``weight`` (default 1) at (i, y_i) for labeled i, 0 elsewhere."""
    Y = np.zeros((y.size, n_classes))
    lab = np.flatnonzero(y >= 0)
    Y[lab, y[lab]] = 1.0 if weight is None else np.asarray(weight, dtype=float)[lab]
    return Y


#: most conjugate-gradient iterations of a spread
CG_MAXITER = 2000


def block_cg(matvec, B: np.ndarray, *, tol: float = 1e-6, maxiter: int = CG_MAXITER) -> np.ndarray:
    """Solve M X = B for a symmetric positive definite M given as ``matvec`` (n x K -> n x K),
    conjugate gradients on every column at once (one sparse product per iteration); stops
    when every column's residual is below ``tol`` times its right-hand side."""
    X = np.zeros_like(B)
    R = B.copy()
    Pd = R.copy()
    step = np.empty_like(B)  # the products below land here: no n x K array allocated per iteration
    rr = np.einsum("ij,ij->j", R, R)
    stop = (tol**2) * np.maximum(rr, 1e-300)
    for _ in range(int(maxiter)):
        if (rr <= stop).all():
            break
        MP = matvec(Pd)
        pmp = np.einsum("ij,ij->j", Pd, MP)
        a = np.divide(rr, pmp, out=np.zeros_like(rr), where=pmp > 0)
        X += np.multiply(Pd, a, out=step)
        R -= np.multiply(MP, a, out=step)
        rr_new = np.einsum("ij,ij->j", R, R)
        b = np.divide(rr_new, rr, out=np.zeros_like(rr), where=rr > 0)
        np.add(R, np.multiply(Pd, b, out=Pd), out=Pd)  # Pd = R + Pd b, in place
        rr = rr_new
    return X


def spread(W, Y: np.ndarray, alpha: float = 0.99, *, tol: float = 1e-6) -> np.ndarray:
    """Local and global consistency (Zhou, Bousquet, Lal, Weston & Schölkopf 2004, eq. 4).

    Parameters
    ----------
    W
        Symmetric non-negative affinities, n x n, sparse (never densified).
    Y
        n x K seeds (one-hot rows of the labeled samples, zero rows elsewhere).
    alpha
        In (0, 1): the weight of the neighbours against the seed (eq. 1-2).
    tol
        Relative residual of the conjugate gradients.

    Returns
    -------
    numpy.ndarray
        F = (1 - alpha) (I - alpha S)^-1 Y with S = D^-1/2 W D^-1/2, the limit of the iteration
        F <- alpha S F + (1 - alpha) Y; solved by block conjugate gradients (I - alpha S is
        symmetric positive definite). An isolated sample keeps its seed, scaled.
    """
    if not 0.0 < alpha < 1.0:
        raise MethodError(f"alpha must be in (0, 1), got {alpha}")
    W = sparse.csr_matrix(W, dtype=np.float64)
    d = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)
    S = normalized_affinities(W, inv)

    def matvec(P):  # P - alpha (S P), the product's array reused
        SP = S @ P
        return np.subtract(P, np.multiply(SP, alpha, out=SP), out=SP)

    B = (1.0 - alpha) * Y
    if kernels.use_cg_kernel(*B.shape):  # the same loop compiled: the same values
        return kernels.shifted_cg(S, np.ones(S.shape[0]), alpha, B, tol, CG_MAXITER)
    return block_cg(matvec, B, tol=tol)


def normalized_affinities(W: sparse.csr_matrix, inv: np.ndarray) -> sparse.csr_matrix:
    """S = D^-1/2 W D^-1/2 (``inv`` = D^-1/2, 0 for an isolated sample), the same matrix, bit
    for bit and entry for entry, as the product ``diags(inv) @ W @ diags(inv)``: (inv_i w_ij)
    inv_j for every stored entry, zeros dropped, W's own entry order; scaled in place of
    two sparse products (a quarter of a small graph's spread). A W with duplicate entries
    (summed by the products) takes the products."""
    if not W.has_canonical_format:
        return sparse.csr_matrix(sparse.diags(inv) @ W @ sparse.diags(inv))
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    S = sparse.csr_matrix(((inv[rows] * W.data) * inv[W.indices], W.indices.copy(), W.indptr.copy()),
                          shape=W.shape)
    S.eliminate_zeros()
    return S


def harmonic(W, Y: np.ndarray, labeled: np.ndarray, *, tol: float = 1e-6) -> np.ndarray:
    """The harmonic function (Zhu, Ghahramani & Lafferty 2003, eq. 5).

    Parameters
    ----------
    W
        Symmetric non-negative affinities, n x n, sparse.
    Y
        n x K seeds; the rows of the labeled samples are kept (clamped).
    labeled
        Boolean mask of the labeled samples.
    tol
        Relative residual of the conjugate gradients.

    Returns
    -------
    numpy.ndarray
        F with F_l = Y_l and f_u = (D_uu - W_uu)^-1 W_ul f_l (a ridge of 1e-9 of the mean degree
        keeps samples cut off from every label at 0 instead of making the system singular).
    """
    W = sparse.csr_matrix(W, dtype=np.float64)
    lab = np.asarray(labeled, dtype=bool)
    u, l_ = np.flatnonzero(~lab), np.flatnonzero(lab)
    F = Y.astype(np.float64).copy()
    if not u.size:
        return F
    d = np.asarray(W.sum(axis=1)).ravel()
    Wuu = W[u][:, u]
    rhs = np.asarray(W[u][:, l_] @ Y[l_])
    diag = d[u] + 1e-9 * max(float(d.mean()), 1e-300)
    if kernels.use_cg_kernel(*rhs.shape):
        F[u] = kernels.shifted_cg(Wuu, diag, 1.0, rhs, tol, CG_MAXITER)
    else:
        F[u] = block_cg(lambda P: diag[:, None] * P - Wuu @ P, rhs, tol=tol)
    return F


def class_mass_normalize(F: np.ndarray, y: np.ndarray, mode: str = "uniform") -> np.ndarray:
    """Columns of F scaled to total mass q_c (Zhu et al. 2003, section 4): ``"uniform"``
    q_c = 1/K, ``"labeled"`` q_c = the class's share of the labeled samples, ``"none"`` F as is."""
    if mode not in CLASS_MASS:
        raise MethodError(f"class_mass must be one of {CLASS_MASS}, got {mode!r}")
    F = np.maximum(F, 0.0)
    if mode == "none":
        return F
    K = F.shape[1]
    q = np.full(K, 1.0 / K) if mode == "uniform" else np.bincount(y[y >= 0], minlength=K) / max((y >= 0).sum(), 1)
    mass = F.sum(axis=0)
    return F * np.divide(q, mass, out=np.zeros_like(mass), where=mass > 0)


def propagate(W, y: np.ndarray, n_classes: int, *, method: str = "spread", alpha: float = 0.99,
              class_mass: str = "uniform", seed_weight=None) -> np.ndarray:
    """Class scores (n x K) of every sample: :func:`spread` or :func:`harmonic` of the labels
    (seeds weighted by ``seed_weight``), then :func:`class_mass_normalize`."""
    if method not in PROPAGATIONS:
        raise MethodError(f"propagation must be one of {PROPAGATIONS}, got {method!r}")
    Y = one_hot_labels(y, n_classes, seed_weight)
    F = spread(W, Y, alpha) if method == "spread" else harmonic(W, Y, y >= 0)
    return class_mass_normalize(F, y, class_mass)


def held_out_agreement(scores_for, y: np.ndarray, n_classes: int, *, positions=None, folds: int = 5,
                       enough: int | None = None) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(accuracy, chance, predicted, reach): the labeled samples in ``folds`` folds (dealt in the
    order of ``positions``, e.g. :func:`ssfs.methods._shared.signal.canonical_rows`, so that the
    folds do not depend on the sample order; default: index order); each fold's labels are
    hidden and ``scores_for(y_hidden)`` (n x K normalised class scores, e.g. :func:`propagate`
    on a graph, or a whole model refitted without them: no label decides anything about its own
    prediction) predicts them. ``chance`` = sum_c q_c^2 over the labeled classes' shares;
    ``predicted`` (labeled samples, in index order) is -1 where a sample was not held out (the
    only labeled sample of its class is never hidden); ``reach`` (same order) is the log of the
    held-out sample's score for its own class. (nan, nan, ...) when fewer than 2 samples can be
    held out. ``enough``: no fold after the one with which that many samples have been held out
    (their ``predicted`` -1, ``reach`` NaN: not measured); every fold when None."""
    lab = np.flatnonzero(y >= 0)
    pred = np.full(lab.size, -1, dtype=np.int64)
    reach = np.full(lab.size, -np.inf)
    counts = np.bincount(y[lab], minlength=n_classes)
    ok = counts[y[lab]] >= 2  # a class's only label is never hidden: the class would vanish
    if ok.sum() < 2:
        return float("nan"), float("nan"), pred, reach
    key = (lab if positions is None else np.asarray(positions)[lab]).astype(float)
    key[~ok] = np.inf
    fold = np.argsort(np.argsort(key, kind="stable"), kind="stable") % max(2, min(int(folds), int(ok.sum())))
    fold[~ok] = -1
    for f in np.unique(fold[ok]):
        if enough is not None and (pred >= 0).sum() >= enough:
            reach[(fold >= f)] = np.nan
            break
        held = lab[fold == f]
        yy = y.copy()
        yy[held] = -1
        if np.unique(yy[yy >= 0]).size >= 1:
            F = scores_for(yy)[held]
            pred[fold == f] = F.argmax(axis=1)
            with np.errstate(divide="ignore"):
                reach[fold == f] = np.log(F[np.arange(held.size), y[held]])
    share = np.bincount(y[lab][ok], minlength=n_classes) / ok.sum()
    done = pred >= 0
    acc = float((pred[done] == y[lab][done]).mean()) if done.any() else 0.0
    return acc, float((share**2).sum()), pred, reach


def graph_agreement(W, y: np.ndarray, n_classes: int, *, positions=None, folds: int = 5, enough=None, **kw):
    """:func:`held_out_agreement` of the labels spread over the fixed graph W (:func:`propagate`, ``kw``)."""
    return held_out_agreement(lambda yy: propagate(W, yy, n_classes, **kw), y, n_classes,
                              positions=positions, folds=folds, enough=enough)


def otsu(r: np.ndarray) -> tuple[float, float]:
    """(eta, threshold): Otsu's split of the values r maximising the between-part variance,
    eta = between / total (2/pi for a normal distribution, near 1 for two separate modes);
    each part at least 2 % of the values."""
    s = np.sort(r)
    n = s.size
    if n < 20 or s[0] == s[-1]:
        return 0.0, float(s[0]) if n else 0.0
    c = np.cumsum(s)
    i = np.arange(1, n)
    between = i * (n - i) / n * (c[:-1] / i - (c[-1] - c[:-1]) / (n - i)) ** 2
    lo = max(1, n // 50)
    between[: lo - 1] = 0.0
    between[n - 1 - lo:] = 0.0
    j = int(np.argmax(between))
    return float(between[j] / (s.var() * n)), float((s[j] + s[j + 1]) / 2)


#: a class's reach must split with at least this eta (Otsu) to give an unreached group
UNREACHED_ETA = 0.75
#: the low tail of a class's labeled samples: the floor of reach is their held-out reach's lower quantile of this
#: share, and an unreached group's low mode holds fewer labeled samples than this share of them (with up to 20
#: labeled samples: the lowest reach, and none)
LABELED_TAIL = 0.05


def reach_floor(held_reach: np.ndarray, y_labeled: np.ndarray, K: int) -> np.ndarray:
    """Per class, the reach its labeled samples keep when held out, low end: the
    ceil(:data:`LABELED_TAIL` m)-th lowest of its m held-out log reaches (the lowest for m <= 20;
    inf for a class without one). The lowest of hundreds of labels is an outlier's, below which
    nothing falls: with every cell of the other types labeled, a type nobody labeled was then
    never found."""
    floor = np.full(K, np.inf)
    for c in np.unique(y_labeled):
        values = np.asarray(held_reach, dtype=np.float64)[y_labeled == c]
        values = np.sort(values[~np.isnan(values)])  # -inf: never held out; NaN: not measured (``enough``)
        if not values.size:  # none measured: no floor, as for a class's only label
            floor[c] = -np.inf
            continue
        floor[c] = values[int(np.ceil(LABELED_TAIL * values.size)) - 1]
    return floor


#: a group of its own's markers (:func:`joined_unreached`): its features most above the labeled classes' mean
PART_MARKERS = 20
#: two groups of their own are one population when this share of their markers (Jaccard) is common
SHARED_MARKERS = 0.5


def joined_unreached(X, groups: np.ndarray, K: int) -> np.ndarray:
    """``groups`` with the groups of their own (codes >= K, :func:`unreached_groups`) that are one
    population joined: a type nobody labeled is claimed in parts by the labeled classes nearest
    each part, and each part becomes a group. Each part's markers are its :data:`PART_MARKERS`
    features furthest above the mean of the labeled classes' samples (X's units); two parts are
    one when at least :data:`SHARED_MARKERS` of their markers are common (Jaccard index),
    connected components of such pairs. Parts of one type share their markers (Jaccard 0.33-1.0,
    mostly above 0.5, on planted counts), two types nobody labeled do not (0-0.43, mostly below
    0.25); the graph cannot tell them apart (docs/labels_that_count.md, "As labels are added").
    Codes K, K+1, ... in the order of each joined group's first part."""
    extra = int(groups.max(initial=-1)) + 1 - K
    if extra < 2:
        return groups
    H = sparse.csr_matrix((np.ones(groups.size), (np.arange(groups.size), groups)), shape=(groups.size, K + extra))
    sums = H.T @ X
    sums = sums.toarray() if sparse.issparse(sums) else np.asarray(sums)
    sizes = np.bincount(groups, minlength=K + extra).astype(np.float64)
    labeled_mean = sums[:K].sum(axis=0) / max(sizes[:K].sum(), 1.0)
    lift = sums[K:] / np.maximum(sizes[K:], 1.0)[:, None] - labeled_mean[None, :]
    m = min(PART_MARKERS, X.shape[1])
    top = np.argsort(-lift, axis=1, kind="stable")[:, :m]
    member = np.zeros((extra, X.shape[1]), dtype=bool)
    member[np.arange(extra)[:, None], top] = True
    common = member.astype(np.int64) @ member.T.astype(np.int64)
    joined = common / (2 * m - common) >= SHARED_MARKERS
    code = connected_components(sparse.csr_matrix(joined), directed=False)[1] + K  # numbered by first part
    out = groups.copy()
    own = groups >= K
    out[own] = code[groups[own] - K]
    return out


def unreached_groups(F: np.ndarray, y: np.ndarray, *, floor=None, min_size: int | None = None) -> np.ndarray:
    """Group of every sample: its class (argmax of the normalised scores F, labels kept), or
    a new group K, K+1, ... for the unlabeled samples of a class whose log reach (their largest
    score) falls in the low mode of a bimodal reach (Otsu eta >= :data:`UNREACHED_ETA`) that holds
    fewer than :data:`LABELED_TAIL` of the class's labeled samples (none with up to 20 of them), at
    least ``min_size`` unlabeled samples (default: :func:`.populations.smallest_population` of n) and,
    when ``floor`` (per class: the low end of its labeled samples' reach when held out, :func:`reach_floor` of
    :func:`held_out_agreement`'s) is given, a median reach below the class's floor: the low mode is
    reached less than the labeled members of the class were."""
    n, K = F.shape
    g = F.argmax(axis=1)
    lab = y >= 0
    g[lab] = y[lab]
    with np.errstate(divide="ignore"):
        reach = np.log(np.maximum(F.max(axis=1), 1e-300))
    min_size = smallest_population(n) if min_size is None else int(min_size)
    out = g.copy()
    nxt = K
    for c in range(K):  # one test per class
        members = np.flatnonzero(g == c)
        eta, thr = otsu(reach[members])
        low = members[reach[members] < thr]
        few_labeled = lab[low].sum() < max(LABELED_TAIL * lab[members].sum(), 1.0)
        low = low[~lab[low]]
        below = floor is None or (low.size and np.median(reach[low]) < floor[c])
        if eta >= UNREACHED_ETA and low.size >= min_size and few_labeled and below:
            out[low] = nxt
            nxt += 1
    return out
