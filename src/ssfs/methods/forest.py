"""Random forest on the labeled samples with out-of-bag permutation importance
(Breiman 2001), the supervised "gold standard" of the SSFI paper (Section IV),
plus the decision-tree helpers SSFI shares.

The forest is scikit-learn's ``RandomForestClassifier`` (bootstrap, sqrt(p)
candidate features per split, fully grown trees, N trees by the SSFI paper's eq. 1
unless ``n_estimators`` is set: "RF and SSFI are tuned similarly"). Importance is
Breiman's: for every tree, the drop in the number of correctly classified
out-of-bag samples when one feature's values are permuted among them, summed over
trees and divided by the number of trees. Permuting a feature a tree never splits
on cannot change its predictions, so only the tree's split features are permuted
(their contribution for all other features is exactly 0).

Many tiny trees (SSFI): ``fit_tree`` builds the same tree as
``DecisionTreeClassifier(random_state=seed).fit`` through scikit-learn's tree builder
directly, and ``FlatForest`` predicts (tree, sample) pairs of many trees at once.
"""

from __future__ import annotations

import numbers
from math import ceil
from typing import Annotated, Literal

import numpy as np

from .._validation import dense
from ..params import PosInt, Range
from ..registry import register
from ._shared.committee import committee_size


def _tree_api():
    """scikit-learn's Cython tree builder (the estimator's fit without its per-call checks):
    (Gini, BestSplitter, DepthFirstTreeBuilder, Tree), or None in another layout. Imported
    on first use: scikit-learn costs ~0.5 s of every job's start-up otherwise."""
    try:
        from sklearn.tree._criterion import Gini
        from sklearn.tree._splitter import BestSplitter
        from sklearn.tree._tree import DepthFirstTreeBuilder, Tree
    except ImportError:  # pragma: no cover - layout of another scikit-learn version
        return None
    return Gini, BestSplitter, DepthFirstTreeBuilder, Tree

_INT32_MAX = int(np.iinfo(np.int32).max)


class SplitterSeed:
    """``random_state`` for scikit-learn's splitter, equivalent to ``RandomState(seed)``.

    The splitter takes exactly one ``randint(0, RAND_R_MAX)`` from its random_state per fit
    (sklearn/tree/_splitter.pyx, ``Splitter.init``); it is drawn once from
    ``RandomState(seed)`` and replayed, so refitting with the same seed skips seeding a
    Mersenne Twister (70 us of a 100-150 us SSFI tree fit). tests/methods/test_ssfi.py checks the
    trees against ``DecisionTreeClassifier(random_state=seed)``."""

    __slots__ = ("_args", "_draw", "seed")

    def __init__(self, seed: int):
        self.seed = int(seed)
        self._args = None

    def randint(self, low, high=None):
        if self._args != (low, high):
            self._args, self._draw = (low, high), np.random.RandomState(self.seed).randint(low, high)
        return self._draw


class FittedTree:
    """A fitted classification tree: ``tree_`` (scikit-learn's Tree) and ``classes_``."""

    __slots__ = ("classes_", "tree_")

    def __init__(self, tree, classes):
        self.tree_, self.classes_ = tree, classes

    def predict(self, X32: np.ndarray) -> np.ndarray:
        return tree_predict(self, np.ascontiguousarray(X32, dtype=np.float32))


def _min_samples_split(value, n: int) -> int:
    """DecisionTreeClassifier's reading of min_samples_split (an int, or a fraction of n)."""
    if isinstance(value, numbers.Integral):
        return max(int(value), 2)
    return max(2, ceil(value * n))


_FAST: bool | None = None  # builder path verified against the estimator (on first use)


def _fast_path_ok() -> bool:
    """Whether the direct builder call reproduces DecisionTreeClassifier in this scikit-learn
    (private API: checked once on a small problem with tied values, else the estimator is used)."""
    global _FAST
    if _FAST is None:
        _FAST = False
        if _tree_api() is not None:
            from sklearn.tree import DecisionTreeClassifier

            rng = np.random.RandomState(0)
            X = np.round(rng.normal(size=(40, 9)), 1).astype(np.float32)
            y = rng.randint(0, 3, 40)
            try:
                ok = True
                for seed in (1, 2, 3):
                    a = _build(X, y, SplitterSeed(seed), 2, None).tree_
                    b = DecisionTreeClassifier(random_state=seed).fit(X, y).tree_
                    ok &= all(np.array_equal(getattr(a, k), getattr(b, k)) for k in
                              ("feature", "threshold", "children_left", "children_right", "value"))
                _FAST = bool(ok)
            except Exception:  # noqa: BLE001 - any change of the private API: use the estimator
                _FAST = False
    return _FAST


def fit_tree(X32: np.ndarray, y: np.ndarray, seed, *, min_samples_split=2, max_depth=None):
    """The tree of ``DecisionTreeClassifier(random_state=seed, min_samples_split=...,
    max_depth=...).fit(X32, y)`` (gini, best splits over all features), without the
    estimator's input validation: ``X32`` C-contiguous float32 without NaN, ``y`` int labels >= 0.
    ``seed``: int or a ``SplitterSeed`` (reusable across fits)."""
    if not isinstance(seed, SplitterSeed):
        seed = SplitterSeed(seed)
    if not _fast_path_ok():  # pragma: no cover - another scikit-learn
        from sklearn.tree import DecisionTreeClassifier

        est = DecisionTreeClassifier(random_state=seed.seed, min_samples_split=min_samples_split, max_depth=max_depth)
        return est.fit(X32, y, check_input=False)
    return _build(X32, y, seed, min_samples_split, max_depth)


def _build(X32, y, seed, min_samples_split, max_depth):
    counts = np.bincount(y)  # = np.unique(y, return_inverse=True), faster for small codes
    classes = np.flatnonzero(counts)
    code = (np.cumsum(counts > 0) - 1)[y]
    n_classes = np.array([classes.size], dtype=np.intp)
    p = X32.shape[1]
    Gini, BestSplitter, DepthFirstTreeBuilder, Tree = _tree_api()
    splitter = BestSplitter(Gini(1, n_classes), p, 1, 0.0, seed, None)
    tree = Tree(p, n_classes, 1)
    depth = _INT32_MAX if max_depth is None else int(max_depth)
    builder = DepthFirstTreeBuilder(splitter, _min_samples_split(min_samples_split, y.size), 1, 0.0, depth, 0.0)
    builder.build(tree, X32, code.astype(np.float64).reshape(-1, 1), None, None)
    return FittedTree(tree, classes)


class FlatForest:
    """Many fitted trees as one node table, to predict (tree, sample) pairs in one pass.

    ``trees``: fitted trees (``tree_``, ``classes_``); ``feature_maps``: per tree, the
    columns of X its local feature indices refer to (None: X's own columns). Traversal
    follows scikit-learn's ``Tree.apply``: left iff x[feature] <= threshold (float32 x
    against the float64 threshold), the prediction is classes_[argmax(value)] at the leaf.
    """

    def __init__(self, trees, feature_maps=None):
        counts = np.array([t.tree_.node_count for t in trees], dtype=np.int64)
        self.root = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        off = np.repeat(self.root, counts)
        self.tree_of_node = np.repeat(np.arange(len(trees)), counts)
        self.local_feature = np.concatenate([t.tree_.feature for t in trees]).astype(np.int64)
        inner = self.local_feature >= 0
        feat = self.local_feature
        if feature_maps is not None:
            maps = [np.asarray(m, dtype=np.int64) for m in feature_maps]
            moff = np.r_[0, np.cumsum([m.size for m in maps])[:-1]].astype(np.int64)
            feat = np.concatenate(maps)[np.where(inner, feat + moff[self.tree_of_node], 0)]
        self.feature = np.where(inner, feat, -1)
        self.threshold = np.concatenate([t.tree_.threshold for t in trees])
        left = np.where(inner, np.concatenate([t.tree_.children_left for t in trees]) + off, -1)
        right = np.where(inner, np.concatenate([t.tree_.children_right for t in trees]) + off, -1)
        self.children = np.column_stack([left, right]).ravel()  # node k: left at 2k, right at 2k + 1
        self.label = np.concatenate([t.classes_[np.argmax(t.tree_.value[:, 0], axis=1)] for t in trees])

    def split_features(self):
        """(tree, local feature) of every split, sorted by tree then feature, unique."""
        inner = self.local_feature >= 0
        t, f = self.tree_of_node[inner], self.local_feature[inner]
        width = int(f.max()) + 1 if f.size else 1
        key = np.unique(t * width + f)
        return key // width, key % width

    def apply(self, XT: np.ndarray, tree: np.ndarray, rows: np.ndarray, perm_feature=None, perm_rows=None):
        """Leaf node of every pair (tree[k], sample rows[k]); ``XT``: the data transposed
        (features x samples, C-contiguous float32: pairs of one tree read along a row). With
        ``perm_feature``/``perm_rows``, pair k reads column perm_feature[k] (a column of X)
        from sample perm_rows[k] instead."""
        n = XT.shape[1]
        flat = XT.ravel()
        it = np.int32 if max(flat.size, 2 * self.feature.size) < 2**31 - 1 else np.int64
        offset = np.where(self.feature >= 0, self.feature * n, -1).astype(it)  # row of XT; < 0: leaf
        children = self.children.astype(it)
        node = self.root[tree].astype(it)
        act = np.flatnonzero(offset[node] >= 0)
        nd, r = node[act], rows[act].astype(it)
        if perm_feature is not None:
            poff, pr = (perm_feature[act] * n).astype(it), perm_rows[act].astype(it)
        while act.size:  # one step down for all pairs not yet at a leaf (loop over depth)
            off = offset[nd]
            src = r if perm_feature is None else np.where(off == poff, pr, r)
            go_left = flat.take(off + src) <= self.threshold[nd]  # float32 value vs float64 threshold
            nd = children.take(2 * nd + 1 - go_left)
            inner = offset[nd] >= 0
            if not inner.all():
                node[act[~inner]] = nd[~inner]
                act, nd, r = act[inner], nd[inner], r[inner]
                if perm_feature is not None:
                    poff, pr = poff[inner], pr[inner]
        return node

    def predict(self, XT, tree, rows, perm_feature=None, perm_rows=None):
        return self.label[self.apply(XT, tree, rows, perm_feature, perm_rows)]


def tree_predict(tree, X32: np.ndarray) -> np.ndarray:
    """Class predictions of a fitted sklearn decision tree on float32 data (no input checks)."""
    leaves = tree.tree_.apply(X32)
    return tree.classes_[np.argmax(tree.tree_.value[leaves, 0], axis=1)]


def split_features(tree) -> np.ndarray:
    """Sorted local indices of the features a fitted tree splits on."""
    f = tree.tree_.feature
    return np.unique(f[f >= 0])


def permuted_predictions(tree, X32: np.ndarray, rng: np.random.Generator):
    """For every split feature f of ``tree``: its predictions on ``X32`` with column f
    permuted (one permutation per feature, drawn from ``rng``), in one batched call.
    Returns (features, predictions of shape (n_features, n_rows))."""
    feats = split_features(tree)
    n = X32.shape[0]
    if feats.size == 0 or n == 0:
        return feats, np.zeros((feats.size, n), dtype=np.int64)
    stack = np.tile(X32, (feats.size, 1))
    for r, f in enumerate(feats):  # loop over the (few) split features of one tree
        stack[r * n:(r + 1) * n, f] = X32[rng.permutation(n), f]
    return feats, tree_predict(tree, stack).reshape(feats.size, n)


@register("rf", higher_is_better=True, needs=("labels",), invariances=("scale", "unit"))
def random_forest(X, y, constraints, rng, *, n_estimators: PosInt | None = None,
                  max_features: Literal["sqrt", "log2"] | PosInt | Annotated[float, Range(0, 1, low_open=True)]
                  | None = "sqrt", min_samples_split: Annotated[int, Range(2)] = 2):
    """Random forest on the labeled samples, OOB permutation importance (Breiman 2001).

    ``n_estimators`` defaults to the SSFI paper's eq. 1 committee size; unlabeled
    samples are ignored. A feature never used by any tree scores 0.
    """
    lab = np.flatnonzero(y >= 0)
    p = X.shape[1]
    XL = np.ascontiguousarray(dense(X[lab], method="rf"), dtype=np.float32)
    yl = y[lab]
    n_trees = committee_size(p) if n_estimators is None else int(n_estimators)
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(
        n_estimators=n_trees, max_features=max_features, min_samples_split=min_samples_split,
        bootstrap=True, random_state=int(rng.integers(0, 2**31 - 1)), n_jobs=1,
    ).fit(XL, yl)
    yl = np.searchsorted(forest.classes_, yl)  # the forest's trees predict class positions
    perm_seeds = rng.integers(0, 2**31 - 1, size=n_trees)
    imp = np.zeros(p)
    for tree, inbag, seed in zip(forest.estimators_, forest.estimators_samples_, perm_seeds, strict=True):
        oob = np.ones(lab.size, dtype=bool)
        oob[inbag] = False
        if not oob.any():
            continue
        Xo = XL[oob]
        base = (tree_predict(tree, Xo) == yl[oob]).sum()
        feats, preds = permuted_predictions(tree, Xo, np.random.default_rng(seed))
        if feats.size:
            imp[feats] += base - (preds == yl[oob][None, :]).sum(axis=1)
    return imp / n_trees
