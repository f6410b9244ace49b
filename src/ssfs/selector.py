"""scikit-learn compatible selector wrapping any registered method.

>>> from ssfs.selector import SemiSupervisedSelector
>>> sel = SemiSupervisedSelector("cls", n_features=10).fit(X, y)   # y: -1 = unlabeled
>>> sel.ranking_[:5], sel.transform(X).shape

``constraints`` may be given to ``fit`` instead of (or in addition to) labels.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from .constraints import Constraints
from .ranking import ranks_from_order
from .runner import run_method


class SemiSupervisedSelector(SelectorMixin, BaseEstimator):
    """Select the ``n_features`` best features according to method ``method``.

    Attributes after ``fit``: ``scores_`` (per feature; NaN where undefined),
    ``ranking_`` (1 = best), ``order_`` (feature indices best first),
    ``higher_is_better_``, ``result_`` (the method's full :class:`SelectionResult`).
    """

    def __init__(self, method: str = "cls", n_features: int = 10, params: dict | None = None,
                 random_state: int | None = 0):
        self.method = method
        self.n_features = n_features
        self.params = params
        self.random_state = random_state

    def fit(self, X, y=None, constraints: Constraints | None = None):
        ranked = run_method(self.method, X, y, constraints, rng=self.random_state, **(self.params or {}))
        if ranked.kind == "extraction":
            raise ValueError(f"{self.method!r} extracts components; it cannot select features")
        self.n_features_in_ = X.shape[1]
        self.order_ = ranked.order
        self.scores_ = ranked.scores
        self.higher_is_better_ = ranked.higher_is_better
        self.ranking_ = ranks_from_order(ranked.order, X.shape[1])
        self.result_ = ranked.result
        msg = ranked.ties_warning(self.n_features)
        if msg:
            warnings.warn(msg, stacklevel=2)
        return self

    def _get_support_mask(self):
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.order_[: self.n_features]] = True
        return mask
