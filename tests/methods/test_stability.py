"""Stability measures on hand-computed cases and against their textbook definitions."""

from __future__ import annotations

import numpy as np
import pytest

from ssfs.errors import InputError
from ssfs.methods._shared.stability import (
    all_measures,
    efsis_stability,
    jaccard,
    kuncheva,
    nogueira,
    selection_matrix,
)

SETS = [[0, 1, 2], [0, 1, 3], [0, 4, 5]]  # p = 10


def test_efsis_eq1_hand_case():
    # F = {0..5}; freq = 3,2,1,1,1,1 -> sum(freq/M)/|F| = (9/3)/6 = 0.5
    assert efsis_stability(SETS) == pytest.approx(0.5)
    assert efsis_stability([[1, 2], [1, 2]]) == 1.0
    assert efsis_stability(selection_matrix(SETS, 10)) == pytest.approx(0.5)


def test_kuncheva_hand_case():
    # pairs: r = 2, 1, 1; k = 3, p = 10: (r*10 - 9) / (3 * 7)
    expect = np.mean([(2 * 10 - 9) / 21, (10 - 9) / 21, (10 - 9) / 21])
    assert kuncheva(SETS, 10) == pytest.approx(expect)
    assert kuncheva([[1, 2], [1, 2]], 10) == pytest.approx(1.0)
    with pytest.raises(InputError):
        kuncheva([[1, 2], [1, 2, 3]], 10)


def test_jaccard_hand_case():
    expect = np.mean([2 / 4, 1 / 5, 1 / 5])
    assert jaccard(SETS, 10) == pytest.approx(expect)


def _nogueira_pairwise(Z):
    """Nogueira et al. 2018 Def. 4 via the unbiased per-feature variances, loops over features."""
    M, d = Z.shape
    kbar = Z.sum() / M
    s2 = [M / (M - 1) * Z[:, f].mean() * (1 - Z[:, f].mean()) for f in range(d)]
    return 1 - np.mean(s2) / (kbar / d * (1 - kbar / d))


def _nogueira_variance_loop(Z):
    M, d = Z.shape
    pf = Z.mean(axis=0)
    kbar = pf.sum()
    denom = kbar / d * (1 - kbar / d)
    stab = _nogueira_pairwise(Z)
    phi = []
    for i in range(M):
        k = Z[i].sum()
        corr = stab / 2 * (2 * k * kbar / d**2 - k / d - kbar / d + 1)
        phi.append((np.mean(Z[i] * pf) - k * kbar / d**2 + corr) / denom)
    phi = np.array(phi)
    return 4 / M**2 * ((phi - phi.mean()) ** 2).sum()


def test_nogueira_estimate_variance_and_interval():
    rng = np.random.default_rng(0)
    Z = rng.random((12, 40)) < np.linspace(0.05, 0.9, 40)
    res = nogueira(Z)
    assert res.stability == pytest.approx(_nogueira_pairwise(Z.astype(float)), rel=1e-12)
    assert res.variance == pytest.approx(_nogueira_variance_loop(Z.astype(float)), rel=1e-12)
    assert res.lower < res.stability < res.upper
    assert res.upper - res.stability == pytest.approx(1.959963984540054 * np.sqrt(res.variance))
    same = nogueira([[1, 2, 3]] * 5, 20)
    assert same.stability == pytest.approx(1.0) and same.variance == pytest.approx(0.0)
    # Nogueira equals the mean pairwise Kuncheva index when all sets have the same size
    sets = [rng.choice(30, 6, replace=False) for _ in range(8)]
    assert nogueira(sets, 30).stability == pytest.approx(kuncheva(sets, 30), rel=1e-12)


def test_all_measures_and_input_checks():
    m = all_measures(SETS, 10)
    assert set(m) >= {"efsis", "kuncheva", "jaccard", "nogueira", "nogueira_lower", "nogueira_upper"}
    with pytest.raises(InputError):
        selection_matrix([[0, 11]], 10)
    with pytest.raises(InputError):
        efsis_stability([[0, 1]])  # one run
    with pytest.raises(InputError):
        selection_matrix([[0, 0, 1], [1, 2, 3]], 10)
