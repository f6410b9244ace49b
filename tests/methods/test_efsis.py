"""EFSIS ensemble: aggregation in log space, eq. 1-3 on hand-made rankings, resample
handling (stratified, shared across rankers), reproducibility under chunking/threads,
the shared-work ReliefF path, and the baseline / generic ensembles."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import rankdata

from ssfs.errors import InputError, MethodError
from ssfs.methods import efsis, relieff
from ssfs.methods._labeled import labeled
from ssfs.methods._shared.aggregation import (
    aggregate_ranks,
    log_rank_product,
    rank_rows,
)
from ssfs.runner import run_method

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _data(n=30, p=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, p))
    X[:, :5] += 1.5 * y[:, None]
    return X, y


def test_rank_rows_ties_and_nan():
    """Ties share their average rank (R's rank(ties.method = "average")), NaN last; scores equal
    up to round-off tie too (a sum in another order differs in the last bit)."""
    R = rank_rows([[3.0, 1.0, 3.0, np.nan]], higher_is_better=True)
    assert R.tolist() == [[1.5, 3, 1.5, 4]]
    assert rank_rows([[3.0, 1.0, 3.0, np.nan]], higher_is_better=False).tolist() == [[2.5, 1, 2.5, 4]]
    assert rank_rows([[0.1 + 0.2, 0.3, 0.5]], higher_is_better=True).tolist() == [[2.5, 2.5, 1]]
    assert rank_rows([[1.0, 1.0 + 1e-9, 0.5]], higher_is_better=True).tolist() == [[2, 1, 3]]
    untied = rank_rows([[3.0, 1.0, 2.0]], higher_is_better=True)
    assert untied.dtype == np.int64 and untied.tolist() == [[1, 3, 2]]


def test_log_rank_product_orders_like_exact_product_without_overflow():
    rng = np.random.default_rng(1)
    p, M = 300, 50
    R = np.vstack([rng.permutation(p) + 1 for _ in range(M)])
    exact = [math.prod(int(v) for v in R[:, f]) for f in range(p)]  # python ints, no overflow
    ours = log_rank_product(R)
    assert np.all(np.isfinite(ours))
    exact_order = sorted(range(p), key=lambda f: (exact[f], f))
    assert np.argsort(ours, kind="stable").tolist() == exact_order
    assert aggregate_ranks(R, "mean").tolist() == pytest.approx(R.mean(axis=0).tolist())
    with pytest.raises(InputError):
        aggregate_ranks(R, "borda")
    big = np.full((100, 3), 12625)
    big[:, 1] = 12000
    with np.errstate(over="ignore"):
        assert np.isinf(np.prod(big.astype(float), axis=0)).all()  # the naive product overflows
    lg = log_rank_product(big)
    assert np.all(np.isfinite(lg)) and lg[1] < lg[0] == lg[2]


def test_efsis_from_scores_follows_eq_1_to_3():
    rng = np.random.default_rng(2)
    M, p, t = 6, 12, 3
    mats = {"a": rng.normal(size=(M, p)), "b": rng.normal(size=(M, p)) + np.arange(p) * 0.3}
    higher = {"a": True, "b": False}
    res = efsis.efsis_from_scores(mats, higher, t, weights="paper")
    manual_log = np.zeros(p)
    stabs = {}
    for nm, mat in mats.items():
        R = np.array([rankdata(-s if higher[nm] else s, method="ordinal") for s in mat])
        prod = [math.prod(int(v) for v in R[:, f]) for f in range(p)]
        L = sorted(range(p), key=lambda f: (prod[f], f))  # eq. 2
        pos = np.empty(p, int)
        pos[L] = np.arange(1, p + 1)
        assert res.sub_final_ranks[nm].tolist() == pos.tolist()
        tops = [set(np.flatnonzero(R[m] <= t)) for m in range(M)]
        F = set().union(*tops)
        S = sum(sum(f in T for T in tops) / M for f in F) / len(F)  # eq. 1
        stabs[nm] = S
        assert res.stability[nm][0] == pytest.approx(S)
        manual_log += (1 - S) * np.log(pos)  # eq. 3
    assert np.allclose(res.log_scores[0], manual_log)
    assert res.orders[0].tolist() == np.argsort(manual_log, kind="stable").tolist()
    r2 = efsis.efsis_from_scores(mats, higher, t, weights="stability_rank")
    order = rankdata([-stabs["a"], -stabs["b"]])
    assert [r2.exponents["a"][0], r2.exponents["b"][0]] == order.tolist()


def test_stratified_bootstraps_keep_class_sizes_and_are_shared():
    codes = np.array([0] * 7 + [1] * 5)
    boots, seeds = efsis.draw_bootstraps(codes, 20, np.random.default_rng(3))
    assert boots.shape == (20, 12) and seeds.shape == (20,)
    assert all(np.bincount(codes[b]).tolist() == [7, 5] for b in boots)
    b2, _ = efsis.draw_bootstraps(codes, 20, np.random.default_rng(3), stratified=False)
    assert not all(np.bincount(codes[b], minlength=2).tolist() == [7, 5] for b in b2)


def test_efsis_reproducible_under_threads_and_chunks():
    X, y = _data()
    a = efsis.efsis_fold(X, y, 7, n_boot=6, top_percent=[5, 10])
    b = efsis.efsis_fold(X, y, 7, n_boot=6, top_percent=[5, 10], n_jobs=2)
    c = efsis.efsis_fold(X, y, 7, n_boot=6, top_percent=[5, 10], chunk_size=4)
    for other in (b, c):
        for j in range(2):
            assert np.array_equal(a.orders[j], other.orders[j])
            assert np.allclose(a.log_scores[j], other.log_scores[j], rtol=0, atol=1e-12)
        assert a.stability == other.stability
    assert a.top_k == [3, 6]
    assert set(a.orders[0][:5]) & set(range(5))
    d = efsis.efsis_fold(X, y, 7, n_boot=6, boot_indices=a.extra["boots"])
    assert np.array_equal(d.extra["boots"], a.extra["boots"])


def test_chunks_combine_to_full_run():
    X, y = _data(seed=4)
    XL, codes, _ = labeled(X, y, method="t")
    boots, seeds = efsis.draw_bootstraps(codes, 5, np.random.default_rng(0))
    full = efsis.bootstrap_chunk(XL, codes, boots, seeds)
    parts = [efsis.bootstrap_chunk(XL, codes, boots[i:i + 2], seeds[i:i + 2]) for i in range(0, 5, 2)]
    comb = efsis.combine_chunks(parts)
    for nm in full:
        assert np.allclose(full[nm], comb[nm], rtol=0, atol=1e-12), nm


@pytest.mark.parametrize("kw", [{}, {"weighting": "exprank", "k": 7, "sigma": 2.0}, {"instances": "sqrt"}])
def test_relieff_shared_work_equals_per_resample(kw):
    X, y = _data(n=24, p=40, seed=5)
    codes = y
    boots, seeds = efsis.draw_bootstraps(codes, 4, np.random.default_rng(1))
    batch = relieff.bootstrap_scores(X, codes, boots, seeds, **kw)
    for m in range(4):
        b = boots[m]
        one = relieff.relieff_scores(X[b], codes[b], np.random.default_rng(seeds[m]), **kw)
        assert np.allclose(batch[m], one, atol=1e-12)
    small = relieff.bootstrap_scores(X, codes, boots, seeds, block_features=7, **kw)  # feature blocks
    assert np.allclose(small, batch, atol=1e-12)


def test_registered_ensembles():
    X, y = _data(seed=6)
    r = run_method("efsis", X, y, rng=0, n_boot=4, top_percent=10)
    assert set(r.result.extra["stability"]) == {"sam", "geode", "relieff", "infogain"}
    assert r.order.size == X.shape[1]
    basic = run_method("efsis_basic", X, y, rng=0)
    ranks = [rank_rows(run_method(m, X, y).scores, True)[0] for m in ("sam", "geode", "relieff", "infogain")]
    assert np.allclose(basic.scores, np.log(np.vstack(ranks)).sum(axis=0))
    g = run_method("bootstrap_rank", X, y, rng=0, base="fisher", n_boot=5)
    assert 0 < g.result.extra["stability"] <= 1
    w = run_method("efsis", X, y, rng=0, n_boot=3, rankers=["fisher", "sam"], weights="stability_rank")
    assert set(w.result.extra["exponents"]) == {"fisher", "sam"}
    with pytest.raises(InputError):
        run_method("efsis", X, y, rng=0, n_boot=2, rankers=["sam", "sam"])
    with pytest.raises(MethodError, match="parameter weights: expected one of 'paper'"):
        run_method("efsis", X, y, rng=0, n_boot=2, weights="heavy")


@pytest.mark.shared
def test_efsis_on_dlbcl_fold_runs():
    if not DATA.exists():
        pytest.skip("shared data folder absent")
    from scipy.io import arff

    data, meta = arff.loadarff(DATA / "efsis" / "dlbcl.arff")
    names = meta.names()
    X = np.column_stack([data[a] for a in names[:-1]]).astype(float)[:, :600]
    y = np.array([int(v.decode()) for v in data[names[-1]]])
    res = efsis.efsis_fold(np.log2(X), y, 0, n_boot=5, top_percent=1.0)
    assert all(0 < v[0] <= 1 for v in res.stability.values())
    assert res.orders[0].size == 600


def test_weighted_rows_give_equal_columns_equal_bits():
    """The failing case hypothesis found (efsis, copies): a BLAS ``w @ M`` summed a feature and
    its copy to different last bits; weighted_rows adds row by row."""
    from ssfs.methods._shared.aggregation import weighted_rows

    rng = np.random.default_rng(0)
    M = np.log(rng.integers(1, 40, size=(4, 37)).astype(float))
    M[:, 29] = M[:, 3]  # a copy past a BLAS block boundary
    w = rng.dirichlet(np.ones(4))
    out = weighted_rows(w, M)
    assert out[29] == out[3]
    np.testing.assert_allclose(out, w @ M, rtol=1e-14)
    assert weighted_rows(np.array([2.0, 0.5]), np.array([[1.0, 4.0], [2.0, 8.0]])).tolist() == [3.0, 12.0]
