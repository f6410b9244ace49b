"""Column sums of sparse matrices by blocks of rows (memory bounded): the same as the whole products."""

from __future__ import annotations

import numpy as np


def test_sparse_column_sums_by_blocks_match_the_dense_products(monkeypatch):
    from scipy import sparse

    from ssfs.methods._shared import column_sums

    X = np.array([[0.0, 2.0, -1.0], [3.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 4.0]])
    W = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [2.0, 0.0]])
    monkeypatch.setattr(column_sums, "BLOCK_VALUES", 1)  # one row per block
    S = sparse.csr_matrix(X)
    np.testing.assert_allclose(column_sums.sparse_column_sums(S, W, np.square), (X * X).T @ W)
    nonzero = column_sums.sparse_column_sums(S, W, lambda v: (v != 0) * 1.0)
    np.testing.assert_allclose(nonzero, [[0.5, 1.5], [1.5, 0.5], [3.0, 0.0]])
    np.testing.assert_allclose(column_sums.sparse_column_sums(S, W[:, 0], np.square), [0.125, 4.125, 33.0])
    G = sparse.csr_matrix(np.array([[0, 1, 0, 2], [1, 0, 0.5, 0], [0, 0.5, 0, 0], [2, 0, 0, 0]]))
    np.testing.assert_allclose(column_sums.sparse_quad_forms(G, S), np.einsum("ij,ij->j", G.toarray() @ X, X))
    assert column_sums.sparse_quad_forms(G, S)[0] == 1.5  # the 1-2 edge both ways: 2 x 0.5 x 3 x 0.5
