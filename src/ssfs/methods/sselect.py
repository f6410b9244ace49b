"""sSelect (Zhao & Liu 2007; thesis 2.7.2, eq. 2.8-2.10, Algorithm 2), lower is better."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import sparse

from ..errors import MethodError
from ..params import Bandwidth, Fraction, NonNegFloat, PosInt
from ..registry import register
from ._shared.cls import label_share_of
from ._shared.graph import (
    degree,
    heat_kernel_graph,
    laplacian_quad,
    weighted_sq_sums,
    weighted_sums,
)
from ._shared.invariance import per_distinct_column, with_adaptive_bandwidth
from ._shared.representation import graph_space


def binary_nmi(B: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NMI (eq. 2.10, geometric normalisation I / sqrt(H(a) H(b))) between each column of
    the boolean matrix B (l x p, a 2-cluster indicator per feature) and the labels y
    (length l), for all columns at once. 0 where either partition has one cluster only
    (the indicator then carries no information; sklearn returns 1 only if both do)."""
    classes, yi = np.unique(y, return_inverse=True)
    l = y.size
    Y = sparse.csr_matrix((np.ones(l), (yi, np.arange(l))), shape=(classes.size, l))
    pos = np.asarray(Y @ B.astype(float))  # C x p: counts with indicator True per class
    nc = np.bincount(yi, minlength=classes.size).astype(float)[:, None]
    joint = np.stack([pos, nc - pos]) / l  # 2 x C x p
    pg = joint.sum(axis=1)  # 2 x p
    py = nc / l  # C x 1
    with np.errstate(divide="ignore", invalid="ignore"):
        mi = np.where(joint > 0, joint * np.log(joint / (pg[:, None, :] * py[None, :, :])), 0.0).sum(axis=(0, 1))
        hg = -np.where(pg > 0, pg * np.log(pg), 0.0).sum(axis=0)
    hy = float(-(py * np.log(py)).sum())
    den = np.sqrt(hg * hy)
    return np.where(den > 0, mi / np.where(den > 0, den, 1.0), 0.0)


@register("sselect", higher_is_better=False, needs=("labels",), invariances=with_adaptive_bandwidth(), description=(
    "sSelect (eq. 2.9). Default differs from the papers: eta follows the labels' share (paper: eta=0.1); "
    "PCA graph for single-cell input"))
def sselect_score(X, y, constraints, rng, *, k: PosInt = 10,
                  bandwidth: Bandwidth = "auto",
                  eta: Fraction | Literal["auto"] = "auto", label_weight: NonNegFloat = 10.0,
                  space: Literal["auto", "raw", "pca"] = "auto", n_pcs: PosInt = 50, embedding: Any = None):
    """sSelect (eq. 2.9): eta g^T L g / g^T D g + (1 - eta)(1 - NMI(sign(g), Y_L)).

    g is the F-C transformation of eq. 2.8 (feature centred by its degree-weighted
    mean) on the heat-kernel kNN graph of all samples, so the first term is the
    Laplacian score. sign(g) is taken on the labeled samples, with g = 0 counted as
    negative. ``eta="auto"`` (default; differs from the papers, docs/semi_supervised.md):
    1 - s with s = w l / (w l + n) the share the labels get in CLS's balanced reading
    (each of the l labeled samples weighs as ``label_weight`` w unlabeled ones), so a
    handful of labels no longer outweighs the graph 9 to 1; ``eta=0.1`` is the setting
    the SSFI paper reports for sSelect (its "lambda"). Both terms are losses, so lower is better (Algorithm 2's
    "descending order" contradicts eq. 2.9 and is not followed). ``space``, ``n_pcs``,
    ``embedding``: where the graph is built (PCA for single-cell-like input by default).
    """
    if eta == "auto":
        eta = 1.0 - label_share_of(int((y >= 0).sum()), X.shape[0], label_weight)
    if isinstance(eta, str) or not 0.0 <= float(eta) <= 1.0:
        raise MethodError(f"sselect: eta must be in [0, 1], got {eta}")
    S, _ = heat_kernel_graph(graph_space(X, space, n_pcs, embedding), k=k, bandwidth=bandwidth)
    d = degree(S)
    lab = np.flatnonzero(y >= 0)

    def score(F):  # per feature, on the graph of all: an exact copy scores exactly as the feature
        mu = weighted_sums(F, d) / d.sum()
        cut = (laplacian_quad(S, F) / 2.0) / (weighted_sq_sums(F, d) - mu**2 * d.sum())  # g^T L g / g^T D g
        FL = F[lab]
        FL = FL.toarray() if sparse.issparse(FL) else np.asarray(FL)
        nmi = binary_nmi(FL - mu[None, :] > 0, y[lab])
        return eta * cut + (1.0 - eta) * (1.0 - nmi)

    return per_distinct_column(score, X)
