"""Named scenario kinds: a generator, its knobs, a labeling scheme and (optionally) knobs drawn
anew for every seed, so that no single simulation decides a comparison.

>>> from ssfs.simulate import SCENARIOS, get_scenario
>>> sc = get_scenario("unlabeled_type")
>>> sim = sc.simulate(seed=0, quick=True)          # Simulation: X, classes, markers, ...
>>> y = sc.labels(sim, "3/class", seed=0)            # -1 = unlabeled; the last type never labeled

Data depend on (seed, knobs) only: scenarios with the same knobs (``counts``,
``unlabeled_type``, ``wrong_labels``, ``imbalanced``) share their data seed by seed, so
their numbers are paired.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..seeding import derive_rng
from .counts import simulate_counts
from .labels import make_labels, nested_labels
from .microarray import simulate_microarray
from .splatter import simulate_splatter
from .truth import Simulation


def draw_knob(rng: np.random.Generator, spec):
    """One knob value from a spec: ("int", lo, hi) inclusive, ("uniform", lo, hi),
    ("loguniform", lo, hi) or ("choice", options)."""
    kind, *args = spec
    if kind == "int":
        return int(rng.integers(args[0], args[1] + 1))
    if kind == "uniform":
        return float(rng.uniform(args[0], args[1]))
    if kind == "loguniform":
        return float(np.exp(rng.uniform(np.log(args[0]), np.log(args[1]))))
    if kind == "choice":
        return args[0][int(rng.integers(len(args[0])))]
    raise InputError(f"unknown knob spec {spec!r}: use int, uniform, loguniform or choice")


@dataclass(frozen=True)
class Scenario:
    """A scenario kind.

    Attributes
    ----------
    name : str
    generator : callable
        :func:`simulate_counts` or :func:`simulate_microarray` (any ``(..., rng=) -> Simulation``).
    knobs : dict
        The generator's keyword arguments.
    labeling : dict
        :func:`make_labels` keywords (``hidden="last"`` hides the last class).
    vary : dict
        Knobs drawn for each seed (:func:`draw_knob` specs), overriding ``knobs``.
    quick : dict
        Knob overrides of the quick mode (smaller data).
    about : str
        One line for tables.
    """

    name: str
    generator: Callable[..., Simulation]
    knobs: dict
    labeling: dict = field(default_factory=dict)
    vary: dict = field(default_factory=dict)
    quick: dict = field(default_factory=dict)
    about: str = ""

    def knobs_for(self, seed: int, quick: bool = False) -> dict:
        """The generator's arguments for ``seed``: knobs, then the drawn knobs, then the quick
        mode's overrides."""
        rng = derive_rng(seed, "vary")
        drawn = {k: draw_knob(rng, spec) for k, spec in sorted(self.vary.items())}
        return {**self.knobs, **drawn, **(self.quick if quick else {})}

    def simulate(self, seed: int, quick: bool = False) -> Simulation:
        """The scenario's data for ``seed`` (reproducible; shared by scenarios with the same knobs)."""
        return self.generator(rng=derive_rng(seed, "data"), **self.knobs_for(seed, quick))

    def labels(self, sim: Simulation, budget, seed: int) -> np.ndarray:
        """Partial labels for ``sim`` under this scenario's scheme and ``budget``
        (see :func:`make_labels`)."""
        return make_labels(sim.classes, budget, derive_rng(seed, "labels", str(budget)), **self._scheme(sim))

    def labels_added(self, sim: Simulation, budgets, seed: int) -> list[np.ndarray]:
        """Partial labels for ``sim`` at each of the growing ``budgets``, each labeled set holding the
        previous one (:func:`nested_labels`; the same draw for every list of budgets)."""
        return nested_labels(sim.classes, list(budgets), derive_rng(seed, "labels", "nested"), **self._scheme(sim))

    def _scheme(self, sim: Simulation) -> dict:
        """The labeling keywords for ``sim`` (``hidden="last"``: its last class)."""
        kw = dict(self.labeling)
        if kw.get("hidden") == "last":
            kw["hidden"] = (sim.n_classes - 1,)
        return kw


_COUNTS = dict(n_cells=5000, n_genes=1000, n_types=5, n_markers=20, fold_change=(2.0, 8.0),
               mean_expression=0.2, rate_sd=1.0, dispersion=0.5)
_QUICK_COUNTS = dict(n_cells=2000)
_ARRAY = dict(n_samples=200, n_genes=5000, n_classes=4, n_markers=20)
_QUICK_ARRAY = dict(n_genes=2000)
_QUICK_SPLATTER = dict(n_cells=2000)
#: ``splatter_many``'s type sizes: falling geometrically from 16 % to 2 % of the cells
_MANY = tuple(float(v) for v in np.geomspace(8.0, 1.0, 14) / np.geomspace(8.0, 1.0, 14).sum())


def _scenarios() -> dict[str, Scenario]:
    real = dict(_COUNTS, programs=8, program_genes=40, program_sd=0.6, n_batches=3, batch_sd=0.3,
                dispersion_sd=0.5, depth_sd=0.7)
    rare = dict(_COUNTS, n_types=6, proportions=(0.196,) * 5 + (0.02,))
    table = [
        Scenario("counts", simulate_counts, _COUNTS, quick=_QUICK_COUNTS,
                 about="NB counts, 5 types x 20 markers, fold 2-8 (strong and weak), many low genes"),
        Scenario("counts_nuisance", simulate_counts, real, quick=_QUICK_COUNTS,
                 about="counts + 8 co-varying programs, 3 batches, gene-wise dispersion, uneven depth"),
        Scenario("counts_varied", simulate_counts, _COUNTS, quick=_QUICK_COUNTS, vary={
            "n_cells": ("int", 2000, 6000), "n_types": ("int", 3, 8), "n_markers": ("int", 10, 30),
            "fold_change": ("choice", [(1.5, 4.0), (1.5, 8.0), (2.0, 6.0), (3.0, 3.0)]),
            "mean_expression": ("loguniform", 0.05, 0.5), "dispersion": ("uniform", 0.1, 1.0),
            "dispersion_sd": ("uniform", 0.0, 0.7), "depth_sd": ("uniform", 0.2, 0.8),
            "programs": ("int", 0, 10), "n_batches": ("int", 1, 3), "dropout": ("choice", [0.0, 0.0, 0.05])},
                 about="counts whose shape, strengths and nuisance are drawn anew for every seed"),
        Scenario("rare", simulate_counts, rare, quick=_QUICK_COUNTS,
                 about="counts, 6 types, the last 2 % of the cells"),
        Scenario("unlabeled_type", simulate_counts, _COUNTS, {"hidden": "last"}, quick=_QUICK_COUNTS,
                 about="counts, one type never labeled"),
        Scenario("wrong_labels", simulate_counts, _COUNTS, {"wrong": 0.2}, quick=_QUICK_COUNTS,
                 about="counts, 20 % of the labels wrong"),
        Scenario("imbalanced", simulate_counts, _COUNTS, {"imbalance": 10.0}, quick=_QUICK_COUNTS,
                 about="counts, label budgets falling 10-fold from the first type to the last"),
        Scenario("project", simulate_counts, dict(fold_change=3.0), quick=_QUICK_COUNTS,
                 about="the project's earlier simulation (simulate_singlecell, fold 3)"),
        Scenario("splatter", simulate_splatter, {}, quick=_QUICK_SPLATTER,
                 about="Splatter-like counts (a second model): 8 types x 15 weak markers, 30 % down, outlier genes"),
        Scenario("splatter_unlabeled", simulate_splatter, {}, {"hidden": "last"}, quick=_QUICK_SPLATTER,
                 about="Splatter-like counts, one type never labeled"),
        Scenario("splatter_many", simulate_splatter, dict(n_types=14, n_markers=10, proportions=_MANY),
                 quick=_QUICK_SPLATTER,
                 about="Splatter-like counts, 14 types x 10 weak markers, sizes falling from 16 % to 2 %"),
        Scenario("microarray", simulate_microarray, _ARRAY, quick=_QUICK_ARRAY,
                 about="Gaussian 200 x 5,000, 4 classes x 20 markers (0.5-3 sd) + 10 shared, modules, nuisance"),
        Scenario("microarray_varied", simulate_microarray, _ARRAY, quick=_QUICK_ARRAY, vary={
            "n_samples": ("int", 100, 300), "n_genes": ("choice", [2000, 5000, 10000]),
            "n_classes": ("int", 2, 6), "n_markers": ("int", 10, 40),
            "effect": ("choice", [(0.5, 1.5), (0.5, 3.0), (1.0, 2.0), (1.5, 1.5)]), "sd_spread": ("uniform", 0.1, 0.5),
            "module_corr": ("uniform", 0.0, 0.7), "nuisance_factors": ("int", 0, 6), "n_batches": ("int", 1, 3)},
                 about="microarrays whose shape, effects and nuisance are drawn anew for every seed"),
        Scenario("microarray_unlabeled", simulate_microarray, _ARRAY, {"hidden": "last"}, quick=_QUICK_ARRAY,
                 about="microarray, one class never labeled"),
        Scenario("microarray_modules", simulate_microarray, dict(
            n_samples=300, n_genes=2000, n_classes=4, n_markers=10, effect=1.5, down_fraction=0.5,
            shared_markers=0, module_size=50, module_fraction=0.5, module_corr=0.6, nuisance_factors=0),
                 about="Gaussian 300 x 2,000 whose strongest structure is 20 modules of 50 genes correlated "
                       "0.6, 4 classes x 10 markers at 1.5 sd (half down)"),
        Scenario("microarray_plain", simulate_microarray, dict(
            n_samples=300, n_genes=2000, n_classes=4, n_markers=10, effect=1.5, down_fraction=0.0,
            shared_markers=0, module_fraction=0.0, nuisance_factors=0, sd_spread=0.0),
                 about="independent Gaussian genes of one sd, 300 x 2,000, 4 classes x 10 markers at +1.5 sd"),
    ]
    return {s.name: s for s in table}


#: every scenario kind by name
SCENARIOS: dict[str, Scenario] = _scenarios()


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name`` (an InputError lists the known ones)."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InputError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}") from None
