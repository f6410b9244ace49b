"""An R^2 at chance where nothing rises (issue #28, session 36): where no component of a dense array rises above
noise (the label-free order is every gene's dispersion) and the features the R^2 ranks first predict the held-out
labels no better than chance, with fewer than 10 labels per class, the label-free order leads below the explained
features (``propagate.r2_at_chance``)."""

from __future__ import annotations

import numpy as np
import pytest
from method_settings import former_graphs

from ssfs import run_method
from ssfs.experiment.verdict import FREE_LEADS_ADVICE, _free_leads_sentence
from ssfs.methods.propagate import FEW_LABELS, fit_propagation, gene_dispersion, r2_at_chance
from ssfs.methods.propagate import judges as propagate


def _judged(accuracy: float, chance: float, held: int = 12) -> tuple:
    return accuracy, chance, np.zeros(held, dtype=np.int64), np.zeros(held)


@pytest.mark.parametrize(("accuracy", "chance", "per_class", "at_chance"), [
    (0.2, 0.2, 3, True),                       # right on as many as chance: at chance
    (0.2, 0.20000000000000004, 3, True),       # chance as a sum of squared shares (5 classes of 3)
    (1 / 12, 0.25, 3, True),                   # below chance
    (0.25, 0.2, 3, False),                     # above chance, however little
    (0.2, 0.2, FEW_LABELS, False),             # 10 labels per class: an R^2 at chance can still lead
    (0.2, 0.2, FEW_LABELS - 1, True),
    (float("nan"), float("nan"), 3, False),    # nothing held out
    (1.0, 1.0, 3, False),                      # held-out labels of one class: chance 1 tells nothing
])
def test_at_chance_by_hand(accuracy, chance, per_class, at_chance):
    y = np.repeat(np.arange(5), per_class)
    assert r2_at_chance(_judged(accuracy, chance), np.concatenate([y, np.full(100, -1)])) is at_chance


def test_the_median_class_counts():
    """Fewer than 10 labels per class is the labeled classes' median: one class of 30 labels and four of 3 is few."""
    y = np.concatenate([np.zeros(30, dtype=np.int64), np.repeat(np.arange(1, 5), 3), np.full(50, -1)])
    assert r2_at_chance(_judged(0.1, 0.2), y)
    y = np.concatenate([np.repeat(np.arange(3), 12), np.repeat([3, 4], 3), np.full(50, -1)])
    assert not r2_at_chance(_judged(0.1, 0.2), y)


def _fit(other_shapes, shape: str, labels: str, seed: int):
    """The draw's fit on the graphs the rule was found on (session 36: :func:`former_graphs`)."""
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    return X, markers, fit_propagation(X, other_shapes.budget_labels(cls, labels, seed), **former_graphs(X.shape[1]))


def _found(scores, markers) -> int:
    return int(np.isin(np.argsort(-scores, kind="stable")[:markers.size], markers).sum())


@pytest.mark.parametrize(("shape", "labels", "seed", "held", "found", "r2_found"), [
    ("centred_log_ratios", "3/class", 3, 15, 17, 5),   # 0.050 -> 0.283 of the 60 markers (variance 0.283)
    ("many_classes", "2/class", 3, 16, 29, 4),         # 0.075 -> 0.725 of the 40 (variance 0.725)
])
def test_the_dispersion_leads_where_the_r2_is_at_chance(other_shapes, shape, labels, seed, held, found, r2_found):
    """Two of ``bench_other_shapes.py``'s draws where nothing rises: the R^2's features right on no more held-out
    labels than chance, and its order finds 5 (4) markers where every gene's dispersion finds 17 (29): the fit's order
    is the dispersion's below the (no) explained features, and the labels' own order stays for the resamples. (The
    labels' order found 3 and 3 before session 59, whose labels a graph at chance contradicts keep their weight.)"""
    X, markers, model = _fit(other_shapes, shape, labels, seed)
    accuracy, chance, n_held = model.r2_held_out
    assert model.free_at_chance and model.free_leads and not model.free_unjudged and not model.free_by_places
    assert n_held == held and accuracy <= chance + 1e-12 and model.free_turns == (True, 0, 0, 0, 0)
    assert _found(model.scores, markers) == found == _found(gene_dispersion(X), markers)
    assert _found(model.labels_scores, markers) == r2_found
    graph = model.extra()["graph"]
    assert graph["label_free_at_chance"] and graph["r2_held_out"] == accuracy and graph["r2_chance"] == chance
    y = other_shapes.budget_labels(other_shapes.SHAPES[shape](seed)[2], labels, seed)
    with pytest.warns(UserWarning) as caught:
        run_method("propagate", X, y, **former_graphs(X.shape[1]))
    assert any(f"propagate: no component of the data rises above noise, and the features the R^2 ranks first "
               f"(refitted without them) predict {accuracy:.0%} of {held} held-out labels, no more than chance "
               f"({chance:.0%}): below the features the groups explain, the label-free order (every gene's "
               "dispersion) ranks" in str(w.message) for w in caught)


def test_rising_components_keep_their_test(other_shapes):
    """Noise factors (components that rise, the classes' or not) at 3 per class: the R^2's features at chance
    too (2 of 9 held-out labels, chance 1/3), but the label-free order is the factors' (5 of 60 markers) and the
    R^2 keeps its 30: the rule does not ask."""
    X, markers, model = _fit(other_shapes, "noise_factors_few_samples", "3/class", 0)
    assert not model.free_at_chance and model.r2_held_out is None and not model.free_leads
    assert _found(model.scores, markers) == 30 and "label_free_at_chance" in model.extra()["graph"]


def test_ten_labels_per_class_keep_the_r2(other_shapes, monkeypatch):
    """Weak markers of 6 classes at 10 per class: the R^2's features at chance on 60 held-out labels, yet its order
    finds 13 of the 60 markers and the dispersion 6; with the bar at 11 labels per class the fit would take 6."""
    X, markers, model = _fit(other_shapes, "weak_markers", "10/class", 0)
    assert not model.free_at_chance and _found(model.scores, markers) == 13
    monkeypatch.setattr(propagate, "FEW_LABELS", FEW_LABELS + 1)
    _, _, lowered = _fit(other_shapes, "weak_markers", "10/class", 0)
    assert lowered.free_at_chance and _found(lowered.scores, markers) == _found(gene_dispersion(X), markers) == 6


def test_ten_labels_per_class_the_label_free_order_takes_turns(other_shapes, monkeypatch):
    """20 classes of 5 markers at 10 labels per class (seed 0, the default graphs): the label-free features predict
    39 held-out labels the propagated samples' features miss and miss 20 (the sign test passes), but the 200 labeled
    samples outweigh the 400 propagated ones (weight 0.08) and the R^2 ranked is mostly the labels' own: it holds 94
    of the 100 markers (`fisher` 92) with the label-free order in turn; leading, that order would give 84 (session
    39). The same draw with 10 labels per class counted as few (the bar at 11): it leads."""
    X, _, cls, markers = other_shapes.SHAPES["twenty_classes"](0)
    y = other_shapes.budget_labels(cls, "10/class", 0)
    model = fit_propagation(X, y)
    lab = y >= 0
    assert model.propagated_weight * (~lab).sum() < lab.sum() and not model.labels_alone[0]
    assert model.free_turns == (True, 39, 20, 71, 41) and propagate.free_leads(39, 20) and not model.free_leads
    assert _found(model.scores, markers) == 94 and model.class_turns == "leaders"
    monkeypatch.setattr(propagate, "FEW_LABELS", FEW_LABELS + 1)
    lowered = fit_propagation(X, y)
    assert lowered.free_leads and _found(lowered.scores, markers) == 84


def test_many_labels_lead_where_the_labels_themselves_were_judged(other_shapes):
    """1,000 samples of 120 genes at 20 labels per class (seed 1): the labels' own features predict the held-out
    labels better than the propagated samples' (the labels lead, the propagated samples count 0), so the label-free
    features were judged against what ranks; they win, and lead: 19 of the 20 markers (the labels' R^2 13)."""
    X, _, cls, markers = other_shapes.SHAPES["many_samples_few_genes"](1)
    model = fit_propagation(X, other_shapes.budget_labels(cls, "20/class", 1))
    assert model.labels_alone[0] and model.propagated_weight == 0.0 and model.free_leads
    assert _found(model.scores, markers) == 19 and _found(model.labels_scores, markers) == 13


@pytest.mark.parametrize(("per_class", "few"), [(3, True), (FEW_LABELS - 1, True), (FEW_LABELS, False), (0, False)])
def test_few_labels_by_hand(per_class, few):
    """The labeled classes' median below 10; no label at all is not few (nothing to judge)."""
    y = np.concatenate([np.repeat(np.arange(4), per_class), np.full(20, -1)])
    assert propagate.few_labels(y) is few


def test_the_verdict_says_so():
    fit = {"label_free_leads": True, "label_free_at_chance": True, "r2_held_out": 0.2, "r2_chance": 0.2}
    assert _free_leads_sentence({"fit": {"propagate": fit}}) == (
        "In propagate's ranking of all samples no component of the data rose above noise, and the features that the "
        "R^2 of the groups its labels spread into ranks first predicted 20% of the held-out labels, no more than "
        "chance (20%): below the features those groups explain its order is the label-free one (the resamples' lists "
        "read the labels' own order)." + FREE_LEADS_ADVICE)


def test_ten_labels_per_class_through_the_cli(other_shapes, tmp_path, capsys):
    """The same draw as a CSV with blank label cells, ranked by ``ssfs rank`` with its defaults: the fit it reports
    took the label-free turns (39 to 20) without leading, and its ranking's top 100 holds the 94 markers."""
    import json

    import pandas as pd

    from ssfs.cli import main

    X, _, cls, markers = other_shapes.SHAPES["twenty_classes"](0)
    y = other_shapes.budget_labels(cls, "10/class", 0)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", np.where(y >= 0, y.astype(str), ""))
    frame.to_csv(tmp_path / "arrays.csv", index_label="sample")
    assert main(["rank", str(tmp_path / "arrays.csv"), "--label-column", "label", "-o",
                 str(tmp_path / "ranking.tsv")]) == 0
    fit = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fit"]
    assert fit["label_free_turns"] is True and fit["label_free_leads"] is False
    assert (fit["label_free_beyond"], fit["label_free_behind"]) == (39, 20)
    ranking = pd.read_csv(tmp_path / "ranking.tsv", sep="\t")
    top = ranking.sort_values("rank")["feature"].head(markers.size).str[1:].astype(int)
    assert int(np.isin(top, markers).sum()) == 94
