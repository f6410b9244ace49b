"""``propagate``'s gene scale (session 29): on dense values the graphs are built on standardised genes and
on the genes in their own units, and the second is kept only when it predicts ``LEAD_BY`` (2) more of the
same held-out labels (``labels_lead``, paired) (docs/labels_that_count.md, "Shapes drawn outside ``ssfs.simulate``")."""

from __future__ import annotations

import json
import warnings

import numpy as np
from scipy import sparse
from test_labels_alone import modules_microarray, ten_per_class

from ssfs import run_method
from ssfs.methods._shared.labels_alone import LEAD_BY, labels_lead
from ssfs.methods.propagate import gene_scales
from ssfs.simulate import get_scenario


def _ranked(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_method("propagate", X, y, rng=0, **params)


def test_which_scales_compete():
    """Both scales on dense values; one where the graph is not built on X's values or X holds counts."""
    dense = np.random.default_rng(0).normal(size=(20, 5))
    counts = np.random.default_rng(0).poisson(0.5, size=(200, 300)).astype(float)
    assert gene_scales("auto", dense, None, None, None) == ("standardized", "as_is")
    assert gene_scales("auto", counts, None, None, None) == ("standardized",)
    assert gene_scales("auto", dense, None, sparse.eye(20), None) == ("standardized",)
    assert gene_scales("auto", dense, None, None, dense[:, :2]) == ("standardized",)
    assert gene_scales("as_is", counts, None, None, None) == ("as_is",)


def test_the_scale_lead_by_hand():
    """10 of 15 labels held out: the standardised graph right on 6, the other on 9 (the same 6 and 3
    more): 3 more right, it is kept; the other way round it is not; one more (a label each way on top)
    is not enough; nothing held out: no lead."""
    y = np.array([0, 1] * 7 + [0])
    standardised = np.where(np.arange(15) < 10, y, -1)
    standardised[6:10] = 1 - y[6:10]
    as_is = standardised.copy()
    as_is[6:9] = y[6:9]
    assert labels_lead((0.6, 0.5, standardised), (0.9, 0.5, as_is), y) == (True, 3, 0)
    assert labels_lead((0.9, 0.5, as_is), (0.6, 0.5, standardised), y) == (False, 0, 3)
    one_more = standardised.copy()
    one_more[6:8], one_more[0] = y[6:8], 1 - y[0]
    assert labels_lead((0.6, 0.5, standardised), (0.7, 0.5, one_more), y) == (False, 2, 1)
    nothing = np.full(15, -1)
    assert labels_lead((np.nan, np.nan, nothing), (np.nan, np.nan, nothing), y) == (False, 0, 0)
    assert LEAD_BY == 2


def test_a_loud_class_structure_is_read_in_the_genes_units():
    """Module arrays whose markers add variance (seed 0, 10 labels per class): the standardised graph
    finds 30 of the 40 markers (34 before session 31: its label-free turns judged against refitted
    features; 36 before session 33, where its label-free features, which predict 19 held-out labels its R^2's
    miss and miss 1, came to lead: :func:`~ssfs.methods.propagate.free_leads`), the graph in the genes' units
    predicts more held-out labels (0.78 against 0.45) and all 40 markers come first."""
    X, cls, marked = modules_microarray(0)
    y = ten_per_class(cls, 0)
    before = _ranked(X, y, gene_scale="standardized", sample_scale="as_is")
    now = _ranked(X, y, sample_scale="as_is")  # the samples as they are (session 29's fit; test_sample_scale.py)
    assert np.isin(before.order[:40], marked).sum() == 30
    assert now.result.extra["graph"]["gene_scale"] == "as_is"
    assert np.isin(now.order[:40], marked).all()


def _small_arrays(seed: int, hetero: bool, n=40, p=2000, markers=20, effect=1.5):
    """n samples of 2 classes, ``markers`` genes up by ``effect`` sd in each; genes' sd exp(N(0, 0.8))
    with ``hetero``; 3 labels per class."""
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.arange(n) % 2)
    sd = np.exp(rng.normal(0.0, 0.8, p)) if hetero else np.ones(p)
    X = rng.normal(size=(n, p)) * sd + rng.normal(6.0, 2.0, p)
    marked = rng.choice(p, 2 * markers, replace=False)
    for c in range(2):
        genes = marked[c * markers:(c + 1) * markers]
        X[np.ix_(cls == c, genes)] += effect * sd[genes]
    y = np.full(n, -1)
    for c in range(2):
        y[rng.choice(np.flatnonzero(cls == c), 3, replace=False)] = c
    return X, y, marked


def test_one_more_held_out_label_does_not_switch_the_scale():
    """Heteroscedastic genes, 6 labels (seed 4): the graph in the genes' units predicts one more
    held-out label and would find 22 of the 40 markers (6 before its label-free scores took turns, session
    30; 4 before session 33, when those scores followed the loudest genes: nothing rises clearly in the genes'
    units, they are now the standardised span's); the standardised graph is kept and finds 33 (34 before
    session 33: the span's features in turn). The graphs of session 33 (15 neighbours, 200 genes)."""
    from method_settings import former_graphs

    X, y, marked = _small_arrays(4, hetero=True)
    former = former_graphs(X.shape[1])
    as_is = _ranked(X, y, gene_scale="as_is", sample_scale="as_is", **former)
    now = _ranked(X, y, sample_scale="as_is", **former)
    assert np.isin(as_is.order[:40], marked).sum() == 22
    assert now.result.extra["graph"]["gene_scale"] == "standardized"
    assert np.isin(now.order[:40], marked).sum() == 33
    assert np.array_equal(now.scores, _ranked(X, y, gene_scale="standardized", sample_scale="as_is", **former).scores)


def test_counts_are_read_as_before():
    """Counts build their graphs on the Pearson residuals: "auto" is the standardised fit, bit for bit."""
    scen = get_scenario("counts")
    sim = scen.simulate(0, True)
    y = scen.labels(sim, "3/class", seed=0)
    X = sim.expression()
    now, before = _ranked(X, y), _ranked(X, y, gene_scale="standardized")
    assert now.result.extra["graph"]["gene_scale"] == "standardized"
    assert np.array_equal(now.scores, before.scores, equal_nan=True)


def test_the_scale_through_the_command_line(tmp_path, capsys):
    """``ssfs rank --param gene_scale=as_is`` reports the scale in its JSON line's fit; a value that is
    not a scale is refused in one line before the data are read."""
    import pandas as pd

    from ssfs.cli import main

    X, cls, _ = modules_microarray(0)
    y = ten_per_class(cls, 0)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "label", np.where(y >= 0, y.astype(str), ""))
    frame.to_csv(tmp_path / "arrays.csv", index_label="sample")
    assert main(["rank", str(tmp_path / "arrays.csv"), "--label-column", "label", "--param", "gene_scale=as_is",
                 "-o", str(tmp_path / "ranking.tsv")]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fit"]["gene_scale"] == "as_is"
    assert main(["rank", str(tmp_path / "missing.csv"), "--label-column", "label", "--param", "gene_scale=raw"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gene_scale" in err[0] and "raw" in err[0]


def _loud_noise_arrays(seed: int, n=300, p=2000, k=4, per=10, effect=1.5):
    """n samples of k classes; every gene's noise sd exp(N(0, 0.8)) (a 2-sd gene 5x as loud), each class's
    ``per`` markers shifted by +-``effect`` times their own sd: the loudest genes are noise."""
    rng = np.random.default_rng(seed)
    cls = rng.permutation(np.arange(n) % k)
    sd = np.exp(rng.normal(0.0, 0.8, p))
    X = rng.normal(size=(n, p)) * sd + rng.normal(6.0, 2.0, p)
    marked = rng.choice(p, k * per, replace=False)
    for c in range(k):
        genes = marked[c * per:(c + 1) * per]
        X[np.ix_(cls == c, genes)] += effect * sd[genes] * rng.choice([-1.0, 1.0], per)
    return X, marked


def test_rising_dims_by_hand():
    """Parallel analysis with one permutation: unit noise has no component above the permuted columns'
    largest; one direction of 10x the variance on 50 samples' worth of signal has exactly one."""
    from ssfs.methods._shared.representation import signal_pca
    from ssfs.methods._shared.signal import rising_dims

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 300))
    assert rising_dims(X, signal_pca(X, 10))[0] == 0
    X[:, :30] += 3.0 * rng.normal(size=(200, 1))
    assert rising_dims(X, signal_pca(X, 10))[0] == 1


def test_label_free_scores_leave_loud_noisy_genes_for_the_standardised_span():
    """No labels, genes of very different noise (seeds 0, 1): no component of the genes in their own units
    rises above the null (the loudest noisy genes own them), so ``label_free="auto"`` scores every gene's
    share in the standardised signal components ("span"): 38 and 39 of the 40 markers first, where the
    signal in the genes' units ("signal", the former auto) found 2 and 0."""
    from ssfs.methods.propagate import label_free_scores

    for seed, before, now in ((0, 2, 38), (1, 0, 39)):
        X, marked = _loud_noise_arrays(seed)
        top = {how: np.argsort(-label_free_scores(X, 50, how)[0], kind="stable")[:40] for how in ("auto", "signal")}
        assert np.isin(top["signal"], marked).sum() == before
        assert np.isin(top["auto"], marked).sum() == now
        assert np.array_equal(top["auto"], np.argsort(-label_free_scores(X, 50, "span")[0], kind="stable")[:40])
