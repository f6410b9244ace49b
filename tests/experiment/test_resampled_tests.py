"""Per-dataset tests over repetitions: Nadeau & Bengio's corrected resampled t-test
(by hand, and against scipy's t distribution and paired t-test) and what the exact
Wilcoxon signed-rank test can reach with few repetitions."""

import numpy as np
import pytest
from scipy import stats as sps

from ssfs.errors import InputError
from ssfs.experiment import stats as S

A = [0.9, 0.8, 0.85, 0.95, 0.9]
B = [0.8, 0.82, 0.8, 0.85, 0.84]


def test_corrected_ttest_by_hand():
    # d = .10 -.02 .05 .10 .06: mean .058, var(ddof=1) = .00968/4 = .00242
    # t = .058 / sqrt((1/5 + 50/100) * .00242) = .058 / sqrt(.001694) = 1.409196
    t, p = S.corrected_resampled_ttest(A, B, n_train=100, n_test=50)
    assert t == pytest.approx(0.058 / np.sqrt(0.7 * 0.00242), rel=1e-12)
    assert t == pytest.approx(1.4091956, abs=1e-6)
    assert p == pytest.approx(2 * sps.t.sf(1.4091956391746026, 4), rel=1e-10)
    assert p == pytest.approx(0.23157, abs=1e-5)
    t2, p2 = S.corrected_resampled_ttest(B, A, n_train=100, n_test=50)
    assert (t2, p2) == pytest.approx((-t, p))


def test_corrected_ttest_reduces_to_paired_ttest_and_is_more_conservative():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.8, 0.05, 10), rng.normal(0.75, 0.05, 10)
    ref = sps.ttest_rel(a, b)
    t0, p0 = S.corrected_resampled_ttest(a, b, n_train=1e12, n_test=1e-12)  # ratio -> 0
    assert t0 == pytest.approx(ref.statistic, rel=1e-9) and p0 == pytest.approx(ref.pvalue, rel=1e-9)
    t, p = S.corrected_resampled_ttest(a, b, n_train=120, n_test=60)
    assert t == pytest.approx(ref.statistic * np.sqrt(0.1 / (0.1 + 0.5)), rel=1e-12)
    assert p > ref.pvalue


def test_corrected_interval_inverts_the_test():
    m, lo, hi = S.corrected_interval(A, B, n_train=100, n_test=50, alpha=0.05)
    assert m == pytest.approx(0.058)
    half = sps.t.ppf(0.975, 4) * np.sqrt(0.7 * 0.00242)
    assert (lo, hi) == pytest.approx((0.058 - half, 0.058 + half), rel=1e-12)
    # the interval touches 0 exactly at alpha = p
    _, p = S.corrected_resampled_ttest(A, B, n_train=100, n_test=50)
    _, lo_p, _ = S.corrected_interval(A, B, n_train=100, n_test=50, alpha=p)
    assert lo_p == pytest.approx(0.0, abs=1e-12)


def test_corrected_ttest_edge_cases():
    assert S.corrected_resampled_ttest([1, 2, 3], [1, 2, 3], n_train=10, n_test=5) == (0.0, 1.0)
    t, p = S.corrected_resampled_ttest([2, 3, 4], [1, 2, 3], n_train=10, n_test=5)
    assert t == np.inf and p == 0.0
    with pytest.raises(InputError, match="at least 2"):
        S.corrected_resampled_ttest([1], [2], n_train=10, n_test=5)
    with pytest.raises(InputError, match="lengths"):
        S.corrected_resampled_ttest([1, 2], [2, 3, 4], n_train=10, n_test=5)
    with pytest.raises(InputError, match="positive"):
        S.corrected_resampled_ttest([1, 2], [2, 4], n_train=0, n_test=5)
    with pytest.raises(InputError, match="non-finite"):
        S.corrected_resampled_ttest([1, np.nan], [2, 4], n_train=10, n_test=5)


def test_wilcoxon_floor_matches_scipy_exact():
    for n in range(1, 9):
        d = np.arange(1, n + 1, dtype=float)  # all positive, no ties: the most extreme case
        assert S.wilcoxon_min_pvalue(n) == pytest.approx(sps.wilcoxon(d, method="exact").pvalue)
    assert S.wilcoxon_min_pvalue(5) == 0.0625
    assert S.wilcoxon_pairs_needed(0.05) == 6 and S.wilcoxon_pairs_needed(0.1) == 5
    assert S.wilcoxon_pairs_needed(0.0625) == 5
