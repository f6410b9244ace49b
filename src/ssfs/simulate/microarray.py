"""A Gaussian p >> n microarray model: log-scale expression with correlated gene modules,
strong nuisance factors, batches and planted class markers of various effect sizes.

Model (sample i of class k, gene g with mean m_g and sd s_g, both drawn per gene)::

    x_ig = m_g + s_g * ( sqrt(rho) f_i,M(g) + sqrt(1 - rho) e_ig      (module genes; e_ig alone otherwise)
                         + sum_j nuisance_sd w_jg u_ij                 (latent factors: quality, sex, ...)
                         + b_B(i),g                                    (batch shift)
                         + delta_kg )                                  (marker effect, in sd units)

f, e, u standard normal; ``w_jg`` 1 on the factor's genes, else 0; ``delta_kg`` the marker's
effect (one value or uniform over a range, up or down) for the classes it marks (a shared
marker: two classes, same direction).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .planting import check_shape, draw_classes, draw_pairs, markers_per_class, plant, strengths
from .truth import Simulation, as_generator


def _noise(rng, n, p, module_size, module_fraction, module_corr):
    """Standard-normal noise whose genes in modules (``module_fraction`` of them, in modules
    of ``module_size``) share a latent factor with correlation ``module_corr``."""
    Z = rng.standard_normal((n, p))
    n_mod = int(module_fraction * p) // max(module_size, 1)
    if n_mod and module_corr > 0:
        genes = rng.permutation(p)[: n_mod * module_size]
        F = rng.standard_normal((n, n_mod))
        Z[:, genes] = np.sqrt(1 - module_corr) * Z[:, genes] \
            + np.sqrt(module_corr) * np.repeat(F, module_size, axis=1)
    return Z


def _nuisance(rng, n, p, factors, genes_per_factor, sd, n_batches, batch_sd):
    """Factor effects (n x p, in sd units) and the batch of each sample with its shifts."""
    N = np.zeros((n, p))
    for _ in range(factors):  # one latent factor at a time
        genes = rng.choice(p, size=min(genes_per_factor, p), replace=False)
        N[:, genes] += sd * rng.standard_normal((n, 1)) * rng.choice([-1.0, 1.0], size=genes.size)
    batch = rng.integers(n_batches, size=n) if n_batches > 1 else np.zeros(n, dtype=np.int64)
    if n_batches > 1:
        N += rng.normal(0.0, batch_sd, size=(n_batches, p))[batch]
    return N, batch


def simulate_microarray(
    n_samples: int = 200,
    n_genes: int = 5000,
    n_classes: int = 4,
    n_markers: int | Sequence[int] = 20,
    rng=0,
    *,
    effect: float | tuple[float, float] = (0.5, 3.0),
    down_fraction: float = 0.3,
    shared_markers: int = 10,
    proportions: Sequence[float] | None = None,
    module_size: int = 40,
    module_fraction: float = 0.5,
    module_corr: float = 0.4,
    nuisance_factors: int = 3,
    nuisance_genes: int = 60,
    nuisance_sd: float = 1.0,
    n_batches: int = 1,
    batch_sd: float = 0.5,
    mean: float = 7.0,
    mean_sd: float = 1.5,
    sd_median: float = 0.4,
    sd_spread: float = 0.2,
) -> Simulation:
    """Gaussian log-expression (samples x genes, dense) with planted class markers.

    Parameters
    ----------
    n_samples, n_genes, n_classes : int
        Shape (p >> n: e.g. 100-300 x 2,000-10,000) and number of classes.
    n_markers : int or sequence of int
        Own markers of each class.
    rng : int or numpy.random.Generator
        The only source of randomness.
    effect : float or (low, high)
        Marker effect in units of the gene's sd; a range draws each uniformly.
    down_fraction : float
        Share of the markers lower (not higher) in their class.
    shared_markers : int
        Extra markers, each shifted in two random classes.
    proportions : sequence of float, optional
        Class sizes (relative); balanced when omitted.
    module_size, module_fraction, module_corr : int, float, float
        Correlated modules: ``module_fraction`` of the genes in modules of ``module_size``
        genes correlated ``module_corr`` (markers may fall in them).
    nuisance_factors, nuisance_genes, nuisance_sd : int, int, float
        Latent factors unrelated to the classes, each moving ``nuisance_genes`` genes by
        ``nuisance_sd`` sd per unit (high-variance genes that are not markers).
    n_batches, batch_sd : int, float
        Samples in random batches, each shifting every gene by N(0, ``batch_sd``) sd.
    mean, mean_sd, sd_median, sd_spread : float
        Genes' means ~ N(``mean``, ``mean_sd``); sds log-normal with median ``sd_median``
        and log-sd ``sd_spread``.

    Returns
    -------
    Simulation
        Dense float64 expression and the truth; ``effect`` holds signed sd shifts.
    """
    knobs = {k: v for k, v in locals().items() if k != "rng"}
    counts_k = markers_per_class(n_markers, n_classes)
    check_shape(n_samples, n_genes, n_classes, int(counts_k.sum()), shared_markers)
    if not (0 <= module_corr < 1 and 0 <= module_fraction <= 1 and 0 <= down_fraction <= 1):
        raise InputError("module_corr must be in [0, 1), module_fraction and down_fraction in [0, 1]")
    rng = as_generator(rng)
    classes = draw_classes(rng, n_samples, n_classes, proportions)
    perm = rng.permutation(n_genes)
    n_mk = int(counts_k.sum()) + shared_markers
    member = plant(perm, counts_k, draw_pairs(rng, shared_markers, n_classes))
    size = strengths(rng, effect, n_mk, log=False) * np.where(rng.random(n_mk) < down_fraction, -1.0, 1.0)
    delta = np.zeros((n_classes, n_genes))
    delta[:, perm[:n_mk]] = np.where(member[:, perm[:n_mk]], size, 0.0)
    m = rng.normal(mean, mean_sd, size=n_genes)
    s = sd_median * rng.lognormal(0.0, sd_spread, size=n_genes)
    Z = _noise(rng, n_samples, n_genes, module_size, module_fraction, module_corr)
    N, batch = _nuisance(rng, n_samples, n_genes, nuisance_factors, nuisance_genes, nuisance_sd,
                         n_batches, batch_sd)
    X = m + s * (Z + N + delta[classes])
    return Simulation(X=X, classes=classes, membership=member, effect=delta, kind="microarray",
                      batch=batch, knobs=knobs)
