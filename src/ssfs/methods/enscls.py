"""EnsCLS: ensemble Constrained Laplacian Score (EnsCLS paper, Alg. 2 and eq. 4).

A committee of N members; member i draws a random subspace RSM^i of m = sqrt(p)
features (step 3), a bootstrap sample of the labeled samples (step 4; drawn
copies are kept as separate rows and the must-link / cannot-link constraints are
regenerated from the bootstrap's labels, so copies of one sample are must-linked),
takes every unlabeled sample projected on RSM^i (step 5; optionally replaced by
the reference vectors of a SOM trained on them, thesis 3.3.2) and scores the m
features by CLS (step 6, :func:`ssfs.methods._shared.cls.cls_from_graph`: kNN graph
with must-link edges added, cannot-link edges removed, heat-kernel bandwidth
resolved per member). By default (``space``, with the balanced members) they instead share one
kNN graph on the principal components of all features and differ by their features and labels.

Aggregation (steps 7-9). Alg. 2 adds imp/N for every member a feature appears
in, which favours (CLS: lower is better) features drawn less often; the default
``average="members"`` divides each feature's sum by the number of members in which
it received a finite score instead (the issue's "averaged over the members in which
a feature appears"); ``average="committee"`` is Alg. 2 literally. Features never
drawn, or constant in every member that drew them, get NaN (ranked last).

Speed. Every member's randomness is drawn up front from ``rng``
(:func:`plan_enscls`), so a member's score depends only on its plan entry: the
committee can be split into chunks (:func:`enscls_chunk`, e.g. one per workflow
job) and recombined (:func:`combine_enscls`) with bit-identical results, whatever
the chunking. Inside a chunk, members are stacked block-diagonally: one kNN search
per member (:func:`ssfs.methods._shared.graph.knn_search`), then one graph construction and one
CLS evaluation for a whole batch of members. Each member's block is scaled by
1/sqrt(t_i) (t_i its own bandwidth) so a single bandwidth of 1 serves the batch;
CLS is invariant to scaling a feature, so the scores are those of the member alone. The
search's squared distances are the edges' (divided by t_i), not re-measured; members of text
counts have mostly duplicated rows, which :func:`knn_search` searches once (the paper's committee
on PCMAC: 25 s on 2 threads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse

from .._progress import progress
from .._threads import job_threads, limit_threads
from ..constraints import Constraints, LabelConstraints
from ..errors import InputError
from ..params import Bandwidth, NonNegFloat, PosInt
from ..registry import Members, register, run_members
from ._shared.cls import (
    balanced_cls,
    cannot_link_entries,
    canonical_csr,
    check_cls_options,
    cls_from_graph,
    without_entries,
)
from ._shared.committee import draw_subspaces, resolve_members
from ._shared.graph import constrained_graph, heat_kernel_graph, knn_search, resolve_bandwidth
from ._shared.invariance import with_adaptive_bandwidth
from ._shared.representation import pca_embedding
from ._shared.som import som_compress

#: memory budget of one batch of stacked members (bytes)
BATCH_BYTES = 32 * 1024**2


@dataclass(frozen=True)
class EnsCLSPlan:
    """Every random choice of an EnsCLS committee, drawn up front."""

    features: np.ndarray  # (N, m) feature indices of each member's subspace
    boot: np.ndarray  # (N, n_labeled) bootstrap draws (global sample indices)
    seeds: np.ndarray  # (N,) member seeds (SOM)
    unlabeled: np.ndarray  # indices of the unlabeled samples
    p: int

    @property
    def n_members(self) -> int:
        return self.features.shape[0]


def plan_enscls(y, p: int, rng: np.random.Generator, *, n_members: int | None = None,
                subspace: int | None = None) -> EnsCLSPlan:
    """Draw the committee: N (eq. 4 unless ``n_members``) subspaces of m = sqrt(p)
    features (unless ``subspace``), one bootstrap of the labeled samples per member."""
    y = np.asarray(y)
    n, m = resolve_members(p, n_members, subspace)
    lab = np.flatnonzero(y >= 0)
    features = draw_subspaces(p, n, m, rng)
    boot = lab[rng.integers(0, lab.size, size=(n, lab.size))] if lab.size else np.zeros((n, 0), np.int64)
    seeds = rng.integers(0, 2**31 - 1, size=n, dtype=np.int64)
    return EnsCLSPlan(features, boot, seeds, np.flatnonzero(y < 0), p)


def _columns(X):
    """Column-sliceable form of X (CSC for sparse input, Fortran order for dense: a member's
    columns are then contiguous copies, 4x faster than from C order on 40,000 x 200)."""
    return sparse.csc_matrix(X) if sparse.issparse(X) else np.asfortranarray(X, dtype=np.float64)


def _member_matrix(Xc, y, plan: EnsCLSPlan, i: int, som: bool, som_nodes, bootstrap: str = "rows"):
    """Member i's data (bootstrap of labeled rows over unlabeled rows or SOM prototypes)
    projected on its subspace and the labels of its labeled rows. ``bootstrap="unique"`` keeps
    one row per drawn sample."""
    cols = Xc[:, plan.features[i]]
    cols = cols.toarray() if sparse.issparse(cols) else cols
    boot = np.unique(plan.boot[i]) if bootstrap == "unique" else plan.boot[i]
    XL = cols[boot]
    XU = cols[plan.unlabeled]
    if som and XU.shape[0] >= 2:
        XU, _ = som_compress(XU, np.random.default_rng(int(plan.seeds[i])), max_nodes=som_nodes)
    return np.vstack([XL, XU]), y[boot]


def _shared_member(Xc, y, plan: EnsCLSPlan, i: int):
    """Member i on the shared graph: every sample once, in input order, on its subspace; labeled
    only if drawn in its bootstrap (row labels, -1 unlabeled)."""
    cols = Xc[:, plan.features[i]]
    lab = np.full(cols.shape[0], -1, dtype=np.int64)
    drawn = np.zeros(cols.shape[0], dtype=bool)
    drawn[plan.boot[i]] = True
    lab[drawn] = y[drawn]
    # C order: X[:, idx] is F-ordered, and every sparse product with it copied it (same values)
    return np.ascontiguousarray(cols.toarray() if sparse.issparse(cols) else cols), lab


def _score_shared(blocks, S, label_weight: float, cannot_links) -> np.ndarray:
    """Balanced CLS of every member in ``blocks`` [(X_i, row labels_i)] on the one shared graph
    ``S`` (repeated block-diagonally). A lone member's graph is S without the ``cannot_links``
    edges (:func:`ssfs.methods.spectral.cannot_link_entries` of S and all labels) between two of
    its labeled samples: the edges balanced_cls would remove, found without a pass over S."""
    groups = np.repeat(np.arange(len(blocks)), S.shape[0])
    y = LabelConstraints(np.concatenate([b[1] for b in blocks]))
    if len(blocks) > 1:
        Sb = sparse.block_diag([S] * len(blocks), format="csr")
        return balanced_cls(Sb, np.vstack([b[0] for b in blocks]), y, label_weight=label_weight, groups=groups)
    rows, cols, entries = cannot_links
    drawn = y.labels >= 0
    Si = without_entries(S, entries[drawn[rows] & drawn[cols]])
    return balanced_cls(Si, blocks[0][0], y, label_weight=label_weight, groups=groups, cannot_links_removed=True)


def _score_batch(blocks, k: int, bandwidth, mean: str, knn_edges: str = "all",
                 denominator: str = "variance", weights: str = "balanced", label_weight: float = 10.0) -> np.ndarray:
    """CLS of every member in ``blocks`` [(X_i, yL_i)], stacked block-diagonally."""
    if weights == "balanced":
        knn_edges = "all"  # the literal reading's options
    mats, rows, cols, dists, ml, cl, groups, rowlab = [], [], [], [], [], [], [], []
    off = 0
    for g, (Xb, yl) in enumerate(blocks):
        nb = Xb.shape[0]
        # kNN among all rows, or (knn_edges="unlabeled", eq. 2 literally) among the unlabeled
        # rows only, which follow the labeled ones (labeled rows in no constraint count as free)
        s0 = yl.size if knn_edges == "unlabeled" and yl.size >= 2 else 0
        ke = min(int(k), nb - s0 - 1)
        if ke >= 1:
            ind, d2 = knn_search(Xb[s0:], ke, precision="float32")  # candidates re-measured
            t = resolve_bandwidth(d2.ravel(), bandwidth)
            rows.append(off + s0 + np.repeat(np.arange(nb - s0), ke))
            cols.append(off + s0 + ind.ravel())
            dists.append(d2.ravel() / t)  # the edge's squared distance on the member's scaled block
        else:
            t = resolve_bandwidth(np.zeros(0), bandwidth)
        mats.append(Xb / np.sqrt(t))
        rowlab.append(np.r_[yl, np.full(nb - yl.size, -1)])
        if yl.size >= 2 and weights != "balanced":
            a, b = np.triu_indices(yl.size, 1)
            same = yl[a] == yl[b]
            pairs = np.column_stack([a, b]) + off
            ml.append(pairs[same])
            cl.append(pairs[~same])
        groups.append(np.full(nb, g))
        off += nb
    Xs = np.vstack(mats)
    # the search's squared distances ride on the edges (scaled by 1/t_i like the block: no re-measuring)
    P = sparse.coo_matrix((np.concatenate(dists) if dists else np.zeros(0),
                           (np.concatenate(rows) if rows else np.zeros(0, np.int64),
                            np.concatenate(cols) if cols else np.zeros(0, np.int64))), shape=(off, off))
    if weights == "balanced":  # label terms in closed form per member, no pairs
        S, _ = constrained_graph(Xs, Constraints.empty(), k=k, bandwidth=1.0, precomputed=P, edge_sq_dists=True)
        return balanced_cls(S, Xs, LabelConstraints(np.concatenate(rowlab)), label_weight=label_weight,
                            groups=np.concatenate(groups))
    cons = Constraints(np.vstack(ml) if ml else np.zeros((0, 2)), np.vstack(cl) if cl else np.zeros((0, 2)))
    S, _ = constrained_graph(Xs, cons, k=k, bandwidth=1.0, precomputed=P, edge_sq_dists=True)
    return cls_from_graph(S, Xs, cons, mean=mean, groups=np.concatenate(groups), denominator=denominator)


def enscls_chunk(X, y, plan: EnsCLSPlan, members=None, *, k: int = 10, bandwidth="auto",
                 mean: str = "uniform", som: bool = False, som_nodes: int | None = None,
                 n_jobs: int = 1, knn_edges: str = "all", denominator: str = "variance",
                 bootstrap: str = "rows", weights: str = "balanced", label_weight: float = 10.0,
                 space: str = "subspace", n_pcs: int = 50) -> np.ndarray:
    """CLS scores (len(members) x m) of the committee members ``members`` (indices or a
    range; default all), row r = scores of the features ``plan.features[members[r]]``.
    ``n_jobs`` > 1 scores batches of members in threads (same result). ``knn_edges``,
    ``denominator``, ``bootstrap``, ``space``: see :func:`enscls`."""
    check_cls_options(knn_edges, denominator)
    if weights not in ("balanced", "literal"):
        raise InputError(f"enscls: weights must be 'balanced' or 'literal', got {weights!r}")
    if bootstrap not in ("rows", "unique"):
        raise InputError(f"enscls: bootstrap must be 'rows' or 'unique', got {bootstrap!r}")
    members = np.arange(plan.n_members) if members is None else np.asarray(members, dtype=np.int64).ravel()
    y = np.asarray(y)
    S = _shared_graph(X, space, n_pcs, k, bandwidth, som=som, weights=weights)
    cannot_links = None if S is None else cannot_link_entries(S, y)
    Xc = _columns(X)
    m = plan.features.shape[1]
    rows_per_member = X.shape[0] if S is not None else plan.boot.shape[1] + plan.unlabeled.size
    batch = max(1, BATCH_BYTES // (8 * 8 * m * max(rows_per_member, 1)))
    batches = [members[s:s + batch] for s in range(0, members.size, batch)]

    def work(idx):
        if S is not None:
            out = _score_shared([_shared_member(Xc, y, plan, int(i)) for i in idx], S, label_weight, cannot_links)
        else:
            blocks = [_member_matrix(Xc, y, plan, int(i), som, som_nodes, bootstrap) for i in idx]
            out = _score_batch(blocks, k, bandwidth, mean, knn_edges, denominator, weights, label_weight)
        bar.update(len(idx))
        return out

    # members are small (n x sqrt(p)): multithreaded BLAS only adds overhead, and on a loaded
    # 2-core machine it made ALLAML's committee 7x slower (109 s vs 16 s), so BLAS runs on one
    # thread and parallelism, if any, is over batches of members
    with np.errstate(divide="ignore", invalid="ignore"), limit_threads(1, user_api="blas"), \
            progress(members.size, "enscls committee members") as bar:
        if int(n_jobs) == 1 or len(batches) < 2:
            parts = [work(b) for b in batches]
        else:
            from joblib import Parallel, delayed

            parts = Parallel(n_jobs=int(n_jobs), prefer="threads")(delayed(work)(b) for b in batches)
    return np.vstack(parts) if parts else np.empty((0, m))


def _shared_graph(X, space: str, n_pcs: int, k: int, bandwidth, *, som: bool, weights: str):
    """The heat-kernel kNN graph every member shares, built once on the first ``n_pcs`` principal
    components of all features (as cls and laplacian build theirs on single cells), or None (each
    member searches its own random subspace, the paper): ``space="pca"``, or ``"auto"`` with
    balanced members and no SOM."""
    if space not in ("auto", "subspace", "pca"):
        raise InputError(f"enscls: space must be 'auto', 'subspace' or 'pca', got {space!r}")
    if space == "subspace" or (space == "auto" and (weights != "balanced" or som)):
        return None
    if som:
        raise InputError("enscls: som needs space: subspace (SOM prototypes have no place in a shared graph)")
    if weights != "balanced":
        raise InputError("enscls: space: pca needs weights: balanced (the paper's members, weights: literal, "
                         "search their own subspace)")
    S, _ = heat_kernel_graph(pca_embedding(X, n_pcs), k=k, bandwidth=bandwidth)
    return canonical_csr(S)


def combine_enscls(plan: EnsCLSPlan, member_scores: np.ndarray, members=None, *,
                   average: str = "members") -> np.ndarray:
    """Aggregate member scores (rows in the order of ``members``, default all members)
    into one score per feature (Alg. 2 steps 7-9; see the module doc for ``average``)."""
    members = np.arange(plan.n_members) if members is None else np.asarray(members, dtype=np.int64).ravel()
    order = np.argsort(members, kind="stable")  # member order: the sum is chunking-independent
    feats = plan.features[members[order]].ravel()
    vals = np.asarray(member_scores, dtype=float)[order].ravel()
    ok = np.isfinite(vals)
    total = np.bincount(feats[ok], weights=vals[ok], minlength=plan.p)
    count = np.bincount(feats[ok], minlength=plan.p)
    with np.errstate(divide="ignore", invalid="ignore"):
        if average == "members":
            return np.where(count > 0, total / count, np.nan)
        if average == "committee":
            return np.where(count > 0, total / plan.n_members, np.nan)
    raise InputError(f"enscls: average must be 'members' or 'committee', got {average!r}")


def _plan(X, y, constraints, rng, *, n_members=None, subspace=None, average="members", **_):
    if average not in ("members", "committee"):
        raise InputError(f"enscls: average must be 'members' or 'committee', got {average!r}")
    return plan_enscls(y, X.shape[1], rng, n_members=n_members, subspace=subspace)


def _run(X, y, constraints, plan, members, *, k=10, bandwidth="auto", mean="uniform", som=False, som_nodes=None,
         n_jobs=1, knn_edges="all", denominator="variance", bootstrap="rows", weights="balanced",
         label_weight=10.0, space="auto", n_pcs=50, **_):
    return {"scores": enscls_chunk(X, y, plan, members, k=k, bandwidth=bandwidth, mean=mean, som=som,
                                   som_nodes=som_nodes, n_jobs=n_jobs, knn_edges=knn_edges,
                                   denominator=denominator, bootstrap=bootstrap, weights=weights,
                                   label_weight=label_weight, space=space, n_pcs=n_pcs)}


def _combine(X, y, constraints, plan, parts, *, average="members", **_):
    return combine_enscls(plan, parts["scores"], average=average)


ENSCLS_MEMBERS = Members(plan=_plan, size=lambda plan: plan.n_members, run=_run, combine=_combine)


@register("enscls", higher_is_better=False, needs=("labels",), members=ENSCLS_MEMBERS,
          invariances=with_adaptive_bandwidth({"shift"}), description=(
    "Ensemble CLS (EnsCLS Alg. 2); members use the balanced CLS (paper: weights=literal) on one shared PCA kNN "
    "graph (space=auto; paper: space=subspace): simulation at 1 % labels 0.64 of planted markers vs laplacian "
    "0.63, cls 0.66; PBMC 0.613 vs 0.503 on own subspaces (README)"))
def enscls(X, y, constraints, rng, *, n_members: PosInt | None = None, subspace: PosInt | None = None,
           k: PosInt = 10, bandwidth: Bandwidth = "auto",
           mean: Literal["uniform", "degree"] = "uniform",
           som: bool = False, som_nodes: PosInt | None = None, average: Literal["members", "committee"] = "members",
           n_jobs: PosInt | None = None, knn_edges: Literal["all", "unlabeled"] = "all",
           denominator: Literal["variance", "cannot_link"] = "variance", bootstrap: Literal["rows", "unique"] = "rows",
           weights: Literal["balanced", "literal"] = "balanced", label_weight: NonNegFloat = 10.0,
           space: Literal["auto", "subspace", "pca"] = "auto", n_pcs: PosInt = 50):
    """Ensemble Constrained Laplacian Score (EnsCLS paper Alg. 2), lower is better.

    ``n_members``: committee size (default eq. 4); ``subspace``: features per member
    (default round(sqrt(p))); ``k``, ``bandwidth``, ``mean``: CLS parameters per member;
    ``som``: compress each member's unlabeled samples by a SOM (at most ``som_nodes``
    nodes, default sqrt(u)); ``average``: "members" or "committee" (module doc);
    ``n_jobs``: threads over batches of members (default: the job's threads, ``$SSFS_THREADS``;
    the result does not depend on it).
    Constraints are regenerated from the labels of each bootstrap (Alg. 2 step 4), so
    explicitly given pairwise constraints are not used. ``knn_edges`` ("all" or
    "unlabeled") and ``denominator`` ("variance" or "cannot_link"): the CLS readings of
    :func:`ssfs.methods.spectral.constrained_laplacian_score`; ``bootstrap``: "rows" (drawn
    copies kept as must-linked rows) or "unique" (each drawn sample once, the bootstrap as a
    set). On the face-image benchmarks "unlabeled" + "cannot_link" + "unique" with min-max
    scaled features and bandwidth 0.1 comes closest to the paper (README, "Reproducing the papers").
    ``weights``, ``label_weight``: each member's CLS reading
    (:func:`ssfs.methods.spectral.constrained_laplacian_score`);
    the default "balanced" differs from the paper (label terms per sample, in closed form);
    ``weights="literal"`` is the paper's (``knn_edges`` / ``denominator`` apply to it).
    ``space``: the members' graph: "subspace" (each member's kNN graph on its own random
    features, the paper), "pca" (one heat-kernel kNN graph on the ``n_pcs`` principal components of
    all features, built once and shared by every member, as cls builds its graph on single cells: a
    member scores its genes on it with the labels of its bootstrap's distinct samples, the other
    samples unlabeled; balanced members only) or "auto" (default: "pca" with balanced members and no
    SOM, else "subspace"). On single cells sqrt(p) random genes give no cell neighbourhood (planted
    simulation at 1 % labels: 0.30 -> 0.64 of the markers); on PBMC and three microarrays the shared
    graph is ahead or level (README). A shared-graph member costs O(n k m) (no kNN search), so the
    default committee (eq. 4, every gene scored about ten times) runs in seconds on thousands of cells.
    """
    n_jobs = job_threads(n_jobs)
    return run_members(ENSCLS_MEMBERS, X, y, constraints, rng, n_members=n_members, subspace=subspace, k=k,
                       bandwidth=bandwidth, mean=mean, som=som, som_nodes=som_nodes, average=average,
                       n_jobs=n_jobs, knn_edges=knn_edges, denominator=denominator, bootstrap=bootstrap,
                       weights=weights, label_weight=label_weight, space=space, n_pcs=n_pcs)
