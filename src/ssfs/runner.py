"""Running a registered method: input checks, the call, and the ranking.

This is the one entry point used by the workflow, the command line and the
scikit-learn selector, so every caller gets the same validation and the same
deterministic ranking.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_labels, check_matrix, constant_features
from .constraints import Constraints
from .errors import MethodError, SupervisionError
from .ranking import order_from_scores
from .registry import MethodSpec, SelectionResult, check_params, get_method, install_hint


@dataclass
class Ranked:
    """A method's result with the ranking derived from it."""

    method: str
    result: SelectionResult
    order: np.ndarray  # feature indices, best first (for subsets: the subset only)
    higher_is_better: bool
    kind: str
    #: methods whose list depends on the number of features kept (EFSIS thresholds):
    #: size t -> the order built for t (``SelectionResult.extra["scores_by_size"]``)
    by_size: dict = field(default_factory=dict)

    @property
    def scores(self):
        return self.result.scores


def _validated(name: str, X, y, constraints, rng, params: dict):
    """(spec, X, y, constraints, rng) after every input check of :func:`run_method`."""
    spec: MethodSpec = get_method(name)
    check_params(spec, params)
    if spec.requires:
        try:
            __import__(spec.requires)
        except ImportError:
            raise MethodError(
                f"method {name!r} needs the optional package {spec.requires!r}: {install_hint(spec.requires)}"
            ) from None
    X = check_matrix(X)
    n, p = X.shape
    y = check_labels(y, n)
    if constraints is None:
        constraints = Constraints.from_labels(y)
    constraints.validate(n)
    if "labels" in spec.needs:
        classes, counts = np.unique(y[y >= 0], return_counts=True)
        if classes.size < 2:
            raise SupervisionError(
                f"method {name!r} needs labeled samples of at least 2 classes, got {classes.size}"
            )
    if "constraints" in spec.needs and len(constraints) == 0:
        raise SupervisionError(f"method {name!r} needs pairwise constraints but none were given")
    if "cannot_link" in spec.needs and constraints.n_cl == 0:
        raise SupervisionError(f"method {name!r} needs cannot-link constraints but none were given")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return spec, X, y, constraints, rng


def run_method(
    name: str,
    X,
    y=None,
    constraints: Constraints | None = None,
    rng: np.random.Generator | int | None = 0,
    **params,
) -> Ranked:
    """Validate input, run method ``name`` and derive its ranking.

    Missing constraints are derived from the labeled samples (all pairs, as CLS does).
    """
    spec, X, y, constraints, rng = _validated(name, X, y, constraints, rng, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 handled in _ranked
        out = spec.fn(X, y, constraints, rng, **params)
    return _ranked(spec, out, X)


def _members_of(spec: MethodSpec):
    if spec.members is None:
        raise MethodError(f"method {spec.name!r} is not an ensemble of independent members; it cannot be split")
    return spec.members


def splittable(name: str) -> bool:
    """Whether method ``name`` can be split into member chunks (:func:`run_member_chunk`)."""
    return get_method(name).members is not None


def run_member_chunk(name: str, X, y=None, constraints: Constraints | None = None,
                     rng: np.random.Generator | int | None = 0, *, chunk: int, n_chunks: int, **params) -> dict:
    """Arrays of chunk ``chunk`` (0-based) of ``n_chunks`` of the members of ensemble ``name``.

    With the same inputs and ``rng`` seed, :func:`combine_member_chunks` of all chunks
    gives exactly the ranking of :func:`run_method`, whatever ``n_chunks``.
    """
    from .registry import member_chunks

    spec, X, y, constraints, rng = _validated(name, X, y, constraints, rng, params)
    mem = _members_of(spec)
    if not 0 <= int(chunk) < int(n_chunks):
        raise MethodError(f"member chunk {chunk} does not exist: chunks are numbered 0..{int(n_chunks) - 1}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plan = mem.plan(X, y, constraints, rng, **params)
        idx = member_chunks(mem.size(plan), n_chunks)[int(chunk)]
        return mem.run(X, y, constraints, plan, idx, **params)


def combine_member_chunks(name: str, X, y=None, constraints: Constraints | None = None,
                          rng: np.random.Generator | int | None = 0, *, parts, **params) -> Ranked:
    """The ranking of ensemble ``name`` from the outputs of all its member chunks
    (:func:`run_member_chunk`, given in chunk order)."""
    from .registry import stack_parts

    spec, X, y, constraints, rng = _validated(name, X, y, constraints, rng, params)
    mem = _members_of(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plan = mem.plan(X, y, constraints, rng, **params)
        stacked = stack_parts(parts)
        n = mem.size(plan)
        got = {k: v.shape[0] for k, v in stacked.items()}
        if any(v != n for v in got.values()):
            raise MethodError(f"{name}: the member chunks hold {sorted(set(got.values()))} members, the plan has {n}")
        out = mem.combine(X, y, constraints, plan, stacked, **params)
    return _ranked(spec, out, X)


def _ranked(spec: MethodSpec, out, X) -> Ranked:
    """The ranking of a method's output, undefined scores set to the worst value."""
    name = spec.name
    p = X.shape[1]
    res = out if isinstance(out, SelectionResult) else SelectionResult(scores=np.asarray(out, dtype=float))
    if spec.kind == "extraction":
        if res.transform is None:
            raise MethodError(f"extraction method {name!r} returned no transform")
        order = np.arange(0)
    elif res.selected is not None:
        order = np.asarray(res.selected, dtype=np.int64)
    else:
        if res.scores is None or res.scores.shape != (p,):
            raise MethodError(f"method {name!r} returned scores of the wrong shape")
        order = None  # set below, after undefined scores are made the worst
    # Documented value of an undefined score (0/0, a feature constant over the samples
    # the method saw, whatever round-off residue its formula gives): the worst value,
    # so it ranks last and no ranking ever holds NaN.
    worst = -np.inf if spec.higher_is_better else np.inf
    by_size = {}
    if res.scores is not None and res.scores.shape == (p,):
        const = constant_features(X)
        res.scores = np.where(np.isnan(res.scores) | const, worst, res.scores)
        if res.selected is None and spec.kind == "score":
            order = order_from_scores(res.scores, spec.higher_is_better)
        for t, sc in (res.extra.get("scores_by_size") or {}).items():
            sc = np.asarray(sc, dtype=float)
            by_size[int(t)] = order_from_scores(np.where(np.isnan(sc) | const, worst, sc), spec.higher_is_better)
    return Ranked(name, res, order, spec.higher_is_better, spec.kind, by_size)


