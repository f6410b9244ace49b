"""Evaluation protocols of a ranking: the tidy long table ``n_features, metric, value``
(the caller adds dataset, variant, method, rep).

For each number of features i of the grid, the top-i features of the ranking are
scored by every requested metric:

- ``accuracy``, ``auc``: a classifier (linear SVM, 1-NN, decision tree, or
  ``e1071_svm``: R's ``e1071::svm`` defaults as the EFSIS authors' code ran it, see
  :func:`e1071_svm`) trained on the training part restricted to the top-i features,
  scored on the test part (EnsCLS paper Alg. 3, SSFI paper Alg. 5, EFSIS paper
  Section 3.2). AUC is binary or one-vs-rest macro; ``auc_direction: auto`` orients
  it as R's ``pROC::auc`` does by default (:func:`macro_auc`).
- ``semisupervised_accuracy``: the constraint-score paper's semi-supervised protocol
  (Section 3.2): COP-KMeans on all training samples in the top-i space with the
  repetition's constraints only, Hungarian matching of clusters to classes
  (``matching``, default the paper's "training samples"), 1-NN on the test part
  (:func:`ssfs.experiment.metrics.semisupervised_accuracy`). ``train_on`` does not apply.
- ``rand``, ``ari``: k-means (``kmeans_init`` = 20 restarts, best objective) on the
  top-i features of all samples, Rand / adjusted Rand index against the classes
  (thesis Tables 3.5 / 4.2; :func:`ssfs.experiment.metrics.clustering_quality`).
- ``red``: redundancy rate (thesis eq. 3.33) of the top-i features on the training
  part (NaN for i = 1); lower is better.

Choices (parameters): features are scaled (``scale``, default min-max as Weka's SMO
does, which the papers used) before the classifier and the clusterings, fitted on
the training part (classifier, COP-KMeans) or on all clustered samples (k-means);
``train_on: all`` trains the classifier on all training samples with their true
labels (the papers' protocol), ``labeled`` only on the labeled ones. Every random
choice of size i derives from ``(seed, i)``, so a result does not depend on the
other sizes of the grid, and all methods of a repetition share the same draws.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from .._checked import load_checked_npy
from ..constraints import Constraints
from ..errors import ConfigError, SupervisionError
from ..io.atomic import write_checked_tsv
from ..io.h5ad import read_prepared
from ..ranking import RankingOrders, read_ranking, tied_cuts
from ..seeding import derive_rng
from .grid import LOWER_IS_BETTER, metric_higher_is_better, n_features_grid  # noqa: F401 (re-exported)
from .linear_svm import LinearSVM
from .metrics import clustering_quality, redundancy_rate, semisupervised_accuracy
from .splits import read_split

CLASSIFIERS = ("svm", "knn1", "tree", "e1071_svm")
AUC_DIRECTIONS = ("fixed", "auto")
CLASSIFIER_METRICS = ("accuracy", "auc")
CLUSTER_METRICS = ("rand", "ari")
METRICS = CLASSIFIER_METRICS + ("semisupervised_accuracy",) + CLUSTER_METRICS + ("red",)
SCALERS = {"minmax": MinMaxScaler, "standard": StandardScaler, "maxabs": MaxAbsScaler}


class RStandardScaler(TransformerMixin, BaseEstimator):
    """R's ``scale()`` as ``e1071::svm(scale = TRUE)`` applies it: centre by the training
    mean, divide by the training sd with n-1; when any column is constant on the
    training part e1071 warns and scales no column at all, reproduced here."""

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=np.float64)
        sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
        if np.any(sd == 0) or not np.all(np.isfinite(sd)):
            self.mean_, self.scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
        else:
            self.mean_, self.scale_ = X.mean(axis=0), sd
        return self

    def transform(self, X):
        return (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_


def e1071_svm(seed: int = 0):
    """``e1071::svm(formula, data, probability = TRUE)`` with its defaults, as the EFSIS
    authors' ``scripts/efsis_efsosParalStab.R`` trains it: C-classification, radial
    kernel, gamma = 1/(number of features), cost 1, tolerance 0.001, every feature
    standardised on the training part (:class:`RStandardScaler`), Platt probabilities
    fitted by libsvm's internal 5-fold cross-validation (its shuffle seeded by ``seed``;
    R leaves it unseeded). ``predict_proba`` gives the probabilities the AUC uses."""
    return make_pipeline(RStandardScaler(), SVC(kernel="rbf", gamma=1.0, C=1.0, tol=1e-3, probability=True,
                                                random_state=seed))


class _GammaPerFeature(BaseEstimator):
    """Sets the RBF gamma of the wrapped pipeline's SVC to 1/(number of features) at fit."""

    def __init__(self, pipe):
        self.pipe = pipe

    def fit(self, X, y):
        self.pipe.set_params(svc__gamma=1.0 / max(1, np.shape(X)[1]))
        with warnings.catch_warnings():
            # scikit-learn 1.9 deprecates SVC(probability=True); it is libsvm's own Platt
            # scaling, the one e1071 calls, so it stays while it exists
            warnings.simplefilter("ignore", FutureWarning)
            self.pipe.fit(X, y)
        self.classes_ = self.pipe.classes_
        return self

    def predict(self, X):
        return self.pipe.predict(X)

    def predict_proba(self, X):
        return self.pipe.predict_proba(X)


def make_classifier(name: str, seed: int = 0, scale: str = "minmax"):
    """The evaluation classifier, behind the ``scale`` scaler (fitted on the training part).
    ``e1071_svm`` standardises by itself; a per-feature affine scaler before it changes nothing."""
    if name == "svm":
        clf = SVC(kernel="linear", C=1.0)
    elif name == "e1071_svm":
        return _GammaPerFeature(e1071_svm(seed))
    elif name == "knn1":
        clf = KNeighborsClassifier(n_neighbors=1)
    elif name == "tree":
        clf = DecisionTreeClassifier(random_state=seed)
    else:
        raise ConfigError(f"unknown classifier {name!r}; choose one of {', '.join(CLASSIFIERS)}")
    if scale == "none":
        return clf
    _check_scale(scale)
    return make_pipeline(SCALERS[scale](), clf)


def _check_scale(scale: str) -> None:
    if scale != "none" and scale not in SCALERS:
        raise ConfigError(f"unknown scale {scale!r}; choose none, minmax, standard or maxabs")


def _scaled(fit, *others, scale: str = "minmax"):
    """``fit`` and ``others`` scaled by a scaler fitted on ``fit`` (dense arrays)."""
    if scale == "none":
        return (fit, *others)
    sc = SCALERS[scale]().fit(fit)
    return tuple(sc.transform(a) for a in (fit, *others))


def _auc(pos: np.ndarray, s: np.ndarray, direction: str) -> float:
    """AUC of scores ``s`` for the positives ``pos``. ``direction="auto"`` is pROC's default
    (``roc(direction = "auto")``): when the median score of the negatives (controls)
    exceeds that of the positives (cases) the scores are read reversed, so a classifier
    that ranks the test samples the wrong way round gets 1 - AUC."""
    auc = float(roc_auc_score(pos, s))
    if direction == "auto" and np.median(s[~pos]) > np.median(s[pos]):
        return 1.0 - auc
    return auc


def macro_auc(y_true: np.ndarray, scores: np.ndarray, classes: np.ndarray, direction: str = "fixed") -> float:
    """Binary AUC, or one-vs-rest macro AUC over the classes present in ``y_true``;
    ``direction``: ``fixed`` (higher score = the class) or ``auto`` (pROC's, :func:`_auc`)."""
    if direction not in AUC_DIRECTIONS:
        raise ConfigError(f"unknown auc_direction {direction!r}; choose fixed or auto")
    if classes.size == 2:
        s = scores if scores.ndim == 1 else scores[:, 1]
        if np.unique(y_true).size < 2:
            return float("nan")
        return _auc(y_true == classes[1], s, direction)
    aucs = []
    for c_idx, c in enumerate(classes):
        pos = y_true == c
        if 0 < pos.sum() < pos.size:
            aucs.append(_auc(pos, scores[:, c_idx], direction))
    return float(np.mean(aucs)) if aucs else float("nan")


def _scores_for_auc(model, X):
    if isinstance(model, _GammaPerFeature):  # Platt probabilities, as e1071 + pROC
        return model.predict_proba(X)
    if hasattr(model, "decision_function"):
        try:
            return model.decision_function(X)
        except AttributeError:
            pass
    return model.predict_proba(X)


def _checked_options(metrics, scale: str, auc_direction: str, constraints) -> list[str]:
    """The metrics without repeats, after refusing unknown metrics, scales and AUC directions."""
    metrics = list(dict.fromkeys(metrics))
    for m in metrics:
        if m not in METRICS:
            raise ConfigError(f"unknown metric {m!r}; choose from {', '.join(METRICS)}")
    _check_scale(scale)
    if auc_direction not in AUC_DIRECTIONS:
        raise ConfigError(f"unknown auc_direction {auc_direction!r}; choose fixed or auto")
    if "semisupervised_accuracy" in metrics and constraints is None:
        raise ConfigError("metric semisupervised_accuracy needs the repetition's constraints")
    return metrics


def evaluate_order(
    X,
    y: np.ndarray,
    split: dict,
    order: np.ndarray,
    grid: list[int],
    *,
    classifier: str = "svm",
    metrics=("accuracy",),
    train_on: str = "all",
    scale: str = "minmax",
    seed: int = 0,
    constraints=None,
    matching: str = "train",
    cop_kmeans_init: int = 10,
    kmeans_init: int = 20,
    red_absolute: bool = False,
    auc_direction: str = "fixed",
    cache: dict | None = None,
) -> pd.DataFrame:
    """Every metric of ``metrics`` on the top-i features of ``order`` for every i in ``grid``.

    ``X`` is the full dataset (all samples); ``order`` indexes its columns (best
    first), or is a :class:`ssfs.ranking.RankingOrders` whose list for size i is used;
    ``y`` holds class codes 0..C-1 of all samples, -1 where a dataset gives no label (never
    trained or scored on); a label-free dataset gets ``red`` only. Sizes beyond
    ``len(order)`` (subset methods) are skipped. ``constraints`` (global indices) are needed by
    ``semisupervised_accuracy``; when none of the ``cop_kmeans_init`` restarts of
    COP-KMeans finds an assignment satisfying them the value is NaN (certain with
    contradictory noisy constraints; possible with correct ones too, since COP-KMeans
    assigns greedily and can dead-end: more restarts make it rarer).
    ``cache``: a dict shared by the calls of one repetition (same data, split, options,
    seed): a top-i set already evaluated reuses its rows (exact: same features, same seeds).
    """
    metrics = _checked_options(metrics, scale, auc_direction, constraints)
    train_all = np.asarray(split["train"], dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    train = np.asarray(split["labeled"], dtype=np.int64) if train_on == "labeled" else train_all
    train = train[y[train] >= 0]
    test = np.asarray(split["test"], dtype=np.int64)
    if not train.size or not test.size:  # label-free dataset: only red is defined (computed even unasked)
        metrics = ["red"]
    classes = np.unique(y[train])
    n_classes = int(y.max()) + 1
    cons_train = constraints.subset(train_all) if constraints is not None else None
    rows = []
    orders = order if isinstance(order, RankingOrders) else RankingOrders(order)
    sizes = [i for i in grid if i <= orders.size]
    classify = any(m in CLASSIFIER_METRICS for m in metrics)
    others = any(m not in CLASSIFIER_METRICS for m in metrics)
    prescaled = _prescaled(X, train, [orders.at(i)[:i] for i in sizes], classifier, scale) if classify else None
    for i in sizes:
        cols = orders.at(i)[:i]
        key, first = (i, np.asarray(cols, dtype=np.int64).tobytes()), len(rows)
        if cache is not None and key in cache:
            rows += cache[key]
            continue
        Xi = _columns(X, cols) if others or prescaled is None else None
        if classify:
            rows += _classifier_rows(i, Xi if prescaled is None else prescaled(cols), y, train, test, classes,
                                     metrics, classifier=classifier, seed=seed,
                                     scale=scale if prescaled is None else "none", auc_direction=auc_direction)
        if others:
            rows += _unsupervised_rows(i, Xi, y, train_all, test, metrics, seed=seed, scale=scale,
                                       constraints=cons_train, n_classes=n_classes, matching=matching,
                                       cop_kmeans_init=cop_kmeans_init, kmeans_init=kmeans_init,
                                       red_absolute=red_absolute)
        if cache is not None:
            cache[key] = rows[first:]
    return pd.DataFrame(rows, columns=["n_features", "metric", "value"])


def _classifier_rows(i, Xi, y, train, test, classes, metrics, *, classifier, seed, scale, auc_direction) -> list:
    """accuracy / auc rows of the classifier trained on the top-i features of the training samples.
    scikit-learn's per-call checks are skipped where they cannot fail (our own parameters; the
    finite check done once here), a tenth of the evaluate step; the fits are the same."""
    from sklearn import config_context

    rows = []
    with config_context(assume_finite=bool(np.isfinite(Xi).all()), skip_parameter_validation=True):
        if classifier == "svm" and scale == "none" and "auc" not in metrics:
            model = LinearSVM().fit(Xi[train], y[train])  # SVC's libsvm calls: its predictions, bit for bit
        else:
            model = make_classifier(classifier, seed=seed, scale=scale).fit(Xi[train], y[train])
        if "accuracy" in metrics:
            # accuracy_score without its target checks (a fifth of the step): the same value
            rows.append((i, "accuracy", float(np.mean(model.predict(Xi[test]) == y[test]))))
        if "auc" in metrics:
            rows.append((i, "auc", macro_auc(y[test], _scores_for_auc(model, Xi[test]), classes, auc_direction)))
    return rows


def _unsupervised_rows(i, Xi, y, train_all, test, metrics, *, seed, scale, constraints, n_classes, matching,
                       cop_kmeans_init, kmeans_init, red_absolute) -> list:
    """semisupervised_accuracy, rand / ari and red rows of the top-i features (module doc)."""
    rows = []
    if "semisupervised_accuracy" in metrics:
        Xtr, Xte = _scaled(Xi[train_all], Xi[test], scale=scale)
        try:
            acc = semisupervised_accuracy(Xtr, constraints, Xte, y[test], n_classes,
                                          np.random.default_rng([seed, 1, i]), y_train=y[train_all],
                                          matching=matching, n_init=cop_kmeans_init)
        except SupervisionError:
            acc = float("nan")  # no COP-KMeans assignment satisfies the (noisy) constraints
        rows.append((i, "semisupervised_accuracy", acc))
    if any(m in CLUSTER_METRICS for m in metrics):
        (Xs,) = _scaled(Xi, scale=scale)
        q = clustering_quality(Xs, y, np.random.default_rng([seed, 2, i]), n_init=kmeans_init)
        rows += [(i, m, q[m]) for m in CLUSTER_METRICS if m in metrics]
    if "red" in metrics:
        rows.append((i, "red", redundancy_rate(Xi[train_all], absolute=red_absolute)))
    return rows


def _columns(X, cols) -> np.ndarray:
    """The columns ``cols`` of X as a dense float64 array."""
    Xi = X[:, cols]
    return Xi.toarray() if sparse.issparse(Xi) else np.asarray(Xi, dtype=np.float64)


#: scalers whose value of a column depends on that column alone, bit for bit (a minimum, a
#: maximum, a product): the columns can be scaled once for every size (a mean's sum is not:
#: numpy sums one column pairwise and many columns row by row)
COLUMNWISE_SCALES = ("minmax", "maxabs")


def _prescaled(X, train: np.ndarray, column_sets: list, classifier: str, scale: str):
    """``cols -> scaled columns``: every column of ``column_sets`` scaled once by ``scale``
    fitted on the training rows, so each size's classifier needs no scaler of its own (the same
    values as the pipeline's, bit for bit; the pipeline's per-call checks were a third of the
    evaluate step); None where the classifier scales by itself or the scale is not columnwise."""
    if classifier == "e1071_svm" or scale not in COLUMNWISE_SCALES or not column_sets:
        return None
    union = np.unique(np.concatenate([np.asarray(c, dtype=np.int64) for c in column_sets]))
    Xu = _columns(X, union)
    scaler = SCALERS[scale]()
    Xs = scaler.fit(Xu[train]).transform(Xu)
    where = np.full(int(union.max()) + 1, -1, dtype=np.int64)
    where[union] = np.arange(union.size)
    return lambda cols: Xs[:, where[np.asarray(cols, dtype=np.int64)]]


#: evaluate_order caches of this process, one per (data, split, constraints, options, seed)
_SHARED_ROWS: dict = {}


def _shared_rows(*parts) -> dict:
    """The :func:`evaluate_order` cache for one context; files enter with their size and mtime."""
    import json
    import os

    def stamp(p):
        if p is None:
            return None
        st = os.stat(p)
        return (str(p), st.st_size, st.st_mtime_ns)

    key = json.dumps([stamp(p) if isinstance(p, (str, os.PathLike)) else p for p in parts], sort_keys=True,
                     default=str)
    if len(_SHARED_ROWS) > 256:
        _SHARED_ROWS.clear()
    return _SHARED_ROWS.setdefault(key, {})


def run_evaluation(*, prepared, splits: list, rankings: list, components: list | None = None,
                   constraints: list | None = None, scores, ev: dict, seed: int, dataset: str, variant: str,
                   label: str, reps: list[int]) -> None:
    """The workflow's evaluate step: :func:`evaluate_order` on every repetition's ranking
    (or extraction components), written as the tidy table ``dataset, variant, method,
    rep, n_features, metric, value``."""
    data = read_prepared(prepared)
    X, y = data.X, data.y
    grid = n_features_grid(X.shape[1], ev["max_features"], ev["n_features"], ev["percent"])
    frames = []
    for i, (rep, sp, rp) in enumerate(zip(reps, splits, rankings, strict=True)):
        ranking = read_ranking(rp)
        cuts = tied_cuts(rp, grid)
        if cuts:
            warnings.warn(f"{dataset}/{variant}/{label} rep {rep}: the top t for t = {cuts} is decided by ties "
                          "(broken by variance, or its share of the squared range for a scale-free method, "
                          "then a seeded permutation; see the ranking's ties column)",
                          stacklevel=2)
        Xe, own = X, None
        if components:
            Z = load_checked_npy(components[i])
            if Z.size:
                Xe, own = Z, components[i]  # an extraction's own features: nothing to share
        cons = Constraints.from_tsv(constraints[i], checked=True) if constraints else None
        clf_seed = int(derive_rng(seed, dataset, "classifier", rep).integers(2**31))
        df = evaluate_order(
            Xe, y, read_split(sp), ranking, grid,
            classifier=ev["classifier"], metrics=ev["metrics"], train_on=ev["train_on"], scale=ev["scale"],
            # shared by all methods of a repetition (paired comparisons)
            seed=clf_seed,
            constraints=cons, matching=ev.get("matching", "train"),
            cop_kmeans_init=ev.get("cop_kmeans_init", 10), kmeans_init=ev.get("kmeans_init", 20),
            red_absolute=ev.get("red_absolute", False), auc_direction=ev.get("auc_direction", "fixed"),
            cache=_shared_rows(prepared, sp, constraints[i] if constraints else None, own, ev, clf_seed),
        )
        df.insert(0, "rep", rep)
        frames.append(df)
    res = pd.concat(frames, ignore_index=True)
    res.insert(0, "method", label)
    res.insert(0, "variant", variant)
    res.insert(0, "dataset", dataset)
    write_checked_tsv(res[["dataset", "variant", "method", "rep", "n_features", "metric", "value"]], scores)
