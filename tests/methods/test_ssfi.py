"""SSFI (SSFI paper Alg. 1-4) and the random-forest baseline: informative vs noise features,
hand-checked helpers, determinism, scores frozen from the member-by-member implementation."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from ssfs import run_method
from ssfs.errors import MethodError
from ssfs.methods import ssfi as ssfi_module
from ssfs.methods.forest import (
    FlatForest,
    SplitterSeed,
    fit_tree,
    permuted_predictions,
    split_features,
    tree_predict,
)
from ssfs.methods.ssfi import (
    _Committee,
    _growth,
    _importance,
    _refine,
    _select,
    _tie_ranks,
)


def synthetic(n=90, p=30, seed=0, per_class=3):
    """Class = sign of feature 0 (the generating feature); all other features pure noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    c = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(c == 1, 1.0, -1.0)  # margin around 0
    y = np.full(n, -1)
    for k in (0, 1):
        y[np.flatnonzero(c == k)[:per_class]] = k
    return X, y, c


def generating(n=90, p=30, seed=0, per_class=3, n_inf=5, shift=1.5):
    """Class shifts features 0..n_inf-1 by +-shift (generating features); the rest pure noise."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n)
    X = rng.normal(size=(n, p))
    X[:, :n_inf] += shift * (2 * c[:, None] - 1)
    y = np.full(n, -1)
    for k in (0, 1):
        y[np.flatnonzero(c == k)[:per_class]] = k
    return X, y


@pytest.mark.parametrize("seed", [0, 3])
def test_ssfi_generating_features_beat_noise(seed):
    # 3 labeled per class, 84 unlabeled. (With a single generating feature among 30, ~85% of the
    # sqrt(p)-subspace members see only noise and their co-training votes drift: the paper's
    # setting assumes several informative features.)
    X, y = generating(seed=seed)
    r = run_method("ssfi", X, y, rng=seed)
    s = r.scores
    assert np.isfinite(s).all() and r.result.extra["rounds"] >= 1
    assert r.order[0] < 5  # a generating feature ranks first
    assert s[:5].mean() > 5 * s[5:].mean()  # measured ~10x
    assert np.sum(r.order[:5] < 5) >= 3


def test_ssfi_deterministic_and_averaging():
    X, y, _ = synthetic(n=50, p=16)
    a = run_method("ssfi", X, y, rng=3, n_members=40)
    b = run_method("ssfi", X, y, rng=3, n_members=40)
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    m = run_method("ssfi", X, y, rng=3, n_members=40, average="members")
    # same committee, other divisor: scores * N == scores_members * draws (where drawn)
    ok = np.isfinite(a.scores) & (a.scores > 0)
    assert ok.sum() >= 3
    draws = 40 * a.scores[ok] / m.scores[ok]  # N * (imp / N) / (imp / draws)
    assert np.allclose(draws, np.round(draws)) and np.all((draws >= 1) & (draws <= 40))


def test_growth_rate_from_priors():
    assert _growth(np.array([0, 0, 0, 1, 1, 1]), 2, 1).tolist() == [1, 1]
    assert _growth(np.array([0] * 8 + [1] * 2), 2, 10).tolist() == [8, 2]


def test_votes_majority_over_out_of_bag_members():
    X, y, c = synthetic(n=40, p=9)
    lab = y >= 0
    XU = X[~lab].astype(np.float32)
    com = _Committee(X[lab].astype(np.float32), y[lab], XU, np.random.default_rng(0), 15, 3, {})
    label, conf, known = com.votes(2)
    # each member's tree refitted by scikit-learn's estimator on the member's own training rows
    trees = [DecisionTreeClassifier(random_state=int(com.tree_seeds[i])).fit(
        com.X[com.rows[i]][:, com.features[i]], com.labels[i]) for i in range(15)]
    for x in range(XU.shape[0]):  # direct count
        preds = [trees[i].predict(XU[x:x + 1, com.features[i]])[0] for i in range(15) if com.u_oob[i, x]]
        if preds:
            cnt = np.bincount(preds, minlength=2)
            assert label[x] == np.argmax(cnt) and np.isclose(conf[x], cnt.max() / len(preds))
        else:
            assert not known[x]


def test_permuted_predictions_match_direct_loop():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5)).astype(np.float32)
    yy = (X[:, 1] + X[:, 3] > 0).astype(int)
    tree = DecisionTreeClassifier(random_state=0).fit(X, yy)
    feats, preds = permuted_predictions(tree, X, np.random.default_rng(7))
    assert feats.tolist() == split_features(tree).tolist() and 1 in feats and 3 in feats
    r = np.random.default_rng(7)
    for k, f in enumerate(feats):
        Z = X.copy()
        Z[:, f] = X[r.permutation(30), f]
        assert np.array_equal(preds[k], tree.predict(Z))
    assert np.array_equal(tree_predict(tree, X), tree.predict(X))


def test_rf_informative_first_and_unused_zero():
    X, y, _ = synthetic(n=60, p=20, per_class=8)
    r = run_method("rf", X, y, rng=0, n_estimators=300)
    assert r.order[0] == 0
    assert np.all(r.scores[1:] < r.scores[0])
    a = run_method("rf", X, y, rng=0, n_estimators=50).scores
    b = run_method("rf", X, y, rng=0, n_estimators=50).scores
    assert np.array_equal(a, b)


def test_rf_importance_direct_for_one_tree():
    # one tree: importance = drop in correct OOB predictions under the permutation, recomputed here
    from sklearn.ensemble import RandomForestClassifier

    X, y, _ = synthetic(n=40, p=6, per_class=10)
    r = run_method("rf", X, y, rng=5, n_estimators=1).scores
    lab = np.flatnonzero(y >= 0)
    rng = np.random.default_rng(5)
    f = RandomForestClassifier(n_estimators=1, max_features="sqrt", random_state=int(rng.integers(0, 2**31 - 1)),
                               n_jobs=1).fit(X[lab].astype(np.float32), y[lab])
    seed = rng.integers(0, 2**31 - 1, size=1)[0]
    tree, inbag = f.estimators_[0], f.estimators_samples_[0]
    oob = np.setdiff1d(np.arange(lab.size), inbag)
    XO = X[lab][oob].astype(np.float32)
    yo = y[lab][oob]
    base = (tree.predict(XO) == yo).sum()
    pr = np.random.default_rng(seed)
    want = np.zeros(6)
    for feat in split_features(tree):
        Z = XO.copy()
        Z[:, feat] = XO[pr.permutation(len(oob)), feat]
        want[feat] = base - (tree.predict(Z) == yo).sum()
    assert np.allclose(r, want)


# ---- the fast paths against the member-by-member algorithm --------------------------------------

def three_class(n=48, p=12, seed=11):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, n)
    X = rng.normal(size=(n, p))
    X[:, 0] += 1.5 * (c == 0)
    X[:, 1] += 1.5 * (c == 1)
    X[:, 2] -= 1.5 * (c == 2)
    y = np.full(n, -1)
    for k in range(3):
        y[np.flatnonzero(c == k)[:2]] = k
    return X, y


def two_class(n=40, p=40, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    c = rng.integers(0, 2, n)
    X[:, :4] += 1.2 * (2 * c[:, None] - 1)
    y = np.full(n, -1)
    y[np.flatnonzero(c == 0)[:3]] = 0
    y[np.flatnonzero(c == 1)[:3]] = 1
    return X, y


# computed with the member-by-member implementation (one DecisionTreeClassifier.fit per member and
# round, per-member votes, lexsort picks and permuted predictions) before it was vectorized
FROZEN = [
    (three_class, {"rng": 7, "n_members": 30},
     [0.23123769748769749, 0.5334330946830946, 0.6014553964553965, 0.287020202020202, 0.19631706256706258,
      0.042222222222222223, 2.1988594276094275, 0.2863812113812114, 0.2786676286676287, 0.11197191697191697,
      0.06952380952380952, 0.17874791874791876]),
    (three_class, {"rng": 7, "n_members": 25, "sample_size": 2, "max_depth": 3, "average": "members"},
     [0.7399763431013431, 2.438348873348873, 0.3696145124716553, 2.546752321752322, 0.7067132867132866,
      1.2767676767676768, 1.2633394383394383, 0.07142857142857142, 0.8340054390054391, 2.003155574584146,
      0.4388888888888889, 1.4693589743589743]),
    (two_class, {"rng": 2, "n_members": 8},  # 8 x 6 draws of 40 features: some never drawn (-inf)
     [0.5333333333333333, -np.inf, 0.125, 0.0, 0.0, -np.inf, 0.2625, 0.3125, 0.0, 0.0, 0.45, 0.0, -np.inf,
      0.2, -np.inf, 0.0, 0.0, 0.2125, 0.4083333333333333, 0.2833333333333333, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2,
      0.0, 0.0, 0.0, 0.125, 0.4583333333333333, -np.inf, 0.0, 0.5333333333333333, 0.6083333333333334, 0.0,
      0.075, 0.25, -np.inf, -np.inf]),
]


@pytest.mark.parametrize("block", [None, 7])
@pytest.mark.parametrize("case", range(len(FROZEN)))
def test_scores_unchanged_from_member_by_member_implementation(case, block, monkeypatch):
    if block is not None:  # one member per block of votes, picks and permuted predictions
        monkeypatch.setattr(ssfi_module, "_BLOCK", block)
    make, kw, want = FROZEN[case]
    X, y = make()
    got = run_method("ssfi", X, y, **kw).scores
    want = np.array(want)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    assert np.allclose(got[fin], want[fin], rtol=0, atol=1e-12)
    assert (got[fin] > 0).sum() >= 8


@pytest.mark.parametrize("kw", [{}, {"max_depth": 2}, {"min_samples_split": 5}, {"min_samples_split": 0.3}])
def test_fit_tree_is_sklearns_tree(kw):
    rng = np.random.default_rng(1)
    for trial in range(25):
        n, p, k = int(rng.integers(2, 40)), int(rng.integers(1, 30)), int(rng.integers(1, 5))
        X = rng.normal(size=(n, p)).astype(np.float32)
        if trial % 3 == 0:
            X = np.round(X)  # many tied values and constant columns
        X = X[rng.integers(0, n, n)]  # bootstrap-like repeated rows
        y = rng.choice(np.array([0, 2, 3, 5])[:k + 1], n)  # codes with gaps
        seed = int(rng.integers(0, 2**31 - 1))
        ref = DecisionTreeClassifier(random_state=seed, **kw).fit(X, y).tree_
        s = SplitterSeed(seed)
        for _ in range(2):  # the seed object is reusable
            got = fit_tree(np.ascontiguousarray(X), y, s, **kw)
            assert got.tree_.node_count == ref.node_count
            for attr in ("feature", "threshold", "children_left", "children_right", "value"):
                assert np.array_equal(getattr(got.tree_, attr), getattr(ref, attr))
            assert np.array_equal(got.predict(X), DecisionTreeClassifier(random_state=seed, **kw).fit(X, y).predict(X))


def test_flat_forest_matches_each_tree_and_permutation():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 20)).astype(np.float32)
    yy = (X[:, 3] + X[:, 7] - X[:, 11] > 0).astype(int) + (X[:, 0] > 1)
    maps = [np.sort(rng.choice(20, 6, replace=False)) for _ in range(7)]
    trees = [fit_tree(np.ascontiguousarray(X[:30][:, f]), yy[:30], i) for i, f in enumerate(maps)]
    ff = FlatForest(trees, maps)
    t, rows = np.repeat(np.arange(7), 50), np.tile(np.arange(50), 7)
    XT = np.ascontiguousarray(X.T)
    pred = ff.predict(XT, t, rows)
    for i in range(7):
        assert np.array_equal(pred[t == i], tree_predict(trees[i], np.ascontiguousarray(X[:, maps[i]])))
    st, sf = ff.split_features()
    for i in range(7):
        assert sf[st == i].tolist() == split_features(trees[i]).tolist()
        feats, perm = permuted_predictions(trees[i], np.ascontiguousarray(X[:, maps[i]]), np.random.default_rng(i))
        r = np.random.default_rng(i)
        for k, f in enumerate(feats):  # same permutation through the flat forest
            prow = r.permutation(50)
            got = ff.predict(XT, np.full(50, i), np.arange(50), np.full(50, maps[i][f]), prow)
            assert np.array_equal(got, perm[k])


def _small_committee(seed=0, n_members=20):
    X, y = three_class(n=60, p=15, seed=seed)
    lab = y >= 0
    _, yl = np.unique(y[lab], return_inverse=True)
    Xf = X.astype(np.float32)
    return _Committee(Xf[lab], yl, Xf[~lab], np.random.default_rng(seed), n_members, 4, {}), yl


def test_select_is_per_member_confidence_order():
    com, _ = _small_committee()
    label, conf, known = com.votes(3)
    tie_rank = _tie_ranks(com)
    conf_rank = np.unique(-conf, return_inverse=True)[1]
    n_k = np.array([2, 1, 100])  # argpartition, argmin, all candidates
    pick, ok = _select(com, np.arange(com.N), label, conf_rank, known, tie_rank, n_k)
    for i in range(com.N):  # Alg. 2 directly: sort the member's candidates by (-conf, random key)
        tie = np.random.default_rng(int(com.member_seeds[i])).random(com.nu)
        cand = np.flatnonzero(com.u_in[i] & known)
        order = cand[np.lexsort((tie[cand], -conf[cand]))]
        want = np.concatenate([order[label[order] == k][:n_k[k]] for k in range(3)])
        assert pick[i][ok[i]].tolist() == want.tolist()
    assert ok.sum() > com.N


def test_importance_is_member_by_member_sum():
    com, yl = _small_committee(seed=1)
    _refine(com, 3, _growth(yl, 3, 1), 3)
    imp = _importance(com, 3, 15)
    label, conf, known = com.votes(3)
    want = np.zeros(15)
    for i in range(com.N):  # Alg. 4 for member i, sample by sample through its own tree
        f = com.features[i]
        XO, target, w = [], [], []
        for x in np.flatnonzero(com.l_oob[i]):
            XO.append(com.X[x, f]), target.append(com.yl[x]), w.append(1.0)
        for x in np.flatnonzero(com.u_oob[i] & known):
            XO.append(com.X[com.nl + x, f]), target.append(label[x]), w.append(conf[x])
        if not XO:
            continue
        XO, target, w = np.array(XO), np.array(target), np.array(w)
        keep = com.trees[i].predict(XO) == target
        if not keep.any():
            continue
        feats, perm = permuted_predictions(com.trees[i], XO[keep], np.random.default_rng(int(com.member_seeds[i]) + 1))
        for k, g in enumerate(feats):
            want[f[g]] += sum(wj for pj, tj, wj in zip(perm[k], target[keep], w[keep], strict=True) if pj != tj)
    assert np.allclose(imp, want, rtol=0, atol=1e-12) and (want > 0).sum() >= 5


def test_bad_tree_parameters_refused():
    X, y = generating(n=30, p=6)
    for kw in ({"min_samples_split": 1}, {"min_samples_split": 1.5}, {"max_depth": 0}):
        with pytest.raises(MethodError, match=f"method 'ssfi' parameter {next(iter(kw))}: expected"):
            run_method("ssfi", X, y, rng=0, n_members=5, **kw)
