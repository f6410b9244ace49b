"""ssfs.experiment.stats against hand computations and published numbers (Demšar 2006; the
EnsCLS paper's Table 2 / Table 3 / Fig. 2; the constraint-score paper's eq. 9)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ssfs.errors import ConfigError, InputError
from ssfs.experiment import stats as S

# Demšar 2006, Table 6: AUC of four C4.5 variants on 14 data sets (rows = methods).
DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_AUC = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970],
])


@pytest.fixture
def demsar():
    auc = DEMSAR_AUC.copy()
    # The printed ranks of 'voting' (row 12) are 2 and 3 for the two 0.975 values
    # (unrounded AUCs differ); reproduce that order so the published ranks hold.
    auc[12, 2] = 0.9751
    return pd.DataFrame(auc.T, index=DEMSAR_NAMES, columns=[f"d{i}" for i in range(14)])


# EnsCLS paper Table 2 (mean accuracy over the top 20 features, 9 datasets) and its Av Rank row.
ENSCLS_METHODS = ["EnsCLS", "CLS", "CSFS", "BS", "SSFI"]
ENSCLS_TABLE2 = np.array([
    [0.695, 0.507, 0.513, 0.600, 0.675], [0.781, 0.740, 0.751, 0.618, 0.760],
    [0.702, 0.480, 0.490, 0.647, 0.680], [0.594, 0.542, 0.549, 0.499, 0.548],
    [0.703, 0.515, 0.517, 0.543, 0.638], [0.734, 0.535, 0.535, 0.696, 0.701],
    [0.907, 0.837, 0.837, 0.882, 0.902], [0.749, 0.507, 0.511, 0.538, 0.735],
    [0.660, 0.550, 0.560, 0.562, 0.553],
])


# ------------------------------------------------------------------ Friedman
def test_friedman_reproduces_demsar_worked_example(demsar):
    res = S.friedman(demsar)
    assert res.avg_ranks.round(3).to_dict() == {"C4.5+m+cf": 1.964, "C4.5+m": 2.0, "C4.5+cf": 2.893, "C4.5": 3.143}
    assert list(res.avg_ranks.index) == ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]  # best first
    assert res.statistic == pytest.approx(9.28, abs=0.01)
    assert res.iman_davenport == pytest.approx(3.69, abs=0.01)
    # F(3, 39) critical value at 0.05 is 2.85 -> rejected
    assert sps.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.01)
    assert res.iman_davenport_p < 0.05
    assert res.p_value == pytest.approx(sps.chi2.sf(res.statistic, 3))
    assert (res.n_methods, res.n_datasets) == (4, 14)
    # ties are averaged (mushroom: all four 2.5)
    assert (res.ranks["d9"] == 2.5).all()


def test_friedman_formula_on_tiny_table():
    # 3 methods x 4 datasets; ranks by hand (higher = better):
    # d0: A1 B2 C3 | d1: A1 B2.5 C2.5 | d2: B1 A2 C3 | d3: A1 B2 C3
    t = pd.DataFrame({"d0": [0.9, 0.5, 0.1], "d1": [0.8, 0.4, 0.4], "d2": [0.6, 0.7, 0.2], "d3": [0.9, 0.5, 0.3]},
                     index=["A", "B", "C"])
    res = S.friedman(t)
    R = {"A": (1 + 1 + 2 + 1) / 4, "B": (2 + 2.5 + 1 + 2) / 4, "C": (3 + 2.5 + 3 + 3) / 4}
    assert res.avg_ranks.to_dict() == pytest.approx(R)
    N, k = 4, 3
    chi2 = 12 * N / (k * (k + 1)) * (sum(v * v for v in R.values()) - k * (k + 1) ** 2 / 4)
    assert res.statistic == pytest.approx(chi2)
    # 12*4/(3*4) * (1.25^2 + 1.875^2 + 2.875^2 - 3*16/4) = 4 * 1.34375
    assert res.statistic == pytest.approx(5.375)
    ff = (N - 1) * chi2 / (N * (k - 1) - chi2)
    assert res.iman_davenport == pytest.approx(ff)
    # lower-is-better flips the ranks
    low = S.friedman(t, higher_is_better=False)
    assert low.avg_ranks["C"] == pytest.approx(4 - R["C"])


def test_friedman_tie_correction_matches_scipy(demsar):
    res = S.friedman(demsar, tie_correction=True)
    ref = sps.friedmanchisquare(*demsar.to_numpy())
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.p_value == pytest.approx(ref.pvalue)


def test_friedman_enscls_table2_average_ranks():
    t = pd.DataFrame(ENSCLS_TABLE2.T, index=ENSCLS_METHODS)
    res = S.friedman(t)
    published = {"EnsCLS": 1.0, "CLS": 4.6667, "CSFS": 3.6667, "BS": 3.3333, "SSFI": 2.3333}
    assert res.avg_ranks.to_dict() == pytest.approx(published, abs=1e-4)
    assert res.p_value < 0.05  # "the Friedman test reveals statistically significant differences (p < 0.05)"
    # Fig. 2 (p = 0.1, CD = 1.8336): "EnsCLS ... not statistically distinguishable from SSFI"
    groups = S.nemenyi_groups(res.avg_ranks, S.nemenyi_cd(5, 9, 0.10))
    assert groups == [("EnsCLS", "SSFI"), ("SSFI", "BS", "CSFS"), ("BS", "CSFS", "CLS")]


def test_friedman_perfect_agreement_and_bad_input():
    t = pd.DataFrame({"d0": [3.0, 2.0, 1.0], "d1": [3.0, 2.0, 1.0]}, index=list("abc"))
    res = S.friedman(t)
    # N = 2, k = 3, ranks 1, 2, 3 on both: 12*2/(3*4) * (1 + 4 + 9 - 12) = 4 = N(k-1)
    assert res.statistic == pytest.approx(4.0)
    assert np.isinf(res.iman_davenport) and res.iman_davenport_p == 0.0
    t.iloc[0, 0] = np.nan
    with pytest.raises(InputError, match="method 'a' on dataset 'd0'"):
        S.friedman(t)
    with pytest.raises(InputError, match="at least 2 methods"):
        S.friedman(t.iloc[:1])


# ------------------------------------------------------------------- Nemenyi
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


@pytest.mark.parametrize("alpha,table", [(0.05, DEMSAR_Q05), (0.10, DEMSAR_Q10)])
def test_nemenyi_q_matches_demsar_table5a(alpha, table):
    got = [S.nemenyi_q(k, alpha) for k in range(2, 11)]
    assert got == pytest.approx(table, abs=1.5e-3)  # the table is rounded to 3 decimals
    assert S.nemenyi_q(2, alpha) == pytest.approx(sps.norm.ppf(1 - alpha / 2))  # k = 2: z_{alpha/2}
    # k up to 20 is available and increasing
    q = [S.nemenyi_q(k, alpha) for k in range(2, 21)]
    assert np.all(np.diff(q) > 0)


def test_nemenyi_cd_published_values():
    assert S.nemenyi_cd(4, 14, 0.05) == pytest.approx(1.25, abs=0.005)  # Demšar Sec. 3.2.2
    assert S.nemenyi_cd(4, 14, 0.10) == pytest.approx(1.12, abs=0.005)
    assert S.nemenyi_cd(5, 9, 0.10) == pytest.approx(1.8336, abs=1e-3)  # EnsCLS paper Fig. 2
    with pytest.raises(ConfigError):
        S.nemenyi_cd(1, 9)


def test_nemenyi_groups_demsar_figure1(demsar):
    ranks = S.friedman(demsar).avg_ranks
    # p = 0.10: two groups (Demšar Fig. 1a); C4.5+cf belongs to both
    assert S.nemenyi_groups(ranks, S.nemenyi_cd(4, 14, 0.10)) == [
        ("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5")]
    # p = 0.05: no difference is significant -> one group with everybody
    assert S.nemenyi_groups(ranks, S.nemenyi_cd(4, 14, 0.05)) == [("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5")]
    # a difference equal to the CD is significant (Demšar: "at least the critical difference")
    assert S.nemenyi_groups({"a": 1.0, "b": 2.0, "c": 2.5}, 1.0) == [("b", "c")]


def test_nemenyi_pvalues_match_scikit_posthocs(demsar):
    sp = pytest.importorskip("scikit_posthocs")
    res = S.friedman(demsar)
    got = S.nemenyi_pvalues(res.avg_ranks, res.n_datasets).loc[DEMSAR_NAMES, DEMSAR_NAMES]
    ref = sp.posthoc_nemenyi_friedman(demsar.T.to_numpy())
    np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), atol=1e-6)
    # consistency with the CD: p < 0.10 exactly for pairs at least CD(0.10) apart
    cd = S.nemenyi_cd(4, 14, 0.10)
    r = res.avg_ranks
    for a, b in itertools.combinations(DEMSAR_NAMES, 2):
        assert (got.loc[a, b] < 0.10) == (abs(r[a] - r[b]) >= cd)


# ------------------------------------------------------------ Wilcoxon, Holm
def test_wilcoxon_demsar_table2(demsar):
    res = S.wilcoxon_holm(demsar, "C4.5")
    row = res.set_index("method").loc["C4.5+m"]
    # R+ = 93, R- = 12 with the zero differences split: T = min = 12 (Demšar Sec. 3.1.3)
    assert row["statistic"] == 12.0
    assert (row["wins"], row["ties"], row["losses"]) == (10, 2, 2)
    # T = 12 <= 21 (exact critical value, N = 14, alpha 0.05) -> significant
    assert row["p_value"] < 0.05
    # the statistic by hand, independent of scipy
    d = DEMSAR_AUC[:, 1] - DEMSAR_AUC[:, 0]
    rk = sps.rankdata(np.abs(d))
    r_plus = rk[d > 0].sum() + rk[d == 0].sum() / 2
    r_minus = rk[d < 0].sum() + rk[d == 0].sum() / 2
    assert (r_plus, r_minus) == (93.0, 12.0)


def test_holm_demsar_example():
    # Demšar Sec. 3.2.2: p = 0.016, 0.019, 0.607 vs alpha/3, alpha/2, alpha -> first two rejected
    adj = S.holm([0.607, 0.016, 0.019])
    assert adj == pytest.approx([0.607, 0.048, 0.048])
    assert list(adj <= 0.05) == [False, True, True]
    assert S.holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])


def test_holm_matches_statsmodels():
    mt = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(3).uniform(0, 0.2, size=9)
    np.testing.assert_allclose(S.holm(p), mt.multipletests(p, method="holm")[1])


def test_wilcoxon_holm_columns_and_control(demsar):
    res = S.wilcoxon_holm(demsar, "C4.5", alpha=0.05)
    assert set(res["method"]) == {"C4.5+m", "C4.5+cf", "C4.5+m+cf"}
    np.testing.assert_allclose(res["p_holm"], S.holm(res["p_value"].to_numpy()))
    assert list(res["reject"]) == list(res["p_holm"] <= 0.05)
    with pytest.raises(ConfigError, match="control"):
        S.wilcoxon_holm(demsar, "nope")


def test_signed_rank_test_by_hand():
    """Five equal positive differences and a zero: ``wilcox`` drops the zero, the five share rank 3, R+ = 15, R- = 0;
    of the 2^6 sign flips (the zero's two alike) 2 give R+ = 15 and 2 give 0: two-sided p = 4 / 64."""
    assert S.signed_rank_test([1, 1, 1, 1, 1, 0], "wilcox") == (0.0, 4 / 64)
    # zsplit ranks the zero too (rank 1; the fives 4 each) and splits it: R+ = 20.5, R- = 0.5
    assert S.signed_rank_test([1, 1, 1, 1, 1, 0], "zsplit") == (0.5, 4 / 64)


@pytest.mark.parametrize("zero_method", ["wilcox", "zsplit"])
def test_signed_rank_test_is_scipys_wilcoxon(zero_method):
    """Bit for bit scipy's two-sided test where it permutes (ties or zeros, <= 13 differences) and where it does not
    (no ties: its exact distribution; > 13 with ties: the normal approximation)."""
    rng = np.random.default_rng(1)
    cases = [rng.integers(-3, 4, n) * 0.1 for n in (3, 6, 9, 12, 13, 14, 20)]
    cases += [np.round(rng.normal(size=n), 1) for n in (5, 8, 11)] + [rng.normal(size=n) for n in (7, 25)]
    cases += [np.array([0.1, 0.1, np.nan, -0.2, 0.0])]  # a missing value: scipy's NaN, as scipy gives it
    for d in cases:
        if not (d != 0).any():
            continue
        ref = sps.wilcoxon(d, zero_method=zero_method)
        np.testing.assert_array_equal(S.signed_rank_test(d, zero_method), (float(ref.statistic), float(ref.pvalue)))


# ------------------------------------------------------------------ sign test
DEMSAR_W05 = [5, 6, 7, 7, 8, 9, 9, 10, 10, 11, 12, 12, 13, 13, 14, 15, 15, 16, 17, 18, 18]
DEMSAR_W10 = [5, 6, 6, 7, 7, 8, 9, 9, 10, 10, 11, 12, 12, 13, 13, 14, 14, 15, 16, 16, 17]


def test_sign_test_critical_values():
    assert S.sign_test_critical(9, 0.1) == 7  # EnsCLS paper: "equal to 7 in our case"
    assert S.sign_test_critical(9, 0.1, method="normal") == 7
    assert [S.sign_test_critical(n, 0.10) for n in range(5, 26)] == DEMSAR_W10
    got = [S.sign_test_critical(n, 0.05) for n in range(5, 26)]
    # Demšar's Table 3 prints 17 and 18 for n = 23, 24 (binomial tail gives 16, 17)
    assert [g for g, n in zip(got, range(5, 26), strict=True) if n not in (23, 24)] == \
        [w for w, n in zip(DEMSAR_W05, range(5, 26), strict=True) if n not in (23, 24)]
    # the exact value is the smallest w with P(Bin(n, 1/2) >= w) <= alpha
    n, w = 9, S.sign_test_critical(9, 0.1)
    from math import comb

    tail = lambda k: sum(comb(n, j) for j in range(k, n + 1)) / 2**n  # noqa: E731
    assert tail(w) <= 0.1 < tail(w - 1)
    assert S.sign_test_critical(3, 0.05) == 4  # impossible -> n + 1


def test_sign_test_ties_split():
    # EnsCLS Table 3: EnsCLS vs SSFI 5/4/0 -> 5 + 2 = 7 wins of 9 -> significant at 0.1
    assert S.sign_test(5, 4, 0, alpha=0.1)
    assert not S.sign_test(5, 4, 0, alpha=0.05)  # 7 < 8
    # 8/1/0: the odd tie is ignored -> 8 wins of 8 datasets
    assert S.sign_test(8, 1, 0, alpha=0.1)
    # 4/3/2: 4 + 1 = 5 of 8 -> not significant
    assert not S.sign_test(4, 3, 2, alpha=0.1)
    # Demšar: C4.5+m better on 10, 2 ties -> 11 of 14 -> significant at 0.05
    assert S.sign_test(10, 2, 2, alpha=0.05)


# --------------------------------------------- paired t-test win/tie/loss
def _tidy(values: dict, metric="accuracy", n_features=(1,)):
    """values[(dataset, method)] = list over reps -> tidy rows (same value for every n_features)."""
    rows = [dict(dataset=d, method=m, rep=r, n_features=nf, metric=metric, value=v)
            for (d, m), vs in values.items() for r, v in enumerate(vs) for nf in n_features]
    return pd.DataFrame(rows)


def test_win_tie_loss_paired_ttest_by_hand():
    a_d0 = [0.80, 0.82, 0.81, 0.79, 0.83]
    b_d0 = [0.70, 0.71, 0.73, 0.69, 0.72]  # a clearly better
    a_d1 = [0.60, 0.65, 0.55, 0.62, 0.58]
    b_d1 = [0.61, 0.63, 0.57, 0.60, 0.59]  # noise: tie
    a_d2 = [0.50, 0.52, 0.51, 0.49, 0.50]
    b_d2 = [0.60, 0.61, 0.59, 0.62, 0.60]  # b better
    df = _tidy({("d0", "a"): a_d0, ("d0", "b"): b_d0, ("d1", "a"): a_d1, ("d1", "b"): b_d1,
                ("d2", "a"): a_d2, ("d2", "b"): b_d2})
    # hand-computed paired t statistics: t = mean(d) / (sd(d)/sqrt(n))
    for a, b, expect_sig in ((a_d0, b_d0, True), (a_d1, b_d1, False), (a_d2, b_d2, True)):
        d = np.subtract(a, b)
        t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
        p = 2 * sps.t.sf(abs(t), d.size - 1)
        assert (p < 0.1) == expect_sig
    wtl = S.win_tie_loss(df, "accuracy", alpha=0.1).set_index(["method", "opponent"])
    assert tuple(wtl.loc[("a", "b"), ["wins", "ties", "losses"]]) == (1, 1, 1)
    assert tuple(wtl.loc[("b", "a"), ["wins", "ties", "losses"]]) == (1, 1, 1)
    assert not wtl.loc[("a", "b"), "significant"]
    # lower is better swaps wins and losses
    low = S.win_tie_loss(df, "accuracy", higher_is_better=False).set_index(["method", "opponent"])
    assert tuple(low.loc[("a", "b"), ["wins", "ties", "losses"]]) == (1, 1, 1)
    df2 = _tidy({("d0", "a"): a_d0, ("d0", "b"): b_d0})
    low2 = S.win_tie_loss(df2, "accuracy", higher_is_better=False).set_index(["method", "opponent"])
    assert tuple(low2.loc[("a", "b"), ["wins", "ties", "losses"]]) == (0, 0, 1)


def test_win_tie_loss_identical_values_tie_and_table():
    df = _tidy({("d0", "a"): [0.5, 0.6, 0.7], ("d0", "b"): [0.5, 0.6, 0.7],
                ("d1", "a"): [0.9, 0.9, 0.9], ("d1", "b"): [0.1, 0.1, 0.1]})
    wtl = S.win_tie_loss(df, "accuracy")
    t = S.win_tie_loss_table(wtl)
    assert t.loc["a", "b"] == "1/1/0" and t.loc["b", "a"] == "0/1/1" and t.loc["a", "a"] == "–"


def test_win_tie_loss_averages_over_n_features():
    # per rep the value is the mean over n_features 1..3 (EnsCLS Table 2); at n_features=3 alone b wins
    rows = []
    for rep in range(4):
        for nf, (va, vb) in zip((1, 2, 3), ((0.9, 0.5), (0.9, 0.5), (0.5, 0.9 + 0.01 * rep)), strict=True):
            rows += [dict(dataset="d", method="a", rep=rep, n_features=nf, metric="acc",
                          value=va + 0.01 * rep * (nf == 1)),
                     dict(dataset="d", method="b", rep=rep, n_features=nf, metric="acc", value=vb)]
    df = pd.DataFrame(rows)
    all_nf = S.win_tie_loss(df, "acc").set_index(["method", "opponent"])
    at3 = S.win_tie_loss(df, "acc", n_features=3).set_index(["method", "opponent"])
    assert all_nf.loc[("a", "b"), "wins"] == 1
    assert at3.loc[("a", "b"), "losses"] == 1
    pr = S.per_rep_values(df, "acc")
    assert pr.query("method == 'a' and rep == 0")["value"].item() == pytest.approx((0.9 + 0.9 + 0.5) / 3)


# ---------------------------------------------------------------- rank sum
def test_rank_sum_by_hand():
    # 3 runs, 3 methods: run0 a>b>c, run1 a=b>c, run2 c>a=b
    vals = {("w", "a"): [0.9, 0.8, 0.5], ("w", "b"): [0.7, 0.8, 0.5], ("w", "c"): [0.1, 0.2, 0.9]}
    df = _tidy(vals)
    got = S.rank_sum(df, "accuracy")
    # ties get the same (lowest) rank: run0 1,2,3; run1 1,1,3; run2 2,2,1
    assert got.loc["w", ["a", "b", "c"]].tolist() == [1 + 1 + 2, 2 + 1 + 2, 3 + 3 + 1]
    assert got.loc["w", "n_runs"] == 3
    avg = S.rank_sum(df, "accuracy", ties="average")
    assert avg.loc["w", ["a", "b", "c"]].tolist() == [1 + 1.5 + 2.5, 2 + 1.5 + 2.5, 3 + 3 + 1]
    dense = S.rank_sum(df, "accuracy", ties="dense")
    assert dense.loc["w", ["a", "b", "c"]].tolist() == [1 + 1 + 2, 2 + 1 + 2, 3 + 2 + 1]


def test_rank_sum_per_dataset_features_and_sweep_column():
    rows = []
    for nc in (4, 10):
        for rep in range(2):
            for nf in (1, 2):
                better = "a" if (nf == 2) == (nc == 4) else "b"
                for m in "ab":
                    rows.append(dict(dataset="colon", method=m, rep=rep, n_features=nf, metric="acc",
                                     value=1.0 if m == better else 0.0, n_constraints=nc))
    df = pd.DataFrame(rows)
    got = S.rank_sum(df, "acc", n_features={"colon": 2}, by=["n_constraints"])
    assert got.loc[("colon", 4), ["a", "b"]].tolist() == [2, 4]
    assert got.loc[("colon", 10), ["a", "b"]].tolist() == [4, 2]
    bad = df[~((df.method == "b") & (df.rep == 1))]
    with pytest.raises(InputError, match="lack a value"):
        S.rank_sum(bad, "acc", n_features=2, by=["n_constraints"])
    with pytest.raises(InputError, match="no rows for metric"):
        S.rank_sum(df, "auc")


def test_summary_matrix_from_tidy():
    df = _tidy({("d0", "a"): [0.2, 0.4], ("d0", "b"): [0.6, 0.8], ("d1", "a"): [1.0, 1.0], ("d1", "b"): [0.0, 0.5]},
               n_features=(1, 2))
    m = S.summary_matrix(df, "accuracy")
    assert m.loc["a", "d0"] == pytest.approx(0.3) and m.loc["b", "d1"] == pytest.approx(0.25)
    assert list(m.index) == ["a", "b"] and list(m.columns) == ["d0", "d1"]
