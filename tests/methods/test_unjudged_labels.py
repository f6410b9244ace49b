"""Held-out labels of one class judge nothing (session 34, docs/labels_that_count.md "Held-out labels of one class
judge nothing"): with fewer than 2 labeled classes holding 2 labels (1 % of a 300-sample array: 3 labels, 2 in one
class), or those holding fewer than 5 labels (session 35, "Too few held-out labels to judge": 2 labels per class of
2 classes), ``propagate``'s label-free order ranks below the features the groups explain, as where it wins the
held-out comparison (:func:`ssfs.methods.propagate.free_leads`); since session 49 ("Nothing judges the groups: their
features take turns") those features take turns with it (:func:`ssfs.methods.propagate.with_unexplained`,
``explained_in_turn``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ssfs import run_method
from ssfs.experiment.verdict import FREE_LEADS_ADVICE, _free_leads_sentence
from ssfs.methods.propagate import held_out_judges, with_unexplained


@pytest.mark.parametrize("labels, judges", [([0, 0, 1], False), ([0, 0, 1, 1], False), ([0, 1, 2], False),
                                            ([0, 0, 0], False), ([], False), ([0, 0, 1, 1, 2], False),
                                            ([0, 0, 1, 1, 1], True), ([0, 0, 0, 0, 0, 1], False),
                                            ([0, 0, 1, 1, 2, 2], True)])
def test_held_out_judges_by_hand(labels, judges):
    """2 labeled classes or more holding 2 labels, and those holding 5 labels or more (session 35): 2 and 2 can never
    pass the sign test (4 to 0 is 1/16)."""
    y = np.array(labels + [-1] * 5)
    assert held_out_judges(y) is judges


def test_two_labels_per_class_of_two_classes(other_shapes):
    """``bench_other_shapes.py``'s ``few_samples`` (40 x 5,000, 2 classes x 20 markers) at 2 labels per class, seed 0:
    4 labels to hold out, too few to judge; the label-free order leads below the explained features: 25 of the 40
    markers, as with the labels hidden (the R^2 of the groups in turn: 19, before session 35)."""
    X, _, cls, markers = other_shapes.SHAPES["few_samples"](0)
    y = other_shapes.per_class_labels(cls, 2, 0)
    assert not held_out_judges(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = run_method("propagate", X, y)
        hidden = run_method("propagate", X, np.full_like(y, -1))
    assert ranked.result.extra["graph"]["label_free_unjudged"] is True
    assert np.isin(ranked.order[:40], markers).sum() == np.isin(hidden.order[:40], markers).sum() == 25


def _heteroscedastic(seed: int, n=300, p=2000, k=4, per=10):
    """``benchmarks/bench_other_shapes.py``'s ``heteroscedastic`` draw: gene means N(6, 2), noise N(0, 1) times
    exp(N(0, 0.8)) per gene, 4 classes of 75 shifting their 10 markers by +-1.5 noise sds; 1 % of the samples
    labeled (3, at random)."""
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.repeat(np.arange(k), n // k))
    sd = np.exp(rng.normal(0.0, 0.8, p))
    X = rng.normal(size=(n, p)) * sd + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = markers[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += 1.5 * sd[genes] * rng.choice([-1.0, 1.0], per)
    y = np.full(n, -1)
    pick = np.random.default_rng(2000 + seed).choice(n, 3, replace=False)
    y[pick] = cls[pick]
    return X, y, cls, markers


def test_the_benchmark_draws_these_arrays(other_shapes):
    X, _, cls, markers = other_shapes.SHAPES["heteroscedastic"](0)
    ours = _heteroscedastic(0)
    assert np.array_equal(X, ours[0]) and np.array_equal(cls, ours[2]) and np.array_equal(markers, ours[3])
    assert np.array_equal(other_shapes.budget_labels(cls, "1%", 0), ours[1])


def test_one_percent_of_a_heteroscedastic_array():
    """Seed 0: labels 2, 0, 0, 1 per class. The label-free order below the explained features finds 38 of the 40
    markers (all 40 without labels), where taking turns with the R^2 of the groups 3 labels spread into found 29
    (before session 34; ``unexplained="r2"``, the R^2 alone: fewer still). The fit, the warning and selection
    mode's verdict say why."""
    X, y, _, markers = _heteroscedastic(0)
    assert not held_out_judges(y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranked = run_method("propagate", X, y)
        r2 = run_method("propagate", X, y, unexplained="r2")
    fit = ranked.result.extra["graph"]
    assert fit["label_free_unjudged"] and fit["label_free_leads"] and fit["label_free_turns"]
    assert (fit["label_free_beyond"], fit["label_free_behind"]) == (0, 0)
    assert np.isin(ranked.order[:40], markers).sum() == 38
    assert np.isin(r2.order[:40], markers).sum() < 29
    assert any("too few labels can be held out to judge the propagated samples' groups (fewer than 2 labeled classes "
               "hold 2 labels, or those hold fewer than 5): the features the groups explain take turns with the "
               "label-free order, which ranks the rest" in str(w.message) for w in caught)
    sentence = _free_leads_sentence({"fit": {"propagate": fit}})
    assert sentence.startswith("In propagate's ranking of all samples too few labels could be held out to judge the "
                               "groups its labels spread into (fewer than 2 labeled classes held 2 labels")
    assert sentence.endswith("the features those groups explain take turns with the label-free order, which ranks the "
                             "rest (the resamples' lists read the labels' own order)." + FREE_LEADS_ADVICE)


def test_judged_labels_keep_the_held_out_comparison():
    """3 labels per class (every class holds 2 or more): the held-out comparison decides, as before."""
    X, _, cls, markers = _heteroscedastic(0)
    y = np.full(cls.size, -1)
    rng = np.random.default_rng(1000)
    for c in range(4):
        y[rng.choice(np.flatnonzero(cls == c), 3, replace=False)] = c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = run_method("propagate", X, y).result.extra["graph"]
    assert held_out_judges(y) and not fit["label_free_unjudged"]
    assert (fit["label_free_beyond"], fit["label_free_behind"]) == (3, 2) and not fit["label_free_leads"]


def test_explained_features_take_turns_by_hand():
    """Explained features 0, 1 (R^2 0.9, 0.8) in turn with the label-free order 2, 3, 4, 1, 0: places by the better
    of the two ranks, ties to the explained feature: 0 (explained 1st), 2 (label-free 1st), 1, 3, then 4 alone;
    scores t (m - place) / (m + 1) with t = 0.8, the smallest explained R^2. A copy shares its feature's place (and
    counts in the places after it); NaN
    stays NaN; nothing explained is the label-free order (ties: R^2)."""
    def explained_in_turn_scores(r2, free, explained):
        return with_unexplained(r2, free, explained, free_first=True, explained_in_turn=True)

    r2 = np.array([0.9, 0.8, 0.1, 0.05, 0.2])
    explained = np.array([True, True, False, False, False])
    free = np.array([0.0, 0.1, 0.9, 0.5, 0.3])
    got = explained_in_turn_scores(r2, free, explained)
    assert np.allclose(got, 0.8 * np.array([5, 3, 4, 2, 1]) / 6, rtol=0, atol=1e-15)
    copied = explained_in_turn_scores(np.r_[r2, 0.9, np.nan], np.r_[free, 0.0, 0.7], np.r_[explained, True, False])
    assert copied[5] == copied[0] and np.isnan(copied[6])  # the copy takes the explained place 1: feature 1 is 3rd
    assert np.argsort(-copied[:6], kind="stable").tolist() == [0, 5, 2, 3, 1, 4]
    alone = explained_in_turn_scores(r2, np.array([0.0, 0.1, 0.9, 0.9, 0.3]), np.zeros(5, bool))
    assert np.argsort(-alone, kind="stable").tolist() == [2, 3, 4, 1, 0] and alone.max() == 0.9 * 5 / 6


def test_unjudged_groups_of_subclusters_take_turns(other_shapes):
    """``subclusters`` (400 x 2,500, 4 classes of 10 markers, each class two subclusters of 15 genes of their own)
    seed 2 at 1 %: 4 labels (2 and 2 held-out labels can judge nothing). Their groups explain 120 genes, mostly the
    subclusters'; first, they left 20 of the 40 markers in the top 40, in turn with the label-free order 31 (35
    with the labels hidden)."""
    X, _, cls, markers = other_shapes.SHAPES["subclusters"](2)
    y = other_shapes.budget_labels(cls, "1%", 2)
    assert not held_out_judges(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = run_method("propagate", X, y)
    fit = ranked.result.extra["graph"]
    assert fit["label_free_unjudged"] and fit["label_free_leads"]
    assert np.isin(ranked.order[:40], markers).sum() == 31
