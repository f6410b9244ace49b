"""Classes in a few features of large variance (issue #28, session 51): where the components that rise above noise
lie in fewer than 50 features (``propagate.concentrated``) and the features the R^2 ranks first predict the held-out
labels no better than chance, the label-free order leads below the explained features, at any label budget
(``propagate.label_free_at_chance``). scikit-learn's ``make_classification`` draws such data: its classes live in a
few informative features mixed by a random covariance, each weak alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ssfs import run_method
from ssfs.experiment.verdict import FREE_LEADS_ADVICE, _free_leads_sentence
from ssfs.methods._shared.labels_alone import GENES
from ssfs.methods.propagate import CLIFF, FEW_LABELS, concentrated, fit_propagation, label_free_at_chance


def _judged(accuracy: float, chance: float, held: int = 12) -> tuple:
    return accuracy, chance, np.zeros(held, dtype=np.int64), np.zeros(held)


def _cliff(loud: int, p: int = 2000, floor: float = 0.05) -> np.ndarray:
    """``loud`` scores 1.0, the rest ``floor``, in a shuffled order."""
    scores = np.full(p, floor)
    scores[:loud] = 1.0
    return np.random.default_rng(0).permutation(scores)


@pytest.mark.parametrize(("scores", "expected"), [
    (_cliff(20), True),                        # 20 features, then the floor: the 50th at 0.05 of the first
    (_cliff(GENES - 1), True),                 # 49 features: the 50th is the first of the floor
    (_cliff(GENES), False),                    # 50 features: the 50th is still one of them
    (_cliff(20, floor=CLIFF), False),          # the floor at the cliff itself: not below it
    (np.linspace(1.0, 0.0, 2000), False),      # a slope: the 50th at 0.975
    (_cliff(20, p=GENES), False),              # no more features than the cliff counts
    (np.zeros(2000), False),                   # nothing rises
    (np.r_[_cliff(20), np.nan], True),         # NaN (a constant feature) counts as 0
])
def test_concentrated_by_hand(scores, expected):
    assert concentrated(scores) is expected


@pytest.mark.parametrize(("free", "accuracy", "per_class", "expected"), [
    (("dispersion", _cliff(20)), 0.2, 3, (True, False)),          # nothing rises: the rule of session 36
    (("dispersion", _cliff(20)), 0.2, FEW_LABELS, (False, False)),  # ... with fewer than 10 labels per class
    (("signal", _cliff(20)), 0.2, 3, (True, True)),
    (("signal", _cliff(20)), 0.2, FEW_LABELS, (True, True)),        # concentrated: at any budget
    (("signal", _cliff(20)), 0.25, 3, (False, False)),              # above chance
    (("signal", np.linspace(1.0, 0.0, 2000)), 0.2, 3, (False, False)),  # components over many genes: never
])
def test_label_free_at_chance_by_hand(free, accuracy, per_class, expected):
    y = np.concatenate([np.repeat(np.arange(5), per_class), np.full(100, -1)])
    assert label_free_at_chance((free[1], free[0]), _judged(accuracy, 0.2), y) == expected


def _found(scores, markers) -> int:
    return int(np.isin(np.argsort(-scores, kind="stable")[:markers.size], markers).sum())


@pytest.mark.parametrize(("shape", "labels", "seed", "held", "found", "r2_found"), [
    ("sklearn_classification", "3/class", 1, 12, 20, 10),     # 0.50 -> 1.00 of the 20 informative features
    ("sklearn_classification_weak", "3/class", 0, 12, 20, 0),  # 0.00 -> 1.00
    ("sklearn_classification", "10/class", 0, 40, 20, 0),     # 0.50 -> 1.00 (the R^2's in turn before)
])
def test_the_label_free_order_leads(other_shapes, shape, labels, seed, held, found, r2_found):
    """make_classification draws: the R^2's features right on no more held-out labels than chance, the rising
    components' variance in 20 features; the fit's order finds every informative feature, the labels' own few."""
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    model = fit_propagation(X, other_shapes.budget_labels(cls, labels, seed))
    accuracy, chance, n_held = model.r2_held_out
    assert model.free_at_chance and model.free_concentrated and model.free_leads and not model.free_unjudged
    assert n_held == held and accuracy <= chance + 1e-12 and model.free_turns == (True, 0, 0, 0, 0)
    assert _found(model.scores, markers) == found and _found(model.labels_scores, markers) == r2_found
    assert model.extra()["graph"]["label_free_concentrated"] is True


def test_the_warning_says_why(other_shapes):
    X, _, cls, markers = other_shapes.SHAPES["sklearn_classification"](1)
    with pytest.warns(UserWarning) as caught:
        result = run_method("propagate", X, other_shapes.budget_labels(cls, "3/class", 1))
    assert any("propagate: the components that rise above noise lie in fewer than 50 features, and the features the "
               "R^2 ranks first (refitted without them) predict 17% of 12 held-out labels, no more than chance (25%): "
               "below the features the groups explain, the label-free order (their variance) ranks"
               in str(w.message) for w in caught)
    assert int(np.isin(result.order[:markers.size], markers).sum()) == 20


def test_noise_factors_are_not_concentrated(other_shapes):
    """Noise factors of 200 genes each (60 samples, 3 per class, seed 0): the R^2 at chance too, but the rising
    components spread over hundreds of genes (the 50th score at 0.25 of the first): the R^2 keeps its 38 of 60."""
    X, _, cls, markers = other_shapes.SHAPES["noise_factors_few_samples"](0)
    model = fit_propagation(X, other_shapes.budget_labels(cls, "3/class", 0))
    assert not model.free_at_chance and not model.free_concentrated and _found(model.scores, markers) == 38


def test_the_verdict_says_so():
    fit = {"label_free_leads": True, "label_free_at_chance": True, "label_free_concentrated": True,
           "r2_held_out": 0.175, "r2_chance": 0.25}
    assert _free_leads_sentence({"fit": {"propagate": fit}}) == (
        "In propagate's ranking of all samples the components that rose above noise lay in a few features, and the "
        "features that the R^2 of the groups its labels spread into ranks first predicted 18% of the held-out labels, "
        "no more than chance (25%): below the features those groups explain its order is the label-free one (the "
        "resamples' lists read the labels' own order)." + FREE_LEADS_ADVICE)


def test_through_the_cli(other_shapes, tmp_path, capsys):
    """The 10-per-class draw as a CSV with blank label cells, ranked by ``ssfs rank`` with its defaults."""
    from analyst_data import rank_fits

    X, _, cls, markers = other_shapes.SHAPES["sklearn_classification"](0)
    y = other_shapes.budget_labels(cls, "10/class", 0)
    (fit,) = rank_fits(tmp_path, capsys, X, np.where(y >= 0, y.astype(str), ""), [[]])
    assert fit["label_free_at_chance"] is True and fit["label_free_concentrated"] is True
    ranking = pd.read_csv(tmp_path / "ranking.tsv", sep="\t")
    top = ranking.sort_values("rank")["feature"].head(markers.size).str[1:].astype(int)
    assert int(np.isin(top, markers).sum()) == 20


def test_through_anndata_and_scikit_learn(other_shapes):
    """The same draw through ``ssfs.tl.rank_features`` (blank labels: NaN in ``obs``; the fit in ``uns``) and
    ``SemiSupervisedSelector`` (-1 unlabeled): 20 of 20 both."""
    import anndata as ad

    import ssfs
    from ssfs.selector import SemiSupervisedSelector

    X, _, cls, markers = other_shapes.SHAPES["sklearn_classification"](0)
    y = other_shapes.budget_labels(cls, "10/class", 0)
    adata = ad.AnnData(X, obs=pd.DataFrame({"kind": pd.Categorical(np.where(y >= 0, y.astype(str), None))}))
    ssfs.tl.rank_features(adata, groupby="kind")
    assert adata.uns["propagate"]["fit"]["label_free_concentrated"] is True
    top = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")[:markers.size]
    assert int(np.isin(top, markers).sum()) == 20
    selector = SemiSupervisedSelector("propagate", n_features=markers.size).fit(X, y)
    assert selector.result_.extra["graph"]["label_free_concentrated"] is True
    assert int(np.isin(np.flatnonzero(selector.get_support()), markers).sum()) == 20


def test_ten_labels_per_class_may_lead_where_concentrated(other_shapes, monkeypatch):
    """8 classes at 10 labels per class (seed 1): the 80 labeled samples outweigh the propagated ones, so the
    label-free order would take turns at most (session 39); its 16 informative features are concentrated, and the
    head of its order (the first 8 features, chosen without labels) predicts 34 of the 80 held-out labels (chance
    0.125, the R^2's features 0.30): it leads, 16 of 16 (:func:`head_carries`, session 52; before it, the same lead
    came from the places, 34 nearer and 16 farther). Not concentrated (the cliff at 0), the turns give 11."""
    from ssfs.methods.propagate import judges as propagate

    X, _, cls, markers = other_shapes.SHAPES["sklearn_classification_eight_classes"](1)
    y = other_shapes.budget_labels(cls, "10/class", 1)
    model = fit_propagation(X, y)
    assert model.free_turns == (True, 17, 8, 34, 16) and model.free_leads and not model.free_by_places
    assert model.free_head == (8, 34, 80, 0.125, "signal") and model.r2_held_out == (0.3, 0.125, 80)
    assert not model.free_at_chance and _found(model.scores, markers) == 16
    monkeypatch.setattr(propagate, "CLIFF", 0.0)
    turned = fit_propagation(X, y)
    assert turned.free_turns == model.free_turns and not turned.free_leads and not turned.free_head
    assert _found(turned.scores, markers) == 11
