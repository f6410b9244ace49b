"""Built-in datasets (``source: builtin``), available_papers without any file.

- ``waveform``: Breiman's waveform generator with noise ("waveform+noise",
  UCI waveform-5000 version 2; Breiman, Friedman, Olshen & Stone 1984, *CART*,
  sec. 2.6.2). Three triangular base waves on 21 points,
  h1(m) = max(6 - |m - 11|, 0), h2(m) = h1(m - 4), h3(m) = h1(m + 4); the class
  (0, 1, 2, equiprobable) picks the pair (h1, h2), (h1, h3) or (h2, h3) and a
  sample is u * h_a + (1 - u) * h_b + N(0, 1) noise with u ~ U(0, 1), followed by
  ``n_noise`` (19) pure N(0, 1) features. Features x1..x40; x2..x20 carry the
  class (x1 and x21 are zero in every base wave, so they are noise too).
  ``params``: ``n_samples`` (1000), ``n_noise`` (19); the entry's ``seed`` (0)
  seeds the generator.
- ``iris``, ``wine``, ``breast_cancer``: scikit-learn's bundled copies; labels
  are the class names (``setosa``, ``class_0``, ``malignant`` ...).
- ``pbmc68k_reduced``: scanpy's bundled 700 cells x 765 genes subset of the 10x
  PBMC 68k data, cells labeled by ``obs['bulk_labels']`` (10 cell types).
  ``params``: ``matrix``: ``scaled`` (default: ``adata.X``, log-normalised and
  scaled per gene by scanpy, so it holds negative values) or ``log1p`` (``.raw``:
  the same 765 genes, log-normalised, sparse and non-negative, as gene-selection
  methods for expression such as scanpy's highly variable genes expect).
"""

from __future__ import annotations

import csv
import importlib.util
import warnings
from pathlib import Path

import anndata
import numpy as np
from anndata import AnnData

from ..errors import ConfigError
from .common import make_adata

#: base waves h1, h2, h3 of Breiman's generator, evaluated at m = 1..21
_M = np.arange(1, 22)
BASE_WAVES = np.stack(
    [np.maximum(6 - np.abs(_M - 11), 0), np.maximum(6 - np.abs(_M - 15), 0), np.maximum(6 - np.abs(_M - 7), 0)]
).astype(np.float64)
#: the pair of base waves (a, b) mixed for each class
WAVE_PAIRS = np.array([[0, 1], [0, 2], [1, 2]])


def waveform(n_samples: int = 1000, *, rng: np.random.Generator, n_noise: int = 19):
    """``(X, y)``: n_samples x (21 + n_noise) waveform+noise matrix and class codes 0..2."""
    y = rng.integers(0, 3, size=n_samples)
    u = rng.uniform(0.0, 1.0, size=(n_samples, 1))
    a, b = BASE_WAVES[WAVE_PAIRS[y, 0]], BASE_WAVES[WAVE_PAIRS[y, 1]]
    signal = u * a + (1.0 - u) * b + rng.standard_normal((n_samples, 21))
    noise = rng.standard_normal((n_samples, n_noise))
    return np.hstack([signal, noise]), y


def _waveform(params: dict, seed: int, where: str) -> AnnData:
    n = params.get("n_samples", 1000)
    n_noise = params.get("n_noise", 19)
    for key, v, low in (("n_samples", n, 2), ("n_noise", n_noise, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ConfigError(f"{where}: params.{key} must be an integer >= {low}, got {v!r}")
    X, y = waveform(int(n), rng=np.random.default_rng(seed), n_noise=int(n_noise))
    return make_adata(
        X, where=where, labels=y, var_names=[f"x{j + 1}" for j in range(X.shape[1])]
    )


_CELL_NUCLEUS = (
    "radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity", "concave points",
    "symmetry", "fractal dimension",
)
#: the feature names scikit-learn's loaders give its bundled CSV files (``sklearn/datasets/_base.py``:
#: ``load_iris``, ``load_wine``, ``load_breast_cancer``; the files hold no names)
SKLEARN_FEATURES = {
    "iris": ["sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"],
    "wine": [
        "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
        "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280/od315_of_diluted_wines",
        "proline",
    ],
    "breast_cancer": [f"mean {m}" for m in _CELL_NUCLEUS]
    + [f"{m} error" for m in _CELL_NUCLEUS]
    + [f"worst {m}" for m in _CELL_NUCLEUS],
}
_SKLEARN_FILES = {"iris": "iris.csv", "wine": "wine_data.csv", "breast_cancer": "breast_cancer.csv"}


def _package_file(package: str, *parts: str) -> Path | None:
    """The path of a data file that ships inside ``package`` (a folder below it), found without
    importing the package (scanpy: 2 s of CPU, scikit-learn: 0.6 s); None when it is not there."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder).joinpath(*parts)
        if path.is_file():
            return path
    return None


def read_sklearn_csv(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(X, labels)`` of one of scikit-learn's bundled CSV files, parsed as its ``load_csv_data``
    parses them: a header ``n_samples,n_features,class names...``, then rows of the features
    and the class code (each value through ``float``/``int``, so the same bits).

    Parameters
    ----------
    path : Path
        ``sklearn/datasets/data/<name>.csv``.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    labels : ndarray of str, shape (n_samples,)
        The class name of each row.
    """
    with path.open(encoding="utf-8") as f:
        rows = list(csv.reader(f))
    n_samples, n_features, names = int(rows[0][0]), int(rows[0][1]), np.array(rows[0][2:])
    body = rows[1 : n_samples + 1]
    X = np.array([r[:n_features] for r in body], dtype=np.float64)
    return X, names[np.array([int(r[n_features]) for r in body])]


def _sklearn(name: str):
    """A loader of scikit-learn's bundled dataset ``name``: its CSV file read directly (with the
    feature names scikit-learn's loader gives it), so scikit-learn is not imported (0.6 s of CPU);
    through ``sklearn.datasets`` only when the file is not where scikit-learn keeps it."""

    def load(params: dict, seed: int, where: str) -> AnnData:
        path = _package_file("sklearn", "datasets", "data", _SKLEARN_FILES[name])
        if path is not None:
            X, labels = read_sklearn_csv(path)
            return make_adata(X, where=where, labels=labels, var_names=SKLEARN_FEATURES[name])
        from sklearn import datasets

        b = getattr(datasets, f"load_{name}")()
        labels = np.asarray(b.target_names)[b.target]
        return make_adata(b.data, where=where, labels=labels, var_names=list(b.feature_names))

    return load


def _pbmc68k_reduced(params: dict, seed: int, where: str) -> AnnData:
    path = _package_file("scanpy", "datasets", "10x_pbmc68k_reduced.h5ad")
    if path is not None:  # what sc.datasets.pbmc68k_reduced() reads, read the same way
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module="anndata")
            a = anndata.read_h5ad(path)
    else:
        import scanpy as sc

        a = sc.datasets.pbmc68k_reduced()
    matrix = params.get("matrix", "scaled")
    if matrix not in ("scaled", "log1p"):
        raise ConfigError(f"{where}: params.matrix must be 'scaled' or 'log1p', got {matrix!r}")
    return make_adata(
        a.X if matrix == "scaled" else a.raw.X, where=where, labels=a.obs["bulk_labels"].to_numpy(dtype=object),
        obs_names=a.obs_names, var_names=a.var_names,
    )


def _loaders():
    return {
        "waveform": (_waveform, ("n_samples", "n_noise")),
        "iris": (_sklearn("iris"), ()),
        "wine": (_sklearn("wine"), ()),
        "breast_cancer": (_sklearn("breast_cancer"), ()),
        "pbmc68k_reduced": (_pbmc68k_reduced, ("matrix",)),
    }


BUILTINS = ("waveform", "iris", "wine", "breast_cancer", "pbmc68k_reduced")


def load_builtin(name: str, params: dict | None = None, seed: int = 0, *, where: str | None = None) -> AnnData:
    """The built-in dataset ``name`` as AnnData with ``obs['label']``."""
    where = where or f"builtin dataset {name!r}"
    loaders = _loaders()
    if name not in loaders:
        raise ConfigError(f"{where}: unknown builtin {name!r}; builtins: {', '.join(BUILTINS)}")
    fn, accepted = loaders[name]
    if params is not None and not isinstance(params, dict):
        raise ConfigError(f"{where}: params must be a mapping, got {params!r}")
    params = dict(params or {})
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(
            f"{where}: unknown params {', '.join(unknown)} for builtin {name!r}; accepted: "
            f"{', '.join(accepted) or 'none'}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ConfigError(f"{where}: seed must be an integer, got {seed!r}")
    return fn(params, int(seed), where)


__all__ = ["BASE_WAVES", "BUILTINS", "load_builtin", "waveform"]
