"""Whether ``propagate``'s label-free order takes turns with the R^2 or leads it on dense X, judged on the
held-out labels (:func:`_free_in_turn`: :func:`free_turns`, :func:`free_leads`, :func:`label_free_at_chance`,
:func:`head_carries`, :func:`r2_unproven`), and whether rising components are unwanted (:func:`unwanted_rejected`)."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import sparse

from .._shared.labels_alone import (
    GENES,
    labels_alone_agreement,
    labels_lead,
    labels_own_features,
    nearer_own_class,
)
from .._shared.unwanted import outside_dispersion, rising_basis
from .graphs import held_out_counts
from .model import FOLDS, Propagation
from .ordering import with_unexplained


def _free_in_turn(model: Propagation, X, y, K: int, free: tuple, ranked_by, pos, batch, explained,
                  unclipped=None, *, may_lead: bool = True, unwanted_pcs: int | None = None) -> None:
    """Dense X: the label-free scores ``free`` = (scores, how :func:`label_free_choice` chose them) in turn with the
    R^2 of ``model`` (:func:`free_turns`), or ranking alone below the explained features (``explained()``,
    :func:`with_unexplained`) where they lead: where the held-out labels cannot judge (:func:`held_out_judges`; the
    explained features then take turns with them, ``explained_in_turn``), where the R^2's features
    predict them no better than chance and nothing rises or what rises lies in few features
    (:func:`label_free_at_chance`), where what rises lies in few features whose head carries the classes
    (:func:`head_carries`, any label budget), where few features stand out of it and the R^2's features predict the
    held-out labels not beyond chance (:func:`r2_unproven`; the explained features then not first), or where
    they win :func:`free_leads` and ``may_lead`` on the held-out labels' evidence. They may where the
    labels are few (:func:`few_labels`) or where the features they were judged against are those the R^2 ranks:
    the labels' own where the labels lead, the propagated samples' where those outweigh the labeled ones. With 10
    labels per class or more and the labeled samples weighing more, the R^2 ranked is mostly the labels' own
    while the yardstick was the propagated samples' features; there the label-free order takes turns at most (20
    classes of 5 markers at 10 labels per class, 4 seeds: 0.865 -> 0.912 of the markers, `fisher` 0.905; two draws
    had led, to 0.84 and 0.80, on 39 to 20 and 52 to 23 held-out labels; every other shape at 5, 10 and 20 per
    class, the ``microarray_*`` sweeps and 15 real sets at 10 per class unchanged; docs/labels_that_count.md, "Ten
    labels per class: the label-free order takes turns", session 39), unless what rises lies in few features
    (:func:`concentrated`: 8 classes of ``make_classification`` at 10 per class, one of 4 draws 11 -> 16 of the 16
    informative features on 34 to 16 held-out places, the others unchanged; session 51). Sets the model's ``free_*``
    fields, ``explained``, ``labels_scores`` and ``scores``. Where the label-free scores are dispersions of genes
    rescaled one by one (``unclipped``, X as given, :func:`rescaled_gene_by_gene`) they neither take turns nor lead:
    their order is the rescaling's. Where they read rising components (``free[1]`` "signal") that the held-out labels
    reject (:func:`unwanted_rejected`, on ``unwanted_pcs`` components at most; None: not asked) nothing is set but
    ``model.unwanted_basis`` (and its evidence): the fit is to run again without them."""
    if free[1] == "dispersion" and rescaled_gene_by_gene(unclipped):
        model.free_rescaled = True
        return
    judged = ranked_by() if held_out_judges(y) else None
    if unwanted_pcs is not None and judged is not None and free[1] == "signal":
        model.unwanted_basis, model.unwanted_evidence, model.unwanted_on_lean = unwanted_rejected(
            X, y, K, free[0], judged, pos, batch, unwanted_pcs)
        if model.unwanted_basis is not None:
            return
    model.free_unjudged = judged is None
    model.free_at_chance, model.free_concentrated = (False, False) if judged is None else label_free_at_chance(
        free, judged, y)
    alone = model.free_unjudged or model.free_at_chance
    model.free_turns = (True, 0, 0, 0, 0) if alone else free_turns(X, y, K, free[0], judged, pos, batch)
    if not alone and (standing := standing_out(free)):
        head = head_carries(X, y, K, free[0], standing, judged, pos, batch, ranked_by.features)
        model.free_head, model.free_outside = ((*head[:4], free[1]), head[4]) if head else ((), ())
        model.free_unproven = (standing, free[1]) if not head and r2_unproven(judged, y) else ()
        if head or model.free_unproven:
            model.free_turns, alone = (True, *model.free_turns[1:]), True
    if model.free_at_chance or model.free_head or model.free_unproven:
        model.r2_held_out = (float(judged[0]), float(judged[1]), int((np.asarray(judged[2]) >= 0).sum()))
    if model.free_turns[0]:
        model.explained = explained()
        model.labels_scores = model.scores
        may_lead = may_lead or free[1] == "signal" and concentrated(free[0])
        model.free_leads = alone or (may_lead and free_leads(*model.free_turns[1:]))
        model.free_by_places = model.free_leads and not (alone or sign_test(*model.free_turns[1:3]))
        first = np.zeros_like(model.explained) if model.free_unproven else model.explained
        model.scores = with_unexplained(model.scores, free[0], first, free_first=model.free_leads,
                                        explained_in_turn=model.free_unjudged)


def unwanted_rejected(X, y, K: int, free: np.ndarray, judged: tuple, pos, batch, n_pcs: int) -> tuple:
    """(basis, evidence, on_lean): the orthonormal basis of dense X's rising components (:func:`~ssfs.methods._shared.
    unwanted.rising_basis`) where the held-out labels reject them, else None. The genes' dispersion outside those
    components (:func:`~ssfs.methods._shared.unwanted.outside_dispersion`, no label) picks its
    :data:`~ssfs.methods._shared.labels_alone.GENES` best features; evidence: (b, c, nearer, farther) for them, as
    :func:`free_turns` counts them, against the features the fit ranks by (``judged``, :func:`free_turns`'
    yardstick) and against the label-free scores' best (``free``). Rejected where both pass :func:`free_leads`
    (predictions or places, one-sided sign test at 0.05): the features outside the components carry the classes
    better than the components' own and than the groups found along them, so the components are structure the
    classes do not share (an unrecorded batch, co-expressed modules, a program; docs/labels_that_count.md,
    "Components the labels reject", session 40). Against the fit's features alone, 1,000 samples of 120 genes at
    1 % labels (4 classes of 5 markers: their components are the rising ones) lost every marker; against both, no
    shape, ``microarray_*`` draw or real array at 3 or 10 labels per class lost. Where one of the components is
    crossed (:func:`~ssfs.methods._shared.unwanted.crossed_columns`: two clear sides holding the other components'
    groups alike, an unrecorded batch) both counts need only lean to the features outside (:func:`leans`; ``on_lean``:
    rejected so, not significantly): with 2-3 labels per class the sign test cannot pass where they lean 3 to 1 (an
    unrecorded batch, 8 draws: at 3 per class 0.759 -> 1.000 of the markers, at 2 per class 0.166 -> 0.759; 672 fits
    of 42 dense shapes changed nowhere else; docs/labels_that_count.md, "A batch nobody recorded in an array",
    session 50). Where they are kept and more than one rises, each crossed component alone is asked next, by the
    same rule: two classes whose own component rises beside an unrecorded batch's are two crossed components (each
    one's sides hold the other's alike), and with both removed the features outside lost the markers and predicted
    less, so both stayed (session 50)."""
    Q, crossed = rising_basis(X, n_pcs)
    if Q.shape[1] == 0:
        return None, (), False
    agree = functools.partial(labels_alone_agreement, X, y, K, positions=pos, folds=FOLDS, batch=batch)
    free_features = agree(features=np.argsort(-np.nan_to_num(free, nan=-np.inf), kind="stable")[:GENES])
    first = None
    for basis in [Q] + ([Q[:, [j]] for j in crossed] if Q.shape[1] > 1 else []):
        best = np.argsort(-np.nan_to_num(outside_dispersion(X, basis, batch), nan=-np.inf), kind="stable")[:GENES]
        outside_features = agree(features=best)
        counts = []
        for incumbent in (judged, free_features):
            _, b, c = labels_lead(incumbent, outside_features, y)
            counts.append((b, c, *nearer_own_class(incumbent, outside_features)))
        significant = all(free_leads(*each) for each in counts)
        on_lean = not significant and crossed.size > 0 and all(leans(*each) for each in counts)
        if significant or on_lean:
            return basis, tuple(counts), on_lean
        first = tuple(counts) if first is None else first
    return None, first, False


def leans(b: int, c: int, nearer: int = 0, farther: int = 0) -> bool:
    """Whether held-out counts as :func:`free_leads` reads them lean to the first side, significant or not: it
    predicts no fewer (b >= c) and places the own class of at least :data:`LEAN_BY` more nearer than farther."""
    return b >= c and nearer - farther >= LEAN_BY


#: held-out labels placed nearer than farther by which :func:`leans` leans: one label decided nothing (two classes
#: of 200 markers at 2 sd, 3 labels per class, 20 % of them wrong: 1 to 0 removed the classes' own component, 1.00
#: -> 0.23 of the markers)
LEAN_BY = 2


#: relative spread of the genes' standard deviations (or ranges) within which they count as set gene by gene
#: (:func:`rescaled_gene_by_gene`): float32 and files of 4-6 significant digits keep a z-score's sds within 1e-6 to
#: 1e-4 of each other; measured genes' spread far wider (equal-noise simulated genes on 400 samples: 0.28)
RESCALED_WITHIN = 1e-3


def rescaled_gene_by_gene(X) -> bool:
    """Whether dense X's genes were rescaled one by one: every (non-constant) gene's standard deviation the same, or
    every gene's range (within :data:`RESCALED_WITHIN` of the largest): z-scored, min-max scaled or rank-transformed
    gene by gene, as
    many public arrays arrive. Their dispersions (:func:`gene_dispersion`, the label-free scores where no component
    rises) then measure the rescaling, not the genes: all 1 after a z-score (the order a seeded permutation of
    ties), the spread within the range after min-max scaling. Taken in turn they cost the R^2 half its places, and
    leading they cost all (8 classes z-scored at 3 labels per class 0.069 -> 0.013 of the markers, 40 samples of 2
    classes at 2 per class 0.269 -> 0.013, 8 classes min-max scaled 0.106 -> 0.019; docs/labels_that_count.md,
    "Arrays rescaled gene by gene", session 36). False for sparse X."""
    if sparse.issparse(X):
        return False
    X = np.asarray(X, dtype=np.float64)
    for scale in (X.std(axis=0), X.max(axis=0) - X.min(axis=0)):
        scale = scale[scale > 0]
        if scale.size and float(np.ptp(scale)) <= RESCALED_WITHIN * float(scale.max()):
            return True
    return False


#: labels per class (the labeled classes' median) below which an R^2 at chance yields to the genes' own dispersion
#: (:func:`r2_at_chance`) and the label-free order may lead whatever it was judged against (:func:`_free_in_turn`)
FEW_LABELS = 10


def r2_at_chance(judged: tuple, y: np.ndarray, every_budget: bool = False) -> bool:
    """Whether the features the R^2 follows predict the held-out labels no better than chance: ``judged`` (their
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`, refitted in every fold: :func:`_judged_groups`)
    right on no larger a share than chance (sum over the classes of their shares squared), with fewer than
    :data:`FEW_LABELS` labels per class. :func:`_free_in_turn` asks only where no component of the data rises above
    noise (the label-free order is every gene's :func:`gene_dispersion`): nothing the labels found then beats the
    genes' own dispersion, and the label-free order leads below the explained features. Where components rise they
    are structure the labels may not share (noise factors with 60 samples at 3 per class: 0.321 -> 0.004 of the
    markers had it asked there), and with 10 labels per class an R^2 at chance can still lead (6 classes at 1 sd: 0.22
    and 0.33 of the markers where the dispersion found 0.10). Measured, 4 seeds (docs/labels_that_count.md, "An R^2
    at chance where nothing rises", session 36): at 3 per class two-colour log ratios 0.221 -> 0.304 and weak
    markers of 6 classes 0.087 -> 0.121 (both = ``variance``: losses closed); at 2 per class 8 classes 0.513 ->
    0.675, 20 classes 0.625 -> 0.782, log ratios 0.137 -> 0.304; heavy tails at 2 per class 0.875 -> 0.825; the
    ``microarray_*`` sweeps and the real arrays unchanged (a component rises on every one)."""
    accuracy, chance = judged[0], judged[1]
    return bool((every_budget or few_labels(y)) and np.isfinite(accuracy) and chance < 1.0
                and accuracy <= chance + 1e-12)


def label_free_at_chance(free: tuple, judged: tuple, y: np.ndarray) -> tuple[bool, bool]:
    """(at_chance, concentrated): whether the label-free order ``free`` = (scores, how) leads because the R^2's
    features predict the held-out labels no better than chance (``judged``, :func:`r2_at_chance`), and whether it
    does because the rising components it reads lie in few features (:func:`concentrated`). Where nothing rises
    (the genes' dispersion) with fewer than :data:`FEW_LABELS` labels per class (session 36). Where components rise
    they may be structure the classes do not share (noise factors over 600 of 8,000 genes: with 3 labels per class
    an R^2 at chance still found 0.26 of the markers where that order found none), so only where what they read
    lies in fewer than :data:`~ssfs.methods._shared.labels_alone.GENES` features, at any label budget: the classes
    of scikit-learn's ``make_classification`` live in a few informative features of large variance (a correlated
    block), each weak alone; the R^2 of 2-3 labels per class picked noise there (0.24-0.84 of them in the means of
    4 draws, single draws 0.00; 0.28-0.85 at 10 per class, where ``variance`` and the fit without labels found most
    of them, 1.00) and predicted the held-out labels no better than chance (docs/labels_that_count.md, "Classes in a
    few features of large variance", session 51)."""
    if free[1] == "dispersion":
        return r2_at_chance(judged, y), False
    if free[1] == "signal" and concentrated(free[0]):
        at_chance = r2_at_chance(judged, y, every_budget=True)
        return at_chance, at_chance
    return False, False


#: the label-free scores' share of their largest at which the :data:`~ssfs.methods._shared.labels_alone.GENES`-th
#: counts as past a cliff (:func:`concentrated`): ``make_classification``'s 10-20 informative features of 2,000-5,000
#: put the 50th at 0.03-0.04 of the first; noise factors of 200 genes each at 0.16-0.25
CLIFF = 0.1


def concentrated(free: np.ndarray) -> bool:
    """Whether label-free scores of rising components (``free``, :func:`signal_variance`) hold what they read in
    fewer than :data:`~ssfs.methods._shared.labels_alone.GENES` features: the GENES-th largest below :data:`CLIFF`
    of the largest (a cliff, not a slope)."""
    f = np.sort(np.nan_to_num(np.asarray(free, dtype=np.float64), nan=0.0))[::-1]
    return bool(f.size > GENES and f[0] > 0 and f[GENES - 1] < CLIFF * f[0])


#: how many median absolute deviations above the median a gene's dispersion must lie to stand out (:func:`standing_out`)
STANDS_OUT = 10.0


def standing_out(free: tuple) -> int:
    """How many features of the label-free order ``free`` = (scores, how) stand out, where they are few (fewer than
    :data:`~ssfs.methods._shared.labels_alone.GENES`; else 0): where components rise ("signal") and their variance
    is :func:`concentrated`, those above the cliff (:data:`CLIFF` of the largest score); where nothing rises
    ("dispersion"), the genes whose dispersion lies more than :data:`STANDS_OUT` median absolute deviations above the
    median (100 x 5,000 ``make_classification``: its 10 informative features; 8 classes of 5 markers among 3,000
    genes: 1-2 of their 40); any other label-free score: 0."""
    f = np.nan_to_num(np.asarray(free[0], dtype=np.float64), nan=0.0)
    if free[1] == "signal":
        return int((f >= CLIFF * f.max()).sum()) if concentrated(f) else 0
    if free[1] != "dispersion":
        return 0
    median = np.median(f)
    spread = np.median(np.abs(f - median))
    count = int((f > median + STANDS_OUT * spread).sum()) if spread > 0 else 0
    return count if count < GENES else 0


def head_carries(X, y: np.ndarray, K: int, free: np.ndarray, standing: int, judged: tuple, pos, batch=None,
                 features=None) -> tuple:
    """(features, right, held, chance, outside) where the head of the label-free order carries the classes, else ():
    the head of the ``free`` scores is the first half of the ``standing`` features that stand out
    (:func:`standing_out`; at least 2, at most :data:`~ssfs.methods._shared.labels_alone.GENES`). Chosen without a
    label, the head's discriminant
    (:func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`, the same folds) predicts ``right`` of the
    ``held`` held-out labels: it carries the classes where that is beyond ``chance`` (one-sided binomial test at
    :data:`FREE_LEADS_P`) and no share below that of the features the R^2 follows (``judged``). Then the label-free
    order leads below the explained features at any label budget (:func:`_free_in_turn`). The head, not all
    before the cliff: a module of 10 genes 3 sd louder in half the samples, ranked first, and 11 markers after it
    carried the classes together (18 of 40 held-out labels, chance 0.25) where the module alone does not
    (docs/labels_that_count.md, "The head of a concentrated order", session 52). Where the head is beyond chance
    but below the R^2's share, everything that stands out is asked next, by the same two bars (``features`` then
    counts them all): classes each of whose features is weak alone are carried by all of them together, not by
    half (``make_classification``, 300 x 2,000, 4 classes of one cluster, 20 informative, 20 labels per class: the
    head predicted 37-43 of 80 held-out labels, the R^2's features 46-53, all 20 that stand out 54-59; 0.60-0.75 ->
    1.00 of the informative features; docs/labels_that_count.md, "Everything that stands out, asked second",
    session 54). Where all that stand out carry the classes but predict fewer held-out labels than the R^2's features,
    or where the head does not carry them but all that stand out do, no worse than the R^2's features (and those beyond
    chance: else :func:`r2_unproven` decides), they lead only
    where the R^2's best features outside them (``features``: :attr:`Yardstick.features`) predict the held-out labels
    not beyond chance (:func:`r2_outside_right`; ``outside``: their (right, held), else ()): nothing the R^2 follows
    then carries the classes beyond what stands out. A module ranked first that the classes do not share leaves
    markers outside, which the R^2's features find (session 52's module: unchanged at 2, 3, 10 and 20 labels per
    class; docs/labels_that_count.md, "What the R^2 finds outside what stands out", session 55)."""
    order = np.argsort(-np.nan_to_num(np.asarray(free, dtype=np.float64), nan=0.0), kind="stable")
    head = int(min(GENES, max(2, -(-int(standing) // 2))))
    carried = False
    for size in dict.fromkeys((head, int(min(GENES, max(head, standing))))):  # once where the head is all
        accuracy, chance, pred, _ = labels_alone_agreement(X, y, K, features=order[:size], positions=pos,
                                                           folds=FOLDS, batch=batch)
        right, n = held_out_right(pred, y)
        beyond = bool(np.isfinite(accuracy)) and beyond_chance(right, n, chance)
        carried = beyond if size == head else carried
        if carried and beyond and accuracy >= judged[0]:
            return (size, right, n, float(chance), ())
    if not beyond or not (carried or (accuracy >= judged[0] and not r2_unproven(judged, y))):
        return ()  # an R^2 not beyond chance is :func:`r2_unproven`'s (its explained features not first)
    outside = r2_outside_right(X, y, K, order[:size], pos, batch, features)
    return () if beyond_chance(*outside) else (size, right, n, float(chance), outside[:2])


def r2_outside_right(X, y: np.ndarray, K: int, standing: np.ndarray, pos, batch=None,
                     features=None) -> tuple[int, int, float]:
    """(right, held, chance): how many of the held-out labels the R^2's best features outside ``standing`` predict,
    and chance: the :data:`~ssfs.methods._shared.labels_alone.GENES` best of ``features(yy, genes)`` (the fit's
    :attr:`Yardstick.features`, refitted on each fold's labels ``yy``; None: the labels' own,
    :func:`~ssfs.methods._shared.labels_alone.labels_own_features`) once ``standing`` is left out, read by
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement` (the same folds and discriminant). Where that
    is not beyond chance (:func:`beyond_chance`), nothing the R^2 follows carries the classes outside the features
    that stand out, and its lead over them comes from the few of them it holds: :func:`head_carries` then lets what
    stands out lead (``make_classification``, 300 x 2,000, 4 classes of 2 clusters, 20 informative, 20 labels per
    class, one draw: all 20 that stand out predicted 33 of 80 held-out labels, the R^2's 50 features 38, its 50 best
    outside the 20 only 23 (chance 20); 5 -> 20 of the 20 informative). Where they do carry them, the R^2 keeps the
    order: a module of 10 genes 3 sd louder in half the samples, ranked first among 18 that stand out, beside 40
    markers (the R^2's 50 features outside the 18 predict the held-out labels beyond chance; the labels' own, at 10
    per class, 11 of 40, would have let the module lead: 0.900 -> 0.825 of the markers; docs/labels_that_count.md,
    "What the R^2 finds outside what stands out", session 55)."""
    best = functools.partial(labels_own_features, X, y, batch=batch) if features is None else features

    def outside(yy: np.ndarray) -> np.ndarray:
        cols = np.asarray(best(yy, GENES + standing.size))
        return cols[~np.isin(cols, standing)][:GENES]

    accuracy, chance, pred, _ = labels_alone_agreement(X, y, K, features=outside, positions=pos, folds=FOLDS,
                                                       batch=batch)
    right, held = held_out_right(pred, y)
    return (right, held, float(chance)) if np.isfinite(accuracy) else (0, 0, float(chance))


def held_out_right(pred: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """(right, held): how many of the labeled samples' held-out predictions ``pred`` (one per labeled sample, in
    their order; -1: not held out) are their labels, and how many were held out."""
    pred = np.asarray(pred)
    held = pred >= 0
    return int((pred[held] == np.asarray(y)[np.asarray(y) >= 0][held]).sum()), int(held.sum())


def beyond_chance(right: int, held: int, chance: float) -> bool:
    """Whether ``right`` of ``held`` held-out predictions are more than ``chance`` gives: one-sided binomial test
    at :data:`FREE_LEADS_P` (scipy's ``bdtrc``: P(at least ``right``) < 0.05; 5 of 6 at chance 0.5 is 0.109, 6 of 6
    0.016, 15 of 20 0.021). False without a held-out label or where chance is 1."""
    from scipy.special import bdtrc  # binomial survival function (scipy.stats costs a ranking job 0.4 s of imports)

    return held > 0 and chance < 1.0 and bool(bdtrc(right - 1, held, chance) < FREE_LEADS_P)


def r2_unproven(judged: tuple, y: np.ndarray) -> bool:
    """Whether the features the R^2 follows (``judged``: their held-out
    :func:`~ssfs.methods._shared.labels_alone.labels_alone_agreement`) predict the held-out labels not beyond chance
    (:func:`beyond_chance`). :func:`_free_in_turn` asks where few features stand out of the label-free order
    (:func:`standing_out`) and their head does not carry the classes (:func:`head_carries`): nothing the labels
    found is then shown to beat what stands out without them, and the label-free order leads, the features the
    groups explain not first (they are explained by groups the held-out labels did not confirm). Where the labels
    show their features beyond chance the R^2 keeps its place; with more labels that is easier to show, so the rule
    fades as labels are added. Measured (docs/labels_that_count.md, "Labels that prove nothing against what stands
    out", session 53): every dense shape of ``bench_other_shapes`` at 2, 3 and 10 labels per class (636 fits, 4
    seeds), 15 fits to every informative feature (``make_classification``: docs/sklearn.md's recipe shape at 3 per
    class 0.45 -> 1.00, 100 x 5,000 at 10 per class 0.65 -> 1.00), two lower (censored intensities at 3 per class
    0.125 -> 0.000 on one draw, mixed effects at 2 per class 0.85 -> 0.80 on one); the sex-like module at 3 per
    class 0.05 -> 0.325 and 0.25 -> 0.325 on two draws, the others, the ``microarray_*`` sweeps and 14 real arrays
    unchanged."""
    right, held = held_out_right(judged[2], y)
    return held > 0 and not beyond_chance(right, held, float(judged[1]))


def few_labels(y: np.ndarray) -> bool:
    """Whether the labeled classes hold fewer than :data:`FEW_LABELS` labels each (their median; False without a
    label): an R^2 at chance then yields (:func:`r2_at_chance`), and the label-free order may lead whatever the
    held-out labels judged it against (:func:`_free_in_turn`)."""
    counts = np.bincount(np.asarray(y)[np.asarray(y) >= 0])
    return bool(counts.size) and float(np.median(counts[counts > 0])) < FEW_LABELS


def free_turns(X, y, K: int, free: np.ndarray, ranked_by: tuple, pos, batch=None) -> tuple[bool, int, int, int, int]:
    """(turns, b, c, nearer, farther): whether dense X's label-free scores ``free`` take turns with the R^2
    (:func:`with_unexplained`), judged by the held-out labels: their :data:`~ssfs.methods._shared.labels_alone.GENES`
    best features against those the R^2 follows (``ranked_by``: the propagated samples' or, when the labels lead,
    the labels' own, both refitted in every fold without its labels; :func:`_judged_groups`), paired: b the held-out
    labels the label-free features predict and those miss, c the reverse; nearer (farther) those whose own class
    the label-free features place nearer (farther) than those do
    (:func:`~ssfs.methods._shared.labels_alone.nearer_own_class`). Turns when b > c, when both predict exactly the
    same held-out labels (b = c = 0, often every one: the hedge, in turn, costs nothing the labels can see; the R^2
    keeps every other place and its explained features stay first), or when the label-free features lead
    (:func:`free_leads`). A split tie (b = c > 0) otherwise keeps the R^2: there the held-out labels cannot tell
    the two apart (often both at chance), and turning gained on 8 classes of equal-noise genes but lost 6-10 of 40
    markers on 40-sample heteroscedastic or factor-laden arrays (session 31). The label-free features are chosen
    without a label, so the held-out labels judge them fairly. Measured (docs/labels_that_count.md, "The
    label-free scores in turn on dense arrays", session 30; "A fair yardstick for the label-free turns", session
    31): 40-sample arrays 0.456 -> 0.662 of the markers at 3 labels per class, 8 classes 0.106 -> 0.175, the real
    arrays and ``microarray_*`` within -0.013 to +0.010."""
    top = np.argsort(-np.nan_to_num(free, nan=-np.inf), kind="stable")[:GENES]
    challenger = labels_alone_agreement(X, y, K, features=top, positions=pos, folds=FOLDS, batch=batch)
    _, b, c = labels_lead(ranked_by, challenger, y)
    nearer, farther = nearer_own_class(ranked_by, challenger)
    return b > c or b == c == 0 or free_leads(b, c, nearer, farther), b, c, nearer, farther


def held_out_judges(y: np.ndarray) -> bool:
    """Whether held-out labels can judge the R^2's features against the label-free ones (:func:`free_turns`): 2
    labeled classes or more hold 2 labels or more (a class's only label is never held out), and those classes hold
    :data:`JUDGE_LABELS` labels or more (fewer can never pass :func:`sign_test`). With fewer classes (1 % of 300
    samples: 3 labels, 2 in one class) every held-out label is of one class; with fewer labels (2 per class of 2
    classes, 1 % of 400-600 samples: 2 and 2) the comparison could only ever keep the R^2. Either way the R^2 of
    the propagated samples rests on a graph the labels could not check: the label-free order leads, the explained
    features taking turns with it (:func:`with_unexplained`, ``explained_in_turn``, session 49; before, they ranked
    first: ``free_first`` alone). Measured on dense arrays, 4 seeds
    (docs/labels_that_count.md, "Held-out labels of one class judge nothing", session 34; "Too few held-out labels
    to judge", session 35): 1 %, heteroscedastic 0.794 -> 0.944 of the markers (0.981 without labels), 8 classes
    0.588 -> 0.675, 20 classes 0.588 -> 0.782, heavy tails 0.450 -> 0.625; 40-sample arrays at 2 per class 0.575
    -> 0.688."""
    counts = held_out_counts(y)
    return counts.size >= 2 and int(counts.sum()) >= JUDGE_LABELS


#: one-sided sign-test level below which the label-free features lead the R^2 (:func:`free_leads`)
FREE_LEADS_P = 0.05
#: the fewest held-out labels that can pass :func:`sign_test` (5 to 0: 1/32 < 0.05; 4 to 0 is 1/16)
JUDGE_LABELS = math.ceil(math.log2(1.0 / FREE_LEADS_P))


def sign_test(wins: int, losses: int) -> bool:
    """Whether ``wins`` of the ``wins + losses`` discordant pairs are more than a fair coin gives at
    :data:`FREE_LEADS_P` (one-sided sign test: 5 to 0, 6 to 0, 7 to 1, ...): :func:`beyond_chance` at chance 1/2."""
    return beyond_chance(wins, wins + losses, 0.5)


def free_leads(b: int, c: int, nearer: int = 0, farther: int = 0) -> bool:
    """Whether the label-free features, taking turns (:func:`free_turns`), rank alone after the explained ones:
    they predict b held-out labels the R^2's features miss and miss c those predict, or they place the own class
    of ``nearer`` held-out labels nearer than those features do and of ``farther`` farther, and either count
    passes :func:`sign_test`. Then the
    R^2 of the propagated samples is what the held-out labels reject, and half the places in turn would go to its
    noise (8 classes of 5 equal-noise markers at 3 labels per class: 5-7 to 0, 0.45 of the markers in turn,
    0.55-0.73 alone; docs/labels_that_count.md, "Nothing rises"). The places count more of the held-out labels
    where the classes are many and the labels few (with 2 classes they are b and c): 8 classes, 5 to 1 right but
    15 to 1 nearer, 0.525 -> 0.775 of the markers (docs/labels_that_count.md, "Every class's place", session 35)."""
    return sign_test(b, c) or sign_test(nearer, farther)
