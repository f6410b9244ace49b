"""Single-cell counts with planted cell-type markers (negative binomial), with knobs for the
shape, the marker strengths and the nuisance structure real data have.

Model (per cell c of type t, gene g)::

    mean   mu_cg = depth_c * rate_g * fold_tg * program_cg * batch_bg
    count  x_cg  ~ Poisson(mu_cg)                    (dispersion 0)
                 ~ Poisson(Gamma(1/phi_g, phi_g mu_cg))  (negative binomial: var = mu + phi_g mu^2)
    dropout      a count is zeroed with probability 1 / (1 + (mu_cg / dropout)^2)

``rate_g`` log-normal with mean ``mean_expression`` (log-sd ``rate_sd``: most genes mostly
zero), markers' own ``marker_expression``; ``fold_tg`` the marker's fold change in its type(s)
(one value or log-uniform over a range: strong and weak markers), 1 elsewhere;
``depth_c`` log-normal library size; ``program_cg = exp(sum_j a_cj l_jg - l^2/2)``:
biological programs (cell cycle, stress) that make genes co-vary across cells whatever
their type; ``batch_bg`` a log-normal per-gene factor of the cell's batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from ..errors import InputError
from .planting import check_shape, draw_classes, draw_pairs, markers_per_class, plant, strengths
from .truth import Simulation, as_generator


def _lognormal_mean(rng, mean, sd, size):
    """Log-normal draws with expectation ``mean`` (log-scale sd ``sd``)."""
    return mean * rng.lognormal(0.0, sd, size=size) / np.exp(sd**2 / 2)


def _nuisance(rng, n_cells, n_genes, programs, program_genes, program_sd, n_batches, batch_sd):
    """Per-cell log-multipliers of the means: program activities (cells x programs) with their
    gene loadings (programs x genes), and batch (per cell) with its per-gene log-factors."""
    load = np.zeros((programs, n_genes))
    for j in range(programs):  # one row per program
        genes = rng.choice(n_genes, size=min(program_genes, n_genes), replace=False)
        load[j, genes] = program_sd * rng.uniform(0.5, 1.5, size=genes.size)
    activity = rng.standard_normal((n_cells, programs)) if programs else None
    batch = rng.integers(n_batches, size=n_cells) if n_batches > 1 else np.zeros(n_cells, dtype=np.int64)
    batch_log = rng.normal(-batch_sd**2 / 2, batch_sd, size=(n_batches, n_genes)) if n_batches > 1 else None
    return activity, load, batch, batch_log


def _counts(rng, lam, phi, dropout):
    """One chunk of counts from its means (negative binomial when phi > 0, dropout after)."""
    mean = lam
    if np.any(phi > 0):
        lam = rng.gamma(1.0 / phi, phi * lam)
    x = rng.poisson(lam).astype(np.float64)
    if dropout > 0:
        x[rng.random(x.shape) < 1.0 / (1.0 + (mean / dropout) ** 2)] = 0.0
    return sparse.csr_matrix(x)


def simulate_counts(
    n_cells: int = 5000,
    n_genes: int = 1000,
    n_types: int = 5,
    n_markers: int | Sequence[int] = 20,
    rng=0,
    *,
    fold_change: float | tuple[float, float] = 4.0,
    mean_expression: float = 0.3,
    rate_sd: float = 0.7,
    marker_expression: float = 0.5,
    marker_rate_sd: float = 0.5,
    depth_sd: float = 0.5,
    dispersion: float = 0.5,
    dispersion_sd: float = 0.0,
    proportions: Sequence[float] | None = None,
    shared_markers: int = 0,
    programs: int = 0,
    program_genes: int = 30,
    program_sd: float = 0.5,
    n_batches: int = 1,
    batch_sd: float = 0.3,
    dropout: float = 0.0,
    chunk: int = 10000,
) -> Simulation:
    """Negative-binomial counts with planted cell-type markers (the module docstring's model).

    Parameters
    ----------
    n_cells, n_genes, n_types : int
        Cells x genes, number of cell types.
    n_markers : int or sequence of int
        Markers of each type (one count or one per type), up-regulated in it.
    rng : int or numpy.random.Generator
    fold_change : float or (low, high)
        Markers' fold change in their type; a range draws each marker's log-uniformly
        (strong and weak markers).
    mean_expression, rate_sd : float
        Mean and log-scale sd of the genes' base rates (small: many low-expressed genes).
    marker_expression, marker_rate_sd : float
        The same for the markers' base rates.
    depth_sd : float
        Log-scale sd of the library size.
    dispersion, dispersion_sd : float
        Negative-binomial dispersion phi (0: Poisson; UMI data about 0.1-1) and the
        log-scale sd of its spread over genes.
    proportions : sequence of float, optional
        Type sizes (relative); balanced when omitted. E.g. a rare type of 2 %.
    shared_markers : int
        Extra markers, each up-regulated in two random types.
    programs, program_genes, program_sd : int, int, float
        Nuisance programs: each moves ``program_genes`` random genes together across
        cells (loadings ``program_sd`` x U(0.5, 1.5), standard normal activities).
    n_batches, batch_sd : int, float
        Cells in random batches, each with a log-normal per-gene factor (log-sd ``batch_sd``).
    dropout : float
        Expected count at which half the counts are zeroed (0: none).
    chunk : int
        Cells generated at a time (memory: chunk x n_genes floats).

    Returns
    -------
    Simulation
        Raw counts (CSR float64) and the truth; ``effect`` holds log fold changes.
    """
    knobs = {k: v for k, v in locals().items() if k != "rng"}
    counts_k = markers_per_class(n_markers, n_types)
    check_shape(n_cells, n_genes, n_types, int(counts_k.sum()), shared_markers)
    if not (dispersion >= 0 and dropout >= 0):
        raise InputError(f"dispersion and dropout must be >= 0, got {dispersion} and {dropout}")
    rng = as_generator(rng)
    rate, cell_type, depth, member, fold = _plant(rng, n_cells, n_genes, counts_k, shared_markers, knobs)
    phi = dispersion if dispersion_sd == 0 else _lognormal_mean(rng, dispersion, dispersion_sd, n_genes)
    nuisance = _nuisance(rng, n_cells, n_genes, programs, program_genes, program_sd, n_batches, batch_sd)
    X = _draw(rng, chunk, depth, rate, fold, cell_type, phi, dropout, nuisance)
    batch = nuisance[2]
    return Simulation(X=X, classes=cell_type, membership=member, effect=np.log(fold), kind="counts",
                      batch=batch, knobs=knobs)


def _draw(rng, chunk, depth, rate, fold, cell_type, phi, dropout, nuisance):
    """The counts, ``chunk`` cells at a time (CSR)."""
    activity, load, batch, batch_log = nuisance
    offset = 0.5 * (load**2).sum(axis=0)
    blocks = []
    for s in range(0, depth.size, chunk):
        e = min(depth.size, s + chunk)
        lam = depth[s:e, None] * rate[None, :] * fold[cell_type[s:e]]
        if activity is not None:
            lam *= np.exp(activity[s:e] @ load - offset)
        if batch_log is not None:
            lam *= np.exp(batch_log[batch[s:e]])
        blocks.append(_counts(rng, lam, phi, dropout))
    return sparse.vstack(blocks, format="csr")


def _plant(rng, n_cells, n_genes, counts_k, shared, knobs):
    """Gene rates, cell types, library sizes, marker membership and fold changes (drawn in the
    order of the project's first generator, so its default draws are unchanged)."""
    n_types = counts_k.size
    rate = _lognormal_mean(rng, knobs["mean_expression"], knobs["rate_sd"], n_genes)
    perm = rng.permutation(n_genes)
    n_mk = int(counts_k.sum()) + shared
    rate[perm[:n_mk]] = _lognormal_mean(rng, knobs["marker_expression"], knobs["marker_rate_sd"], n_mk)
    cell_type = draw_classes(rng, n_cells, n_types, knobs["proportions"])
    depth = rng.lognormal(0.0, knobs["depth_sd"], size=n_cells)
    fold_mk = strengths(rng, knobs["fold_change"], n_mk, log=True)
    member = plant(perm, counts_k, draw_pairs(rng, shared, n_types))
    fold = np.ones((n_types, n_genes))
    fold[:, perm[:n_mk]] = np.where(member[:, perm[:n_mk]], fold_mk, 1.0)
    return rate, cell_type, depth, member, fold


def generate_planted_markers(n_cells: int, n_genes: int, n_types: int, n_markers: int, rng=0, *,
                             fold_change: float = 8.0, mean_expression: float = 0.1,
                             marker_expression: float = 0.5, depth_sd: float = 0.3, rate_sd: float = 0.7,
                             chunk: int = 10000, dispersion: float = 0.0) -> Simulation:
    """The project's first planted generator: :func:`simulate_counts` with its older defaults
    (Poisson, fold change 8, mean expression 0.1, library-size log-sd 0.3).

    Parameters and Returns as :func:`simulate_counts`.
    """
    return simulate_counts(n_cells, n_genes, n_types, n_markers, rng, fold_change=fold_change,
                           mean_expression=mean_expression, marker_expression=marker_expression,
                           depth_sd=depth_sd, rate_sd=rate_sd, chunk=chunk, dispersion=dispersion)


def simulate_singlecell(n_cells: int = 5000, n_genes: int = 1000, n_types: int = 5, n_markers: int = 20,
                        rng=0, **knobs) -> tuple[sparse.csr_matrix, Simulation]:
    """The project's planted single-cell simulation as an analysis would see it.

    Parameters
    ----------
    n_cells, n_genes, n_types, n_markers, rng, **knobs
        As :func:`simulate_counts` (negative binomial, dispersion 0.5, fold change 4).

    Returns
    -------
    X : scipy.sparse.csr_matrix
        The counts library-size normalised and log1p-transformed (:meth:`Simulation.expression`).
    sim : Simulation
        The raw counts and the truth.
    """
    sim = simulate_counts(n_cells, n_genes, n_types, n_markers, rng, **knobs)
    return sim.expression(), sim
