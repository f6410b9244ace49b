"""Constrained clustering without feature selection (thesis 4.4.5, Table 4.3): COP-KMeans,
MPC-KMeans and wCKM, each unconstrained and with the constraints of a few labeled samples,
scored by the Rand index on the held-out samples (those in no constraint, directly or
transitively: with constraints = all pairs of the labeled samples, the unlabeled ones).

Choices: ``labeled_per_class`` samples per class drawn at random (3: Table 3.3's "S");
every pair among them is a constraint; K = number of classes; COP-KMeans keeps its best
feasible restart of ``n_init``; MPC-KMeans as :func:`ssfs.experiment.mpc_kmeans.mpc_kmeans`
with ``n_init`` runs; wCKM's clustering = argmax memberships of its best run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import rand_score

from ..constraints import Constraints
from ..errors import SupervisionError
from ..methods._shared.clustering import cop_kmeans
from ..methods.wckm import wckm
from .mpc_kmeans import mpc_kmeans

ALGORITHMS = ("cop_kmeans", "mpc_kmeans", "wckm")


def scaled_penalty(X) -> float:
    """A scale-free wCKM constraint penalty: the median squared distance of a sample to the data's
    mean under wCKM's starting weights (uniform 1/p, so w^beta = p^0.1 at beta = -0.1). Eq. 4.4's
    weight 1 is negligible beside weighted distances of 10^6-10^9 on raw pixels or counts."""
    Xd = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    return float(np.median(((Xd - Xd.mean(axis=0)) ** 2).sum(axis=1) * Xd.shape[1] ** 0.1))


def _cluster(name: str, X, K: int, cons: Constraints, y_lab: np.ndarray, rng, n_init: int,
             wckm_penalty: float = 1.0) -> np.ndarray:
    if name == "cop_kmeans":
        return cop_kmeans(X, K, cons, rng, n_init=n_init)
    if name == "mpc_kmeans":
        return mpc_kmeans(X, K, cons, rng, n_init=n_init)

    return wckm(X, y_lab, cons, rng, n_clusters=K, n_init=n_init, penalty=wckm_penalty).extra["clusters"]


def compare_constrained(X, y, rng: np.random.Generator, *, labeled_per_class: int = 3,
                        algorithms=ALGORITHMS, n_init: int = 3, labeled=None,
                        wckm_penalty: float | str = 1.0) -> pd.DataFrame:
    """Tidy table (algorithm, setting = "unconstrained" | "constrained", rand, n_heldout,
    n_constraints): Rand index (eq. 3.32) of each clustering on the held-out samples.
    ``labeled``: the labeled samples (indices; the workflow's repetition), else
    ``labeled_per_class`` drawn per class. ``wckm_penalty``: eq. 4.4's constraint weight (1) or
    ``"scaled"`` (:func:`scaled_penalty`)."""
    y = np.asarray(y)
    classes = np.unique(y[y >= 0])
    K = classes.size
    y_lab = np.full(y.size, -1)
    if labeled is not None:
        idx = np.asarray(labeled, dtype=np.int64)
        y_lab[idx] = np.searchsorted(classes, y[idx])
    for c in classes if labeled is None else []:
        idx = rng.choice(np.flatnonzero(y == c), size=min(labeled_per_class, int((y == c).sum())), replace=False)
        y_lab[idx] = np.searchsorted(classes, c)
    cons = Constraints.from_labels(y_lab)
    held = np.ones(y.size, dtype=bool)
    held[cons.transitive_closure(y.size).samples()] = False
    held[y < 0] = False  # a sample without a class cannot be scored
    pen = scaled_penalty(X) if wckm_penalty == "scaled" else float(wckm_penalty)
    rows = []
    for name in algorithms:
        for setting, c in (("unconstrained", Constraints.empty()), ("constrained", cons)):
            seed = int(rng.integers(2**31 - 1))
            try:
                labels = _cluster(name, X, K, c, y_lab, np.random.default_rng(seed), n_init, pen)
            except SupervisionError:  # COP-KMeans: no restart satisfied the constraints
                labels = None
            # None also when every restart ended non-finite: no value (not seen since MPC-KMeans' metric floor)
            rand = float("nan") if labels is None else float(rand_score(y[held], labels[held]))
            rows.append(dict(algorithm=name, setting=setting, rand=rand, n_heldout=int(held.sum()),
                             n_constraints=len(cons)))
    return pd.DataFrame(rows)
