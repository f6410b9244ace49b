"""Simulated data with a known truth (ssfs.simulate): planted markers really differ, labeling
schemes give the promised counts, everything is reproducible by seed."""

from itertools import pairwise

import numpy as np
import pytest
from scipy import sparse

from ssfs.errors import InputError
from ssfs.simulate import (
    SCENARIOS,
    flip_labels,
    get_scenario,
    labels_fraction,
    labels_per_class,
    make_labels,
    nested_labels,
    parse_budget,
    simulate_counts,
    simulate_microarray,
    simulate_splatter,
)


@pytest.fixture(scope="module")
def counts():
    return simulate_counts(3000, 300, 4, 10, rng=5, fold_change=(2.0, 8.0), shared_markers=6)


def _class_means(X, classes, k):
    X = X.toarray() if sparse.issparse(X) else X
    return X[classes == k].mean(axis=0), X[classes != k].mean(axis=0)


def test_counts_markers_differ_by_their_drawn_fold_change(counts):
    sim = counts
    assert sparse.isspmatrix_csr(sim.X) and sim.X.shape == (3000, 300) and sim.kind == "counts"
    assert np.array_equal(sim.X.data, np.round(sim.X.data))
    assert sim.membership.sum() == 4 * 10 + 2 * 6 and sim.markers.size == 46
    shared = np.flatnonzero(sim.membership.sum(axis=0) == 2)
    assert shared.size == 6
    fold = np.exp(sim.effect[sim.membership])
    assert fold.min() >= 2.0 and fold.max() <= 8.0 and fold.max() / fold.min() > 2  # strong and weak
    assert (sim.effect[~sim.membership] == 0).all()
    for k in range(4):  # each type's own markers: mean count inside / outside near their fold change
        inside, outside = _class_means(sim.X, sim.classes, k)
        own = np.setdiff1d(sim.markers_of(k), shared)
        ratio = inside[own] / outside[own]
        assert np.corrcoef(np.log(ratio), sim.effect[k, own])[0, 1] > 0.8
        assert (ratio > 1.4).all()
    others = np.setdiff1d(np.arange(300), sim.markers)
    inside, outside = _class_means(sim.X, sim.classes, 0)
    ok = outside[others] > 0.5  # genes with enough counts to compare: no difference beyond noise
    assert np.median(np.abs(np.log(inside[others][ok] / outside[others][ok]))) < 0.1


def test_splatter_markers_differ_by_their_signed_factor_and_a_share_is_down():
    """The second count model: a marker's mean count in its type over the rest is exp(effect)
    (depth equal in expectation; bcv small: near-Poisson), up or down; 30 % of the markers down;
    the rest of the genes do not differ; reproducible by seed."""
    sim = simulate_splatter(6000, 400, 3, 20, rng=3, bcv=0.1, de_location=1.0, library_size=20000.0)
    assert sparse.isspmatrix_csr(sim.X) and sim.X.shape == (6000, 400) and sim.kind == "counts"
    assert np.array_equal(sim.X.data, np.round(sim.X.data)) and sim.membership.sum() == 60
    assert (sim.membership.sum(axis=0) <= 1).all() and (sim.effect[~sim.membership] == 0).all()
    down = sim.effect[sim.membership] < 0
    assert 0.15 < down.mean() < 0.45
    for k in range(3):
        inside, outside = _class_means(sim.X, sim.classes, k)
        own = sim.markers_of(k)
        np.testing.assert_allclose(np.log(inside[own] / outside[own]), sim.effect[k, own], atol=0.12)
    others = np.setdiff1d(np.arange(400), sim.markers)
    inside, outside = _class_means(sim.X, sim.classes, 0)
    ok = outside[others] > 1.0
    assert np.median(np.abs(np.log(inside[others][ok] / outside[others][ok]))) < 0.05
    again = simulate_splatter(6000, 400, 3, 20, rng=3, bcv=0.1, de_location=1.0, library_size=20000.0)
    assert (again.X != sim.X).nnz == 0 and np.array_equal(again.effect, sim.effect)
    with pytest.raises(InputError, match="need that many genes"):
        simulate_splatter(100, 10, 3, 5, rng=0)


def test_counts_reproducible_by_seed_and_knobs_change_the_data():
    a = simulate_counts(500, 100, 3, 5, rng=1, programs=3, n_batches=2, dispersion_sd=0.5, dropout=0.05)
    b = simulate_counts(500, 100, 3, 5, rng=1, programs=3, n_batches=2, dispersion_sd=0.5, dropout=0.05)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.batch, b.batch) and np.array_equal(a.effect, b.effect)
    assert (simulate_counts(500, 100, 3, 5, rng=2).X != a.X).nnz > 0
    assert set(np.unique(a.batch)) == {0, 1}
    plain = simulate_counts(500, 100, 3, 5, rng=1)
    drop = simulate_counts(500, 100, 3, 5, rng=1, dropout=0.5)
    assert drop.X.nnz < 0.8 * plain.X.nnz
    assert np.array_equal(drop.membership, plain.membership)  # nuisance leaves the truth alone


def test_programs_make_genes_covary_across_cells():
    sim = simulate_counts(3000, 200, 2, 5, rng=0, programs=1, program_genes=40, program_sd=1.0,
                          mean_expression=2.0, dispersion=0.0)
    X = sim.expression().toarray()
    C = np.corrcoef(X[sim.classes == 0].T)
    off = C[~np.eye(200, dtype=bool)]
    top = np.sort(off)[-40 * 39:]  # the program's pairs are the most correlated ones
    assert top.mean() > 0.15 and np.median(off) < 0.05


def test_rare_type_and_class_proportions():
    sim = simulate_counts(5000, 200, 6, 5, rng=0, proportions=(0.196,) * 5 + (0.02,))
    assert np.bincount(sim.classes).tolist()[-1] == 100 and np.bincount(sim.classes).sum() == 5000
    tiny = simulate_counts(50, 100, 3, 5, rng=0, proportions=(0.98, 0.01, 0.01))
    assert np.bincount(tiny.classes).min() == 1


def test_microarray_markers_shift_by_their_effect_in_sd_units():
    sim = simulate_microarray(3000, 400, 3, 10, rng=2, effect=(1.0, 2.0), down_fraction=0.5, shared_markers=4,
                              nuisance_factors=0, module_fraction=0.0, sd_spread=0.0, sd_median=1.0)
    assert isinstance(sim.X, np.ndarray) and sim.X.shape == (3000, 400) and sim.kind == "microarray"
    assert sim.markers.size == 34 and (sim.membership.sum(axis=0) == 2).sum() == 4
    assert 0.3 < (sim.effect[sim.membership] < 0).mean() < 0.7
    for k in range(3):
        own = np.setdiff1d(sim.markers_of(k), np.flatnonzero(sim.membership.sum(axis=0) == 2))
        inside, outside = _class_means(sim.X, sim.classes, k)
        # outside mixes the other classes, which sit at the gene's mean unless a shared marker moves them
        np.testing.assert_allclose(inside[own] - outside[own], sim.effect[k, own], atol=0.15)
    again = simulate_microarray(3000, 400, 3, 10, rng=2, effect=(1.0, 2.0), down_fraction=0.5, shared_markers=4,
                                nuisance_factors=0, module_fraction=0.0, sd_spread=0.0, sd_median=1.0)
    assert np.array_equal(again.X, sim.X)


def test_microarray_modules_and_nuisance_correlate_genes():
    sim = simulate_microarray(2000, 200, 2, 5, rng=0, module_size=20, module_fraction=0.5, module_corr=0.5,
                              nuisance_factors=0, shared_markers=0)
    C = np.corrcoef(sim.X[sim.classes == 0].T)
    assert (C > 0.4).sum() - 200 >= 5 * 20 * 19 * 0.9  # 5 modules of 20 genes
    noisy = simulate_microarray(2000, 200, 2, 5, rng=0, module_fraction=0.0, nuisance_factors=1,
                                nuisance_genes=30, nuisance_sd=2.0, shared_markers=0)
    v = noisy.X.var(axis=0) / np.median(noisy.X.var(axis=0))
    assert (v > 3).sum() >= 25  # nuisance genes: high variance, not markers


def test_labels_per_class_fraction_and_wrong_give_the_promised_counts():
    classes = np.repeat([0, 1, 2], [50, 30, 2])
    y = labels_per_class(classes, 3, rng=0)
    assert np.bincount(y[y >= 0]).tolist() == [3, 3, 2]  # a class smaller than k: all of it
    assert (y[y >= 0] == classes[y >= 0]).all()
    assert np.bincount(labels_per_class(classes, [5, 1, 0], rng=0) + 1).tolist() == [76, 5, 1]
    y = labels_fraction(classes, 0.1, rng=0)
    assert (y >= 0).sum() == 8 and (y[y >= 0] == classes[y >= 0]).all()
    y = make_labels(np.arange(200) % 4, "5/class", rng=3, wrong=0.2)
    truth = np.arange(200) % 4
    assert (y >= 0).sum() == 20 and (y[y >= 0] != truth[y >= 0]).sum() == 4
    assert (flip_labels(y, 0.0) == y).all()


def test_hidden_classes_and_imbalance():
    classes = np.arange(1000) % 5
    y = make_labels(classes, 3, rng=0, hidden=(4,))
    assert np.bincount(y[y >= 0], minlength=5).tolist() == [3, 3, 3, 3, 0]
    y = make_labels(classes, "1%", rng=0, hidden=(4,))
    assert (y >= 0).sum() == 10 and not (y == 4).any()
    y = make_labels(classes, 10, rng=0, imbalance=10)
    assert np.bincount(y[y >= 0]).tolist() == [10, 6, 3, 2, 1]
    y = make_labels(classes, "5%", rng=0, imbalance=10)
    counts = np.bincount(y[y >= 0])
    assert counts.sum() == 50 and (np.diff(counts) <= 0).all() and counts[0] >= 8 * counts[-1]
    assert (make_labels(classes, 0, rng=0) == -1).all()


def test_nested_labels_add_to_the_labels_given():
    classes = np.repeat([0, 1, 2, 3, 4], [400, 300, 200, 80, 20])
    ys = nested_labels(classes, [0, "3/class", "5/class", "20/class", "100%"], rng=1, hidden=(4,))
    assert [int((y >= 0).sum()) for y in ys] == [0, 12, 20, 80, 980]  # the hidden class never labeled
    assert np.bincount(ys[3][ys[3] >= 0], minlength=5).tolist() == [20, 20, 20, 20, 0]
    for small, large in pairwise(ys):  # every labeled sample keeps its label as labels are added
        assert ((small < 0) | (small == large)).all()
    shares = nested_labels(classes, ["1%", "2%", "5%"], rng=1)
    assert [int((y >= 0).sum()) for y in shares] == [10, 20, 50]
    assert all(((a < 0) | (a == b)).all() for a, b in pairwise(shares))
    wrong = nested_labels(classes, [5, 50, 200], rng=2, wrong=0.3)
    flipped = [(y >= 0) & (y != classes) for y in wrong]
    assert all((a <= b).all() for a, b in pairwise(flipped))  # a wrong label stays wrong
    assert 0.2 < flipped[-1].sum() / (wrong[-1] >= 0).sum() < 0.4
    assert (np.diff(np.bincount(nested_labels(classes, [10], rng=0, imbalance=10)[0] + 1)[1:]) <= 0).all()
    sc = get_scenario("unlabeled_type")
    sim = sc.simulate(0, quick=True)
    a, b = sc.labels_added(sim, ["3/class", "10/class"], 0), sc.labels_added(sim, ["3/class", "10/class"], 0)
    assert all((u == v).all() for u, v in zip(a, b, strict=True)) and not (a[1] == sim.n_classes - 1).any()


def test_parse_budget_and_bad_input():
    assert parse_budget("3/class") == ("per_class", 3) and parse_budget(10) == ("per_class", 10)
    assert parse_budget("1%") == ("fraction", 0.01) and parse_budget(0.05) == ("fraction", 0.05)
    for bad in ("three", 1.5, -0.2):
        with pytest.raises(InputError):
            parse_budget(bad)
    with pytest.raises(InputError, match="n_genes"):
        simulate_counts(100, 10, 3, 5)
    with pytest.raises(InputError, match="one per class"):
        simulate_microarray(100, 100, 3, [5, 5])
    with pytest.raises(InputError, match="proportions"):
        simulate_counts(100, 100, 3, 5, proportions=(0.5, 0.5))
    with pytest.raises(InputError, match="unknown scenario 'nope'; known: counts"):
        get_scenario("nope")


def test_scenarios_are_reproducible_paired_and_varied():
    base, hidden = get_scenario("counts"), get_scenario("unlabeled_type")
    a, b = base.simulate(0, quick=True), hidden.simulate(0, quick=True)
    assert (a.X != b.X).nnz == 0  # same knobs, same seed: the same data, paired comparisons
    y = hidden.labels(b, "3/class", seed=0)
    assert not (y == b.n_classes - 1).any() and (y >= 0).sum() == 3 * (b.n_classes - 1)
    varied = get_scenario("counts_varied")
    assert varied.knobs_for(0) == varied.knobs_for(0) and varied.knobs_for(0) != varied.knobs_for(1)
    assert varied.knobs_for(0, quick=True)["n_cells"] == 2000
    for name, sc in SCENARIOS.items():
        assert sc.about and sc.generator in (simulate_counts, simulate_microarray, simulate_splatter), name
