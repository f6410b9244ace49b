"""Where the numeric tolerances of the test suite come from (issue 19 item 6).

A tolerance is a property of the computation, not of the machine the test was written
on: it bounds the rounding error of the two computations being compared, for any
summation order a BLAS kernel may choose (``tests/test_blas_kernels.py`` reruns the
tightest files with two other OpenBLAS kernels). u = 2^-53 ~ 1.1e-16 is the unit roundoff
and gamma_n = n u / (1 - n u) the bound of Higham (Accuracy and Stability of Numerical
Algorithms, 2nd ed., Lemma 3.1 and eq. 3.5) on the relative error of a sum or dot
product of n terms, in ANY order: |fl(sum x) - sum x| <= gamma_{n-1} sum |x|.

Classes used in the suite (the first match applies):

1. Exact (``assert_array_equal``, ``==``): integer results, orders, counts, outputs of the
   same code on the same input (reruns, ``--cores``), multiplication by powers of two
   (``safe_scale``), values copied rather than computed.
2. Same formula, summed in another order (vectorised vs loop, sparse vs dense, chunked vs
   one call, batch vs single): two sums of n terms differ by at most
   2 gamma_n sum|x| <= 2 n u sum|x|. Test data are O(1) with n <= 200 terms per sum and a
   condition sum|x| / |sum x| below ~50 (random normal data, no cancelling means), so
   the relative difference is below 2 * 200 * 1.1e-16 * 50 ~ 2.2e-12: ``rtol=1e-10``
   (``assert_allclose``) or ``rel=1e-12`` where n <= 40 and the terms share a sign
   (rank products, sums of squares: condition 1, bound 2 * 40 * u ~ 9e-15), and
   ``atol=1e-12`` for results of magnitude <= 1 (ReliefF weights, heat-kernel weights
   exp(-d/t) in (0, 1], log rank products of <= 50 bootstraps). See :func:`sum_rtol`.
3. Squared distances through the Gram matrix (||x||^2 + ||y||^2 - 2 x.y): absolute error
   <= gamma_p (||x||^2 + ||y||^2) * 3, which is relative to d^2 only when d is not small;
   hence ``rtol=1e-9`` with ``atol`` >= 4 p u max||x||^2 (:func:`gram_atol`), and for
   quantities derived through a square root (a distance near 0, Davies-Bouldin's
   scatter) ``abs = sqrt(8 u max G_ii)`` (test_csfs).
4. Eigen/SVD solvers and iterative methods (PCA, SSDR, SOM, k-means, MDL cut points):
   LAPACK's backward error is O(p u ||A||), an eigenvector's error that over the spectral
   gap; with the gaps of the planted test data (>= 1e-2 relative) ``rtol=1e-7`` covers it
   with three orders to spare; signs are fixed before comparing.
5. Another package as reference (scikit-learn, scipy, scikit-rebate, scanpy, samr's
   formulas): its float32 internals (scanpy: ``rtol=1e-4``), its documented tolerances,
   or class 2 when it computes the same sums in float64.
6. Published numbers (papers' tables, Demšar's critical differences): half a unit of the
   last printed digit (``abs=0.005`` for two decimals, 0.01 where the paper rounds twice).
7. Statistical assertions (recovery of planted features, stability of rankings): exact on
   planted data whose signal is >= 3 noise standard deviations (failure probability below
   1e-3 per feature by the normal tail), never a tolerance tuned to one seed.
"""

from __future__ import annotations

import numpy as np

U = np.finfo(float).eps / 2  # unit roundoff 2^-53


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u)."""
    return n * U / (1 - n * U)


def sum_rtol(n: int, condition: float = 1.0, margin: float = 10.0) -> float:
    """Relative tolerance between two orders of summing n terms (class 2)."""
    return margin * 2 * gamma(n) * condition


def gram_atol(X, margin: float = 4.0) -> float:
    """Absolute tolerance of squared distances from the Gram matrix of the rows of X (class 3)."""
    X = np.asarray(X, dtype=float)
    return margin * 3 * gamma(X.shape[1]) * float((X * X).sum(axis=1).max())
