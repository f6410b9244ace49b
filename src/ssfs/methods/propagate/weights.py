"""How much each sample counts in the groups ``propagate`` ranks by: the propagated samples' weight from the
kept graph's held-out agreement and coherence (:func:`propagated_weight`, :func:`reliability`,
:func:`excess_coherence`), the labels' seeds where the graph contradicts them (:func:`contradicted_seeds`), and the
groups judged against the labels alone (:func:`_judged_groups`)."""

from __future__ import annotations

import functools

import numpy as np
from scipy import sparse

from ...errors import MethodError
from .._shared.labels_alone import (
    GENES,
    labels_alone_agreement,
    labels_lead,
    labels_own_features,
    propagated_features,
)
from .._shared.propagation import (
    joined_unreached,
)
from .graphs import _groups, _spread_groups, held_out_counts, unchecked
from .model import FOLDS, Candidate, Yardstick

#: prior strength, in held-out labels, of the graph's own evidence (its coherence)
PRIOR_LABELS = 5.0


def coherence(W, groups: np.ndarray) -> float:
    """How much the graph's edges keep within the groups beyond chance, in [0, 1]: (e - c) / (1 - c)
    with e the share of edge weight joining samples of one group and c = sum_g (n_g / n)^2 its
    value for groups drawn at random. Near 1 for groups that are the graph's clusters, near 0 for
    groups the graph does not see."""
    C = sparse.coo_matrix(W)
    total = float(C.data.sum())
    if total <= 0:
        return 0.0
    within = float(C.data[groups[C.row] == groups[C.col]].sum()) / total
    chance = float(((np.bincount(groups) / groups.size) ** 2).sum())
    return float(np.clip((within - chance) / (1.0 - chance), 0.0, 1.0)) if chance < 1 else 0.0


def reliability(accuracy: float, chance: float, n_labeled: int, prior: float = 1.0) -> float:
    """Weight of the propagated (unlabeled) samples: the graph's held-out agreement above chance,
    r = (accuracy - chance) / (1 - chance) in [0, 1], shrunk towards ``prior`` (the graph's
    :func:`coherence` with its groups) by a weight of :data:`PRIOR_LABELS` held-out labels:
    (m r + 5 prior) / (m + 5) for m held-out labels. A few (perhaps wrong) labels barely move a
    graph whose groups are its clusters; many labels decide. ``prior`` when nothing could be held
    out."""
    if not np.isfinite(accuracy) or chance >= 1.0:
        return float(prior)
    r = float(np.clip((accuracy - chance) / (1.0 - chance), 0.0, 1.0))
    m = max(int(n_labeled), 0)
    return (m * r + PRIOR_LABELS * prior) / (m + PRIOR_LABELS)


#: random placements of the labels whose groups give the graph's chance coherence (:func:`null_coherence`)
NULL_DRAWS = 8
#: one-sided 95 % quantile of Student's t with NULL_DRAWS - 1 = 7 degrees of freedom (:func:`excess_coherence`)
NULL_T95 = 1.894579
#: how much the propagated samples may weigh (the ``weighting`` parameter)
WEIGHTINGS = ("evidence", "kept_evidence", "coherence")


def null_coherence(W, y: np.ndarray, K: int, prop: dict, pos: np.ndarray, rerun=None) -> np.ndarray:
    """:func:`coherence` of the groups that the same labels give when they sit on other samples,
    one value per draw (:data:`NULL_DRAWS`): draw d puts the L labels (in their content order)
    on the samples at content positions d n / D, ..., d n / D + L - 1 (mod n). Labels spread over
    a kNN graph always give groups that hold together in it; this is how much they hold together
    when the labels say nothing about the graph. With ``rerun`` (the refinement chain that built W,
    :attr:`Candidate.rerun`) each draw rebuilds its own graph from its own groups' genes, as W was
    built from the labels': a graph built on the genes that separate some groups holds those
    groups together whatever they are."""
    lab = np.flatnonzero(y >= 0)
    values = y[lab][np.argsort(pos[lab], kind="stable")]
    order = np.argsort(pos, kind="stable")
    out = []
    for d in range(NULL_DRAWS):
        yy = np.full(y.size, -1)
        yy[order[(d * y.size // NULL_DRAWS + np.arange(lab.size)) % y.size]] = values
        refit = rerun(yy) if rerun is not None else None
        out.append(coherence(W, _groups(W, yy, K, prop)) if refit is None else coherence(refit.graph, refit.groups))
    return np.asarray(out)


def excess_coherence(W, y: np.ndarray, K: int, prop: dict, pos: np.ndarray, rerun=None) -> float:
    """How much better the labels' groups hold together in the graph than the groups of labels
    placed at random (:func:`null_coherence`, mean c0 over the draws), in [0, 1]:
    (c - c0) / (1 - c0). 0 when no better: the graph does not see the labeled classes (any split
    of a kNN graph into contiguous parts is coherent; a split along the classes is more so only
    when the graph carries them). With ``rerun`` (each draw rebuilds its graph as W was built) c
    must also lie above the draws' one-sided 95 % prediction bound, c0 + t s sqrt(1 + 1/D) (s their
    standard deviation, t Student's quantile with D - 1 degrees of freedom, :data:`NULL_T95`): the
    only evidence there is, so it must be significant, not merely above the mean. The bound is
    taken on the log of the share of the graph's weight between groups, log(1 - c): that share
    varies in proportion to its size, and on a graph whose groups hold together almost perfectly
    (c near 1, random labels' groups too) a bound on c itself would lie above 1. And c must exceed
    every draw's: one draw as coherent as the labels' groups is a tail the normal bound misses."""
    c = coherence(W, _groups(W, y, K, prop))
    null = null_coherence(W, y, K, prop, pos, rerun)
    c0 = float(null.mean())
    if rerun is not None:
        crossing = np.log(np.maximum(1.0 - null, CROSSING_FLOOR))
        bound = crossing.mean() - NULL_T95 * float(crossing.std(ddof=1)) * np.sqrt(1.0 + 1.0 / null.size)
        if c <= null.max() or np.log(max(1.0 - c, CROSSING_FLOOR)) > bound:
            return 0.0
    return float(np.clip((c - c0) / (1.0 - c0), 0.0, 1.0)) if c0 < 1.0 else 0.0


def evidence_weight(reliable: float, n_propagated: int, n_labeled: int) -> float:
    """Weight of the propagated samples from their :func:`reliability` r: r times the share of
    the information they carry, r^2 u / (r^2 u + l) for u propagated and l labeled samples. With
    a share r of them rightly grouped, u propagated samples inform a class mean as r^2 u labeled
    ones would (the signal falls by r, the noise does not), and weight r is the best when their
    errors are noise; but their wrong groups follow the graph's own structure, a bias that more
    of them does not average out. So they count when they are worth many labels (cells:
    r^2 u >> l, the weight stays r) and barely when they are worth a few (a microarray of 48
    samples with 21 labels and r = 0.3: 0.04)."""
    mass = reliable * reliable * max(int(n_propagated), 0)
    return float(reliable * mass / (mass + max(int(n_labeled), 1))) if mass > 0 else 0.0


def propagated_weight(agreement: tuple, y: np.ndarray, weighting: str, coherent, excess) -> tuple[float, float]:
    """Weights of the propagated samples in the labeled classes and in groups of their own
    (unreached, :func:`~ssfs.methods._shared.propagation.unreached_groups`) from the kept graph's held-out ``agreement``
    (:func:`~ssfs.methods._shared.propagation.held_out_agreement`) and ``coherent()``, the
    :func:`coherence` of the final groups in it: :func:`reliability`, the agreement above chance
    shrunk towards the coherence. ``"coherence"``: that reliability (the former weighting).
    ``"kept_evidence"``: 0 when nothing says the graph carries the classes, i.e. ``excess()`` (its
    :func:`excess_coherence`: every propagated split of a kNN graph is coherent in it, a split
    along the classes more than labels placed at random) is 0 and the held-out agreement is within
    two binomial standard errors of chance; else the reliability times :func:`evidence_weight`.
    ``"evidence"``: the same, ``excess()`` judging the start graph too (:func:`graphs_excess`). The
    samples in groups of their own weigh the reliability itself (0 with the others): no label
    informs their group's mean, so the labels' share of the evidence does not shrink it (with
    every other cell labeled, a type nobody labeled otherwise weighed nothing)."""
    acc, chance, pred = agreement[:3]
    held = int((pred >= 0).sum())
    if weighting not in WEIGHTINGS:
        raise MethodError(f"propagate: weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if weighting != "coherence" and (not np.isfinite(acc) or _no_structure(acc, chance, held)) and excess() <= 0.0:
        return 0.0, 0.0
    r = reliability(acc, chance, held, coherent())
    if weighting == "coherence":
        return r, r
    lab = y >= 0
    return evidence_weight(r, int((~lab).sum()), int(lab.sum())), r


def graphs_excess(chosen: Candidate, start: Candidate, y, K: int, prop: dict, pos, weighting: str) -> float:
    """:func:`excess_coherence` of the kept graph (with many samples: of the subsample's graph it
    was chosen on); with ``weighting="evidence"``, when it is 0 and some class has 2 labels, that
    of the start graph: either graph carrying the classes is evidence that the labels' groups are
    classes. (A refined graph is built on genes chosen from groups; the labels' groups can hold
    together in it no better than randomly placed labels' although the start graph separates
    them: 6 labels on 600 cells, ``tests/methods/test_scenario_ordering.py``. With one label per
    class, a second noisy test of 2 labels would double the false alarms: the kept graph alone.)"""
    kept = chosen.sample or (chosen.graph, y, pos)  # many samples: the subsample's graph (same cost at any n)
    rerun = chosen.rerun if weighting == "evidence" and unchecked(y) else None  # no held-out refit judged it
    excess = excess_coherence(kept[0], kept[1], K, prop, kept[2], rerun)
    if weighting != "evidence" or excess > 0.0 or unchecked(y) or start.graph is chosen.graph:
        return excess
    on = (start.graph, y, pos) if start.graph.shape[0] == y.size else (start.graph, kept[1], kept[2])
    return excess_coherence(on[0], on[1], K, prop, on[2])


def _no_structure(acc: float, chance: float, n_labeled: int) -> bool:
    """Held-out agreement within two binomial standard errors of chance (never when chance is 1:
    the held-out labels of one class leave nothing to tell apart)."""
    return chance < 1.0 and acc <= chance + 2.0 * np.sqrt(max(chance * (1.0 - chance), 1e-12) / max(n_labeled, 1))


#: the least share of a graph's weight between groups :func:`excess_coherence` takes the log of
CROSSING_FLOOR = 1e-6


def _weighted_groups(y, K, prop, floor, seed, weights, joined_in, W) -> tuple[np.ndarray, np.ndarray]:
    """The groups and sample weights a fit gives on another graph ``W`` (:func:`crossfit_pvalues`'s
    ``grouping``): the labels spread with ``seed``, the unreached parts joined in ``joined_in`` (X; None:
    not joined), labeled samples weighing their seed, propagated ones ``weights`` (classes, unreached)."""
    g = _groups(W, y, K, prop, floor, seed)
    g = joined_unreached(joined_in, g, K) if joined_in is not None else g
    lab = y >= 0
    return g, np.where(lab, seed, np.where(g < K, *weights))


def _graph_note(start: Candidate, chosen: Candidate, n_labeled: int, lead: tuple) -> str | None:
    """The fit's warning about its graph: the data's own graph carries no class structure (held-out
    agreement within two standard errors of chance), and the labels' own features beat those of the
    propagated samples (:func:`_judged_groups`)."""
    note = None
    acc = chosen.agreement[0]
    if np.isfinite(start.agreement[0]) and _no_structure(start.agreement[0], start.agreement[1], n_labeled):
        note = (f"the kNN graph of the data agrees with held-out labels in {start.agreement[0]:.0%} of the labeled "
                f"samples (chance {start.agreement[1]:.0%}; within two standard errors of it for {n_labeled} labels): "
                "it carries no class structure the labels can show")
        note += f"; the graph kept ({chosen.name}) agrees in {acc:.0%}" if chosen.name != "start" else ""
    if lead[0]:
        note = (f"{note}; " if note else "") + (
            f"the features the labels pick alone predict {lead[1]} held-out labels that those of the propagated "
            f"samples' groups miss, and miss {lead[2]} they predict: the propagated samples count 0 (the labeled "
            "samples' own R^2 ranks)")
    return note


def _judged_groups(X, y, K: int, chosen: Candidate, how: tuple, pos, batch, judge: bool = True,
                   may_lead: bool = True):
    """(groups, seed, lead, ranked_by): the final groups of the kept graph, every sample's seed weight,
    whether the labels lead and a function giving the held-out agreement of the features the R^2 then
    follows (None without ``judge``; :func:`free_turns`): the labels' own when they lead (refitted in
    every fold), else the propagated samples' refitted in every fold, their labels spread on the graph of
    the chain refitted without the fold's labels (:attr:`Candidate.folds`; the kept graph when it is the
    start graph, built without labels, or was chosen on a subsample of many samples). The features of all
    the labels' groups (which the held-out labels helped spread, on a graph whose genes they helped
    choose) would be judged by the labels that chose them: 8 classes at 3 labels per class, 2-8 held-out
    labels they alone predicted where refitted they predicted 0-1 (docs/labels_that_count.md, "A fair
    yardstick for the label-free turns"). Whether the labels lead is still judged against those features
    of all the labels: a prior for the graph (refitted there too, ``microarray_modules`` at 10 per class
    fell 0.867 -> 0.756, an unrecorded batch 0.812 -> 0.738).
    Seeds: :func:`contradicted_seeds`. ``how``: (prop, floor,
    unreached) of :func:`_groups` (``unreached``: the parts of a type nobody labeled joined,
    :func:`joined_unreached`). The labels lead when the features their own R^2 picks predict the
    held-out labels better than those the propagated samples' groups explain
    (:mod:`ssfs.methods._shared.labels_alone`; same folds) and are of 2 classes or more (:func:`held_out_counts`:
    4 labels at 1 %, 2 of one class, led by 2 to 0 and left the cells' R^2 to 4 samples, 0.027 -> 0.593 of a
    log2(TPM + 1) table's type genes, session 47; 2 per class of 2 classes keep their lead, colon 0.743 where it
    would fall to 0.619); the seeds are then all 1 (a graph whose
    samples the labels beat does not judge them) and the groups spread again. ``judge`` False
    (``weighting="coherence"``, the former weighting; counts, whose residual graphs are judged by the
    tiers of :func:`with_unexplained` and where a discriminant of 2-3 log-count labels per class is
    noise: counts_varied seed 2 at 3 per class, 0.06 and 0.11 of the held-out labels, where the graph
    found every marker; rare seed 1 at 10 per class, the labels would have led, 0.975 -> 0.908): the
    labels never lead. ``may_lead`` False (tables with dropouts, :func:`~ssfs.methods._shared.dropouts.read_dropouts`):
    they never lead either, and the held-out labels still judge the label-free turns; a discriminant of 2-3 labels per
    class follows each cell's dropouts there (a noisy filtered log2(TPM + 1) table at 3 per type, session 48: the
    propagated groups' 50 features, 48 type genes, predicted 1 of 15 held-out labels, the labels' own 7, whose R^2
    then found 0.063 of the type genes; 0.775 without the lead, every other fit of 6 such shapes unchanged)."""
    prop, floor, unreached = how
    seed = contradicted_seeds(y, chosen.agreement)

    def grouped(s, labels=y, W=chosen.graph, F=None):
        g = _groups(W, labels, K, prop, floor, s) if F is None else _spread_groups(F, labels, floor)
        return joined_unreached(X, g, K) if unreached else g  # a type nobody labeled, claimed in parts: one group

    groups = grouped(seed)
    top = propagated_features(X, y, groups, batch=batch) if judge else None
    if top is None:
        return groups, seed, (False, 0, 0), None
    agree = functools.partial(labels_alone_agreement, X, y, K, positions=pos, folds=FOLDS, batch=batch)
    propagated, alone = agree(features=top), agree()
    lead = labels_lead(propagated, alone, y)
    if lead[0] and (held_out_counts(y).size < 2 or not may_lead):  # held-out labels of one class judge nothing
        lead = (False, *lead[1:])
    if lead[0] and (seed < 1).any():
        seed = np.ones(y.size)
        groups = grouped(seed)

    def refitted(yy, genes=GENES, weighed=None):
        """The propagated samples' features of a fold: its labels ``yy`` spread on its refitted chain's graph, the
        R^2 of their groups over the samples unlabeled in ``weighed`` (None: in ``yy``, the held-out ones too)."""
        fold = chosen.folds.get(yy.tobytes())
        spread = fold is not None and bool((seed[yy >= 0] == 1.0).all())  # the refit spread these very seeds
        g = grouped(seed, yy, chosen.graph if fold is None else fold.graph, fold.spread if spread else None)
        found = propagated_features(X, yy if weighed is None else weighed, g, genes, batch=batch)
        if found is None:  # the fold's groups are one over its unlabeled samples: the fit's own groups'
            found = top if genes == GENES else propagated_features(X, y, groups, genes, batch=batch)
        return found

    if lead[0]:
        return groups, seed, lead, Yardstick(lambda: alone, functools.partial(labels_own_features, X, y, batch=batch))
    return groups, seed, lead, Yardstick(lambda: agree(features=refitted), functools.partial(refitted, weighed=y))


def contradicted_seeds(y: np.ndarray, agreement: tuple) -> np.ndarray:
    """Every sample's seed weight: 1, and 0.5 for a label the kept graph's held-out prediction contradicts (a wrong
    label, perhaps: its group is kept), unless that graph's held-out ``agreement`` (accuracy, chance, predictions)
    shows it at chance: within two binomial standard errors of it (:func:`_no_structure`) with enough held-out
    labels to have shown a useful graph (:func:`shows_a_useful_graph`). A graph at chance contradicts labels at
    random: halving them reweighed the labeled samples by noise (markers planted on real arrays' samples in 3
    classes, ``bench_other_shapes.py``'s ``real_background_*`` at 10 labels per class, 4 draws each: 0.16 -> 0.26 of
    the markers on TOX-171's, 0.30 -> 0.36 on GLIOMA's, 0.37 -> 0.43 on Prostate-GE's; docs/labels_that_count.md, "A
    graph at chance does not judge the labels", session 59)."""
    acc, chance, pred = agreement[:3]
    seed = np.ones(y.size)
    if pred is None or not np.isfinite(acc):
        return seed
    held = int((pred >= 0).sum())
    if _no_structure(acc, chance, held) and shows_a_useful_graph(chance, held):
        return seed
    lab = np.flatnonzero(y >= 0)
    seed[lab[(pred >= 0) & (pred != y[lab])]] = 0.5
    return seed


#: the reliability of a graph worth its contradictions (:func:`shows_a_useful_graph`): half right beyond chance
USEFUL_RELIABILITY = 0.5
#: ... which the held-out labels show when its expected agreement lies this many binomial standard errors above chance
USEFUL_STANDARD_ERRORS = 3.0


def shows_a_useful_graph(chance: float, n_held: int) -> bool:
    """Whether ``n_held`` held-out labels at ``chance`` would show a graph :data:`USEFUL_RELIABILITY` (half) right
    beyond chance, its expected agreement chance + 0.5 (1 - chance) lying :data:`USEFUL_STANDARD_ERRORS` (3)
    binomial standard errors above chance (n_held >= 36 chance / (1 - chance): 12 of 4 classes, 18 of 3, 36 of
    2): only then does an agreement within two standard errors of chance say the graph is at chance, not that the
    labels were too few to tell (2 labels per class of 3-4 classes, 6-8 held out: 0.98 -> 0.63 of the markers on
    heavy-tailed arrays, 0.27 -> 0.00 on gene modules, with the graph's contradictions ignored there). Compared
    squared, n_held (1 - chance) 0.5^2 >= 3^2 chance, to a relative 1e-9: at equality (balanced classes: 5 classes
    and 9 held-out labels) the square root's rounding does not decide."""
    if chance >= 1.0 or n_held <= 0:
        return False
    shown = n_held * (1.0 - chance) * USEFUL_RELIABILITY ** 2
    return shown >= USEFUL_STANDARD_ERRORS ** 2 * chance * (1.0 - 1e-9)
