"""The scikit-learn door: a feature selector wrapping any registered method, and what a grid
search with partial labels needs after it.

* :class:`SemiSupervisedSelector`: ``fit(X, y)`` with -1 (NaN, None) for unlabeled samples;
  the method's parameters are estimator parameters (``SemiSupervisedSelector("cls", k=15)``,
  ``set_params(selector__k=5)`` in a Pipeline, a grid over ``selector__k``).
* :func:`labeled_scorer`: a scorer that scores the labeled samples only (scikit-learn's
  scores count a prediction against -1 as an error).
* :class:`LabeledOnly`: an ordinary classifier fitted on the labeled samples only, so that
  it can follow the selector in a Pipeline.

docs/sklearn.md has the recipe: tuning ``k`` with partial labels.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.metrics import get_scorer
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._docs import doc_params
from .constraints import Constraints
from .errors import MethodError, SupervisionError
from .labels import encode_labels
from .ranking import ranks_from_order
from .registry import get_method
from .runner import run_method, within_batches

#: the selector's own parameters; every other keyword is a parameter of the method
_OWN_PARAMS = frozenset({"method", "n_features", "params", "random_state", "unlabeled_values"})


def _declared_params(method) -> set | None:
    """The parameter names method ``method`` declares (None when it is not registered:
    ``fit`` names the problem)."""
    try:
        return set(get_method(method).defaults)
    except (MethodError, TypeError):
        return None


@doc_params
class SemiSupervisedSelector(SelectorMixin, BaseEstimator):
    """Keep the ``n_features`` best features according to the registered method ``method``.

    A scikit-learn feature selector (``fit``, ``transform``, ``get_support``,
    ``get_feature_names_out``) that passes scikit-learn's estimator checks and uses the
    unlabeled samples of ``y`` too.

    Parameters
    ----------
    {method}
    n_features
        The number of features kept: an int >= 1 (more than the number of features keeps
        all), a float in (0, 1] (that share of the features, rounded, at least 1) or
        ``"all"``; anything else is a ValueError at ``fit``.
    params
        The method's parameters as a dict; for the names the selector itself takes
        (``scanpy_rank_genes``'s ``method``, ``mrmr``'s ``n_features``) the only way.
    {random_state}
    {unlabeled_values}
    **method_params
        The method's parameters as keywords (``SemiSupervisedSelector("cls", k=15)``): they
        are estimator parameters, so ``get_params``, ``set_params``, ``clone`` and grids see
        them (``{"selector__k": [5, 10, 20]}`` in a Pipeline step named ``selector``).
        Checked, like ``params``, at ``fit`` (scikit-learn's rule: ``__init__`` does no work).

    Attributes
    ----------
    scores_ : numpy.ndarray
        The method's score per feature (-inf/inf where undefined; None for subset methods).
    ranking_ : numpy.ndarray
        Rank per feature, 1 = best.
    order_ : numpy.ndarray
        Feature indices, best first.
    n_features_ : int
        The number of features kept.
    classes_ : numpy.ndarray
        The class names of the labeled samples.
    higher_is_better_ : bool
        The direction of ``scores_``.
    result_ : SelectionResult
        The method's full result.
    n_features_in_, feature_names_in_
        As every scikit-learn estimator (names when X has string column names).

    See Also
    --------
    labeled_scorer : score a grid search on the labeled samples only.
    LabeledOnly : an ordinary classifier after the selector, fitted on the labeled samples.

    Notes
    -----
    In a Pipeline, ``fit(X, y)`` hands the same ``y`` to every step: the selector uses the
    labeled and the unlabeled samples, the next step must accept them too:
    :class:`~sklearn.semi_supervised.SelfTrainingClassifier` (y = -1 for unlabeled), or
    an ordinary classifier wrapped in :class:`LabeledOnly` (an ordinary classifier alone
    would learn -1 as a class). ``constraints`` (:class:`ssfs.Constraints`, row indices)
    may be given to ``fit`` instead of, or besides, labels.

    Examples
    --------
    >>> sel = SemiSupervisedSelector("cls", n_features=20, k=15).fit(X, y)   # y: -1 = unlabeled
    >>> sel.get_feature_names_out(), sel.transform(X).shape
    >>> pipe = Pipeline([("selector", SemiSupervisedSelector("cls")), ("clf", LabeledOnly(LogisticRegression()))])
    >>> GridSearchCV(pipe, {"selector__k": [5, 10, 20]}, scoring=labeled_scorer(),
    ...              cv=StratifiedKFold(3, shuffle=True, random_state=0)).fit(X, y)
    """

    def __init__(self, method: str = "propagate", n_features=10, params: dict | None = None,
                 random_state: int | None = 0, unlabeled_values=(), **method_params):
        self.method = method
        self.n_features = n_features
        self.params = params
        self.random_state = random_state
        self.unlabeled_values = unlabeled_values
        self._method_params = method_params

    def get_params(self, deep: bool = True) -> dict:
        """The estimator's parameters: the selector's own and the method parameters given
        as keywords (``k=15``), so that ``clone`` and grids see them.

        Parameters
        ----------
        deep
            Unused (the selector holds no sub-estimator); kept for scikit-learn.

        Returns
        -------
        dict
            Parameter name -> value.
        """
        out = super().get_params(deep=deep)
        out.update(self.__dict__.get("_method_params", {}))
        return out

    def set_params(self, **params):
        """Set the selector's parameters and the method's (``set_params(k=15)``;
        in a Pipeline ``selector__k``, in a grid ``{"selector__k": [5, 10, 20]}``).

        Parameters
        ----------
        **params
            The selector's own parameters (``method``, ``n_features``, ...) and any
            parameter the method declares (``ssfs methods``); ``method`` is set first, so
            ``set_params(method="laplacian", k=5)`` checks ``k`` against laplacian.

        Returns
        -------
        SemiSupervisedSelector
            The selector itself.
        """
        own = {k: v for k, v in params.items() if k.partition("__")[0] in _OWN_PARAMS}
        super().set_params(**own)
        extra = {k: v for k, v in params.items() if k not in own}
        if extra:
            declared = _declared_params(self.method)
            unknown = sorted(set(extra) - declared) if declared is not None else []
            if unknown:
                raise ValueError(
                    f"Invalid parameter {unknown[0]!r} for estimator {type(self).__name__} with method "
                    f"{self.method!r}. Valid parameters are: {sorted(_OWN_PARAMS)} and the method's: "
                    f"{sorted(declared)}"
                )
            self._method_params = {**self.__dict__.get("_method_params", {}), **extra}
        return self

    def __getattr__(self, name):
        """Method parameters given as keywords read as attributes (``sel.k``)."""
        given = self.__dict__.get("_method_params") or {}
        if name in given:
            return given[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _all_method_params(self) -> dict:
        """``params`` and the keyword method parameters together; one name given both ways
        with two values is a MethodError."""
        params = self.params if self.params is not None else {}
        if not isinstance(params, dict):
            raise MethodError(f"params must be a mapping of parameter names to values (a dict), got {params!r}")
        given = self.__dict__.get("_method_params") or {}
        clash = sorted(k for k in set(params) & set(given) if params[k] is not given[k] and params[k] != given[k])
        if clash:
            raise MethodError(
                f"parameter {clash[0]!r} is given twice: params[{clash[0]!r}]={params[clash[0]]!r} and "
                f"{clash[0]}={given[clash[0]]!r}; give it once"
            )
        return {**params, **given}

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

    @doc_params
    def fit(self, X, y=None, constraints: Constraints | None = None, batch=None):
        """Run the method on ``X`` (all samples, labeled or not) and keep its best features.

        Parameters
        ----------
        X
            The samples x features matrix (array, DataFrame or scipy.sparse).
        {y}
            None: label-free methods only.
        {constraints}
        batch
            Every sample's batch (one value per sample), or None: samples are compared within
            batches (:func:`ssfs.runner.within_batches`). A fit parameter, so a
            :class:`~sklearn.pipeline.Pipeline` passes it as ``selector__batch=...`` and
            cross-validation cuts it with the samples.

        Returns
        -------
        SemiSupervisedSelector
            The fitted selector.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, ensure_min_samples=2)
        n, p = X.shape
        k = self._n_keep(p)
        if y is None:
            if self._needs_labels():
                raise ValueError(
                    f"{type(self).__name__} with method {self.method!r} requires y to be passed, "
                    "but the target y is None"
                )
            labels, classes = None, np.zeros(0)
        else:
            if not hasattr(y, "cat") and not hasattr(y, "categories") and not hasattr(y, "iloc"):
                y = np.asarray(y)
            labels = encode_labels(y, self.unlabeled_values, n=n)
            classes = labels.classes
        X, params = within_batches(self.method, X, self._all_method_params(), batch)
        ranked = run_method(self.method, X, labels, constraints, rng=self.random_state, **params)
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


@doc_params
def labeled_mask(y, unlabeled_values=()) -> np.ndarray:
    """Which samples of ``y`` are labeled (-1, NaN, None or a value of ``unlabeled_values``
    = unlabeled, :func:`ssfs.labels.encode_labels`).

    Parameters
    ----------
    y
        Labels: integer codes, class names, a Series or a Categorical.
    {unlabeled_values}

    Returns
    -------
    numpy.ndarray
        Boolean, True where the sample is labeled.
    """
    if not hasattr(y, "cat") and not hasattr(y, "categories") and not hasattr(y, "iloc"):
        y = np.asarray(y)
    return encode_labels(y, unlabeled_values)[0] >= 0


def _labeled_rows(X, y, unlabeled_values, what: str):
    """(X, y, mask) of the labeled samples (DataFrames and sparse rows kept as they are);
    none labeled is a SupervisionError naming ``what``."""
    if not hasattr(y, "iloc") and not hasattr(y, "categories"):
        y = np.asarray(y)
    if sparse.issparse(X):
        X = X.tocsr()  # rows of every sparse format (DIA, COO ... cannot be indexed)
    elif not hasattr(X, "iloc"):
        X = np.asarray(X)
    keep = labeled_mask(y, unlabeled_values)
    if not keep.any():
        raise SupervisionError(
            f"{what}: no labeled sample among the {keep.size} given (all -1 / NaN / None); with partial labels "
            "use StratifiedKFold on y (the unlabeled samples as one group) so that every fold holds labels"
        )
    return _safe_indexing(X, keep), _safe_indexing(y, keep), keep


class LabeledScorer:
    """A scorer that scores on the labeled samples only (see :func:`labeled_scorer`)."""

    def __init__(self, scoring="accuracy", unlabeled_values=()):
        self.scoring = scoring
        self.unlabeled_values = unlabeled_values

    def __call__(self, estimator, X, y, **kwargs):
        X, y_lab, keep = _labeled_rows(X, y, self.unlabeled_values, f"scoring {self.scoring!r}")
        n = keep.size
        kwargs = {k: (_safe_indexing(v, keep) if hasattr(v, "__len__") and len(v) == n else v)
                  for k, v in kwargs.items()}  # sample_weight and other per-sample metadata
        return get_scorer(self.scoring)(estimator, X, y_lab, **kwargs)

    def __repr__(self) -> str:
        extra = f", unlabeled_values={self.unlabeled_values!r}" if len(self.unlabeled_values) else ""
        return f"labeled_scorer({self.scoring!r}{extra})"


@doc_params
def labeled_scorer(scoring="accuracy", unlabeled_values=()) -> LabeledScorer:
    """A scikit-learn scorer that ignores the unlabeled samples of ``y``.

    scikit-learn scores every sample of a test fold, so with partial labels (-1 for
    unlabeled) a grid search scores predictions against the -1 entries, which no
    classifier predicts: a model that is always right on the labeled samples gets the
    share of labeled samples as its score. This scorer drops the unlabeled samples first.

    Parameters
    ----------
    scoring
        A scikit-learn scorer name (``"accuracy"``, ``"balanced_accuracy"``,
        ``"f1_macro"`` ...) or a scorer callable ``(estimator, X, y)``.
    {unlabeled_values}

    Returns
    -------
    LabeledScorer
        A picklable callable ``(estimator, X, y) -> float`` for ``GridSearchCV(scoring=...)``,
        ``cross_val_score`` or a dict of several scorers. A test fold without any labeled
        sample is a :class:`~ssfs.errors.SupervisionError` (use ``StratifiedKFold`` on ``y``).

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV, StratifiedKFold
    >>> grid = GridSearchCV(pipe, {"selector__k": [5, 10, 20]}, scoring=labeled_scorer("accuracy"),
    ...                     cv=StratifiedKFold(3, shuffle=True, random_state=0))
    """
    return LabeledScorer(scoring, unlabeled_values)


@doc_params
class LabeledOnly(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """An ordinary classifier fitted on the labeled samples only, for a Pipeline whose ``y``
    holds unlabeled samples (the selector before it uses them all).

    Parameters
    ----------
    estimator
        A scikit-learn classifier; a clone is fitted on the labeled rows (``estimator_``).
    {unlabeled_values}

    Attributes
    ----------
    estimator_
        The fitted clone.
    classes_
        Its classes (the labeled ones only: never -1).

    Notes
    -----
    ``predict``, ``predict_proba``, ``decision_function`` and ``predict_log_proba``
    delegate to ``estimator_``; ``score`` is the accuracy on the labeled samples of ``y``.

    Examples
    --------
    >>> pipe = make_pipeline(SemiSupervisedSelector("cls", n_features=20), LabeledOnly(LogisticRegression()))
    >>> pipe.fit(X, y)           # y: -1 for unlabeled samples; the selector sees them all
    >>> pipe.score(X_test, y_test)  # accuracy on the labeled test samples
    """

    def __init__(self, estimator, unlabeled_values=()):
        self.estimator = estimator
        self.unlabeled_values = unlabeled_values

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        return tags

    def fit(self, X, y, **fit_params):
        """Fit a clone of ``estimator`` on the labeled samples of ``(X, y)``."""
        validate_data(self, X, y, accept_sparse=True, dtype=None, ensure_all_finite=False)
        X_lab, y_lab, keep = _labeled_rows(X, y, self.unlabeled_values, type(self).__name__)
        fit_params = {k: (_safe_indexing(v, keep) if hasattr(v, "__len__") and len(v) == keep.size else v)
                      for k, v in fit_params.items()}
        self.estimator_ = clone(self.estimator).fit(X_lab, y_lab, **fit_params)
        self.classes_ = self.estimator_.classes_
        return self

    def _delegate(self, name: str, X):
        check_is_fitted(self, "estimator_")
        validate_data(self, X, accept_sparse=True, dtype=None, ensure_all_finite=False, reset=False)
        return getattr(self.estimator_, name)(X)

    def predict(self, X):
        return self._delegate("predict", X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X):
        return self._delegate("predict_proba", X)

    @available_if(lambda self: hasattr(self.estimator, "predict_log_proba"))
    def predict_log_proba(self, X):
        return self._delegate("predict_log_proba", X)

    @available_if(lambda self: hasattr(self.estimator, "decision_function"))
    def decision_function(self, X):
        return self._delegate("decision_function", X)

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labeled samples of ``(X, y)`` (unlabeled ones ignored)."""
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        return LabeledScorer("accuracy", self.unlabeled_values)(self, X, y, **kw)
