"""Built-in datasets: Breiman's waveform generator and the bundled scikit-learn / scanpy sets."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn import datasets as skd

from ssfs.errors import ConfigError
from ssfs.io import builtin, prepare_dataset
from ssfs.io.builtin import BASE_WAVES, load_builtin, waveform


def test_base_waves_are_breimans_triangles():
    m = np.arange(1, 22)
    h1 = np.array([max(6 - abs(i - 11), 0) for i in m])
    np.testing.assert_array_equal(BASE_WAVES[0], h1)
    np.testing.assert_array_equal(BASE_WAVES[1], [max(6 - abs(i - 4 - 11), 0) for i in m])  # h1(m - 4)
    np.testing.assert_array_equal(BASE_WAVES[2], [max(6 - abs(i + 4 - 11), 0) for i in m])  # h1(m + 4)
    assert BASE_WAVES[:, 0].sum() == 0 and BASE_WAVES[:, 20].sum() == 0  # x1, x21 carry no wave


@pytest.fixture(scope="module")
def wave():
    return load_builtin("waveform", {"n_samples": 3000}, seed=7)


def test_waveform_shape_names_classes(wave):
    assert wave.shape == (3000, 40) and wave.X.dtype == np.float64
    assert list(wave.var_names) == [f"x{j}" for j in range(1, 41)]
    counts = wave.obs["label"].value_counts()
    assert sorted(counts.index) == ["0", "1", "2"]
    assert counts.min() > 900 and counts.max() < 1100  # equiprobable classes


def test_waveform_class_conditional_means(wave):
    y = wave.obs["label"].astype(int).to_numpy()
    means = np.stack([wave.X[y == c].mean(axis=0) for c in range(3)])
    # E[x | class with waves (a, b)] = (h_a + h_b) / 2 on x1..x21, 0 on the noise features
    pairs = [(0, 1), (0, 2), (1, 2)]
    expected = np.stack([(BASE_WAVES[a] + BASE_WAVES[b]) / 2 for a, b in pairs])
    np.testing.assert_allclose(means[:, :21], expected, atol=0.25)
    spread = means.max(axis=0) - means.min(axis=0)
    assert spread[21:].max() < 0.2  # x22..x40 pure noise: class means agree
    assert spread[[0, 20]].max() < 0.2  # x1, x21 too
    assert spread[1:20].min() > 0.3 and spread[1:20].max() > 2.5  # x2..x20 depend on the class
    # within-class noise is N(0, 1) on the noise features
    np.testing.assert_allclose(wave.X[:, 21:].std(axis=0), 1.0, atol=0.06)


def test_waveform_reproducible():
    a = load_builtin("waveform", {"n_samples": 50}, seed=1)
    b = load_builtin("waveform", {"n_samples": 50}, seed=1)
    c = load_builtin("waveform", {"n_samples": 50}, seed=2)
    np.testing.assert_array_equal(a.X, b.X)
    assert list(a.obs["label"]) == list(b.obs["label"])
    assert not np.array_equal(a.X, c.X)
    X, y = waveform(20, rng=np.random.default_rng(1), n_noise=0)
    assert X.shape == (20, 21) and set(np.unique(y)) <= {0, 1, 2}


def test_waveform_through_prepare_uses_entry_seed():
    a = prepare_dataset("wave", {"source": "builtin", "name": "waveform", "seed": 5, "params": {"n_samples": 60}})
    b = load_builtin("waveform", {"n_samples": 60}, seed=5)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.uns["ssfs_prepare"]["seed"] == 5 and a.uns["ssfs_prepare"]["params"] == {"n_samples": 60}


@pytest.mark.parametrize(
    "name, loader, shape",
    [("iris", skd.load_iris, (150, 4)), ("wine", skd.load_wine, (178, 13)),
     ("breast_cancer", skd.load_breast_cancer, (569, 30))],
)
def test_sklearn_builtins(name, loader, shape):
    a = prepare_dataset(name, {"source": "builtin", "name": name})
    ref = loader()
    assert a.shape == shape
    np.testing.assert_array_equal(a.X, ref.data)
    assert list(a.var_names) == list(ref.feature_names)
    np.testing.assert_array_equal(a.obs["label"].astype(str).to_numpy(), np.asarray(ref.target_names)[ref.target])
    assert a.X.dtype == np.float64 and a.X.tobytes() == np.ascontiguousarray(ref.data).tobytes()  # the same bits


def test_sklearn_builtins_are_read_without_importing_scikit_learn():
    code = (
        "import sys; from ssfs.io.builtin import load_builtin; a = load_builtin('wine'); "
        "print(a.shape, a.var_names[-1], 'sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["(178,", "13)", "proline", "False"]


def test_sklearn_builtins_fall_back_to_scikit_learn_without_its_file(monkeypatch):
    monkeypatch.setattr(builtin, "_package_file", lambda *parts: None)
    a = load_builtin("iris")
    ref = skd.load_iris()
    np.testing.assert_array_equal(a.X, ref.data)
    assert list(a.var_names) == list(ref.feature_names) and a.obs["label"].iloc[-1] == "virginica"


def test_pbmc68k_reduced():
    import scanpy as sc

    a = prepare_dataset("pbmc", {"source": "builtin", "name": "pbmc68k_reduced"})
    ref = sc.datasets.pbmc68k_reduced()
    assert a.shape == (700, 765) and a.X.dtype == np.float64
    np.testing.assert_array_equal(a.X, ref.X.astype(np.float64))
    assert list(a.obs["label"].astype(str)) == list(ref.obs["bulk_labels"].astype(str))
    assert a.obs["label"].cat.categories.size == 10


def test_builtin_errors():
    with pytest.raises(ConfigError, match="unknown builtin 'mnist'; builtins: waveform, iris"):
        load_builtin("mnist")
    with pytest.raises(ConfigError, match="unknown params n_samples for builtin 'iris'; accepted: none"):
        load_builtin("iris", {"n_samples": 3})
    with pytest.raises(ConfigError, match="params.n_samples must be an integer >= 2"):
        load_builtin("waveform", {"n_samples": 1.5})
    with pytest.raises(ConfigError, match="needs name"):
        prepare_dataset("x", {"source": "builtin"})
    with pytest.raises(ConfigError, match="source must be one of"):
        prepare_dataset("x", {"source": "url", "name": "iris"})
