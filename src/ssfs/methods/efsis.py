"""EFSIS: Ensemble Feature Selection Integrating Stability (Zhang & Jonassen 2018/2019).

Data perturbation: M bootstrap resamples of the labeled training samples (the
same resamples for every ranker, drawn up front from the method's rng, so
chunking and parallelism cannot change them). Each ranker ranks the features
on each resample; its M rankings are combined by the rank product (eq. 2,
computed as a sum of log ranks) into its sub-final list L_n, and its stability
S_n (eq. 1) is measured on its top-t features of every resample.

Function perturbation: the final score is prod_n R_{f,n}^(w_n) (eq. 3), R_{f,n}
the position of f in L_n, lower = better. ``weights="paper"`` uses
w_n = 1 - S_n as printed (note: with a lower-is-better product this gives the
*less* stable rankers the larger exponent); ``weights="stability_rank"`` is the
variant of the original code, w_n = rank of S_n among the rankers (most stable
= 1, ties averaged); ``weights="none"`` is the plain rank product.
``efsis_basic`` is basic function perturbation: each ranker on the full
training data, unweighted rank product of their rankings.

Bootstraps are stratified by class by default (the EFSIS code drew each class's
size with replacement within the class); ``stratified=False`` draws n samples
from all labeled samples as the paper's text describes.

Splitting one large ensemble (e.g. across cluster jobs): ``efsis`` and
``bootstrap_rank`` register a :class:`ssfs.registry.Members` protocol (resamples
planned from the rng by :func:`plan_bootstraps`, any slice of them scored by
:func:`bootstrap_chunk`, combined in resample order), so
:func:`ssfs.runner.run_member_chunk` / :func:`ssfs.runner.combine_member_chunks`
and the workflow's ``execution.member_chunks`` give the ranking of one call.

Thresholds: the paper weights the rankers per threshold t; ``top_percent`` given
as a list computes every threshold's final list from the same resamples
(``extra["scores_by_size"]``), which the workflow evaluates each at its own size.

Speed (issue #16): each of the four rankers scores all resamples of a chunk in one pass
(``bootstrap_scores`` of its module, :data:`BATCHED`: a resample is the labeled samples
with multiplicities, so sorts, class sums, Gram matrices and pair differences are shared;
equal to one run per resample up to rounding, information gain exactly). With
``n_jobs`` > 1 the rankers run side by side in threads, one core each, ReliefF and GeoDE
whole, information gain and SAM (:data:`SPLIT`: a resample's scores do not depend on the
others) in parts of the resamples that fill the threads up; each part's rows are ranked in
its thread, and each ranker's sub-final list and stability computed by the thread that
ends it. Results do not depend on ``n_jobs``, to the last bit. A 54 x 12,625 fold (50
resamples, nine thresholds) takes about 0.4 s on 2 cores (``benchmarks/bench_efsis.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import numpy as np

from .._progress import progress
from .._threads import job_threads, limit_threads
from ..constraints import Constraints
from ..errors import InputError, MethodError
from ..params import MethodName, MethodParams, Percent, PosInt
from ..registry import (
    Members,
    SelectionResult,
    check_params,
    get_method,
    register,
    run_members,
)
from ._labeled import labeled
from ._shared.aggregation import (
    aggregate_ranks,
    log_rank_product,
    order_from_aggregate,
    rank_rows,
    ranks_from_aggregate,
    weighted_rows,
)
from ._shared.invariance import EVERY, of_rankers
from ._shared.stability import efsis_stability_of_ranks, n_top

EFSIS_RANKERS = ("sam", "geode", "relieff", "infogain")
#: rankers whose module scores every bootstrap resample in one pass (``bootstrap_scores``),
#: costliest first (54 x 12,625 on one core: 0.22, 0.14, 0.11, 0.04 s), the order they start in
BATCHED = {"relieff": "relieff", "infogain": "infogain", "sam": "sam", "geode": "geode"}
#: batched rankers whose resamples score alike in parts (no shared work repeated, every
#: resample's scores independent of the others to the last bit): split across threads
SPLIT = frozenset({"infogain", "sam"})


# ----------------------------------------------------------------- resamples
def draw_bootstraps(codes: np.ndarray, n_boot: int, rng: np.random.Generator, stratified: bool = True):
    """(M x n index matrix, M seeds): bootstrap resamples of the samples 0..n-1 and one seed
    per resample for rankers that draw random numbers."""
    codes = np.asarray(codes)
    n = codes.size
    if int(n_boot) < 1:
        raise InputError(f"n_boot must be >= 1, got {n_boot}")
    M = int(n_boot)
    if stratified:
        parts = []
        for c in np.unique(codes):  # loop over classes
            members = np.flatnonzero(codes == c)
            parts.append(members[rng.integers(0, members.size, size=(M, members.size))])
        boots = np.concatenate(parts, axis=1)
    else:
        boots = rng.integers(0, n, size=(M, n))
    seeds = rng.integers(0, 2**63 - 1, size=M, dtype=np.int64)
    return boots.astype(np.int64), seeds


def _ranker_list(rankers, ranker_params):
    names = [rankers] if isinstance(rankers, str) else list(rankers)
    if not names:
        raise InputError("the ensemble needs at least one ranker")
    if len(set(names)) != len(names):
        raise InputError(f"ranker listed twice in {names}")
    params = dict(ranker_params or {})
    unknown = set(params) - set(names)
    if unknown:
        raise InputError(f"ranker_params given for rankers not in the ensemble: {sorted(unknown)}")
    out = []
    for nm in names:
        if nm in ("efsis", "efsis_basic", "bootstrap_rank"):
            raise InputError(f"ensemble {nm!r} cannot be a ranker of an ensemble")
        spec = get_method(nm)
        if spec.kind != "score":
            raise MethodError(f"ranker {nm!r} is a {spec.kind} method; ensembles need per-feature scores")
        p = dict(params.get(nm, {}))
        check_params(spec, p)
        out.append((spec, p))
    return out


def _score_once(spec, params, X, codes, seed):
    cons = Constraints.from_labels(codes) if (spec.needs & {"constraints", "cannot_link"}) else Constraints.empty()
    rng = np.random.default_rng(int(seed))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = spec.fn(X, codes, cons, rng, **params)
    s = out.scores if isinstance(out, SelectionResult) else out
    s = np.asarray(s, dtype=float)
    if s.shape != (X.shape[1],):
        raise MethodError(f"ranker {spec.name!r} returned scores of the wrong shape")
    return s


def _batched(spec, params, X, codes, boots, seeds, n_jobs=1):
    """Scores of all resamples at once when the ranker has a shared-work implementation
    (``bootstrap_scores`` of its module: one pass over the data for every resample; BLAS
    and compiled loops on ``n_jobs`` threads). None: score each resample alone."""
    from importlib import import_module

    from scipy import sparse

    if spec.name not in BATCHED or sparse.issparse(X):
        return None

    module = import_module(f"{__package__}.{BATCHED[spec.name]}")
    with limit_threads(max(1, int(n_jobs)), user_api="blas"):
        return module.bootstrap_scores(X, codes, boots, seeds, threads=max(1, int(n_jobs)), **params)


def bootstrap_chunk(X, codes, boots, seeds, rankers=EFSIS_RANKERS, ranker_params=None, n_jobs: int | None = 1,
                    rows=None, after=None):
    """Scores of every ranker on the resamples ``boots`` (a chunk of the full M x n matrix).

    X holds labeled samples only, ``codes`` their class codes. Returns {ranker: chunk x p}.
    ``rows(ranker, S)``: a row-wise transform of the scores (e.g. ranks), applied to each
    part of the resamples in the thread that scored it; ``after(ranker, rows)``: then to
    all of the chunk's rows, in the ranker's thread; the result holds what the last one
    returns. ``n_jobs`` > 1 runs the rankers side by side (or a ranker's resamples) in
    threads (None: the job's threads, ``$SSFS_THREADS``); results do not depend on it.
    """
    boots = np.asarray(boots, dtype=np.int64).reshape(-1, codes.size)
    seeds = np.asarray(seeds, dtype=np.int64).ravel()
    if boots.shape[0] != seeds.size:
        raise InputError("bootstrap_chunk needs one seed per resample")

    n_jobs = job_threads(n_jobs)
    specs = _ranker_list(rankers, ranker_params)
    rows = rows or (lambda name, S: S)
    after = after or (lambda name, R: R)
    # one BLAS thread: the ensemble parallelises over resamples instead (small products
    # oversubscribe the cores otherwise), and results cannot depend on the BLAS thread count
    what = f"bootstrap rankings ({', '.join(s.name for s, _ in specs)} on {boots.shape[0]} resamples)"
    with limit_threads(1, user_api="blas"), progress(len(specs) * boots.shape[0], what) as bar:
        if n_jobs > 1 and len(specs) > 1 and all(s.name in BATCHED for s, _ in specs):
            return _side_by_side(specs, X, codes, boots, seeds, int(n_jobs), bar, rows, after)
        return {spec.name: after(spec.name, rows(spec.name, _chunk_scores(spec, params, X, codes, boots, seeds,
                                                                          n_jobs, bar)))
                for spec, params in specs}


def _side_by_side(specs, X, codes, boots, seeds, n_jobs: int, bar, rows, after) -> dict:
    """The rankers' batched passes in ``n_jobs`` threads, one core each (their serial numpy
    steps overlap), whole rankers first, costliest first; the rankers of :data:`SPLIT` then
    in ``n_jobs`` parts of the resamples each, so that the threads finish together. A
    ranker's ``after`` runs in the thread that finishes its last part."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Lock

    M = boots.shape[0]
    costly_first = sorted(specs, key=lambda sp: (sp[0].name in SPLIT, list(BATCHED).index(sp[0].name)))
    tasks = []
    for spec, prm in costly_first:
        bounds = np.linspace(0, M, max(1, min(n_jobs, M)) + 1 if spec.name in SPLIT else 2).astype(int)
        tasks += [(spec, prm, a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    parts, lock = {s.name: {} for s, _ in specs}, Lock()

    def run(spec, prm, a, b):
        R = rows(spec.name, _chunk_scores(spec, prm, X, codes, boots[a:b], seeds[a:b], 1, bar))
        with lock:
            got = parts[spec.name]
            got[a] = R
            if sum(v.shape[0] for v in got.values()) < M:
                return None
        return spec.name, after(spec.name, np.vstack([got[k] for k in sorted(got)]) if len(got) > 1 else R)

    with ThreadPoolExecutor(n_jobs) as pool:
        done = dict(r for r in pool.map(lambda t: run(*t), tasks) if r is not None)
    return {s.name: done[s.name] for s, _ in specs}


def _chunk_scores(spec, params, X, codes, boots, seeds, n_jobs, bar=None):
    if boots.shape[0] == 0:
        return np.zeros((0, X.shape[1]))
    S = _batched(spec, params, X, codes, boots, seeds, n_jobs)
    if S is not None:
        if bar is not None:
            bar.update(boots.shape[0])
        return S

    def one(m):
        b = boots[m]
        s = _score_once(spec, params, X[b], codes[b], seeds[m])
        if bar is not None:
            bar.update()
        return s

    if n_jobs == 1 or boots.shape[0] == 1:
        rows = [one(m) for m in range(boots.shape[0])]
    else:
        from joblib import Parallel, delayed

        rows = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(one)(m) for m in range(boots.shape[0]))
    return np.vstack(rows)


def warm_up() -> None:
    """Compile the rankers' numba kernels (:mod:`ssfs.methods._shared.ranker_kernels`,
    :mod:`ssfs._sort_kernels`), or load them from numba's disk cache, on a tiny problem: the
    first compilation takes about 30 s, and processes started together would each pay it (the
    test suite's controller calls this before its workers start)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 16))
    for K in (2, 3):  # two classes: the table path; more: the general recursion
        y = np.arange(12) % K
        boots, seeds = draw_bootstraps(y, 2, rng)
        bootstrap_chunk(X, y, boots, seeds)
    from .._sort_kernels import packed_order  # lazy: numba (about 1 s) only for large score matrices

    packed_order(X)


def combine_chunks(chunks) -> dict:
    """Stack chunk outputs of :func:`bootstrap_chunk` (given in resample order)."""
    chunks = list(chunks)
    if not chunks:
        raise InputError("no chunks to combine")
    if len(chunks) == 1:
        return dict(chunks[0])
    names = list(chunks[0])
    if any(list(c) != names for c in chunks):
        raise InputError("chunks hold different rankers")
    return {nm: np.vstack([c[nm] for c in chunks]) for nm in names}


# ----------------------------------------------------------------- aggregation
@dataclass
class EnsembleResult:
    """Everything one EFSIS run produces (per threshold where it depends on t)."""

    rankers: list
    top_k: list  # t per threshold
    sub_final_ranks: dict  # ranker -> R_{f,n} (positions in L_n, 1 = best)
    stability: dict  # ranker -> [S_n per threshold]
    exponents: dict  # ranker -> [w_n per threshold]
    log_scores: list  # per threshold: sum_n w_n log R_{f,n} (lower = better)
    orders: list  # per threshold: final order, best first
    extra: dict = field(default_factory=dict)


def _weights(stabs: np.ndarray, weights: str) -> np.ndarray:
    if weights == "paper":
        return 1.0 - stabs
    if weights == "stability_rank":
        from scipy.stats import rankdata

        return rankdata(-stabs, method="average")
    if weights == "none":
        return np.ones_like(stabs)
    raise InputError(f"efsis: weights must be 'paper', 'stability_rank' or 'none', got {weights!r}")


def _sub_final(S: np.ndarray, higher: bool, ts: list) -> tuple:
    """One ranker's sub-final list positions R_{f,n} (eq. 2) and its stability per threshold (eq. 1)."""
    return _summary(rank_rows(S, higher), ts)


def _summary(R: np.ndarray, ts: list) -> tuple:
    """:func:`_sub_final` from the resample x feature ranks."""
    return ranks_from_aggregate(log_rank_product(R)), efsis_stability_of_ranks(R, ts)


def efsis_from_scores(score_mats: dict, higher: dict, top_k, weights: str = "paper",
                      n_jobs: int | None = 1) -> EnsembleResult:
    """EFSIS phases from per-ranker resample x feature score matrices.

    ``top_k``: t (int) or a list of t values (stability and the final list depend on t);
    ``n_jobs``: rankers summarised in that many threads (same result).
    """
    names = list(score_mats)
    ts = [int(t) for t in np.atleast_1d(top_k)]
    n_jobs = job_threads(n_jobs)
    if n_jobs > 1 and len(names) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(int(n_jobs), len(names))) as pool:
            parts = list(pool.map(lambda nm: _sub_final(score_mats[nm], higher[nm], ts), names))
    else:
        parts = [_sub_final(score_mats[nm], higher[nm], ts) for nm in names]
    return efsis_from_summaries(dict(zip(names, parts, strict=True)), ts, weights)


def efsis_from_summaries(summaries: dict, ts: list, weights: str = "paper") -> EnsembleResult:
    """EFSIS eq. 3 from every ranker's (sub-final positions, stability per threshold t in ``ts``)."""
    names = list(summaries)
    sub = {nm: summaries[nm][0] for nm in names}
    stab = {nm: summaries[nm][1] for nm in names}
    logR = np.log(np.vstack([sub[nm] for nm in names]).astype(float))
    expo, logs, orders = {nm: [] for nm in names}, [], []
    for j in range(len(ts)):
        s = np.array([stab[nm][j] for nm in names])
        w = _weights(s, weights)
        for nm, wn in zip(names, w, strict=True):
            expo[nm].append(float(wn))
        agg = weighted_rows(w, logR)  # eq. 3 in log space
        logs.append(agg)
        orders.append(order_from_aggregate(agg))
    return EnsembleResult(names, ts, sub, stab, expo, logs, orders)


@dataclass(frozen=True)
class BootstrapPlan:
    """The labeled training samples and every resample of a bootstrap ensemble."""

    XL: object  # labeled samples x features (dense or CSR)
    codes: np.ndarray  # their class codes
    boots: np.ndarray  # M x n_labeled resample indices
    seeds: np.ndarray  # M per-resample seeds


def plan_bootstraps(X, y, rng, *, n_boot: int = 50, stratified: bool = True, boot_indices=None,
                    method: str = "efsis") -> BootstrapPlan:
    """Labeled samples of (X, y) and M resamples of them with one seed each, drawn from ``rng``
    (``boot_indices``: a given M x n_labeled resample matrix; the seeds still come from ``rng``)."""
    XL, codes, _ = labeled(X, y, method=method, keep_sparse=True)
    if boot_indices is None:
        boots, seeds = draw_bootstraps(codes, n_boot, rng, stratified)
    else:
        boots = np.atleast_2d(np.asarray(boot_indices, dtype=np.int64))
        if boots.min() < 0 or boots.max() >= codes.size:
            raise InputError(f"boot_indices must index the {codes.size} labeled samples")
        seeds = rng.integers(0, 2**63 - 1, size=boots.shape[0], dtype=np.int64)
    for m in range(boots.shape[0]):
        if np.unique(codes[boots[m]]).size < 2:
            raise InputError(f"bootstrap resample {m} holds a single class; use stratified=True")
    return BootstrapPlan(XL, codes, boots, seeds)


def efsis_fold(X, y, rng, rankers=EFSIS_RANKERS, n_boot: int = 50, top_percent=1.0, n_jobs: int | None = 1,
               boot_indices=None, *, ranker_params=None, weights: str = "paper", stratified: bool = True,
               chunk_size: int | None = None) -> EnsembleResult:
    """EFSIS on one training set. ``y`` may hold -1 (unlabeled): only labeled samples are used.

    ``top_percent``: threshold(s) t as a percentage of the features (paper: 0.3 ... 5).
    ``boot_indices``: optional M x n_labeled resample matrix (indices into the labeled
    samples) to reuse given resamples; the per-resample seeds still come from ``rng``.
    ``chunk_size``: process resamples in chunks of this size (same result; lower memory).
    ``n_jobs``: threads (None: the job's threads, ``$SSFS_THREADS``; same result).
    """
    n_jobs = job_threads(n_jobs)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    plan = plan_bootstraps(X, y, rng, n_boot=n_boot, stratified=stratified, boot_indices=boot_indices)
    M = plan.boots.shape[0]
    step = M if not chunk_size else int(chunk_size)
    if step >= M:  # one chunk: each ranker's summary in its own thread, right after its scores
        ts = _thresholds(plan, top_percent)
        parts = bootstrap_chunk(plan.XL, plan.codes, plan.boots, plan.seeds, rankers, ranker_params, n_jobs,
                                rows=lambda nm, S: rank_rows(S, get_method(nm).higher_is_better),
                                after=lambda nm, R: _summary(R, ts))
        res = efsis_from_summaries(parts, ts, weights)
    else:
        chunks = [bootstrap_chunk(plan.XL, plan.codes, plan.boots[a:a + step], plan.seeds[a:a + step], rankers,
                                  ranker_params, n_jobs) for a in range(0, M, step)]
        res = _efsis_combine(plan, combine_chunks(chunks), top_percent, weights, n_jobs)
    res.extra.update(boots=plan.boots, seeds=plan.seeds, top_percent=list(np.atleast_1d(top_percent)))
    return res


def _thresholds(plan: BootstrapPlan, top_percent) -> list:
    return [n_top(plan.XL.shape[1], pc) for pc in np.atleast_1d(top_percent)]


def _efsis_combine(plan: BootstrapPlan, scores: dict, top_percent, weights, n_jobs: int | None = 1) -> EnsembleResult:
    higher = {nm: get_method(nm).higher_is_better for nm in scores}
    return efsis_from_scores(scores, higher, _thresholds(plan, top_percent), weights, n_jobs)


def _as_result(res: EnsembleResult) -> SelectionResult:
    """Scores of the first threshold; with several thresholds each one's own final list
    (``scores_by_size``: t -> sum_n w_n log R_{f,n} with that threshold's weights)."""
    extra = {
        "stability": {k: v[0] for k, v in res.stability.items()},
        "exponents": {k: v[0] for k, v in res.exponents.items()},
        "top_k": res.top_k[0],
        "sub_final_ranks": res.sub_final_ranks,
    }
    if len(res.top_k) > 1:
        extra["scores_by_size"] = dict(zip(res.top_k, res.log_scores, strict=True))
        extra["stability_by_size"] = {k: dict(zip(res.top_k, v, strict=True)) for k, v in res.stability.items()}
        extra["exponents_by_size"] = {k: dict(zip(res.top_k, v, strict=True)) for k, v in res.exponents.items()}
    return SelectionResult(scores=res.log_scores[0], extra=extra)


def _plan(X, y, constraints, rng, *, n_boot=50, stratified=True, **_):
    return plan_bootstraps(X, y, rng, n_boot=n_boot, stratified=stratified)


def _run(X, y, constraints, plan: BootstrapPlan, members, *, rankers=EFSIS_RANKERS, ranker_params=None,
         n_jobs=None, **_):
    members = np.asarray(members, dtype=np.int64)
    return bootstrap_chunk(plan.XL, plan.codes, plan.boots[members], plan.seeds[members], rankers, ranker_params,
                           n_jobs)


def _combine(X, y, constraints, plan, parts, *, top_percent=1.0, weights="paper", n_jobs=None, **_):
    return _as_result(_efsis_combine(plan, parts, top_percent, weights, n_jobs))


def _size(plan: BootstrapPlan) -> int:
    return plan.boots.shape[0]


EFSIS_MEMBERS = Members(plan=_plan, size=_size, run=_run, combine=_combine)


def _ensemble_invariances(params: dict, bootstrap: bool) -> frozenset:
    """The rankers' common invariances, kept by average ranks (ties never go by position);
    bootstrap resamples are drawn in sample order."""
    ranker_params = params.get("ranker_params") or {}
    names = [params["rankers"]] if isinstance(params["rankers"], str) else list(params["rankers"])
    own = EVERY - {"samples"} if bootstrap else EVERY
    return of_rankers(own, [(nm, ranker_params.get(nm)) for nm in names])


@register("efsis", higher_is_better=False, needs=("labels",), members=EFSIS_MEMBERS,
          invariances=lambda prm: _ensemble_invariances(prm, bootstrap=True))
def efsis_method(X, y, constraints, rng, *, rankers: Annotated[str | list[str], MethodName()] = EFSIS_RANKERS,
                 n_boot: PosInt = 50,
                 top_percent: Percent | list[Percent] = 1.0,
                 weights: Literal["paper", "stability_rank", "none"] = "paper", stratified: bool = True,
                 ranker_params: Annotated[dict, MethodParams()] | None = None, n_jobs: PosInt | None = None):
    """EFSIS (Zhang & Jonassen): bootstrap rank products per ranker, stability-weighted product (eq. 1-3).

    ``top_percent``: the threshold t (percent of the features) of the stability weights;
    a list gives one final list per threshold, as the paper's evaluation does (its
    weights differ per threshold): the ranking's main order is the first threshold's,
    and the evaluation of t features uses the list built for t. ``n_jobs``: threads
    (default: the job's threads, ``$SSFS_THREADS``; the result does not depend on it).
    """
    # the one-call path of the Members protocol (plan, all members, combine), each ranker
    # summarised in its own thread right after its scores (tests: equal to split members)
    return _as_result(efsis_fold(X, y, rng, rankers, n_boot, top_percent, n_jobs, ranker_params=ranker_params,
                                 weights=weights, stratified=stratified))


@register("efsis_basic", higher_is_better=False, needs=("labels",),
          invariances=lambda prm: _ensemble_invariances(prm, bootstrap=False))
def efsis_basic_method(X, y, constraints, rng, *, rankers: Annotated[str | list[str], MethodName()] = EFSIS_RANKERS,
                       ranker_params: Annotated[dict, MethodParams()] | None = None):
    """Basic function perturbation: rankers on the full training data, unweighted rank product (EFSIS 2.3)."""
    XL, codes, _ = labeled(X, y, method="efsis_basic", keep_sparse=True)
    seed = rng.integers(0, 2**63 - 1)
    rows, names = [], []
    for spec, params in _ranker_list(rankers, ranker_params):
        s = _score_once(spec, params, XL, codes, seed)
        rows.append(rank_rows(s, spec.higher_is_better)[0])
        names.append(spec.name)
    R = np.vstack(rows)
    return SelectionResult(scores=aggregate_ranks(R, "product"),
                           extra={"ranker_ranks": dict(zip(names, R, strict=True))})


def _br_plan(X, y, constraints, rng, *, n_boot=50, stratified=True, **_):
    return plan_bootstraps(X, y, rng, n_boot=n_boot, stratified=stratified, method="bootstrap_rank")


def _br_run(X, y, constraints, plan, members, *, base="relieff", base_params=None, n_jobs=None, **_):
    return _run(X, y, constraints, plan, members, rankers=[base], ranker_params={base: dict(base_params or {})},
                n_jobs=n_jobs)


def _br_combine(X, y, constraints, plan, parts, *, base="relieff", aggregate="product", top_percent=1.0, **_):
    R = rank_rows(parts[base], get_method(base).higher_is_better)
    t = n_top(plan.XL.shape[1], top_percent)
    return SelectionResult(scores=aggregate_ranks(R, aggregate),
                           extra={"stability": efsis_stability_of_ranks(R, [t])[0], "top_k": t})


BOOTSTRAP_MEMBERS = Members(plan=_br_plan, size=_size, run=_br_run, combine=_br_combine)


@register("bootstrap_rank", higher_is_better=False, needs=("labels",), members=BOOTSTRAP_MEMBERS,
          invariances=lambda prm: of_rankers(EVERY - {"samples"}, [(prm["base"], prm.get("base_params"))]))
def bootstrap_rank_method(X, y, constraints, rng, *, base: Annotated[str, MethodName()] = "relieff",
                          n_boot: PosInt = 50,
                          aggregate: Literal["product", "mean", "median", "min"] = "product",
                          top_percent: Percent = 1.0, stratified: bool = True,
                          base_params: Annotated[dict, MethodParams("base")] | None = None,
                          n_jobs: PosInt | None = None):
    """Data-perturbation ensemble of one ranker: bootstrap rankings aggregated (rank product by default;
    ``n_jobs`` as efsis's)."""
    return run_members(BOOTSTRAP_MEMBERS, X, y, constraints, rng, base=base, n_boot=n_boot, aggregate=aggregate,
                       top_percent=top_percent, stratified=stratified, base_params=base_params, n_jobs=n_jobs)
