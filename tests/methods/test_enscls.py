"""EnsCLS (EnsCLS paper Alg. 2, eq. 4): member CLS by direct pair sums, committee coverage,
chunking invariance, determinism, aggregation."""

import numpy as np
import pytest

from ssfs import run_method
from ssfs.methods._shared.committee import committee_size, subspace_size
from ssfs.methods.enscls import (
    _columns,
    _member_matrix,
    combine_enscls,
    enscls_chunk,
    plan_enscls,
)


def data(n=60, p=40, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n)
    X = rng.normal(size=(n, p))
    X[:, 0] += 4.0 * c  # the one class-separating feature
    y = np.full(n, -1)
    for k in (0, 1):
        y[np.flatnonzero(c == k)[:3]] = k
    return X, y


def cls_by_pair_sums(X, yb, k=10):
    """CLS (eq. 1-3) of every column, from loops: dense kNN, heat kernel (t = mean kNN d2),
    ML pairs added with their kernel weight, CL pairs removed."""
    n, p = X.shape
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D2, np.inf)
    nn = np.argsort(D2, axis=1, kind="stable")[:, :k]
    t = np.mean([D2[i, j] for i in range(n) for j in nn[i] if D2[i, j] > 0])
    S = np.zeros((n, n))
    for i in range(n):
        for j in nn[i]:
            S[i, j] = S[j, i] = np.exp(-D2[i, j] / t)
    lab = np.flatnonzero(yb >= 0)
    ml = [(i, j) for i in lab for j in lab if i < j and yb[i] == yb[j]]
    cl = [(i, j) for i in lab for j in lab if i < j and yb[i] != yb[j]]
    for i, j in ml:
        S[i, j] = S[j, i] = max(S[i, j], np.exp(-D2[i, j] / t) if D2[i, j] < np.inf else 1.0)
    for i, j in cl:
        S[i, j] = S[j, i] = 0.0
    d = S.sum(1)
    inc = set(lab.tolist()) if len(ml) + len(cl) else set()
    out = np.empty(p)
    for r in range(p):
        f = X[:, r]
        num = sum(S[i, j] * (f[i] - f[j]) ** 2 for i in range(n) for j in range(n))
        mu = f.mean()
        den = sum(d[i] * (f[i] - mu) ** 2 for i in range(n) if i not in inc)
        den += sum((d[i] + d[j]) * (f[i] - f[j]) ** 2 for i, j in cl)  # both orders of each CL pair
        out[r] = num / den
    return out


def test_committee_size_eq4():
    # N = 10 ceil(log 0.01 / log(1 - 1/sqrt(p))); ALLAML p = 7129 -> 10 * ceil(386.2) = 3870
    assert committee_size(7129) == 3870
    assert committee_size(100) == 10 * int(np.ceil(np.log(0.01) / np.log(0.9)))
    assert subspace_size(7129) == 84


def test_member_scores_equal_direct_pair_sums():
    X, y = data(n=25, p=12)
    plan = plan_enscls(y, 12, np.random.default_rng(3), n_members=4, subspace=5)
    got = enscls_chunk(X, y, plan, k=5, weights="literal")
    balanced = enscls_chunk(X, y, plan, k=5)
    from ssfs.constraints import LabelConstraints
    from ssfs.methods._shared.cls import balanced_cls
    from ssfs.methods._shared.graph import heat_kernel_graph

    for i in range(4):
        Xb, yl = _member_matrix(_columns(X), y, plan, i, False, None)
        yb = np.r_[yl, np.full(Xb.shape[0] - yl.size, -1)]
        assert np.allclose(got[i], cls_by_pair_sums(Xb, yb, k=5), rtol=1e-9)
        # the default: each member's balanced CLS alone (closed-form label terms per member)
        S, _ = heat_kernel_graph(Xb, k=5)
        assert np.allclose(balanced[i], balanced_cls(S, Xb, LabelConstraints(yb)), rtol=1e-9)


def test_default_committee_uses_every_feature():
    X, y = data(n=30, p=400)
    plan = plan_enscls(y, 400, np.random.default_rng(0))
    assert plan.n_members == committee_size(400) and plan.features.shape[1] == 20
    assert np.bincount(plan.features.ravel(), minlength=400).min() >= 1
    scores = run_method("enscls", X, y, rng=0).scores
    assert np.isfinite(scores).all()


def test_bootstrap_is_of_labeled_samples_and_members_distinct():
    X, y = data()
    plan = plan_enscls(y, 40, np.random.default_rng(1), n_members=50)
    assert set(np.unique(plan.boot)) <= set(np.flatnonzero(y >= 0))
    assert plan.boot.shape == (50, 6)
    assert all(len(set(f)) == f.size for f in plan.features)
    assert len({tuple(f) for f in plan.features}) > 40


def test_chunking_and_seed_give_identical_scores():
    X, y = data()
    plan = plan_enscls(y, 40, np.random.default_rng(5), n_members=60)
    full = combine_enscls(plan, enscls_chunk(X, y, plan))
    parts = [np.arange(37, 60), np.arange(0, 13), np.arange(13, 37)]
    chunks = np.vstack([enscls_chunk(X, y, plan, m) for m in parts])
    assert np.array_equal(full, combine_enscls(plan, chunks, np.concatenate(parts)), equal_nan=True)
    a = run_method("enscls", X, y, rng=11, n_members=60).scores
    b = run_method("enscls", X, y, rng=11, n_members=60).scores
    assert np.array_equal(a, b, equal_nan=True)


def test_aggregation_modes():
    X, y = data()
    plan = plan_enscls(y, 40, np.random.default_rng(2), n_members=30)
    S = enscls_chunk(X, y, plan)
    mean = combine_enscls(plan, S, average="members")
    comm = combine_enscls(plan, S, average="committee")
    for f in (0, 7, 39):
        vals = S[plan.features == f]
        if vals.size:
            assert np.isclose(mean[f], vals.mean()) and np.isclose(comm[f], vals.sum() / 30)
        else:
            assert np.isnan(mean[f]) and np.isnan(comm[f])


def test_separating_feature_ranks_first():
    X, y = data(n=80, p=40)
    r = run_method("enscls", X, y, rng=0)
    assert r.order[0] == 0


def test_som_option_runs():
    pytest.importorskip("ssfs.methods._shared.som")
    X, y = data(n=80, p=40)
    r = run_method("enscls", X, y, rng=0, som=True, n_members=200)
    assert r.scores.shape == (40,) and np.isfinite(r.scores).all() and 0 in r.order[:3]


def test_sparse_input_same_scores():
    from scipy import sparse

    X, y = data()
    X[np.abs(X) < 0.8] = 0.0
    a = run_method("enscls", X, y, rng=4, n_members=40).scores
    b = run_method("enscls", sparse.csr_matrix(X), y, rng=4, n_members=40).scores
    assert np.allclose(a, b, equal_nan=True)


def cls_literal_by_pair_sums(X, yb, k=10):
    """CLS with eq. 1-3 read literally, from loops: kNN edges (heat kernel, t = mean kNN d2
    among the unlabeled rows) only among unlabeled rows, ML pairs with their kernel weight,
    denominator = sum over ordered CL pairs (i, j) of D_ii (f_i - f_j)^2."""
    n, p = X.shape
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    unl = np.flatnonzero(yb < 0)
    nn = {i: sorted((j for j in unl if j != i), key=lambda j: (D2[i, j], j))[:k] for i in unl}
    t = np.mean([D2[i, j] for i in unl for j in nn[i] if D2[i, j] > 0])
    S = np.zeros((n, n))
    for i in unl:
        for j in nn[i]:
            S[i, j] = S[j, i] = np.exp(-D2[i, j] / t)
    lab = np.flatnonzero(yb >= 0)
    for i in lab:
        for j in lab:
            if i != j and yb[i] == yb[j]:
                S[i, j] = np.exp(-D2[i, j] / t)
    d = S.sum(1)
    out = np.empty(p)
    for r in range(p):
        f = X[:, r]
        num = sum(S[i, j] * (f[i] - f[j]) ** 2 for i in range(n) for j in range(n))
        den = sum(d[i] * (f[i] - f[j]) ** 2 for i in lab for j in lab if yb[i] != yb[j])
        out[r] = num / den
    return out


def test_literal_reading_member_scores_equal_direct_pair_sums():
    X, y = data(n=25, p=12)
    plan = plan_enscls(y, 12, np.random.default_rng(3), n_members=6, subspace=5)
    assert any(np.unique(b).size < b.size for b in plan.boot)  # some bootstraps hold copies
    opts = dict(knn_edges="unlabeled", denominator="cannot_link", bootstrap="unique", weights="literal")
    got = enscls_chunk(X, y, plan, k=5, **opts)
    checked = 0
    for i in range(6):
        Xb, yl = _member_matrix(_columns(X), y, plan, i, False, None, "unique")
        assert yl.size == np.unique(plan.boot[i]).size
        yb = np.r_[yl, np.full(Xb.shape[0] - yl.size, -1)]
        if np.unique(yl).size < 2:  # no cannot-link pair: variance form, not covered here
            continue
        assert np.allclose(got[i], cls_literal_by_pair_sums(Xb, yb, k=5), rtol=1e-9)
        checked += 1
    assert checked >= 4
    assert not np.allclose(got, enscls_chunk(X, y, plan, k=5, weights="literal"))
    # chunking invariance and the registered method with these options
    parts = [np.arange(3, 6), np.arange(0, 3)]
    chunks = np.vstack([enscls_chunk(X, y, plan, m, k=5, **opts) for m in parts])
    assert np.array_equal(combine_enscls(plan, got), combine_enscls(plan, chunks, np.concatenate(parts)),
                          equal_nan=True)
    r = run_method("enscls", X, y, rng=0, n_members=60, **opts)
    assert r.order[0] == 0


def test_bad_bootstrap_option_is_refused():
    X, y = data()
    with pytest.raises(ValueError, match="bootstrap"):
        run_method("enscls", X, y, rng=0, n_members=5, bootstrap="set")


def test_members_share_a_pca_graph_on_single_cells():
    """Single cells: sqrt(p) random genes give a member no cell neighbourhood; with space "pca"
    (what "auto" picks for sparse log-counts with balanced members) every member scores its genes
    on one heat-kernel kNN graph of the principal components of all genes, the labels of its
    bootstrap's distinct samples: by hand below; the committee ranks more planted markers first
    and, with the default committee (eq. 4: every gene drawn), none is left unscored."""
    from scipy import sparse

    from ssfs.constraints import LabelConstraints
    from ssfs.methods._shared.cls import balanced_cls
    from ssfs.methods._shared.graph import heat_kernel_graph
    from ssfs.methods._shared.representation import pca_embedding, single_cell_like
    from ssfs.simulate import few_labels, simulate_singlecell

    X, sim = simulate_singlecell(1500, 300, 3, 10, 0, fold_change=3.0)
    assert single_cell_like(X)
    y = few_labels(sim.cell_type, 5, 1)
    plan = plan_enscls(y, 300, np.random.default_rng(4), n_members=3)
    got = enscls_chunk(X, y, plan, space="pca")
    S, _ = heat_kernel_graph(pca_embedding(X, 50), k=10)
    for i in range(3):
        lab = np.full(1500, -1)
        drawn = np.unique(plan.boot[i])
        lab[drawn] = y[drawn]
        Xi = X[:, plan.features[i]].toarray()
        np.testing.assert_allclose(got[i], balanced_cls(S, Xi, LabelConstraints(lab)), rtol=1e-9)
    with pytest.raises(ValueError, match="weights: balanced"):
        run_method("enscls", X, y, rng=0, n_members=3, space="pca", weights="literal")
    mk = sim.markers.ravel()
    frac = {sp: np.isin(run_method("enscls", X, y, rng=0, n_members=15, space=sp).order[:mk.size], mk).mean()
            for sp in ("subspace", "pca", "auto")}
    assert frac["auto"] == frac["pca"] > frac["subspace"] + 0.1, frac
    dense = X.toarray()  # "auto" shares the graph on dense input too; the paper's members keep their own
    np.testing.assert_array_equal(run_method("enscls", dense, y, rng=0, n_members=3).scores,
                                  run_method("enscls", dense, y, rng=0, n_members=3, space="pca").scores)
    np.testing.assert_array_equal(
        run_method("enscls", dense, y, rng=0, n_members=3, weights="literal").scores,
        run_method("enscls", dense, y, rng=0, n_members=3, weights="literal", space="subspace").scores)
    full = run_method("enscls", sparse.csr_matrix(X), y, rng=0)
    assert np.isfinite(full.scores).all()
    assert np.isin(full.order[:mk.size], mk).mean() >= frac["pca"]


@pytest.mark.parametrize("as_sparse", [False, True])
def test_one_member_per_batch_identical_to_stacked_members(as_sparse, monkeypatch):
    """A lone member on the shared graph drops its cannot-link edges from the list found once for
    the committee (large n: one member per batch); the stacked batches drop them by a pass over
    their block-diagonal graph. Same scores to the bit."""
    from scipy import sparse

    import ssfs.methods.enscls as E

    X, y = data(n=120, p=36, seed=3)
    y[np.flatnonzero(y < 0)[:30]] = np.arange(30) % 2  # many labeled samples: many cannot-link edges
    A = sparse.csr_matrix(np.where(X > 0.5, X, 0.0)) if as_sparse else X
    plan = plan_enscls(y, 36, np.random.default_rng(2), n_members=12)
    stacked = enscls_chunk(A, y, plan, space="pca")
    monkeypatch.setattr(E, "BATCH_BYTES", 1)
    alone = enscls_chunk(A, y, plan, space="pca")
    assert np.isfinite(alone).any()
    np.testing.assert_array_equal(alone, stacked)
