"""A component every group shares (issue #28, session 41): a component of the counts' residuals whose cells fall in
two sides holding every group of the other components alike, and that the labels do not follow, is read as an
unrecorded batch (``ssfs.methods._shared.crossed``; ``propagate.crossed_batches``)."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs import run_method
from ssfs.methods._shared.crossed import cramers_v, crossed_sides, joint_groups, labels_follow, sides_hold_alike
from ssfs.methods._shared.residuals import CountModel
from ssfs.simulate import get_scenario


def _recall(order, markers) -> float:
    return float(np.isin(np.asarray(order)[:markers.size], markers).mean())


def test_cramers_v_by_hand():
    """V = sqrt(chi2 / (n (min(r, c) - 1))): 1 when one coding determines the other, 0 when independent; the
    table [[3, 1], [1, 3]] has chi2 = 8 (1 - 0)^2 / ... = 2, so V = sqrt(2 / 8) = 0.5."""
    assert cramers_v(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])) == pytest.approx(1.0)
    assert cramers_v(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])) == pytest.approx(0.0)
    a = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    b = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    assert cramers_v(a, b) == pytest.approx(0.5)
    assert cramers_v(a, np.zeros(8, dtype=np.int64)) == 0.0  # one group: nothing to compare


def test_labels_follow_the_sides_only_when_their_classes_do():
    """A chi-square test of the labeled samples' classes against the side (unlabeled samples ignored): classes
    that sit on one side each follow it (6 + 6 labels: chi2 = 12, p = 0.0005); classes on both sides alike do not."""
    side = np.repeat([False, True], 10)
    y = np.full(20, -1)
    y[:6], y[10:16] = 0, 1
    assert labels_follow(y, side)
    y[:3], y[3:6], y[10:13], y[13:16] = 0, 1, 0, 1
    assert not labels_follow(y, side)
    assert not labels_follow(np.where(side, 0, -1), side)  # one labeled class


def test_an_unrecorded_batch_of_counts_is_found_and_its_sides_are_the_batch(other_shapes):
    """``bench_other_shapes.py``'s counts_hidden_batch seed 0 (half of 2,000 cells, every gene x log-normal(0, 0.6),
    not recorded): one component, whose sides are the batch to every cell; the labels of 2 per class do not follow
    it. Labels that are the sides themselves (a condition of every type) keep it."""
    X, _, cls, _ = other_shapes.SHAPES["counts_hidden_batch"](0)
    rng = np.random.default_rng(0)
    rng.integers(0, 6, 2000)
    batch = rng.random(2000) < 0.5  # the generator's own draw
    y = other_shapes.budget_labels(cls, "2/class", 0)
    sides, found = crossed_sides(CountModel.of(X), 50, y)
    assert found == 1 and (np.array_equal(sides, batch) or np.array_equal(sides, ~batch))
    condition = np.where(np.arange(2000) % 50 == 0, batch.astype(np.int64), -1)  # 40 labels: the batch itself
    assert crossed_sides(CountModel.of(X), 50, condition) == (None, 0)


@pytest.mark.parametrize("name", ["counts", "rare", "unlabeled_type", "splatter"])
def test_types_components_are_never_read_as_batches(name):
    """The type components of ``ssfs.simulate``'s count scenarios (quick, seed 0, 3 labels per class) split in two
    sides less clearly or hold the other components' groups unevenly: nothing is found."""
    scenario = get_scenario(name)
    sim = scenario.simulate(0, True)
    y = scenario.labels(sim, "3/class", 0)
    assert crossed_sides(CountModel.of(sim.expression()), 50, y) == (None, 0)


@pytest.mark.parametrize("shape, budget, before", [("counts_hidden_batch", "2/class", 0.356),
                                                    ("counts_hidden_batch", "1%", 0.433),
                                                    ("counts_program", "1%", 0.622)])
def test_the_markers_are_found_within_the_sides(other_shapes, shape, budget, before):
    """``propagate`` with its defaults reads the sides as batches and finds all 90 markers (seurat_v3: 0.58-0.64 of
    them); ``unwanted="kept"`` gives the fit before (seed 0 at 2 per class, seed 2 at 1 %; 0.278, 0.311 and 0.533 before
    session 43 took the R^2 of the residuals), and reports 0."""
    seed = 0 if budget == "2/class" else 2
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    y = other_shapes.budget_labels(cls, budget, seed)
    with pytest.warns(UserWarning, match="read the sides as batches"):
        r = run_method("propagate", X, y)
    assert _recall(r.order, markers) == 1.0 and r.result.extra["graph"]["shared_components"] == 1
    kept = run_method("propagate", X, y, unwanted="kept")
    assert _recall(kept.order, markers) == pytest.approx(before, abs=1e-3)
    assert kept.result.extra["graph"]["shared_components"] == 0


def test_a_given_batch_is_the_batch_and_no_labels_read_the_sides_too(other_shapes):
    """With the batch given nothing is inferred (it is the batch). Without labels the sides are read as batches too
    (session 42; no label can veto them, the warning says it): the label-free scores find 0.978 of the markers,
    0.300 with ``unwanted="kept"`` (seurat_v3 0.58-0.64)."""
    X, _, cls, markers = other_shapes.SHAPES["counts_hidden_batch"](0)
    rng = np.random.default_rng(0)
    rng.integers(0, 6, 2000)
    batch = (rng.random(2000) < 0.5).astype(int)
    y = other_shapes.budget_labels(cls, "2/class", 0)
    given = run_method("propagate", X, y, batch=batch)
    assert given.result.extra["graph"]["shared_components"] == 0 and _recall(given.order, markers) == 1.0
    with pytest.warns(UserWarning, match="read the sides as batches"):
        free = run_method("propagate", X, np.full(cls.size, -1))
    assert free.result.extra["graph"]["shared_components"] == 1
    assert _recall(free.order, markers) == pytest.approx(0.978, abs=1e-3)
    kept = run_method("propagate", X, np.full(cls.size, -1), unwanted="kept")
    assert _recall(kept.order, markers) == pytest.approx(0.300, abs=1e-3)


def test_through_anndata_and_scikit_learn(other_shapes):
    """The same draw through ``ssfs.tl.rank_features`` (blank labels) and ``SemiSupervisedSelector``: the fit
    report holds the component, and the 90 markers come first."""
    import anndata as ad
    import pandas as pd

    import ssfs.tl
    from ssfs.selector import SemiSupervisedSelector

    X, _, cls, markers = other_shapes.SHAPES["counts_hidden_batch"](0)
    y = other_shapes.budget_labels(cls, "2/class", 0)
    adata = ad.AnnData(X, obs=pd.DataFrame({"kind": pd.Categorical(np.where(y >= 0, y.astype(str), None))}))
    with pytest.warns(UserWarning, match="read the sides as batches"):
        ssfs.tl.rank_features(adata, groupby="kind")
    assert adata.uns["propagate"]["fit"]["shared_components"] == 1
    top = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")[:markers.size]
    assert np.isin(top, markers).all()
    with pytest.warns(UserWarning, match="read the sides as batches"):
        selector = SemiSupervisedSelector("propagate", n_features=90).fit(X, y)
    assert selector.result_.extra["graph"]["shared_components"] == 1
    assert np.isin(np.flatnonzero(selector.get_support()), markers).all()


def test_labels_follow_groups_of_three_with_their_degrees_of_freedom():
    """Three groups: chi-square with (classes - 1)(groups - 1) degrees of freedom (p = exp(-chi2 / 2) on 2). Two
    classes of 10 labels in groups 0 / 1 / 2 as 6 / 2 / 2 and 2 / 4 / 4: chi2 = 2 (1 + 1/3 + 1/3) = 3.33, p = 0.19,
    V = sqrt(3.33 / 20) = 0.41: not followed; 6 labels each, class 0 in group 0, class 1 in groups 1 and 2:
    chi2 = 12, p = exp(-6) = 0.0025: followed."""
    group = np.repeat([0, 1, 2], 10)
    y = np.full(30, -1)
    y[:6], y[10:12], y[20:22] = 0, 0, 0
    y[6:8], y[12:16], y[22:26] = 1, 1, 1
    assert not labels_follow(y, group)
    y[:] = -1
    y[:6], y[10:13], y[20:23] = 0, 1, 1
    assert labels_follow(y, group)


def test_few_labels_follow_sides_of_their_own():
    """2 classes of 3 labels, each class on a side of its own: chi2 = 6 on 1 degree of freedom, p = 0.014, not below
    0.01, but Cramér's V = 1 >= 0.8: followed (the sides are the classes, not a batch). A label of each class more,
    on the other's side (3 / 1 and 1 / 2): chi2 = 1.22, p = 0.27, V = sqrt(1.22 / 7) = 0.42: not followed."""
    side = np.repeat([0, 1], 10)
    y = np.full(20, -1)
    y[:3], y[10:13] = 0, 1
    assert labels_follow(y, side)
    y[12] = 0
    y[3] = 1
    assert not labels_follow(y, side)


def test_two_types_alone_are_not_a_batch():
    """Two strongly separate types and nothing else (``ssfs.simulate`` counts, 2 types x 50 markers 5-10-fold,
    seeds 0-1): their component splits in two clear sides, and the only other component (a weak one) holds them
    alike, but one other component is too little to say the sides are crossed with anything: nothing is read, with
    3 labels per type or none, and every marker comes first (before: 0.23-0.29 and 0.54-0.62)."""
    from ssfs.simulate import make_labels, simulate_counts

    for seed in (0, 1):
        sim = simulate_counts(2000, 1000, 2, 50, rng=seed, fold_change=(5, 10), mean_expression=0.5)
        X = sim.expression()
        for y in (make_labels(sim.classes, "3/class", seed), np.full(sim.classes.size, -1)):
            assert crossed_sides(CountModel.of(X), 50, y) == (None, 0)
            assert sim.recall(run_method("propagate", X, y).order) == 1.0


def test_components_read_together_by_hand():
    """Three tight groups on the first two components (a triangle: neither axis alone splits in two sides holding
    the rest alike), crossed with two groups on each of two more: the first two are read together, their centres the
    triangle's corners; the same triangle with a corner on the third component's groups is not crossed. With one
    component besides the triangle there is too little to be crossed with (``CROSSED_REST`` = 2)."""
    rng = np.random.default_rng(0)
    corner = np.repeat([0, 1, 2], 200)
    others = np.column_stack([np.tile([0, 1], 300), rng.permutation(np.tile([0, 1], 300))])
    corners = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.5]])
    Z = np.column_stack([corners[corner] + rng.normal(0, 0.3, (600, 2)), 4.0 * others + rng.normal(0, 0.3, (600, 2))])
    sides = np.greater(Z, np.median(Z, axis=0))
    sides[:, :2] = Z[:, :2] > np.array([1.0, 1.75])  # each axis split between two corners
    (columns, centres), = joint_groups(Z, 4, sides, [])
    assert columns == (0, 1) and centres.shape == (3, 2)
    assert np.abs(np.sort(centres, axis=0) - np.sort(corners, axis=0)).max() < 0.1
    assert joint_groups(Z[:, :3], 3, sides[:, :3], []) == []  # one other component
    Z[:, 2] = 4.0 * (corner == 0) + rng.normal(0, 0.3, 600)  # the third component follows a corner
    assert joint_groups(Z, 4, sides, []) == []  # the same blocks (sides as before): V = 1 with the third's groups
    assert joint_groups(Z, 4, sides, [1]) == []  # a component taken alone is not read again


@pytest.mark.parametrize("batches", [3, 4])
def test_three_or_four_unrecorded_batches_are_read_together(batches):
    """``ssfs.simulate``'s counts in 3 or 4 batches not recorded (5 types x 20 markers, 2,000 cells, seed 0): the
    batches span ``batches - 1`` components read together, their groups are the batches; ``propagate`` at 2 labels
    per type finds all 100 markers, 0.19-0.47 before (``unwanted="kept"``)."""
    from ssfs.simulate import make_labels, simulate_counts

    sim = simulate_counts(2000, 1000, 5, 20, rng=0, fold_change=(2, 6), n_batches=batches, batch_sd=0.6,
                          mean_expression=0.5)
    X = sim.expression()
    y = make_labels(sim.classes, "2/class", 0)
    codes, found = crossed_sides(CountModel.of(X), 50, y)
    assert found == batches - 1 and cramers_v(codes, sim.batch) == pytest.approx(1.0)
    with pytest.warns(UserWarning, match="read the sides as batches"):
        r = run_method("propagate", X, y)
    assert sim.recall(r.order) == 1.0 and r.result.extra["graph"]["shared_components"] == batches - 1
    assert sim.recall(run_method("propagate", X, y, unwanted="kept").order) < 0.5
    many = run_method("propagate", X, y, refine_samples=500)  # as for many cells: found on 500, every cell grouped
    assert sim.recall(many.order) == 1.0 and many.result.extra["graph"]["shared_components"] == batches - 1


def _coded(counts_per_group):
    """(code, groups) with ``counts_per_group[g][c]`` samples of group g in side (level) c."""
    code, groups = [], []
    for g, counts in enumerate(counts_per_group):
        for c, n in enumerate(counts):
            code += [c] * n
            groups += [g] * n
    return np.array(code), np.array(groups)


def test_crossed_by_hand():
    """Sides hold the other components' groups alike when Cramér's V <= 0.1, or V <= 0.3 with at least 0.3 of the
    samples outside their group's commonest side. Groups of 100 split 60/40 and 40/60: phi = (0.3^2 - 0.2^2) / 0.5^2
    = 0.2, 0.4 outside: crossed (a batch whose types' shares differ). 80/20 and 92/8: V = 1200 / sqrt(100^2 172 28)
    = 0.173 but 0.14 outside: not (a small side the groups hold unevenly). 52/48 and 48/52: V 0.04; 70/30 and
    30/70: V 0.4."""
    assert sides_hold_alike(*_coded([[60, 40], [40, 60]]))
    assert cramers_v(*_coded([[80, 20], [92, 8]])) == pytest.approx(1200 / np.sqrt(100 * 100 * 172 * 28))
    assert not sides_hold_alike(*_coded([[80, 20], [92, 8]]))
    assert sides_hold_alike(*_coded([[52, 48], [48, 52]]))
    assert not sides_hold_alike(*_coded([[70, 30], [30, 70]]))


@pytest.mark.parametrize("batches, seed", [(2, 2), (3, 2)])
def test_batches_whose_types_shares_differ_are_still_found(batches, seed):
    """Donors rarely hold the same mix of types: ``ssfs.simulate`` counts (3,000 cells, 5 types) of which each batch
    keeps a random 10-100 % of each type's cells (Cramér's V of batch and type 0.29 and 0.21 here). The batches are
    still read (their sides' V with the other components' groups is above 0.1, but half the cells are mixed), and the
    markers found are those found with the batch given (2 labels per type); with ``unwanted="kept"`` 0.55 and 0.11
    (0.44 and 0.11 before session 43's residual R^2)."""
    from ssfs.simulate import make_labels, simulate_counts

    sim = simulate_counts(3000, 1000, 5, 20, rng=seed, fold_change=(2, 6), n_batches=batches, batch_sd=0.6,
                          mean_expression=0.5)
    rng = np.random.default_rng(seed)
    share_kept = np.clip(1 - 0.9 * rng.random((batches, 5)), 0.05, 1)  # batch x type
    keep = rng.random(sim.classes.size) < share_kept[sim.batch, sim.classes]
    X, cls, batch = sim.expression()[keep], sim.classes[keep], sim.batch[keep]
    y = make_labels(cls, "2/class", seed)
    with pytest.warns(UserWarning, match="read the sides as batches"):
        r = run_method("propagate", X, y)
    assert r.result.extra["graph"]["shared_components"] == batches - 1
    markers = np.asarray(sim.markers)
    assert _recall(r.order, markers) == _recall(run_method("propagate", X, y, batch=batch).order, markers) == 1.0
    assert _recall(run_method("propagate", X, y, unwanted="kept").order, markers) < 0.6
