"""Running a registered method: input checks, the call, and the ranking.

This is the one entry point used by the workflow, the command line and the
scikit-learn selector, so every caller gets the same validation and the same
deterministic ranking.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ._docs import doc_params
from ._numerics import exact_float, prepare_input, tie_variance_key
from ._threads import THREADS_ENV, job_threads, limit_threads  # noqa: F401 - re-exported here, where the docs point
from ._validation import check_labels_named, check_matrix
from .constraints import Constraints
from .errors import InputError, MethodError, SupervisionError
from .labels import class_name, using_class_names
from .methods._shared.batches import batch_codes, centred_in_batches
from .ranking import order_from_scores, tie_break_rng, tie_sizes, ties_message
from .registry import (
    MethodSpec,
    SelectionResult,
    check_params,
    get_method,
    install_hint,
    list_methods,
    member_chunks,
    stack_parts,
)
from .seeding import as_generator


@dataclass(frozen=True)
class MethodConfig:
    """One configured method: what a config's ``methods:`` entry says, checked.

    Attributes
    ----------
    label : str
        Its key in the config's ``methods`` (names its files, columns and seeds).
    method : str
        The registered method it runs (:func:`ssfs.list_methods`).
    params : dict
        The method's parameters (checked against its signature, :func:`ssfs.registry.check_params`).
    """

    label: str
    method: str
    params: dict = field(default_factory=dict)

    def run(self, X, y=None, constraints: Constraints | None = None, rng=0, batch=None) -> Ranked:
        """:func:`run_method` of this method with its parameters, comparing samples within their
        ``batch`` when given (:func:`within_batches`)."""
        X, params = within_batches(self.method, X, self.params, batch)
        return run_method(self.method, X, y, constraints, rng=rng, **params)


#: most values of a sparse X made dense to centre it within batches (8 bytes each: 0.8 GB)
MAX_CENTRED = 100_000_000


def within_batches(method: str, X, params: dict, batch) -> tuple:
    """``(X, params)`` with which ``method`` compares samples within their ``batch`` (one value per
    sample; None: X and params as given). A method with a ``batch`` parameter gets it
    (``propagate``); a method whose scores ignore a feature's offset (the "shift" invariance:
    ``fisher``, ``laplacian``, ``cls`` ...) ranks X minus every feature's mean in each batch (dense;
    a sparse X of up to :data:`MAX_CENTRED` values made dense); any other ranks X as given, with
    a warning that it sees the batches."""
    codes = batch_codes(batch, X.shape[0])
    if codes is None:
        return X, params
    how = batch_handling(method, params, X)
    if how == "parameter":
        return X, {**params, "batch": codes}
    if how == "centred":
        return centred_in_batches(X, codes), params
    warnings.warn(f"method {method!r} cannot compare samples within batches (it depends on a feature's offset, or "
                  "the data are too large to centre): it ranks the data as given, batches and all", UserWarning,
                  stacklevel=3)
    return X, params


def batch_handling(method: str, params: dict, X) -> str:
    """How ``method`` compares samples within batches (:func:`within_batches`): "parameter",
    "centred" or "as given"."""
    spec = get_method(method)
    if "batch" in spec.defaults:
        return "parameter"
    if "shift" in spec.promises(params) and (not sparse.issparse(X) or X.shape[0] * X.shape[1] <= MAX_CENTRED):
        return "centred"
    return "as given"


def method_configs(methods: dict) -> list[MethodConfig]:
    """The :class:`MethodConfig` of every entry of ``methods`` (label -> ``{"method", "params"}``,
    the validated config's form), in the mapping's order."""
    return [MethodConfig(label, entry["method"], dict(entry.get("params") or {})) for label, entry in methods.items()]


def pinned_threads(threads: int | None = None):
    """Context manager limiting every BLAS/OpenMP pool (threadpoolctl) to ``threads``
    (default :func:`job_threads`)."""
    return limit_threads(int(threads) if threads else job_threads())


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

    #: per feature, how many features share its score (1 = untied; empty without scores)
    ties: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the order a resample's top list reads in selection mode when the method gives one
    #: (``SelectionResult.extra["resample_scores"]``: its order without what the labels did not decide,
    #: ``propagate``'s label-free turns); None: :attr:`order`
    by_labels: np.ndarray | None = None

    @property
    def resample_order(self) -> np.ndarray:
        """What selection mode ranks a resample by (:attr:`by_labels`, else :attr:`order`)."""
        return self.order if self.by_labels is None else self.by_labels

    @property
    def scores(self):
        return self.result.scores

    @property
    def n_tied(self) -> int:
        """Number of features whose score another feature shares."""
        return int((self.ties > 1).sum())

    def ties_warning(self, k: int) -> str | None:
        """One line when the top ``k`` is decided by ties (broken by variance, then a
        seeded permutation), else None."""
        if self.result.scores is None or self.result.selected is not None or self.kind != "score":
            return None
        return ties_message(self.method, self.result.scores, self.order, k)


def _validated(name: str, X, y, constraints, rng, params: dict):
    """(spec, X, y, constraints, rng, context) after every input check of :func:`run_method`;
    X in the unit the method computes best in, by the invariances it promises
    (:func:`ssfs._numerics.prepare_input`: per-feature or common powers of two, centring)."""
    spec: MethodSpec = get_method(name)
    params.update(check_params(spec, params))
    if spec.requires:
        try:
            __import__(spec.requires)
        except ImportError:
            raise MethodError(
                f"method {name!r} needs the optional package {spec.requires!r}: {install_hint(spec.requires)}"
            ) from None
    if hasattr(X, "obs") and hasattr(X, "var"):
        raise InputError(
            "run_method takes a samples x features matrix, not an AnnData; use "
            f"ssfs.tl.rank_features(adata, {name!r}, groupby=<obs column of the labels>)"
        )
    promises = spec.promises(params)
    X = exact_float(X, method=name, shift_ok="shift" in promises)
    X, extremes = check_matrix(X, return_extremes=True)
    prep = prepare_input(X, extremes, method=name, promises=promises, alternatives=_scale_free_methods())
    if prep.scale != 1.0:
        warnings.warn(f"{name}: X was multiplied by 2^{int(np.log2(prep.scale))} (its largest |value| is outside "
                      "[2^-128, 2^128], where squares and sums overflow or underflow); exact, and the method's ranking "
                      "does not depend on a common scale of X (docs/invariances.md), so the ranking is X's; scores "
                      "that depend on the unit are in the rescaled unit", stacklevel=3)
    X = prep.X
    n, p = X.shape
    y, classes = check_labels_named(y, n)
    if constraints is None:
        constraints = Constraints.from_labels(y)
    constraints.validate(n)
    if "labels" in spec.needs:
        check_labeled_classes(name, y, classes)
    if "constraints" in spec.needs and len(constraints) == 0:
        raise SupervisionError(f"method {name!r} needs pairwise constraints but none were given")
    if "cannot_link" in spec.needs and constraints.n_cl == 0:
        raise SupervisionError(f"method {name!r} needs cannot-link constraints but none were given")
    rng = as_generator(rng)
    ctx = {"prep": prep, "y": y, "tie_rng": tie_break_rng(rng), "classes": classes}
    return spec, X, y, constraints, rng, ctx


def _scale_free_methods() -> str:
    """The methods invariant to each feature's scale, for messages."""
    return ", ".join(m for m in list_methods() if "scale" in get_method(m).promises())


#: parameters a method clips to what the data allow: name -> (bound, what the bound is), from (n, p)
CLIPPED = {
    "k": (lambda n, p: n - 1, "n - 1 (the other samples)", "at most {b} neighbours are used"),
    "n_pcs": (lambda n, p: min(n - 1, p), "min(n - 1, p)", "{b} principal components are used"),
    "n_components": (lambda n, p: min(n - 1, p), "min(n - 1, p)", "{b} components are used"),
}


def clipped_parameters(name: str, params: dict, shape) -> list[str]:
    """One note per parameter the caller gave (defaults are not noted) that exceeds what the
    data allow and is therefore clipped by the method (``k=1e9`` neighbours on 20 samples)."""
    n, p = shape
    notes = []
    for key, (bound, what, effect) in CLIPPED.items():
        v = params.get(key)
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and v > bound(n, p):
            b = max(1, bound(n, p))
            notes.append(f"method {name!r}: {key}={v} exceeds {what} = {bound(n, p)} of this data "
                         f"({n} samples x {p} features); {effect.format(b=b)}")
    return notes


def check_labeled_classes(name: str, y: np.ndarray, classes=None, *, min_per_class: int = 1) -> None:
    """A method that needs labels gets labeled samples of >= 2 classes, and every named
    class (``classes``, e.g. the categories of a categorical) at least ``min_per_class``."""
    present, counts = np.unique(y[y >= 0], return_counts=True)
    if present.size == 0:
        raise SupervisionError(f"method {name!r} needs labels but no sample is labeled")
    if present.size < 2:
        raise SupervisionError(
            f"method {name!r} needs labeled samples of at least 2 classes, got 1 (class "
            f"{class_name(classes, present[0])} with {int(counts[0])} labeled sample(s))"
        )
    if classes is not None:
        full = np.bincount(y[y >= 0], minlength=len(classes))
        low = np.flatnonzero(full < min_per_class)
        if low.size:
            c = low[0]
            raise SupervisionError(
                f"method {name!r}: class {class_name(classes, c)} has {int(full[c])} labeled sample(s)"
                + (f" (needs {min_per_class})" if min_per_class > 1 else "")
                + "; label some of its samples or drop the class"
            )


@doc_params
def run_method(
    name: str,
    X,
    y=None,
    constraints: Constraints | None = None,
    rng: np.random.Generator | int | None = 0,
    **params,
) -> Ranked:
    """Validate the input, run method ``name`` and derive its ranking: the one entry point of
    the command line, the workflow, ``ssfs.tl`` and the scikit-learn selector.

    Parameters
    ----------
    {method=name}
    X
        The samples x features matrix (numpy array or scipy.sparse; an AnnData is refused:
        use :func:`ssfs.tl.rank_features`). Finite values only.
    {y}
        Also a :class:`ssfs.labels.Labels` record (codes and names).
    {constraints}
    rng
        The seed (or a numpy Generator) of every random choice of the method and of the
        tie-breaking among equal scores; the same seed gives the same ranking.
    {method_params}

    Returns
    -------
    Ranked
        ``order`` (feature indices, best first; subset methods: the selected ones),
        ``scores`` (per feature; undefined scores are the worst value, so they rank last),
        ``higher_is_better``, ``ties`` (per feature, how many share its score) and
        ``result``, the method's :class:`~ssfs.registry.SelectionResult`.

    Raises
    ------
    SSFSError
        One line naming the problem: an unknown method or parameter
        (:class:`~ssfs.errors.MethodError`), an unusable matrix
        (:class:`~ssfs.errors.InputError`), labels or constraints the method cannot use
        (:class:`~ssfs.errors.SupervisionError`).

    Notes
    -----
    Equal scores are ordered by variance, then by a permutation drawn from ``rng``, never by
    column. BLAS/OpenMP pools are pinned to :func:`job_threads` while the method runs.

    Examples
    --------
    >>> ranked = run_method("cls", X, ["EWS", None, "NB", None, "RMS"], k=10)
    >>> ranked.order[:10]          # the ten best features
    """
    spec, X, y, constraints, rng, ctx = _validated(name, X, y, constraints, rng, params)
    for note in clipped_parameters(name, params, X.shape):
        warnings.warn(note, UserWarning, stacklevel=2)
    with warnings.catch_warnings(), using_class_names(ctx["classes"]), pinned_threads():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 handled in _ranked
        out = spec.fn(X, y, constraints, rng, **params)
    return _ranked(spec, out, X, ctx)


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
    spec, X, y, constraints, rng, ctx = _validated(name, X, y, constraints, rng, params)
    mem = _members_of(spec)
    if not 0 <= int(chunk) < int(n_chunks):
        raise MethodError(f"member chunk {chunk} does not exist: chunks are numbered 0..{int(n_chunks) - 1}")
    with warnings.catch_warnings(), pinned_threads():
        warnings.simplefilter("ignore", RuntimeWarning)
        plan = mem.plan(X, y, constraints, rng, **params)
        idx = member_chunks(mem.size(plan), n_chunks)[int(chunk)]
        return mem.run(X, y, constraints, plan, idx, **params)


def combine_member_chunks(name: str, X, y=None, constraints: Constraints | None = None,
                          rng: np.random.Generator | int | None = 0, *, parts, **params) -> Ranked:
    """The ranking of ensemble ``name`` from the outputs of all its member chunks
    (:func:`run_member_chunk`, given in chunk order)."""
    spec, X, y, constraints, rng, ctx = _validated(name, X, y, constraints, rng, params)
    mem = _members_of(spec)
    with warnings.catch_warnings(), pinned_threads():
        warnings.simplefilter("ignore", RuntimeWarning)
        plan = mem.plan(X, y, constraints, rng, **params)
        stacked = stack_parts(parts)
        n = mem.size(plan)
        got = {k: v.shape[0] for k, v in stacked.items()}
        if any(v != n for v in got.values()):
            raise MethodError(f"{name}: the member chunks hold {sorted(set(got.values()))} members, the plan has {n}")
        out = mem.combine(X, y, constraints, plan, stacked, **params)
    return _ranked(spec, out, X, ctx)


def _ranked(spec: MethodSpec, out, X, ctx: dict) -> Ranked:
    """The ranking of a method's output, undefined scores set to the worst value, ties
    broken by variance then a seeded permutation (:mod:`ssfs.ranking`)."""
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
    prep = ctx["prep"]
    if prep.scale != 1.0:
        res.extra["input_scale"] = prep.scale
    # Documented value of an undefined score (0/0, a feature constant over the samples
    # the method saw, whatever round-off residue its formula gives): the worst value,
    # so it ranks last and no ranking ever holds NaN.
    worst = -np.inf if spec.higher_is_better else np.inf
    by_size, by_labels = {}, None
    ties = np.zeros(0, dtype=np.int64)
    if res.scores is not None and res.scores.shape == (p,):
        const = prep.constant
        _check_finite(spec, res.scores, const, ctx["y"])
        res.scores = np.where(np.isnan(res.scores) | const, worst, res.scores)
        ties = tie_sizes(res.scores)
        var = tie_variance_key(X, prep.exponents, ties > 1)
        tie_seed = ctx["tie_rng"].integers(2**63 - 1)

        def order_of(sc, tied: bool = True):
            if not tied:  # no ties: the secondary keys cannot matter, skip them
                return order_from_scores(sc, spec.higher_is_better)
            return order_from_scores(sc, spec.higher_is_better, secondary=var,
                                     tie_rng=np.random.default_rng(tie_seed))

        if res.selected is None and spec.kind == "score":
            order = order_of(res.scores, bool((ties > 1).any()))
        def other_order(sc):  # another score vector of the method (EFSIS's sizes, the labels' own order)
            nonlocal var
            sc = np.where(np.isnan(sc) | const, worst, np.asarray(sc, dtype=float))
            tied = bool((tie_sizes(sc) > 1).any())
            if tied:  # ties elsewhere than in the main scores: all variances
                var = tie_variance_key(X, prep.exponents, np.ones(p, dtype=bool))
            return order_of(sc, tied)

        by_size = {int(t): other_order(sc) for t, sc in (res.extra.get("scores_by_size") or {}).items()}
        if "resample_scores" in res.extra:
            by_labels = other_order(res.extra["resample_scores"])
    return Ranked(name, res, order, spec.higher_is_better, spec.kind, by_size, ties, by_labels)


def _check_finite(spec: MethodSpec, scores, const, y) -> None:
    """Refuse a score vector without information: every non-constant feature's score
    NaN or infinite on finite input (an overflow, or a supervision the method cannot use).
    Single non-finite scores are documented cases: NaN = undefined (0/0) and +-inf = a
    zero denominator (e.g. a perfect separator's Fisher score); both are ranked as numbers
    (NaN worst)."""
    live = ~const
    bad = ~np.isfinite(scores) & live
    if not live.any() or bad.sum() < live.sum():
        return
    labels = y[y >= 0]
    classes = np.unique(labels)
    if classes.size == 1 and labels.size == y.size:
        raise SupervisionError(
            f"method {spec.name!r} gave no finite score: it needs samples of at least 2 classes or unlabeled "
            f"samples, got one class (code {int(classes[0])}) and every sample labeled")
    idx = np.flatnonzero(bad)
    shown = ", ".join(str(i) for i in idx[:5]) + (", ..." if idx.size > 5 else "")
    raise MethodError(
        f"method {spec.name!r} gave non-finite scores for all {idx.size} non-constant features (indices {shown}) "
        "on finite input: too few samples, or a supervision or scale the method cannot use, leaves it undefined")
