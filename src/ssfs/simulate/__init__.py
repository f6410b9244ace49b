"""Simulated data with a known truth, for tests and benchmarks.

* :func:`simulate_counts`: single-cell counts (negative binomial) with planted cell-type
  markers of strong and weak effect, many low-expressed genes, and optional nuisance
  (co-varying programs, batches, gene-wise dispersion, uneven library sizes, dropout).
* :func:`simulate_splatter`: a second count model after Splatter (gamma gene means with outliers,
  weak log-normal DE factors, some markers down, one biological CV), so no claim rests on one simulator.
* :func:`simulate_microarray`: Gaussian p >> n log-expression with correlated gene modules,
  nuisance factors, batches and markers of various effect sizes, some shared by two classes.
* Labeling schemes on any truth: :func:`labels_per_class`, :func:`labels_fraction`,
  :func:`flip_labels`, composed by :func:`make_labels` (budget, hidden classes, wrong labels,
  imbalance); :func:`nested_labels` for labels added to those already given.
* :data:`SCENARIOS`: named scenario kinds (generator + knobs + labeling scheme) that the
  benchmarks sweep; :func:`get_scenario`.

Every generator returns a :class:`Simulation` (data, true classes, marker membership per
class, effects) and draws all its randomness from one ``rng``.
"""

from .counts import generate_planted_markers, simulate_counts, simulate_singlecell
from .labels import few_labels, flip_labels, labels_fraction, labels_per_class, make_labels, nested_labels, parse_budget
from .microarray import simulate_microarray
from .scenarios import SCENARIOS, Scenario, get_scenario
from .splatter import simulate_splatter
from .truth import Simulation

__all__ = [
    "SCENARIOS", "Scenario", "Simulation", "few_labels", "flip_labels", "generate_planted_markers",
    "get_scenario", "labels_fraction", "labels_per_class", "make_labels", "nested_labels", "parse_budget",
    "simulate_counts", "simulate_microarray", "simulate_singlecell", "simulate_splatter",
]
