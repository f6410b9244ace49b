"""A second, independent count model after Splatter (Zappia, Phipson & Oshlack 2017, Genome
Biology 18:174): a shape of single-cell data :func:`~ssfs.simulate.counts.simulate_counts` does not
draw, so that no claim rests on one simulator.

Differences from :func:`simulate_counts`: gene means from a gamma distribution with a few
high-expression outlier genes (Splatter's "expression outliers"), types drawn per cell from their
proportions, markers whose fold change is exp of a log-normal factor (Splatter's DE factors,
small by default) with a share of them *down* in their type, log-normal library sizes, and
gamma-Poisson noise with one biological coefficient of variation for all genes (Splatter's BCV).
Splatter's dropout and trended BCV are left out.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..errors import InputError
from .truth import Simulation, as_generator


def simulate_splatter(n_cells: int = 3000, n_genes: int = 2000, n_types: int = 8, n_markers: int = 15,
                      *, mean_shape: float = 0.6, mean_rate: float = 0.3, outlier_share: float = 0.05,
                      outlier_location: float = 1.5, de_location: float = 0.8, de_scale: float = 0.4,
                      down_share: float = 0.3, proportions=None, library_sd: float = 0.4,
                      library_size: float = 4000.0, bcv: float = 0.55, chunk: int = 10000,
                      rng=None) -> Simulation:
    """Splatter-like counts with planted markers.

    Parameters
    ----------
    n_cells, n_genes, n_types, n_markers
        Cells, genes, types and markers per type (distinct genes; ``n_types * n_markers`` at most
        ``n_genes``).
    mean_shape, mean_rate
        Gamma distribution of the gene means (Splatter's ``mean.shape``, ``mean.rate``).
    outlier_share, outlier_location
        Share of genes whose mean is multiplied by exp(N(``outlier_location``, 0.5)).
    de_location, de_scale
        A marker's mean is multiplied (or divided, for a down marker) by exp(f), f log-normal with
        median ``de_location`` and log-sd ``de_scale`` (Splatter's ``de.facLoc``, ``de.facScale``;
        median fold change e^0.8 = 2.2).
    down_share
        Share of the markers lower in their type than elsewhere.
    proportions
        Type proportions (default equal).
    library_sd, library_size
        Log-normal library sizes: median ``library_size`` counts, log-sd ``library_sd``.
    bcv
        Biological coefficient of variation: counts are Poisson of gamma(1 / bcv^2, mean) rates.
    chunk
        Cells drawn at a time (memory: chunk x n_genes floats; the draws do not depend on it
        when n_cells <= chunk).
    rng
        Seed or numpy Generator: every random choice.

    Returns
    -------
    Simulation
        ``kind="counts"``; ``effect`` holds the signed natural-log fold change of every marker.
    """
    if n_types * n_markers > n_genes:
        raise InputError(f"simulate_splatter: {n_types} x {n_markers} markers need that many genes, got {n_genes}")
    rng = as_generator(rng)
    knobs = {k: v for k, v in locals().items() if k not in ("rng", "chunk")}
    base = rng.gamma(mean_shape, 1.0 / mean_rate, size=n_genes)
    outlier = rng.random(n_genes) < outlier_share
    base[outlier] *= np.exp(rng.normal(outlier_location, 0.5, int(outlier.sum())))
    p = np.full(n_types, 1.0 / n_types) if proportions is None else np.asarray(proportions, dtype=np.float64)
    types = rng.choice(n_types, size=n_cells, p=p / p.sum())
    effect = np.zeros((n_types, n_genes))
    genes = rng.permutation(n_genes)[:n_types * n_markers].reshape(n_types, n_markers)
    for k in range(n_types):
        size = rng.lognormal(np.log(de_location), de_scale, n_markers)
        effect[k, genes[k]] = np.where(rng.random(n_markers) < down_share, -size, size)
    library = library_size * np.exp(rng.normal(0.0, library_sd, n_cells))
    shape = 1.0 / bcv**2
    blocks = []
    for s in range(0, n_cells, chunk):  # memory: chunk x n_genes floats, the counts sparse
        e = min(n_cells, s + chunk)
        mean = base[None, :] * np.exp(effect[types[s:e]]) * (library[s:e] / base.sum())[:, None]
        blocks.append(sparse.csr_matrix(rng.poisson(rng.gamma(shape, mean / shape)).astype(np.float64)))
    return Simulation(sparse.vstack(blocks, format="csr"), types.astype(np.int64), effect != 0, effect, "counts",
                      np.zeros(n_cells, dtype=np.int64), knobs)
