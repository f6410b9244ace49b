"""Arrays whose noise has structure the classes do not share (``benchmarks/bench_other_shapes.py``'s
``noise_factors``: co-regulated gene modules, markers of mixed strength, classes of 50/30/20 %; session 34,
docs/labels_that_count.md "Noise factors the classes do not share"). With 10 labels per class ``propagate``
finds the markers as an F test on every label would; with 3 it either finds most of them or its groups
follow a module and it ranks module genes only (a documented loss: the labels' F test finds a few)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ssfs import run_method


def _noise_factors(seed: int, n=200, p=3000, per=15, factors=5, loaded=200):
    """The benchmark's draw: gene means N(7, 2); noise N(0, 1) plus 5 factors (sample scores N(0, 1) times
    loadings N(0, 0.8) on 200 random genes each), every gene's noise times exp(N(0, 0.3)); classes 100 / 60 /
    40 in random order, class c shifting its 15 markers by U(0.5, 2.5) noise sds up or down. Returns X, the
    classes, the markers and the module genes."""
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.repeat(np.arange(3), [100, 60, 40]))
    sd = np.exp(rng.normal(0.0, 0.3, p))
    X = rng.normal(size=(n, p))
    modules = []
    for _ in range(factors):
        genes = rng.choice(p, loaded, replace=False)
        X[:, genes] += np.outer(rng.normal(size=n), rng.normal(0.0, 0.8, loaded))
        modules.append(genes)
    X = X * sd + rng.normal(7.0, 2.0, p)
    markers = rng.choice(p, 3 * per, replace=False)
    for c in range(3):
        genes = markers[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += rng.uniform(0.5, 2.5, per) * sd[genes] * rng.choice([-1.0, 1.0], per)
    return X, cls, markers, np.unique(np.concatenate(modules))


def _labels(cls: np.ndarray, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(1000 + seed)
    y = np.full(cls.size, -1)
    for c in range(3):
        y[rng.choice(np.flatnonzero(cls == c), k, replace=False)] = c
    return y


def _top(X, y, method="propagate", **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_method(method, X, y, **params).order


def test_the_benchmark_draws_these_arrays(other_shapes):
    X, _, cls, markers = other_shapes.SHAPES["noise_factors"](1)
    ours = _noise_factors(1)
    assert np.array_equal(X, ours[0]) and np.array_equal(cls, ours[1]) and np.array_equal(markers, ours[2])
    assert np.array_equal(other_shapes.per_class_labels(cls, 3, 1), _labels(cls, 3, 1))


def test_ten_labels_per_class_find_what_every_label_finds():
    """Seed 0, 10 labels per class: 0.933 of the 45 markers (0.867 with the refined graphs on 300 genes, before
    session 37; an F test on all 200 true classes: 0.911) against the labels' own F test's 0.511 and 0.022 with the
    labels hidden (the label-free scores rank module genes)."""
    X, cls, markers, _ = _noise_factors(0)
    y = _labels(cls, 10, 0)
    ours = np.isin(_top(X, y)[:45], markers).mean()
    fisher = np.isin(_top(X, y, "fisher")[:45], markers).mean()
    hidden = np.isin(_top(X, np.full_like(y, -1))[:45], markers).mean()
    assert ours == pytest.approx(42 / 45) and fisher == pytest.approx(23 / 45) and hidden <= 0.05


@pytest.mark.parametrize("seed, found, fisher_found", [(0, 18, 8), (1, 33, 4)])
def test_three_labels_per_class_either_follow_the_classes_or_a_module(seed, found, fisher_found):
    """3 labels per class: on seed 1 the propagated groups follow the classes (33 of 45 markers against the F
    test's 4); on seed 0 they followed a noise module while the refined graphs were built on 300 genes of the 200
    samples (every one of the top 45 a module gene, 0 markers against the F test's 8: docs, "Noise factors the
    classes do not share"); on 200 genes, one per sample (session 37), 18."""
    from method_settings import former_graphs

    X, cls, markers, modules = _noise_factors(seed)
    y = _labels(cls, 3, seed)
    assert np.isin(_top(X, y)[:45], markers).sum() == found
    assert np.isin(_top(X, y, "fisher")[:45], markers).sum() == fisher_found
    if seed == 0:
        assert np.isin(_top(X, y, **former_graphs(X.shape[1]))[:45], modules).all()
