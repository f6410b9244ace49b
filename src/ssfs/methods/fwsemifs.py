"""FW-SemiFS: forward semi-supervised feature selection (Ren et al. 2008; thesis Alg. 7),
with the SSFI paper's settings (sizeFS = 10, samplingRate = 0.5, samplingTimes = 10,
fnstep = 6, startfn = 5, decision-tree base classifier).

1. ``startfn`` features by sequential forward selection (SFS) on the labeled data;
2. each iteration: train the classifier on L with the current subset and predict U;
   ``samplingTimes`` times, add a random ``samplingRate`` fraction of U (with the
   predicted labels) to L and select ``fnstep`` features by SFS on that set; the most
   frequent feature over these groups that is not yet selected joins the subset
   (frequency ties: smallest summed position in the groups, then lowest index);
3. stop at ``sizeFS`` features or after ``max_iterations`` iterations (default
   2 * sizeFS; the papers give no value).

The thesis names SFFS but describes plain forward selection (no floating
backward steps); that is what is implemented. Choices, documented and exposed:

- SFS criterion: stratified ``cv``-fold cross-validated accuracy on the training set
  at hand (folds capped by the smallest class; with fewer than 2 samples per class,
  resubstitution accuracy), candidate ties broken by the prefilter order.
- Prefilter: scikit-learn's SequentialFeatureSelector over 7000 features costs
  millions of classifier fits per call, so each SFS only considers the ``prefilter``
  features with the highest ANOVA F statistic (sklearn ``f_classif``) on the same
  training set. Each SFS then costs fnstep * prefilter * cv fits.

Returns the ordered subset (kind "subset"); ``scores`` are sizeFS - position for the
selected features and NaN elsewhere.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from .._validation import dense
from ..errors import InputError
from ..params import PosInt, Range
from ..registry import SelectionResult, register
from .forest import SplitterSeed, fit_tree, tree_predict

CLASSIFIERS = ("tree", "nb", "knn")


def _classifier(name: str, seed: int):
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    if name == "tree":
        return DecisionTreeClassifier(random_state=seed)
    if name == "nb":
        return GaussianNB()
    if name == "knn":
        return KNeighborsClassifier(n_neighbors=1)
    raise InputError(f"fwsemifs: classifier must be one of {CLASSIFIERS}, got {name!r}")


def _folds(y: np.ndarray, cv: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified folds (train, test); [(all, all)] (resubstitution) when a class has < 2 samples."""
    counts = np.bincount(y)
    k = min(cv, counts[counts > 0].min())
    if k < 2:
        idx = np.arange(y.size)
        return [(idx, idx)]
    fold = np.empty(y.size, dtype=np.int64)
    for c in np.flatnonzero(counts):  # loop over classes: deal each class's shuffled samples round-robin
        members = rng.permutation(np.flatnonzero(y == c))
        fold[members] = (np.arange(members.size) + rng.integers(k)) % k
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(k)]


def _fit_predict(classifier: str, seed, Xtr, ytr, Xte) -> np.ndarray:
    """Predictions on Xte of the classifier trained on (Xtr, ytr). Trees are built by
    :func:`ssfs.methods.forest.fit_tree`, the same tree as DecisionTreeClassifier without
    its per-call checks (FW-SemiFS fits about 40,000 small trees per run: TOX-171 took
    83 s through the estimator)."""
    if classifier == "tree":
        tree = fit_tree(np.ascontiguousarray(Xtr, dtype=np.float32), ytr, seed)
        return tree_predict(tree, np.ascontiguousarray(Xte, dtype=np.float32))
    return _classifier(classifier, seed).fit(Xtr, ytr).predict(Xte)


def _accuracy(X, y, folds, classifier, seed) -> float:
    correct = 0
    total = 0
    for tr, te in folds:
        correct += int((_fit_predict(classifier, seed, X[tr], y[tr], X[te]) == y[te]).sum())
        total += te.size
    return correct / total


def forward_select(X, y, n_select: int, rng: np.random.Generator, *, classifier: str = "tree",
                   prefilter: int = 50, cv: int = 3) -> np.ndarray:
    """Sequential forward selection of ``n_select`` features (wrapper, CV accuracy),
    restricted to the ``prefilter`` features of highest ANOVA F on (X, y)."""
    from sklearn.feature_selection import f_classif

    with np.errstate(divide="ignore", invalid="ignore"):
        F, _ = f_classif(X, y) if np.unique(y).size > 1 else (np.zeros(X.shape[1]), None)
    F = np.where(np.isfinite(F), F, -np.inf)
    cand = np.lexsort((np.arange(F.size), -F))[: max(int(prefilter), n_select)]
    folds = _folds(y, cv, rng)
    seed = SplitterSeed(int(rng.integers(0, 2**31 - 1)))  # an int seed, replayed without reseeding
    chosen: list[int] = []
    for _ in range(min(n_select, cand.size)):
        best, best_acc = -1, -1.0
        for c in cand:  # candidates in prefilter order: ties keep the better-filtered one
            if c in chosen:
                continue
            acc = _accuracy(X[:, chosen + [int(c)]], y, folds, classifier, seed)
            if acc > best_acc:
                best, best_acc = int(c), acc
        chosen.append(best)
    return np.asarray(chosen, dtype=np.int64)


@register("fwsemifs", higher_is_better=True, kind="subset", needs=("labels",))
def fwsemifs(X, y, constraints, rng, *, size_fs: PosInt = 10,
             sampling_rate: Annotated[float, Range(0, 1, low_open=True)] = 0.5, sampling_times: PosInt = 10,
             fnstep: PosInt = 6, startfn: PosInt = 5, max_iterations: PosInt | None = None,
             classifier: Literal["tree", "nb", "knn"] = "tree", prefilter: PosInt = 50,
             cv: Annotated[int, Range(2)] = 3):
    """Forward semi-supervised feature selection (thesis Alg. 7): ordered subset of ``size_fs`` features."""
    if classifier not in CLASSIFIERS:
        raise InputError(f"fwsemifs: classifier must be one of {CLASSIFIERS}, got {classifier!r}")
    if not 0.0 < sampling_rate <= 1.0:
        raise InputError(f"fwsemifs: sampling_rate must be in (0, 1], got {sampling_rate}")
    for name, v in (("size_fs", size_fs), ("sampling_times", sampling_times), ("fnstep", fnstep),
                    ("startfn", startfn), ("prefilter", prefilter), ("cv", cv)):
        if int(v) < 1:
            raise InputError(f"fwsemifs: {name} must be >= 1, got {v}")
    p = X.shape[1]
    size_fs = min(int(size_fs), p)
    max_iterations = 2 * size_fs if max_iterations is None else int(max_iterations)
    Xd = dense(X, method="fwsemifs")
    lab = y >= 0
    _, yl = np.unique(y[lab], return_inverse=True)
    XL, XU = Xd[lab], Xd[~lab]
    opts = dict(classifier=classifier, prefilter=prefilter, cv=cv)
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
        current = list(forward_select(XL, yl, min(int(startfn), size_fs), rng, **opts))
        n_take = int(round(sampling_rate * XU.shape[0]))
        it = 0
        while len(current) < size_fs and it < max_iterations and XU.shape[0]:
            it += 1
            pred = _fit_predict(classifier, int(rng.integers(0, 2**31 - 1)), XL[:, current], yl, XU[:, current])
            groups = []
            for _ in range(int(sampling_times)):
                pick = rng.choice(XU.shape[0], size=max(1, n_take), replace=False)
                Xn = np.vstack([XL, XU[pick]])
                yn = np.r_[yl, pred[pick]]
                groups.append(forward_select(Xn, yn, int(fnstep), rng, **opts))
            allf = np.concatenate(groups)
            pos = np.concatenate([np.arange(g.size) for g in groups])
            freq = np.bincount(allf, minlength=p)
            possum = np.bincount(allf, weights=pos, minlength=p)
            freq[current] = 0
            if freq.max() == 0:
                continue
            cand = np.flatnonzero(freq == freq.max())
            current.append(int(cand[np.argmin(possum[cand])]))
    sel = np.asarray(current, dtype=np.int64)
    scores = np.full(p, np.nan)
    scores[sel] = size_fs - np.arange(sel.size)
    return SelectionResult(scores=scores, selected=sel, extra={"iterations": it})
