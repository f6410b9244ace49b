"""Bagging constraint score, BCS (Sun & Zhang 2010; thesis 2.7.5, Algorithm 5; "BS" in
the EnsCLS paper), lower is better."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import MethodError, SupervisionError
from ..params import OpenFraction, PosInt
from ..ranking import ROUND_OFF, rank_matrix
from ..registry import SelectionResult, register
from ._shared.graph import weighted_pair_sums
from ._shared.invariance import EVERY, of_rankers
from .constraint_score import scaled_difference


def _bootstrap_counts(k: int, n_bags: int, rng: np.random.Generator) -> np.ndarray:
    """n_bags x k multiplicities of a bootstrap sample of k items (with replacement)."""
    if k == 0:
        return np.zeros((n_bags, 0))
    draws = rng.integers(0, k, size=(n_bags, k))
    return np.stack([np.bincount(d, minlength=k) for d in draws]).astype(float)


def _mean_rank(scores: np.ndarray) -> np.ndarray:
    """Aggregate a B x p score matrix (lower better) into the mean 1-based rank per feature
    (features with an undefined score in a bag rank last there)."""
    return rank_matrix(scores, higher_is_better=False, rtol=ROUND_OFF).mean(axis=0)


@register("bcs", higher_is_better=False, needs=("constraints",),
          invariances=lambda prm: of_rankers(EVERY - {"samples"}, [(prm["base"], {"scale": prm["scale"]})]),
          description=(
    "Bagging constraint score (Algorithm 5). Labels only (bootstraps of cs1): follows fisher (simulation at 1 % "
    "labels 0.38, fisher 0.34, laplacian 0.63); it reads no unlabeled sample"))
def bagging_constraint_score(X, y, constraints, rng, *, n_bags: PosInt = 100, base: Literal["cs1", "cs2"] = "cs1",
                             lam: OpenFraction = 0.1, scale: Literal["constrained", "all", "none"] = "constrained"):
    """Bagging constraint score (Algorithm 5): ``n_bags`` bootstrap resamples of the
    must-link and of the cannot-link set (with replacement; a pair drawn twice counts
    twice), the constraint score ``base`` ("cs1", eq. 2.17, or "cs2", eq. 2.18 with
    ``lam`` and ``scale``: :func:`~ssfs.methods.constraint_score.scaled_difference`) on
    each, and the mean of the per-bag feature ranks as the aggregate (lower is better).
    Algorithm 5 combines classifiers by majority vote; a filter needs one ranking, hence
    mean-rank aggregation.
    """
    if base not in ("cs1", "cs2"):
        raise MethodError(f"bcs: base must be 'cs1' or 'cs2', got {base!r}")
    if base == "cs1" and constraints.n_cl == 0:
        raise SupervisionError("bcs with base cs1 needs cannot-link constraints but none were given")
    if not 0.0 < lam < 1.0:
        raise MethodError(f"bcs: lam must be in (0, 1), got {lam}")
    if int(n_bags) < 1:
        raise MethodError(f"bcs: n_bags must be >= 1, got {n_bags}")
    n_bags = int(n_bags)
    c_ml = _bootstrap_counts(constraints.n_ml, n_bags, rng)
    c_cl = _bootstrap_counts(constraints.n_cl, n_bags, rng)
    ml = weighted_pair_sums(X, constraints.ml, c_ml)
    cl = weighted_pair_sums(X, constraints.cl, c_cl)
    with np.errstate(divide="ignore", invalid="ignore"):
        bag_scores = ml / cl if base == "cs1" else scaled_difference(ml, cl, X, constraints, lam=lam, scale=scale)
    return SelectionResult(scores=_mean_rank(bag_scores), extra={"n_bags": n_bags, "base": base})
