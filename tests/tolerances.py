"""Where the numeric tolerances of the test suite come from (issue 19 item 6).

A tolerance is a property of the computation, not of the machine the test was written
on: it bounds the rounding error of the two computations being compared, for any
summation order a BLAS kernel may choose (``tests/test_blas_kernels.py`` reruns the
tightest tests with two other OpenBLAS kernels). u = 2^-53 ~ 1.1e-16 is the unit roundoff
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

#: The tight tolerances (<= 1e-8) of the suite, by test, with their class above: every test whose body
#: (or a helper of its file it calls) passes a literal rtol/atol/abs/rel <= 1e-8 (:func:`tight_tests`
#: finds them; tests/test_blas_kernels.py checks the list is complete and reruns these tests with two
#: other OpenBLAS kernels).
TIGHT = {
    'tests/experiment/test_metrics.py::test_red_absolute_blocks': 'order',
    'tests/experiment/test_metrics.py::test_red_matches_pair_sum': 'order',
    'tests/experiment/test_mpc_kmeans.py::test_singleton_and_empty_clusters_keep_finite_metrics': 'order',
    'tests/experiment/test_resampled_tests.py::test_corrected_interval_inverts_the_test': 'elementwise',
    'tests/experiment/test_resampled_tests.py::test_corrected_ttest_by_hand': 'elementwise',
    ('tests/experiment/test_resampled_tests.py::'
     'test_corrected_ttest_reduces_to_paired_ttest_and_is_more_conservative'): 'reference',
    'tests/io/test_preprocess.py::test_log2_with_offset_dense_and_sparse': 'elementwise',
    'tests/io/test_preprocess.py::test_microarray_threshold_filter_log': 'elementwise',
    'tests/io/test_preprocess.py::test_minmax_and_zscore_hand_values': 'elementwise',
    'tests/io/test_preprocess.py::test_minmax_and_zscore_match_scikit_learn': 'elementwise',
    'tests/io/test_preprocess.py::test_preprocess_keeps_sparse_where_possible': 'elementwise',
    'tests/io/test_preprocess.py::test_quantile_normalisation_literature_example': 'elementwise',
    'tests/io/test_preprocess.py::test_quantile_normalisation_matches_direct_definition': 'elementwise',
    'tests/methods/test_autocorrelation.py::test_a_given_graph_or_embedding_is_the_one_measured_on': 'order',
    'tests/methods/test_autocorrelation.py::test_autocorrelation_on_a_subsample_beyond_refine_samples': 'order',
    'tests/methods/test_autocorrelation.py::test_moran_i_by_hand_dense_sparse_and_within_batches': 'order',
    'tests/methods/test_autocorrelation.py::test_poisson_autocorrelation_by_hand_and_the_count_scale': 'order',
    'tests/methods/test_batches.py::test_methods_without_a_batch_parameter_rank_data_centred_within_batches': 'order',
    'tests/methods/test_batches.py::test_one_batch_is_no_batch_and_bad_batches_are_refused': 'order',
    'tests/methods/test_batches.py::test_r2_within_batches_is_the_residuals_r2': 'order',
    'tests/methods/test_bootstrap_batches.py::test_a_resamples_sam_scores_do_not_depend_on_the_others': 'order',
    'tests/methods/test_bootstrap_batches.py::test_binned_mad_cv_matches_numpy_medians': 'reference',
    'tests/methods/test_bootstrap_batches.py::test_sam_geode_bootstraps_match_one_run_per_resample': 'order',
    'tests/methods/test_class_stats.py::test_equals_scanpy_rank_genes_groups_on_full_labels': 'reference',
    'tests/methods/test_class_stats.py::test_hard_labels_equal_the_plain_per_class_computation': 'order',
    'tests/methods/test_class_stats.py::test_sparse_equals_dense_and_scores_ignore_a_shift': 'order',
    'tests/methods/test_constraint_scores.py::test_c3_matches_direct_sums': 'order',
    'tests/methods/test_constraint_scores.py::test_c4_balanced_is_a_weighted_geometric_mean_by_hand': 'order',
    'tests/methods/test_constraint_scores.py::test_c4_is_laplacian_times_c1': 'order',
    'tests/methods/test_constraint_scores.py::test_knn_search_matches_sklearn': 'gram',
    'tests/methods/test_contract.py::test_sparse_input_equals_dense': 'order',
    'tests/methods/test_counts.py::test_read_counts_by_hand': 'elementwise',
    'tests/methods/test_crossfit.py::test_crossfit_pvalues_by_hand': 'order',
    'tests/methods/test_csfs.py::test_balanced_csfs_on_knn_is_balanced_cls': 'order',
    'tests/methods/test_csfs.py::test_davies_bouldin_from_gram_matches_sklearn': 'gram',
    'tests/methods/test_csfs.py::test_phi_matches_direct_pair_sums': 'order',
    'tests/methods/test_csfs.py::test_phi_without_constraints_is_laplacian_like': 'order',
    'tests/methods/test_binary_counts.py::test_rates_by_hand_where_every_margin_is_alike': 'lapack',
    'tests/methods/test_binary_counts.py::test_residuals_by_hand': 'elementwise',
    'tests/methods/test_binary_counts.py::test_which_counts_are_binary': 'lapack',
    'tests/methods/test_deep_counts.py::test_the_readings_by_hand': 'elementwise',
    'tests/methods/test_dropouts.py::test_the_reading_by_hand': 'elementwise',
    'tests/methods/test_deep_counts.py::test_deep_counts_without_labels_rank_by_moran_i': 'order',
    'tests/methods/test_deep_counts.py::test_which_counts_are_deep': 'order',
    'tests/methods/test_efsis.py::test_chunks_combine_to_full_run': 'order',
    'tests/methods/test_efsis.py::test_efsis_reproducible_under_threads_and_chunks': 'order',
    'tests/methods/test_efsis.py::test_relieff_shared_work_equals_per_resample': 'order',
    'tests/methods/test_efsis.py::test_weighted_rows_give_equal_columns_equal_bits': 'order',
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
    'tests/methods/test_enscls.py::test_members_share_a_pca_graph_on_single_cells': 'order',
    'tests/methods/test_extraction.py::test_pca_matches_sklearn': 'lapack',
    'tests/methods/test_extraction.py::test_ssdr_matches_dense_eigenproblem': 'lapack',
    'tests/methods/test_extraction.py::test_ssdr_row_space_handles_p_larger_than_n': 'lapack',
    'tests/methods/test_graph_and_scores.py::test_cls_literal_reading_matches_direct_formula': 'order',
    'tests/methods/test_graph_and_scores.py::test_cls_matches_direct_formula': 'order',
    'tests/methods/test_graph_and_scores.py::test_constrained_graph_knn_among_restricts_neighbour_edges': 'order',
    'tests/methods/test_graph_and_scores.py::test_heat_kernel_graph_matches_brute_force': 'order',
    'tests/methods/test_graph_and_scores.py::test_laplacian_directed_graph_matches_dense_formula': 'order',
    'tests/methods/test_graph_and_scores.py::test_sparse_and_dense_give_same_scores': 'order',
    'tests/methods/test_graph_and_scores.py::test_weighted_pair_sums_against_pair_loop': 'order',
    'tests/methods/test_kernels.py::test_cls_same_scores_with_kernels': 'order',
    'tests/methods/test_kernels.py::test_cross_sums_match_scipy_by_group': 'reference',
    'tests/methods/test_kernels.py::test_cross_sums_symmetric_half': 'order',
    'tests/methods/test_kernels.py::test_pair_distances_match_scipy': 'gram',
    'tests/methods/test_kernels.py::test_leading_eigenpairs_either_driver': 'lapack',
    'tests/methods/test_kernels.py::test_pca_embedding_matches_exact_pca': 'lapack',
    'tests/methods/test_kernels.py::test_signal_pca_is_the_exact_pca_where_it_is_cheaper': 'lapack',
    'tests/methods/test_kmeans.py::test_lloyd_by_hand': 'order',
    'tests/methods/test_kmeans.py::test_same_partition_and_sum_of_squares_as_scikit_learn': 'reference',
    'tests/methods/test_knn.py::test_duplicated_real_rows_as_brute_force': 'gram',
    'tests/methods/test_label_terms.py::test_balanced_cls_reduces_to_laplacian_and_weighs_labels_by_share': 'order',
    'tests/methods/test_label_terms.py::test_closed_forms_equal_the_pair_sums': 'order',
    'tests/methods/test_label_terms.py::test_cs1_is_a_function_of_fisher_for_balanced_classes': 'order',
    'tests/methods/test_label_terms.py::test_negative_binomial_counts_are_overdispersed_and_normalised': 'elementwise',
    'tests/methods/test_label_terms.py::test_pca_graph_space_for_single_cell_like_input_only': 'lapack',
    ('tests/methods/test_nothing_rises.py::'
     'test_top_variance_is_the_covariance_s_largest_eigenvalue'): 'lapack',
    'tests/methods/test_nothing_rises.py::test_gene_dispersion_by_hand': 'order',
    ('tests/methods/test_nothing_rises.py::'
     'test_without_labels_nothing_rises_every_gene_its_dispersion'): 'order',
    'tests/methods/test_populations.py::test_best_overlap_by_hand': 'elementwise',
    ('tests/methods/test_populations.py::'
     'test_separation_allows_for_groups_smaller_than_the_neighbourhood'): 'elementwise',
    'tests/methods/test_populations.py::test_separation_by_hand': 'elementwise',
    'tests/methods/test_propagate.py::test_explained_features_are_the_anova_f_tests_bh_discoveries': 'reference',
    'tests/methods/test_propagate.py::test_signal_variance_by_hand': 'order',
    'tests/methods/test_propagate.py::test_the_refined_graphs_genes_do_not_follow_the_column_order': 'order',
    ('tests/methods/test_propagation.py::'
     'test_spread_is_zhou_et_al_closed_form_and_scikit_learns_label_spreading'): 'reference',
    'tests/methods/test_residuals.py::test_axes_of_many_columns_without_a_covariance_matrix': 'lapack',
    'tests/methods/test_residuals.py::test_components_fitted_on_some_cells_project_every_cell': 'lapack',
    'tests/methods/test_residuals.py::test_counts_are_read_back_from_log1p_normalised_values': 'elementwise',
    'tests/methods/test_residuals.py::test_genes_that_vary_alone_do_not_set_the_residual_axes': 'lapack',
    'tests/methods/test_residuals.py::test_one_overdispersion_for_all_genes_as_hotspots_moment_estimate': 'reference',
    'tests/methods/test_residuals.py::test_residual_scores_on_a_subsample_and_on_a_given_graph': 'order',
    'tests/methods/test_residuals.py::test_residuals_and_their_shared_variance_by_hand': 'order',
    'tests/methods/test_residuals.py::test_the_groups_r2_of_the_residuals_by_hand': 'order',
    'tests/methods/test_residuals.py::test_the_residual_space_counts_structure_with_every_gene_scaled': 'lapack',
    'tests/methods/test_som.py::test_som_deterministic_and_sparse_equals_dense': 'order',
    'tests/methods/test_som.py::test_som_matches_direct_batch_updates': 'order',
    'tests/methods/test_sselect.py::test_binary_nmi_matches_sklearn': 'reference',
    'tests/methods/test_sselect.py::test_sselect_eta_one_is_laplacian_score': 'order',
    'tests/methods/test_sselect.py::test_sselect_matches_direct_formula': 'order',
    'tests/methods/test_ssfi.py::test_importance_is_member_by_member_sum': 'order',
    'tests/methods/test_ssfi.py::test_scores_unchanged_from_member_by_member_implementation': 'order',
    'tests/methods/test_stability.py::test_nogueira_estimate_variance_and_interval': 'order',
    'tests/methods/test_unjudged_labels.py::test_explained_features_take_turns_by_hand': 'elementwise',
    'tests/methods/test_unwanted.py::test_the_rising_basis_is_the_planted_component': 'lapack',
    'tests/test_bad_input.py::test_cls_without_constraints_falls_back_to_laplacian_score': 'order',
    'tests/test_bad_input.py::test_small_sparse_input_is_densified_with_identical_result': 'order',
    'tests/test_scale_and_ties.py::test_exact_subnormals_and_integers_near_2_62_are_not_constant': 'elementwise',
    'tests/test_singlecell.py::test_laplacian_on_stored_graph_equals_direct_pair_sums': 'order',
    ('tests/workflow/test_label_constraints_step.py::'
     'test_select_step_never_builds_pairs_and_ranks_as_with_the_pairs'): 'order',
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


#: keyword arguments that carry a tolerance (numpy.testing, pytest.approx, math.isclose)
TOLERANCE_KEYWORDS = frozenset({"rtol", "atol", "abs", "rel"})


def _literal(node, names: dict):
    """The value of a literal or of a name bound to one (``names``), else None."""
    import ast

    if isinstance(node, ast.Name):
        return names.get(node.id)
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _bound_literals(statements) -> dict:
    """name -> literal value of every ``name = literal`` among ``statements`` (AST nodes)."""
    import ast

    return {node.targets[0].id: value for node in statements
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and (value := _literal(node.value, {})) is not None}


def _has_tight_tolerance(function, constants: dict) -> bool:
    """``function`` passes a tolerance keyword a value in (0, 1e-8]: a literal, or a name it or its
    module (``constants``) binds to one."""
    import ast

    names = constants | _bound_literals(ast.walk(function))
    values = (_literal(kw.value, names) for call in ast.walk(function) if isinstance(call, ast.Call)
              for kw in call.keywords if kw.arg in TOLERANCE_KEYWORDS)
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1e-8 for v in values)


def tight_tests(root) -> set[str]:
    """Every test ("path::function", paths relative to ``root``) of ``root``/tests that passes a
    tolerance <= 1e-8 (a literal, or a name its function or module binds to one) in its body or
    through a helper function of its own file: what :data:`TIGHT` must list."""
    import ast
    from pathlib import Path

    root = Path(root)
    found = set()
    for path in sorted((root / "tests").rglob("test_*.py")):
        module = ast.parse(path.read_text())
        constants = _bound_literals(module.body)
        functions = {node.name: node for node in ast.walk(module)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        helpers = {name for name, function in functions.items()
                   if not name.startswith("test_") and _has_tight_tolerance(function, constants)}
        for name, function in functions.items():
            called = {call.func.id for call in ast.walk(function)
                      if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)}
            if name.startswith("test_") and (_has_tight_tolerance(function, constants) or called & helpers):
                found.add(f"{path.relative_to(root).as_posix()}::{name}")
    return found
