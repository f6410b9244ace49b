"""Normalisations, imputation and filtering against hand-computed numbers and scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from anndata import AnnData
from scipy import sparse
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import ssfs._validation
from ssfs import preprocess as pp
from ssfs.errors import ConfigError, InputError


def test_quantile_normalisation_literature_example():
    # Wikipedia "Quantile normalization" example (genes A-D x arrays 1-3), here samples as rows.
    X = np.array([[5, 2, 3, 4], [4, 1, 4, 2], [3, 4, 6, 8]], dtype=float)
    expected = np.array(
        [
            [17 / 3, 2, 3, 14 / 3],
            [31 / 6, 2, 31 / 6, 3],  # the tied 4s share (14/3 + 17/3) / 2
            [2, 3, 14 / 3, 17 / 3],
        ]
    )
    np.testing.assert_allclose(pp.quantile_normalize(X), expected, rtol=1e-14)


def test_quantile_normalisation_matches_direct_definition():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(5, 9)).astype(float)  # many ties, including triples
    profile = np.mean([sorted(row) for row in X], axis=0)
    expected = np.empty_like(X)
    for i, row in enumerate(X):
        srt = np.sort(row)
        for j, v in enumerate(row):
            pos = np.flatnonzero(srt == v)
            expected[i, j] = profile[pos].mean()
    np.testing.assert_allclose(pp.quantile_normalize(X), expected, rtol=1e-12)
    # without ties every sample ends up with exactly the mean profile
    Y = rng.normal(size=(4, 7))
    out = pp.quantile_normalize(Y)
    np.testing.assert_allclose(np.sort(out, axis=1), np.tile(np.sort(Y, axis=1).mean(axis=0), (4, 1)))
    np.testing.assert_array_equal(np.argsort(out, axis=1), np.argsort(Y, axis=1))


def test_microarray_threshold_filter_log():
    X = np.array(
        [
            [50, 100, 100, 120, 100, 200],
            [200, 300, 200, 130, 500, 1000],
            [1000, 400, 500, 140, 700, 700],
            [20000, 500, 600, 150, 300, 300],
        ],
        dtype=float,
    )
    # after clipping to [100, 16000]: f1 fold 160 range 15900 keep; f2 fold 5 range 400 drop;
    # f3 fold 6 range 500 (boundary); f4 fold 1.25 drop; f5 fold 7 range 600 keep; f6 fold 5 (boundary) range 800
    out, keep = pp.microarray(X)
    np.testing.assert_array_equal(keep, [True, False, True, False, True, True])
    np.testing.assert_allclose(out[:, 0], [2, np.log10(200), 3, np.log10(16000)], rtol=1e-14)
    np.testing.assert_allclose(out[:, 1], np.log10([100, 200, 500, 600]), rtol=1e-14)
    _, keep = pp.microarray(X, strict_filter=True)  # Dudoit et al.: exclude max/min <= 5 or max-min <= 500
    np.testing.assert_array_equal(keep, [True, False, False, False, True, False])
    out, keep = pp.microarray(X, floor=10, ceiling=1000, min_fold=2, min_range=100, log_base=2)
    np.testing.assert_array_equal(keep, [True, True, True, False, True, True])
    np.testing.assert_allclose(out[:, 0], np.log2([50, 200, 1000, 1000]), rtol=1e-14)


def test_microarray_errors():
    with pytest.raises(InputError, match="removed all 2 features.*already log-transformed"):
        pp.microarray(np.log10(np.array([[100.0, 200], [300, 900]])))
    with pytest.raises(ConfigError, match="0 < floor < ceiling"):
        pp.microarray(np.ones((2, 2)), floor=0)


def test_log2_with_offset_dense_and_sparse():
    X = np.array([[0.0, 3], [1, 7]])
    np.testing.assert_array_equal(pp.log2(X), [[0, 2], [1, 3]])
    np.testing.assert_allclose(pp.log2(X, offset=0.5), [[-1, np.log2(3.5)], [np.log2(1.5), np.log2(7.5)]])
    S = sparse.csr_matrix(X)
    out = pp.log2(S)
    assert sparse.isspmatrix_csr(out) and out.nnz == 3
    np.testing.assert_allclose(out.toarray(), [[0, 2], [1, 3]], rtol=1e-15)
    assert S.data.tolist() == [3, 1, 7]  # input untouched
    dense_out = pp.log2(S, offset=0.5)  # zeros become log2(0.5): densified
    assert isinstance(dense_out, np.ndarray) and dense_out[0, 0] == -1


def test_log2_refuses_non_positive_values():
    X = np.array([[-2.0, 0], [1, -3]])
    msg = r"2 value\(s\) are <= 0 after adding log_offset 1 \(minimum value \+ offset = -2\)"
    with pytest.raises(InputError, match=msg):
        pp.log2(X)
    with pytest.raises(InputError, match=r"2 value\(s\) are <= 0 .*minimum value \+ offset = -2"):
        pp.log2(sparse.csr_matrix(X))  # stored values -2, 1, -3
    msg = r"1 value\(s\) are <= 0 after adding log_offset 0 \(minimum value \+ offset = 0\)"
    with pytest.raises(InputError, match=msg):
        pp.log2(np.array([[0.0, 1], [2, 3]]), offset=0)


def test_minmax_and_zscore_hand_values():
    X = np.array([[1.0, 5, 2], [3, 5, 6], [2, 5, 4]])
    np.testing.assert_array_equal(pp.minmax(X), [[0, 0, 0], [1, 0, 1], [0.5, 0, 0.5]])
    s = np.sqrt(2 / 3)
    np.testing.assert_allclose(pp.zscore(X), [[-1 / s, 0, -2 / np.sqrt(8 / 3)], [1 / s, 0, 2 / np.sqrt(8 / 3)],
                                              [0, 0, 0]], rtol=1e-14)


def test_minmax_and_zscore_match_scikit_learn():
    rng = np.random.default_rng(0)
    X = rng.normal(3, 2, size=(30, 6))
    X[:, 2] = 0.1  # constant, with a value that is not exact in binary
    np.testing.assert_allclose(pp.minmax(X), MinMaxScaler().fit_transform(X), atol=1e-14)
    np.testing.assert_allclose(pp.zscore(X), StandardScaler().fit_transform(X), atol=1e-12)
    assert np.all(pp.zscore(X)[:, 2] == 0) and np.all(pp.minmax(X)[:, 2] == 0)


def test_top_variable_ties_by_index_dense_and_sparse():
    # population variances 1, 4, 4, 0, 9
    X = np.array([[0.0, 0, 4, 7, 0], [2, 4, 0, 7, 6]])
    np.testing.assert_array_equal(pp.feature_variances(X), [1, 4, 4, 0, 9])
    np.testing.assert_array_equal(pp.top_variable(X, 2), [1, 4])
    np.testing.assert_array_equal(pp.top_variable(X, 3), [1, 2, 4])
    np.testing.assert_array_equal(pp.top_variable(sparse.csr_matrix(X), 2), [1, 4])
    np.testing.assert_array_equal(pp.top_variable(X, 50), np.arange(5))


def test_impute_median():
    X = np.array([[1, np.nan], [np.nan, 4], [5, 8], [7, np.nan]])
    np.testing.assert_array_equal(pp.impute_median(X), [[1, 6], [5, 4], [5, 8], [7, 6]])
    assert np.isnan(X[0, 1])  # input untouched
    S = sparse.csr_matrix(np.array([[0, np.nan], [2, 0], [0, 1.0]]))
    out = pp.impute_median(S)  # median over all samples, implicit zeros included
    assert sparse.isspmatrix_csr(out)
    np.testing.assert_array_equal(out.toarray(), [[0, 0.5], [2, 0], [0, 1]])
    with pytest.raises(InputError, match=r"1 feature\(s\) have no observed value \(e.g. 'b'\)"):
        pp.impute_median(np.array([[1, np.nan], [2, np.nan]]), pd.Index(["a", "b"]))


def test_check_finite_messages():
    names = pd.Index(["s1", "s2", "s3"]), pd.Index(["g1", "g2"])
    X = np.array([[1, 2], [np.inf, 3], [np.nan, 1]])
    with pytest.raises(InputError, match=r"1 infinite value\(s\), first at sample 's2', feature 'g1'"):
        pp.check_finite(X, *names, missing="median", where="d")
    X[1, 0] = np.nan
    X[0, 1] = np.nan
    msg = r"3 missing value\(s\) in 3 sample\(s\).*\('s1', 'g2'\), \('s2', 'g1'\), \('s3', 'g1'\)"
    with pytest.raises(InputError, match=msg):
        pp.check_finite(X, *names, missing="refuse", where="d")
    pp.check_finite(X, *names, missing="median", where="d")  # NaN allowed when imputing
    with pytest.raises(InputError, match=r"1 missing value.*\('s2', 'g2'\)"):
        pp.check_finite(sparse.csr_matrix(np.array([[0, 1], [0, np.nan], [1, 0]])), *names, missing="refuse",
                        where="d")


def test_preprocess_options():
    assert pp.preprocess_options({}, where="d") == {"missing": "refuse", "normalize": "none"}
    assert pp.preprocess_options({"normalize": "microarray", "floor": 20}, where="d") == {
        "missing": "refuse", "normalize": "microarray", "floor": 20.0, "ceiling": 16000.0, "min_fold": 5.0,
        "min_range": 500.0, "log_base": 10.0, "strict_filter": False,
    }
    with pytest.raises(ConfigError, match="normalize must be one of"):
        pp.preprocess_options({"normalize": "log10"}, where="d")
    with pytest.raises(ConfigError, match="missing must be one of"):
        pp.preprocess_options({"missing": "drop"}, where="d")
    with pytest.raises(ConfigError, match="'floor' applies only to normalize: microarray"):
        pp.preprocess_options({"normalize": "log2", "floor": 1}, where="d")
    with pytest.raises(ConfigError, match="top_variable must be a positive integer"):
        pp.preprocess_options({"top_variable": 0}, where="d")
    with pytest.raises(ConfigError, match="log_offset must be a number"):
        pp.preprocess_options({"normalize": "log2", "log_offset": "1"}, where="d")


def _ad(X):
    n, p = X.shape
    return AnnData(X=X, obs=pd.DataFrame(index=[f"s{i}" for i in range(n)]),
                   var=pd.DataFrame(index=[f"g{j}" for j in range(p)]))


def test_preprocess_order_missing_normalize_top_variable():
    X = np.array([[1.0, 0, np.nan, 5], [3, 8, 2, 5], [7, 24, 6, 6]])
    opts = pp.preprocess_options({"missing": "median", "normalize": "minmax", "top_variable": 2}, where="d")
    out = pp.preprocess(_ad(X), opts, where="d")
    # impute g2 -> 4; minmax: g0, g1 -> (0, 1/3, 1) variance 42/243, g2 -> (0.5, 0, 1) variance 1/6,
    # g3 -> (0, 0, 1) variance 2/9: keep g3 and g0 (g0 beats its tie g1 by index), in original order
    assert list(out.var_names) == ["g0", "g3"]
    np.testing.assert_allclose(out.X, [[0, 0], [1 / 3, 0], [1, 1]])


def test_preprocess_keeps_sparse_where_possible(monkeypatch):
    S = sparse.random(20, 30, density=0.2, random_state=1, format="csr") * 10
    out = pp.preprocess(_ad(S), pp.preprocess_options({"normalize": "log2", "top_variable": 5}, where="d"), where="d")
    assert sparse.isspmatrix_csr(out.X) and out.shape == (20, 5)
    ref = np.log2(S.toarray() + 1)
    keep = np.sort(np.lexsort((np.arange(30), -ref.var(axis=0)))[:5])
    np.testing.assert_allclose(out.X.toarray(), ref[:, keep], rtol=1e-13)
    monkeypatch.setattr(ssfs._validation, "DENSE_LIMIT_BYTES", 100)
    with pytest.raises(InputError, match="normalize: zscore needs a dense matrix"):
        pp.preprocess(_ad(S), pp.preprocess_options({"normalize": "zscore"}, where="d"), where="d")
