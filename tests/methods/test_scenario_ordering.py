"""Each scenario kind of issue #28 in small (seconds): ``propagate`` against the anchors CI has
(label spreading + F, scanpy's HVG; triku and Hotspot are in the optional ``anchors`` extra and
the benchmark, docs/labels_that_count.md). Planted markers in the top m (m = their number)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ssfs import run_method
from ssfs.simulate import get_scenario

#: small versions of the scenarios (the benchmark's knobs, fewer cells and genes)
SMALL = {"counts": dict(n_cells=600, n_genes=300), "microarray": dict(n_samples=150, n_genes=1500)}


def _data(name, seed):
    sc = get_scenario(name)
    knobs = {**sc.knobs_for(seed, quick=True), **SMALL["microarray" if "microarray" in name else "counts"]}
    from ssfs.seeding import derive_rng

    sim = sc.generator(rng=derive_rng(seed, "data"), **knobs)
    return sc, sim, sim.expression()


def _label_spreading_f(X, y):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_selection import f_classif
    from sklearn.semi_supervised import LabelSpreading

    Z = TruncatedSVD(30, random_state=0).fit_transform(X)
    F, _ = f_classif(X, LabelSpreading(kernel="knn").fit(Z, y).transduction_)
    return np.argsort(-np.nan_to_num(F, nan=-np.inf), kind="stable")


def _hvg(X):
    try:
        return run_method("scanpy_hvg", X, None).order
    except Exception:  # noqa: BLE001 - scanpy's HVG refuses data that are not log counts
        return None


def _recalls(name, seed, budget):
    sc, sim, X = _data(name, seed)
    y = sc.labels(sim, budget, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = sim.recall(run_method("propagate", X, y).order)
        lsf = sim.recall(_label_spreading_f(X, y))
        hvg = _hvg(X)
    return ours, lsf, None if hvg is None else sim.recall(hvg)


@pytest.mark.parametrize("name, budget", [("counts", "3/class"), ("counts_nuisance", "3/class"),
                                          ("unlabeled_type", "3/class"), ("wrong_labels", "1%"),
                                          ("imbalanced", "1%")])
def test_propagate_leads_the_anchors_on_counts(name, budget):
    ours, lsf, hvg = _recalls(name, 0, budget)
    assert ours >= lsf - 0.01 and ours >= hvg + 0.1, (ours, lsf, hvg)
    assert ours >= 0.9


@pytest.mark.parametrize("name", ["splatter", "splatter_unlabeled"])
def test_propagate_leads_on_the_second_count_model(name):
    """The Splatter-like model (weak markers, 30 % down; 600 cells x 300 genes, 3 labels per type):
    measured 0.90 / 0.88 against label spreading + F 0.78 / 0.76 and HVG 0.68."""
    ours, lsf, hvg = _recalls(name, 0, "3/class")
    assert ours >= lsf + 0.1 and ours >= hvg + 0.15 and ours >= 0.85, (ours, lsf, hvg)


def test_propagate_leads_on_fourteen_weak_types_of_falling_sizes():
    """``splatter_many`` (14 types x 10 weak markers, 16 % down to 2 % of the cells; 600 cells x 300
    genes, 3 labels per type): measured 0.73 against label spreading + F 0.61 and HVG 0.69 (0.30 on
    the log values' graphs before session 19's residuals, at 2,000 cells)."""
    ours, lsf, hvg = _recalls("splatter_many", 0, "3/class")
    assert ours >= lsf + 0.08 and ours >= hvg + 0.02 and ours >= 0.7, (ours, lsf, hvg)


@pytest.mark.parametrize("name", ["microarray", "microarray_unlabeled"])
def test_propagate_leads_on_microarrays_with_three_labels_per_class(name):
    ours, lsf, _ = _recalls(name, 0, "3/class")
    assert ours >= lsf + 0.2 and ours >= 0.8, (ours, lsf)


@pytest.mark.parametrize("name, seed", [("unlabeled_type", 2), ("microarray_unlabeled", 2)])
def test_a_type_nobody_labeled_keeps_its_markers_when_every_other_sample_is_labeled(name, seed):
    """Labels added (``Scenario.labels_added``) from 3 per class to every sample of the types shown:
    the hidden type's cells still form a group of their own, and it counts. Before, the floor of reach
    was the lowest of hundreds of held-out labels (an outlier's), a labeled outlier in the low mode
    vetoed the group, and the group weighed what the labels' share left: 0.98 -> 0.90 and 0.933 -> 0.911."""
    sc, sim, X = _data(name, seed)
    few, every = sc.labels_added(sim, ["3/class", "100%"], seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recall = [sim.recall(run_method("propagate", X, y).order) for y in (few, every)]
    assert recall[1] >= recall[0] >= 0.93, recall


@pytest.mark.parametrize("budget, ours_at_least", [("3/class", 0.86), ("10/class", 0.85)])
def test_wrong_labels_on_a_microarray(budget, ours_at_least):
    """A p >> n microarray (``microarray``, small) with 20 % of the labels flipped to another class: propagate
    0.867 (3 per class) and 0.856 (10 per class) of the markers, the labels' F test 0.189 and 0.467, label
    spreading + F 0.267 and 0.578 (the count model's wrong-label scenario is ``wrong_labels`` above)."""
    sc, sim, X = _data("microarray", 0)
    y = np.asarray(sc.labels(sim, budget, 0)).copy()
    rng = np.random.default_rng(0)
    lab = np.flatnonzero(y >= 0)
    flip = rng.choice(lab, int(round(0.2 * lab.size)), replace=False)
    y[flip] = (y[flip] + rng.integers(1, 4, flip.size)) % 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = sim.recall(run_method("propagate", X, y).order)
        fisher = sim.recall(run_method("fisher", X, y).order)
    lsf = sim.recall(_label_spreading_f(X, y))
    assert ours >= ours_at_least and ours >= max(fisher, lsf) + 0.25, (ours, fisher, lsf)


def test_rare_type_a_documented_loss():
    """The rare type (2 % of the cells): its markers explain little variance and the signal
    components miss it; propagate stays within 0.06 of label spreading + F (docs, "losses")."""
    ours, lsf, hvg = _recalls("rare", 0, "3/class")
    assert ours >= lsf - 0.06 and ours >= hvg, (ours, lsf, hvg)


@pytest.mark.parametrize("seed", [0, 1])
def test_gene_module_arrays_at_ten_labels_per_class(seed):
    """Arrays whose strongest structure is co-expressed gene modules: on standardised genes, where the
    propagated samples' groups follow the modules the labels' own features lead and propagate ranks as
    their F test (seed 0, 0.850 both), where they follow the classes it finds more (seed 1, 0.950 against
    0.725; session 28, "The labels' own features as the propagated samples' yardstick"). By default the
    graph on the genes in their own units predicts more held-out labels and is kept (session 29): 0.900
    and 0.975; on seed 0 that graph on samples scaled alike predicts 2 more and is kept (session 30):
    0.875. Label spreading + F 0.25-0.35."""
    sc, sim, X = _data("microarray_modules", seed)
    y = sc.labels(sim, "10/class", seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        standardized = run_method("propagate", X, y, gene_scale="standardized")
        ranked = run_method("propagate", X, y)
    fisher = sim.recall(run_method("fisher", X, y).order)
    assert standardized.result.extra["graph"]["labels_lead"] == (seed == 0)
    assert sim.recall(standardized.order) == pytest.approx([0.85, 0.95][seed]) and fisher <= [0.85, 0.725][seed]
    assert ranked.result.extra["graph"]["gene_scale"] == "as_is"
    ours = sim.recall(ranked.order)
    assert ranked.result.extra["graph"]["sample_scale"] == ["equal", "as_is"][seed]
    assert ours == pytest.approx([0.875, 0.975][seed]) and ours >= sim.recall(_label_spreading_f(X, y)) + 0.5


def test_gene_module_arrays_with_three_labels_per_class_a_documented_loss():
    """With 3 labels per class the labels cannot yet out-predict the module groups' features: propagate
    0.000 against the labels' F test's 0.125 (label spreading + F 0.025); docs "losses"."""
    sc, sim, X = _data("microarray_modules", 0)
    y = sc.labels(sim, "3/class", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = sim.recall(run_method("propagate", X, y).order)
    fisher = sim.recall(run_method("fisher", X, y).order)
    assert sim.recall(_label_spreading_f(X, y)) - 0.05 <= ours <= fisher - 0.1, (ours, fisher)


def test_gene_module_arrays_at_five_labels_per_class_labels_not_halved_by_a_graph_at_chance():
    """Seed 7 at 5 labels per class: the start graph (the modules') predicts the held-out labels at chance (5 of 20,
    chance 1/4). Before session 59 it still halved the 15 labels it contradicted, and on those reweighed samples
    the labels led and found 0.325 of the markers (= their F test); with every label whole the held-out labels
    reject the modules' 15 components and the fit without them finds all 40 (docs/labels_that_count.md, "A graph
    at chance does not judge the labels")."""
    sc, sim, X = _data("microarray_modules", 7)
    y = sc.labels(sim, "5/class", 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_method("propagate", X, y)
    assert r.result.extra["graph"]["unwanted_components"] == 15
    assert sim.recall(r.order) == 1.0 and sim.recall(run_method("fisher", X, y).order) == pytest.approx(0.325)


def test_propagate_without_labels_leads_the_label_free_anchors_on_a_microarray():
    """No labels: the label-free scores (variance x sqrt(share in the signal span)) against variance and
    the Laplacian score; the former score (the standardised span) followed the modules and nuisance factors."""
    _, sim, X = _data("microarray", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = sim.recall(run_method("propagate", X, None).order)
        former = sim.recall(run_method("propagate", X, None, label_free="span").order)
    variance, laplacian = (sim.recall(run_method(m, X, None).order) for m in ("variance", "laplacian"))
    assert ours >= max(variance, laplacian) and ours >= former + 0.1, (ours, variance, laplacian, former)


def test_the_start_graph_vouches_for_the_labels_when_the_refined_graph_cannot():
    """imbalanced at 1 %: 6 labels (3 / 2 / 1) on 600 cells. The graph refined on the groups' genes
    holds the labels' groups together no better than randomly placed labels' (the held-out check, 5
    labels, cannot decide either), so judged on it alone the propagated cells count 0 and the 6
    labels rank alone; the start graph of all genes does see the classes (``graphs_excess``). Graphs
    on the log values (``space="values"``): on the Pearson residuals' graphs (the default) the
    refined graph vouches for the labels itself."""
    sc, sim, X = _data("imbalanced", 0)
    y = sc.labels(sim, "1%", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = run_method("propagate", X, y, weighting="kept_evidence", unexplained="r2", space="values")
        kept_interleaved = run_method("propagate", X, y, weighting="kept_evidence", space="values")
        either = run_method("propagate", X, y, space="values")
        residuals = run_method("propagate", X, y, weighting="kept_evidence", unexplained="r2")
    assert kept.result.extra["graph"]["propagated_weight"] == 0.0 and sim.recall(kept.order) < 0.7
    # the label-free order of the features the 6 labels do not explain brings some back (0.75)
    assert sim.recall(kept.order) < sim.recall(kept_interleaved.order) < 0.9
    assert either.result.extra["graph"]["propagated_weight"] > 0.5 and sim.recall(either.order) >= 0.9
    assert residuals.result.extra["graph"]["propagated_weight"] > 0.5 and sim.recall(residuals.order) >= 0.9


def test_one_label_per_class_on_a_nuisance_graph_falls_back_to_the_label_free_scores():
    """microarray_unlabeled (200 x 2,000) at 1 %: one label in each of 2 classes. The graph refined on
    the genes that separate the labels' groups holds those groups together (0.86) better than the
    mean of randomly placed labels' groups in the graph it holds them in (0.79), but each random
    placement rebuilt its own graph the same way and one held its groups as well (0.88): not
    significant (the 95 % prediction bound of the 8 draws), so the propagated samples count 0 and
    the label-free scores rank, as without labels; judged in the kept graph alone they counted
    0.82 and found 0.02 of the markers (0.14 since session 49, their explained features in turn with the label-free
    order where no held-out label judges them), fewer than the label-free scores."""
    sc = get_scenario("microarray_unlabeled")
    from ssfs.seeding import derive_rng

    sim = sc.generator(rng=derive_rng(2, "data"), **sc.knobs_for(2, quick=True))
    X, y = sim.expression(), sc.labels(sim, "1%", 2)
    assert np.bincount(y[y >= 0]).max() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = run_method("propagate", X, y)
        kept = run_method("propagate", X, y, weighting="kept_evidence")
        free = run_method("propagate", X, None)
    assert ours.result.extra["graph"]["chosen"] == "label-free"
    assert np.array_equal(ours.order, free.order) and sim.recall(ours.order) >= 0.2
    assert kept.result.extra["graph"]["propagated_weight"] > 0.5 and sim.recall(kept.order) < 0.15
    assert sim.recall(kept.order) < sim.recall(ours.order)
