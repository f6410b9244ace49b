"""Does choosing propagate's graph on a 10,000-cell subsample lose markers? (issue #32 item 5)

    python benchmarks/bench_refine_samples.py counts_varied 20000 1,2
    python benchmarks/bench_refine_samples.py rare 20000 0,1

``propagate`` with its default ``refine_samples`` (10,000) against ``refine_samples`` above n
(the refinement chains and their held-out refits on every cell), on an ``ssfs.simulate``
scenario resized to n cells, at 1 % labels and 3 per class: recall of the planted markers,
the graph kept and the CPU seconds of each fit (BLAS threads as set by the environment)."""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from ssfs.methods.propagate import fit_propagation
from ssfs.seeding import derive_rng
from ssfs.simulate.scenarios import get_scenario
from ssfs.singlecell import log_normalize


def main(name: str, n: int, seeds: list[int]) -> None:
    warnings.filterwarnings("ignore")
    scenario = get_scenario(name)
    print("scenario seed budget | refine_samples recall graph cpu | ...")
    for seed in seeds:
        sim = scenario.generator(rng=derive_rng(seed, "data"), **{**scenario.knobs_for(seed), "n_cells": n})
        X = log_normalize(sim.X)
        for budget in ("1%", "3/class"):
            y = scenario.labels(sim, budget, seed)
            row = [name, seed, budget, "|"]
            for cap in (10_000, 10**9):
                t = time.process_time()
                m = fit_propagation(X, y, refine_samples=cap)
                cpu = time.process_time() - t
                order = np.argsort(-np.nan_to_num(m.scores, nan=-1.0), kind="stable")
                row += [f"{cap:.0e}", round(sim.recall(order), 3), m.chosen, f"{cpu:.0f}s", "|"]
            print(*row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")])
