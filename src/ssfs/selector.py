"""scikit-learn compatible selector wrapping any registered method.

>>> from ssfs import SemiSupervisedSelector
>>> sel = SemiSupervisedSelector("cls", n_features=10).fit(X, y)   # y: -1 / NaN / None = unlabeled
>>> sel.ranking_[:5], sel.transform(X).shape, sel.get_feature_names_out()

``y`` may hold integer codes with -1 for unlabeled samples, or class names (strings;
NaN / None / a missing category = unlabeled; ``unlabeled_values`` adds more, see
:func:`ssfs.labels.encode_labels`); ``classes_`` holds the class names. ``constraints``
(:class:`ssfs.Constraints`, row indices) may be given to ``fit`` instead of, or in
addition to, labels. Passes scikit-learn's ``parametrize_with_checks``
(tests/test_selector.py).

In a Pipeline, ``fit(X, y)`` hands the same ``y`` to every step: the selector uses the
labeled and the unlabeled samples; the next step must itself accept unlabeled samples.
scikit-learn's :class:`~sklearn.semi_supervised.SelfTrainingClassifier` (y = -1 for
unlabeled) is the natural partner; an ordinary classifier would take -1 for a class,
so give it only the labeled rows.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .constraints import Constraints
from .errors import MethodError
from .labels import encode_labels
from .ranking import ranks_from_order
from .registry import get_method
from .runner import run_method


class SemiSupervisedSelector(SelectorMixin, BaseEstimator):
    """Select the ``n_features`` best features according to method ``method``.

    ``n_features``: an int >= 1 (more than the number of features keeps all), a float
    in (0, 1] (that fraction of the features, rounded, at least 1) or ``'all'``;
    anything else is a ValueError at ``fit``. ``params``: the method's parameters.

    Attributes after ``fit``: ``scores_`` (per feature; -inf/inf where undefined),
    ``ranking_`` (1 = best), ``order_`` (feature indices best first),
    ``n_features_`` (number kept), ``classes_`` (class names of the labeled samples),
    ``higher_is_better_``, ``result_`` (the method's full :class:`SelectionResult`),
    ``feature_names_in_`` (when X has string column names).
    """

    def __init__(self, method: str = "cls", n_features=10, params: dict | None = None,
                 random_state: int | None = 0, unlabeled_values=()):
        self.method = method
        self.n_features = n_features
        self.params = params
        self.random_state = random_state
        self.unlabeled_values = unlabeled_values

    def _needs_labels(self) -> bool:
        try:
            return "labels" in get_method(self.method).needs
        except MethodError:
            return False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        tags.target_tags.required = self._needs_labels()
        return tags

    def _n_keep(self, p: int) -> int:
        k = self.n_features
        if isinstance(k, str) and k == "all":
            return p
        if isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_)):
            if k < 1:
                raise MethodError(f"n_features must be an int >= 1, a float in (0, 1] or 'all'; got {k}")
            return min(int(k), p)
        if isinstance(k, numbers.Real) and not isinstance(k, (bool, np.bool_)):
            if not 0.0 < float(k) <= 1.0:
                raise MethodError(
                    f"n_features as a float is a fraction of the features and must be in (0, 1]; got {k}"
                )
            return max(1, int(round(float(k) * p)))
        raise MethodError(f"n_features must be an int >= 1, a float in (0, 1] or 'all'; got {k!r}")

    def fit(self, X, y=None, constraints: Constraints | None = None):
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, ensure_min_samples=2)
        n, p = X.shape
        k = self._n_keep(p)
        if y is None:
            if self._needs_labels():
                raise ValueError(
                    f"{type(self).__name__} with method {self.method!r} requires y to be passed, "
                    "but the target y is None"
                )
            codes, classes = None, np.zeros(0)
        else:
            if not hasattr(y, "cat") and not hasattr(y, "categories") and not hasattr(y, "iloc"):
                y = np.asarray(y)
            codes, classes = encode_labels(y, self.unlabeled_values, n=n)
        params = self.params or {}
        if not isinstance(params, dict):
            raise MethodError(f"params must be a mapping of parameter names to values (a dict), got {params!r}")
        ranked = run_method(self.method, X, codes, constraints, rng=self.random_state, **params)
        if ranked.kind == "extraction":
            raise MethodError(f"{self.method!r} extracts components; it cannot select features")
        self.order_ = ranked.order
        self.scores_ = ranked.scores
        self.higher_is_better_ = ranked.higher_is_better
        self.ranking_ = ranks_from_order(ranked.order, p)
        self.result_ = ranked.result
        self.classes_ = classes
        self.n_features_ = min(k, len(ranked.order))
        msg = ranked.ties_warning(self.n_features_)
        if msg:
            warnings.warn(msg, stacklevel=2)
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "order_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.order_[: self.n_features_]] = True
        return mask
