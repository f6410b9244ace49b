"""Numerical range and ties (issue 19 items 2-3), as properties over random inputs.

Hypothesis draws a scale 10^u with u in [-300, 300], a planted data set, and random ties
(duplicated columns, which every score ties exactly, and a constant column). For every
fast per-feature score the published ranking must be

* finite: every score finite except the constant feature's (documented worst value);
* deterministic: a second run gives the same bytes;
* right: the planted feature, placed LAST in the file, ranks first (so column order
  cannot pass for the answer);
* not index-ordered in ties: within a group of equal scores the variance never
  increases down the ranking, and exact duplicates follow the seed's permutation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssfs import run_method
from ssfs._validation import column_variance, safe_scale
from ssfs.io.atomic import write_checked_tsv
from ssfs.ranking import tie_break_rng, tie_sizes, tied_at

#: fast deterministic scores over the supervision they need (labels; y = -1 elsewhere)
METHODS = ["variance", "fisher", "laplacian", "cls", "infogain", "sam", "geode", "relieff", "sselect", "c4"]
#: scores that need no labels find the planted feature only when it is also the most variable
UNSUPERVISED = {"variance", "laplacian"}


def _planted(seed: int, n: int = 40, p: int = 9):
    rng = np.random.default_rng(seed)
    yt = np.arange(n) % 2
    X = rng.normal(size=(n, p))
    X[:, -1] = rng.normal(size=n) * 0.3 + 6.0 * yt  # planted: last column, separates the classes
    y = np.full(n, -1)
    y[: n // 2] = yt[: n // 2]
    return X, y


def _with_ties(X, dup_of: list[int], const_at: int):
    """X with exact duplicates of the columns ``dup_of`` inserted at the front, and a constant column."""
    cols = [X[:, j] for j in dup_of] + [X[:, j] for j in range(X.shape[1])]
    out = np.column_stack(cols)
    out = np.insert(out, const_at, 3.0, axis=1)
    return out


def _run(name, X, y, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_method(name, X, y, rng=seed)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(u=st.floats(-300, 300), data_seed=st.integers(0, 10_000), seed=st.integers(0, 2**31 - 1),
       dups=st.lists(st.integers(0, 7), min_size=1, max_size=4), const_at=st.integers(0, 5))
@pytest.mark.parametrize("name", METHODS)
def test_any_scale_and_ties_give_finite_deterministic_non_index_rankings(name, u, data_seed, seed, dups,
                                                                          const_at):
    X0, y = _planted(data_seed)
    X = _with_ties(X0, dups, const_at) * 10.0**u
    planted = X.shape[1] - 1
    if name in UNSUPERVISED:
        X[:, planted] *= 4.0
    r = _run(name, X, y, seed)
    const = np.zeros(X.shape[1], bool)
    const[const_at] = True
    assert np.isfinite(r.scores[~const]).all(), "non-finite score of a non-constant feature"
    assert r.order[-1] == const_at, "the constant feature is not last"
    assert r.order[0] == planted, f"planted feature at rank {int(np.flatnonzero(r.order == planted)[0]) + 1}"
    again = _run(name, X, y, seed)
    assert np.array_equal(r.order, again.order) and np.array_equal(r.scores, again.scores, equal_nan=True)
    # ties: the variance of the (rescaled) input never increases inside a group of equal scores
    Xs, _ = safe_scale(X)
    var = column_variance(Xs)
    s = r.scores[r.order]
    same = s[1:] == s[:-1]
    assert (var[r.order][1:][same] <= var[r.order][:-1][same]).all()
    assert np.array_equal(r.ties, tie_sizes(r.scores))


def test_exact_ties_follow_the_seed_not_the_column_order():
    """Eight identical columns tie in every score and in variance: their order is the
    seed's permutation. Over 20 seeds the lowest index is not always first (all 20 would
    have probability 8^-20 if the permutation were uniform)."""
    X0, y = _planted(1)
    X = np.column_stack([np.repeat(X0[:, :1], 8, axis=1), X0[:, 1:]])
    firsts = []
    for seed in range(20):
        r = _run("fisher", X, y, seed)
        tied = [int(i) for i in r.order if i < 8]
        firsts.append(tied[0])
        assert r.ties[:8].tolist() == [8] * 8 and r.n_tied >= 8
        perm = np.random.default_rng(tie_break_rng(np.random.default_rng(seed)).integers(2**63 - 1)) \
            .permutation(X.shape[1])
        assert tied == sorted(range(8), key=lambda i: perm[i])
    assert len(set(firsts)) > 2, firsts


def test_ties_decide_the_top_k_warning_and_file_column(tmp_path):
    from ssfs.ranking import ranking_table, tied_cuts
    from ssfs.selector import SemiSupervisedSelector

    X0, y = _planted(2)
    second = X0[:, -1] + 3.0 * np.random.default_rng(0).normal(size=X0.shape[0])  # informative, less so
    X = np.column_stack([X0[:, -1], np.repeat(second[:, None], 4, axis=1), X0[:, :-1]])  # planted, 4 tied
    r = _run("fisher", X, y, 0)
    assert tied_at(r.scores, r.order, 1) == 0 and tied_at(r.scores, r.order, 3) == 4
    assert r.ties_warning(1) is None
    msg = r.ties_warning(3)
    assert "fisher: the top 3 is decided by ties: 4 features share the score" in msg and "2 of them are kept" in msg
    with pytest.warns(UserWarning, match="top 3 is decided by ties"):
        SemiSupervisedSelector("fisher", n_features=3).fit(X, y)
    table = ranking_table([f"g{i}" for i in range(X.shape[1])], r.scores, r.order)
    assert table["ties"].tolist()[:5] == [1, 4, 4, 4, 4]
    path = tmp_path / "r.tsv"
    write_checked_tsv(table, path)  # as the workflow writes it
    assert tied_cuts(path, [1, 2, 3, 4, 5, 6]) == [2, 3, 4]


def test_member_chunks_break_ties_like_one_call():
    """The tie permutation depends on the seed only, not on how many numbers the method drew."""
    from ssfs.runner import combine_member_chunks, run_member_chunk

    X0, y = _planted(3)
    X = np.column_stack([np.repeat(X0[:, :1], 5, axis=1), X0])
    one = run_method("bootstrap_rank", X, y, rng=7, base="fisher", n_boot=6)
    parts = [run_member_chunk("bootstrap_rank", X, y, rng=7, chunk=c, n_chunks=3, base="fisher", n_boot=6)
             for c in range(3)]
    split = combine_member_chunks("bootstrap_rank", X, y, rng=7, parts=parts, base="fisher", n_boot=6)
    assert np.array_equal(one.order, split.order)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 8.9e307, 1e-307])
def test_extreme_scales_rank_as_the_unit_scale(scale):
    """Finite data near the ends of the float range: rescaled by a power of two (warned),
    finite scores, the ranking of the unit-scale data (scores separated well beyond round-off)."""
    X0, y = _planted(4)
    X = X0 / np.abs(X0).max()
    ref = run_method("cls", X, y, rng=0)
    with pytest.warns(UserWarning, match=r"cls: X was multiplied by 2\^-?\d+"):
        r = run_method("cls", X * scale, y, rng=0)
    assert np.isfinite(r.scores).all()
    assert np.array_equal(r.order, ref.order)
    assert r.result.extra["input_scale"] == 2.0 ** np.round(np.log2(r.result.extra["input_scale"]))


def test_safe_scale_is_exact_and_leaves_ordinary_data_alone():
    X = np.random.default_rng(5).normal(size=(6, 4))
    same, f = safe_scale(X)
    assert f == 1.0 and same is X
    big, f = safe_scale(X * 2.0**600)
    assert np.log2(f).is_integer() and 0.5 <= np.abs(big).max() < 1.0
    np.testing.assert_array_equal(big / f, X * 2.0**600)  # powers of two: no rounding at all
