"""The EFSIS rankers' shared-work paths over many bootstrap resamples (issue #16) against
one run per resample, and their compiled kernels against numpy definitions."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs.experiment.stability import efsis_stability, efsis_stability_of_ranks
from ssfs.methods import efsis, geode, infogain, sam
from ssfs.methods._shared import ranker_kernels
from ssfs.ranking import rank_matrix, stable_argsort
from ssfs.registry import get_method


def _data(n=40, p=60, K=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rng.shuffle(y)
    scale = rng.gamma(2.0, 1.0, size=p)
    X = rng.normal(size=(n, p)) * scale
    X[:, :5] += 3.0 * scale[:5] * (y[:, None] > 0)  # planted
    X[:, 5:10] = np.round(X[:, 5:10])  # ties between samples
    X[:, 10] = 3.0  # constant
    return X, y


def _per_resample(name, X, y, boots, seeds):
    spec = get_method(name)
    return np.stack([efsis._score_once(spec, {}, X[b], y[b], s) for b, s in zip(boots, seeds, strict=True)])


@pytest.mark.parametrize("K,stratified", [(2, True), (2, False), (3, True)])
def test_infogain_bootstraps_equal_one_run_per_resample_exactly(K, stratified, monkeypatch):
    X, y = _data(K=K, seed=K)
    boots, seeds = efsis.draw_bootstraps(y, 12, np.random.default_rng(1), stratified)
    batch = infogain.bootstrap_scores(X, y, boots)
    assert np.array_equal(batch, _per_resample("infogain", X, y, boots, seeds))
    assert batch[:, :5].mean() > 5 * batch[:, 11:].mean() and (batch[:, 10] == 0).all()
    monkeypatch.setattr(ranker_kernels, "TWO_CLASS_TABLE", 0)  # the general recursion for every cut
    assert np.array_equal(infogain.bootstrap_scores(X, y, boots), batch)
    monkeypatch.setattr(infogain, "MAX_BLOCK_ELEMENTS", 3 * X.shape[0])  # blocks of three features
    assert np.array_equal(infogain.bootstrap_scores(X, y, boots, threads=2), batch)


@pytest.mark.parametrize("K", [2, 3])
def test_sam_geode_bootstraps_match_one_run_per_resample(K):
    X, y = _data(n=45, K=K, seed=10 + K)
    boots, seeds = efsis.draw_bootstraps(y, 8, np.random.default_rng(2))
    for module, name in ((sam, "sam"), (geode, "geode")):
        batch = module.bootstrap_scores(X, y, boots, seeds, threads=2)
        ref = _per_resample(name, X, y, boots, seeds)
        assert np.allclose(batch, ref, rtol=1e-9, atol=1e-12, equal_nan=True), name
        assert np.median(batch[:, :5]) > np.quantile(batch[:, 11:], 0.9), name
    loose = efsis.draw_bootstraps(y, 8, np.random.default_rng(3), stratified=False)[0]
    assert sam.bootstrap_scores(X, y, loose) is None  # class sizes differ: one run per resample
    assert geode.bootstrap_scores(X[:, :30], y, boots) is None  # n > p: one run per resample


def test_estimate_s0_of_many_rows_equals_each_row_alone():
    X, y = _data(n=30, p=400, seed=4)
    boots, _ = efsis.draw_bootstraps(y, 6, np.random.default_rng(4))
    W = np.stack([np.bincount(b, minlength=y.size) for b in boots])
    numer, sd = sam.sam_parts(X, y, np.bincount(y), W)
    s0, perc = sam.estimate_s0(numer, sd, threads=2)
    for r in range(6):
        assert (s0[r], perc[r]) == sam.estimate_s0(numer[r], sd[r])
    assert (s0 > 0).all()


def _mad_cv_numpy(numer, sd, w, starts):
    out = []
    for wj in w:
        mads = []
        for a, b in zip(starts[:-1], starts[1:], strict=True):
            with np.errstate(divide="ignore", invalid="ignore"):
                v = numer[a:b] / (sd[a:b] + wj)
            v = v[np.isfinite(v)]
            if v.size:
                mads.append(np.median(np.abs(v - np.median(v))))
        out.append(np.std(mads, ddof=1) / np.mean(mads) if len(mads) > 1 else np.nan)
    return np.array(out)


def test_binned_mad_cv_matches_numpy_medians():
    rng = np.random.default_rng(5)
    p = 300
    numer = np.round(rng.normal(size=(3, p)), 1)  # ties
    sd = np.sort(rng.gamma(2.0, 1.0, size=(3, p)), axis=1)
    sd[:, :7] = 0.0  # numer / 0: not finite at w = 0, left out
    numer[:, 0] = 0.0  # 0 / 0
    w = np.c_[np.zeros(3), np.quantile(sd, [0.1, 0.5, 0.9], axis=1).T]
    starts = np.array([[0, 1, 3, 7, 50, 51, 200, 300], [0, 100, 200, 300, 300, 300, 300, 300],
                       [0, 150, 151, 152, 153, 154, 155, 300]])
    got = ranker_kernels.binned_mad_cv(numer, sd, w, starts, threads=2)
    for r in range(3):
        assert np.allclose(got[r], _mad_cv_numpy(numer[r], sd[r], w[r], starts[r]), rtol=1e-12, equal_nan=True)


def test_ranges_and_pair_differences_kernels():
    rng = np.random.default_rng(6)
    X = np.round(rng.normal(size=(9, 13)), 1)
    boots, _ = efsis.draw_bootstraps(np.arange(9) % 2, 5, rng)
    W = np.stack([np.bincount(b, minlength=9) for b in boots])
    ref = np.stack([X[b].max(axis=0) - X[b].min(axis=0) for b in boots])
    assert np.array_equal(ranker_kernels.resample_ranges(X, W, threads=2), ref)
    U, V = np.triu_indices(9, 1)
    out = ranker_kernels.pair_absdiff(X, 3, 11, np.empty((U.size, 8)), threads=2)
    assert np.array_equal(out, np.abs(X[U, 3:11] - X[V, 3:11]))


def test_stable_argsort_is_numpys_stable_sort():
    rng = np.random.default_rng(7)
    for trial in range(60):
        K = rng.normal(size=(3, int(rng.integers(1, 200))))
        if trial % 2:
            K = np.round(K)
        for value, share in ((np.nan, 0.1), (np.inf, 0.05), (-0.0, 0.1)):
            if trial % 3 == 0:
                K[rng.random(K.shape) < share] = value
        assert np.array_equal(stable_argsort(K), np.argsort(K, axis=-1, kind="stable"))
        assert np.array_equal(stable_argsort(K[0]), np.argsort(K[0], kind="stable"))


def test_efsis_stability_from_ranks_equals_selected_sets():
    R = rank_matrix(np.round(np.random.default_rng(8).normal(size=(7, 90)), 1), True)
    ts = [1, 5, 30, 90]
    assert efsis_stability_of_ranks(R, ts) == [efsis_stability(t >= R) for t in ts]


def test_rankers_side_by_side_give_the_sequential_scores():
    X, y = _data(n=36, p=80, seed=9)
    boots, seeds = efsis.draw_bootstraps(y, 6, np.random.default_rng(9))
    one = efsis.bootstrap_chunk(X, y, boots, seeds, n_jobs=1)
    two = efsis.bootstrap_chunk(X, y, boots, seeds, n_jobs=2)
    assert list(two) == list(efsis.EFSIS_RANKERS)
    for name in one:
        assert np.array_equal(one[name], two[name], equal_nan=True), name
