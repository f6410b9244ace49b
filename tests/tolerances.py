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
   (:mod:`ssfs._numerics`), values copied rather than computed.
1b. Element-wise transforms ("elementwise": log, min-max, z-score, means of <= 10 values): a
   few ulps of the result (libm's log2 and division are correctly rounded or within 1 ulp),
   hence ``1e-14``/``1e-15`` on values of order 1-10.
2. Same formula, summed in another order ("order") (vectorised vs loop, sparse vs dense, chunked vs
   one call, batch vs single): two sums of n terms differ by at most
   2 gamma_n sum|x| <= 2 n u sum|x|. Test data are O(1) with n <= 200 terms per sum and a
   condition sum|x| / |sum x| below ~50 (random normal data, no cancelling means), so
   the relative difference is below 2 * 200 * 1.1e-16 * 50 ~ 2.2e-12: ``rtol=1e-10``
   (``assert_allclose``) or ``rel=1e-12`` where n <= 40 and the terms share a sign
   (rank products, sums of squares: condition 1, bound 2 * 40 * u ~ 9e-15), and
   ``atol=1e-12`` for results of magnitude <= 1 (ReliefF weights, heat-kernel weights
   exp(-d/t) in (0, 1], log rank products of <= 50 bootstraps). See :func:`sum_rtol`.
3. Squared distances through the Gram matrix ("gram") (||x||^2 + ||y||^2 - 2 x.y): absolute error
   <= gamma_p (||x||^2 + ||y||^2) * 3, which is relative to d^2 only when d is not small;
   hence ``rtol=1e-9`` with ``atol`` >= 4 p u max||x||^2 (:func:`gram_atol`), and for
   quantities derived through a square root (a distance near 0, Davies-Bouldin's
   scatter) ``abs = sqrt(8 u max G_ii)`` (test_csfs).
4. Eigen/SVD solvers and iterative methods ("lapack") (PCA, SSDR, SOM, k-means, MDL cut points):
   LAPACK's backward error is O(p u ||A||), an eigenvector's error that over the spectral
   gap; with the gaps of the planted test data (>= 1e-2 relative) ``rtol=1e-7`` covers it
   with three orders to spare; signs are fixed before comparing.
5. Another package as reference ("reference") (scikit-learn, scipy, scikit-rebate, scanpy, samr's
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

#: The tight tolerances (<= 1e-8) of the suite, by test, with their class above (inventory of
#: 23 Nov 2026; tests/test_blas_kernels.py reruns the files with two other OpenBLAS kernels).
TIGHT = {
    'tests/experiment/test_metrics.py::test_red_absolute_blocks': 'order',
    'tests/experiment/test_metrics.py::test_red_matches_pair_sum': 'order',
    'tests/methods/test_stability.py::test_nogueira_estimate_variance_and_interval': 'order',
    'tests/io/test_preprocess.py::test_log2_with_offset_dense_and_sparse': 'elementwise',
    'tests/io/test_preprocess.py::test_microarray_threshold_filter_log': 'elementwise',
    'tests/io/test_preprocess.py::test_minmax_and_zscore_hand_values': 'elementwise',
    'tests/io/test_preprocess.py::test_minmax_and_zscore_match_scikit_learn': 'elementwise',
    'tests/io/test_preprocess.py::test_preprocess_keeps_sparse_where_possible': 'elementwise',
    'tests/io/test_preprocess.py::test_quantile_normalisation_literature_example': 'elementwise',
    'tests/io/test_preprocess.py::test_quantile_normalisation_matches_direct_definition': 'elementwise',
    'tests/methods/test_constraint_scores.py::test_c3_matches_direct_sums': 'order',
    'tests/methods/test_constraint_scores.py::test_c4_is_laplacian_times_c1': 'order',
    'tests/methods/test_constraint_scores.py::test_knn_search_matches_sklearn': 'gram',
    'tests/methods/test_contract.py::test_sparse_input_equals_dense': 'order',
    'tests/methods/test_csfs.py::test_davies_bouldin_from_gram_matches_sklearn': 'gram',
    'tests/methods/test_csfs.py::test_phi_matches_direct_pair_sums': 'order',
    'tests/methods/test_csfs.py::test_phi_without_constraints_is_laplacian_like': 'order',
    'tests/methods/test_efsis.py::test_chunks_combine_to_full_run': 'order',
    'tests/methods/test_efsis.py::test_efsis_reproducible_under_threads_and_chunks': 'order',
    'tests/methods/test_efsis.py::test_relieff_shared_work_equals_per_resample': 'order',
    'tests/methods/test_efsis_rankers.py::test_geode_matches_chdir': 'reference',
    'tests/methods/test_efsis_rankers.py::test_geode_multiclass_one_vs_rest': 'order',
    'tests/methods/test_efsis_rankers.py::test_infogain_equal_width': 'order',
    'tests/methods/test_efsis_rankers.py::test_infogain_exact_ties_take_the_lowest_cut': 'order',
    'tests/methods/test_efsis_rankers.py::test_infogain_many_classes_and_blocks': 'order',
    'tests/methods/test_efsis_rankers.py::test_infogain_mdl_matches_recursive_definition': 'order',
    'tests/methods/test_efsis_rankers.py::test_pair_diff_sums_every_kind_and_blocking': 'order',
    'tests/methods/test_efsis_rankers.py::test_relieff_exprank_ramp_and_instances': 'order',
    'tests/methods/test_efsis_rankers.py::test_relieff_layout_and_sparse_densify_do_not_change_scores': 'order',
    'tests/methods/test_efsis_rankers.py::test_relieff_multiclass_priors_and_skrebate_variant': 'reference',
    'tests/methods/test_efsis_rankers.py::test_relieff_sparse_equals_dense_and_mixed_types': 'order',
    'tests/methods/test_efsis_rankers.py::test_relieff_threshold_rule_at_exact_std': 'order',
    'tests/methods/test_efsis_rankers.py::test_relieff_two_class_matches_skrebate': 'reference',
    'tests/methods/test_efsis_rankers.py::test_sam_multiclass_matches_samr_formula': 'reference',
    'tests/methods/test_efsis_rankers.py::test_sam_s0_estimate_follows_samr': 'reference',
    'tests/methods/test_efsis_rankers.py::test_sam_two_class_matches_direct_formula': 'order',
    'tests/methods/test_enscls.py::test_literal_reading_member_scores_equal_direct_pair_sums': 'order',
    'tests/methods/test_enscls.py::test_member_scores_equal_direct_pair_sums': 'order',
    'tests/methods/test_extraction.py::test_pca_matches_sklearn': 'lapack',
    'tests/methods/test_extraction.py::test_ssdr_matches_dense_eigenproblem': 'lapack',
    'tests/methods/test_extraction.py::test_ssdr_row_space_handles_p_larger_than_n': 'lapack',
    'tests/methods/test_graph_and_scores.py::test_cls_literal_reading_matches_direct_formula': 'order',
    'tests/methods/test_graph_and_scores.py::test_cls_matches_direct_formula': 'order',
    'tests/methods/test_graph_and_scores.py::test_constrained_graph_knn_among_restricts_neighbour_edges': 'order',
    'tests/methods/test_graph_and_scores.py::test_heat_kernel_graph_matches_brute_force': 'order',
    'tests/methods/test_graph_and_scores.py::test_sparse_and_dense_give_same_scores': 'order',
    'tests/methods/test_graph_and_scores.py::test_weighted_pair_sums_against_pair_loop': 'order',
    'tests/methods/test_som.py::test_som_deterministic_and_sparse_equals_dense': 'order',
    'tests/methods/test_som.py::test_som_matches_direct_batch_updates': 'order',
    'tests/methods/test_sselect.py::test_binary_nmi_matches_sklearn': 'reference',
    'tests/methods/test_sselect.py::test_sselect_eta_one_is_laplacian_score': 'order',
    'tests/methods/test_sselect.py::test_sselect_matches_direct_formula': 'order',
    'tests/methods/test_ssfi.py::test_importance_is_member_by_member_sum': 'order',
    'tests/methods/test_ssfi.py::test_scores_unchanged_from_member_by_member_implementation': 'order',
    'tests/test_bad_input.py::test_cls_without_constraints_falls_back_to_laplacian_score': 'order',
    'tests/test_bad_input.py::test_small_sparse_input_is_densified_with_identical_result': 'order',
    'tests/test_singlecell.py::test_laplacian_on_stored_graph_equals_direct_pair_sums': 'order',
}
#: class -> the bound behind it (module doc)
CLASSES = {
    'order': ('same formula summed in another order (loop, pair sums, chunks, blocks, sparse/dense, '
              'permutation): 2 gamma_n sum|x|'),
    'gram': 'squared distances through the Gram matrix: absolute error <= 3 gamma_p (|x|^2 + |y|^2)',
    'lapack': 'LAPACK eigen/SVD: backward error O(p u ||A||) over the planted spectral gap',
    'reference': 'reference package computing the same float64 sums (class 2 bound) in its own order',
    'elementwise': 'element-wise transforms (log, min-max, z-score, quantile means of <= 10 values): a few ulps',
}


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
