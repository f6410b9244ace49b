"""Components the labels reject (issue #28, session 40): where the genes' best features outside a dense array's
rising components predict significantly more held-out labels than both the features the fit ranked by and the
label-free order's best, ``propagate`` fits again on the array without those components
(``propagate.unwanted_rejected``; ``ssfs.methods._shared.unwanted``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ssfs import run_method
from ssfs.errors import InputError, MethodError
from ssfs.methods._shared.unwanted import crossed_columns, outside, outside_dispersion, rising_basis
from ssfs.methods.propagate import fit_propagation, free_leads, leans


def test_outside_by_hand():
    """X - Q Q^T (X - mean) for Q = (1, -1, 1, -1) / 2: the component along Q is gone, the means stay, and it is
    the least-squares regression of every centred gene on Q (RUV's eq. 3) subtracted."""
    X = np.array([[1.0, 4.0], [3.0, 0.0], [5.0, 4.0], [3.0, 4.0]])
    Q = np.array([[0.5], [-0.5], [0.5], [-0.5]])
    # centred: [[-2, 1], [0, -3], [2, 1], [0, 1]]; Q^T centred = [0, 2];
    # Q Q^T centred = [[0, 1], [0, -1], [0, 1], [0, -1]]
    expected = np.array([[1.0, 3.0], [3.0, 1.0], [5.0, 3.0], [3.0, 5.0]])
    np.testing.assert_allclose(outside(X, Q), expected)
    np.testing.assert_allclose(outside(X, Q).mean(axis=0), X.mean(axis=0))
    beta = np.linalg.lstsq(Q, X - X.mean(axis=0), rcond=None)[0]
    np.testing.assert_allclose(outside(X, Q), X - Q @ beta)
    # the genes' variances outside Q: [[-2, 0], [0, -2], [2, 0], [0, 2]] -> 8 / 4 for both
    np.testing.assert_allclose(outside_dispersion(X, Q), [2.0, 2.0])
    np.testing.assert_allclose(outside_dispersion(X, Q), outside(X, Q).var(axis=0))


def test_the_rising_basis_is_the_planted_component():
    """One factor on 200 of 1,000 genes rises: a basis of 1 column, its scores to |r| > 0.99. (On pure noise the
    single permutation's test is a coin flip: the held-out labels, not this basis, decide what is removed.)"""
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(150, 1000))
    factor = rng.normal(size=150)
    X = noise.copy()
    X[:, :200] += np.outer(factor, rng.normal(1.0, 0.2, 200))
    Q, crossed = rising_basis(X, 50)
    assert Q.shape == (150, 1) and crossed.size == 0  # a normal factor: not two sides
    np.testing.assert_allclose(Q.T @ Q, np.eye(1), atol=1e-12)
    assert abs(np.corrcoef(Q[:, 0], factor)[0, 1]) > 0.99


def _two_sides(rng, n: int, groups: np.ndarray) -> np.ndarray:
    """PCA-like scores: column 0 two sides (-5 / +5, eta near 1) drawn independently of ``groups``, columns 1-3 the
    groups' centres (4 apart) with unit noise."""
    Z = rng.normal(size=(n, 4))
    Z[:, 0] += np.where(rng.random(n) < 0.5, -5.0, 5.0)
    Z[:, 1:] += 4.0 * np.eye(3)[groups % 3]
    return Z


def test_crossed_columns_by_hand():
    """Two clear sides that hold the other components' three groups alike: crossed (a batch); the same sides with
    the groups following them (each group on one side, as a class's component): not crossed; a normal column (eta
    2/pi): not two sides; only the rising columns are read."""
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 3, 300)
    Z = _two_sides(rng, 300, groups)
    assert crossed_columns(Z, 1).tolist() == [0]
    assert crossed_columns(Z, 3).tolist() == [0]  # the groups' columns: not two sides
    follows = Z.copy()
    follows[:, 0] = rng.normal(size=300) + np.where(groups == 0, -5.0, 5.0)  # group 0 alone on one side
    assert crossed_columns(follows, 1).size == 0
    normal = Z.copy()
    normal[:, 0] = rng.normal(size=300) * 5.0
    assert crossed_columns(normal, 1).size == 0
    assert crossed_columns(Z[:, [1, 0, 2, 3]], 1).size == 0  # the sides' column is not among the rising ones
    assert crossed_columns(Z[:, [1, 0, 2, 3]], 2).tolist() == [1]


def test_leans_by_hand():
    """No fewer predicted, 2 more placed nearer than farther; significance is not asked (3 to 1 and 7 to 2 fail the
    sign test); one held-out label (1 to 0) decides nothing."""
    assert leans(3, 1, 8, 1) and leans(3, 1, 7, 2) and leans(3, 3, 5, 3) and leans(0, 0, 2, 0)
    assert not free_leads(3, 1, 7, 2)
    assert not leans(1, 0, 1, 0) and not leans(0, 0, 0, 0) and not leans(4, 0, 1, 2) and not leans(0, 3, 5, 0)


def _found(model, markers) -> int:
    return int(np.isin(np.argsort(-model.scores, kind="stable")[:markers.size], markers).sum())


def test_an_unrecorded_batch_is_removed(other_shapes):
    """``bench_other_shapes.py``'s hidden_batch seed 0 at 3 labels per class (half the samples shifted by N(0, 1)
    per gene, not recorded): the best features outside the batch's component predict 5 held-out labels those the
    groups followed miss and miss none (and place 8 to 0), the same against the label-free order's: the fit runs
    without it and finds all 40 markers, where keeping it found 3 (``fisher`` 3)."""
    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](0)
    y = other_shapes.budget_labels(cls, "3/class", 0)
    model = fit_propagation(X, y)
    assert model.unwanted == 1 and not model.unwanted_on_lean  # significant: 5 to 0
    assert model.unwanted_evidence == ((5, 0, 8, 0), (5, 0, 8, 0))
    assert _found(model, markers) == 40
    assert model.extra()["graph"]["unwanted_components"] == 1
    assert model.unwanted_basis is None  # the refit's own: nothing left to remove
    kept = fit_propagation(X, y, unwanted="kept")
    assert kept.unwanted == 0 and _found(kept, markers) == 3


@pytest.mark.parametrize(("labels", "seed", "evidence", "kept_found"), [
    ("3/class", 3, ((3, 1, 8, 2), (3, 1, 7, 2)), 2),  # (3, 1, 8, 1) before session 59
    ("3/class", 7, ((3, 2, 4, 2), (3, 3, 5, 3)), 1),
    ("2/class", 0, ((3, 0, 3, 0), (3, 0, 3, 0)), 3),
])
def test_an_unrecorded_batch_on_held_out_counts_that_lean(other_shapes, labels, seed, evidence, kept_found):
    """hidden_batch draws where the held-out counts lean to the features outside the batch's component but pass no
    sign test (3 to 1 and 7 to 2, 8 places nearer and 2 farther; 3 to 3 and 5 to 3; 3 to 0): the component is
    crossed (two sides that hold the others' groups alike), so they suffice; all 40 markers, where keeping it found
    1-3 (session 50)."""
    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](seed)
    y = other_shapes.budget_labels(cls, labels, seed)
    model = fit_propagation(X, y)
    assert model.unwanted == 1 and model.unwanted_evidence == evidence and model.unwanted_on_lean
    assert not all(free_leads(*each) for each in evidence)
    assert _found(model, markers) == 40
    assert model.extra()["graph"]["unwanted_on_lean"] is True
    with pytest.warns(UserWarning, match=r"reject the data's 1 rising component \(not significantly, but it splits "
                      r"the samples in two sides that hold the other components' groups alike, as a batch does\)"):
        run_method("propagate", X, y)
    kept = fit_propagation(X, y, unwanted="kept")
    assert _found(kept, markers) == kept_found


def test_a_batch_beside_two_classes_is_removed_alone(other_shapes):
    """hidden_batch_two_classes seed 3 at 3 labels per class: the batch's and the two classes' components both rise
    and both are crossed (each one's sides hold the other's alike). Without both the features outside lose the
    markers (0 to 1): kept; without the batch's alone they predict 5 held-out labels more and miss none, so it is
    removed, and the fit finds all 40 markers (2 before, session 50)."""
    X, _, cls, markers = other_shapes.SHAPES["hidden_batch_two_classes"](3)
    y = other_shapes.budget_labels(cls, "3/class", 3)
    Q, crossed = rising_basis(X, 50)
    assert Q.shape[1] == 2 and crossed.tolist() == [0, 1]
    model = fit_propagation(X, y)
    assert model.unwanted == 1 and model.unwanted_evidence == ((5, 0, 5, 0), (5, 0, 5, 0))
    assert not model.unwanted_on_lean
    assert abs(np.corrcoef(model.removed_basis[:, 0], cls)[0, 1]) < 0.2  # the batch's, not the classes'
    assert _found(model, markers) == 40
    assert _found(fit_propagation(X, y, unwanted="kept"), markers) == 2


@pytest.mark.parametrize(("shape", "labels", "seed", "evidence", "found"), [
    # 1,000 samples of 120 genes, 1 % labeled: the 3 rising components are the 4 classes'; outside them the
    # features beat the groups' by places (5 to 0) but not the label-free order's (2 to 1, 4 to 1): kept
    ("many_samples_few_genes", "1%", 0, ((2, 0, 5, 0), (2, 1, 4, 1)), 20),
    # 40 samples of 2 classes: outside the components the features predict less
    ("few_samples", "3/class", 0, ((0, 4, 0, 4), (0, 6, 0, 6)), 32),
])
def test_components_that_carry_the_classes_stay(other_shapes, shape, labels, seed, evidence, found):
    X, _, cls, markers = other_shapes.SHAPES[shape](seed)
    model = fit_propagation(X, other_shapes.budget_labels(cls, labels, seed))
    assert model.unwanted == 0 and model.unwanted_evidence == evidence
    assert [free_leads(*each) for each in evidence] == [shape == "many_samples_few_genes", False]
    assert _found(model, markers) == found


def test_the_unwanted_choice_is_checked():
    X = np.random.default_rng(0).normal(size=(30, 20))
    y = np.repeat([0, 1, -1], [5, 5, 20])
    with pytest.raises((InputError, MethodError), match="unwanted"):
        run_method("propagate", X, y, unwanted="removed")
    with pytest.raises(MethodError, match="unwanted must be one of"):
        fit_propagation(X, y, unwanted="removed")


def test_an_unrecorded_batch_through_the_cli(other_shapes, tmp_path, capsys):
    """The hidden_batch draw as a CSV with blank label cells: ``ssfs rank`` reports the component removed, warns
    why, and its top 40 hold the 40 markers; ``--param unwanted=kept`` keeps it (3)."""
    import pandas as pd

    from ssfs.cli import main

    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](0)
    y = other_shapes.budget_labels(cls, "3/class", 0)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", np.where(y >= 0, y.astype(str), ""))
    frame.to_csv(tmp_path / "arrays.csv", index_label="sample")
    for extra, components, found in (([], 1, 40), (["--param", "unwanted=kept"], 0, 3)):
        out = tmp_path / f"ranking{components}.tsv"
        assert main(["rank", str(tmp_path / "arrays.csv"), "--label-column", "label", *extra, "-o", str(out)]) == 0
        printed = capsys.readouterr()
        assert json.loads(printed.out.strip().splitlines()[-1])["fit"]["unwanted_components"] == components
        assert ("propagate: the held-out labels reject the data's 1 rising component: the genes' best features outside "
                "it predict 5 held-out labels" in printed.err) is (components == 1)
        ranking = pd.read_csv(out, sep="\t")
        top = ranking.sort_values("rank")["feature"].head(markers.size).str[1:].astype(int)
        assert int(np.isin(top, markers).sum()) == found


@pytest.mark.parametrize(("seed", "components", "found"), [(0, 0, 18), (1, 0, 23), (3, 3, 30)])
def test_three_noise_factors_of_a_small_study(seed, components, found):
    """test_propagate.py's 48 x 400 study (4 classes of 10 markers, 5 labels per class, three strong factors on 150
    other genes), 15 neighbours: on seed 3 the held-out labels reject the three factors' components, 20 -> 30 of the
    40 markers; on seeds 0 and 1 they keep them (the same fit as ``unwanted="kept"``)."""
    from test_propagate import _few_samples_many_labels

    X, y, markers = _few_samples_many_labels(seed)
    fit = run_method("propagate", X, y, k=15)
    kept = run_method("propagate", X, y, k=15, unwanted="kept")
    assert fit.result.extra["graph"]["unwanted_components"] == components
    assert int(np.isin(fit.order[:40], markers).sum()) == found
    if components:
        assert int(np.isin(kept.order[:40], markers).sum()) == 20
    else:
        np.testing.assert_array_equal(fit.order, kept.order)


def test_the_selection_verdict_says_it():
    """Selection mode's verdict reads the full-data fit's ``unwanted_components`` and ``unwanted_inherited``."""
    from ssfs.experiment.verdict import _unwanted_sentence

    assert _unwanted_sentence({"fit": {"propagate": {"unwanted_components": 0}}}) == ""
    assert _unwanted_sentence({"fit": {"propagate": {"unwanted_components": 1, "unwanted_inherited": True}}}) == (
        "In propagate's ranking of all samples the held-out labels rejected the data's 1 rising component (structure "
        "the classes do not share: a batch nobody recorded, gene modules?): the genes' best features outside it "
        "predicted significantly more held-out labels, so it ranked the data without it, and every resample was "
        "ranked without it too, as after a batch correction (unwanted='kept' keeps it).")
    lean = _unwanted_sentence({"fit": {"propagate": {"unwanted_components": 1, "unwanted_on_lean": True}}})
    assert ("outside it predicted more held-out labels, not significantly, but it split the samples in two sides "
            "holding the other components' groups alike, as a batch does, so it ranked") in lean
    said = _unwanted_sentence({"fit": {"propagate": {"unwanted_components": 3}}})
    assert "3 rising components" in said and "each resample's fit asked again with its own labels" in said


def test_resamples_inherit_the_decided_fit_s_removal():
    """:func:`~ssfs.experiment.stable_selection.inherited`: without a removed basis X and the settings as given;
    with one, X without it and the method told to keep what is left."""
    from types import SimpleNamespace

    from ssfs.experiment.stable_selection import inherited
    from ssfs.runner import MethodConfig

    X = np.array([[1.0, 4.0], [3.0, 0.0], [5.0, 4.0], [3.0, 4.0]])
    settings = MethodConfig("propagate", "propagate", {"k": 3})
    assert inherited(X, None, settings) == (X, settings)
    plain = SimpleNamespace(result=SimpleNamespace(extra={"graph": {}}))
    assert inherited(X, plain, settings)[1] is settings
    Q = np.array([[0.5], [-0.5], [0.5], [-0.5]])
    removed = SimpleNamespace(result=SimpleNamespace(extra={"unwanted_basis": Q}))
    X2, settings2 = inherited(X, removed, settings)
    np.testing.assert_allclose(X2, [[1.0, 3.0], [3.0, 1.0], [5.0, 3.0], [3.0, 5.0]])  # test_outside_by_hand
    assert settings2.params == {"k": 3, "unwanted": "kept"} and settings.params == {"k": 3}


def test_the_answer_on_an_unrecorded_batch(other_shapes, tmp_path, capsys):
    """``ssfs select`` with its defaults on the hidden_batch draw at 3 labels per class: the full-data fit removes the
    batch's component and every resample is ranked without it: 40 features listed, the 40 markers (each resample
    deciding alone listed none; keeping the component listed 2 false ones)."""
    import pandas as pd

    from ssfs.cli import main

    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](0)
    y = other_shapes.budget_labels(cls, "3/class", 0)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", np.where(y >= 0, y.astype(str), ""))
    frame.to_csv(tmp_path / "arrays.csv", index_label="sample")
    assert main(["select", str(tmp_path / "arrays.csv"), "--label-column", "label", "-o", str(tmp_path / "out")]) == 0
    assert "and every resample was ranked without it too" in capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["fit"]["propagate"]["unwanted_components"] == 1
    assert summary["fit"]["propagate"]["unwanted_inherited"] is True
    table = pd.read_csv(tmp_path / "out" / "consensus.tsv", sep="\t")
    listed = table.loc[table["selected"], "feature"].str[1:].astype(int)
    assert listed.size == 40 and np.isin(listed, markers).all()


@pytest.mark.parametrize("seed", [0, 3])
def test_an_unrecorded_batch_through_anndata_and_scikit_learn(other_shapes, seed):
    """The same draw (and seed 3's, removed on a lean) through ``ssfs.tl.rank_features`` (blank labels: NaN in
    ``obs``) and ``SemiSupervisedSelector`` (-1 unlabeled): the fit they report removed the component and their top
    40 are the 40 markers."""
    import anndata as ad
    import pandas as pd

    import ssfs
    from ssfs.selector import SemiSupervisedSelector

    X, _, cls, markers = other_shapes.SHAPES["hidden_batch"](seed)
    y = other_shapes.budget_labels(cls, "3/class", seed)
    adata = ad.AnnData(X, obs=pd.DataFrame({"kind": pd.Categorical(np.where(y >= 0, y.astype(str), None))}))
    ssfs.tl.rank_features(adata, groupby="kind")
    assert adata.uns["propagate"]["fit"]["unwanted_components"] == 1
    assert adata.uns["propagate"]["fit"]["unwanted_on_lean"] is (seed == 3)
    top = np.argsort(adata.var["propagate_rank"].to_numpy(), kind="stable")[:markers.size]
    assert int(np.isin(top, markers).sum()) == 40
    selector = SemiSupervisedSelector("propagate", n_features=40).fit(X, y)
    assert selector.result_.extra["graph"]["unwanted_components"] == 1
    assert int(np.isin(np.flatnonzero(selector.get_support()), markers).sum()) == 40
