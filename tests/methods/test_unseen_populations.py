"""A population the labels' groups miss (a type nobody labeled, too rare for the labels' graph), through
the doors an analyst uses: ``run_method``, ``ssfs.tl.rank_features`` (AnnData) and ``ssfs rank`` (CLI).
``ssfs.simulate``'s rare type: 40 of 2,000 cells, 20 markers, no label on it at 1 % (seed 0)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import ssfs
from ssfs import run_method
from ssfs.simulate import get_scenario


@pytest.fixture(scope="module")
def rare():
    scen = get_scenario("rare")
    sim = scen.simulate(0, True)
    y = scen.labels(sim, "1%", seed=0)
    assert not np.any(y == sim.n_classes - 1)
    return sim, y


def test_run_method_marks_the_population_and_warns(rare):
    sim, y = rare
    with pytest.warns(UserWarning, match=r"separate a population of 40 samples that no labeled class's group matches"):
        ranked = run_method("propagate", sim.X, y, rng=0)
    unseen, cells = ranked.result.extra["unseen"], ranked.result.extra["unseen_cells"]
    np.testing.assert_array_equal(np.flatnonzero(cells == 0), np.flatnonzero(sim.classes == sim.n_classes - 1))
    assert cells.max() == 0  # one population: the rare type's 40 cells, every other cell -1
    hidden = sim.markers_of(sim.n_classes - 1)
    assert np.isin(hidden, np.flatnonzero(unseen)).sum() >= 15 and unseen.sum() <= 25
    assert np.isin(hidden, ranked.order[: sim.markers.size]).sum() >= 16  # 17 measured; 14 in session 26


def test_labels_on_the_rare_type_leave_nothing_unseen(rare):
    """3 labels per class, the rare type's too: its cells have a group of their own, nothing is unseen."""
    sim, _ = rare
    y = get_scenario("rare").labels(sim, "3/class", seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranked = run_method("propagate", sim.X, y, rng=0)
    assert ranked.result.extra["unseen_sizes"] == [] and not ranked.result.extra["unseen"].any()
    assert (ranked.result.extra["unseen_cells"] == -1).all()
    assert not any("separate a population" in str(w.message) for w in caught)


def test_anndata_door_writes_the_unseen_column(rare):
    ad = pytest.importorskip("anndata")
    sim, y = rare
    a = ad.AnnData(X=sim.X.copy())
    a.obs["type"] = pd.Categorical(np.where(y >= 0, y.astype(str), None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ssfs.tl.rank_features(a, "propagate", groupby="type")
    unseen = a.var["propagate_unseen"].to_numpy()
    assert unseen.dtype == bool and np.isin(sim.markers_of(sim.n_classes - 1), np.flatnonzero(unseen)).sum() >= 15
    labeled_markers = np.setdiff1d(sim.markers, sim.markers_of(sim.n_classes - 1))
    assert a.var["propagate_explained"].to_numpy()[labeled_markers].all()  # the labeled types' markers: explained
    population = a.obs["propagate_population"]
    assert list(population.cat.categories) == ["population 1"]
    np.testing.assert_array_equal(population.notna().to_numpy(), sim.classes == sim.n_classes - 1)


def test_cli_says_it_in_one_line(rare, tmp_path, capsys):
    from ssfs.cli import main

    sim, y = rare
    d = pd.DataFrame(sim.X.toarray(), columns=[f"g{j}" for j in range(sim.X.shape[1])])
    d.insert(0, "type", np.where(y >= 0, y.astype(str), ""))
    d.to_csv(tmp_path / "cells.csv", index=False)
    assert main(["rank", str(tmp_path / "cells.csv"), "--label-column", "type", "--index-column", "none",
                 "--method", "propagate", "-o", str(tmp_path / "r.tsv")]) == 0
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if "separate a population" in line]
    assert len(err) == 1 and err[0].startswith("ssfs: warning: propagate: the data separate a population of 40")
    info = json.loads(captured.out.strip().splitlines()[-1])
    assert info["populations"]["samples"] == {"population 1": 40}
    shown = [int(name[1:]) for name in info["populations"]["features"]]
    assert len(shown) == 10 and np.isin(shown, sim.markers_of(sim.n_classes - 1)).all()


def test_beyond_refine_samples_the_populations_are_those_of_the_subsample(rare, monkeypatch):
    """Beyond ``refine_samples`` cells the label-free groups are cut on the refinement's subsample: the
    population is found there, its size counted in those cells, and its features are the rare type's
    markers."""
    from ssfs.methods.propagate import label_free

    sim, y = rare
    monkeypatch.setattr(label_free, "REFINE_SAMPLES", 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = run_method("propagate", sim.X, y, rng=0, refine_samples=1000)
    sizes, unseen = ranked.result.extra["unseen_sizes"], ranked.result.extra["unseen"]
    assert len(sizes) == 1 and 10 <= sizes[0] <= 30, sizes  # 21 of the rare type's 40 cells
    assert np.isin(sim.markers_of(sim.n_classes - 1), np.flatnonzero(unseen)).sum() >= 12


def test_a_group_of_its_own_leaves_nothing_unseen(rare):
    """Without refinement (``refine=0``) the start graph's labels give the rare type's cells a group of
    their own ("unlabeled 1", 39 of its 40 cells): that group matches the k-means population, nothing
    is unseen, and the type's markers are the labels' explained ones (0.975 of all markers)."""
    sim, y = rare
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = run_method("propagate", sim.X, y, rng=0, refine=0)
    extra = ranked.result.extra
    assert extra["group_names"][-1] == "unlabeled 1" and extra["unseen_sizes"] == []
    assert np.isin(sim.markers_of(sim.n_classes - 1), np.flatnonzero(extra["explained"])).sum() >= 17
    assert sim.recall(ranked.order) >= 0.95


def test_cli_h5ad_output_keeps_the_population(rare, tmp_path):
    ad = pytest.importorskip("anndata")
    from ssfs.cli import main

    sim, y = rare
    a = ad.AnnData(X=sim.X.copy())
    a.obs["type"] = pd.Categorical(np.where(y >= 0, y.astype(str), None))
    a.write_h5ad(tmp_path / "cells.h5ad")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["rank", str(tmp_path / "cells.h5ad"), "--label-key", "type", "--method", "propagate",
                     "-o", str(tmp_path / "r.h5ad")]) == 0
    b = ad.read_h5ad(tmp_path / "r.h5ad")
    np.testing.assert_array_equal(b.obs["propagate_population"].notna().to_numpy(), sim.classes == sim.n_classes - 1)
    assert int(b.uns["propagate"]["populations"]["samples"]["population 1"]) == 40


def test_the_analysts_answer_names_the_population(rare):
    """``ssfs.tl.select_stable`` (what ``ssfs select`` and the workflow's selection give): the summary lists
    the population (its samples, its best features by name) and the verdict says it in a sentence."""
    ad = pytest.importorskip("anndata")
    sim, y = rare
    a = ad.AnnData(X=sim.X.copy())
    a.var_names = [f"g{j}" for j in range(sim.X.shape[1])]
    a.obs["type"] = pd.Categorical(np.where(y >= 0, y.astype(str), None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ssfs.tl.select_stable(a, groupby="type", resamples=4, top=20, threshold=0.5)
    info = a.uns["ssfs_selection"]
    found = info["populations"]["propagate"]
    assert dict(found["samples"]) == {"population 1": 40}
    shown = [int(name[1:]) for name in found["features"]]
    assert len(shown) == 10 and np.isin(shown, sim.markers_of(sim.n_classes - 1)).all()
    assert "propagate found a population of 40 samples that no labeled class's group matches" in info["verdict"]


def test_the_workflow_carries_the_population_from_the_ranking_job_to_the_consensus():
    """The selection job that ranks all samples writes the populations into its rank file; the consensus
    step reads them back as :func:`ssfs.experiment.stable_selection.populations_of` gave them."""
    from ssfs.workflow.pipeline import _populations

    assert _populations({"ranks": np.zeros((2, 3))}) is None
    found = _populations({"population_samples": np.array([40, 12]), "population_features": np.array([7, 3, 9])})
    assert found == {"samples": [40, 12], "features": [7, 3, 9]}
