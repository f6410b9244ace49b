"""The EFSIS rankers' shared-work paths over many bootstrap resamples (issue #16) against
one run per resample, and their compiled kernels against numpy definitions."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs.methods import efsis, geode, infogain, sam
from ssfs.methods._shared import ranker_kernels
from ssfs.methods._shared.stability import efsis_stability, efsis_stability_of_ranks
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
    assert efsis.SPLIT  # some rankers' resamples are split between the threads
    for n_jobs in (2, 3, 8):  # parts of 3, 2 and 1 resamples
        more = efsis.bootstrap_chunk(X, y, boots, seeds, n_jobs=n_jobs)
        assert list(more) == list(efsis.EFSIS_RANKERS)
        for name in one:
            assert np.array_equal(one[name], more[name], equal_nan=True), (name, n_jobs)
    empty = efsis.bootstrap_chunk(X, y, boots[:0], seeds[:0], n_jobs=2)  # a member chunk can be empty
    assert {name: S.shape for name, S in empty.items()} == {name: (0, 80) for name in efsis.EFSIS_RANKERS}


def test_a_resamples_sam_scores_do_not_depend_on_the_others():
    """Class sums row by row (no matrix product whose blocking depends on the number of
    rows): scoring the resamples in parts, as the threads do, changes no bit."""
    X, y = _data(n=33, p=300, K=3, seed=12)
    boots, _ = efsis.draw_bootstraps(y, 7, np.random.default_rng(12))
    W = np.stack([np.bincount(b, minlength=y.size) for b in boots]).astype(float)
    sums, sq = ranker_kernels.class_sums(X, y, 3, W, threads=2)
    onehot = (y[:, None] == np.arange(3)).astype(float)
    assert np.allclose(sums, np.einsum("rn,nk,nf->rkf", W, onehot, X), rtol=1e-13)
    assert np.allclose(sq, np.einsum("rn,nk,nf->rkf", W, onehot, X * X), rtol=1e-13)
    for a, b in ((0, 1), (1, 4), (4, 7)):
        part = ranker_kernels.class_sums(X, y, 3, W[a:b])
        assert np.array_equal(part[0], sums[a:b]) and np.array_equal(part[1], sq[a:b])
    whole = sam.bootstrap_scores(X, y, boots)
    assert np.array_equal(np.vstack([sam.bootstrap_scores(X, y, boots[:3]), sam.bootstrap_scores(X, y, boots[3:])]),
                          whole)


def _value_boundaries(XT, order, codes, out):
    """Every cut between distinct values (no boundary-point pruning)."""
    xs = np.take_along_axis(XT, order, axis=1)
    out[:, :-1] = xs[:, 1:] != xs[:, :-1]
    out[:, -1] = False


@pytest.mark.parametrize("K", [2, 3])
def test_infogain_searching_boundary_points_only_changes_nothing(K, monkeypatch):
    """Fayyad & Irani's Theorem 1: cuts inside a run of one class are skipped; the gains of
    every resample stay the same to the last bit (class runs, tied values, duplicates)."""
    rng = np.random.default_rng(30 + K)
    n, p = 30, 400
    y = np.sort(np.arange(n) % K)  # long runs of one class along the planted features
    X = rng.normal(size=(n, p))
    X[:, :100] += 2.0 * y[:, None]
    X[:, 100:200] = np.round(X[:, 100:200])  # blocks of equal values, some of one class
    X[:, 200:250] = np.round(X[:, 200:250] + 3 * y[:, None])  # pure blocks in a row
    boots, _ = efsis.draw_bootstraps(y, 9, rng)
    W = np.stack([np.bincount(b, minlength=n) for b in boots])
    pruned = infogain._mdl_gain(X, y, W)
    one = infogain.information_gain(X, y)
    XT = np.ascontiguousarray(X.T)
    order = np.argsort(XT, axis=1)
    cand, every = np.empty((p, n), bool), np.empty((p, n), bool)
    ranker_kernels._cuts(XT, order, y, cand)
    _value_boundaries(XT, order, y, every)
    assert (cand <= every).all() and cand.sum() < 0.8 * every.sum()  # fewer cuts searched
    monkeypatch.setattr(ranker_kernels, "_cuts", _value_boundaries)
    assert np.array_equal(infogain._mdl_gain(X, y, W), pruned)
    assert np.array_equal(infogain.information_gain(X, y), one)
    assert pruned[:, :100].mean() > 5 * pruned[:, 250:].mean()


def _average_ranks_nan_last(keys):
    """scipy's average ranks of each row (R's rank), NaN after every number and tied among themselves."""
    from scipy.stats import rankdata

    out = np.empty(keys.shape)
    for r, row in enumerate(keys):  # loop over rows
        nan = np.isnan(row)
        out[r, ~nan] = rankdata(row[~nan])
        out[r, nan] = (~nan).sum() + (nan.sum() + 1) / 2
    return out


def test_packed_words_give_the_stable_argsort_and_ranks(monkeypatch):
    """stable_argsort through packed 64-bit words (large inputs) equals numpy's stable argsort,
    and rank_matrix gives R's average ranks (scipy's rankdata):
    ties by position, -0.0 equal to 0.0, infinities, keys differing in the truncated bits
    (checked in full; a disorder falls back), NaN (the argsort path)."""
    from ssfs import _sort_kernels, ranking

    rng = np.random.default_rng(31)
    monkeypatch.setattr(ranking, "PACKED_MIN", 0)
    eps = np.finfo(float).eps
    cases = [rng.normal(size=(4, 500)), np.round(rng.normal(size=(3, 300))),
             rng.choice([-0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, 5e-324], size=(3, 200)),
             1.0 + rng.integers(0, 6, size=(3, 40)) * eps, rng.normal(size=(2, 70)) * 1e300,
             np.where(rng.random((2, 90)) < 0.2, np.nan, rng.normal(size=(2, 90)))]
    fell_back = 0
    for S in cases:
        for higher in (True, False):
            keys = -S if higher else S
            assert np.array_equal(ranking.rank_matrix(S, higher), _average_ranks_nan_last(keys))
            assert np.array_equal(ranking.stable_argsort(keys), np.argsort(keys, axis=1, kind="stable"))
            if not np.isnan(keys).any():
                packed = _sort_kernels.packed_order(keys)
                fell_back += packed is None
                assert packed is None or np.array_equal(packed, np.argsort(keys, axis=1, kind="stable"))
    assert fell_back >= 1  # 1 + k eps: equal truncated words out of order on their full keys


def test_efsis_threads_default_to_the_jobs(monkeypatch):
    """efsis and bootstrap_rank use the job's threads ($SSFS_THREADS) unless n_jobs is given, through
    run_method and the member chunks alike; the result is the same."""
    from ssfs.runner import combine_member_chunks, run_member_chunk, run_method

    X, y = _data(n=36, p=80, seed=13)
    seen = []
    side_by_side = efsis._side_by_side
    monkeypatch.setattr(efsis, "_side_by_side", lambda *a: seen.append(a[5]) or side_by_side(*a))
    one = run_method("efsis", X, y, rng=3, n_boot=6)
    assert seen == []
    monkeypatch.setenv("SSFS_THREADS", "2")
    two = run_method("efsis", X, y, rng=3, n_boot=6)
    assert seen == [2] and np.array_equal(one.scores, two.scores) and np.array_equal(one.order, two.order)
    parts = [run_member_chunk("efsis", X, y, rng=3, chunk=c, n_chunks=2, n_boot=6) for c in range(2)]
    assert seen == [2, 2, 2]
    assert np.array_equal(combine_member_chunks("efsis", X, y, rng=3, parts=parts, n_boot=6).scores, one.scores)
    assert np.array_equal(run_method("efsis", X, y, rng=3, n_boot=6, n_jobs=1).scores, one.scores)
    assert seen == [2, 2, 2]  # n_jobs given: one thread
    base = run_method("bootstrap_rank", X, y, rng=3, n_boot=6, base="sam")  # one ranker: its resamples in threads
    monkeypatch.setenv("SSFS_THREADS", "1")
    assert np.array_equal(run_method("bootstrap_rank", X, y, rng=3, n_boot=6, base="sam").scores, base.scores)
