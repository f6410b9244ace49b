"""Constraint scores (constraint-score paper eq. 1-8; thesis eq. 2.17-2.23), all
lower-is-better: C1/CS1 and C2/CS2 of Zhang et al. (2008), C3 of Zhao et al. (2008)
and C4/SC4 of Kalakech et al. (2011)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import sparse

from ..params import Bandwidth, Fraction, NonNegFloat, OpenFraction, PosFloat, PosInt
from ..registry import register
from ._shared.cls import label_share_of, mean_partner_sums
from ._shared.graph import knn_graph, laplacian_quad, pairs_matrix
from ._shared.invariance import EVERY, GRAPH, per_distinct_column, with_adaptive_bandwidth
from .spectral import laplacian_score
from .supervised import column_variance


def pair_sq_sum(pairs, X):
    """sum over the (unordered) pairs of (f_i - f_j)^2, for every feature (sparse, vectorized).
    Over the pairs' samples only, dense features shifted by their first value: a feature
    constant over those samples then sums to exactly 0 (its cs1 is 0/0, undefined, ranked
    last) instead of a round-off residue of either sign (+-7e-15, which ranked it first)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if not pairs.size:
        return np.zeros(X.shape[1])
    idx, inv = np.unique(pairs, return_inverse=True)
    Xs = X[idx]
    if not sparse.issparse(Xs):
        Xs = np.asarray(Xs, dtype=float)
        Xs = Xs - Xs[0]
    return np.maximum(laplacian_quad(pairs_matrix(inv.reshape(-1, 2), idx.size), Xs) / 2.0, 0.0)


def ml_cl_sums(constraints, X) -> tuple[np.ndarray, np.ndarray]:
    """(sum_ML, sum_CL) of (f_i - f_j)^2 for every feature. From labels in closed form
    (issue 16; O(n p), no pairs): over the pairs of class c, n_c S2_c - S1_c^2; over all
    labeled pairs L S2 - S1^2, of which the cannot-link sum is the rest."""
    y = getattr(constraints, "labels", None)
    if y is None:
        return pair_sq_sum(constraints.ml, X), pair_sq_sum(constraints.cl, X)
    lab = np.flatnonzero(y >= 0)
    if lab.size < 2:
        return np.zeros(X.shape[1]), np.zeros(X.shape[1])
    codes = y[lab]
    H = sparse.csr_matrix((np.ones(lab.size), (codes, np.arange(lab.size))), shape=(int(codes.max()) + 1, lab.size))
    XL = X[lab]
    if not sparse.issparse(XL):  # shifted: constant over the labeled samples -> exactly 0 (pair_sq_sum)
        XL = np.asarray(XL, dtype=float)
        XL = XL - XL[0]
    S1 = H @ XL
    S2 = H @ (XL.multiply(XL) if sparse.issparse(XL) else XL * XL)
    S1 = S1.toarray() if sparse.issparse(S1) else np.asarray(S1)
    S2 = S2.toarray() if sparse.issparse(S2) else np.asarray(S2)
    nc = np.bincount(codes).astype(float)[:, None]
    ml = np.maximum((nc * S2 - S1**2).sum(axis=0), 0.0)
    allp = np.maximum(lab.size * S2.sum(axis=0) - S1.sum(axis=0) ** 2, 0.0)
    return ml, np.maximum(allp - ml, 0.0)


@register("cs1", higher_is_better=False, needs=("cannot_link",), invariances=EVERY, description=(
    "Constraint score 1 (eq. 2.17). Labels only; from labels it ranks as fisher (balanced classes; simulation at "
    "1 % labels 0.34 = fisher, laplacian 0.63): it cannot beat the labels-only baseline"))
def constraint_score_1(X, y, constraints, rng):
    """Constraint score 1 (eq. 2.17): sum_ML (f_i - f_j)^2 / sum_CL (f_i - f_j)^2.

    Labels only: no unlabeled sample enters. With constraints from labels it is a
    function of the Fisher ratio B/W on the labeled samples; for K balanced classes
    exactly 1 / (K B/W + K - 1), so it ranks as ``fisher`` does
    (docs/semi_supervised.md, "cs1 and Fisher"); it cannot beat the labels-only baseline."""
    def score(F):  # per feature: an exact copy of a feature scores exactly as the feature
        ml, cl = ml_cl_sums(constraints, F)
        return ml / cl

    return per_distinct_column(score, X)


_CS2 = ("Constraint score 2 (eq. 2.18). Labels only; default scale='constrained' divides it by each feature's "
        "variance over the constrained samples and then ranks as fisher (balanced classes); the literal difference "
        "(scale='none') prefers low-variance features")


def scaled_difference(ml, cl, X, constraints, *, lam: float, scale: str) -> np.ndarray:
    """eq. 2.18's sum_ML - lam * sum_CL per unit of each feature's variance (``scale``):
    over the constrained samples ("constrained"), over all samples ("all") or not at all
    ("none", the literal score). The literal difference is not scale-invariant (the paper
    min-max normalises every feature first, Section 4.1): from all pairs of K balanced
    classes it is n^2 ((1 + lam) W / K - lam T) (W: mean within-class, T: total variance),
    which ranks low-variance features first. Divided by T it is a function of W / T, i.e.
    of the Fisher ratio. "all" takes T over unlabeled samples too, but on sparse counts a
    gene unexpressed in the few labeled cells then scores W = 0 and ranks first.
    Constant features are undefined (NaN, ranked last)."""
    diff = ml - lam * cl
    if scale == "none":
        return diff
    var = column_variance(X if scale == "all" else X[constraints.samples()])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, diff / np.where(var > 0, var, 1.0), np.nan)


def _cs2_invariances(params: dict) -> frozenset:
    """cs2 per unit of variance keeps every invariance; the literal difference (``scale="none"``)
    grows with the square of a feature's scale, so only a common scale keeps its ranking."""
    return EVERY if params.get("scale") != "none" else EVERY - {"scale"}


@register("cs2", higher_is_better=False, needs=("constraints",), invariances=_cs2_invariances, description=_CS2)
def constraint_score_2(X, y, constraints, rng, *, lam: OpenFraction = 0.1,
                       scale: Literal["constrained", "all", "none"] = "constrained"):
    """Constraint score 2 (eq. 2.18): sum_ML (f_i - f_j)^2 - lam * sum_CL (f_i - f_j)^2,
    per unit of the feature's variance by default (``scale``, :func:`scaled_difference`).
    Labels only, like cs1 (unlabeled samples enter only with ``scale="all"``)."""
    def score(F):  # per feature: an exact copy of a feature scores exactly as the feature
        ml, cl = ml_cl_sums(constraints, F)
        return scaled_difference(ml, cl, F, constraints, lam=lam, scale=scale)

    return per_distinct_column(score, X)


def within_class_graph(X, constraints, *, k: int = 10, gamma: float = 100.0):
    """S^W of eq. 5: gamma on must-link pairs; 1 on kNN edges (i in kNN(j) or j in kNN(i))
    touching at least one unconstrained sample; 0 otherwise."""
    n = X.shape[0]
    A = knn_graph(X, k=k).tocoo()
    free = constraints.unconstrained(n)
    W = sparse.csr_matrix(((free[A.row] | free[A.col]).astype(float), (A.row, A.col)), shape=(n, n))
    if constraints.n_ml:
        M = pairs_matrix(constraints.ml, n)
        W = W - W.multiply(M) + gamma * M  # an ML pair gets gamma whatever else holds
    W.eliminate_zeros()
    return W.tocsr()


@register("c3", higher_is_better=False, needs=("cannot_link",), invariances=GRAPH | {"unit"})
def constraint_score_3(X, y, constraints, rng, *, k: PosInt = 10, gamma: PosFloat = 100.0):
    """Constraint score C3 (Zhao et al. 2008; constraint-score paper eq. 5-6):
    f^T L^W f / f^T L^C f with the within-class graph S^W (eq. 5: gamma on must-link
    pairs, 1 on kNN edges touching an unconstrained sample) over the cannot-link graph."""
    if getattr(constraints, "labels", None) is not None:  # from labels: no pair built (O(n p))
        return _c3_from_labels(X, constraints, k=k, gamma=gamma)
    W = within_class_graph(X, constraints, k=k, gamma=gamma)
    return laplacian_quad(W, X) / (2.0 * pair_sq_sum(constraints.cl, X))


def _c3_from_labels(X, constraints, *, k: int, gamma: float) -> np.ndarray:
    """C3 with constraints from labels, in closed form: S^W's kNN edges touch an unconstrained
    sample and its must-link pairs join two labeled samples, so f^T L^W f is the kNN edges' sum
    plus gamma times the must-link sum of :func:`ml_cl_sums` (per-class sums; 20,000 labeled
    samples would otherwise build 2 x 10^8 pairs)."""
    n = X.shape[0]
    A = knn_graph(X, k=k).tocoo()
    free = constraints.unconstrained(n)
    touch = free[A.row] | free[A.col]
    W = sparse.csr_matrix((np.ones(int(touch.sum())), (A.row[touch], A.col[touch])), shape=(n, n))
    ml, cl = ml_cl_sums(constraints, X)
    return (laplacian_quad(W, X) / 2.0 + gamma * ml) / cl


_C4 = ("C4/SC4 = Laplacian score x C1 (eq. 7). Default differs from the paper: LS^(1-s) C1^s, s the labels' share "
       "as in cls (weights=balanced): simulation at 1 % labels 0.66 of planted markers vs laplacian 0.63, fisher 0.34; "
       "the paper's product (weights=literal) 0.60, ahead only from ~20 labels per type (docs/methods.md)")


def c1_balanced(X, constraints) -> tuple[np.ndarray, int]:
    """C1 with one term per constrained sample (the balanced CLS's label terms,
    :func:`ssfs.methods._shared.cls.mean_partner_sums`): (mean over samples of the mean squared
    difference to their must-link partners) / (the same over cannot-link partners), about 1
    for a feature without class structure; and the number of samples with a must-link partner."""
    M, C, n_m, n_c = mean_partner_sums(X, constraints)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (M / max(n_m, 1)) / (C / max(n_c, 1)), n_m


@register("sc4", higher_is_better=False, needs=("cannot_link",), invariances=with_adaptive_bandwidth(),
          description=_C4)  # an alias: registered after c4, whose parameter texts (c4.weights) it shows
@register("c4", higher_is_better=False, needs=("cannot_link",), invariances=with_adaptive_bandwidth(), description=_C4)
def constraint_score_4(X, y, constraints, rng, *, k: PosInt = 10,
                       bandwidth: Bandwidth = "auto",
                       space: Literal["auto", "raw", "pca"] = "auto", n_pcs: PosInt = 50, embedding: Any = None,
                       weights: Literal["balanced", "literal"] = "balanced", label_weight: NonNegFloat = 10.0,
                       label_share: Fraction | None = None):
    """Constraint score C4 / SC4 (Kalakech et al. 2011; constraint-score paper eq. 7,
    thesis eq. 2.23): Laplacian score x C1. The Laplacian score uses the shared sparse
    heat-kernel kNN graph (He et al. 2005) rather than the dense all-pairs kernel of
    eq. 8; ``bandwidth`` is its heat-kernel parameter (eq. 8's 2 t^2); ``space``, ``n_pcs``,
    ``embedding``: where that graph is built (:func:`ssfs.methods.spectral.laplacian_score`).

    ``weights="literal"``: the paper's product LS x C1, which gives the few labels' C1 the same
    weight as the graph: with one label per class C1 = 0 for every feature (no must-link pair)
    and with 3 per class it is noise. ``weights="balanced"`` (default) is the weighted geometric
    mean LS^(1-s) x C1^s with C1 per constrained sample (:func:`c1_balanced`) and s the labels'
    share of cls (``label_weight``: s = w m / (w m + n), m samples with a must-link partner; or
    ``label_share``): s = 0 without a must-link pair (the Laplacian score), and the literal
    product ranks as s = 1/2 (for balanced classes)."""
    ls = laplacian_score(X, y, constraints, rng, k=k, bandwidth=bandwidth, space=space, n_pcs=n_pcs,
                         embedding=embedding)
    if weights == "literal":
        return ls * constraint_score_1(X, y, constraints, rng)
    c1, n_m = c1_balanced(X, constraints)
    s = label_share_of(n_m, X.shape[0], label_weight) if label_share is None else float(label_share)
    if n_m == 0 or s == 0.0:
        return ls
    with np.errstate(divide="ignore", invalid="ignore"):
        return ls ** (1.0 - s) * c1**s
