"""Selection mode (issue #14): resamples, consensus, error bound, workflow."""


import numpy as np
import pandas as pd
import pytest

from ssfs.constraints import Constraints
from ssfs.errors import InputError
from ssfs.experiment.error_bound import error_bound
from ssfs.experiment.selection import aggregate, consensus, ranks_from_order, resamples
from ssfs.io.atomic import write_checked_tsv
from ssfs.runner import run_method


def planted(n=80, p=40, m=4, seed=0, labeled=None):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, p))
    X[:, :m] += 3.0 * y[:, None]
    if labeled is not None:
        yl = np.full(n, -1)
        for c in (0, 1):
            yl[np.flatnonzero(y == c)[:labeled]] = c
        y = yl
    return X, y


def test_cpss_pairs_are_complementary_within_groups():
    y = np.array([0] * 5 + [1] * 4 + [-1] * 7)
    subs = resamples(y, 6, "cpss", np.random.default_rng(1))
    assert len(subs) == 6
    for a, b in zip(subs[::2], subs[1::2], strict=True):
        assert np.intersect1d(a, b).size == 0
        for g, h in ((0, 2), (1, 2), (-1, 3)):  # floor(size/2) of each group in each half
            assert (y[a] == g).sum() == h and (y[b] == g).sum() == h
    with pytest.raises(InputError, match="even"):
        resamples(y, 5, "cpss", np.random.default_rng(1))
    with pytest.warns(UserWarning, match="class\\(es\\) 0 have one labeled sample"):
        lone = resamples(np.array([0, 1, 1, -1]), 2, "cpss", np.random.default_rng(1))
    assert [(0 in h) + (3 in h) for h in lone] == [1, 1]  # sample 0 drawn with the unlabeled sample 3
    boot = resamples(y, 3, "bootstrap", np.random.default_rng(1))
    assert all(b.size == y.size and (y[b] == 0).sum() == 5 and (y[b] == -1).sum() == 7 for b in boot)


def test_aggregations_by_hand():
    R = np.array([[1, 2, 3], [3, 2, 1], [1, 3, 2]], dtype=float)
    assert np.allclose(aggregate(R, "mean_rank"), [5 / 3, 7 / 3, 2])
    assert np.allclose(aggregate(R, "rank_product"), [3 ** (1 / 3), 12 ** (1 / 3), 6 ** (1 / 3)])
    assert np.allclose(aggregate(R, "median_rank"), [1, 2, 2])
    assert np.array_equal(ranks_from_order([2, 0], 4), [2, 3, 1, 3])  # absent: share rank 3


def test_error_bound_by_hand():
    # q = 5, p = 100, pi = 0.9: MB = 25 / (0.8 * 100) = 0.3125;
    # CPSS unimodal (pi > 3/4, B = 50): 25/100 * 4 (1 - 0.9 + 0.01) / (1 + 0.02) = 0.25 * 0.44 / 1.02
    b = error_bound(5, 100, 0.9, 100, "cpss")
    assert b["meinshausen_buhlmann"] == pytest.approx(0.3125)
    assert b["cpss_unimodal"] == pytest.approx(0.25 * 0.44 / 1.02)
    # pi = 0.7, B = 10: 25/100 / (2 (0.4 - 0.05)) = 0.25 / 0.7
    b = error_bound(5, 100, 0.7, 20, "cpss")
    assert b["meinshausen_buhlmann"] == pytest.approx(25 / 40)
    assert b["cpss_unimodal"] == pytest.approx(0.25 / 0.7)
    # the range starts at min(1/2 + (q/p)^2, 1/2 + 1/(2B) + 3/4 (q/p)^2) = min(0.5025, 0.551875) (stabs'
    # um_const): pi = 0.54 gets 0.25 / (2 (0.08 - 0.05)); below 0.5025 no refinement
    assert error_bound(5, 100, 0.54, 20, "cpss")["cpss_unimodal"] == pytest.approx(0.25 / 0.06)
    # and only where 2 pi - 1 - 1/(2B) > 0 (pi > 0.525 for B = 10): no negative "bound"
    assert error_bound(5, 100, 0.5025, 20, "cpss")["cpss_unimodal"] is None
    assert error_bound(5, 100, 0.526, 20, "cpss")["cpss_unimodal"] == pytest.approx(0.25 / (2 * 0.002))
    assert error_bound(5, 100, 0.502, 200, "cpss")["cpss_unimodal"] is None  # B = 100: below 0.5025
    assert error_bound(5, 100, 0.5, 20, "cpss")["meinshausen_buhlmann"] is None
    assert error_bound(5, 100, 0.9, 20, "bootstrap")["meinshausen_buhlmann"] is None


@pytest.mark.parametrize("labeled", [None, 6])
def test_planted_markers_consensus(labeled):
    X, y = planted(labeled=labeled)
    p, m, top = X.shape[1], 4, 4
    cons = Constraints.from_labels(y)
    methods = ("fisher", "cls") if labeled is None else ("cls", "laplacian")
    subs = resamples(y, 20, "cpss", np.random.default_rng(0))
    full, res = {}, {}
    for meth in methods:
        full[meth] = ranks_from_order(run_method(meth, X, y, cons, rng=np.random.default_rng(0)).order, p)
        res[meth] = np.stack([ranks_from_order(run_method(meth, X[s], y[s], cons.subset(s),
                                                          rng=np.random.default_rng(0)).order, p) for s in subs])
    c = consensus(full, res, top)
    table, Z = c.table, c.selected
    assert sorted(table["index"][:m]) == list(range(m))
    assert table["consensus_rank"][:m].tolist() == [1, 2, 3, 4]
    assert (table["frequency"][:m] >= 0.9).all()
    assert table["frequency"][m:].max() <= 0.2
    assert Z.sum(axis=1).tolist() == [top] * 20
    assert np.allclose(table["frequency"], np.sort(Z.mean(axis=0))[::-1])


def test_the_order_below_the_stable_list_is_the_full_data_ranking():
    """5 features, 4 resamples, top 2, one method. Frequencies (hand-counted top-2 sets): f0 1.0,
    f1 0.75, f2 0.25, f3 0, f4 0; full-data ranks f4 1, f3 2, f2 3, f0 4, f1 5. With threshold 0.7
    the stable list f0, f1 comes first by frequency, then f4, f3, f2 by their full-data rank (f2's
    one resample does not lift it over them); without a threshold every feature goes by frequency."""
    res = {"m": np.array([[1, 2, 3, 4, 5], [1, 3, 2, 4, 5], [2, 1, 3, 4, 5], [1, 2, 4, 3, 5]], dtype=float)}
    full = {"m": np.array([4.0, 5.0, 3.0, 2.0, 1.0])}
    c = consensus(full, res, top=2, threshold=0.7)
    assert c.table["index"].tolist() == [0, 1, 4, 3, 2]
    assert c.table["frequency"].tolist() == [1.0, 0.75, 0.0, 0.0, 0.25]
    assert consensus(full, res, top=2).table["index"].tolist() == [0, 1, 2, 4, 3]


def test_frequent_features_of_benchmark_rankings(tmp_path):
    from ssfs.report.selection import frequent_features

    paths = []
    for rep, feats in enumerate((["x", "y", "z"], ["x", "z", "y"], ["y", "x", "w"])):
        p = tmp_path / "ds" / "base" / "rankings" / "m" / f"{rep}.tsv"
        p.parent.mkdir(parents=True, exist_ok=True)
        write_checked_tsv(pd.DataFrame({"feature": feats, "rank": [1, 2, 3]}), p)
        paths.append(p)
    out = frequent_features(paths, top=2)
    assert out["features"].tolist() == ["x (3/3), y (2/3), z (1/3)"]


def test_selection_config_checks():
    from pathlib import Path

    from ssfs.errors import ConfigError
    from ssfs.workflow.config import load_schema, run_parts, validate_config

    schema = load_schema(Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml")
    base = {"datasets": {"wine": {"source": "builtin", "name": "wine"}}, "methods": {"fisher": {}, "pca": {}}}
    cfg = validate_config({**base, "selection": {}}, schema)
    assert cfg["selection"]["methods"] == ["fisher"]  # extraction methods are left out
    assert cfg["selection"]["scheme"] == "cpss" and cfg["selection"]["resamples"] == 20
    with pytest.raises(ConfigError, match="odd"):
        validate_config({**base, "selection": {"resamples": 5}}, schema)
    with pytest.raises(ConfigError, match="components"):
        validate_config({**base, "selection": {"methods": ["pca"]}}, schema)
    assert run_parts(base) == (True, False)
    assert run_parts({**base, "selection": {}}) == (False, True)
    assert run_parts({**base, "selection": {}, "supervision": {}}) == (True, True)


# ---------------------------------------------------------------- the AnnData and command-line doors
def _planted_adata(n=60, p=30, m=4, labeled_per_class=6, seed=0):
    import anndata

    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, p))
    X[:, :m] += 3.0 * (y == "b")[:, None]
    lab = pd.Series(pd.Categorical([np.nan] * n, categories=["a", "b"]))
    for c in ("a", "b"):
        lab.iloc[np.flatnonzero(y == c)[:labeled_per_class]] = c
    obs = pd.DataFrame({"cell_type": lab.to_numpy()}, index=[f"s{i}" for i in range(n)])
    obs["cell_type"] = obs["cell_type"].astype(pd.CategoricalDtype(["a", "b"]))
    return anndata.AnnData(X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(p)]))


def test_tl_select_stable_finds_the_planted_markers_and_matches_the_library():
    from ssfs.experiment.stable_selection import method_settings, selection_options, stable_selection
    from ssfs.tl import select_stable

    ad = _planted_adata()
    select_stable(ad, ("cls", "laplacian"), groupby="cell_type", resamples=10, top=4, threshold=0.8,
                  random_state=3, key_added="planted")
    sel = ad.var.index[ad.var["planted_selected"]].tolist()
    assert sorted(sel) == ["g0", "g1", "g2", "g3"]
    assert sorted(ad.uns["planted"]["features"]) == sel and ad.uns["planted"]["labeled_per_class"] == {"a": 6, "b": 6}
    assert ad.var["planted_rank"].min() == 1 and sorted(ad.var["planted_rank"]) == list(range(1, 31))
    y = np.where(ad.obs["cell_type"].isna(), -1, ad.obs["cell_type"].cat.codes).astype(np.int64)
    table = stable_selection(ad.X, y, Constraints.from_labels(y), method_settings(["cls", "laplacian"]),
                             selection_options(resamples=10, top=4, threshold=0.8), seed=3, dataset="planted",
                             names=np.asarray(ad.var_names), classes=["a", "b"]).table
    np.testing.assert_array_equal(ad.var["planted_frequency"].to_numpy()[table["index"]], table["frequency"])


@pytest.mark.parametrize("argv, message", [
    (["--resamples", "7"], "--resamples must be an integer >= 2 and even for cpss, got 7"),
    (["--threshold", "1.5"], "--threshold must be in (0, 1], got 1.5"),
    (["--param", "cls.k"], "--param expects METHOD.NAME=VALUE"),
    (["--param", "pca.n_components=2"], "parameters given for ['pca'], which are not among the methods"),
    (["--methods", "fisher,fisher"], "selection methods must be distinct"),
    (["--param", "propagate.k=0"], "method 'propagate' parameter k: expected an integer >= 1 or 'auto', got 0"),
])
def test_ssfs_select_refuses_bad_options_before_reading_the_data(capsys, argv, message):
    from ssfs.cli import main

    assert main(["select", "no-such-file.csv", *argv]) == 1  # the file is never opened
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_cpss_draws_a_class_of_one_label_with_the_unlabeled():
    """A class with one labeled sample (1 % labels on a rare type): cpss draws that sample with the
    unlabeled ones, so it is in one half of a pair at most; a warning and the verdict name the class.
    fisher then cannot run on the halves without it (left out, named); propagate answers."""
    from ssfs.experiment.selection import one_label_classes
    from ssfs.tl import select_stable

    y = np.array([0, 0, 0, 1, -1, -1, -1, -1, -1, 2, 2])
    assert one_label_classes(y) == [1]
    with pytest.warns(UserWarning, match=r"class\(es\) 'b' have one labeled sample"):
        halves = resamples(y, 6, "cpss", np.random.default_rng(0), ["a", "b", "c"])
    for a, b in zip(halves[::2], halves[1::2], strict=True):
        assert not np.intersect1d(a, b).size and (3 in a) + (3 in b) <= 1  # complementary; sample 3 at most once
        assert all(((y[h] == c).sum() == 1) for h in (a, b) for c in (0, 2))  # 2-3 labels: 1 each half
        assert a.size + b.size >= 9  # every group halved: one sample of each odd group sits out
    assert sum(3 in h for h in halves) >= 1
    ad = _planted_adata()
    ad.obs.loc[ad.obs["cell_type"] == "b", "cell_type"] = np.nan
    ad.obs.loc["s59", "cell_type"] = "b"  # one labeled sample of class b
    with pytest.warns(UserWarning, match="have one labeled sample"):
        select_stable(ad, ("propagate", "fisher"), groupby="cell_type", resamples=4)
    info = ad.uns["ssfs_selection"]
    assert info["one_label_classes"] == ["b"] and list(info["left_out"]) == ["fisher"]
    assert "Class b had one labeled sample: in each complementary pair" in info["verdict"]


def test_shared_labels_are_in_every_resample_and_auto_rotates_few():
    """labeled "shared": every labeled sample in every resample, the unlabeled ones in complementary
    halves (cpss) or drawn with replacement (bootstrap); "auto" rotates (the next test) when the
    smallest class has fewer than 10 labels, the unlabeled samples are at least as many and there are
    150 samples or more, and only for propagate (or methods auto): fisher would select the same
    labels' chance patterns in every resample."""
    from ssfs.experiment.selection import labeled_resampling
    from ssfs.experiment.selection_defaults import labeled_for

    y = np.array([0] * 3 + [1] * 4 + [-1] * 13)
    halves = resamples(y, 6, "cpss", np.random.default_rng(0), labeled="shared")
    for a, b in zip(halves[::2], halves[1::2], strict=True):
        assert set(range(7)) <= set(a) & set(b)  # every labeled sample in both halves
        assert np.intersect1d(a, b).size == 7 and a.size == b.size == 7 + 6  # 13 unlabeled: 6 + 6, one sits out
    boot = resamples(y, 3, "bootstrap", np.random.default_rng(0), labeled="shared")
    assert all(np.isin(np.arange(7), h).all() and h.size == 20 for h in boot)
    assert labeled_resampling(y, "auto") == "split"  # fewer than 150 samples
    assert labeled_resampling(np.r_[y, [-1] * 130], "auto") == "rotated"
    # the weight propagate gives the propagated samples on all samples decides, with the size:
    few = {n: np.r_[[0] * 3, [1] * 4, [-1] * (n - 7)] for n in (40, 100, 150)}
    assert [labeled_resampling(few[150], "auto", w) for w in (None, 0.49, 0.5)] == ["rotated", "rotated", "shared"]
    assert [labeled_resampling(few[100], "auto", w) for w in (None, 0.49, 0.5)] == ["split", "split", "rotated"]
    assert labeled_resampling(few[40], "auto", 0.9) == "split"  # fewer than 50 samples
    assert labeled_resampling(np.r_[[0] * 10, [1] * 12, [-1] * 128], "auto") == "split"  # 10 in the smallest
    assert labeled_resampling(np.r_[[0] * 9, [1] * 70, [-1] * 78], "auto") == "split"  # labeled samples the majority
    assert labeled_resampling(np.r_[[0] * 9, [1] * 70, [-1] * 79], "auto") == "rotated"
    assert labeled_resampling(np.r_[[0] * 3, [1] * 3, [-1] * 143], "auto") == "split"  # 149 samples
    assert labeled_resampling(np.full(200, -1), "auto") == "split"  # no labels: nothing to share
    for how in ("shared", "rotated"):
        with pytest.raises(InputError, match=f"labeled: {how} resamples the unlabeled samples alone, and every"):
            labeled_resampling(np.array([0, 0, 1, 1]), how)
    assert labeled_for("auto", "auto") == labeled_for("auto", ["propagate"]) == "auto"
    assert labeled_for("auto", ["propagate", "fisher"]) == "split" and labeled_for("shared", ["fisher"]) == "shared"
    # split with the one-label rule, drawn as before (the seed's resamples unchanged)
    assert all((a == b).all() for a, b in zip(resamples(y, 4, "cpss", np.random.default_rng(1)),
                                              resamples(y, 4, "cpss", np.random.default_rng(1), labeled="split"),
                                              strict=True))


@pytest.mark.parametrize("scheme", ["cpss", "bootstrap"])
def test_rotated_labels_sit_out_in_turn(scheme):
    """labeled "rotated": with 20 resamples and threshold 0.8 each labeled sample must sit out of
    20 - 16 + 1 = 5; a class of m labels leaves out d = ceil(5 m / 20) in each resample (at most
    m - 2), the window moving by d: 3 labels -> d = 1 (in 13 or 14 of 20), 5 -> 2 (in 12 of 20
    exactly), 9 -> 3 (in 13 or 14); a class of 2 is in every resample. Both halves of a pair hold
    the unlabeled samples' complementary halves, and leave out different labeled samples.
    Threshold 0.6: 9 resamples out, 3 labels -> still 1 (m - 2), 9 -> ceil(81 / 20) = 5 (in 8 or 9)."""
    from ssfs.experiment.selection import resamples_sat_out

    y = np.r_[[0] * 3, [1] * 5, [2] * 2, [3] * 9, [-1] * 41]
    sets = resamples(y, 20, scheme, np.random.default_rng(3), labeled="rotated")
    lab = np.flatnonzero(y >= 0)
    present = np.array([np.isin(lab, r) for r in sets]).sum(axis=0)
    by_class = {c: sorted(present[y[lab] == c].tolist()) for c in range(4)}
    assert set(by_class[0]) <= {13, 14} and by_class[1] == [12] * 5 and by_class[2] == [20, 20]
    assert set(by_class[3]) <= {13, 14} and sum(by_class[3]) == 9 * 20 - 20 * 3
    assert all(np.isin(lab[y[lab] == c], r).sum() >= 2 for r in sets for c in range(4))
    assert resamples_sat_out(20, 0.8) == 5 and resamples_sat_out(20, 0.6) == 9 and resamples_sat_out(10, 1.0) == 1
    if scheme == "cpss":
        unl = np.flatnonzero(y < 0)
        for a, b in zip(sets[::2], sets[1::2], strict=True):
            assert np.intersect1d(np.intersect1d(a, b), unl).size == 0 and np.isin(unl, a).sum() == 20
            assert not np.array_equal(np.setdiff1d(lab, a), np.setdiff1d(lab, b))
    low = resamples(y, 20, scheme, np.random.default_rng(3), labeled="rotated", threshold=0.6)
    present = np.array([np.isin(lab, r) for r in low]).sum(axis=0)
    assert set(present[y[lab] == 3]) <= {8, 9} and present[y[lab] == 3].sum() == 9 * 20 - 20 * 5
    assert set(present[y[lab] == 0]) <= {13, 14}  # 3 labels: 1 out (m - 2), so above 0.6: as documented


def test_r_concave_bound_is_the_tightest_and_follows_stabs_rules():
    """Shah & Samworth (2013): under r-concavity the bound is below the unimodal one, itself below
    Meinshausen & Buhlmann's; stabs' D is 1 below the tail's start (so the bound is at most p) and
    undefined when theta is too large."""
    from ssfs.experiment.error_bound import _r_concave_tail, r_concave_bound

    for q, p, pi, n in [(10, 40, 0.8, 20), (10, 765, 0.8, 20), (5, 100, 0.9, 100), (5, 100, 0.7, 20)]:
        b = error_bound(q, p, pi, n, "cpss")
        assert 0 < b["cpss_r_concave"] < b["cpss_unimodal"] < b["meinshausen_buhlmann"], b
    assert _r_concave_tail(0.1, 2, 10, -0.5) == 1.0  # which < ceil(2 theta B) + 1 = 3
    assert _r_concave_tail(0.6, 20, 10, -0.5) is None  # ceil(12) + 1 > B
    assert _r_concave_tail(0.45, 10, 10, -0.5) is None  # ceil(9) + 1 = B: stabs has no interval left
    assert r_concave_bound(10, 40, 0.8, 10) == pytest.approx(1.0455761, rel=1e-4)  # pinned (default run)
    assert error_bound(5, 100, 0.9, 20, "bootstrap")["cpss_r_concave"] is None


# stabs 0.6-4 (Hofner & Hothorn), tests/regtest-inference.Rout.save: stabsel_parameters(p = 100,
# cutoff = 0.6, q = 1..10, B = 50, sampling.type = "SS", assumption = "unimodal" / "r-concave")
STABS_UNIMODAL = [0.02631579, 0.1052632, 0.2368421, 0.4210526, 0.6578947, 0.9473684, 1.289474, 1.684211,
                  2.131579, 2.631579]
STABS_R_CONCAVE = [0.006971364, 0.03342845, 0.08691176, 0.1637231, 0.2605329, 0.3820466, 0.5295188,
                   0.7042719, 0.9077127, 1.141338]


@pytest.mark.parametrize("q", range(1, 11))
def test_cpss_bounds_equal_stabs_saved_output(q):
    """B = 50 pairs = 100 resamples. Unimodal: q^2/p / (2 (2 pi - 1 - 1/(2B))) exactly; r-concave: the
    same numerical supremum (stabs' optimize stops within 1e-4 of an end point: ours is never below,
    at most 0.4 % above for q <= 3 where the maximum is at the end point, else within 1e-5)."""
    b = error_bound(q, 100, 0.6, 100, "cpss")
    assert b["cpss_unimodal"] == pytest.approx(STABS_UNIMODAL[q - 1], rel=1e-6)
    assert b["cpss_unimodal"] == pytest.approx(q * q / 100 / (2 * (0.2 - 0.01)))
    ref = STABS_R_CONCAVE[q - 1]
    assert ref * (1 - 1e-6) <= b["cpss_r_concave"] <= ref * (1.004 if q <= 3 else 1 + 1e-5)


def test_r_concave_bound_stabs_edge_cases():
    """stabs' saved outputs (p = 100, B = 50) at other thresholds and q, and its refusals."""
    from ssfs.experiment.error_bound import r_concave_bound

    assert r_concave_bound(30, 100, 0.6, 50) == pytest.approx(16.24975, rel=1e-6)
    assert r_concave_bound(10, 100, 0.62, 50) == pytest.approx(0.8971682, rel=1e-5)
    assert r_concave_bound(10, 100, 0.61, 50) == pytest.approx(1.005863, rel=1e-5)
    # below 1/2 (only the r-concave bound applies there; stabs: cutoff must exceed q/p)
    assert r_concave_bound(10, 100, 0.37, 50) == pytest.approx(4.988848, rel=1e-5)
    assert r_concave_bound(10, 100, 0.2, 50) == 100.0  # D = 1: the trivial bound p
    assert r_concave_bound(10, 100, 0.1, 50) is None  # threshold <= q/p
    b = error_bound(10, 100, 0.37, 100, "cpss")
    assert b["meinshausen_buhlmann"] is None and b["cpss_unimodal"] is None
    assert b["cpss_r_concave"] == pytest.approx(4.988848, rel=1e-5) and "at most 4.99 if" in b["statement"]
    # pi = 1: the maximum is at an end point; stabs stops short of it (0.005184816), we take it
    assert 0.005184816 < r_concave_bound(10, 100, 1.0, 50) == pytest.approx(0.0054906, rel=1e-4)
    # stabs' maxQ(100, 50) = 49: no bound above it
    assert r_concave_bound(49, 100, 0.9, 50) is not None and r_concave_bound(50, 100, 0.9, 50) is None


def test_ssfs_select_partial_labels_constraints_and_the_selection_only_report(tmp_path, capsys):
    """``ssfs select`` on a CSV whose unlabeled samples say "unknown", with a must-link file: the
    planted markers are the list; the selection-only report shows the Datasets table."""
    import json

    from ssfs.cli import main
    from ssfs.report.selection import datasets_table, run_selection_report

    X, y = planted(n=60, p=20, m=3, seed=1)
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(20)], index=[f"s{i}" for i in range(60)])
    lab = np.where(y == 0, "a", "b").astype(object)
    lab[np.r_[8:30, 38:60]] = "unknown"  # 8 labels per class
    df.insert(0, "label", lab)
    df.index.name = "sample"
    df.to_csv(tmp_path / "data.csv")
    pd.DataFrame({"sample_a": ["s10", "s40"], "sample_b": ["s11", "s41"], "kind": ["ML", "ML"]}).to_csv(
        tmp_path / "pairs.tsv", sep="\t", index=False)
    out = tmp_path / "results" / "planted" / "selection"
    assert main(["select", str(tmp_path / "data.csv"), "--label-column", "label", "--unlabeled-value", "unknown",
                 "--constraints", str(tmp_path / "pairs.tsv"), "--methods", "cls,fisher", "--resamples", "6",
                 "--top", "3", "--threshold", "0.8", "--name", "planted", "-o", str(out), "--no-progress",
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert sorted(printed["features"]) == ["g0", "g1", "g2"]
    s = json.loads((out / "summary.json").read_text())
    assert s["labeled_per_class"] == {"a": 8, "b": 8} and s["n_unlabeled"] == 44 and s["n_features"] == 20
    t = pd.read_csv(out / "consensus.tsv", sep="\t")
    assert sorted(t["feature"][:3]) == ["g0", "g1", "g2"] and t["frequency"][3:].max() < 0.8
    ds = datasets_table(tmp_path / "results", ["planted"])
    assert ds.to_dict("records") == [{"dataset": "planted", "n_samples": 60, "n_features": 20, "n_classes": 2,
                                      "n_unlabeled": 44, "n_batches": 1, "class_counts": "8:8"}]
    cfg = {"report": {"title": "sel"}, "datasets": {"planted": {}},
           "supervision": {"constraints": {"mode": "all_pairs"}}, "selection": {"top": 3, "threshold": 0.8}}
    run_selection_report(tmp_path / "results" / "report.html", cfg)
    html = (tmp_path / "results" / "report.html").read_text()
    assert html.index("<section id='summary'") < html.index("<h2 id='datasets'>Datasets</h2>") < html.index(
        "<h2 id='config'>")
    assert "<td>planted</td><td>60</td><td>20</td><td>2</td><td>44</td><td>1</td><td>8:8</td>" in html


def test_nothing_selected_says_why_through_every_door(tmp_path, capsys):
    """Pure noise: no feature reaches the threshold; summary.json, ``ssfs select`` (stderr), the
    report and ``tl.select_stable`` (a warning) name the most frequent feature and each
    method's best frequency; with planted markers there is no note."""
    import json

    from ssfs.cli import main
    from ssfs.report.selection import run_selection_report
    from ssfs.tl import select_stable

    ad = _planted_adata(p=40, m=0, seed=5)  # no marker
    df = pd.DataFrame(ad.X, columns=ad.var_names, index=ad.obs_names)
    df.insert(0, "label", ad.obs["cell_type"].astype(object).fillna("").to_numpy())
    df.to_csv(tmp_path / "noise.csv")
    out = tmp_path / "results" / "noise" / "selection"
    assert main(["select", str(tmp_path / "noise.csv"), "--label-column", "label", "--methods", "fisher,laplacian",
                 "--resamples", "6", "--top", "3", "--threshold", "0.9", "--name", "noise", "-o", str(out),
                 "--no-progress"]) == 0
    printed, err = capsys.readouterr()
    s = json.loads((out / "summary.json").read_text())
    t = pd.read_csv(out / "consensus.tsv", sep="\t")
    assert s["n_selected"] == 0 and t["frequency"].max() < 0.9
    first = t["feature"][int(t["frequency"].idxmax())]
    assert s["note"].startswith(f"no feature reached selection frequency 0.9: the most frequent, {first}, was in "
                                f"the top 3 in a share {t['frequency'].max():.2f} of the 6 resamples; each method "
                                f"alone reaches at most fisher {t['frequency_fisher'].max():.2f}")
    assert s["verdict"].startswith("No feature reached selection frequency 0.9: the most frequent")
    assert s["note"][1:] in " ".join(printed.split()) and f"ssfs select: {s['note']}" in err
    cfg = {"report": {"title": "sel"}, "datasets": {"noise": {}},
           "supervision": {"constraints": {"mode": "all_pairs"}}, "selection": {"top": 3, "threshold": 0.9}}
    run_selection_report(tmp_path / "results" / "report.html", cfg)
    assert "<b>Answer.</b> No feature reached selection frequency 0.9" in (
        tmp_path / "results" / "report.html").read_text()
    with pytest.warns(UserWarning, match="select_stable: no feature reached selection frequency 0.9"):
        select_stable(ad, ("fisher", "laplacian"), groupby="cell_type", resamples=6, top=3, threshold=0.9)
    planted_ad = _planted_adata()
    select_stable(planted_ad, ("cls",), groupby="cell_type", resamples=6, top=4, threshold=0.8, key_added="p")
    assert planted_ad.uns["p"]["n_selected"] == 4 and planted_ad.uns["p"]["note"] is None


def test_a_warning_of_every_resample_is_shown_once_with_its_count():
    import warnings

    from ssfs.experiment.stable_selection import warn_once_per_kind

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for pct in (12, 25, 50):
            warnings.warn(f"propagate: the graph agrees in {pct}% (chance 25%)", UserWarning, stacklevel=1)
        warnings.warn("cls: one class only", RuntimeWarning, stacklevel=1)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        warn_once_per_kind(caught, 20, "resamples")
    assert [str(w.message) for w in shown] == [
        "propagate: the graph agrees in 12% (chance 25%) (and alike in 2 more of 20 resamples)",
        "cls: one class only"]
    assert [w.category for w in shown] == [UserWarning, RuntimeWarning]
