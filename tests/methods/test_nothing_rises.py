"""``propagate``'s label-free scores on dense arrays where no component rises clearly above the noise
(session 33; docs/labels_that_count.md, "Nothing rises"): every gene's own dispersion, and the label-free
order leading the R^2 where the held-out labels prefer it by a sign test."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from test_free_turns import _many_classes
from test_gene_scale import _small_arrays

from ssfs.errors import MethodError
from ssfs.experiment.verdict import FREE_LEADS_ADVICE
from ssfs.methods._shared.signal import (
    clearly_above,
    clearly_rising,
    permuted_columns,
    rising_embedding,
    tail_skew,
    tail_weight,
    top_variance,
    winsorized,
)
from ssfs.methods.propagate import (
    clipped_tails,
    fit_propagation,
    free_leads,
    gene_dispersion,
    label_free_scores,
    read_tails,
    with_unexplained,
)


def _largest_covariance_eigenvalue(X: np.ndarray) -> float:
    return float(np.linalg.eigvalsh(np.cov(X, rowvar=False, bias=True)).max())


@pytest.mark.parametrize("shape", [(60, 30), (30, 60), (300, 250)])
def test_top_variance_is_the_covariance_s_largest_eigenvalue(shape):
    """Exact (the smaller of Gram and covariance) up to 200 rows or columns, Lanczos beyond: numpy's
    eigenvalue of the biased covariance, to 1e-9."""
    X = np.random.default_rng(1).normal(size=shape) * np.linspace(1.0, 2.0, shape[1])
    assert top_variance(X) == pytest.approx(_largest_covariance_eigenvalue(X), rel=1e-9)


def test_permutation_draws():
    """Draw 0 is the permutation of every earlier release; other draws move the columns differently, and
    every column keeps its values."""
    X = np.random.default_rng(2).normal(size=(50, 20))
    assert np.array_equal(permuted_columns(X), permuted_columns(X, 0))
    other = permuted_columns(X, 3)
    assert not np.array_equal(other, permuted_columns(X))
    assert np.array_equal(np.sort(other, axis=0), np.sort(X, axis=0))


def test_what_rises_clearly():
    """Pure noise: nothing. 8 classes of 5 equal-noise markers (seed 1): the single permutation finds 5
    rising components (the leading one 1.04 x its null), the 8 permutations none. 40 samples of 2 classes
    with 20 markers each: 1.18 x the single null, clearly above the 8 (their mean + 3 sd)."""
    noise = np.random.default_rng(0).normal(size=(200, 1000))
    Z, _, found, null = rising_embedding(noise, 50, standardize=False)
    assert not (clearly_above(Z, null) or clearly_rising(noise))
    X, _, _ = _many_classes(1)
    Z, _, found, null = rising_embedding(X, 50, standardize=False)
    assert found == 5 and 1.0 < Z[:, 0].var() / null < 1.05
    assert not clearly_above(Z, null) and not clearly_rising(X)
    X, _, _ = _small_arrays(2, hetero=False)
    Z, _, found, null = rising_embedding(X, 50, standardize=False)
    assert not clearly_above(Z, null)  # decided by the permutations, not the shortcut
    assert clearly_rising(X)


def _eight_classes(seed: int, n=400, p=3000, k=8, per=5) -> np.ndarray:
    """``benchmarks/bench_other_shapes.py``'s ``many_classes`` draw: gene means N(6, 2), noise N(0, 1), 8
    classes of 50 shifting their 5 markers by +-1.5."""
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.repeat(np.arange(k), n // k))
    X = rng.normal(size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += 1.5 * rng.choice([-1.0, 1.0], per)
    return X


def test_more_permutations_where_eight_leave_it_open(monkeypatch):
    """8 classes (the shapes benchmark's draw 0): 4.9 standard deviations above the mean of 8 permutations, 2.1
    above 32's: the 8 underestimate the spread, and the 32 decide (nothing rises)."""
    from ssfs.methods._shared import signal

    X = _eight_classes(0)
    Z, _, _, null = rising_embedding(X, 50, standardize=False)
    assert not clearly_above(Z, null) and not clearly_rising(X)
    monkeypatch.setattr(signal, "NULL_PERMUTATIONS", (8,))
    assert clearly_rising(X)


def test_gene_dispersion_by_hand():
    """Gaussian noise: every gene's variance (within batches: about its batch's mean); Student's t with 3
    degrees of freedom: the interquartile range."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 30)) * np.linspace(1.0, 3.0, 30)
    assert np.allclose(gene_dispersion(X), X.var(axis=0), rtol=1e-12)
    batch = np.arange(400) % 2
    shifted = X + np.where(batch[:, None] == 1, 5.0, 0.0)
    within = np.concatenate([X[batch == b] - X[batch == b].mean(axis=0) for b in (0, 1)])
    assert np.allclose(gene_dispersion(shifted, batch), within.var(axis=0), rtol=1e-10)
    T = rng.standard_t(3, size=(400, 30))
    q1, q3 = np.quantile(T - T.mean(axis=0), [0.25, 0.75], axis=0)
    assert np.allclose(gene_dispersion(T), q3 - q1)


def _heavy_tails(seed: int, n=300, p=2000, k=4, per=10):
    """Student's t noise (3 degrees of freedom) about gene means N(6, 2), 4 classes shifting their 10 markers by
    +-1.5. Returns X, the markers (and with ``labels``, 3 labels per class: :func:`_heavy_tails_labeled`)."""
    return _heavy_tails_labeled(seed, n, p, k, per)[:2]


def _heavy_tails_labeled(seed: int, n=300, p=2000, k=4, per=10):
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.arange(n) % k)
    X = rng.standard_t(3, size=(n, p)) + rng.normal(6.0, 2.0, p)
    markers = rng.choice(p, k * per, replace=False)
    for c in range(k):
        X[np.ix_(cls == c, markers[c * per:(c + 1) * per])] += 1.5 * rng.choice([-1.0, 1.0], per)
    y = np.full(n, -1)
    for c in range(k):
        y[np.flatnonzero(cls == c)[:3]] = c
    return X, markers, y


def test_without_labels_nothing_rises_every_gene_its_dispersion():
    """8 classes of 5 equal-noise markers: the label-free scores are the genes' variances, 30 of the 40
    markers (a share in noise components: 15). Heavy tails (t with 3 degrees of freedom, 4 classes of 10
    markers): the interquartile range, 27 of 40 (the variance: 0)."""
    X, _, markers = _many_classes(1)
    scores, _ = label_free_scores(X, 50)
    assert np.allclose(scores, X.var(axis=0), rtol=1e-12)
    assert np.isin(np.argsort(-scores, kind="stable")[:40], markers).sum() == 30
    signal, _ = label_free_scores(X, 50, how="signal")
    assert np.isin(np.argsort(-signal, kind="stable")[:40], markers).sum() == 15
    X, markers = _heavy_tails(0)
    scores, _ = label_free_scores(X, 50)
    assert np.isin(np.argsort(-scores, kind="stable")[:40], markers).sum() == 27
    assert np.isin(np.argsort(-X.var(axis=0), kind="stable")[:40], markers).sum() == 0


@pytest.mark.parametrize(("b", "c", "leads"), [(5, 0, True), (4, 0, False), (7, 1, True), (6, 1, False),
                                               (3, 3, False), (0, 0, False)])
def test_free_leads_by_the_sign_test(b, c, leads):
    """One-sided sign test at 0.05: 5 to 0 is 1/32, 4 to 0 is 1/16, 7 to 1 is 9/256, 6 to 1 is 8/128."""
    assert free_leads(b, c) is leads


def test_leading_label_free_order_by_hand():
    """Feature 0 explained (first); the others by the label-free order alone (ties: R^2) instead of in turn."""
    r2 = np.array([0.9, 0.5, 0.4, 0.3, 0.2])
    free = np.array([0.0, 0.1, 0.2, 0.9, 0.9])
    explained = np.array([True, False, False, False, False])
    order = np.argsort(-with_unexplained(r2, free, explained, free_first=True), kind="stable")
    assert order.tolist() == [0, 3, 4, 2, 1]
    in_turn = np.argsort(-with_unexplained(r2, free, explained), kind="stable")
    assert in_turn.tolist() == [0, 1, 3, 4, 2]


def test_the_label_free_order_leads_where_the_held_out_labels_prefer_it(tmp_path, capsys, monkeypatch):
    """8 classes at 3 labels per class. Seed 6: the label-free features predict 6 held-out labels the R^2's miss and
    miss none they predict; they lead: 30 of the 40 markers. Seed 1 (8 to 2: no lead) leads by the held-out labels'
    own classes' places, 18 nearer to 3 farther (30 of the 40; the R^2 alone 5). ``ssfs rank`` reports
    ``label_free_leads``. (Before session 59, whose labels a graph at chance contradicts keep their weight, seed 1
    led by 7 to 0 and seed 6 by its places, 15 to 4, to the same 30; session 36's R^2 at chance led first on both
    then, and on seed 6 still does: that rule is turned off here to test the sign tests, and so is session 52's
    head of the genes whose dispersion stands out, which leads on seed 6 too.)"""
    from ssfs.methods.propagate import judges as propagate

    X, y, markers = _many_classes(1)
    default = fit_propagation(X, y)
    assert default.free_leads and np.isin(np.argsort(-default.scores, kind="stable")[:40], markers).sum() == 30
    monkeypatch.setattr(propagate, "r2_at_chance", lambda judged, y: False)
    monkeypatch.setattr(propagate, "standing_out", lambda free: 0)
    model = fit_propagation(X, y)
    assert model.free_turns == (True, 8, 2, 18, 3) and model.free_leads and model.free_by_places
    assert np.isin(np.argsort(-model.scores, kind="stable")[:40], markers).sum() == 30
    alone = fit_propagation(X, y, unexplained="r2", per_class="none")  # the R^2 alone, no group's leader
    assert np.isin(np.argsort(-alone.scores, kind="stable")[:40], markers).sum() == 5
    X6, y6, markers6 = _many_classes(6)
    model = fit_propagation(X6, y6)
    assert model.free_turns == (True, 6, 0, 18, 4) and model.free_leads and not model.free_by_places
    assert np.isin(np.argsort(-model.scores, kind="stable")[:40], markers6).sum() == 30
    assert not free_leads(4, 0) and not free_leads(8, 2) and free_leads(6, 0)
    import pandas as pd

    from ssfs.cli import main

    frame = pd.DataFrame(X6, columns=[f"g{j}" for j in range(X6.shape[1])])
    frame.insert(0, "label", np.where(y6 >= 0, y6.astype(str), ""))
    frame.to_csv(tmp_path / "arrays.csv", index_label="sample")
    assert main(["rank", str(tmp_path / "arrays.csv"), "--label-column", "label", "-o",
                 str(tmp_path / "ranking.tsv")]) == 0
    captured = capsys.readouterr()
    fit = json.loads(captured.out.strip().splitlines()[-1])["fit"]
    assert fit["label_free_turns"] is True and fit["label_free_leads"] is True
    assert (fit["label_free_beyond"], fit["label_free_behind"]) == (6, 0)
    assert (fit["label_free_nearer"], fit["label_free_farther"], fit["label_free_by_places"]) == (18, 4, False)
    warned = [line for line in captured.err.splitlines() if "the label-free order ranks" in line]
    assert warned == ["ssfs: warning: propagate: the label-free features predict 6 held-out labels that those of "
                      "the propagated samples' groups miss, and miss 0 they predict: below the features the groups "
                      "explain, the label-free order ranks (unexplained='r2' keeps the R^2's)"]


@pytest.mark.parametrize(("sentence", "said", "text"), [
    ("_free_leads_sentence", {"label_free_leads": True, "label_free_beyond": 7, "label_free_behind": 0},
     "In propagate's ranking of all samples the label-free features predicted 7 held-out labels that the features "
     "of the groups its labels spread into missed, and missed 0 they predicted: below the features those groups "
     "explain its order is the label-free one (the resamples' lists read the labels' own order)." + FREE_LEADS_ADVICE),
    ("_clipped_sentence", {"clipped_tails": True, "tail_weight": 6.96},
     "The genes' noise has heavy tails (median excess kurtosis 7.0): propagate clipped every gene's values to its "
     "median +- 3 robust standard deviations before ranking, so a few extreme values do not decide its order; its "
     "per-class statistics are of the clipped values."),
    ("_clipped_sentence", {"clipped_tails": False, "residual_tails": True},
     "The values' heavy tails are one-sided in values of both signs (Pearson residuals of counts?): propagate kept "
     "them as they are (a sparse gene's tail is the cells holding its counts); where you have the counts, they are "
     "the better input."),
])
def test_the_verdict_says_what_propagate_did(sentence, said, text):
    """Selection mode's verdict names the method whose ranking of all samples the label-free order led, or whose
    heavy tails were clipped or kept as residuals'; nothing where the fit did neither."""
    from ssfs.experiment import verdict

    say = getattr(verdict, sentence)
    assert say({"fit": {"propagate": said, "fisher": {}}}) == text
    assert say({"fit": {"propagate": {key: False for key in said}}}) == ""


def test_tail_weight_and_winsorized_by_hand():
    """Excess kurtosis: -1 for a column of +-1 and 0 (values -1, 0, 0, 1: m4 / m2^2 = 0.5 / 0.25 = 2), the median
    over the varying columns; clipping to the median +- 3 robust sd (interquartile range / 1.349)."""
    col = np.array([-1.0, 0.0, 0.0, 1.0])
    assert tail_weight(np.column_stack([col, col, np.zeros(4)])) == pytest.approx(-1.0)
    X = np.array([[0.0], [1.0], [2.0], [3.0], [100.0]])
    q1, q3 = 1.0, 3.0
    reach = 3 * (q3 - q1) / 1.349
    assert winsorized(X, 3.0)[:, 0].tolist() == pytest.approx([0.0, 1.0, 2.0, 3.0, 2.0 + reach])


def test_tail_skew_by_hand():
    """Skewness m3 / m2^1.5: values -1, -1, -1, 3 (mean 0, m2 = 12 / 4 = 3, m3 = 24 / 4 = 6) 6 / 3^1.5 = 1.1547;
    -1, 0, 0, 1: 0; the median over the varying columns."""
    one_sided, symmetric = np.array([-1.0, -1.0, -1.0, 3.0]), np.array([-1.0, 0.0, 0.0, 1.0])
    assert tail_skew(np.column_stack([one_sided, one_sided, symmetric, np.zeros(4)])) == pytest.approx(2 / np.sqrt(3))
    assert tail_skew(np.column_stack([symmetric, -one_sided, symmetric])) == 0.0


def test_pearson_residuals_are_not_clipped(other_shapes):
    """Planted counts given as their Pearson residuals (scanpy's ``normalize_pearson_residuals``; seed 0): heavy
    tails (median excess kurtosis 4.75) but one-sided (median skewness 2.04) in values of both signs, the cells
    holding a gene's counts: kept as they are (session 48), 3 labels per type find 81 of the 90 markers, clipped 32;
    without labels Moran's I ranks (61); ``tails="as_is"`` reads them as residuals too (it only never clips).
    ``tails="clip"`` still clips; Student's t noise (skewness 0.04) and unlogged
    intensities (positive values, skewness 2.3) are clipped."""
    Z, _, cls, markers = other_shapes.SHAPES["pearson_residuals"](0)
    assert read_tails(Z)[0] is Z and read_tails(Z)[2] and clipped_tails(Z, "clip")[1] == pytest.approx(4.749, abs=0.001)
    assert read_tails(Z, "as_is")[0] is Z and read_tails(Z, "as_is")[1:] == (None, True)  # as_is: no clipping only
    assert read_tails(_heavy_tails_labeled(0)[0], "as_is")[1:] == (None, False) and not read_tails(Z, "clip")[2]
    assert read_tails(_heavy_tails_labeled(0)[0])[1:] == (pytest.approx(6.9611, abs=1e-4), False)
    assert clipped_tails(other_shapes.SHAPES["unlogged_intensities"](0)[0])[1] is not None
    y = other_shapes.per_class_labels(cls, 3, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept, clipped = (fit_propagation(Z, y, tails=how) for how in ("auto", "clip"))
    top = markers.size
    assert kept.tail_weight is None and clipped.tail_weight is not None
    assert kept.extra()["graph"]["residual_tails"] and not clipped.extra()["graph"]["residual_tails"]
    assert np.isin(np.argsort(-kept.scores, kind="stable")[:top], markers).sum() >= 80
    assert np.isin(np.argsort(-clipped.scores, kind="stable")[:top], markers).sum() <= 50
    free = fit_propagation(Z, np.full_like(y, -1))  # Moran's I without labels: 61 of the 90
    assert "Moran" in free.note and np.isin(np.argsort(-free.scores, kind="stable")[:top], markers).sum() >= 58


def test_heavy_tails_are_clipped_before_the_fit(recwarn):
    """t noise with 3 degrees of freedom (median excess kurtosis 7.0, the samples scaled alike): 4 % of the values
    are clipped and 3 labels per class find all 40 markers (the R^2 of the values as they are, ``tails="as_is"``, 5:
    4 before session 59; 27 since session 36, where their R^2 at chance yields to every gene's dispersion); the
    fit says so. Gaussian arrays are not touched (the same object), nor arrays whose tails are 5 % noisy samples';
    ``tails="clip"`` clips them too; a wrong value is one line."""
    X, markers, y = _heavy_tails_labeled(0)
    clipped, weight = clipped_tails(X)
    assert weight == pytest.approx(6.9611, abs=1e-4) and 0.04 < (clipped != X).mean() < 0.045
    model = fit_propagation(X, y)
    assert model.tail_weight == weight and model.extra()["graph"]["clipped_tails"] is True
    assert model.extra()["graph"]["tail_weight"] == weight
    assert np.isin(np.argsort(-model.scores, kind="stable")[:40], markers).sum() == 40
    as_is = fit_propagation(X, y, tails="as_is")
    assert as_is.tail_weight is None and np.isin(np.argsort(-as_is.scores, kind="stable")[:40], markers).sum() == 27
    assert as_is.free_at_chance and np.isin(np.argsort(-as_is.labels_scores, kind="stable")[:40], markers).sum() == 5
    G, _, _ = _many_classes(1)
    assert clipped_tails(G)[0] is G and clipped_tails(G, "clip")[1] is not None
    loud = G.copy()
    loud[:20] = G.mean(axis=0) + 4.0 * (G[:20] - G.mean(axis=0))  # 5 % noisy arrays: every gene's tails heavy,
    assert tail_weight(loud - loud.mean(axis=0)) > 1.0                # but the samples' (graph_scales names them)
    assert clipped_tails(loud)[0] is loud
    with pytest.raises(MethodError, match="^propagate: tails must be one of"):
        clipped_tails(G, "trim")
    import ssfs

    ssfs.run_method("propagate", X, y)
    said = [str(w.message) for w in recwarn if "heavy tails" in str(w.message)]
    assert said == ["propagate: the genes' noise has heavy tails (median excess kurtosis 7.0): every gene's values "
                    "were clipped to its median +- 3 robust standard deviations before the fit, its statistics "
                    "included (tails='as_is' keeps them)"]


def test_the_permutations_run_on_at_most_clear_rows_samples(monkeypatch):
    """Beyond ``CLEAR_ROWS`` (500) samples every eigenvalue of the test is taken on 500 of them, chosen by content:
    a draw's cost does not grow with n. Noise of 800 x 300: nothing rises."""
    from ssfs.methods._shared import signal

    shapes = []
    exact = signal.top_variance
    monkeypatch.setattr(signal, "top_variance", lambda X: shapes.append(X.shape) or exact(X))
    noise = np.random.default_rng(5).normal(size=(800, 300))
    assert not clearly_rising(noise)
    assert len(shapes) >= 9 and set(shapes) == {(500, 300)}


def test_the_tails_are_measured_on_at_most_tail_rows_samples(monkeypatch):
    """Beyond ``TAIL_ROWS`` (1,000) samples the kurtosis is measured on 1,000 of them, chosen by content; heavy
    tails found so clip every sample."""
    from ssfs.methods.propagate import reading as propagate

    seen = []
    scaled_alike = propagate.equal_samples
    monkeypatch.setattr(propagate, "equal_samples", lambda X: seen.append(X.shape) or scaled_alike(X))
    T = np.random.default_rng(6).standard_t(3, size=(1500, 40))
    clipped, weight = clipped_tails(T)
    assert seen == [(1000, 40)] and weight > 1.0 and clipped.shape == (1500, 40)
    assert np.array_equal(clipped, winsorized(T, 3.0))
