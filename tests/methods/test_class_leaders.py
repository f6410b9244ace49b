"""``propagate``'s order takes every group's leader in turn (session 38, ``per_class="auto"``): each group's best
up-marker (Welch's t, passing :data:`LEADER_FDR`) takes a turn with the R^2 order where the labels' groups lead it
(:func:`class_turns`, :func:`turning_markers`, :func:`with_class_turns` at depth 1); docs/labels_that_count.md,
"Every group's leader"."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ssfs.methods.propagate import (
    PER_FEATURE,
    class_turns,
    fit_propagation,
    ordering,
    turning_markers,
    with_class_turns,
)


def _order(scores) -> list[int]:
    return np.argsort(-scores, kind="stable").tolist()


def test_leaders_by_hand():
    """Six features ranked f0 > f1 > ... > f5; group A's t ranks f4 then f5, group B's f2 then f5. A feature's place
    is the better of its place in the order and among the leaders (f2, then f4: ordered as the order ranks them);
    ties by the order: f0 f2 f1 f4 f3 f5. Every group's markers in turn ("interleave") also move f5, B's and A's
    second, before f3."""
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    class_t = np.array([[0.0, 0.0, 0.0, 0.0, 5.0, 4.0],
                        [0.0, 0.0, 6.0, 0.0, 0.0, 5.0]])
    assert _order(with_class_turns(scores, class_t, 1)) == [0, 2, 1, 4, 3, 5]
    assert _order(with_class_turns(scores, class_t)) == [0, 2, 1, 4, 5, 3]
    assert _order(with_class_turns(scores, class_t[:0], 1)) == [0, 1, 2, 3, 4, 5]  # no group passed: the order
    leaders = with_class_turns(scores, class_t, 1)
    assert np.allclose(leaders, (6 - np.array([0, 2, 1, 4, 3, 5])) / 6)  # (m - place) / m: f0..f5's places


@pytest.mark.parametrize(("per_class", "model", "expected"), [
    ("auto", {"free_leads": False, "free_rescaled": False}, "leaders"),   # the R^2 leads
    ("auto", {"free_leads": True, "free_rescaled": False}, "none"),       # the label-free order leads
    ("auto", {"free_leads": False, "free_rescaled": True}, "none"),       # genes rescaled one by one
    ("auto", {"free_leads": False, "free_rescaled": False, "groups": [0, 1, 1, 0]}, "none"),  # two groups
    ("interleave", {"free_leads": True, "free_rescaled": False}, "interleave"),  # as given
    ("none", {"free_leads": False, "free_rescaled": False}, "none"),
])
def test_the_rule(per_class, model, expected):
    model = {"groups": [0, 1, 2, 2], **model}
    assert class_turns(per_class, SimpleNamespace(**model)) == expected


def _planted_classes(seed: int, n: int, markers: list[int], effects: list[float], p: int = 1000):
    """n samples x p genes of N(0, 1) noise in len(markers) equal classes; class c raises its ``markers[c]`` genes by
    ``effects[c]`` sd; 3 labels per class; the columns shuffled. Returns X, labels and every class's markers (their
    columns in X)."""
    rng = np.random.default_rng(seed)
    k = len(markers)
    cls = np.repeat(np.arange(k), n // k)
    X = rng.standard_normal((n, p))
    first = np.r_[0, np.cumsum(markers)]
    for c in range(k):
        X[np.ix_(cls == c, np.arange(first[c], first[c + 1]))] += effects[c]
    y = np.full(n, -1)
    for c in range(k):
        y[rng.choice(np.flatnonzero(cls == c), 3, replace=False)] = c
    perm = rng.permutation(p)
    inverse = np.argsort(perm)
    return X[:, perm], y, [inverse[first[c]:first[c + 1]] for c in range(k)]


def _uneven_classes(seed: int):
    """8 classes of 40 samples, 10 markers each, +3 sd for classes 0-3 and +2 sd for 4-7."""
    return _planted_classes(seed, 320, [10] * 8, [3.0] * 4 + [2.0] * 4)


def _classes_in(scores, markers, top: int) -> tuple[int, int]:
    """(classes with a marker in the top ``top``, markers there)."""
    first = np.argsort(-scores, kind="stable")[:top]
    return int(sum(np.isin(m, first).any() for m in markers)), int(sum(np.isin(m, first).sum() for m in markers))


def test_every_class_gets_a_place_in_the_top():
    """The R^2 ranks the 40 markers of the 4 strong classes first: the top 16 hold 4 classes (16 markers). With every
    group's leader in turn 7-8 classes, all 16 still markers."""
    for seed, classes in ((0, 7), (1, 8), (2, 8), (3, 7)):
        X, y, markers = _uneven_classes(seed)
        before, now = fit_propagation(X, y, per_class="none"), fit_propagation(X, y)
        assert now.class_turns == "leaders" and not now.free_leads
        assert _classes_in(before.scores, markers, 16) == (4, 16)
        assert _classes_in(now.scores, markers, 16) == (classes, 16)


def _one_loud_class(seed: int):
    """10 classes of 30 samples: class 0 with 20 markers at +3 sd, the nine others 3 markers at +1.5 sd (too weak
    for a graph of 3 labels per class to find them)."""
    return _planted_classes(seed, 300, [20] + [3] * 9, [3.0] + [1.5] * 9)


def test_a_leader_of_noise_does_not_take_a_turn(monkeypatch):
    """Where the graph does not find the weak classes their groups' best t is the largest of noise: every leader
    in turn left 11-12 markers in the top 20 (the R^2 alone: 20); those passing :data:`LEADER_FDR` 18-19."""
    for seed, passing, every in ((0, 19, 11), (1, 18, 12)):
        X, y, markers = _one_loud_class(seed)
        assert _classes_in(fit_propagation(X, y, per_class="none").scores, markers, 20)[1] == 20
        assert _classes_in(fit_propagation(X, y).scores, markers, 20)[1] == passing
        with monkeypatch.context() as m:
            m.setattr(ordering, "LEADER_FDR", 1.01)  # every group's leader
            assert _classes_in(fit_propagation(X, y).scores, markers, 20)[1] == every


def test_the_leaders_are_the_fit_s_own_per_group_statistics():
    """The leaders are read from the statistics the fit reports (one computation of every group's Welch t and its
    Benjamini-Hochberg q), on the distinct columns: a copied feature gets its feature's statistics and score to the
    last bit."""
    X, y, by_class = _planted_classes(0, 200, [5] * 4, [1.5] * 4)
    markers = np.concatenate(by_class)
    X = np.c_[X, X[:, markers[:3]]]  # three markers copied at the end
    model = fit_propagation(X, y)
    stats = model.statistics
    assert model.class_turns == "leaders"
    t, depth = turning_markers(stats, "leaders")
    assert depth == 1 and np.array_equal(t, stats.scores[stats.pvals_adj[np.arange(len(t)), t.argmax(axis=1)] < 0.05])
    for field in PER_FEATURE:
        assert np.array_equal(getattr(stats, field)[:, markers[:3]], getattr(stats, field)[:, -3:]), field
    assert np.array_equal(model.scores[markers[:3]], model.scores[-3:])


def test_orl_faces(real_sets, shared_data):
    """ORL (400 faces of 40 people, 1,024 pixels), 3 labels per class, the real-array benchmark's first 3 splits:
    linear SVM accuracy on the top 1, 2, 5, 10 and 20 pixels, summed over the splits (10 splits: 0.305 -> 0.432,
    ``rank_genes_groups`` 0.413)."""
    X, _, truth = real_sets.load_real("ORL", shared_data)
    total = {"auto": 0.0, "none": 0.0}
    for _, train, test, y in real_sets.real_splits(truth, 3, 3):
        for per_class in total:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = fit_propagation(X[train], y, per_class=per_class)
            order = np.argsort(-model.scores, kind="stable")
            total[per_class] += real_sets._svm_accuracy(X[train], truth[train], X[test], truth[test], order)
    assert (round(total["auto"], 3), round(total["none"], 3)) == (1.282, 0.924)


def test_the_doors(tmp_path, capsys):
    """``ssfs rank``'s JSON line and ``ssfs.tl.rank_features``' ``uns[key]["fit"]`` say how the groups' markers
    entered the order (``class_turns``); ``--param per_class=none`` is taken as given; a workflow config with a
    per_class the method does not know is refused in one line before any job."""
    from analyst_data import anndata_fit, rank_fits

    from ssfs.cli import main
    from ssfs.errors import ConfigError
    from ssfs.workflow.config import load_schema, validate_config

    X, y, _ = _uneven_classes(0)
    labels = np.where(y >= 0, np.char.add("type", y.astype(str)), "")
    fits = rank_fits(tmp_path, capsys, X, labels, [[], ["--param", "per_class=none"]])
    assert [f["class_turns"] for f in fits] == ["leaders", "none"]
    assert main(["rank", str(tmp_path / "study.csv"), "--label-column", "label", "--param", "per_class=first",
                 "-o", str(tmp_path / "ranking.tsv")]) != 0
    assert "per_class" in capsys.readouterr().err
    assert anndata_fit(X, labels)["class_turns"] == "leaders"
    config = {"datasets": {"wine": {"source": "builtin", "name": "wine"}},
              "methods": {"propagate": {"per_class": "leaders"}}}
    schema = load_schema(Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml")
    assert validate_config(config, schema)["methods"]["propagate"]["params"] == {"per_class": "leaders"}
    with pytest.raises(ConfigError, match="per_class") as refused:
        validate_config({**config, "methods": {"propagate": {"per_class": "first"}}}, schema)
    assert "\n" not in str(refused.value)
