"""The four EFSIS rankers (SAM, GeoDE, ReliefF, information gain) against direct,
loop-based implementations of their definitions and against scikit-rebate."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from ssfs.errors import InputError, MethodError
from ssfs.methods import infogain, relieff, sam
from ssfs.runner import run_method

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _toy(n=40, p=30, K=2, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rng.shuffle(y)
    X = rng.normal(size=(n, p))
    X[:, :3] += shift * y[:, None]
    return X, y


# ------------------------------------------------------------------------------ SAM
def test_sam_two_class_matches_direct_formula():
    X, y = _toy(12, 4)
    s0 = 0.3
    d = run_method("sam", X, y, s0=s0, score="signed").scores
    for f in range(4):
        a, b = X[y == 0, f], X[y == 1, f]
        n1, n2 = a.size, b.size
        s = math.sqrt((1 / n1 + 1 / n2) * (((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()) / (n1 + n2 - 2))
        assert d[f] == pytest.approx((b.mean() - a.mean()) / (s + s0), rel=1e-12)
    assert np.allclose(run_method("sam", X, y, s0=s0).scores, np.abs(d))


def test_sam_multiclass_matches_samr_formula():
    X, y = _toy(15, 3, K=3)
    r = run_method("sam", X, y, s0=0.0).scores
    for f in range(3):
        groups = [X[y == k, f] for k in range(3)]
        nn = np.array([g.size for g in groups])
        mbar = X[:, f].mean()
        num = math.sqrt(nn.sum() / np.prod(nn) * sum(g.size * (g.mean() - mbar) ** 2 for g in groups))
        sd = math.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / (nn - 1).sum() * (1 / nn).sum())
        assert r[f] == pytest.approx(num / sd, rel=1e-12)


def _est_s0_loop(tt, sd):
    """samr's est.s0, transcribed line by line (R quantile type 7 = numpy linear)."""
    perc = np.round(np.arange(0, 21) * 0.05, 10)
    br = np.unique(np.quantile(sd, np.linspace(0, 1, 101)))
    a = np.empty(sd.size, dtype=int)
    for i, v in enumerate(sd):  # cut(sd, br, labels = F), NA -> 1
        a[i] = 1
        for j in range(1, br.size):
            if br[j - 1] < v <= br[j]:
                a[i] = j
    cv = []
    for j, pc in enumerate(perc):
        w = 0.0 if j == 0 else np.quantile(sd, pc)
        tt2 = tt * sd / (sd + w)
        sds = []
        for i in range(1, br.size):
            v = tt2[a == i]
            sds.append(1.4826 * np.median(np.abs(v - np.median(v))))
        cv.append(np.std(sds, ddof=1) / np.mean(sds))
    o = int(np.argmin(cv))
    return np.quantile(sd[sd != 0], perc[o]), perc[o]


def test_sam_s0_estimate_follows_samr():
    rng = np.random.default_rng(3)
    n, p = 20, 800
    X = rng.normal(size=(n, p)) * rng.gamma(2.0, 1.0, size=p)  # heterogeneous gene variances
    y = np.arange(n) % 2
    X[y == 1, :40] += 2.0
    numer, sd = sam.sam_parts(X, y, np.bincount(y))
    s0, perc = sam.estimate_s0(numer, sd)
    s0_ref, perc_ref = _est_s0_loop(numer / sd, sd)
    assert perc == perc_ref
    assert s0 == pytest.approx(s0_ref, rel=1e-12)
    assert s0 > 0
    res = run_method("sam", X, y)
    assert res.result.extra["s0"] == pytest.approx(s0_ref, rel=1e-12)
    assert np.sum(res.order[:20] < 40) >= 10


# ------------------------------------------------------------------------------ GeoDE
def _chdir_direct(X, y, gamma):
    """GeoDE::chdirSig transcribed: prcomp, keep PCs with variance share > 0.001, shrinkage LDA."""
    Xc = X - X.mean(axis=0)
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    share = s**2 / (s**2).sum()
    keep = int(np.sum(share > 0.001))
    V = Vt[:keep].T
    R = Xc @ V
    n1, n2 = (y == 0).sum(), (y == 1).sum()
    Dd = (R[y == 0].T @ R[y == 0] + R[y == 1].T @ R[y == 1]) / (n1 + n2 - 2)
    sigma = np.mean(np.diag(Dd))
    Sinv = np.linalg.inv(gamma * Dd + sigma * (1 - gamma) * np.eye(keep))
    meanvec = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    b = V @ Sinv @ V.T @ meanvec
    return b / np.linalg.norm(b)


@pytest.mark.parametrize("shape,gamma", [((20, 50), 1.0), ((20, 50), 0.5), ((60, 8), 1.0)])
def test_geode_matches_chdir(shape, gamma):
    X, y = _toy(*shape, seed=5)
    res = run_method("geode", X, y, gamma=gamma)
    b = _chdir_direct(X, y, gamma)
    assert np.allclose(res.result.extra["direction"], b, atol=1e-9)
    assert np.allclose(res.scores, np.abs(b), atol=1e-9)


def test_geode_multiclass_one_vs_rest():
    X, y = _toy(30, 20, K=3, seed=2)
    got = run_method("geode", X, y).scores
    ref = np.max([np.abs(_chdir_direct(X, (y == c).astype(int), 1.0)) for c in range(3)], axis=0)
    assert np.allclose(got, ref, atol=1e-9)
    rms = run_method("geode", X, y, multiclass="rms").scores
    ref2 = np.sqrt(np.mean([_chdir_direct(X, (y == c).astype(int), 1.0) ** 2 for c in range(3)], axis=0))
    assert np.allclose(rms, ref2, atol=1e-9)


# ------------------------------------------------------------------------------ ReliefF
def _relieff_loop(X, y, k, weighting="equal", sigma=20.0, ramp=None, instances=None):
    """Kononenko's ReliefF with class priors, one instance and one neighbour at a time."""
    n, p = X.shape
    rg = X.max(0) - X.min(0)

    def diff(a, b):
        d = np.abs(X[a] - X[b]) / rg
        if ramp is not None:
            d = np.clip((d - ramp[0]) / (ramp[1] - ramp[0]), 0, 1)
        return d

    classes = np.unique(y)
    prior = {c: np.mean(y == c) for c in classes}
    W = np.zeros(p)
    inst = range(n) if instances is None else instances
    for i in inst:
        dist = np.array([np.inf if j == i else diff(i, j).sum() for j in range(n)])
        for c in classes:
            members = [j for j in np.argsort(dist, kind="stable") if y[j] == c and j != i][:k]
            if not members:
                continue
            f = np.ones(len(members))
            if weighting == "exprank":
                r = 0
                for q in range(len(members)):
                    if q > 0 and dist[members[q]] != dist[members[q - 1]]:
                        r = q
                    f[q] = math.exp(-((r / sigma) ** 2))
            contrib = sum(fq * diff(i, j) for fq, j in zip(f, members, strict=True)) / f.sum()
            W += -contrib if c == y[i] else prior[c] / (1 - prior[y[i]]) * contrib
    return W / len(list(inst))


def test_relieff_two_class_matches_skrebate():
    skrebate = pytest.importorskip("skrebate")
    X, y = _toy(40, 30, seed=1)
    ours = run_method("relieff", X, y, k=5).scores
    ref = skrebate.ReliefF(n_neighbors=5, n_features_to_select=5).fit(X, y).feature_importances_
    assert np.max(np.abs(ours - ref)) < 1e-6
    assert np.allclose(ours, _relieff_loop(X, y, 5), atol=1e-12)


def test_relieff_multiclass_priors_and_skrebate_variant():
    X, y = _toy(36, 12, K=3, seed=4)
    y[:14] = 0  # unequal priors
    ours = run_method("relieff", X, y, k=4).scores
    assert np.allclose(ours, _relieff_loop(X, y, 4), atol=1e-12)
    skrebate = pytest.importorskip("skrebate")
    ref = skrebate.ReliefF(n_neighbors=4).fit(X, y).feature_importances_
    nb = run_method("relieff", X, y, k=4, miss_weights="neighbourhood").scores
    assert np.max(np.abs(nb - ref)) < 1e-6
    assert np.max(np.abs(ours - ref)) > 1e-4  # the definitions really differ


def test_relieff_exprank_ramp_and_instances():
    X, y = _toy(25, 10, seed=6)
    X[3] = X[4]  # a duplicated sample -> tied distances
    ours = run_method("relieff", X, y, k=8, weighting="exprank", sigma=3.0, ramp=(0.04, 0.1)).scores
    assert np.allclose(ours, _relieff_loop(X, y, 8, "exprank", 3.0, (0.04, 0.1)), atol=1e-12)
    r1 = run_method("relieff", X, y, k=5, instances="sqrt", rng=7)
    inst = relieff.instance_sample(25, "sqrt", np.random.default_rng(7))
    assert inst.size == 5
    assert np.allclose(r1.scores, _relieff_loop(X, y, 5, instances=inst), atol=1e-12)


def test_relieff_sparse_equals_dense_and_mixed_types():
    X, y = _toy(30, 20, seed=8)
    X[X < 0.2] = 0.0
    d = run_method("relieff", X, y, k=5).scores
    s = run_method("relieff", sparse.csr_matrix(X), y, k=5).scores
    assert np.allclose(d, s, atol=1e-12)
    skrebate = pytest.importorskip("skrebate")
    rng = np.random.default_rng(0)
    X[:, :6] = rng.integers(0, 3, size=(30, 6))
    ours = run_method("relieff", X, y, k=5, discrete_threshold=10).scores
    ref = skrebate.ReliefF(n_neighbors=5).fit(X, y).feature_importances_
    assert np.max(np.abs(ours - ref)) < 1e-6
    ours_s = run_method("relieff", sparse.csr_matrix(X), y, k=5, discrete_threshold=10).scores
    assert np.allclose(ours, ours_s, atol=1e-12)


def test_discrete_mismatch_counts():
    rng = np.random.default_rng(12)
    X = rng.integers(0, 3, size=(25, 9)).astype(float)
    X[:, 0] = 0.0  # a constant column
    ref = np.array([[np.sum(X[i] != X[j]) for j in range(25)] for i in range(25)])
    assert np.array_equal(relieff._mismatches(X), ref)
    assert np.array_equal(relieff._mismatches(sparse.csr_matrix(X)), ref)


def test_relieff_refuses_bad_options():
    X, y = _toy(10, 4)
    for kw in ({"k": 0}, {"weighting": "gauss"}, {"instances": "half"}, {"miss_weights": "flat"}):
        with pytest.raises(MethodError, match=f"method 'relieff' parameter {next(iter(kw))}: expected"):
            run_method("relieff", X, y, **kw)
    with pytest.raises(InputError, match="ramp must be"):
        run_method("relieff", X, y, ramp=(0.5, 0.1))


# ------------------------------------------------------------------------------ information gain
def _ent(counts):
    c = np.asarray(counts, dtype=float)
    c = c[c > 0]
    return 0.0 if c.sum() == 0 else float(-(c / c.sum() * np.log2(c / c.sum())).sum())


def _mdl_cuts(x, y, K):
    """Fayyad & Irani recursive MDL discretisation of one feature (list of interval label arrays)."""
    o = np.argsort(x, kind="stable")
    xs, ys = x[o], y[o]

    def rec(lo, hi):
        seg = ys[lo:hi]
        N = hi - lo
        cS = np.bincount(seg, minlength=K)
        best = None
        for i in range(lo + 1, hi):
            if xs[i] == xs[i - 1]:
                continue
            l, r = np.bincount(ys[lo:i], minlength=K), np.bincount(ys[i:hi], minlength=K)
            e = (i - lo) / N * _ent(l) + (hi - i) / N * _ent(r)
            if best is None or e < best[0] - 1e-12:
                best = (e, i, l, r)
        if best is None:
            return [(lo, hi)]
        e, i, l, r = best
        k, k1, k2 = int((cS > 0).sum()), int((l > 0).sum()), int((r > 0).sum())
        delta = math.log2(3**k - 2) - (k * _ent(cS) - k1 * _ent(l) - k2 * _ent(r))
        if _ent(cS) - e > (math.log2(N - 1) + delta) / N:
            return rec(lo, i) + rec(i, hi)
        return [(lo, hi)]

    return [(ys[a:b]) for a, b in rec(0, x.size)]


def _ig_direct(X, y):
    K = y.max() + 1
    H = _ent(np.bincount(y, minlength=K))
    out = []
    for f in range(X.shape[1]):
        parts = _mdl_cuts(X[:, f], y, K)
        out.append(H - sum(len(s) / y.size * _ent(np.bincount(s, minlength=K)) for s in parts))
    return np.array(out)


@pytest.mark.parametrize("K", [2, 3])
def test_infogain_mdl_matches_recursive_definition(K):
    X, y = _toy(45, 25, K=K, seed=9, shift=1.5)
    X[:, 5] = np.round(X[:, 5])  # ties between samples
    X[:, 6] = 1.0  # constant
    got = infogain.information_gain(X, y)
    ref = _ig_direct(X, y)
    assert np.allclose(got, ref, atol=1e-12)
    assert got[6] == 0 and got[:3].min() > 0
    assert np.allclose(run_method("infogain", X, y).scores[:6], ref[:6], atol=1e-12)
    Xs = np.column_stack([y.astype(float), X[:, 7]])  # a feature equal to the class
    assert run_method("infogain", Xs, y).scores[0] == pytest.approx(_ent(np.bincount(y)), abs=1e-12)


def test_infogain_equal_width():
    X, y = _toy(30, 6, K=2, seed=10)
    got = run_method("infogain", X, y, discretize="equal_width", n_bins=4).scores
    H = _ent(np.bincount(y))
    for f in range(6):
        x = X[:, f]
        b = np.minimum(np.floor((x - x.min()) / ((x.max() - x.min()) / 4)).astype(int), 3)
        cond = sum((b == j).mean() * _ent(np.bincount(y[b == j], minlength=2)) for j in range(4))
        assert got[f] == pytest.approx(H - cond, abs=1e-12)


def test_rankers_use_labeled_samples_only():
    X, y = _toy(30, 10, seed=11)
    y2 = y.copy()
    y2[::5] = -1
    keep = y2 >= 0
    for m in ("sam", "geode", "relieff", "infogain"):
        a = run_method(m, X, y2).scores
        b = run_method(m, X[keep], y[keep]).scores
        assert np.allclose(a, b, equal_nan=True), m


@pytest.mark.shared
def test_relieff_equals_skrebate_on_allaml():
    if not DATA.exists():
        pytest.skip("shared data folder absent")
    skrebate = pytest.importorskip("skrebate")
    from scipy.io import loadmat

    d = loadmat(DATA / "asu" / "ALLAML.mat")
    X = d["X"].astype(float)[:, :400]
    y = d["Y"].ravel().astype(int) - 1
    ours = run_method("relieff", X, y, k=10).scores
    ref = skrebate.ReliefF(n_neighbors=10).fit(X, y).feature_importances_
    assert np.max(np.abs(ours - ref)) < 1e-6


# ------------------------------------------------------------------------------ fast paths (issue 7)
def _diff_direct(X, a, b, f, spec):
    """diff_f(a, b) from its definition, one feature of one pair."""
    d = abs(X[a, f] - X[b, f])
    if spec.discrete[f]:
        return float(d > 0)
    rg = X[:, f].max() - X[:, f].min()
    v = d / rg if rg > 0 else 0.0
    if spec.ramp is not None:
        eq, df = spec.ramp
        v = min(max((v - eq) / (df - eq), 0.0), 1.0)
    if spec.std_thr is not None and d > X[:, f].std():
        v = 1.0
    return v


@pytest.mark.parametrize("case", ["linear", "mixed", "discrete", "ramp", "ramp_mixed"])
def test_pair_diff_sums_every_kind_and_blocking(case, monkeypatch):
    rng = np.random.default_rng(21)
    n, p = 14, 9
    X = rng.normal(size=(n, p))
    if case in ("mixed", "discrete", "ramp_mixed"):
        X[:, :3 if case != "discrete" else p] = rng.integers(0, 3, size=(n, 3 if case != "discrete" else p))
    X[:, 4] = 2.0  # a constant feature
    ramp = (0.1, 0.4) if case.startswith("ramp") else None
    spec = relieff.diff_spec(X, 4 if case != "linear" else 0, ramp)
    assert spec.discrete[:3].all() == (case != "linear" and case != "ramp")
    I, J = np.triu_indices(n, 1)
    w = rng.normal(size=I.size)
    ref_w = np.array([sum(w[t] * _diff_direct(X, I[t], J[t], f, spec) for t in range(I.size)) for f in range(p)])
    ref_tot = np.array([sum(_diff_direct(X, I[t], J[t], f, spec) for f in range(p)) for t in range(I.size)])
    Xf = np.asfortranarray(X)
    for cache, fblock in ((1 << 17, 4096), (16, 2)):  # one block; many pair and feature blocks
        monkeypatch.setattr(relieff, "CACHE_ELEMENTS", cache)
        monkeypatch.setattr(relieff, "FEATURE_BLOCK", fblock)
        for Xin in (X, Xf):
            assert np.allclose(relieff.pair_diff_sums(Xin, I, J, spec, w=w), ref_w, rtol=0, atol=1e-12)
            assert np.allclose(relieff.pair_diff_sums(Xin, I, J, spec), ref_tot, rtol=0, atol=1e-12)
        if case not in ("ramp", "ramp_mixed"):  # the sparse path (its own code) agrees
            Xs = sparse.csr_matrix(X)
            assert np.allclose(relieff.pair_diff_sums(Xs, I, J, spec, w=w), ref_w, rtol=0, atol=1e-12)


def test_relieff_threshold_rule_at_exact_std():
    """scikit-rebate's mixed-data rule: diff = 1 only when |d| > sd; |d| == sd keeps |d|/range."""
    X = np.column_stack([[0.0, 2, 3, 4, 6], [0.0, 1, 0, 1, 0]])  # column 0: sd = 2 exactly
    spec = relieff.diff_spec(X, discrete_threshold=3)
    assert spec.discrete.tolist() == [False, True] and spec.std_thr[0] == 2.0
    I, J = np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3])  # |d| = 2, 3, 2, 1
    got = relieff.pair_diff_sums(X, I, J, spec, w=np.array([1.0, 1.0, 1.0, 10.0]))
    assert got[0] == pytest.approx(2 / 6 + 1 + 2 / 6 + 10 / 6, abs=1e-14)
    assert got[1] == pytest.approx(1 + 0 + 0 + 10, abs=1e-14)
    tot = relieff.pair_diff_sums(X, I, J, spec)
    assert np.allclose(tot, [2 / 6 + 1, 1 + 0, 2 / 6 + 0, 1 / 6 + 1], rtol=0, atol=1e-14)


def test_relieff_layout_and_sparse_densify_do_not_change_scores(monkeypatch):
    X, y = _toy(40, 25, K=3, seed=22)
    X[:, :5] = np.round(X[:, :5])  # few distinct values: discrete at threshold 10
    X[np.abs(X) < 0.5] = 0.0
    kw = dict(k=4, discrete_threshold=10)
    ref = relieff.relieff_scores(X, y, np.random.default_rng(0), **kw)
    assert np.array_equal(relieff.relieff_scores(np.asfortranarray(X), y, np.random.default_rng(0), **kw), ref)
    spec = relieff.diff_spec(X, 10)
    assert spec.discrete.sum() >= 5 and not spec.discrete.all()
    D = relieff.distance_matrix(X, spec)
    for per_value in (0, 10**6):  # sparse Manhattan, densified pdist
        monkeypatch.setattr(relieff, "DENSIFY_COLUMNS_PER_VALUE", per_value)
        assert np.allclose(relieff.distance_matrix(sparse.csr_matrix(X), spec), D, rtol=0, atol=1e-12)
        got = relieff.relieff_scores(sparse.csr_matrix(X), y, np.random.default_rng(0), **kw)
        assert np.allclose(got, ref, rtol=0, atol=1e-12)


def test_sparse_mismatch_counts_with_negatives_and_stored_zeros():
    rng = np.random.default_rng(23)
    X = rng.integers(-2, 3, size=(20, 7)).astype(float)
    X[rng.random(X.shape) < 0.5] = 0.0
    S = sparse.csr_matrix(X)
    S.data[::3] = 0.0  # explicit zeros stored in the matrix
    Xz = S.toarray()
    ref = np.array([[np.sum(Xz[i] != Xz[j]) for j in range(20)] for i in range(20)])
    assert np.array_equal(relieff._mismatches(S), ref)
    assert np.array_equal(relieff._mismatches(Xz), ref)


@pytest.mark.parametrize("K,n", [(6, 90), (130, 400)])
def test_infogain_many_classes_and_blocks(K, n, monkeypatch):
    rng = np.random.default_rng(24)
    y = np.arange(n) % K
    rng.shuffle(y)
    X = rng.normal(size=(n, 5)) + 0.8 * y[:, None] / K * np.array([3, 2, 1, 0, 0])
    X[:, 3] = np.round(X[:, 3] * 2)  # heavy ties
    X[:, 4] = y // 2  # a coarse copy of the class
    ref = _ig_direct(X, y)
    assert ref[4] > 0.5  # many accepted cuts: a deep recursion
    if K == 6:
        assert ref[0] > ref[3] >= 0
    assert np.allclose(infogain.information_gain(X, y), ref, rtol=0, atol=1e-12)
    monkeypatch.setattr(infogain, "MAX_BLOCK_ELEMENTS", 2 * n)  # blocks of two features
    assert np.allclose(infogain.information_gain(X, y), ref, rtol=0, atol=1e-12)


def test_infogain_exact_ties_take_the_lowest_cut():
    """Two best cuts with exactly equal entropy; the lowest one wins (Fayyad-Irani as in the
    direct reference). Taking the other one would be accepted by the MDL test and give a
    gain of 1.4566 bits instead of 0 (found by searching class sequences)."""
    y = np.array([2, 2, 2, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 2, 2])
    x = np.arange(15.0)[:, None]
    assert _ig_direct(x, y)[0] == pytest.approx(0.0, abs=1e-12)
    assert infogain.information_gain(x, y)[0] == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(25)
    perm = rng.permutation(15)  # sample order does not matter
    assert infogain.information_gain(x[perm], y[perm])[0] == pytest.approx(0.0, abs=1e-12)
    one = infogain.information_gain(np.ones((1, 3)), np.array([1]))  # no cut possible
    assert np.array_equal(one, np.zeros(3))
    two = np.array([[0.0], [1.0]])  # the MDL test accepts the only cut: 1 bit
    assert infogain.information_gain(two, np.array([0, 1]))[0] == pytest.approx(1.0, abs=1e-12)
    assert _ig_direct(two, np.array([0, 1]))[0] == pytest.approx(1.0, abs=1e-12)


def test_relieff_and_infogain_do_not_depend_on_blas_threads():
    from threadpoolctl import threadpool_limits

    X, y = _toy(60, 300, K=3, seed=26)
    X[:, :4] = np.round(X[:, :4])  # mixed data: the threshold and discrete paths
    out = []
    for t in (1, 2):
        with threadpool_limits(limits=t):
            out.append((relieff.relieff_scores(X, y, np.random.default_rng(0), k=5, discrete_threshold=10),
                        infogain.information_gain(X, y)))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    assert out[0][0][:3].mean() > np.median(out[0][0])  # the informative features score high


def test_sorted_quantiles_are_numpys():
    from ssfs.methods.sam import S0_PERCENTILES, sorted_quantiles

    rng = np.random.default_rng(40)
    for n in (1, 2, 7, 100, 1001):
        A = np.sort(np.r_[rng.gamma(2.0, size=(2, n)), rng.choice([0.0, 0.5, 2.0], size=(1, n))], axis=1)
        for q in (np.linspace(0, 1, 101), S0_PERCENTILES, S0_PERCENTILES[3:4]):
            assert np.array_equal(sorted_quantiles(A, q), np.quantile(A, q, axis=1).T)
