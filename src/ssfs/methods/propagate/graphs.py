"""The graphs ``propagate``'s labels spread on (module doc of :mod:`ssfs.methods.propagate`, steps 1, 2 and 4): the
start graph, the refinement chains from the graph and from the labels (:func:`_chain`, :func:`top_genes`), their
held-out agreement with the labels (:func:`_chain_agreement`), the genes' and samples' scales that compete
(:func:`graph_scales`) and the graph kept (:func:`_kept_graph`, :func:`_best`)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .._shared.batches import centred_in_batches
from .._shared.class_stats import (
    explained_and_one_vs_rest,
)
from .._shared.counts import count_like
from .._shared.graph import knn_graph
from .._shared.labels_alone import (
    labels_lead,
    top_by_r2,
)
from .._shared.propagation import (
    graph_agreement,
    held_out_agreement,
    propagate,
    unreached_groups,
)
from .._shared.residuals import (
    CountModel,
    residual_embedding,
)
from .._shared.signal import (
    loudness,
    signal_embedding,
)
from .model import AUTO_GENES, AUTO_K, FOLDS, HELD_OUT_ENOUGH, Candidate
from .ordering import _places


def _knn(Z: np.ndarray, k: int):
    return knn_graph(Z, max(1, min(int(k), Z.shape[0] - 1)))


def _start_graph(X, k: int, n_pcs: int, graph, embedding, batch=None, space=None,
                 counts: CountModel | None = None, standardize: bool = True, equal: bool = False) -> tuple[Any, int]:
    """(W, dims): the given graph (symmetrised, no self loops), a kNN graph of the given
    embedding, or a kNN graph of X's signal components (of X standardised, or in its own units
    without ``standardize``; every sample's profile scaled alike with ``equal``,
    :func:`~ssfs.methods._shared.signal.equal_samples`; ``counts``: of the Pearson residuals of the counts behind X,
    :func:`~ssfs.methods._shared.residuals.residual_embedding`; either centred in every ``batch``;
    the components kept in the dict ``space`` as "Z" when one is given)."""
    n = X.shape[0]
    if graph is not None:
        G = sparse.csr_matrix(graph, dtype=np.float64)
        if G.shape != (n, n):
            raise MethodError(f"propagate: graph must be {n} x {n} (one row per sample), got {G.shape}")
        G = G.maximum(G.T).tolil()
        G.setdiag(0)
        return sparse.csr_matrix(G), 0
    if embedding is not None:
        E = np.asarray(embedding, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != n:
            raise MethodError(f"propagate: embedding must have one row per sample ({n}), got shape {E.shape}")
        return _knn(centred_in_batches(E, batch), k), E.shape[1]
    Z, d = signal_embedding(X, n_pcs, standardize=standardize, equal=equal) if counts is None else residual_embedding(
        counts, n_pcs, batch)
    if space is not None:
        space["Z"] = Z
    return _knn(centred_in_batches(Z, batch), k), d


def confounded(batch: np.ndarray | None, y: np.ndarray) -> bool:
    """Several batches, labels of 2 classes or more, and no batch holding labels of 2 classes:
    every class difference the labels show is also a batch difference, which comparing within
    batches removes."""
    lab = y >= 0
    if batch is None or np.unique(batch).size < 2 or np.unique(y[lab]).size < 2:
        return False
    pairs = np.unique(np.stack([batch[lab], y[lab]]), axis=1)
    return bool(np.bincount(pairs[0]).max() < 2)


def _groups(W, y, K, prop: dict, floor=None, seed_weight=None) -> np.ndarray:
    """Group of every sample from the labels spread over W (labels kept); with a per-class
    ``floor`` of held-out reach, groups for the samples the labels barely reach."""
    return _spread_groups(propagate(W, y, K, seed_weight=seed_weight, **prop), y, floor)


def _spread_groups(F: np.ndarray, y: np.ndarray, floor=None) -> np.ndarray:
    """:func:`_groups` of class scores F already spread (labels kept; with ``floor``, groups of their own
    for the samples the labels barely reach)."""
    if floor is not None:
        return unreached_groups(F, y, floor=floor)
    return _labels_kept(F, y)


def _labels_kept(F: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The class of largest score of every sample, its label where it has one."""
    g = F.argmax(axis=1)
    g[y >= 0] = y[y >= 0]
    return g


def _candidate(name, y, K, W, dims, prop) -> Candidate:
    """The graph W with the groups the labels y give on it and their class scores (kept: a
    chain's held-out refit reads them instead of spreading the same labels again)."""
    F = propagate(W, y, K, **prop)
    return Candidate(name, W, dims, _labels_kept(F, y), F)


def _chain(name, X, y, K, start_graph, m, opts, prop) -> Candidate | None:
    """Rebuild the graph ``opts["refine"]`` times on the ``m`` best features of the current
    scores, starting from the R^2 of the groups the labels give on the start graph ("graph")
    or of the labeled samples alone ("labels"; None below 2 labeled classes)."""
    if name == "graph":
        rows, groups = None, _groups(start_graph, y, K, prop)
    else:
        rows = np.flatnonzero(y >= 0)
        groups = np.unique(y[rows], return_inverse=True)[1]
        if groups.max(initial=0) < 1 or rows.size < 3:
            return None
    cand = None
    batch = opts.get("batch")
    centred = opts.get("centred")  # (X, its centred columns): only for that very X
    for _ in range(opts["refine"]):
        on = (X, batch) if rows is None else (X[rows], None if batch is None else batch[rows])
        genes = top_genes(on[0], groups, m, opts["gene_choice"], on[1],
                          centred[1:] if centred is not None and centred[0] is on[0] else None)
        cand = _candidate(name, y, K, *_graph_on(X, genes, opts), prop)
        cand.genes = genes
        rows, groups = None, cand.groups
    return cand


#: how the refined graphs' genes are chosen (the ``gene_choice`` parameter)
GENE_CHOICES = ("total", "balanced")


def top_genes(X, groups: np.ndarray, m: int, how: str = "total", batch=None, centred=None) -> np.ndarray:
    """The ``m`` features the next graph is built on (sorted), from the samples' ``groups``.
    "total": the best by R^2 (:func:`variance_explained`). "balanced": half of them so, the other
    half taken in turn from every group's own ranking of the features higher in it than overall
    (one-vs-rest R^2, :func:`one_vs_rest_explained`): features are ordered by their best rank in
    any list, a rank r in the R^2 list counting as r / G for G groups (ties: the larger one-vs-rest
    R^2; equal values share a rank, so the choice does not follow the column order). A group of 2 %
    of the samples then gets its markers into the graph as a large group does, where their R^2 on
    all groups never ranks them. ``batch``: R^2 within batches (:func:`variance_explained`). ``centred``:
    :func:`~ssfs.methods._shared.class_stats.centred_columns` (X) when already computed (a fit's chains
    group the same X about 50 times)."""
    if how not in GENE_CHOICES:
        raise MethodError(f"propagate: gene_choice must be one of {GENE_CHOICES}, got {how!r}")
    if how == "total":
        return np.sort(top_by_r2(X, groups, m, batch=batch))
    s, R = explained_and_one_vs_rest(X, groups, up_only=True, batch=batch, centred=centred)  # one pass over X
    s, R = np.nan_to_num(s, nan=-np.inf), np.nan_to_num(R, nan=-np.inf)
    R = R[np.bincount(groups, minlength=R.shape[0]) > 0]
    in_groups = np.min([_places(-r) for r in R], axis=0)  # equal values, e.g. the 0 of every feature not up
    overall = _places(-s) / R.shape[0]                    # in a group, share a rank: not the column order
    return np.sort(np.lexsort((-R.max(axis=0), np.minimum(in_groups, overall)))[:m])


def _graph_on(X, genes: np.ndarray, opts) -> tuple[Any, int]:
    """(W, dims): the kNN graph of the signal components of X's columns ``genes`` (standardised unless
    ``opts["standardize"]`` is False; of their counts' Pearson residuals with ``opts["counts"]``;
    ``opts["fit_rows"]``: the components fitted on those samples, every sample projected), built once
    per gene set in a fit (``opts["graphs"]``, one per scale): the chains and their held-out refits
    often pick the same genes, and the graph is a function of them alone."""
    key = genes.tobytes()
    if key not in opts["graphs"]:
        counts = opts.get("counts")
        if counts is None:
            Z, d = signal_embedding(X[:, genes], opts["n_pcs"], standardize=opts.get("standardize", True),
                                    equal=opts.get("equal", False))
        else:
            Z, d = residual_embedding(counts, opts["n_pcs"], opts.get("batch"), genes.size, genes,
                                      opts.get("fit_rows"))
        opts["graphs"][key] = (_knn(centred_in_batches(Z, opts.get("batch")), opts["k"]), d)
    return opts["graphs"][key]


def refine_genes(genes, p: int, n: int | None = None) -> int:
    """Features the refined graphs are built on: ``genes``, or "auto" = 10 % of the ``p`` features within
    :data:`AUTO_GENES` and at most one per sample of the ``n`` (never more than p).

    The genes are chosen by their R^2 on groups the same n samples formed, so a noise gene passes the cut where it
    happens to follow those groups, errors included: each brings about the cut's R^2 of such echo, and m genes
    chosen from p >> n bring m times it, which outweighs the markers' own signal once m is several times n (60
    samples of 6,000 genes: groups 68-85 % right on 500 genes, 88-100 % on 100; docs/labels_that_count.md,
    "Neighbours and genes for small studies"). With more samples every gene's chance R^2 shrinks as 1/n."""
    if genes == "auto":
        most = AUTO_GENES[1] if n is None else min(AUTO_GENES[1], n)
        return int(min(p, max(AUTO_GENES[0], min(most, round(0.1 * p)))))
    return int(min(p, int(genes)))


def graph_neighbours(k, n: int, n_classes: int) -> int:
    """The kNN graphs' neighbours: ``k``, or "auto" = half an average labeled class, n / (2 ``n_classes``), within
    :data:`AUTO_K` (5-15; 15 from 30 samples per class on, so cells and arrays of a few hundred samples keep 15);
    never more than n - 1.

    A neighbourhood larger than half its class reaches into the others: GLIOMA's 33 training samples of 4 classes
    with 15 neighbours each (half the data) grouped 45 % of the unlabeled samples right at 3 labels per class, 60 %
    with 5 (the 8 real arrays of ../shared at 3 labels per class, with the gene bound of :func:`refine_genes`: 0.46
    -> 0.54 on average, lymphoma's 9 classes 0.30 -> 0.51; docs/labels_that_count.md, "Neighbours and genes for
    small studies")."""
    k = min(AUTO_K[1], max(AUTO_K[0], round(n / (2 * max(int(n_classes), 1))))) if k == "auto" else k
    return int(min(k, max(n - 1, 1)))  # as every kNN search clamps it


def _agreement(c: Candidate, y, K, pos, prop) -> Candidate:
    c.agreement = graph_agreement(c.graph, y, K, positions=pos, **prop)
    return c


def _chain_agreement(c: Candidate, X, y, K, start_graph, m, opts, prop, pos) -> Candidate:
    """Held-out agreement of a chain refitted without each fold's labels (the genes the graph is
    built on are chosen without them too: no selection bias)."""
    def scores_for(yy):
        refit = _chain(c.name, X, yy, K, start_graph, m, opts, prop)
        if refit is None:
            return np.zeros((y.size, K))
        c.folds[yy.tobytes()] = refit  # its graph judges the propagated samples' features (_judged_groups)
        return refit.spread  # = propagate(refit.graph, yy, K, **prop), computed by the refit

    c.agreement = held_out_agreement(scores_for, y, K, positions=pos, folds=opts["folds"])
    return c


def held_out_counts(y: np.ndarray) -> np.ndarray:
    """The label counts of the labeled classes that hold 2 labels or more: the classes whose labels can be held
    out (a class's only label never is, :func:`~ssfs.methods._shared.propagation.held_out_agreement`)."""
    counts = np.bincount(y[y >= 0])
    return counts[counts >= 2]


def unchecked(y: np.ndarray) -> bool:
    """No labeled class has 2 labeled samples: no label can be held out to judge a graph, and
    the labels alone give no within-class variance (their R^2 is 1 for every feature)."""
    return held_out_counts(y).size == 0


def _candidates(X, y, K, start, opts, prop, pos) -> list[Candidate]:
    """The graphs the labels may spread on: the ends of the chain from the start graph and of
    the chain from the labeled samples after ``refine`` rounds, each with its honest held-out
    agreement (the start graph alone when there is nothing to refine). When every sample is
    labeled the two chains start from the same R^2 (the start graph's groups are the labels), so
    only the labels' chain runs: the same graph at half the cost."""
    m = opts["genes"]
    if opts["refine"] == 0 or m >= X.shape[1]:
        return [start]
    out = []
    for name in ("labels",) if (y >= 0).all() else ("graph", "labels"):
        c = _chain(name, X, y, K, start.graph, m, opts, prop)
        if c is not None:
            c.rerun = functools.partial(_chain, name, X, K=K, start_graph=start.graph, m=m, opts=opts, prop=prop)
            out.append(_chain_agreement(c, X, y, K, start.graph, m, opts, prop, pos))
    return out


def held_out_reach(agreement: tuple) -> float:
    """Mean log score of the held-out labeled samples for their own class (-inf: none held out)."""
    reach = np.asarray(agreement[3], dtype=np.float64)
    reach = reach[np.isfinite(reach)]
    return float(reach.mean()) if reach.size else -np.inf


def _best(cands: list[Candidate]) -> Candidate:
    """The candidate whose graph agrees best with held-out labels; of equals, the one that reaches
    them most (:func:`held_out_reach`: with 10 labels per class both chains often predict every
    held-out label, and the graph whose labels also reach them strongly is the one that keeps a
    type nobody labeled apart); then the first."""
    def key(i):
        agreement = cands[i].agreement
        return np.nan_to_num(round(agreement[0], 9), nan=-1.0), round(held_out_reach(agreement), 9), -i

    return cands[max(range(len(cands)), key=key)]


def refinement_rows(y: np.ndarray, pos: np.ndarray, size: int) -> np.ndarray | None:
    """The samples the refinement runs on when there are more than ``size`` (None: all of them):
    the labeled ones, up to half of ``size``, then unlabeled ones, each taken in the content order
    ``pos`` (:func:`~ssfs.methods._shared.signal.canonical_rows`: a pseudo-random subsample that
    does not depend on the sample order); sorted."""
    if y.size <= size:
        return None
    order = np.argsort(pos, kind="stable")
    lab = order[y[order] >= 0][: size // 2]
    unl = order[y[order] < 0][: size - lab.size]
    return np.sort(np.concatenate([lab, unl]))


#: the dense graphs' gene scales (the ``gene_scale`` parameter; :func:`gene_scales`)
GENE_SCALES = ("auto", "standardized", "as_is")


def gene_scales(how: str, X, counts: CountModel | None, graph, embedding) -> tuple[str, ...]:
    """The gene scales whose graphs compete (:func:`fit_propagation`): "standardized" (every gene at
    unit variance: a gene is as loud as any other), "as_is" (the genes in X's units: a marker's extra
    variance counts, as in a log-expression array where the classes are the loudest structure), or
    with "auto" both on dense values that are not counts (:func:`_kept_graph` chooses). Only one where
    the graphs are not built on X's values (the counts' residuals, a given graph or embedding).
    Measured: docs/labels_that_count.md, "Shapes drawn outside ``ssfs.simulate``" (40 samples x 5,000
    genes, 2 classes, 3 labels per class: 0.287 -> 0.456 of the markers; the real arrays within 0.006)."""
    if how != "auto":
        return (how,)
    return ("standardized", "as_is") if counts is None and on_values(X, graph, embedding) else ("standardized",)


def on_values(X, graph, embedding) -> bool:
    """Whether the graphs are built on X's own values: no ``graph`` or ``embedding`` given, X not counts (whose
    graphs are built on their Pearson residuals where X holds them, :func:`count_model`)."""
    return graph is None and embedding is None and not count_like(X)


#: the dense graphs' sample scales (the ``sample_scale`` parameter; :func:`graph_scales`)
SAMPLE_SCALES = ("auto", "as_is", "equal")


def graph_scales(gene_scale: str, sample_scale: str, X, counts: CountModel | None, graph,
                 embedding) -> list[tuple[str, str]]:
    """The (gene scale, sample scale) pairs whose graphs compete, the first the incumbent
    (:func:`_kept_graph`): the :func:`gene_scales`, each with the samples "as_is" and, with
    ``sample_scale="auto"`` on dense values that are not counts whose samples differ in loudness
    (:func:`unequal_samples`), "equal" (every sample's profile scaled alike,
    :func:`~ssfs.methods._shared.signal.equal_samples`: a noisy array does not own components of its
    own). Only "as_is" where the graphs are not built on X's values."""
    genes = gene_scales(gene_scale, X, counts, graph, embedding)
    samples = ("as_is", "equal") if sample_scale == "auto" else (sample_scale,)
    if counts is not None or not on_values(X, graph, embedding) or (sample_scale == "auto" and not unequal_samples(X)):
        samples = ("as_is",)
    return [(g, s) for s in samples for g in genes]


def samples_compete(X, params: dict) -> bool:
    """Whether a fit of X with ``params`` weighs graphs on samples scaled alike against the samples as they are
    (:func:`graph_scales`): ``sample_scale`` "auto" (the default), graphs on X's values (:func:`on_values`) and
    samples of unequal loudness (:func:`unequal_samples`). Selection mode then takes the sample scale the fit on
    all samples kept for every resample (:func:`ssfs.experiment.stable_selection.inherited`)."""
    return (params.get("sample_scale", "auto") == "auto" and on_values(X, params.get("graph"), params.get("embedding"))
            and unequal_samples(X))


#: how much louder or quieter than the median sample (root mean square of its standardised profile) a
#: sample must be for the graphs on samples scaled alike to compete (:func:`unequal_samples`)
EQUAL_SPREAD = 1.1


def unequal_samples(X) -> bool:
    """Whether a sample of dense X is louder or quieter than the median one (the root mean square of
    its standardised profile) by a factor beyond :data:`EQUAL_SPREAD` and beyond 4 standard errors of
    that root mean square over p unit-noise features (1 + 4 / sqrt(2p): few features alone spread
    it). Pure noise on 2,000 genes spreads 1.03-1.04, the real arrays of ../shared 1.13-3.5 (lung_small's
    325 genes: 1.23 against 1.16), an array with 4x the noise 3.9. Below that, scaling the samples
    alike changes the graph little, and its chains are not worth their cost."""
    return not sparse.issparse(X) and outlying_samples(X).size > 0


def outlying_samples(X) -> np.ndarray:
    """The samples of dense X louder or quieter than the median one beyond :func:`unequal_samples`'s bar
    (:func:`loudness`), in order."""
    loud = loudness(X)
    factor = max(EQUAL_SPREAD, 1.0 + 4.0 / np.sqrt(2.0 * max(X.shape[1], 1)))
    return np.flatnonzero((loud > factor) | (loud * factor < 1.0))


def _kept_graph(X, y, K, rows, opts, given: tuple, gene_scale: str) -> tuple[Candidate, Candidate, dict]:
    """(chosen, start, opts of its scale): the graph kept in each of the :func:`gene_scales` (``given``:
    prop, pos, graph, embedding and the dict the start graph's components go to), another scale's
    only when it wins :func:`scale_leads`."""
    prop, pos, graph, embedding, start_space = given
    chosen, start, kept = None, None, opts
    for scale, samples in graph_scales(*gene_scale, X, opts["counts"], graph, embedding):
        on = {**opts, "standardize": scale == "standardized", "equal": samples == "equal", "graphs": {}}
        c, s = _chosen_in(X, y, K, rows, on, prop, pos, graph, embedding, start_space if chosen is None else {})
        if chosen is None or scale_leads((chosen, start), (c, s), y):
            chosen, start, kept = c, s, on
    return chosen, start, kept


def scale_leads(incumbent: tuple, challenger: tuple, y: np.ndarray) -> bool:
    """Whether the (kept graph, start graph) of another scale, ``challenger``, replaces the ``incumbent``'s: its
    kept graph predicts :data:`~ssfs.methods._shared.labels_alone.LEAD_BY` (2) more of the same held-out labels
    (:func:`~ssfs.methods._shared.labels_alone.labels_lead`, paired; with 6 labels one more is often chance: 40 x
    2,000 heteroscedastic arrays, a graph in the genes' units right on one more held-out label found 6 of 40
    markers where the standardised graph found 34); or its start graph does against the incumbent's start graph
    while its kept graph predicts at least as many as the incumbent's kept graph. The start graphs are built
    without a label, so their held-out agreement needs no refit; the kept graphs' is of chains refitted without
    each fold's labels, which at 2-3 labels per class leaves a class one training label, and both scales' chains
    then agree with held-out labels at chance where a start graph carries the classes (5 % outlying samples at 2
    labels per class, seed 3: the start graph on samples scaled alike 6 of 8 held-out labels, the genes' own 2 of
    8, both kept graphs 2; 2 -> 40 of the 40 markers; docs/labels_that_count.md, "Start graphs judge the scales",
    session 35)."""
    (kept, start), (other, other_start) = incumbent, challenger
    lead, beyond, behind = labels_lead(kept.agreement, other.agreement, y)
    return lead or (beyond >= behind and labels_lead(start.agreement, other_start.agreement, y)[0])


def _chosen_in(X, y, K, rows, opts, prop, pos, graph, embedding, start_space) -> tuple[Candidate, Candidate]:
    """(chosen, start): the kept graph among the chains' ends and the start graph, in the scale of ``opts``."""
    if rows is not None:
        return _chosen_on_rows(X, y, K, rows, opts, prop, pos, graph, embedding, start_space)
    W, d = _start_graph(X, opts["k"], opts["n_pcs"], graph, embedding, opts["batch"], start_space, opts["counts"],
                        opts["standardize"], opts.get("equal", False))
    start = _agreement(_candidate("start", y, K, W, d, prop), y, K, pos, prop)
    return _best(_candidates(X, y, K, start, opts, prop, pos)), start


def _chosen_on_rows(X, y, K, rows, opts, prop, pos, graph, embedding, space=None) -> tuple[Candidate, Candidate]:
    """(chosen, start) for many samples: the chains and their held-out refits on the samples
    ``rows`` (:func:`refinement_rows`), started from those samples' own kNN graph (or the given
    embedding's rows); the chosen chain's genes then give the graph of all samples, whose held-out
    agreement (:data:`FOLDS` folds) weighs the propagated samples. The choice costs the same
    whatever the number of samples; the final graph is built once. A given ``graph`` cannot be
    cut to the subsample: its agreement with the labels (the ``start``) is measured on all of them."""
    Xr, yr = X[rows], y[rows]
    on_rows = {**opts, "batch": None if opts["batch"] is None else opts["batch"][rows],
               "counts": None if opts["counts"] is None else opts["counts"].subset(rows)}
    Wr, dr = _start_graph(Xr, opts["k"], opts["n_pcs"], None, None if embedding is None else
                          np.asarray(embedding)[rows], on_rows["batch"], space, on_rows["counts"],
                          opts.get("standardize", True), opts.get("equal", False))
    start = _agreement(_candidate("start", yr, K, Wr, dr, prop), yr, K, pos[rows], prop)
    chosen = _best(_candidates(Xr, yr, K, start, on_rows, prop, pos[rows]))
    if graph is not None:
        start = _agreement(_candidate("start", y, K, *_start_graph(X, 1, 1, graph, None), prop), y, K, pos, prop)
    whole = _candidate(chosen.name, y, K, *_graph_on(X, chosen.genes, {**opts, "graphs": {}, "fit_rows": rows}), prop)
    whole.agreement = graph_agreement(whole.graph, y, K, positions=pos, folds=FOLDS, enough=HELD_OUT_ENOUGH, **prop)
    whole.sample, whole.rerun, whole.genes = (chosen.graph, yr, pos[rows]), chosen.rerun, chosen.genes
    return whole, start
