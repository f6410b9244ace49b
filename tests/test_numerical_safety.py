"""Numerical safety of every registered per-feature score (issue 8), property-based.

Hypothesis draws small matrices (tiny n, p = 1, constant columns, duplicated rows,
integer-valued data full of ties, wildly different scales), partial labels and
constraints. For every registered method of kind "score" (discovered from the
registry, so new methods are covered) ``run_method`` either refuses the input with
an ssfs error or returns

* no NaN: an undefined score is the worst value (-inf when higher is better, +inf
  when lower is better), the documented rule of ``run_method``,
* the worst value for every feature constant over the samples, ranked after every
  feature with a better score,
* the worst value for a non-constant feature only where the method cannot define a
  score or the formula gives it (e.g. a ratio with a zero denominator): for
  label-based methods a feature constant within every labeled class; for graph
  methods a degenerate graph (n <= 3); for random-subspace ensembles none (every
  member sees every feature here),
* an ``order`` that is a permutation of the features.

A perfectly separating feature (constant within each class, different between
classes) must rank first for label-based filters (Fisher and SAM give it +inf).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssfs import Constraints, SSFSError, get_method, list_methods, run_method
from ssfs._validation import constant_features

#: settings that keep each call in milliseconds; ensembles draw every feature (subspace = p)
SMALL = {
    "bcs": lambda p: {"n_bags": 4},
    "bootstrap_rank": lambda p: {"n_boot": 3},
    "efsis": lambda p: {"n_boot": 3},
    "enscls": lambda p: {"n_members": 3, "subspace": p},
    "ssfi": lambda p: {"n_members": 3, "subspace": p, "max_iter": 2},
    "rf": lambda p: {"n_estimators": 10},
    "l2gfs": lambda p: {"n_init": 2},
    "wckm": lambda p: {"n_init": 2},
}
SCORE_METHODS = [m for m in list_methods() if get_method(m).kind == "score"]
GRAPH_TINY_N = 3


@st.composite
def problems(draw):
    n = draw(st.integers(2, 12))
    p = draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["normal", "integers", "scaled"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "normal":
        X = rng.normal(size=(n, p))
    elif kind == "integers":
        X = rng.integers(-2, 3, size=(n, p)).astype(float)  # many ties and duplicated rows
    else:
        X = rng.normal(size=(n, p)) * 10.0 ** rng.integers(-6, 7, size=p)
    const = draw(st.lists(st.booleans(), min_size=p, max_size=p))
    for j in np.flatnonzero(const):
        X[:, j] = draw(st.sampled_from([0.0, 1.0, -3.5, 1e6]))
    if n >= 4 and draw(st.booleans()):
        X[n // 2:] = X[: n - n // 2]  # duplicated rows
    n_classes = draw(st.integers(2, 3))
    y_true = np.arange(n) % n_classes
    rng.shuffle(y_true)
    # at least `least` labeled samples (if present) of every class; more at random
    labeled = rng.random(n) < draw(st.floats(0.0, 1.0))
    least = draw(st.sampled_from([1, 2, 2]))
    for c in range(n_classes):
        labeled[np.flatnonzero(y_true == c)[:least]] = True
    y = np.where(labeled, y_true, -1)
    C = Constraints.from_labels(y)
    if draw(st.booleans()) and len(C):  # keep a random subset of the pairs
        keep_ml = rng.random(C.n_ml) < 0.5
        keep_cl = rng.random(C.n_cl) < 0.5
        C = Constraints(C.ml[keep_ml], C.cl[keep_cl])
    return X, y, C


#: scores whose formula itself reaches the worst value (+inf: a zero cannot-link sum; scanpy's
#: normalized dispersion is undefined for a gene alone in its mean bin)
WORST_BY_FORMULA = {"cs1", "c3", "c4", "sc4", "scanpy_hvg"}


def _nan_allowed(spec, X, y, n) -> np.ndarray:
    """Features a method may leave undefined (worst value) beyond the constant ones."""
    allowed = constant_features(X).copy()
    if n <= GRAPH_TINY_N:
        allowed[:] = True  # the kNN/constraint graph of 2-3 samples can be empty
    if "labels" in spec.needs:
        lab = y >= 0
        within_const = np.ones(X.shape[1], dtype=bool)
        for c in np.unique(y[lab]):
            within_const &= np.ptp(X[y == c], axis=0) == 0
        allowed |= within_const
    return allowed


def _check(name, X, y, C):
    spec = get_method(name)
    params = SMALL.get(name, lambda p: {})(X.shape[1])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = run_method(name, X, y, C, rng=0, **params)
    except SSFSError as e:  # a clean refusal (e.g. too few labeled samples) is acceptable
        assert str(e) and "\n" not in str(e)
        return
    p = X.shape[1]
    s = np.asarray(r.scores, dtype=float)
    assert s.shape == (p,)
    assert not np.isnan(s).any(), f"{name}: NaN score"
    np.testing.assert_array_equal(np.sort(r.order), np.arange(p), err_msg=f"{name}: order is not a permutation")
    worst = -np.inf if spec.higher_is_better else np.inf
    const = constant_features(X)
    assert (s[const] == worst).all(), f"{name}: constant feature got a score"
    pos = np.empty(p, dtype=int)
    pos[r.order] = np.arange(p)
    better = s != worst
    if const.any() and better.any():
        assert pos[const].min() > pos[better].max(), f"{name}: constant feature ranked before a scored one"
    bad = ~better & ~_nan_allowed(spec, X, y, X.shape[0])
    if spec.name not in WORST_BY_FORMULA:
        assert not bad.any(), f"{name}: undefined score for non-constant feature(s) {np.flatnonzero(bad).tolist()}"


@pytest.mark.parametrize("name", SCORE_METHODS)
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_scores_finite_or_nan_and_order_is_permutation(name, problem):
    spec = get_method(name)
    if spec.requires:
        pytest.importorskip(spec.requires)
    _check(name, *problem)


@pytest.mark.parametrize("name", SCORE_METHODS)
def test_edge_shapes(name):
    """p = 1, n = 2, all-constant matrix, duplicated rows: valid output or a one-line ssfs error."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 5))
    y = np.array([0, 0, 0, 1, 1, 1] + [-1] * 6)
    cases = [
        (X[:, :1], y),
        (X[:2], np.array([0, 1])),
        (np.zeros((12, 3)), y),
        (np.vstack([X[:6], X[:6]]), y),
    ]
    for Xc, yc in cases:
        _check(name, Xc, yc, Constraints.from_labels(yc))


#: label-based filters must put a perfect separator first
SEPARATOR_METHODS = ["fisher", "sam", "relieff", "infogain", "geode", "efsis_basic"]
@pytest.mark.parametrize("name", SEPARATOR_METHODS)
def test_perfect_separator_ranks_first(name):
    rng = np.random.default_rng(1)
    n = 30
    yt = np.arange(n) % 2
    X = rng.normal(size=(n, 4))
    X[:, 2] = 3.0 * yt  # constant within each class, differs between them
    y = np.where(np.arange(n) < 12, yt, -1)
    r = run_method(name, X, y, rng=0)
    assert r.order[0] == 2 and not np.isnan(r.scores[2])
