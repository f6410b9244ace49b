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

from ssfs import get_method, run_method
from ssfs._validation import column_variance
from ssfs.errors import InputError
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
    # ties: the variance of the input (times a power of two: exact) never increases inside a group of equal
    # scores; for a method invariant to each feature's scale, the variance over the squared range
    var = column_variance(np.ldexp(X, -int(np.frexp(np.abs(X).max())[1])))
    if "scale" in get_method(name).promises():
        var = var / np.maximum(np.ptp(np.ldexp(X, -int(np.frexp(np.abs(X).max())[1])), axis=0), 1e-300) ** 2
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


def test_one_feature_at_1e300_or_1e_minus_300_changes_nothing_for_a_scale_free_score():
    """Issue 30: one column x 1e300 made the whole matrix x 2^-998, 7 of 8 features underflowed
    to -inf, and a warning said the ranking did not change; one column x 1e-300 scored -inf.
    Fisher promises invariance to each feature's scale: each feature is now scaled by its own
    power of two, so the scores are those of the unscaled data, bit for bit, and no warning."""
    X0, y = _planted(5, p=8)
    ref = run_method("fisher", X0, y, rng=0)
    for factor in (1e300, 1e-300, 2.0**-1074 * 2**30, 8.9e307):
        X = X0.copy()
        X[:, 3] = X0[:, 3] * factor if factor > 1e-320 else np.round(X0[:, 3] * 2**30) * 2.0**-1074
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning at all
            r = run_method("fisher", X, y, rng=0)
        assert np.array_equal(r.order, ref.order), factor
        same = np.flatnonzero(np.arange(8) != 3)
        np.testing.assert_array_equal(r.scores[same], ref.scores[same])
        assert np.isclose(r.scores[3], ref.scores[3], rtol=1e-6), factor  # the column itself rounded (or subnormal)


def test_exact_subnormals_and_integers_near_2_62_are_not_constant():
    """A column of exact subnormals (1..30 x 5e-324) and an int64 column near 2^62 were scored as
    constant. Now: the subnormal column is the integer column 1..30 times 2^-1074 (exact), and
    a method invariant to a per-feature shift sees the int64 column exactly (centred in integer
    arithmetic); a method that is not refuses it in one line instead of rounding it."""
    X0, y = _planted(6, n=30)
    ints = np.round(X0 * 1000).astype(np.int64)
    sub = X0.copy()
    sub[:, 2] = np.arange(1, 31) * 5e-324
    steps = X0.copy()
    steps[:, 2] = np.arange(1, 31)
    np.testing.assert_array_equal(run_method("fisher", sub, y).scores, run_method("fisher", steps, y).scores)
    big = ints.copy()
    big[:, 2] += 2**62
    for name in ("fisher", "variance", "sam"):
        r = run_method(name, big, y)
        assert np.isfinite(r.scores[2]), name
        np.testing.assert_allclose(r.scores, run_method(name, ints, y).scores, rtol=1e-12, err_msg=name)
    with pytest.raises(InputError, match=r"feature 2 holds integers beyond 2\^53 .*method 'rf' depends on"):
        run_method("rf", big, y)


def test_a_method_without_the_invariance_refuses_what_it_cannot_compute():
    """A feature 2^-1900 times smaller than another cannot be compared in one unit (its squares
    underflow): a method that compares features in one unit stops with one line naming it;
    one that does not depend on the unit rescales X exactly and says so, truthfully."""
    X0, y = _planted(7)
    X = X0.copy()
    X[:, 0] *= 1e300
    X[:, 1] *= 1e-300
    with pytest.raises(InputError, match=r"feature 1 varies on a scale of .* while feature 0 reaches .*'variance'"):
        run_method("variance", X, y)
    with pytest.raises(InputError, match=r"largest \|value\| is [\d.]+e\+300, outside .* 'wckm'"):
        run_method("wckm", X0 * 1e300, y)
    with pytest.warns(UserWarning, match=r"variance: X was multiplied by 2\^-1000 .* the ranking is X's"):
        r = run_method("variance", X0 * 1e300, y)
    assert np.array_equal(r.order, run_method("variance", X0, y).order)


def _centred_reference(X, lo):
    """ssfs._numerics._centred as first written (a gathered copy, TwoSum in temporaries)."""
    move = np.flatnonzero(lo != 0)
    if not move.size:
        return X
    sub = X[:, move]
    d = sub - lo[move]
    back = d - sub
    err = (sub - (d - back)) - (lo[move] + back)
    exact = ~(err != 0).any(axis=0)
    if not exact.any():
        return X
    out = X.copy()
    out[:, move[exact]] = d[:, exact]
    return out


@pytest.mark.parametrize("kind", ["floats", "integers", "mixed", "some_zero_min", "offset"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_centred_in_tiles_same_bits_in_c_order(kind, order):
    """The TwoSum of _centred in cache-sized column tiles (ssfs._tiles) gives the reference's bits,
    for features shifted exactly, not at all, or some of each, across several tiles; always in C
    order (downstream row gathers and graph products), X itself when C-ordered and nothing moves."""
    from ssfs._numerics import _centred
    from ssfs._tiles import column_tiles

    rng = np.random.default_rng(0)
    n, p = 40, 2000
    assert len(list(column_tiles(n, p))) >= 3
    X = rng.normal(size=(n, p)) * 3.7
    if kind in ("integers", "mixed"):
        m = p if kind == "integers" else p // 2
        X[:, :m] = rng.integers(-50, 50, size=(n, m))
    if kind == "some_zero_min":
        X = np.abs(np.round(X))
        X[0, :900] = 0.0
        X[1, :3] = -0.0  # a minimum of -0.0: the column stays bit for bit
    if kind == "offset":
        X = 1e8 + X  # within a factor 2 of the minimum: always exact (Sterbenz)
    X = np.asarray(X, order=order)
    lo = X.min(axis=0)
    got, want = _centred(X, lo), _centred_reference(X, lo)
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()
    assert got.flags.c_contiguous
    Z = np.abs(X) - np.abs(X).min(axis=0)  # every minimum 0: nothing moves
    assert (_centred(Z, Z.min(axis=0)) is Z) == (order == "C")
